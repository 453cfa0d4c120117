//! `cosim worker` (internal): serves one FMU instance of `cosim run --isolate` in its own process.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// The arguments of `cosim worker`.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The FMU as extracted by the master (shared by its instances' workers).
    #[arg(long)]
    extracted: Option<PathBuf>,
    /// The descriptor of the master's shared memory (inherited).
    #[arg(long)]
    shm_fd: i32,
    /// Which of the FMU's messages are printed on stderr (the master's `--fmu-log`).
    #[arg(long, value_name = "LEVEL", value_parser = ["all", "warning", "error", "none"], default_value = "warning")]
    fmu_log: String,
    /// Model Exchange: the interface and the integrator (`INTERFACE,METHOD,RTOL,ATOL,MAX_STEP,FIXED_STEP`).
    #[arg(long, value_name = "SPEC")]
    model_exchange: Option<String>,
    /// The .fmu file.
    fmu: PathBuf,
    /// The instance name.
    instance: String,
}

/// Serves the instance until the master closes the channel.
pub fn worker(args: WorkerArgs) -> Result<i32> {
    let WorkerArgs { extracted, shm_fd, fmu_log, model_exchange, fmu, instance } = args;
    let me = match model_exchange.as_deref().map(master::fmu::isolated::parse_model_exchange) {
        Some(None) => {
            anyhow::bail!("--model-exchange {model_exchange:?}: not INTERFACE,METHOD,RTOL,ATOL,MAX_STEP,FIXED_STEP")
        }
        Some(Some(me)) => me,
        None => (None, None),
    };
    let level = master::host::LogLevel::parse(&fmu_log).unwrap_or_default();
    let log: std::sync::Arc<dyn master::host::FmuLog> = std::sync::Arc::new(master::host::StderrLog(level));
    master::fmu::isolated::serve(&fmu, extracted.as_deref(), &instance, shm_fd, Some(log), me)
        .with_context(|| format!("worker for instance {instance} of {}", fmu.display()))?;
    Ok(0)
}
