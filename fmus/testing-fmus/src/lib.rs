//! The binary of the FMUs of crate `fmu-testing`: a cdylib that only exports the FMI 2.0 C API
//! (`fmi2*`) and the FMI 3.0 C API (`fmi3*`) over that crate's list `fmu_testing::FMUS`, dispatching `fmi2Instantiate` on the GUID.
//! `cargo xtask fmus` packages it as `binaries/linux64/<modelIdentifier>.so` of each FMU.

fmu_export::export_fmi2!(fmu_testing::FMUS);
fmu_export::export_fmi3!(fmu_testing::FMUS);
