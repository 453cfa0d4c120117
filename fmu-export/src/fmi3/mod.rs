//! The FMI 3.0 Co-Simulation layer over the same models: every [`crate::CoSimModel`] of a
//! [`crate::define_fmus`] list is also an FMI 3.0 CS FMU, with no model code written twice.
//!
//! - [`description3`]: `modelDescription.xml` 3.0 from the same description (and so the same
//!   variable table) as the 2.0 one ([`model_description::to_xml3`]): `Real` → `Float64`,
//!   enumerations as 3.0 `<EnumerationType>`s, integer outputs (iteration and step counters) as
//!   `Int64`, integer parameters as `Int32`, the independent variable `time`;
//!   `instantiationToken` is the 2.0 GUID.
//! - [`ffi`] + [`crate::export_fmi3`]: every `fmi3*` function of the standard's headers
//!   (FMPy, like most importers, resolves all of them). The Co-Simulation ones map onto the
//!   same [`crate::Component`] as the 2.0 functions, so the 3.0 state machine (Instantiated →
//!   InitializationMode → StepMode → Terminated, FMU states, serialization) is the one
//!   [`crate::Instance`] enforces; what the models do not have (event mode, clocks, Model
//!   Exchange, scheduled execution, configuration mode, arrays, the other numeric types) is
//!   refused with `fmi3Error` and a message naming it.
//!
//! FMI 3.0 (final) has no `fmi3SetInputDerivatives` (nor `canInterpolateInputs`): a 3.0
//! importer cannot pass input derivatives, so our models hold their inputs over a step under
//! 3.0 — as under an FMI 2.0 importer that does not call `fmi2SetRealInputDerivatives`.
#![allow(non_camel_case_types)]

pub mod ffi;

use crate::description::DescribeError;
use crate::factory::Fmu;
pub use crate::types3::*;
use model_description::{Causality, ScalarVariable, Type3, VariableKind};

/// What an FMI 3.0 instance needs beyond the shared [`crate::Component`].
pub struct Extra {
    /// Name and FMI 3.0 type of every variable; value reference = index.
    pub vars: Vec<(String, Type3)>,
    /// Value reference of `time`.
    pub time_vr: u32,
    /// `earlyReturnAllowed` of `fmi3InstantiateCoSimulation`.
    pub early_return_allowed: bool,
    /// Whether each value reference is a Float64 variable of the model (not `time`): the one
    /// lookup per reference of the hot `fmi3GetFloat64`/`fmi3SetFloat64` calls.
    pub float64: Vec<bool>,
}

impl Extra {
    /// Whether `vr` names Float64 variables of the model only (not `time`), one value each: the
    /// common call, which goes to the component as directly as the 2.0 functions do.
    #[inline]
    pub fn plain_float64(&self, vr: &[u32], n_values: usize) -> bool {
        n_values == vr.len() && vr.iter().all(|r| self.float64.get(*r as usize).copied().unwrap_or(false))
    }

    /// The table of `fmu`'s variables.
    pub fn of(fmu: &dyn Fmu, early_return_allowed: bool) -> Result<Self, DescribeError> {
        let d = fmu.description()?;
        let vars: Vec<(String, Type3)> =
            d.model.model_variables.iter().map(|v| (v.name.clone(), Type3::of(v, is_counter))).collect();
        let float64 = vars.iter().map(|(_, t)| *t == Type3::Float64).collect();
        Ok(Self { vars, time_vr: model_description::time_value_reference(&d.model), early_return_allowed, float64 })
    }
}

/// An `Integer` that counts (an output or local: iterations, steps, events) is `Int64` in FMI
/// 3.0; an integer parameter (an iteration cap, a number of substeps) stays `Int32`.
pub fn is_counter(v: &ScalarVariable) -> bool {
    matches!(v.kind, VariableKind::Integer { .. }) && matches!(v.causality, Causality::Output | Causality::Local)
}

/// `modelDescription.xml` (FMI 3.0) of `fmu`.
pub fn description3(fmu: &dyn Fmu) -> Result<String, DescribeError> {
    Ok(model_description::to_xml3(&fmu.description()?.model, is_counter))
}

