//! The FMI C API function tables, each written once: [`Fmi2`] (FMI 2.0 common and
//! Co-Simulation functions, `fmi2FunctionTypes.h`) and [`Fmi3`] (the FMI 3.0 functions a
//! Co-Simulation master calls, `fmi3FunctionTypes.h`; event mode, clocks and Scheduled Execution optional).
//!
//! One list per version gives the struct of typed function pointers, the symbol names
//! ([`Fmi2::REQUIRED`], [`Fmi2::OPTIONAL`]) and the resolver ([`Fmi2::resolve`]), so the
//! master's loader (`master/src/fmu/ffi.rs`, `ffi3.rs`), `cosim info`'s export check and the test
//! harness (`fmu-harness/src/lib.rs`) cannot disagree on a name or a signature.
//!
//! Why not `fmi-sys`: see `docs/fmu-behaviour.md` ("The C API tables").

use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;

/// `fmi2Component` / `fmi3Instance`.
pub type Component = *mut c_void;
/// `fmi2ValueReference` / `fmi3ValueReference`.
pub type Vr = u32;
/// `fmi2Status` / `fmi3Status` (a C enum: an `int`).
pub type Status = c_int;

/// `fmi2CallbackFunctions`, declared by the importer (its logger's variadic signature differs
/// between the master's C shim and the harness), so the table takes it as an opaque pointer
/// type parameter of `fmi2Instantiate`.
pub type CallbacksPtr = *const c_void;

/// `fmi3LogMessageCallback`.
pub type LogMessage3 = unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char);

/// `fmi3IntermediateUpdateCallback(env, time, setRequested, getAllowed, stepFinished,
/// canReturnEarly, *earlyReturnRequested, *earlyReturnTime)`.
pub type IntermediateUpdate3 = unsafe extern "C" fn(*mut c_void, f64, bool, bool, bool, bool, *mut bool, *mut f64);

/// `fmi3ClockUpdateCallback(env)` (Scheduled Execution).
pub type ClockUpdate3 = unsafe extern "C" fn(*mut c_void);

/// `fmi3LockPreemptionCallback` / `fmi3UnlockPreemptionCallback` (Scheduled Execution).
pub type LockPreemption3 = unsafe extern "C" fn();

/// A symbol the library does not export (or exports as NULL): its name and the loader's error.
#[derive(Debug)]
pub struct Missing<E> {
    /// The C name, e.g. `fmi2DoStep`.
    pub symbol: &'static str,
    /// What the lookup said.
    pub error: E,
}

macro_rules! table {
    (
        $(#[$meta:meta])*
        $name:ident {
            required { $($req:ident = $req_sym:literal : $req_ty:ty,)* }
            optional { $($opt:ident = $opt_sym:literal : $opt_ty:ty,)* }
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        #[allow(missing_docs)]
        pub struct $name {
            $(pub $req: $req_ty,)*
            $(pub $opt: Option<$opt_ty>,)*
        }

        impl $name {
            /// The functions a binary must export, in the table's order.
            pub const REQUIRED: &'static [&'static str] = &[$($req_sym),*];
            /// The functions the table takes when present (`None` otherwise).
            pub const OPTIONAL: &'static [&'static str] = &[$($opt_sym),*];

            /// Resolves every function with `lookup`, which gets a symbol's NUL-terminated name
            /// and returns its address; the first required symbol it cannot find is the error.
            ///
            /// # Safety
            /// The addresses `lookup` returns are functions with the signatures of this table
            /// (those of the FMI headers), and stay valid while the table is used (the library
            /// stays loaded).
            pub unsafe fn resolve<E>(
                mut lookup: impl FnMut(&'static [u8]) -> Result<NonNull<c_void>, E>,
            ) -> Result<Self, Missing<E>> {
                Ok(Self {
                    $($req: {
                        let p = lookup(concat!($req_sym, "\0").as_bytes())
                            .map_err(|error| Missing { symbol: $req_sym, error })?;
                        // SAFETY: per this function's contract, a function of this signature;
                        // a data pointer and a function pointer have the same size on every
                        // platform FMI binaries exist for.
                        unsafe { std::mem::transmute::<*mut c_void, $req_ty>(p.as_ptr()) }
                    },)*
                    $($opt: match lookup(concat!($opt_sym, "\0").as_bytes()) {
                        // SAFETY: as above.
                        Ok(p) => Some(unsafe { std::mem::transmute::<*mut c_void, $opt_ty>(p.as_ptr()) }),
                        Err(_) => None,
                    },)*
                })
            }

            /// The optional functions the binary does not export.
            #[allow(unused_mut)] // a table without optional functions
            pub fn missing_optional(&self) -> Vec<&'static str> {
                let mut missing = Vec::new();
                $(if self.$opt.is_none() {
                    missing.push($opt_sym);
                })*
                missing
            }
        }
    };
}

