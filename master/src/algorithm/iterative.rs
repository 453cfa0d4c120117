//! Iterative (implicit) Jacobi coupling: the step is repeated from the saved FMU states, each
//! pass with every connection interpolated between its value at t_n and the source's newest
//! t_{n+1} output (order max(m, 1) through the history), until no connection's end value
//! changes by more than the tolerance (relative to max(|y|, 1)) or the pass limit is reached.
//! Converged, every instance has seen the others' end-of-step values: the coupling error of
//! the explicit schemes is gone (seed 001 §2: iterative co-simulation).

use super::{Algorithm, AlgorithmStats, Coupling};
use crate::error::Result;
use crate::fmu::FmuInstance;

/// Jacobi repeated until the exchanged values converge.
pub struct IterativeJacobi {
    /// Passes per step at most.
    iterations: u32,
    tolerance: f64,
    /// Each link's end value of the previous pass (reused buffer).
    pass_end: Vec<f64>,
    /// Passes done, and steps that reached the pass limit unconverged.
    passes: u64,
    unconverged: u64,
}

impl IterativeJacobi {
    /// At most `iterations` passes per step; converged when no link's end value changes by more
    /// than `tolerance` (relative to max(|y|, 1)).
    pub fn new(iterations: u32, tolerance: f64) -> Self {
        Self { iterations, tolerance, pass_end: Vec::new(), passes: 0, unconverged: 0 }
    }
}

impl Algorithm for IterativeJacobi {
    fn name(&self) -> &'static str {
        "iterative-jacobi"
    }

    fn step(&mut self, c: &mut Coupling, instances: &mut [Box<dyn FmuInstance>], _n: u64, t: f64) -> Result<()> {
        let t_end = t + c.h();
        for s in instances.iter_mut() {
            s.save_state()?;
        }
        self.pass_end.clear();
        for link in c.links() {
            self.pass_end.push(c.link_end_value(link));
        }
        for pass in 1..=self.iterations {
            for i in c.instances() {
                c.step_instance(i, instances, t)?;
            }
            for i in c.instances() {
                c.read_outputs(i, instances, t_end)?;
            }
            self.passes += 1;
            let mut change: f64 = 0.0;
            for (link, end) in c.links().zip(self.pass_end.iter_mut()) {
                let y = c.link_source_value(link);
                change = change.max((y - *end).abs() / y.abs().max(1.0));
                *end = y;
            }
            if change <= self.tolerance {
                return Ok(());
            }
            // The last pass, or SIGINT/SIGTERM: a long pass limit must not hold the run away
            // from the communication point where it stops.
            if pass == self.iterations || c.stop_requested() {
                self.unconverged += 1;
                return Ok(());
            }
            for s in instances.iter_mut() {
                s.restore_state()?;
            }
            for (link, y) in c.links().zip(&self.pass_end) {
                c.interpolate_link(link, t_end, *y, 1);
            }
            for i in c.instances() {
                c.apply_inputs_order(i, instances, 0.0, true, 1)?;
            }
        }
        Ok(())
    }

    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats { iterations: self.passes, unconverged_steps: self.unconverged, rejected_steps: 0 }
    }
}
