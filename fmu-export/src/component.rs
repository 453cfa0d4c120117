//! The object-safe interface between the C ABI ([`crate::handle`]) and a generic
//! [`crate::instance::Instance`]: safe slices in, `fmi2Status` out.

use crate::types::Status;
use std::any::Any;
use std::ffi::c_char;

/// A saved FMU state (`fmi2FMUstate`): opaque to the C side, type-checked on use.
pub type Snapshot = Box<dyn Any + Send>;

/// One FMU instance, as the C API sees it. Every method checks the FMI 2.0 state machine and its
/// arguments, logs the reason of any rejection and returns the `fmi2Status`.
#[allow(missing_docs)]
pub trait Component: Send {
    fn set_debug_logging(&mut self, on: bool, categories: &[Option<&str>]) -> Status;
    fn setup_experiment(&mut self, tolerance: Option<f64>, start: f64, stop: Option<f64>) -> Status;
    fn enter_initialization_mode(&mut self) -> Status;
    fn exit_initialization_mode(&mut self) -> Status;
    fn terminate(&mut self) -> Status;
    fn reset(&mut self) -> Status;
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Status;
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Status;
    fn get_boolean(&mut self, vr: &[u32], out: &mut [i32]) -> Status;
    fn get_string(&mut self, vr: &[u32], out: &mut [*const c_char]) -> Status;
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Status;
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Status;
    fn set_boolean(&mut self, vr: &[u32], values: &[i32]) -> Status;
    fn set_string(&mut self, vr: &[u32], values: &[Option<&str>]) -> Status;
    fn get_fmu_state(&mut self, reuse: Option<&mut Snapshot>) -> Result<Option<Snapshot>, Status>;
    fn set_fmu_state(&mut self, state: &Snapshot) -> Status;
    fn check_fmu_state(&mut self, function: &str, state: &Snapshot) -> Status;
    fn serialize_fmu_state(&mut self, state: &Snapshot) -> Result<Vec<u8>, Status>;
    fn deserialize_fmu_state(&mut self, bytes: &[u8]) -> Result<Snapshot, Status>;
    fn set_real_input_derivatives(&mut self, vr: &[u32], order: &[i32], values: &[f64]) -> Status;
    fn get_real_output_derivatives(&mut self, vr: &[u32], order: &[i32], out: &mut [f64]) -> Status;
    fn do_step(&mut self, t: f64, h: f64, no_set_prior: bool) -> Status;
    fn cancel_step(&mut self) -> Status;
    fn get_status(&mut self, function: &str, kind: i32) -> Result<Status, Status>;
    fn get_real_status(&mut self, kind: i32) -> Result<f64, Status>;
    fn get_integer_status(&mut self, kind: i32) -> Result<i32, Status>;
    fn get_boolean_status(&mut self, kind: i32) -> Result<bool, Status>;
    fn get_string_status(&mut self, kind: i32) -> Result<*const c_char, Status>;
    /// Rejects a call for a reason found by the C layer (null pointer…): logs, returns Error.
    fn fail(&mut self, function: &str, message: &str) -> Status;
    /// Notes that the model panicked inside `function`: the instance goes to the error state.
    fn poison(&mut self, function: &str, message: &str);
    /// The instance's current time (start time before the first step, then the end of the last
    /// successful step): FMI 3.0's independent variable `time`.
    fn time(&self) -> f64 {
        f64::NAN
    }
    /// The last message the instance logged, when it keeps them (an instance made without
    /// logger callbacks, in process): what an importer in the same process names in its errors.
    fn last_message(&self) -> Option<&str> {
        None
    }
    /// `fmi2GetDirectionalDerivative`: not provided by our models.
    fn directional_derivative(&mut self) -> Status {
        self.fail("fmi2GetDirectionalDerivative", "not provided (providesDirectionalDerivative=\"false\")")
    }
}
