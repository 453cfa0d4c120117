//! *How* the system is simulated: one type per coupling scheme behind [`Algorithm`].
//!
//! At every communication step the [`crate::Execution`] first sets all inputs at t_n
//! ([`Coupling::begin_step`]: extrapolated links, time tables), then calls
//! [`Algorithm::step`], which steps every instance to t_n + H and reads its outputs, then
//! books the bonds. A scheme only decides the order of stepping and which link values each
//! instance sees:
//!
//! - [`Jacobi`]: every instance on the extrapolated inputs, sequentially or on worker threads;
//! - [`GaussSeidel`]: one after the other, later instances on interpolated t_{n+1} outputs;
//! - [`IterativeJacobi`]: Jacobi repeated from the saved FMU states until the links converge.
//!
//! A new scheme is one new file implementing [`Algorithm`] on the public [`Coupling`] methods
//! (`step_instance`, `read_outputs`, `apply_inputs`, the links' values), and one arm in
//! [`for_system`]; a scheme outside the crate is handed to [`crate::Execution::set_algorithm`]
//! (`master/examples/own_scheme.rs`, tested on crane-pub3 in `master/tests/own_scheme.rs`).

mod gauss_seidel;
mod iterative;
mod jacobi;
#[cfg(test)]
mod known_inputs;
#[cfg(test)]
mod tests;

pub use crate::bonds::BondState;
pub use crate::coupling::{Coupling, InstanceId, LinkId};
pub use crate::observer::AlgorithmStats;
pub use gauss_seidel::GaussSeidel;
pub use iterative::IterativeJacobi;
pub use jacobi::Jacobi;

use crate::error::Result;
use crate::fmu::FmuInstance;
use crate::system::{AlgorithmKind, System};

/// A co-simulation scheme.
pub trait Algorithm: Send {
    /// The name in `summary.json` (`jacobi`, `gauss-seidel`, `iterative-jacobi`).
    fn name(&self) -> &'static str;

    /// Steps every instance from t = t_n (step n) to t + H and reads every instance's outputs
    /// at t + H. On entry the inputs at t are set ([`Coupling::begin_step`]).
    fn step(&mut self, c: &mut Coupling, instances: &mut [Box<dyn FmuInstance>], n: u64, t: f64) -> Result<()>;

    /// Whether instances step on worker threads now.
    fn uses_threads(&self) -> bool {
        false
    }

    /// Its counts for `summary.json` (`algorithm_stats`): passes, unconverged and rejected
    /// steps (default: none).
    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats::default()
    }
}

/// The scheme a system asks for: Gauss-Seidel, iterative Jacobi (`iterations > 1`) or Jacobi.
pub fn for_system(sys: &System, c: &Coupling) -> Box<dyn Algorithm> {
    match sys.algorithm() {
        AlgorithmKind::GaussSeidel => Box::new(GaussSeidel::new(sys.order(), c)),
        AlgorithmKind::Jacobi if sys.iterations() > 1 => {
            Box::new(IterativeJacobi::new(sys.iterations(), sys.iteration_tolerance()))
        }
        AlgorithmKind::Jacobi => Box::new(Jacobi::new(sys.parallel(), c)),
    }
}
