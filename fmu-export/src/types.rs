//! The C types of `fmi2TypesPlatform.h` and `fmi2FunctionTypes.h` (FMI 2.0.4), exactly as the
//! standard declares them for the default platform.
//!
//! We declare them here instead of depending on an importer crate: the export side needs only
//! these few `repr(C)` items, and keeping them beside the `ffi` module makes every signature
//! reviewable against the header in one place.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `fmi2Component`: opaque instance pointer.
pub type fmi2Component = *mut c_void;
/// `fmi2ComponentEnvironment`: opaque pointer of the importer, passed back to callbacks.
pub type fmi2ComponentEnvironment = *mut c_void;
/// `fmi2FMUstate`: opaque pointer to a saved FMU state.
pub type fmi2FMUstate = *mut c_void;
/// `fmi2ValueReference`.
pub type fmi2ValueReference = c_uint;
/// `fmi2Real`.
pub type fmi2Real = f64;
/// `fmi2Integer`.
pub type fmi2Integer = c_int;
/// `fmi2Boolean` (`fmi2True` = 1, `fmi2False` = 0).
pub type fmi2Boolean = c_int;
/// `fmi2Char`.
pub type fmi2Char = c_char;
/// `fmi2String`.
pub type fmi2String = *const fmi2Char;
/// `fmi2Byte`.
pub type fmi2Byte = c_char;

/// `fmi2True`.
pub const FMI2_TRUE: fmi2Boolean = 1;
/// `fmi2False`.
pub const FMI2_FALSE: fmi2Boolean = 0;

/// `fmi2Status`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// `fmi2OK`.
    Ok = 0,
    /// `fmi2Warning`.
    Warning = 1,
    /// `fmi2Discard`.
    Discard = 2,
    /// `fmi2Error`.
    Error = 3,
    /// `fmi2Fatal`.
    Fatal = 4,
    /// `fmi2Pending`.
    Pending = 5,
}

impl Status {
    /// The `fmi2Status` spelling, for log messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "fmi2OK",
            Self::Warning => "fmi2Warning",
            Self::Discard => "fmi2Discard",
            Self::Error => "fmi2Error",
            Self::Fatal => "fmi2Fatal",
            Self::Pending => "fmi2Pending",
        }
    }
}

/// `fmi2Type`.
pub type fmi2Type = c_int;
/// `fmi2ModelExchange`.
pub const FMI2_MODEL_EXCHANGE: fmi2Type = 0;
/// `fmi2CoSimulation`.
pub const FMI2_CO_SIMULATION: fmi2Type = 1;

/// `fmi2StatusKind`.
pub type fmi2StatusKind = c_int;
/// `fmi2DoStepStatus`.
pub const FMI2_DO_STEP_STATUS: fmi2StatusKind = 0;
/// `fmi2PendingStatus`.
pub const FMI2_PENDING_STATUS: fmi2StatusKind = 1;
/// `fmi2LastSuccessfulTime`.
pub const FMI2_LAST_SUCCESSFUL_TIME: fmi2StatusKind = 2;
/// `fmi2Terminated`.
pub const FMI2_TERMINATED: fmi2StatusKind = 3;

/// `fmi2CallbackLogger`: variadic; the message is a printf format string.
pub type fmi2CallbackLogger =
    Option<unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2String, Status, fmi2String, fmi2String, ...)>;
/// `fmi2CallbackAllocateMemory`.
pub type fmi2CallbackAllocateMemory = Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>;
/// `fmi2CallbackFreeMemory`.
pub type fmi2CallbackFreeMemory = Option<unsafe extern "C" fn(*mut c_void)>;
/// `fmi2StepFinished`.
pub type fmi2StepFinished = Option<unsafe extern "C" fn(fmi2ComponentEnvironment, Status)>;

/// `fmi2CallbackFunctions`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct fmi2CallbackFunctions {
    /// `logger`.
    pub logger: fmi2CallbackLogger,
    /// `allocateMemory`.
    pub allocate_memory: fmi2CallbackAllocateMemory,
    /// `freeMemory`.
    pub free_memory: fmi2CallbackFreeMemory,
    /// `stepFinished`.
    pub step_finished: fmi2StepFinished,
    /// `componentEnvironment`.
    pub component_environment: fmi2ComponentEnvironment,
}

/// `fmi2EventInfo` (FMI 2.0 §3.2.2): what `fmi2NewDiscreteStates` reports.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct fmi2EventInfo {
    /// `newDiscreteStatesNeeded`.
    pub new_discrete_states_needed: fmi2Boolean,
    /// `terminateSimulation`.
    pub terminate_simulation: fmi2Boolean,
    /// `nominalsOfContinuousStatesChanged`.
    pub nominals_of_continuous_states_changed: fmi2Boolean,
    /// `valuesOfContinuousStatesChanged`.
    pub values_of_continuous_states_changed: fmi2Boolean,
    /// `nextEventTimeDefined`.
    pub next_event_time_defined: fmi2Boolean,
    /// `nextEventTime`.
    pub next_event_time: fmi2Real,
}
