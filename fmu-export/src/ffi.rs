//! The FMI 2.0 C ABI. Every `fmi2*` function of a library is a thin `#[no_mangle]` wrapper made
//! by [`crate::export_fmi2`] around one function here, which checks pointers, converts arguments
//! to slices, catches panics and dispatches to the instance's [`Component`].
//!
//! This module is the only place of the workspace's FMU side with `unsafe` code.
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI 2.0 standard's, stated once here

use crate::component::{Component, Snapshot};
use crate::factory::Fmu;
use crate::logger::{Category, Logger};
use crate::types::*;
use std::collections::HashSet;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

const SLOT_MAGIC: u64 = 0x4843_4f53_494d_3230; // "HCOSIM20"

/// What an `fmi2Component` (or `fmi3Instance`) points to.
pub(crate) struct Slot {
    magic: u64,
    pub(crate) inner: Box<dyn Component>,
    /// What an FMI 3.0 instance needs beyond the 2.0 component (None for 2.0 instances).
    pub(crate) v3: Option<crate::fmi3::Extra>,
}

/// Publishes a new instance: the pointer handed to the importer.
pub(crate) fn register(inner: Box<dyn Component>, v3: Option<crate::fmi3::Extra>) -> *mut std::ffi::c_void {
    let p = Box::into_raw(Box::new(Slot { magic: SLOT_MAGIC, inner, v3 }));
    live(|s| s.insert(p as usize));
    p.cast()
}

/// What an `fmi2FMUstate` points to.
struct StateSlot {
    magic: u64,
    state: Snapshot,
}

/// Live components of this process, so that a second `fmi2FreeInstance` of the same pointer is
/// ignored instead of freeing memory twice. Touched only by instantiate and free.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn live(f: impl FnOnce(&mut HashSet<usize>) -> bool) -> bool {
    match LIVE.lock() {
        Ok(mut g) => f(g.get_or_insert_with(HashSet::new)),
        Err(poisoned) => f(poisoned.into_inner().get_or_insert_with(HashSet::new)),
    }
}

/// What the library allocated for the whole process, freed when it is unloaded: every model's
/// description table and the set of live components (see [`crate::export_fmi2`]'s unload hook).
///
/// # Safety
/// Only at unload: no instance may be used after.
pub unsafe fn release(fmus: &[&dyn Fmu]) {
    for f in fmus {
        // SAFETY: forwarded from the caller.
        unsafe { f.release() };
    }
    let set = match LIVE.lock() {
        Ok(mut g) => g.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    drop(set);
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// A C string as `&str` (None for NULL or invalid UTF-8).
pub(crate) unsafe fn text<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated string (FMI 2.0 fmi2String) valid for the call.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// `n` elements at `p`; an empty slice for `n == 0` whatever `p` is; None for NULL with n > 0.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        return Some(&[]);
    }
    if p.is_null() || n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return None;
    }
    // SAFETY: the importer passes an array of n elements (FMI 2.0 argument contract).
    Some(unsafe { std::slice::from_raw_parts(p, n) })
}

/// As [`slice`], mutable.
pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        return Some(&mut []);
    }
    if p.is_null() || n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return None;
    }
    // SAFETY: the importer passes a writable array of n elements (FMI 2.0 argument contract).
    Some(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// Runs `f` on the component behind `c`, catching panics. NULL or foreign pointers give
/// fmi2Error (there is no logger to tell, as the instance is unknown).
pub(crate) unsafe fn with(c: fmi2Component, function: &str, f: impl FnOnce(&mut dyn Component) -> Status) -> Status {
    // SAFETY: forwarded.
    unsafe { with_slot(c, function, |slot| f(&mut *slot.inner)) }
}

/// As [`with`], with the whole slot (FMI 3.0 needs its extra data).
#[inline(always)] // the hot getters, setters and fmi3DoStep: no call layer between the entry point and the component
pub(crate) unsafe fn with_slot(c: fmi2Component, function: &str, f: impl FnOnce(&mut Slot) -> Status) -> Status {
    // SAFETY: a non-null `c` was returned by our fmi2Instantiate and not yet freed (FMI 2.0
    // contract); the magic check rejects most other pointers handed in by mistake.
    let Some(slot) = (unsafe { (c as *mut Slot).as_mut() }) else { return Status::Error };
    if slot.magic != SLOT_MAGIC {
        return Status::Error;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *slot))) {
        Ok(s) => s,
        Err(p) => {
            let msg = panic_text(&*p);
            let _ = catch_unwind(AssertUnwindSafe(|| slot.inner.poison(function, &msg)));
            Status::Error
        }
    }
}