table! {
    /// The FMI 2.0 common and Co-Simulation functions (FMI 2.0.4 §2.1, §4.2). Booleans are
    /// `int` (`fmi2Boolean`). `fmi2GetRealStatus` and `fmi2GetBooleanStatus` are optional here:
    /// they are only asked after a discarded step, and some FMUs in the wild lack them.
    Fmi2 {
        required {
            get_types_platform = "fmi2GetTypesPlatform": unsafe extern "C" fn() -> *const c_char,
            get_version = "fmi2GetVersion": unsafe extern "C" fn() -> *const c_char,
            set_debug_logging = "fmi2SetDebugLogging":
                unsafe extern "C" fn(Component, c_int, usize, *const *const c_char) -> Status,
            instantiate = "fmi2Instantiate": unsafe extern "C" fn(
                *const c_char,
                c_int,
                *const c_char,
                *const c_char,
                CallbacksPtr,
                c_int,
                c_int,
            ) -> Component,
            free_instance = "fmi2FreeInstance": unsafe extern "C" fn(Component),
            setup_experiment = "fmi2SetupExperiment":
                unsafe extern "C" fn(Component, c_int, f64, f64, c_int, f64) -> Status,
            enter_initialization_mode = "fmi2EnterInitializationMode": unsafe extern "C" fn(Component) -> Status,
            exit_initialization_mode = "fmi2ExitInitializationMode": unsafe extern "C" fn(Component) -> Status,
            terminate = "fmi2Terminate": unsafe extern "C" fn(Component) -> Status,
            reset = "fmi2Reset": unsafe extern "C" fn(Component) -> Status,
            get_real = "fmi2GetReal": unsafe extern "C" fn(Component, *const Vr, usize, *mut f64) -> Status,
            get_integer = "fmi2GetInteger": unsafe extern "C" fn(Component, *const Vr, usize, *mut c_int) -> Status,
            get_boolean = "fmi2GetBoolean": unsafe extern "C" fn(Component, *const Vr, usize, *mut c_int) -> Status,
            get_string = "fmi2GetString":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut *const c_char) -> Status,
            set_real = "fmi2SetReal": unsafe extern "C" fn(Component, *const Vr, usize, *const f64) -> Status,
            set_integer = "fmi2SetInteger": unsafe extern "C" fn(Component, *const Vr, usize, *const c_int) -> Status,
            set_boolean = "fmi2SetBoolean": unsafe extern "C" fn(Component, *const Vr, usize, *const c_int) -> Status,
            set_string = "fmi2SetString":
                unsafe extern "C" fn(Component, *const Vr, usize, *const *const c_char) -> Status,
            get_fmu_state = "fmi2GetFMUstate": unsafe extern "C" fn(Component, *mut *mut c_void) -> Status,
            set_fmu_state = "fmi2SetFMUstate": unsafe extern "C" fn(Component, *mut c_void) -> Status,
            free_fmu_state = "fmi2FreeFMUstate": unsafe extern "C" fn(Component, *mut *mut c_void) -> Status,
            serialized_fmu_state_size = "fmi2SerializedFMUstateSize":
                unsafe extern "C" fn(Component, *mut c_void, *mut usize) -> Status,
            serialize_fmu_state = "fmi2SerializeFMUstate":
                unsafe extern "C" fn(Component, *mut c_void, *mut c_char, usize) -> Status,
            deserialize_fmu_state = "fmi2DeSerializeFMUstate":
                unsafe extern "C" fn(Component, *const c_char, usize, *mut *mut c_void) -> Status,
            get_directional_derivative = "fmi2GetDirectionalDerivative":
                unsafe extern "C" fn(Component, *const Vr, usize, *const Vr, usize, *const f64, *mut f64) -> Status,
            set_real_input_derivatives = "fmi2SetRealInputDerivatives":
                unsafe extern "C" fn(Component, *const Vr, usize, *const c_int, *const f64) -> Status,
            get_real_output_derivatives = "fmi2GetRealOutputDerivatives":
                unsafe extern "C" fn(Component, *const Vr, usize, *const c_int, *mut f64) -> Status,
            do_step = "fmi2DoStep": unsafe extern "C" fn(Component, f64, f64, c_int) -> Status,
            cancel_step = "fmi2CancelStep": unsafe extern "C" fn(Component) -> Status,
            get_status = "fmi2GetStatus": unsafe extern "C" fn(Component, c_int, *mut c_int) -> Status,
            get_integer_status = "fmi2GetIntegerStatus": unsafe extern "C" fn(Component, c_int, *mut c_int) -> Status,
            get_string_status = "fmi2GetStringStatus":
                unsafe extern "C" fn(Component, c_int, *mut *const c_char) -> Status,
        }
        optional {
            get_real_status = "fmi2GetRealStatus": unsafe extern "C" fn(Component, c_int, *mut f64) -> Status,
            get_boolean_status = "fmi2GetBooleanStatus": unsafe extern "C" fn(Component, c_int, *mut c_int) -> Status,
        }
    }
}

