//! The validation report (`cargo xtask validate` → `docs/validation.md`): every benchmark of the
//! seed papers co-simulated from the packaged FMUs and compared with an analytical or monolithic
//! reference. Each section returns its rows (paper's number, ours, target, PASS/FAIL) so the
//! integration tests can assert the same rows the report prints.

pub mod report;

pub use report::{PapersMethod, Row, Section, Verdict};

pub mod crane;
pub mod energy_control;
pub mod fluid_energy;
pub mod multirate;
pub mod naya;
pub mod oscillators;
pub mod plot;
pub mod pub2;
pub mod pub4;
pub mod residual_order;
pub mod runner;
pub mod semirecursive;
