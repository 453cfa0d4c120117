//! `cosim run`: a system file with its FMUs run to the stop time into an output directory —
//! a thin front end over [`Execution`].

use crate::error::Result;
use crate::execution::{file_observers, Execution};
use crate::fmu::FmuCache;
use crate::observer::Summary;
use crate::system::{Overrides, SystemBuilder};
use std::path::Path;

/// Set by the `cosim` binary's SIGINT/SIGTERM handler: the run stops at the next communication
/// point, the observers finish, and `summary.json` says "interrupted".
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Loads the system file and its FMUs (each FMU file once, or one worker process per instance
/// with `--isolate` / `[simulation].isolate`), runs it and writes `results.csv`, `bonds.csv` and
/// `summary.json` into `out_dir`. Returns the summary; its status says whether the run
/// succeeded (errors during the run are reported there, not as `Err`; `Err` means the system
/// could not be set up or the output files could not be written).
pub fn run_file(path: &Path, over: &Overrides, out_dir: &Path) -> Result<Summary> {
    let ssp_extension = path.extension().is_some_and(|e| e == "ssp" || e == "ssd");
    if let Some(kind) = crate::ssp::detect(path).or(ssp_extension.then_some(crate::ssp::Kind::Description)) {
        // The package (its extracted FMUs) lives until the run is over.
        let ssp = crate::ssp::read(path)?;
        eprintln!("{}: read as {kind}", path.display());
        ssp.check_overrides(over)?;
        return run_builder(&ssp.builder, over, out_dir);
    }
    let builder = SystemBuilder::read(path)?;
    run_builder(&builder, over, out_dir)
}

/// [`run_file`] for a system already read.
pub fn run_builder(builder: &SystemBuilder, over: &Overrides, out_dir: &Path) -> Result<Summary> {
    let mut fmus = FmuCache::default();
    let mut execution = Execution::from_builder(builder, over, &mut fmus)?;
    run_into(&mut execution, out_dir)?;
    execution.finish()
}

/// Attaches the file observers ([`file_observers`]) and runs to the stop time, stopping early on
/// SIGINT/SIGTERM ([`INTERRUPTED`]); the outcome is in the summary of [`Execution::finish`].
pub fn run_into(execution: &mut Execution, out_dir: &Path) -> Result<()> {
    for o in file_observers(execution.system(), out_dir)? {
        execution.observe(o);
    }
    execution.interrupt_on(&INTERRUPTED);
    // A failure is kept by the execution and reported by its summary.
    let _ = execution.run();
    Ok(())
}
