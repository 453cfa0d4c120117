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
    /// The .fmu file.
    fmu: PathBuf,
    /// The instance name.
    instance: String,
}

/// Serves the instance until the master closes the channel.
pub fn worker(args: WorkerArgs) -> Result<i32> {
    let WorkerArgs { extracted, shm_fd, fmu, instance } = args;
    master::fmu::isolated::serve(&fmu, extracted.as_deref(), &instance, shm_fd)
        .with_context(|| format!("worker for instance {instance} of {}", fmu.display()))?;
    Ok(0)
}
