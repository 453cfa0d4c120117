//! Planar multibody mechanisms in natural coordinates, usable from Rust (e.g. by a monolithic
//! solver), and the list of the FMI 2.0 Co-Simulation FMUs they make (`FMUS`; the binary is the
//! cdylib `fmus/multibody-fmus/`).
//!
//! - [`mechanism`]: the engine (mass matrix, generalized forces, constraints, Jacobian,
//!   convective term, cylinder kinematics and forces, static cylinder forces);
//! - [`rod`]: the seed 004 rod; [`crane`]: the Publication III crane and double-actuator crane;
//!   [`fourbar`]: the Publication I four-bar (the "Gl" comparison of the semi-recursive crate);
//! - [`solver`]: I3AL-P and I1AL with the trapezoidal rule, restart at input jumps; [`kkt`]: the
//!   restart system [M Φ_qᵀ; Φ_q 0] both the solver and the static forces solve;
//! - [`cylinder`]: the pressure-coupling cylinder law (areas, friction, end dampers);
//! - [`diagnostics`]: the energy, constraint and Newton-counter outputs shared with the unified FMUs;
//! - [`fmu`]: the FMU model shared by all variants, [`variants`]: the six FMUs.
#![warn(missing_docs)]

pub mod crane;
pub mod crane_me;
pub mod cylinder;
pub mod cylinder_outputs;
pub mod diagnostics;
pub mod fmu;
pub mod fourbar;
pub mod internal_step;
pub mod kkt;
pub mod lu;
pub mod mechanism;
pub mod rod;
pub mod solver;
pub mod variants;

pub use crane_me::CraneMeFmu;
pub use fmu::MbFmu;
pub use variants::{Crane2Fmu, Crane2PFmu, CraneFmu, CranePFmu, RodFmu, RodPFmu};

fmu_export::define_fmus!(RodFmu, CraneFmu, Crane2Fmu, RodPFmu, CranePFmu, Crane2PFmu, CraneMeFmu);
