//! Jacobi: every instance steps from t_n to t_n + H on its extrapolated inputs, independently of
//! the others — sequentially, or on worker threads ([`crate::pool::Threads`]).

use super::{Algorithm, Coupling, InstanceId};
use crate::error::{MasterError, Result};
use crate::fmu::FmuInstance;
use crate::pool::Threads;
use crate::system::Parallel;

/// The Jacobi scheme.
pub struct Jacobi {
    threads: Threads,
    /// Whether the instances were asked to overlap their steps ([`FmuInstance::overlap_steps`]).
    overlapping: bool,
}

impl Jacobi {
    /// Threads as `parallel` says (`auto`: decided from the first steps' cost).
    pub fn new(parallel: Parallel, c: &Coupling) -> Self {
        Self { threads: Threads::new(parallel, c), overlapping: false }
    }
}

impl Algorithm for Jacobi {
    fn name(&self) -> &'static str {
        "jacobi"
    }

    fn step(&mut self, c: &mut Coupling, instances: &mut [Box<dyn FmuInstance>], n: u64, t: f64) -> Result<()> {
        if !self.overlapping {
            // Instances in worker processes step concurrently: every step is sent first, then
            // waited for (an in-process instance ignores this).
            instances.iter_mut().for_each(|s| s.overlap_steps(true));
            self.overlapping = true;
        }
        if self.threads.active() {
            self.threads.step(c, instances, t)?;
        } else {
            for i in c.instances() {
                c.step_instance(i, instances, t)?;
            }
        }
        for (i, s) in instances.iter_mut().enumerate() {
            if let Err(e) = s.finish_step() {
                if matches!(e, MasterError::Terminated { .. }) {
                    // Booked when it was sent; the execution counts the call that ended the run.
                    c.uncount_step_call(InstanceId::new(i));
                }
                return Err(e);
            }
        }
        for i in c.instances() {
            c.read_outputs(i, instances, t + c.h())?;
        }
        self.threads.after_step(n, c);
        Ok(())
    }

    fn uses_threads(&self) -> bool {
        self.threads.active()
    }
}
