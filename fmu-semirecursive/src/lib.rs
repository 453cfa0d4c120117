//! Semi-recursive (relative joint coordinate) formulations of Publication I (seed 000) and seed
//! 002 for hydraulically actuated planar mechanisms, monolithic with the lumped-fluid circuit.
//!
//! - [`mechanism`]: the planar engine (table of bodies and joints; recursive kinematics,
//!   M(z) = R_dᵀTᵀM̄TR_d, Q, Φ(z), Φ_z);
//! - [`circuit`]: the three-volume circuit (reusing `fmu_hydraulics::lumped3`) and the friction law;
//! - [`models`]: Models A (Pub I), D and E (002);
//! - [`penalty`]: augmented-Lagrangian penalty trapezoidal integrator (Pub I eqs. 15, 37–45);
//! - [`double_step`]: coordinate-partitioning trapezoidal integrator (002 eqs. 13–17, 30–38);
//! - [`partition`]: full-pivoting choice of the independent coordinates;
//! - [`scalar`]: f64 or dual numbers (exact tangent);
//! - [`gl`]: the natural-coordinate "Gl" comparison of Model A (global I3AL-P solver);
//! - [`pub2`]: Publication II, Model A′ with lumped-fluid or singular-perturbation p3.
#![warn(missing_docs)]
// Index loops over joints and constraints read like the equations (Σ_j, Σ_i).
#![allow(clippy::needless_range_loop)]

pub mod circuit;
pub mod double_step;
pub mod fmu;
pub mod gl;
pub mod mechanism;
pub mod models;
pub mod partition;
pub mod penalty;
pub mod pub2;
pub mod run;
pub mod scalar;
pub mod state;

/// Model A, D, E monolithic FMUs and their mechanism-only co-simulation FMUs.
pub type ModelAFmu = fmu::MonolithicFmu<0>;
/// Model D monolithic FMU.
pub type ModelDFmu = fmu::MonolithicFmu<1>;
/// Model E monolithic FMU.
pub type ModelEFmu = fmu::MonolithicFmu<2>;
/// Model A mechanism FMU.
pub type MechAFmu = fmu::MechanismFmu<0>;
/// Model D mechanism FMU.
pub type MechDFmu = fmu::MechanismFmu<1>;
/// Model E mechanism FMU.
pub type MechEFmu = fmu::MechanismFmu<2>;

fmu_export::define_fmus!(ModelAFmu, ModelDFmu, ModelEFmu, MechAFmu, MechDFmu, MechEFmu);
