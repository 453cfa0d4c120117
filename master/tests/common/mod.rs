//! The oscillator's subsystems as in-process instances behind the master's `FmuInstance` trait
//! ([`fmu_harness::in_process`]): the algorithms are tested on real physics without loading
//! shared libraries.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_export::{CoSimModel, Factory};
pub use fmu_harness::in_process::InProcess;
use model_description::ModelDescription;

pub static FD1: Factory<fmu_oscillator::ForceDisplacementM1> = Factory::new();
pub static FD2: Factory<fmu_oscillator::ForceDisplacementM2> = Factory::new();
pub static DD1: Factory<fmu_oscillator::DisplacementDisplacementM1> = Factory::new();
pub static DD2: Factory<fmu_oscillator::DisplacementDisplacementM2> = Factory::new();

pub fn md<M: CoSimModel>(f: &'static Factory<M>) -> &'static ModelDescription {
    &f.table().unwrap().description.model
}
