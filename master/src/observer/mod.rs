//! *What is recorded*: `results.csv`, `bonds.csv`, `summary.json`, `steps.csv`, in memory
//! (the progress bar of `cosim run` is a front end's, `cosim_cli::progress`). Each observer has default no-op methods; the run loop calls `start` once, `step`
//! after every communication step, `finish` once (also after a failure, so everything computed
//! up to the failure is on disk).
//!
//! One job per file: `summary.rs` (the [`Summary`] type), `rows.rs` (the CSV writer thread),
//! `files.rs` (files created or replaced safely), `csv.rs` (`results.csv`, `bonds.csv`,
//! `steps.csv`), `summary_json.rs`, `memory.rs` (recorder, callback), `grid.rs`
//! (ECCO's output grid).

mod binary_rows;
mod csv;
mod files;
mod grid;
mod memory;
mod rows;
mod summary;
mod summary_json;

pub use csv::{csv_field, csv_header, BondsCsv, ResultsCsv, StepsCsv};
pub use grid::OutputGrid;
pub use memory::{Callback, Recorder, SharedRecorder};
pub use rows::FLUSH_INTERVAL;
pub use summary::{AlgorithmStats, BondSummary, InstanceSummary, IterationSummary, SolverSummary, Status, Summary};
pub use summary_json::{write_summary, SummaryJson};

use crate::bonds::BondState;
use crate::error::Result;

/// Receives the run's events. `Send`, so that an [`crate::Execution`] can move between threads
/// (e.g. stepped by a Python binding with the GIL released).
pub trait Observer: Send {
    /// Before the first step, with the values at the start time.
    fn start(&mut self, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// After step n, at time t.
    fn step(&mut self, _n: u64, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// The run ended early at `t` because an instance terminated the simulation (FMI 2.0
    /// `fmi2Terminated`, see [`crate::Execution`]): the recorded values there (`t` may lie
    /// between communication points, or be the last one again). Called once, after the last
    /// `step` and before `finish`. Default: nothing; recorders write it as their last row
    /// unless their last row is at `t` already.
    fn end_early(&mut self, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// At the end, successful or not.
    fn finish(&mut self, _summary: &Summary) -> Result<()> {
        Ok(())
    }
    /// The exact values of the recorded non-Real variables (Int64 and UInt64 in full, String,
    /// Binary, …: [`crate::fmu::Value`]), in the order of their columns, for the row that the
    /// next `start`, `step` or `end_early` records (whose `values` hold [`crate::fmu::Value::as_f64`]
    /// of each: NaN for Binary and String). Only called when the system records non-Real
    /// variables. Default: nothing (`results.csv` writes them exactly, Binary as hexadecimal).
    fn exact(&mut self, _values: &[crate::fmu::Value]) {}
}