macro_rules! null_arg {
    ($comp:expr, $f:expr, $name:expr) => {
        $comp.fail($f, &format!("argument {} is NULL", $name))
    };
}

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
        if fmu_type != FMI2_CO_SIMULATION {
            return fail(format!("fmuType = {fmu_type}: this FMU supports Co-Simulation only (fmi2CoSimulation = 1)"));
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
        match fmu.instantiate(resources, Logger::new(callbacks, name, logging_on != FMI2_FALSE)) {
            Ok(inner) => register(inner, None),
            Err(e) => fail(e.to_string()),
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// `fmi2FreeInstance`: NULL and already-freed pointers are ignored.
pub unsafe fn free_instance(c: fmi2Component) {
    if c.is_null() || !live(|s| s.remove(&(c as usize))) {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `c` came from Box::into_raw in `instantiate` and was live until just now.
        let mut slot = unsafe { Box::from_raw(c as *mut Slot) };
        slot.magic = 0;
        drop(slot);
    }));
}

/// `fmi2SetDebugLogging`.
pub unsafe fn set_debug_logging(c: fmi2Component, on: fmi2Boolean, n: usize, categories: *const fmi2String) -> Status {
    const F: &str = "fmi2SetDebugLogging";
    // SAFETY: `c` per `with`; `categories` is an array of n strings.
    unsafe {
        with(c, F, |comp| match slice(categories, n) {
            Some(cats) => {
                let names: Vec<Option<&str>> = cats.iter().map(|p| text(*p)).collect();
                comp.set_debug_logging(on != FMI2_FALSE, &names)
            }
            None => null_arg!(comp, F, "categories"),
        })
    }
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

/// `fmi2ExitInitializationMode`.
pub unsafe fn exit_initialization_mode(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2ExitInitializationMode", |comp| comp.exit_initialization_mode()) }
}

/// `fmi2Terminate`.
pub unsafe fn terminate(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2Terminate", |comp| comp.terminate()) }
}

/// `fmi2Reset`.
pub unsafe fn reset(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2Reset", |comp| comp.reset()) }
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

/// The snapshot behind an `fmi2FMUstate`, if it is one of ours.
unsafe fn state_slot<'a>(s: fmi2FMUstate) -> Option<&'a mut StateSlot> {
    // SAFETY: a non-null state came from our fmi2GetFMUstate/fmi2DeSerializeFMUstate and was not
    // freed (FMI 2.0 contract); the magic check rejects most foreign pointers.
    let slot = unsafe { (s as *mut StateSlot).as_mut() }?;
    (slot.magic == SLOT_MAGIC).then_some(slot)
}

fn new_state(state: Snapshot) -> fmi2FMUstate {
    Box::into_raw(Box::new(StateSlot { magic: SLOT_MAGIC, state })).cast()
}

/// `fmi2GetFMUstate`: a new state if `*state` is NULL, else overwrites that state.
pub unsafe fn get_fmu_state(c: fmi2Component, state: *mut fmi2FMUstate) -> Status {
    const F: &str = "fmi2GetFMUstate";
    // SAFETY: `c` per `with`; `state` points to a writable fmi2FMUstate.
    unsafe {
        with(c, F, |comp| {
            let Some(out) = state.as_mut() else { return null_arg!(comp, F, "FMUstate") };
            let reuse = if out.is_null() { None } else { state_slot(*out) };
            if !out.is_null() && reuse.is_none() {
                return comp.fail(F, "*FMUstate is neither NULL nor a state returned by this FMU");
            }
            match comp.get_fmu_state(reuse.map(|s| &mut s.state)) {
                Ok(Some(fresh)) => {
                    *out = new_state(fresh);
                    Status::Ok
                }
                Ok(None) => Status::Ok,
                Err(s) => s,
            }
        })
    }
}

/// `fmi2SetFMUstate`.
pub unsafe fn set_fmu_state(c: fmi2Component, state: fmi2FMUstate) -> Status {
    const F: &str = "fmi2SetFMUstate";
    // SAFETY: `c` per `with`; `state` per `state_slot`.
    unsafe {
        with(c, F, |comp| match state_slot(state) {
            Some(s) => comp.set_fmu_state(&s.state),
            None => comp.fail(F, "FMUstate is NULL or not a state returned by this FMU"),
        })
    }
}

/// `fmi2FreeFMUstate`: frees `*state` and sets it to NULL; NULL is accepted.
pub unsafe fn free_fmu_state(c: fmi2Component, state: *mut fmi2FMUstate) -> Status {
    const F: &str = "fmi2FreeFMUstate";
    // SAFETY: `c` per `with`; `state` points to an fmi2FMUstate we returned, or NULL.
    unsafe {
        with(c, F, |comp| {
            let Some(p) = state.as_mut() else { return Status::Ok };
            if p.is_null() {
                return Status::Ok;
            }
            let Some(slot) = state_slot(*p) else {
                return comp.fail(F, "*FMUstate is not a state returned by this FMU");
            };
            let status = comp.check_fmu_state(F, &slot.state);
            if status == Status::Ok {
                slot.magic = 0;
                drop(Box::from_raw(*p as *mut StateSlot));
                *p = std::ptr::null_mut();
            }
            status
        })
    }
}

/// `fmi2SerializedFMUstateSize`.
pub unsafe fn serialized_fmu_state_size(c: fmi2Component, state: fmi2FMUstate, size: *mut usize) -> Status {
    const F: &str = "fmi2SerializedFMUstateSize";
    // SAFETY: `c` per `with`; `state` per `state_slot`; `size` writable.
    unsafe {
        with(c, F, |comp| {
            let Some(size) = size.as_mut() else { return null_arg!(comp, F, "size") };
            let Some(slot) = state_slot(state) else {
                return comp.fail(F, "FMUstate is NULL or not a state returned by this FMU");
            };
            match comp.serialize_fmu_state(&slot.state) {
                Ok(bytes) => {
                    *size = bytes.len();
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}

/// `fmi2SerializeFMUstate`.
pub unsafe fn serialize_fmu_state(c: fmi2Component, state: fmi2FMUstate, out: *mut fmi2Byte, size: usize) -> Status {
    const F: &str = "fmi2SerializeFMUstate";
    // SAFETY: `c` per `with`; `state` per `state_slot`; `out` has `size` writable bytes.
    unsafe {
        with(c, F, |comp| {
            let Some(slot) = state_slot(state) else {
                return comp.fail(F, "FMUstate is NULL or not a state returned by this FMU");
            };
            let bytes = match comp.serialize_fmu_state(&slot.state) {
                Ok(b) => b,
                Err(s) => return s,
            };
            if bytes.len() != size {
                return comp.fail(
                    F,
                    &format!("size = {size} but the state needs {} bytes (fmi2SerializedFMUstateSize)", bytes.len()),
                );
            }
            let Some(out) = slice_mut(out.cast::<u8>(), size) else { return null_arg!(comp, F, "serializedState") };
            out.copy_from_slice(&bytes);
            Status::Ok
        })
    }
}

/// `fmi2DeSerializeFMUstate`.
pub unsafe fn deserialize_fmu_state(
    c: fmi2Component,
    bytes: *const fmi2Byte,
    size: usize,
    state: *mut fmi2FMUstate,
) -> Status {
    const F: &str = "fmi2DeSerializeFMUstate";
    // SAFETY: `c` per `with`; `bytes` has `size` readable bytes; `state` writable.
    unsafe {
        with(c, F, |comp| {
            let Some(out) = state.as_mut() else { return null_arg!(comp, F, "FMUstate") };
            let Some(bytes) = slice(bytes.cast::<u8>(), size) else { return null_arg!(comp, F, "serializedState") };
            match comp.deserialize_fmu_state(bytes) {
                Ok(snapshot) => {
                    // An existing state of ours is overwritten, as fmi2GetFMUstate does.
                    match (!out.is_null()).then(|| state_slot(*out)).flatten() {
                        Some(slot) => slot.state = snapshot,
                        None => *out = new_state(snapshot),
                    }
                    Status::Ok
                }
                Err(s) => s,
            }
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

/// Defines `pub static FMUS: &[&dyn fmu_export::Fmu]`, the FMUs a physics library serves: the
/// list the packager (`cargo xtask fmus`) reads and that [`crate::export_fmi2`] dispatches on. It
/// exports no `fmi2*` symbol, so any number of physics libraries can be linked into one binary.
///
/// ```ignore
/// fmu_export::define_fmus!(crate::oscillator::ForceDisplacementM1, crate::oscillator::ForceDisplacementM2);
/// ```
#[macro_export]
macro_rules! define_fmus {
    ($($model:ty),+ $(,)?) => {
        /// The FMUs this library serves.
        pub static FMUS: &[&dyn $crate::Fmu] = &[$({
            static F: $crate::Factory<$model> = $crate::Factory::new();
            &F
        }),+];
    };
}

/// Exports the FMI 2.0 Co-Simulation API (`fmi2*` symbols) of a cdylib serving the FMUs of a
/// list defined by [`crate::define_fmus`], dispatching `fmi2Instantiate` on the GUID. Invoke it
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
                    unsafe { $crate::ffi::release(fmi2_exported_fmus()) }
                });
            }
            fmi2_unload
        };

        /// The exported `fmi2*` functions (FMI 2.0.4 §2.1, §4.2); see `fmu_export::ffi`.
        #[allow(non_snake_case, clippy::missing_safety_doc, missing_docs)]
        pub mod fmi2_exports {
            use $crate::types::*;
            use $crate::ffi;

            #[unsafe(no_mangle)]
            pub extern "C" fn fmi2GetTypesPlatform() -> *const fmi2Char { ffi::types_platform() }
            #[unsafe(no_mangle)]
            pub extern "C" fn fmi2GetVersion() -> *const fmi2Char { ffi::version() }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetDebugLogging(c: fmi2Component, on: fmi2Boolean, n: usize, cats: *const fmi2String) -> Status {
                unsafe { ffi::set_debug_logging(c, on, n, cats) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Instantiate(name: fmi2String, ty: fmi2Type, guid: fmi2String, res: fmi2String,
                functions: *const fmi2CallbackFunctions, visible: fmi2Boolean, logging_on: fmi2Boolean) -> fmi2Component {
                unsafe { ffi::instantiate(super::fmi2_exported_fmus(), name, ty, guid, res, functions, visible, logging_on) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) { unsafe { ffi::free_instance(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetupExperiment(c: fmi2Component, tol_defined: fmi2Boolean, tol: fmi2Real,
                start: fmi2Real, stop_defined: fmi2Boolean, stop: fmi2Real) -> Status {
                unsafe { ffi::setup_experiment(c, tol_defined, tol, start, stop_defined, stop) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> Status { unsafe { ffi::enter_initialization_mode(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> Status { unsafe { ffi::exit_initialization_mode(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> Status { unsafe { ffi::terminate(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> Status { unsafe { ffi::reset(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetReal(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Real) -> Status {
                unsafe { ffi::get_real(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetInteger(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Integer) -> Status {
                unsafe { ffi::get_integer(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetBoolean(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2Boolean) -> Status {
                unsafe { ffi::get_boolean(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetString(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *mut fmi2String) -> Status {
                unsafe { ffi::get_string(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetReal(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Real) -> Status {
                unsafe { ffi::set_real(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetInteger(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Integer) -> Status {
                unsafe { ffi::set_integer(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetBoolean(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2Boolean) -> Status {
                unsafe { ffi::set_boolean(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetString(c: fmi2Component, vr: *const fmi2ValueReference, n: usize, v: *const fmi2String) -> Status {
                unsafe { ffi::set_string(c, vr, n, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetFMUstate(c: fmi2Component, s: *mut fmi2FMUstate) -> Status { unsafe { ffi::get_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, s: fmi2FMUstate) -> Status { unsafe { ffi::set_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2FreeFMUstate(c: fmi2Component, s: *mut fmi2FMUstate) -> Status { unsafe { ffi::free_fmu_state(c, s) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SerializedFMUstateSize(c: fmi2Component, s: fmi2FMUstate, size: *mut usize) -> Status {
                unsafe { ffi::serialized_fmu_state_size(c, s, size) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SerializeFMUstate(c: fmi2Component, s: fmi2FMUstate, bytes: *mut fmi2Byte, size: usize) -> Status {
                unsafe { ffi::serialize_fmu_state(c, s, bytes, size) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2DeSerializeFMUstate(c: fmi2Component, bytes: *const fmi2Byte, size: usize, s: *mut fmi2FMUstate) -> Status {
                unsafe { ffi::deserialize_fmu_state(c, bytes, size, s) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetDirectionalDerivative(c: fmi2Component, _unknowns: *const fmi2ValueReference, _n_unknown: usize,
                _knowns: *const fmi2ValueReference, _n_known: usize, _dv_known: *const fmi2Real, _dv_unknown: *mut fmi2Real) -> Status {
                unsafe { ffi::get_directional_derivative(c) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2SetRealInputDerivatives(c: fmi2Component, vr: *const fmi2ValueReference, n: usize,
                order: *const fmi2Integer, v: *const fmi2Real) -> Status {
                unsafe { ffi::set_real_input_derivatives(c, vr, n, order, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(c: fmi2Component, vr: *const fmi2ValueReference, n: usize,
                order: *const fmi2Integer, v: *mut fmi2Real) -> Status {
                unsafe { ffi::get_real_output_derivatives(c, vr, n, order, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2DoStep(c: fmi2Component, t: fmi2Real, h: fmi2Real, no_set_prior: fmi2Boolean) -> Status {
                unsafe { ffi::do_step(c, t, h, no_set_prior) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> Status { unsafe { ffi::cancel_step(c) } }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut Status) -> Status {
                unsafe { ffi::get_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetRealStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Real) -> Status {
                unsafe { ffi::get_real_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetIntegerStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Integer) -> Status {
                unsafe { ffi::get_integer_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetBooleanStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2Boolean) -> Status {
                unsafe { ffi::get_boolean_status(c, k, v) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn fmi2GetStringStatus(c: fmi2Component, k: fmi2StatusKind, v: *mut fmi2String) -> Status {
                unsafe { ffi::get_string_status(c, k, v) }
            }
        }
    };
}
