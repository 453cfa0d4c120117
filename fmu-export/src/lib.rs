//! The FMI Co-Simulation export layer (FMI 2.0 and FMI 3.0) shared by every FMU of this workspace.
//!
//! A model is plain Rust: it implements [`CoSimModel`] (initialize, step, state visitor) and
//! lists its variables in a table of [`Variable`]s. This crate does everything FMI:
//!
//! - [`define_fmus!`]: a physics library's list of FMUs (`pub static FMUS`), no C symbols, so
//!   the physics crates are plain rlibs that any binary can link together;
//! - [`instance`]: one instance of a model, the same for both FMI versions: the state machine
//!   (an illegal call returns `fmi2Error` and logs why), value reference and type checks, NaN
//!   and range checks, input polynomials (`fmi2SetRealInputDerivatives`), output derivatives,
//!   FMU states and their serialization; [`component`]: its object-safe interface;
//! - [`handle`]: the instance handle behind an `fmi2Component` and an `fmi3Instance` (one for
//!   both versions), `catch_unwind` at each entry point, the C argument checks; [`common`]: the
//!   calls both versions share (free, reset, FMU states…);
//! - [`fmi2`] + [`export_fmi2!`]: every FMI 2.0 common and Co-Simulation `fmi2*` function with
//!   the exact C signature, dispatch on the GUID so that one library serves several FMUs. Only
//!   the thin cdylib crates under `fmus/` (the FMU binaries) invoke it, over their physics
//!   crate's `FMUS`;
//! - [`logger`]: the importer's logger with the categories of `fmi2SetDebugLogging`;
//! - [`description`]: `modelDescription.xml` and the GUID, generated from the same table;
//! - [`documentation`]: `documentation/index.html`, also from the table;
//! - [`fmi3`] + [`export_fmi3!`]: the same models as FMI 3.0 Co-Simulation FMUs, beside
//!   [`fmi2`] over the same handle (the same binary exports both APIs; `modelDescription.xml`
//!   3.0 from the same description).
//!
//! ```
//! use fmu_export::*;
//! use model_description::DependencyKind;
//!
//! /// ẋ = −k x + u: a first-order lag.
//! #[derive(Clone)]
//! struct Lag { k: f64, x: f64, u: InputSignal }
//! impl Default for Lag { fn default() -> Self { Self { k: 2.0, x: 1.0, u: InputSignal::new(0.0) } } }
//!
//! impl CoSimModel for Lag {
//!     fn info() -> ModelInfo {
//!         ModelInfo { model_name: "Lag", model_identifier: "lag", fmu_name: "lag",
//!             description: "first-order lag", documentation_html: "<p>ẋ = −k x + u</p>",
//!             source: "textbook", default_experiment: (0.0, 1.0, 0.01), interpolates_inputs: true }
//!     }
//!     fn variables() -> Vec<Variable<Self>> {
//!         vec![
//!             Variable::parameter("k", "1/s", "rate", |m: &Self| m.k, |m, v| m.k = v).min(0.0),
//!             Variable::input("u", "1/s", "forcing", |m: &Self| m.u.value, |m| &mut m.u),
//!             Variable::output("x", "", "state", |m: &Self| m.x),
//!         ]
//!     }
//!     fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> { self.x = 1.0; Ok(()) }
//!     fn do_step(&mut self, _t: f64, h: f64, _ctx: &mut Context) -> Result<(), ModelError> {
//!         self.x += h * (-self.k * self.x + self.u.at(0.0)); Ok(())
//!     }
//!     fn visit_state(&mut self, v: &mut dyn StateVisitor) { v.real(&mut self.k); v.real(&mut self.x); v.input(&mut self.u); }
//! }
//!
//! static LAG: Factory<Lag> = Factory::new();
//! let xml = &LAG.description().unwrap().xml;
//! assert!(xml.contains(r#"name="k""#) && xml.contains("canInterpolateInputs=\"true\""));
//! let mut inst = LAG.instance(Logger::new(None, "lag1", true)).unwrap();
//! assert_eq!(inst.enter_initialization_mode(), Status::Ok);
//! assert_eq!(inst.exit_initialization_mode(), Status::Ok);
//! assert_eq!(inst.do_step(0.0, 0.1, true), Status::Ok);
//! let mut x = [0.0];
//! inst.get_real(&[2], &mut x);
//! assert!((x[0] - 0.8).abs() < 1e-12);
//! // An illegal call is refused with fmi2Error and a message.
//! assert_eq!(inst.enter_initialization_mode(), Status::Error);
//! assert!(inst.log.history.last().unwrap().contains("illegal call sequence"));
//! # let _ = DependencyKind::Dependent;
//! ```
#![warn(missing_docs)]

pub mod common;
pub mod component;
pub mod description;
pub mod documentation;
pub mod factory;
pub mod fmi2;
pub mod fmi3;
pub mod grid;
pub mod handle;
pub mod input;
pub mod instance;
pub mod logger;
pub mod me_calls;
pub mod model;
pub mod ode;
pub mod state;
pub mod types;
pub mod types3;
pub mod units;
pub mod variable;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_me;

pub use component::{Component, EventInfo, ModelExchangeCalls};
pub use description::{describe, Description};
pub use factory::{Factory, Fmu};
pub use input::{InputSignal, MAX_INPUT_ORDER};
pub use instance::{Instance, Interface, State};
pub use logger::{Category, Logger};
pub use model::{CoSimModel, Context, ModelError, ModelInfo};
pub use ode::{Ode, OdeModel, StoredOde};
pub use state::StateVisitor;
pub use types::Status;
pub use variable::{Access, EnumType, Variable};
