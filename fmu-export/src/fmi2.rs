//! The FMI 2.0 C ABI, beside the FMI 3.0 one ([`crate::fmi3`]) over the same instance handle
//! ([`crate::handle`]). Every `fmi2*` function of a library is a thin `#[no_mangle]` wrapper made
//! by [`crate::export_fmi2`] around one function here or in [`crate::common`] (the calls both
//! versions share), which checks pointers, converts arguments to slices, catches panics and
//! dispatches to the instance's [`crate::component::Component`].
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI 2.0 standard's, stated once here

use crate::factory::Fmu;
use crate::handle::{null_arg, register, slice, slice_mut, text, with};
use crate::logger::{Category, Logger};
use crate::types::*;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `fmi2GetTypesPlatform`.
pub fn types_platform() -> *const c_char {
    c"default".as_ptr()
}

/// `fmi2GetVersion`.
pub fn version() -> *const c_char {
    c"2.0".as_ptr()
}

/// `fmi2Instantiate`: finds the model by GUID among `fmus`.
#[allow(clippy::too_many_arguments)] // the arguments of fmi2Instantiate, plus the model list
pub unsafe fn instantiate(
    fmus: &'static [&'static dyn Fmu],
    instance_name: fmi2String,
    fmu_type: fmi2Type,
    guid: fmi2String,
    resource_location: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    logging_on: fmi2Boolean,
) -> fmi2Component {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `functions` is NULL or points to the importer's callback struct; we copy it.
        let callbacks = unsafe { functions.as_ref() }.copied();
        // SAFETY: strings are NULL or NUL-terminated (FMI 2.0).
        let name = unsafe { text(instance_name) };
        let mut log = Logger::new(callbacks, name.unwrap_or("?"), logging_on != FMI2_FALSE);
        let mut fail = |msg: String| {
            log.log(Status::Error, Category::Error, &format!("fmi2Instantiate: {msg}"));
            std::ptr::null_mut()
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return fail("instanceName is NULL or empty".into());
        };
        if fmu_type != FMI2_CO_SIMULATION && fmu_type != FMI2_MODEL_EXCHANGE {
            return fail(format!("fmuType = {fmu_type} is neither fmi2ModelExchange (0) nor fmi2CoSimulation (1)"));
        }
        // SAFETY: as above.
        let Some(guid) = (unsafe { text(guid) }) else { return fail("fmuGUID is NULL".into()) };
        let found = fmus.iter().find(|f| f.description().is_ok_and(|d| d.guid == guid));
        let Some(fmu) = found else {
            let known: Vec<String> = fmus
                .iter()
                .filter_map(|f| f.description().ok().map(|d| format!("{} {}", f.info().model_identifier, d.guid)))
                .collect();
            return fail(format!(
                "fmuGUID {guid} matches no model of this binary (it serves: {}); is modelDescription.xml from another build?",
                known.join(", ")
            ));
        };
        // SAFETY: as above.
        let resources = unsafe { text(resource_location) }.unwrap_or("");
        let log = Logger::new(callbacks, name, logging_on != FMI2_FALSE);
        let made = if fmu_type == FMI2_MODEL_EXCHANGE {
            fmu.instantiate_model_exchange(resources, log).map_err(|e| format!("fmuType = fmi2ModelExchange: {e}"))
        } else {
            fmu.instantiate(resources, log).map_err(|e| e.to_string())
        };
        match made {
            Ok(inner) => register(inner, ()),
            Err(e) => fail(e),
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// `fmi2SetupExperiment`.
pub unsafe fn setup_experiment(
    c: fmi2Component,
    tolerance_defined: fmi2Boolean,
    tolerance: f64,
    start: f64,
    stop_defined: fmi2Boolean,
    stop: f64,
) -> Status {
    // SAFETY: see `with`.
    unsafe {
        with(c, "fmi2SetupExperiment", |comp| {
            comp.setup_experiment(
                (tolerance_defined != FMI2_FALSE).then_some(tolerance),
                start,
                (stop_defined != FMI2_FALSE).then_some(stop),
            )
        })
    }
}

/// `fmi2EnterInitializationMode`.
pub unsafe fn enter_initialization_mode(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2EnterInitializationMode", |comp| comp.enter_initialization_mode()) }
}

macro_rules! getter {
    ($(#[$doc:meta])* $fname:ident, $cname:literal, $t:ty, $method:ident) => {
        $(#[$doc])*
        pub unsafe fn $fname(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, value: *mut $t) -> Status {
            // SAFETY: `c` per `with`; `vr` and `value` are arrays of n elements.
            unsafe {
                with(c, $cname, |comp| match (slice(vr, n), slice_mut(value, n)) {
                    (Some(vr), Some(out)) => comp.$method(vr, out),
                    (None, _) => null_arg!(comp, $cname, "vr"),
                    (_, None) => null_arg!(comp, $cname, "value"),
                })
            }
        }
    };
}

macro_rules! setter {
    ($(#[$doc:meta])* $fname:ident, $cname:literal, $t:ty, $method:ident) => {
        $(#[$doc])*
        pub unsafe fn $fname(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, value: *const $t) -> Status {
            // SAFETY: `c` per `with`; `vr` and `value` are arrays of n elements.
            unsafe {
                with(c, $cname, |comp| match (slice(vr, n), slice(value, n)) {
                    (Some(vr), Some(values)) => comp.$method(vr, values),
                    (None, _) => null_arg!(comp, $cname, "vr"),
                    (_, None) => null_arg!(comp, $cname, "value"),
                })
            }
        }
    };
}

getter!(/// `fmi2GetReal`.
    get_real, "fmi2GetReal", fmi2Real, get_real);
getter!(/// `fmi2GetInteger`.
    get_integer, "fmi2GetInteger", fmi2Integer, get_integer);
getter!(/// `fmi2GetBoolean`.
    get_boolean, "fmi2GetBoolean", fmi2Boolean, get_boolean);
getter!(/// `fmi2GetString`.
    get_string, "fmi2GetString", fmi2String, get_string);
setter!(/// `fmi2SetReal`.
    set_real, "fmi2SetReal", fmi2Real, set_real);
setter!(/// `fmi2SetInteger`.
    set_integer, "fmi2SetInteger", fmi2Integer, set_integer);
setter!(/// `fmi2SetBoolean`.
    set_boolean, "fmi2SetBoolean", fmi2Boolean, set_boolean);

/// `fmi2SetString`.
pub unsafe fn set_string(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    n: usize,
    value: *const fmi2String,
) -> Status {
    const F: &str = "fmi2SetString";
    // SAFETY: `c` per `with`; `vr` and `value` are arrays of n elements, strings NUL-terminated.
    unsafe {
        with(c, F, |comp| match (slice(vr, n), slice(value, n)) {
            (Some(vr), Some(values)) => {
                let v: Vec<Option<&str>> = values.iter().map(|p| text(*p)).collect();
                comp.set_string(vr, &v)
            }
            (None, _) => null_arg!(comp, F, "vr"),
            (_, None) => null_arg!(comp, F, "value"),
        })
    }
}

/// `fmi2GetDirectionalDerivative`: not provided.
pub unsafe fn get_directional_derivative(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2GetDirectionalDerivative", |comp| comp.directional_derivative()) }
}

/// `fmi2SetRealInputDerivatives`.
pub unsafe fn set_real_input_derivatives(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    n: usize,
    order: *const fmi2Integer,
    value: *const fmi2Real,
) -> Status {
    const F: &str = "fmi2SetRealInputDerivatives";
    // SAFETY: `c` per `with`; arrays of n elements.
    unsafe {
        with(c, F, |comp| match (slice(vr, n), slice(order, n), slice(value, n)) {
            (Some(vr), Some(order), Some(values)) => comp.set_real_input_derivatives(vr, order, values),
            _ => null_arg!(comp, F, "vr, order or value"),
        })
    }
}

/// `fmi2GetRealOutputDerivatives`.
pub unsafe fn get_real_output_derivatives(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    n: usize,
    order: *const fmi2Integer,
    value: *mut fmi2Real,
) -> Status {
    const F: &str = "fmi2GetRealOutputDerivatives";
    // SAFETY: `c` per `with`; arrays of n elements.
    unsafe {
        with(c, F, |comp| match (slice(vr, n), slice(order, n), slice_mut(value, n)) {
            (Some(vr), Some(order), Some(out)) => comp.get_real_output_derivatives(vr, order, out),
            _ => null_arg!(comp, F, "vr, order or value"),
        })
    }
}

/// `fmi2DoStep`.
pub unsafe fn do_step(c: fmi2Component, t: f64, h: f64, no_set_prior: fmi2Boolean) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2DoStep", |comp| comp.do_step(t, h, no_set_prior != FMI2_FALSE)) }
}

/// `fmi2CancelStep`: not supported (steps are synchronous).
pub unsafe fn cancel_step(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2CancelStep", |comp| comp.cancel_step()) }
}

macro_rules! status_fn {
    ($(#[$doc:meta])* $fname:ident, $cname:literal, $t:ty, |$comp:ident, $kind:ident| $call:expr, |$v:ident| $conv:expr) => {
        $(#[$doc])*
        pub unsafe fn $fname(c: fmi2Component, $kind: fmi2StatusKind, value: *mut $t) -> Status {
            // SAFETY: `c` per `with`; `value` writable.
            unsafe {
                with(c, $cname, |$comp| {
                    let Some(out) = value.as_mut() else { return null_arg!($comp, $cname, "value") };
                    match $call {
                        Ok($v) => {
                            *out = $conv;
                            Status::Ok
                        }
                        Err(s) => s,
                    }
                })
            }
        }
    };
}

status_fn!(/// `fmi2GetStatus`.
    get_status, "fmi2GetStatus", Status, |comp, kind| comp.get_status("fmi2GetStatus", kind), |v| v);
status_fn!(/// `fmi2GetRealStatus`.
    get_real_status, "fmi2GetRealStatus", fmi2Real, |comp, kind| comp.get_real_status(kind), |v| v);
status_fn!(/// `fmi2GetIntegerStatus`.
    get_integer_status, "fmi2GetIntegerStatus", fmi2Integer, |comp, kind| comp.get_integer_status(kind), |v| v);
status_fn!(/// `fmi2GetBooleanStatus`.
    get_boolean_status, "fmi2GetBooleanStatus", fmi2Boolean, |comp, kind| comp.get_boolean_status(kind), |v| fmi2Boolean::from(v));
status_fn!(/// `fmi2GetStringStatus`.
    get_string_status, "fmi2GetStringStatus", fmi2String, |comp, kind| comp.get_string_status(kind), |v| v);

/// `fmi2NewDiscreteStates`: fills `fmi2EventInfo`.
pub unsafe fn new_discrete_states(c: fmi2Component, info: *mut fmi2EventInfo) -> Status {
    const F: &str = "fmi2NewDiscreteStates";
    // SAFETY: `c` per `with`; `info` is NULL or writable.
    unsafe {
        crate::me_calls::new_discrete_states(c, F, |comp, e| {
            let Some(out) = info.as_mut() else { return null_arg!(comp, F, "eventInfo") };
            let b = |x: bool| fmi2Boolean::from(x);
            *out = fmi2EventInfo {
                new_discrete_states_needed: b(e.new_discrete_states_needed),
                terminate_simulation: b(e.terminate_simulation),
                nominals_of_continuous_states_changed: b(e.nominals_changed),
                values_of_continuous_states_changed: b(e.values_changed),
                next_event_time_defined: b(e.next_event_time.is_some()),
                next_event_time: e.next_event_time.unwrap_or(0.0),
            };
            Status::Ok
        })
    }
}

/// Exports the FMI 2.0 API (`fmi2*` symbols: common, Co-Simulation and Model Exchange functions)
/// of a cdylib serving the FMUs of a list defined by [`crate::define_fmus`], dispatching
/// `fmi2Instantiate` on the GUID. The Model Exchange functions are refused by instances of
/// models without continuous states (and by every Co-Simulation instance). Invoke it
/// once, in the crate root of a cdylib that does nothing else (the FMU binaries under `fmus/`).
///
/// ```ignore
/// fmu_export::export_fmi2!(fmu_oscillator::FMUS);
/// ```
#[macro_export]
#[rustfmt::skip] // one line per C function, as the FMI headers list them
macro_rules! export_fmi2 {
    ($fmus:expr $(,)?) => {
        /// The FMUs the exported functions serve.
        fn fmi2_exported_fmus() -> &'static [&'static dyn $crate::Fmu] {
            $fmus
        }

        /// Run by the dynamic loader when the library is unloaded (`dlclose`, process exit):
        /// frees what the library allocated for the process, which `dlclose` would otherwise
        /// unmap with the statics and leak on every load/unload cycle.
        #[used]
        #[unsafe(link_section = ".fini_array")]
        static FMI2_UNLOAD: extern "C" fn() = {
            extern "C" fn fmi2_unload() {
                // Never unwinds into the loader.
                let _ = std::panic::catch_unwind(|| {
                    // SAFETY: the library is being unloaded; an importer that unloads it has
                    // freed its instances (FMI 2.0 §2.1.5: fmi2FreeInstance before unloading).
                    unsafe { $crate::handle::release(fmi2_exported_fmus()) }
                });
            }
            fmi2_unload
        };

        /// The exported `fmi2*` functions (FMI 2.0.4 §2.1, §4.2); see `fmu_export::fmi2`.
        #[allow(non_snake_case, clippy::missing_safety_doc, missing_docs)]
        pub mod fmi2_exports {
            use $crate::types::*;
            use $crate::fmi2;
            use $crate::common;
            use $crate::me_calls as me;

            #[unsafe(no_mangle)]
            pub extern "C" fn fmi2GetTypesPlatform() -> *const fmi2Char { fmi2::types_platform() }
            #[unsafe(no_mangle)]
            pub extern "C" fn fmi2GetVersion() -> *const fmi2Char { fmi2::version() }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetDebugLogging(c: fmi2Component, on: fmi2Boolean, n: usize, cats: *const fmi2String) -> Status {
                unsafe { common::set_debug_logging(c, on, n, cats) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Instantiate(name: fmi2String, ty: fmi2Type, guid: fmi2String, res: fmi2String,
                functions: *const fmi2CallbackFunctions, visible: fmi2Boolean, logging_on: fmi2Boolean) -> fmi2Component {
                unsafe { fmi2::instantiate(super::fmi2_exported_fmus(), name, ty, guid, res, functions, visible, logging_on) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) { unsafe { common::free_instance(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetupExperiment(c: fmi2Component, tol_defined: fmi2Boolean, tol: fmi2Real,
                start: fmi2Real, stop_defined: fmi2Boolean, stop: fmi2Real) -> Status {
                unsafe { fmi2::setup_experiment(c, tol_defined, tol, start, stop_defined, stop) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> Status { unsafe { fmi2::enter_initialization_mode(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> Status { unsafe { common::exit_initialization_mode(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> Status { unsafe { common::terminate(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> Status { unsafe { common::reset(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetReal(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Real) -> Status {
                unsafe { fmi2::get_real(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetInteger(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Integer) -> Status {
                unsafe { fmi2::get_integer(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetBoolean(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Boolean) -> Status {
                unsafe { fmi2::get_boolean(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetString(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2String) -> Status {
                unsafe { fmi2::get_string(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetReal(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Real) -> Status {
                unsafe { fmi2::set_real(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetInteger(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Integer) -> Status {
                unsafe { fmi2::set_integer(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetBoolean(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Boolean) -> Status {
                unsafe { fmi2::set_boolean(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetString(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2String) -> Status {
                unsafe { fmi2::set_string(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetFMUstate(c: fmi2Component, s: *mut fmi2FMUstate) -> Status { unsafe { common::get_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, s: fmi2FMUstate) -> Status { unsafe { common::set_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2FreeFMUstate(c: fmi2Component, s: *mut fmi2FMUstate) -> Status { unsafe { common::free_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SerializedFMUstateSize(c: fmi2Component, s: fmi2FMUstate, size: *mut usize) -> Status {
                unsafe { common::serialized_fmu_state_size(c, s, size) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SerializeFMUstate(c: fmi2Component, s: fmi2FMUstate, bytes: *mut fmi2Byte, size: usize) -> Status {
                unsafe { common::serialize_fmu_state(c, s, bytes, size) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2DeSerializeFMUstate(c: fmi2Component, bytes: *const fmi2Byte, size: usize, s: *mut fmi2FMUstate) -> Status {
                unsafe { common::deserialize_fmu_state(c, bytes, size, s) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetDirectionalDerivative(c: fmi2Component, _unknowns: *const fmi2ValueReference, _n_unknown: usize,
                _knowns: *const fmi2ValueReference, _n_known: usize, _dv_known: *const fmi2Real, _dv_unknown: *mut fmi2Real) -> Status {
                unsafe { fmi2::get_directional_derivative(c) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetRealInputDerivatives(c: fmi2Component, vr: *const fmi2ValueReference, n: usize,
                order: *const fmi2Integer, v: *const fmi2Real) -> Status {
                unsafe { fmi2::set_real_input_derivatives(c, vr, n, order, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(c: fmi2Component, vr: *const fmi2ValueReference, n: usize,
                order: *const fmi2Integer, v: *mut fmi2Real) -> Status {
                unsafe { fmi2::get_real_output_derivatives(c, vr, n, order, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2DoStep(c: fmi2Component, t: fmi2Real, h: fmi2Real, no_set_prior: fmi2Boolean) -> Status {
                unsafe { fmi2::do_step(c, t, h, no_set_prior) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> Status { unsafe { fmi2::cancel_step(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut Status) -> Status {
                unsafe { fmi2::get_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetRealStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Real) -> Status {
                unsafe { fmi2::get_real_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetIntegerStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Integer) -> Status {
                unsafe { fmi2::get_integer_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetBooleanStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Boolean) -> Status {
                unsafe { fmi2::get_boolean_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetStringStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2String) -> Status {
                unsafe { fmi2::get_string_status(c, k, v) }
            }

            // Model Exchange (FMI 2.0.4 §3.2), over the calls 3.0 shares (`fmu_export::me_calls`).
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2EnterEventMode(c: fmi2Component) -> Status { unsafe { me::enter_event_mode(c, "fmi2EnterEventMode") } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2NewDiscreteStates(c: fmi2Component, info: *mut fmi2EventInfo) -> Status { unsafe { fmi2::new_discrete_states(c, info) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: fmi2Component) -> Status { unsafe { me::enter_continuous_time_mode(c, "fmi2EnterContinuousTimeMode") } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2CompletedIntegratorStep(c: fmi2Component, _no_prior: fmi2Boolean, enter: *mut fmi2Boolean, terminate: *mut fmi2Boolean) -> Status {
                unsafe { me::completed_integrator_step(c, "fmi2CompletedIntegratorStep", enter, terminate) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetTime(c: fmi2Component, t: fmi2Real) -> Status { unsafe { me::set_time(c, "fmi2SetTime", t) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetContinuousStates(c: fmi2Component, x: *const fmi2Real, n: usize) -> Status {
                unsafe { me::set_continuous_states(c, "fmi2SetContinuousStates", x, n) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetDerivatives(c: fmi2Component, dx: *mut fmi2Real, n: usize) -> Status {
                unsafe { me::get_vector(c, "fmi2GetDerivatives", me::Vector::Derivatives, dx, n) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetEventIndicators(c: fmi2Component, z: *mut fmi2Real, n: usize) -> Status {
                unsafe { me::get_vector(c, "fmi2GetEventIndicators", me::Vector::EventIndicators, z, n) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetContinuousStates(c: fmi2Component, x: *mut fmi2Real, n: usize) -> Status {
                unsafe { me::get_vector(c, "fmi2GetContinuousStates", me::Vector::States, x, n) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(c: fmi2Component, x: *mut fmi2Real, n: usize) -> Status {
                unsafe { me::get_vector(c, "fmi2GetNominalsOfContinuousStates", me::Vector::Nominals, x, n) }
            }
        }
    };
}
