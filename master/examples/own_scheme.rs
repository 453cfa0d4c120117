//! A coupling scheme written outside the master crate, against its public API only: the
//! [`Algorithm`] trait and the [`Coupling`] it is handed (`step_instance`, `read_outputs`,
//! `apply_inputs`, the links' values; instances and links named by the typed `InstanceId` and
//! `LinkId`), set on an [`Execution`] with `set_algorithm`.
//!
//! The scheme here is the sequential Jacobi step in eight lines: every instance steps from t_n
//! on its extrapolated inputs (set by the execution before `step` is called), then every
//! instance's outputs at t_n + H are read. `master/tests/own_scheme.rs` checks that it gives
//! crane-pub3's results bit for bit as the built-in scheme does.
//!
//! ```text
//! cargo xtask fmus && cargo run --release -p master --example own_scheme -- scenarios/crane-pub3.toml
//! ```

use master::algorithm::{Algorithm, AlgorithmStats, Coupling};
use master::fmu::FmuCache;
use master::observer::{SharedRecorder, Summary};
use master::{Execution, FmuInstance, SystemBuilder};
use std::path::Path;

/// Jacobi, every instance stepped in turn on the main thread; counts its passes for
/// `summary.json` (`algorithm_stats`).
#[derive(Default)]
pub struct SequentialJacobi {
    passes: u64,
}

impl Algorithm for SequentialJacobi {
    fn name(&self) -> &'static str {
        "sequential-jacobi"
    }

    fn step(
        &mut self,
        c: &mut Coupling,
        instances: &mut [Box<dyn FmuInstance>],
        _n: u64,
        t: f64,
    ) -> master::Result<()> {
        for i in c.instances() {
            c.step_instance(i, instances, t)?;
        }
        let t_end = t + c.h();
        for i in c.instances() {
            c.read_outputs(i, instances, t_end)?;
        }
        self.passes += 1;
        Ok(())
    }

    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats { iterations: self.passes, ..AlgorithmStats::default() }
    }
}

/// Runs the system file at `path` (with `scheme`, else the scheme it asks for) and returns the
/// recorded times and values, and the summary.
pub fn run(path: &Path, scheme: Option<Box<dyn Algorithm>>) -> master::Result<(Vec<f64>, Vec<Vec<f64>>, Summary)> {
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
    Ok((r.times.clone(), r.values.clone(), summary.clone()))
}

#[allow(dead_code)] // the test includes this file for its scheme
fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "scenarios/crane-pub3.toml".into());
    let (times, values, summary) = run(Path::new(&path), Some(Box::<SequentialJacobi>::default()))?;
    let (_, built_in, _) = run(Path::new(&path), None)?;
    println!(
        "{path}: {} communication points with {} ({} passes); the same values as the built-in scheme: {}",
        times.len(),
        summary.algorithm,
        summary.algorithm_stats.iterations,
        values == built_in
    );
    Ok(())
}
