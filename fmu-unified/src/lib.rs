//! Monolithic (unified) references for the co-simulations: a mechanism and its hydraulic
//! circuits integrated in one Newton system (seed 004 §3, index-3 augmented Lagrangian with
//! pressures, trapezoidal rule, non-symmetric tangent of eq. 26, projections). The physics is
//! the code of the co-simulation FMUs (crates `fmu-multibody` and `fmu-hydraulics`): this crate
//! adds only the coupling of the two in one iteration.
//!
//! - [`circuit`]: a circuit as the solver sees it (rates, force and their partials);
//! - [`solver`]: the unified step and the restart at input jumps;
//! - [`fmu`]: the FMU model, [`variants`]: the four FMUs.
#![warn(missing_docs)]

pub mod circuit;
pub mod fmu;
pub mod solver;
pub mod variants;

pub use variants::{UnifiedCrane2Fmu, UnifiedCraneA4Fmu, UnifiedCraneFmu, UnifiedNayaFmu};

fmu_export::define_fmus!(UnifiedNayaFmu, UnifiedCraneA4Fmu, UnifiedCraneFmu, UnifiedCrane2Fmu);
