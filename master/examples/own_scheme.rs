//! A coupling scheme written outside the master crate, against its public API only: the
//! [`Algorithm`] trait and the [`Coupling`] it is handed (`step_instance`, `read_outputs`,
//! `apply_inputs`, the links' values), set on an [`Execution`] with `set_algorithm`.
//!
//! The scheme here is the sequential Jacobi step in eight lines: every instance steps from t_n
//! on its extrapolated inputs (set by the execution before `step` is called), then every
//! instance's outputs at t_n + H are read. `master/tests/own_scheme.rs` checks that it gives
//! crane-pub3's results bit for bit as the built-in scheme does.
//!
//! ```text
//! cargo xtask fmus && cargo run --release -p master --example own_scheme -- scenarios/crane-pub3.toml
//! ```

use master::algorithm::{Algorithm, Coupling};
use master::fmu::FmuCache;
use master::observer::SharedRecorder;
use master::{Execution, Slave, SystemBuilder};
use std::path::Path;

/// Jacobi, every instance stepped in turn on the main thread.
pub struct SequentialJacobi;

impl Algorithm for SequentialJacobi {
    fn name(&self) -> &'static str {
        "sequential-jacobi"
    }

    fn step(&mut self, c: &mut Coupling, slaves: &mut [Box<dyn Slave>], _n: u64, t: f64) -> master::Result<()> {
        for i in 0..c.len() {
            c.step_instance(i, slaves, t)?;
        }
        let t_end = t + c.h();
        for i in 0..c.len() {
            c.read_outputs(i, slaves, t_end)?;
        }
        Ok(())
    }
}

/// Runs the system file at `path` (with `scheme`, else the scheme it asks for) and returns the
/// recorded times and values, and the scheme's name as the summary gives it.
pub fn run(path: &Path, scheme: Option<Box<dyn Algorithm>>) -> master::Result<(Vec<f64>, Vec<Vec<f64>>, String)> {
    let mut fmus = FmuCache::default();
    let system = SystemBuilder::read(path)?.load(&mut fmus)?;
    let mut execution = Execution::new(system, &fmus)?;
    if let Some(s) = scheme {
        execution.set_algorithm(s);
    }
    let recorder = SharedRecorder::default();
    execution.observe(Box::new(recorder.clone()));
    execution.run()?;
    let summary = execution.finish()?;
    let r = recorder.lock().map_err(|_| master::MasterError::Interrupted { time: summary.time })?;
    Ok((r.times.clone(), r.values.clone(), summary.algorithm))
}

#[allow(dead_code)] // the test includes this file for its scheme
fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "scenarios/crane-pub3.toml".into());
    let (times, values, name) = run(Path::new(&path), Some(Box::new(SequentialJacobi)))?;
    let (_, built_in, _) = run(Path::new(&path), None)?;
    println!(
        "{path}: {} communication points with {name}; the same values as the built-in scheme: {}",
        times.len(),
        values == built_in
    );
    Ok(())
}
