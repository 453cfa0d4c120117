//! The object-safe interface between the C ABI ([`crate::handle`]) and a generic
//! [`crate::instance::Instance`]: safe slices in, `fmi2Status` out.

use crate::types::Status;
use std::any::Any;
use std::ffi::c_char;

/// A saved FMU state (`fmi2FMUstate`): opaque to the C side, type-checked on use.
pub type Snapshot = Box<dyn Any + Send>;

/// What `fmi2NewDiscreteStates` (`fmi3UpdateDiscreteStates`) reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EventInfo {
    /// Another event iteration is needed.
    pub new_discrete_states_needed: bool,
    /// The model requests the end of the simulation.
    pub terminate_simulation: bool,
    /// The state nominals changed.
    pub nominals_changed: bool,
    /// The continuous states changed (the integrator must be reinitialized).
    pub values_changed: bool,
    /// The next time event, if any.
    pub next_event_time: Option<f64>,
}

/// The Model Exchange calls of an instance (FMI 2.0 §3.2, FMI 3.0 §3.2), the same for both
/// versions: `function` is the C function's name for the messages. An instance that was
/// instantiated for Co-Simulation refuses every one with `fmi2Error` and a message.
#[allow(missing_docs)]
pub trait ModelExchangeCalls {
    fn enter_event_mode(&mut self, function: &str) -> Status;
    fn new_discrete_states(&mut self, function: &str) -> Result<EventInfo, Status>;
    fn enter_continuous_time_mode(&mut self, function: &str) -> Status;
    /// (enterEventMode, terminateSimulation).
    fn completed_integrator_step(&mut self, function: &str) -> Result<(bool, bool), Status>;
    fn set_time(&mut self, function: &str, t: f64) -> Status;
    fn set_continuous_states(&mut self, function: &str, x: &[f64]) -> Status;
    fn get_continuous_states(&mut self, function: &str, x: &mut [f64]) -> Status;
    fn get_derivatives(&mut self, function: &str, dx: &mut [f64]) -> Status;
    fn get_event_indicators(&mut self, function: &str, z: &mut [f64]) -> Status;
    fn get_nominals(&mut self, function: &str, nominal: &mut [f64]) -> Status;
    fn number_of_states(&mut self, function: &str) -> Result<usize, Status>;
    fn number_of_event_indicators(&mut self, function: &str) -> Result<usize, Status>;
}

/// One FMU instance, as the C API sees it. Every method checks the FMI 2.0 state machine and its
/// arguments, logs the reason of any rejection and returns the `fmi2Status`.
#[allow(missing_docs)]
pub trait Component: Send + ModelExchangeCalls {
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
