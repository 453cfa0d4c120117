//! Observers in memory: a [`Recorder`] of every point, a [`Callback`].

use super::Observer;
use crate::bonds::BondState;
use crate::error::Result;
use std::sync::Mutex;

/// Every recorded value and bond state in memory: `times[k]`, `values[k]` (the recorded
/// variables, [`crate::System::outputs`]), `bonds[k]`, at the start and after every step.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// Communication point times (s).
    pub times: Vec<f64>,
    /// Recorded values at each time.
    pub values: Vec<Vec<f64>>,
    /// Bond states at each time.
    pub bonds: Vec<Vec<BondState>>,
}

/// A [`Recorder`] shared with the caller (the execution owns its observers).
pub type SharedRecorder = std::sync::Arc<Mutex<Recorder>>;

impl Observer for SharedRecorder {
    fn start(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.step(0, t, values, bonds)
    }
    fn step(&mut self, _n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        if let Ok(mut r) = self.lock() {
            r.times.push(t);
            r.values.push(values.to_vec());
            r.bonds.push(bonds.to_vec());
        }
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        // The last point again when the run ended at a communication point.
        if self.lock().is_ok_and(|r| r.times.last() == Some(&t)) {
            return Ok(());
        }
        self.step(0, t, values, bonds)
    }
}

/// A user's function called after every step with (n, t, recorded values, bonds); an `Err`
/// stops the run.
pub struct Callback<F>(pub F);

impl<F: FnMut(u64, f64, &[f64], &[BondState]) -> Result<()> + Send> Observer for Callback<F> {
    fn step(&mut self, n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        (self.0)(n, t, values, bonds)
    }
}