/// Exports the FMI 3.0 API (`fmi3*` symbols) of a cdylib serving the FMUs of a list defined
/// by [`crate::define_fmus`], dispatching `fmi3InstantiateCoSimulation` on the instantiation
/// token (the 2.0 GUID). Invoke it beside [`crate::export_fmi2`]: the same binary is the
/// binary of the 2.0 and of the 3.0 FMU.
#[macro_export]
#[rustfmt::skip] // one line per C function, as the FMI headers list them
macro_rules! export_fmi3 {
    ($fmus:expr $(,)?) => {
        /// The exported `fmi3*` functions (FMI 3.0); see `fmu_export::fmi3::ffi`.
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments, missing_docs)]
        pub mod fmi3_exports {
            use $crate::fmi3::*;
            use $crate::fmi3::ffi as f;
            use $crate::me_calls as me;
            use $crate::Status;
            use std::ffi::{c_char, c_void};

            fn fmus() -> &'static [&'static dyn $crate::Fmu] { $fmus }

            #[unsafe(no_mangle)] pub extern "C" fn fmi3GetVersion() -> *const c_char { c"3.0".as_ptr() }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetDebugLogging(c: fmi3Instance, on: bool, n: usize, cats: *const fmi3String) -> Status {
                unsafe { $crate::common::set_debug_logging(c, i32::from(on), n, cats) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3InstantiateModelExchange(name: fmi3String, token: fmi3String, res: fmi3String,
                _visible: bool, logging_on: bool, env: fmi3InstanceEnvironment, log: Option<LogMessageCallback>) -> fmi3Instance {
                unsafe { f::instantiate_model_exchange(fmus(), name, token, res, logging_on, env, log) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3InstantiateCoSimulation(name: fmi3String, token: fmi3String, res: fmi3String,
                visible: bool, logging_on: bool, event_mode_used: bool, early_return_allowed: bool, _required: *const fmi3ValueReference,
                _n_required: usize, env: fmi3InstanceEnvironment, log: Option<LogMessageCallback>, _update: *const c_void) -> fmi3Instance {
                unsafe { f::instantiate_co_simulation(fmus(), name, token, res, visible, logging_on, event_mode_used, early_return_allowed, env, log) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(name: fmi3String, _token: fmi3String, _res: fmi3String,
                _visible: bool, _logging_on: bool, env: fmi3InstanceEnvironment, log: Option<LogMessageCallback>, _clock: *const c_void,
                _lock: *const c_void, _unlock: *const c_void) -> fmi3Instance {
                unsafe { f::refuse_instantiate(name, env, log, "fmi3InstantiateScheduledExecution", "this FMU supports Co-Simulation only, not Scheduled Execution") }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3FreeInstance(c: fmi3Instance) { unsafe { $crate::common::free_instance(c) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EnterInitializationMode(c: fmi3Instance, tol_defined: bool, tol: f64, start: f64, stop_defined: bool, stop: f64) -> Status {
                unsafe { f::enter_initialization_mode(c, tol_defined, tol, start, stop_defined, stop) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3ExitInitializationMode(c: fmi3Instance) -> Status { unsafe { $crate::common::exit_initialization_mode(c) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EnterEventMode(c: fmi3Instance) -> Status { unsafe { me::enter_event_mode(c, "fmi3EnterEventMode") } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3Terminate(c: fmi3Instance) -> Status { unsafe { $crate::common::terminate(c) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3Reset(c: fmi3Instance) -> Status { unsafe { $crate::common::reset(c) } }

            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetFloat64(c: fmi3Instance, vr: *const u32, n: usize, v: *mut f64, nv: usize) -> Status { unsafe { f::get_float64(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetInt32(c: fmi3Instance, vr: *const u32, n: usize, v: *mut i32, nv: usize) -> Status { unsafe { f::get_int32(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetInt64(c: fmi3Instance, vr: *const u32, n: usize, v: *mut i64, nv: usize) -> Status { unsafe { f::get_int64(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetBoolean(c: fmi3Instance, vr: *const u32, n: usize, v: *mut bool, nv: usize) -> Status { unsafe { f::get_boolean(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetString(c: fmi3Instance, vr: *const u32, n: usize, v: *mut fmi3String, nv: usize) -> Status { unsafe { f::get_string(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetFloat64(c: fmi3Instance, vr: *const u32, n: usize, v: *const f64, nv: usize) -> Status { unsafe { f::set_float64(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetInt32(c: fmi3Instance, vr: *const u32, n: usize, v: *const i32, nv: usize) -> Status { unsafe { f::set_int32(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetInt64(c: fmi3Instance, vr: *const u32, n: usize, v: *const i64, nv: usize) -> Status { unsafe { f::set_int64(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetBoolean(c: fmi3Instance, vr: *const u32, n: usize, v: *const fmi3BooleanIn, nv: usize) -> Status { unsafe { f::set_boolean(c, vr, n, v, nv) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetString(c: fmi3Instance, vr: *const u32, n: usize, v: *const fmi3String, nv: usize) -> Status { unsafe { f::set_string(c, vr, n, v, nv) } }

            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetFloat32(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut f32, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetFloat32", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetInt8(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut i8, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetInt8", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetUInt8(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut u8, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetUInt8", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetInt16(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut i16, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetInt16", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetUInt16(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut u16, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetUInt16", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetUInt32(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut u32, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetUInt32", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetUInt64(c: fmi3Instance, vr: *const u32, n: usize, _v: *mut u64, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetUInt64", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetBinary(c: fmi3Instance, vr: *const u32, n: usize, _sizes: *mut usize, _v: *mut fmi3Binary, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3GetBinary", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetFloat32(c: fmi3Instance, vr: *const u32, n: usize, _v: *const f32, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetFloat32", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetInt8(c: fmi3Instance, vr: *const u32, n: usize, _v: *const i8, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetInt8", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetUInt8(c: fmi3Instance, vr: *const u32, n: usize, _v: *const u8, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetUInt8", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetInt16(c: fmi3Instance, vr: *const u32, n: usize, _v: *const i16, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetInt16", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetUInt16(c: fmi3Instance, vr: *const u32, n: usize, _v: *const u16, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetUInt16", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetUInt32(c: fmi3Instance, vr: *const u32, n: usize, _v: *const u32, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetUInt32", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetUInt64(c: fmi3Instance, vr: *const u32, n: usize, _v: *const u64, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetUInt64", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetBinary(c: fmi3Instance, vr: *const u32, n: usize, _sizes: *const usize, _v: *const fmi3Binary, _nv: usize) -> Status { unsafe { f::no_such_type(c, "fmi3SetBinary", vr, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetClock(c: fmi3Instance, _vr: *const u32, _n: usize, _v: *mut fmi3Clock) -> Status { unsafe { f::unsupported(c, "fmi3GetClock", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetClock(c: fmi3Instance, _vr: *const u32, _n: usize, _v: *const u8) -> Status { unsafe { f::unsupported(c, "fmi3SetClock", f::NO_CLOCKS) } }

            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetNumberOfVariableDependencies(c: fmi3Instance, _vr: u32, _n: *mut usize) -> Status {
                unsafe { f::unsupported(c, "fmi3GetNumberOfVariableDependencies", f::NO_DEPENDENCIES) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetVariableDependencies(c: fmi3Instance, _dependent: u32, _ei: *mut usize, _ind: *mut u32, _eii: *mut usize, _kinds: *mut i32, _n: usize) -> Status {
                unsafe { f::unsupported(c, "fmi3GetVariableDependencies", f::NO_DEPENDENCIES) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetFMUState(c: fmi3Instance, s: *mut fmi3FMUState) -> Status { unsafe { $crate::common::get_fmu_state(c, s) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetFMUState(c: fmi3Instance, s: fmi3FMUState) -> Status { unsafe { $crate::common::set_fmu_state(c, s) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3FreeFMUState(c: fmi3Instance, s: *mut fmi3FMUState) -> Status { unsafe { $crate::common::free_fmu_state(c, s) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SerializedFMUStateSize(c: fmi3Instance, s: fmi3FMUState, size: *mut usize) -> Status { unsafe { $crate::common::serialized_fmu_state_size(c, s, size) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SerializeFMUState(c: fmi3Instance, s: fmi3FMUState, bytes: *mut fmi3Byte, size: usize) -> Status {
                unsafe { $crate::common::serialize_fmu_state(c, s, bytes.cast(), size) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3DeserializeFMUState(c: fmi3Instance, bytes: *const fmi3Byte, size: usize, s: *mut fmi3FMUState) -> Status {
                unsafe { $crate::common::deserialize_fmu_state(c, bytes.cast(), size, s) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetDirectionalDerivative(c: fmi3Instance, _u: *const u32, _nu: usize, _k: *const u32, _nk: usize, _seed: *const f64, _ns: usize, _sens: *mut f64, _nsens: usize) -> Status {
                unsafe { f::unsupported(c, "fmi3GetDirectionalDerivative", "not provided (providesDirectionalDerivatives=\"false\")") }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetAdjointDerivative(c: fmi3Instance, _u: *const u32, _nu: usize, _k: *const u32, _nk: usize, _seed: *const f64, _ns: usize, _sens: *mut f64, _nsens: usize) -> Status {
                unsafe { f::unsupported(c, "fmi3GetAdjointDerivative", "not provided (providesAdjointDerivatives=\"false\")") }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EnterConfigurationMode(c: fmi3Instance) -> Status { unsafe { f::unsupported(c, "fmi3EnterConfigurationMode", f::NO_STRUCTURAL) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3ExitConfigurationMode(c: fmi3Instance) -> Status { unsafe { f::unsupported(c, "fmi3ExitConfigurationMode", f::NO_STRUCTURAL) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetIntervalDecimal(c: fmi3Instance, _vr: *const u32, _n: usize, _i: *mut f64, _q: *mut i32) -> Status { unsafe { f::unsupported(c, "fmi3GetIntervalDecimal", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetIntervalFraction(c: fmi3Instance, _vr: *const u32, _n: usize, _cn: *mut u64, _r: *mut u64, _q: *mut i32) -> Status { unsafe { f::unsupported(c, "fmi3GetIntervalFraction", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetShiftDecimal(c: fmi3Instance, _vr: *const u32, _n: usize, _s: *mut f64) -> Status { unsafe { f::unsupported(c, "fmi3GetShiftDecimal", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetShiftFraction(c: fmi3Instance, _vr: *const u32, _n: usize, _cn: *mut u64, _r: *mut u64) -> Status { unsafe { f::unsupported(c, "fmi3GetShiftFraction", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetIntervalDecimal(c: fmi3Instance, _vr: *const u32, _n: usize, _i: *const f64) -> Status { unsafe { f::unsupported(c, "fmi3SetIntervalDecimal", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetIntervalFraction(c: fmi3Instance, _vr: *const u32, _n: usize, _cn: *const u64, _r: *const u64) -> Status { unsafe { f::unsupported(c, "fmi3SetIntervalFraction", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetShiftDecimal(c: fmi3Instance, _vr: *const u32, _n: usize, _s: *const f64) -> Status { unsafe { f::unsupported(c, "fmi3SetShiftDecimal", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetShiftFraction(c: fmi3Instance, _vr: *const u32, _n: usize, _cn: *const u64, _r: *const u64) -> Status { unsafe { f::unsupported(c, "fmi3SetShiftFraction", f::NO_CLOCKS) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EvaluateDiscreteStates(c: fmi3Instance) -> Status { unsafe { f::unsupported(c, "fmi3EvaluateDiscreteStates", f::NO_EVENT_MODE) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3UpdateDiscreteStates(c: fmi3Instance, need_update: *mut bool, terminate: *mut bool, nominals: *mut bool, values: *mut bool, next_defined: *mut bool, next: *mut f64) -> Status {
                unsafe { f::update_discrete_states(c, need_update, terminate, nominals, values, next_defined, next) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(c: fmi3Instance) -> Status { unsafe { me::enter_continuous_time_mode(c, "fmi3EnterContinuousTimeMode") } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3CompletedIntegratorStep(c: fmi3Instance, _nsp: bool, e: *mut bool, t: *mut bool) -> Status { unsafe { me::completed_integrator_step(c, "fmi3CompletedIntegratorStep", e, t) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetTime(c: fmi3Instance, t: f64) -> Status { unsafe { me::set_time(c, "fmi3SetTime", t) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3SetContinuousStates(c: fmi3Instance, x: *const f64, n: usize) -> Status { unsafe { me::set_continuous_states(c, "fmi3SetContinuousStates", x, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(c: fmi3Instance, x: *mut f64, n: usize) -> Status { unsafe { me::get_vector(c, "fmi3GetContinuousStateDerivatives", me::Vector::Derivatives, x, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetEventIndicators(c: fmi3Instance, x: *mut f64, n: usize) -> Status { unsafe { me::get_vector(c, "fmi3GetEventIndicators", me::Vector::EventIndicators, x, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetContinuousStates(c: fmi3Instance, x: *mut f64, n: usize) -> Status { unsafe { me::get_vector(c, "fmi3GetContinuousStates", me::Vector::States, x, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(c: fmi3Instance, x: *mut f64, n: usize) -> Status { unsafe { me::get_vector(c, "fmi3GetNominalsOfContinuousStates", me::Vector::Nominals, x, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(c: fmi3Instance, n: *mut usize) -> Status { unsafe { f::number_of(c, "fmi3GetNumberOfEventIndicators", false, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(c: fmi3Instance, n: *mut usize) -> Status { unsafe { f::number_of(c, "fmi3GetNumberOfContinuousStates", true, n) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3EnterStepMode(c: fmi3Instance) -> Status { unsafe { f::unsupported(c, "fmi3EnterStepMode", f::NO_EVENT_MODE) } }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3GetOutputDerivatives(c: fmi3Instance, vr: *const u32, n: usize, orders: *const i32, v: *mut f64, nv: usize) -> Status {
                unsafe { f::get_output_derivatives(c, vr, n, orders, v, nv) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3DoStep(c: fmi3Instance, t: f64, h: f64, no_set_prior: bool, event_handling_needed: *mut bool,
                terminate_simulation: *mut bool, early_return: *mut bool, last_successful_time: *mut f64) -> Status {
                unsafe { f::do_step(c, t, h, no_set_prior, event_handling_needed, terminate_simulation, early_return, last_successful_time) }
            }
            #[unsafe(no_mangle)] pub unsafe extern "C" fn fmi3ActivateModelPartition(c: fmi3Instance, _clock: u32, _t: f64) -> Status { unsafe { f::unsupported(c, "fmi3ActivateModelPartition", f::NO_CLOCKS) } }
        }
    };
}
