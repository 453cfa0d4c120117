//! Co-simulation master: loads any FMI 2.0 Co-Simulation FMU and couples instances with Jacobi or
//! Gauss-Seidel schemes, multirate stepping, input extrapolation and power-bond residual energy.
//!
//! The nouns live apart (as in libcosim): [`system`] is *what* is simulated (instances,
//! connections, bonds), [`algorithm`] is *how* (Jacobi, Gauss-Seidel, extrapolation,
//! multirate), [`observer`] is *what is recorded*, and [`fmu`] loads and wraps the FMUs.
#![warn(missing_docs)]

pub mod algorithm;
pub mod error;
pub mod extrapolation;
pub mod fmu;
pub mod observer;
pub mod pool;
pub mod run;
pub mod system;
pub mod tune;

pub use error::{MasterError, Result};
pub use fmu::{Call, Slave};
pub use fmu::{Fmu2, Fmu2Slave};
