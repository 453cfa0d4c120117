//! Loading any FMI 2.0 Co-Simulation FMU and driving its instances through a safe API.
//!
//! - `cache`: [`FmuCache`], each FMU loaded once.
//! - `archive`: unzips into a private temporary folder (removed on drop), refusing unsafe entries.
//! - `ffi`: the only module that holds raw pointers: library, resolved `fmi2*` symbols, callbacks
//!   (a C shim formats the FMU's variadic log messages).
//! - `instance`: [`Slave`] implemented by [`Fmu2Slave`].
//! - `isolated`: [`Slave`] implemented by [`IsolatedSlave`], an instance in a worker process
//!   (`cosim run --isolate`).

use crate::error::Result;

/// One simulator instance as the algorithms see it. Value references are those of the FMU;
/// strings and status handling stay inside the implementation. Every error names the instance,
/// the function, the time and the FMU's last log message.
///
/// Call order: `setup` → (`set_*`)* → `enter_initialization` → (`set_*`/`get_*`)* →
/// `exit_initialization` → repeatedly (`set_*`, `set_input_derivatives`, `do_step`, `get_*`)
/// → `terminate`. Dropping frees the instance.
pub trait Slave: Send {
    /// Instance name.
    fn name(&self) -> &str;
    /// `fmi2SetupExperiment` (no tolerance, start, optional stop).
    fn setup(&mut self, start: f64, stop: Option<f64>) -> Result<()>;
    /// `fmi2EnterInitializationMode`.
    fn enter_initialization(&mut self) -> Result<()>;
    /// `fmi2ExitInitializationMode`.
    fn exit_initialization(&mut self) -> Result<()>;
    /// `fmi2GetReal`.
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()>;
    /// `fmi2SetReal`.
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()>;
    /// `fmi2GetInteger` (also Enumerations).
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Result<()>;
    /// `fmi2SetInteger`.
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Result<()>;
    /// `fmi2GetBoolean`.
    fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()>;
    /// `fmi2SetBoolean`.
    fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> Result<()>;
    /// `fmi2GetString`.
    fn get_string(&mut self, vr: &[u32]) -> Result<Vec<String>>;
    /// `fmi2SetString`.
    fn set_string(&mut self, vr: &[u32], values: &[&str]) -> Result<()>;
    /// `fmi2SetRealInputDerivatives` (one order for all given references).
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()>;
    /// `fmi2DoStep(t, h, noSetFMUStatePriorToCurrentPoint = true)`.
    fn do_step(&mut self, t: f64, h: f64) -> Result<()>;
    /// `fmi2Terminate`.
    fn terminate(&mut self) -> Result<()>;
    /// Whether the FMU declares `canInterpolateInputs`.
    fn can_interpolate_inputs(&self) -> bool;
    /// Saves the instance's state (`fmi2GetFMUstate`) so that [`Slave::restore_state`] can
    /// repeat a step (iterative coupling). The default: not supported.
    fn save_state(&mut self) -> Result<()> {
        Err(crate::MasterError::Worker {
            instance: self.name().to_owned(),
            function: "fmi2GetFMUstate",
            time: f64::NAN,
            message: "this instance cannot save its state (iterative coupling needs canGetAndSetFMUstate and an in-process instance)".into(),
        })
    }
    /// Restores the state saved last (`fmi2SetFMUstate`).
    fn restore_state(&mut self) -> Result<()> {
        Err(crate::MasterError::Worker {
            instance: self.name().to_owned(),
            function: "fmi2SetFMUstate",
            time: f64::NAN,
            message: "this instance cannot restore a state".into(),
        })
    }
    /// Time spent inside FMU calls so far (s) and the number of `fmi2DoStep` calls.
    fn call_stats(&self) -> (f64, u64) {
        (0.0, 0)
    }
    /// Switches the measurement of time inside FMU calls on or off (default off: two clock reads
    /// per call cost more than a small FMU's setter; `cosim bench` switches it on for its timed run).
    fn set_timing(&mut self, _on: bool) {}
}

pub mod archive;
mod cache;
mod ffi;
pub mod info;
pub mod instance;
pub mod isolated;

pub use archive::Archive;
pub use cache::FmuCache;
pub use info::info;
pub use instance::{Fmu2, Fmu2Slave};
pub use isolated::IsolatedSlave;
