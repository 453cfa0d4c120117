//! FMUs of the linear-oscillator co-simulation benchmark of seed 001 (Appendix A.1): the double
//! oscillator split force-displacement (`oscillator-fd-m1`, `oscillator-fd-m2`) and
//! displacement-displacement (`oscillator-dd-m1`, `oscillator-dd-m2`).
//!
//! The physics is in [`subsystem`]; [`models`] declares each FMU's variables. The library is a
//! cdylib that serves all four FMUs (dispatch on the GUID given to `fmi2Instantiate`).
#![warn(missing_docs)]

pub mod models;
pub mod subsystem;

pub use models::{DisplacementDisplacementM1, DisplacementDisplacementM2, ForceDisplacementM1, ForceDisplacementM2};

fmu_export::export_fmus!(
    ForceDisplacementM1,
    ForceDisplacementM2,
    DisplacementDisplacementM1,
    DisplacementDisplacementM2
);
