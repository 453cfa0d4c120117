//! Jacobi: every instance steps from t_n to t_n + H on its extrapolated inputs, independently of
//! the others — sequentially, or on worker threads ([`crate::pool::Threads`]).

use super::{Algorithm, Coupling};
use crate::error::Result;
use crate::fmu::Slave;
use crate::pool::Threads;
use crate::system::Parallel;

/// The Jacobi scheme.
pub struct Jacobi {
    threads: Threads,
}

impl Jacobi {
    /// Threads as `parallel` says (`auto`: decided from the first steps' cost).
    pub fn new(parallel: Parallel, c: &Coupling) -> Self {
        Self { threads: Threads::new(parallel, c) }
    }
}

impl Algorithm for Jacobi {
    fn name(&self) -> &'static str {
        "jacobi"
    }

    fn step(&mut self, c: &mut Coupling, slaves: &mut [Box<dyn Slave>], n: u64, t: f64) -> Result<()> {
        if self.threads.active() {
            self.threads.step(c, slaves, t)?;
        } else {
            for i in 0..c.len() {
                c.step_instance(i, slaves, t)?;
            }
        }
        for i in 0..c.len() {
            c.read_outputs(i, slaves, t + c.h())?;
        }
        self.threads.after_step(n, c);
        Ok(())
    }

    fn uses_threads(&self) -> bool {
        self.threads.active()
    }
}
