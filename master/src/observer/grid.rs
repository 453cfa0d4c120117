//! The output grid of an ECCO run ([`OutputGrid`]): rows only at the requested times.

use super::{Observer, Summary};
use crate::bonds::BondState;
use crate::error::Result;
use crate::step_control::StepControl;

/// The recorded rows of an ECCO run with an output interval (`record_every = k > 1`,
/// `--output-interval k·H_0`): `inner` sees only the steps that end on the output grid
/// start + j·k·H_0 (the grid cuts the steps there, see [`StepControl::output_units`]) and the one
/// that ends at the stop time, so the rows are at the requested times and the last one is kept.
pub struct OutputGrid {
    inner: Box<dyn Observer>,
    start: f64,
    /// Picoseconds per quantum (the grid's time is start + units·ps/10¹²).
    ps: u64,
    /// Quanta between rows, and from the start to the stop time.
    every: u64,
    span: u64,
}

impl OutputGrid {
    /// `inner` (recording every step it is given) on the output grid of `control` (ECCO) for a
    /// run from `start` to `stop` recording every `record_every`-th H_0; `None` when every step is
    /// recorded (fixed steps, or `record_every` 1).
    pub fn wrap(
        inner: Box<dyn Observer>,
        control: &StepControl,
        (start, stop): (f64, f64),
        record_every: u64,
    ) -> std::result::Result<Box<dyn Observer>, Box<dyn Observer>> {
        let (StepControl::Ecco { quantum, .. }, Some(every)) = (control, control.output_units(record_every)) else {
            return Err(inner);
        };
        let span = ((stop - start) / quantum).round() as u64;
        Ok(Box::new(Self { inner, start, ps: (quantum * 1e12).round() as u64, every, span }))
    }

    fn on_grid(&self, t: f64) -> bool {
        let units = ((t - self.start) * 1e12 / self.ps as f64).round() as u64;
        units.is_multiple_of(self.every) || units >= self.span
    }
}

impl Observer for OutputGrid {
    fn start(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.inner.start(t, values, bonds)
    }
    fn step(&mut self, n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        if self.on_grid(t) {
            self.inner.step(n, t, values, bonds)?;
        }
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.inner.end_early(t, values, bonds)
    }
    fn finish(&mut self, summary: &Summary) -> Result<()> {
        self.inner.finish(summary)
    }
    fn exact(&mut self, values: &[crate::fmu::Value]) {
        self.inner.exact(values);
    }
}
