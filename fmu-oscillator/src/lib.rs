//! FMUs of the oscillator co-simulation benchmarks of seed 001 (Appendix A.1–A.3):
//! - A.1, the double oscillator split force-displacement (`oscillator-fd-m1`, `oscillator-fd-m2`)
//!   and displacement-displacement (`oscillator-dd-m1`, `oscillator-dd-m2`);
//! - A.2, the triple oscillator in three subsystems (`oscillator-triple-fd-m1…m3`,
//!   `oscillator-triple-dd-m1…m3`);
//! - A.3, the double oscillator with nonlinear dampers (`oscillator-nonlinear-fd-m1/m2`,
//!   `oscillator-nonlinear-dd-m1/m2`).
//!
//! The physics is in [`subsystem`] (A.1) and [`coupled`] (A.2, A.3); [`models`], [`triple`] and
//! [`nonlinear`] declare each FMU's variables. `FMUS` lists all FMUs; the cdylib
//! `fmus/oscillator-fmus/` serves them (dispatch on the GUID given to `fmi2Instantiate`).
#![warn(missing_docs)]

pub mod coupled;
pub mod divisor;
pub mod models;
pub mod nonlinear;
pub mod subsystem;
pub mod triple;
pub mod variables;

pub use models::{DisplacementDisplacementM1, DisplacementDisplacementM2, ForceDisplacementM1, ForceDisplacementM2};
pub use nonlinear::{NonlinearDdM1, NonlinearDdM2, NonlinearFdM1, NonlinearFdM2};
pub use triple::{TripleDdM1, TripleDdM2, TripleDdM3, TripleFdM1, TripleFdM2, TripleFdM3};

fmu_export::define_fmus!(
    ForceDisplacementM1,
    ForceDisplacementM2,
    DisplacementDisplacementM1,
    DisplacementDisplacementM2,
    TripleFdM1,
    TripleFdM2,
    TripleFdM3,
    TripleDdM1,
    TripleDdM2,
    TripleDdM3,
    NonlinearFdM1,
    NonlinearFdM2,
    NonlinearDdM1,
    NonlinearDdM2
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn every_fmu_has_a_valid_description_and_documentation() {
        let mut names = std::collections::BTreeSet::new();
        for fmu in super::FMUS {
            let info = fmu.info();
            assert!(names.insert(info.fmu_name), "duplicate FMU name {}", info.fmu_name);
            let d = fmu.description().unwrap();
            assert!(d.xml.contains(info.model_identifier), "{}", info.fmu_name);
            assert!(fmu.documentation().unwrap().contains("Equations"), "{}", info.fmu_name);
        }
        assert_eq!(names.len(), 14);
    }
}