table! {
    /// The FMI 3.0 functions a Co-Simulation master calls (FMI 3.0.1 §2.3, §4.2); those of
    /// event mode, clocks and Scheduled Execution are optional (only FMUs that declare them are
    /// called with them). `fmi3Boolean` is C `bool`; arrays of it are
    /// passed as bytes.
    Fmi3 {
        required {
            get_version = "fmi3GetVersion": unsafe extern "C" fn() -> *const c_char,
            set_debug_logging = "fmi3SetDebugLogging":
                unsafe extern "C" fn(Component, bool, usize, *const *const c_char) -> Status,
            instantiate = "fmi3InstantiateCoSimulation": unsafe extern "C" fn(
                *const c_char,
                *const c_char,
                *const c_char,
                bool,
                bool,
                bool,
                bool,
                *const Vr,
                usize,
                *mut c_void,
                Option<LogMessage3>,
                Option<IntermediateUpdate3>,
            ) -> Component,
            free_instance = "fmi3FreeInstance": unsafe extern "C" fn(Component),
            enter_initialization_mode = "fmi3EnterInitializationMode":
                unsafe extern "C" fn(Component, bool, f64, f64, bool, f64) -> Status,
            exit_initialization_mode = "fmi3ExitInitializationMode": unsafe extern "C" fn(Component) -> Status,
            terminate = "fmi3Terminate": unsafe extern "C" fn(Component) -> Status,
            reset = "fmi3Reset": unsafe extern "C" fn(Component) -> Status,
            get_boolean = "fmi3GetBoolean": unsafe extern "C" fn(Component, *const Vr, usize, *mut u8, usize) -> Status,
            set_boolean = "fmi3SetBoolean":
                unsafe extern "C" fn(Component, *const Vr, usize, *const u8, usize) -> Status,
            get_string = "fmi3GetString":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut *const c_char, usize) -> Status,
            set_string = "fmi3SetString":
                unsafe extern "C" fn(Component, *const Vr, usize, *const *const c_char, usize) -> Status,
            get_fmu_state = "fmi3GetFMUState": unsafe extern "C" fn(Component, *mut *mut c_void) -> Status,
            set_fmu_state = "fmi3SetFMUState": unsafe extern "C" fn(Component, *mut c_void) -> Status,
            free_fmu_state = "fmi3FreeFMUState": unsafe extern "C" fn(Component, *mut *mut c_void) -> Status,
            serialized_fmu_state_size = "fmi3SerializedFMUStateSize":
                unsafe extern "C" fn(Component, *mut c_void, *mut usize) -> Status,
            serialize_fmu_state = "fmi3SerializeFMUState":
                unsafe extern "C" fn(Component, *mut c_void, *mut c_char, usize) -> Status,
            deserialize_fmu_state = "fmi3DeserializeFMUState":
                unsafe extern "C" fn(Component, *const c_char, usize, *mut *mut c_void) -> Status,
            get_output_derivatives = "fmi3GetOutputDerivatives":
                unsafe extern "C" fn(Component, *const Vr, usize, *const c_int, *mut f64, usize) -> Status,
            do_step = "fmi3DoStep": unsafe extern "C" fn(
                Component,
                f64,
                f64,
                bool,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut f64,
            ) -> Status,
            get_float64 = "fmi3GetFloat64": unsafe extern "C" fn(Component, *const Vr, usize, *mut f64, usize) -> Status,
            set_float64 = "fmi3SetFloat64":
                unsafe extern "C" fn(Component, *const Vr, usize, *const f64, usize) -> Status,
            get_float32 = "fmi3GetFloat32": unsafe extern "C" fn(Component, *const Vr, usize, *mut f32, usize) -> Status,
            set_float32 = "fmi3SetFloat32":
                unsafe extern "C" fn(Component, *const Vr, usize, *const f32, usize) -> Status,
            get_int8 = "fmi3GetInt8": unsafe extern "C" fn(Component, *const Vr, usize, *mut i8, usize) -> Status,
            set_int8 = "fmi3SetInt8": unsafe extern "C" fn(Component, *const Vr, usize, *const i8, usize) -> Status,
            get_uint8 = "fmi3GetUInt8": unsafe extern "C" fn(Component, *const Vr, usize, *mut u8, usize) -> Status,
            set_uint8 = "fmi3SetUInt8": unsafe extern "C" fn(Component, *const Vr, usize, *const u8, usize) -> Status,
            get_int16 = "fmi3GetInt16": unsafe extern "C" fn(Component, *const Vr, usize, *mut i16, usize) -> Status,
            set_int16 = "fmi3SetInt16": unsafe extern "C" fn(Component, *const Vr, usize, *const i16, usize) -> Status,
            get_uint16 = "fmi3GetUInt16": unsafe extern "C" fn(Component, *const Vr, usize, *mut u16, usize) -> Status,
            set_uint16 = "fmi3SetUInt16":
                unsafe extern "C" fn(Component, *const Vr, usize, *const u16, usize) -> Status,
            get_int32 = "fmi3GetInt32": unsafe extern "C" fn(Component, *const Vr, usize, *mut i32, usize) -> Status,
            set_int32 = "fmi3SetInt32": unsafe extern "C" fn(Component, *const Vr, usize, *const i32, usize) -> Status,
            get_uint32 = "fmi3GetUInt32": unsafe extern "C" fn(Component, *const Vr, usize, *mut u32, usize) -> Status,
            set_uint32 = "fmi3SetUInt32":
                unsafe extern "C" fn(Component, *const Vr, usize, *const u32, usize) -> Status,
            get_int64 = "fmi3GetInt64": unsafe extern "C" fn(Component, *const Vr, usize, *mut i64, usize) -> Status,
            set_int64 = "fmi3SetInt64": unsafe extern "C" fn(Component, *const Vr, usize, *const i64, usize) -> Status,
            get_uint64 = "fmi3GetUInt64": unsafe extern "C" fn(Component, *const Vr, usize, *mut u64, usize) -> Status,
            set_uint64 = "fmi3SetUInt64":
                unsafe extern "C" fn(Component, *const Vr, usize, *const u64, usize) -> Status,
        }
        // Required by the standard, optional here: an FMU without Binary variables runs
        // without them (a Binary call on a binary that lacks them is an error naming it).
        optional {
            get_binary = "fmi3GetBinary":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut usize, *mut *const u8, usize) -> Status,
            set_binary = "fmi3SetBinary":
                unsafe extern "C" fn(Component, *const Vr, usize, *const usize, *const *const u8, usize) -> Status,
            // Configuration mode: the structural parameters are set in it (an FMU without
            // structural parameters need not export it).
            enter_configuration_mode = "fmi3EnterConfigurationMode": unsafe extern "C" fn(Component) -> Status,
            // Only FMUs that declare providesDirectionalDerivatives are asked (`cosim check`).
            get_directional_derivative = "fmi3GetDirectionalDerivative": unsafe extern "C" fn(
                Component,
                *const Vr,
                usize,
                *const Vr,
                usize,
                *const f64,
                usize,
                *mut f64,
                usize,
            ) -> Status,
            exit_configuration_mode = "fmi3ExitConfigurationMode": unsafe extern "C" fn(Component) -> Status,
            // Event mode, clocks and Scheduled Execution (issue 43): only FMUs that declare
            // them are called with them; a binary without them runs as before.
            enter_event_mode = "fmi3EnterEventMode": unsafe extern "C" fn(Component) -> Status,
            update_discrete_states = "fmi3UpdateDiscreteStates": unsafe extern "C" fn(
                Component,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut f64,
            ) -> Status,
            enter_step_mode = "fmi3EnterStepMode": unsafe extern "C" fn(Component) -> Status,
            get_clock = "fmi3GetClock": unsafe extern "C" fn(Component, *const Vr, usize, *mut u8) -> Status,
            set_clock = "fmi3SetClock": unsafe extern "C" fn(Component, *const Vr, usize, *const u8) -> Status,
            get_interval_decimal = "fmi3GetIntervalDecimal":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut f64, *mut c_int) -> Status,
            get_shift_decimal = "fmi3GetShiftDecimal": unsafe extern "C" fn(Component, *const Vr, usize, *mut f64) -> Status,
            get_interval_fraction = "fmi3GetIntervalFraction":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut u64, *mut u64, *mut c_int) -> Status,
            get_shift_fraction = "fmi3GetShiftFraction":
                unsafe extern "C" fn(Component, *const Vr, usize, *mut u64, *mut u64) -> Status,
            instantiate_scheduled_execution = "fmi3InstantiateScheduledExecution": unsafe extern "C" fn(
                *const c_char,
                *const c_char,
                *const c_char,
                bool,
                bool,
                *mut c_void,
                Option<LogMessage3>,
                Option<ClockUpdate3>,
                Option<LockPreemption3>,
                Option<LockPreemption3>,
            ) -> Component,
            activate_model_partition = "fmi3ActivateModelPartition": unsafe extern "C" fn(Component, Vr, f64) -> Status,
        }
    }
}

