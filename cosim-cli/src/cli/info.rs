//! `cosim info FMU`: an FMU's metadata, capabilities and variables.

use anyhow::Result;
use std::path::PathBuf;

/// The arguments of `cosim info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// The .fmu file.
    fmu: PathBuf,
}

/// Prints the FMU's description.
pub fn info(args: InfoArgs) -> Result<i32> {
    print!("{}", master::fmu::info::info(&args.fmu)?);
    Ok(0)
}
