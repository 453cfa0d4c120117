//! `cosim check FMU`: the behavioural compliance check ([`master::check`]) under the signal
//! guard, and `cosim check-worker` (internal), the process one check runs in.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// The arguments of `cosim check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The .fmu file.
    fmu: PathBuf,
    /// A start value, NAME=VALUE, as `cosim run --start-value`; repeatable.
    #[arg(long = "start-value", value_name = "NAME=VALUE")]
    start_values: Vec<String>,
    /// Stop time (s; default: the DefaultExperiment's).
    #[arg(long)]
    stop_time: Option<f64>,
    /// Communication step H (s; default: the DefaultExperiment's).
    #[arg(long)]
    step: Option<f64>,
    /// At most this many communication steps (the stop time is cut).
    #[arg(long)]
    steps: Option<u64>,
    /// Seconds one check may take before its worker is killed and the check FAILs as hung.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Instantiate/free cycles of the cost check.
    #[arg(long, default_value_t = 1000)]
    cycles: u64,
    /// Run only these checks (comma separated ids).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The arguments of `cosim check-worker`.
#[derive(clap::Args)]
pub struct CheckWorkerArgs {
    /// The FMU as extracted by the checker.
    #[arg(long)]
    extracted: PathBuf,
    /// The check's id.
    #[arg(long)]
    check: String,
    /// The plan (JSON).
    #[arg(long)]
    plan: String,
    /// The .fmu file.
    fmu: PathBuf,
}

/// Runs every check; the exit code is 1 when one failed (128 + the signal when interrupted).
pub fn check(args: CheckArgs) -> Result<i32> {
    let CheckArgs { fmu, start_values, stop_time, step, steps, timeout, cycles, only, json } = args;
    let timeout = master::check::timeout_from_seconds(timeout).map_err(|e| anyhow::anyhow!("--timeout {e}"))?;
    crate::guard::install();
    // Processes an FMU forks (also setsid()ed ones) are adopted and killed after each worker.
    if let Err(e) = master::check::worker::reap_descendants() {
        eprintln!("warning: cosim check cannot adopt the processes an FMU leaves behind (PR_SET_CHILD_SUBREAPER): {e}");
    }
    let opts = master::check::Options {
        start_values,
        stop_time,
        step,
        max_steps: steps,
        timeout,
        cycles,
        only,
        worker_exe: None,
        host: crate::guard::host(),
    };
    let report = master::check::check(&fmu, &opts)?;
    print!("{}", report.text());
    if let Some(path) = json {
        std::fs::write(&path, report.json()).with_context(|| format!("writing {}", path.display()))?;
    }
    // Interrupted: the report so far, and the conventional status of the signal.
    Ok(crate::guard::signal().map_or(i32::from(report.failed()), crate::guard::exit_code))
}

/// Runs one check in this process.
pub fn check_worker(args: CheckWorkerArgs) -> Result<i32> {
    let CheckWorkerArgs { fmu, extracted, check, plan } = args;
    master::check::worker::serve(&fmu, &extracted, &check, &plan)
        .with_context(|| format!("check worker {check} for {}", fmu.display()))?;
    Ok(0)
}
