//! Lumped-fluid hydraulic circuits, usable from Rust (e.g. by a monolithic solver), and the list
//! of the FMI 2.0 Co-Simulation FMUs they make (`FMUS`; the binary is the cdylib `fmus/hydraulics-fmus/`):
//!
//! - [`naya`]: the two-chamber cylinder of seed 004 (physics), [`fmu_naya`]: `hydraulics-naya.fmu`.
//! - [`lumped3`]: the three-volume circuit of Publication III (physics), [`fmu_lumped3`]:
//!   `hydraulics-lumped3.fmu`.
//! - [`orifice`]: the orifice law of the three-volume circuit's valve edges and throttle;
//!   [`cavitation`]: the low-pressure (gas-release) law both circuits use below p_cav.
//! - [`interface`]: the interface-model (IM) mode, the circuit integrating the reduced mechanics;
//!   [`interface_fmu`]: its state and variables, shared by the FMUs.
//! - [`integrator`]: FWE, trapezoidal rule (Newton, analytic Jacobian), RK4;
//!   [`stepping`]: the fixed internal step shared by the FMUs.
#![warn(missing_docs)]

pub mod cavitation;
pub mod fmu_lumped3;
pub mod fmu_naya;
pub mod integrator;
pub mod interface;
pub mod interface_fmu;
pub mod lumped3;
pub mod me_lumped3;
pub mod naya;
pub mod orifice;
pub mod sp;
pub mod stepping;

pub use fmu_lumped3::Lumped3Fmu;
pub use fmu_naya::NayaFmu;
pub use me_lumped3::Lumped3MeFmu;

fmu_export::define_fmus!(NayaFmu, Lumped3Fmu, Lumped3MeFmu);