table! {
    /// The FMI 2.0 Model Exchange functions (FMI 2.0.4 §3.2): the ME binary also exports the common
    /// functions of [`Fmi2`] (its Co-Simulation functions are absent in an ME-only binary).
    /// Booleans are `int` (`fmi2Boolean`); `fmi2NewDiscreteStates` fills an `fmi2EventInfo`.
    Fmi2Me {
        required {
            enter_event_mode = "fmi2EnterEventMode": unsafe extern "C" fn(Component) -> Status,
            new_discrete_states = "fmi2NewDiscreteStates": unsafe extern "C" fn(Component, *mut EventInfo2) -> Status,
            enter_continuous_time_mode = "fmi2EnterContinuousTimeMode": unsafe extern "C" fn(Component) -> Status,
            completed_integrator_step = "fmi2CompletedIntegratorStep":
                unsafe extern "C" fn(Component, c_int, *mut c_int, *mut c_int) -> Status,
            set_time = "fmi2SetTime": unsafe extern "C" fn(Component, f64) -> Status,
            set_continuous_states = "fmi2SetContinuousStates": unsafe extern "C" fn(Component, *const f64, usize) -> Status,
            get_derivatives = "fmi2GetDerivatives": unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_event_indicators = "fmi2GetEventIndicators": unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_continuous_states = "fmi2GetContinuousStates": unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_nominals_of_continuous_states = "fmi2GetNominalsOfContinuousStates":
                unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
        }
        optional {}
    }
}

