//! `cosim check FMU`: the behavioural compliance check ([`master::check`]) under the signal
//! guard, and `cosim check-worker` (internal), the process one check runs in.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// The arguments of `cosim check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The .fmu file, or a folder: every .fmu in it (not in subfolders), with one summary table.
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
    /// Runs of a check that races (threads), each in a new worker: FAIL when any run fails.
    #[arg(long, default_value_t = master::check::DEFAULT_REPEAT, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Run only these checks (comma separated ids).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also write the report as JSON to this file (`-`: to stdout instead of the text report).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the report as JUnit XML to this file (one testcase per check).
    #[arg(long)]
    junit: Option<PathBuf>,
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

/// Runs every check of one FMU, or of every FMU of a folder. The exit code is 1 when a check
/// FAILs, else 2 when one is INTERMITTENT, else 0 (128 + the signal when interrupted).
pub fn check(args: CheckArgs) -> Result<i32> {
    let CheckArgs { fmu, start_values, stop_time, step, steps, timeout, cycles, repeat, only, json, junit } = args;
    let timeout = master::check::timeout_from_seconds(timeout).map_err(|e| anyhow::anyhow!("--timeout {e}"))?;
    let folder = fmu.is_dir();
    let fmus = if folder {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&fmu)
            .with_context(|| format!("reading the folder {}", fmu.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("fmu")))
            .collect();
        found.sort();
        if found.is_empty() {
            anyhow::bail!("{}: the folder holds no .fmu file", fmu.display());
        }
        found
    } else {
        vec![fmu.clone()]
    };
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
        repeat,
        worker_exe: None,
        host: crate::guard::host(),
    };
    let to_stdout = json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let mut reports = Vec::new();
    for f in &fmus {
        if crate::guard::signal().is_some() {
            break;
        }
        let report = master::check::check(f, &opts)?;
        if !to_stdout {
            print!("{}", report.text());
            if folder {
                println!();
            }
        }
        reports.push(report);
    }
    if folder && !to_stdout {
        print!("{}", master::check::output::summary(&reports));
    }
    if let Some(path) = json {
        let text = match (folder, reports.first()) {
            (false, Some(r)) => r.json(),
            _ => master::check::output::json_of(&reports),
        };
        if to_stdout {
            println!("{text}");
        } else {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if let Some(path) = junit {
        std::fs::write(&path, master::check::output::junit(&reports))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let code = master::check::exit_code(reports.iter().flat_map(|r| r.findings.iter().map(|f| f.verdict)));
    // Interrupted: the report so far, and the conventional status of the signal.
    Ok(crate::guard::signal().map_or(code, crate::guard::exit_code))
}

/// Runs one check in this process.
pub fn check_worker(args: CheckWorkerArgs) -> Result<i32> {
    let CheckWorkerArgs { fmu, extracted, check, plan } = args;
    master::check::worker::serve(&fmu, &extracted, &check, &plan)
        .with_context(|| format!("check worker {check} for {}", fmu.display()))?;
    Ok(0)
}
