//! Co-simulation library: loads FMI 2.0 and FMI 3.0 Co-Simulation FMUs (in process or each
//! isolated in a worker process) and couples instances with Jacobi, Gauss-Seidel or iterative
//! schemes, multirate stepping, input extrapolation and power-bond residual energy.
//!
//! The nouns live apart (as in libcosim); read top-down:
//! - [`system`]: *what* is simulated. [`SystemBuilder`] (in code, or read from a TOML system
//!   file or an SSP, [`ssp`]) validated into a [`System`];
//! - [`fmu`]: FMU import ([`fmu::FmuCache`], [`FmuInstance`] = one instance of an FMI 2.0 or 3.0
//!   FMU, in process or isolated);
//! - [`algorithm`]: *how*: [`algorithm::Algorithm`], one type per scheme, on the shared
//!   [`coupling`] layer (link histories, extrapolation, inputs) and [`bonds`] (residual energy);
//! - [`execution`]: [`Execution`], the one run loop: system + instances + algorithm + observers;
//! - [`observer`]: *what is recorded* (CSV, summary, in-memory, callbacks);
//! - [`ode`]: the integrators that drive Model Exchange FMUs between communication points;
//! - [`live`]: the live protocol (dashboard, WebSocket, JSON lines, UDP) of a served run;
//! - [`single`] (one FMU as a system), [`tune`] (the Publication III configuration search) and
//!   [`check`] (the behavioural FMI 2.0 compliance check, each check in a worker process): library
//!   code without process state, used by `cosim` and by the Python package.
//!
//! The library keeps no process-global state of its own: what belongs to the embedding program
//! (a stop request, the cleanup of extraction folders and worker processes, the CSV writer
//! threads to drain before an abnormal end) is handed in as a [`host::Host`]. The `cosim`
//! command line (its signal guard, `cosim run`'s output folder, progress bar, plots, `cosim
//! bench`) is the `cosim-cli` crate, which depends on this one; OS calls go through `cosim-os`.
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
pub mod host;
pub mod ids;
pub mod input_kind;
pub mod live;
pub mod matfile;
pub mod me_group;
pub mod names;
pub mod observer;
pub mod ode;
pub mod pool;
pub mod realtime;
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