/// `fmi2EventInfo` (FMI 2.0.4 §3.2.2), filled by `fmi2NewDiscreteStates`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventInfo2 {
    /// `newDiscreteStatesNeeded`.
    pub new_discrete_states_needed: c_int,
    /// `terminateSimulation`.
    pub terminate_simulation: c_int,
    /// `nominalsOfContinuousStatesChanged`.
    pub nominals_of_continuous_states_changed: c_int,
    /// `valuesOfContinuousStatesChanged`.
    pub values_of_continuous_states_changed: c_int,
    /// `nextEventTimeDefined`.
    pub next_event_time_defined: c_int,
    /// `nextEventTime`.
    pub next_event_time: f64,
}

table! {
    /// The FMI 3.0 Model Exchange functions (FMI 3.0.1 §3.2), beside the common functions of
    /// [`Fmi3`] (whose Co-Simulation functions an ME-only binary lacks).
    Fmi3Me {
        required {
            instantiate_model_exchange = "fmi3InstantiateModelExchange": unsafe extern "C" fn(
                *const c_char,
                *const c_char,
                *const c_char,
                bool,
                bool,
                *mut c_void,
                Option<LogMessage3>,
            ) -> Component,
            enter_event_mode = "fmi3EnterEventMode": unsafe extern "C" fn(Component) -> Status,
            update_discrete_states = "fmi3UpdateDiscreteStates": unsafe extern "C" fn(
                Component,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut bool,
                *mut f64,
            ) -> Status,
            enter_continuous_time_mode = "fmi3EnterContinuousTimeMode": unsafe extern "C" fn(Component) -> Status,
            completed_integrator_step = "fmi3CompletedIntegratorStep":
                unsafe extern "C" fn(Component, bool, *mut bool, *mut bool) -> Status,
            set_time = "fmi3SetTime": unsafe extern "C" fn(Component, f64) -> Status,
            set_continuous_states = "fmi3SetContinuousStates": unsafe extern "C" fn(Component, *const f64, usize) -> Status,
            get_continuous_state_derivatives = "fmi3GetContinuousStateDerivatives":
                unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_event_indicators = "fmi3GetEventIndicators": unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_continuous_states = "fmi3GetContinuousStates": unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_nominals_of_continuous_states = "fmi3GetNominalsOfContinuousStates":
                unsafe extern "C" fn(Component, *mut f64, usize) -> Status,
            get_number_of_event_indicators = "fmi3GetNumberOfEventIndicators":
                unsafe extern "C" fn(Component, *mut usize) -> Status,
            get_number_of_continuous_states = "fmi3GetNumberOfContinuousStates":
                unsafe extern "C" fn(Component, *mut usize) -> Status,
        }
        optional {}
    }
}
