//! Co-simulation master: loads any FMI 2.0 Co-Simulation FMU and couples instances with Jacobi,
//! Gauss-Seidel or iterative schemes, multirate stepping, input extrapolation and power-bond
//! residual energy.
//!
//! The nouns live apart (as in libcosim); read top-down:
//! - [`system`]: *what* is simulated. [`SystemBuilder`] (in code, or read from a TOML system
//!   file) validated into a [`System`];
//! - [`fmu`]: FMU import ([`fmu::FmuCache`], [`FmuInstance`] = one instance, in process or isolated);
//! - [`algorithm`]: *how*: [`algorithm::Algorithm`], one type per scheme, on the shared
//!   [`coupling`] layer (link histories, extrapolation, inputs) and [`bonds`] (residual energy);
//! - [`execution`]: [`Execution`], the one run loop: system + instances + algorithm + observers;
//! - [`observer`]: *what is recorded* (CSV, summary, in-memory, callbacks);
//! - front ends: [`run`] (`cosim run`: a system file, or one FMU via [`single`]), [`tune`]
//!   (`cosim tune`), [`check`] (`cosim check`), the `cosim bench` binary module.
//!
//! ```no_run
//! use master::{Execution, SystemBuilder};
//! use master::observer::{Recorder, SharedRecorder};
//! # fn main() -> master::Result<()> {
//! let mut fmus = master::fmu::FmuCache::default();
//! let system = SystemBuilder::read("scenarios/oscillator-fd.toml".as_ref())?.load(&mut fmus)?;
//! let mut run = Execution::new(system, &fmus)?;
//! let trace = SharedRecorder::default();
//! run.observe(Box::new(trace.clone()));
//! run.run()?;
//! let summary = run.finish()?;
//! println!("{:?}: {} points", summary.status, trace.lock().map(|r| r.times.len()).unwrap_or(0));
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod algorithm;
pub mod bonds;
pub mod check;
pub mod coupling;
pub mod error;
pub mod execution;
pub mod extrapolation;
pub mod fmu;
pub mod guard;
pub mod host;
pub mod ids;
pub mod input_kind;
pub mod live;
pub mod matfile;
pub mod observer;
pub mod plot;
pub mod pool;
pub mod precision;
pub mod progress;
pub mod realtime;
pub mod run;
pub mod single;
pub mod ssp;
pub mod step_control;
pub mod suggest;
pub mod system;
pub mod tune;
pub mod units;

pub use error::{MasterError, Result};
pub use execution::Execution;
pub use fmu::{Call, FmuInstance};
pub use fmu::{Fmi2Instance, Fmi3Instance, Fmu, Instance};
pub use system::{System, SystemBuilder};
