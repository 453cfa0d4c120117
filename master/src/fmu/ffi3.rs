//! FMI 3.0 Co-Simulation binaries behind the FMI 2.0 [`Api`]: a 3.0 binary is loaded with its
//! `fmi3*` functions, and the [`Api`] the rest of the master calls holds *adapters* with the
//! 2.0 signatures whose component pointer is an [`Adapter`] (the `fmi3Instance` and what the
//! translation needs). So instances, bonds, extrapolation, multirate, iterative coupling
//! (FMU states), `--isolate`, `cosim check` and the Python bindings take 3.0 FMUs unchanged.
//!
//! Translation:
//! - `fmi2SetupExperiment` is remembered and passed to `fmi3EnterInitializationMode`;
//! - Real ↔ `Float64` (one call) or `Float32`; Integer ↔ `Int8`…`UInt64`/`Enumeration` by each
//!   variable's 3.0 type (a value outside the master's 32-bit range is an error naming it);
//!   Boolean ↔ C `bool`; `nValues` = number of references (scalars);
//! - `fmi3DoStep` is called with `eventModeUsed = false`, `earlyReturnAllowed = false`
//!   (instantiation): `terminateSimulation` becomes the 2.0 termination protocol (the step
//!   "discards", `fmi2Terminated` is true and `fmi2LastSuccessfulTime` is the 3.0
//!   `lastSuccessfulTime`), so the run ends with its status; `eventHandlingNeeded` is logged as
//!   a warning (the master has no event mode; FMI 3.0 §4.2.2: without event mode the FMU handles
//!   its events internally); an early return the master did not allow is an error.
//! - input derivatives do not exist in FMI 3.0 (`canInterpolateInputs` is false);
//! - Binary has no 2.0 function: [`get_binary`] and [`set_binary`] are called by
//!   `Instance::get_binary`/`set_binary` directly (`Call::GetBinary`, `Call::SetBinary`).

use super::{log_sink, text, Api, Component, Vr, DISCARD, ERROR, OK, WARNING};
use model_description::{ArrayElement, Type3};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};

#[path = "ffi3_binary.rs"]
mod binary;
pub(super) use binary::{get_binary, set_binary};

type Inst = *mut c_void;

/// The `fmi3*` functions the adapters call, resolved at load time (the one table of `fmi-api`).
type Api3 = fmi_api::Fmi3;

/// The functions [`load`] requires (`cosim info` checks a 3.0 binary's exports against them).
pub(crate) const REQUIRED_SYMBOLS3: &[&str] = fmi_api::Fmi3::REQUIRED;

/// A loaded 3.0 binary: its functions and the 3.0 type of every value reference.
pub(super) struct V3 {
    api: Api3,
    /// The type of each value reference below `dense.len()` (the common case: an indexed
    /// lookup on every getter and setter instead of a hash).
    dense: Vec<Option<Type3>>,
    types: HashMap<u32, Type3>,
    /// Array elements by their own value reference, with the array's type.
    elements: HashMap<u32, (ArrayElement, Type3)>,
    /// Start values of the Float64 arrays (by the array's reference): an element is set by
    /// setting the whole array, kept per instance from these.
    starts: HashMap<u32, Vec<f64>>,
}

/// What [`load`] needs from the description.
pub(crate) struct Types3 {
    /// The 3.0 type of each scalar's value reference.
    pub types: HashMap<u32, Type3>,
    /// Array elements and their type.
    pub elements: HashMap<u32, (ArrayElement, Type3)>,
    /// Start values of Float64 arrays.
    pub starts: HashMap<u32, Vec<f64>>,
}

/// Resolves the `fmi3*` functions of `lib` and returns the 2.0 [`Api`] of adapters with them.
pub(super) fn load(lib: &libloading::os::unix::Library, t: Types3) -> Result<(Api, V3), String> {
    // SAFETY: the symbols are FMI 3.0 functions with the table's signatures (those of
    // fmi3FunctionTypes.h; fmi3Boolean = C bool, arrays of it as bytes). The pointers are only
    // used while `lib` is loaded (both live in the Binary).
    let api = unsafe { Api3::resolve(|name| super::symbol(lib, name)) }.map_err(|m| {
        format!(
            "missing required symbol {}: the binary does not export the FMI 3.0 Co-Simulation API ({})",
            m.symbol, m.error
        )
    })?;
    // Every variable the master reads or writes as Real is a scalar Float64 (no Float32, no
    // array elements), decided once here: getReal/setReal are then a plain forward to
    // fmi3GetFloat64/fmi3SetFloat64, with no type lookup per value reference (the hot path).
    let reals_are_float64 = t.elements.is_empty() && !t.types.values().any(|ty| *ty == Type3::Float32);
    let adapters = Api {
        get_types_platform,
        get_version: version3,
        set_debug_logging,
        instantiate: instantiate_unused,
        free_instance,
        setup_experiment,
        enter_initialization_mode,
        exit_initialization_mode,
        terminate,
        reset,
        get_real: if reals_are_float64 { get_real_float64 } else { get_real },
        get_integer,
        get_boolean,
        get_string,
        set_real: if reals_are_float64 { set_real_float64 } else { set_real },
        set_integer,
        set_boolean,
        set_string,
        get_fmu_state,
        set_fmu_state,
        free_fmu_state,
        serialized_fmu_state_size,
        serialize_fmu_state,
        deserialize_fmu_state,
        get_directional_derivative,
        set_real_input_derivatives,
        get_real_output_derivatives,
        do_step,
        cancel_step,
        get_status,
        get_real_status: Some(get_real_status),
        get_integer_status,
        get_boolean_status: Some(get_boolean_status),
        get_string_status,
    };
    let max = t.types.keys().copied().filter(|vr| *vr < 1 << 16).max().map_or(0, |m| m as usize + 1);
    let mut dense = vec![None; max];
    for (vr, ty) in &t.types {
        if let Some(d) = dense.get_mut(*vr as usize) {
            *d = Some(*ty);
        }
    }
    Ok((adapters, V3 { api, dense, types: t.types, elements: t.elements, starts: t.starts }))
}

/// `fmi3GetVersion()` of the loaded binary.
pub(super) fn binary_version(v3: &V3) -> String {
    // SAFETY: no arguments; a static NUL-terminated string (or NULL, which `text` handles).
    unsafe { text((v3.api.get_version)()) }
}

/// What a 3.0 "component" pointer points to.
struct Adapter {
    inst: Inst,
    v3: *const V3,
    /// The `InstanceEnv` (component environment) for messages of the adapters.
    env: *mut c_void,
    tolerance: Option<f64>,
    start: f64,
    stop: Option<f64>,
    terminated: bool,
    last_time: f64,
    /// The values of the Float64 arrays whose elements the master sets.
    shadow: HashMap<u32, Vec<f64>>,
    /// `fmi3GetFloat64` and `fmi3SetFloat64` of the binary, copied here so that the plain
    /// forwards ([`get_real_float64`]) read them with one load.
    get_float64: unsafe extern "C" fn(Inst, *const Vr, usize, *mut f64, usize) -> c_int,
    set_float64: unsafe extern "C" fn(Inst, *const Vr, usize, *const f64, usize) -> c_int,
}

/// `fmi3InstantiateCoSimulation(name, token, resources, visible = false, logging_on,
/// eventModeUsed = false, earlyReturnAllowed = false, no intermediate variables, env, logger)`;
/// the adapter pointer (the "component"), or NULL.
///
/// # Safety
/// The strings are NUL-terminated; `env` is the instance's `InstanceEnv`, which outlives the
/// component; `v3` outlives it too (the Binary holds both).
pub(super) unsafe fn instantiate(
    v3: &V3,
    name: *const c_char,
    token: *const c_char,
    resources: *const c_char,
    env: *mut c_void,
    logging_on: bool,
) -> Component {
    // The resource path of FMI 3.0 is a directory path, not a URI.
    // SAFETY: per this function's contract.
    let uri = unsafe { text(resources) };
    let path = uri.strip_prefix("file://").unwrap_or(&uri).to_owned();
    let path = if path.ends_with('/') { path } else { format!("{path}/") };
    let Ok(c_path) = CString::new(path) else { return std::ptr::null_mut() };
    // SAFETY: FMI 3.0 fmi3InstantiateCoSimulation with NUL-terminated strings, no intermediate
    // variables, our environment and logger; the FMU copies the resource path.
    let inst = unsafe {
        (v3.api.instantiate)(
            name,
            token,
            c_path.as_ptr(),
            false,
            logging_on,
            false,
            false,
            std::ptr::null(),
            0,
            env,
            Some(log3),
            std::ptr::null(),
        )
    };
    if inst.is_null() {
        return std::ptr::null_mut();
    }
    let a = Box::new(Adapter {
        inst,
        v3,
        env,
        tolerance: None,
        start: 0.0,
        stop: None,
        terminated: false,
        last_time: f64::NAN,
        shadow: v3.starts.clone(),
        get_float64: v3.api.get_float64,
        set_float64: v3.api.set_float64,
    });
    Box::into_raw(a).cast()
}

/// The FMU's `fmi3LogMessageCallback`: to the instance's log sink.
unsafe extern "C" fn log3(env: *mut c_void, status: c_int, category: *const c_char, message: *const c_char) {
    // SAFETY: env is the InstanceEnv given at instantiation; strings NUL-terminated or NULL.
    unsafe { log_sink(env, std::ptr::null(), status, category, message) }
}

/// The adapter behind a component pointer.
///
/// # Safety
/// `c` is NULL or a pointer returned by [`instantiate`] and not yet freed.
unsafe fn adapter<'a>(c: Component) -> Option<&'a mut Adapter> {
    // SAFETY: per this function's contract.
    unsafe { c.cast::<Adapter>().as_mut() }
}

impl Adapter {
    fn api(&self) -> &Api3 {
        // SAFETY: the V3 lives in the Binary, which outlives every instance of it.
        unsafe { &(*self.v3).api }
    }

    #[inline]
    fn ty(&self, vr: u32) -> Option<Type3> {
        // SAFETY: as in `api`.
        let v3 = unsafe { &*self.v3 };
        match v3.dense.get(vr as usize) {
            Some(t) => *t,
            None => v3.types.get(&vr).copied(),
        }
    }

    fn element(&self, vr: u32) -> Option<(ArrayElement, Type3)> {
        // SAFETY: as in `api`.
        unsafe { (*self.v3).elements.get(&vr).copied() }
    }

    /// Element `el` of the array, read whole with getter `get` of element type `T`.
    fn get_element<T: Default + Copy>(
        &self,
        el: ArrayElement,
        get: unsafe extern "C" fn(Inst, *const Vr, usize, *mut T, usize) -> c_int,
    ) -> (c_int, T) {
        let mut buf = vec![T::default(); el.len];
        // SAFETY: the live instance; one array reference, its `len` values.
        let s = unsafe { get(self.inst, &el.array_vr, 1, buf.as_mut_ptr(), buf.len()) };
        (s, buf.get(el.index).copied().unwrap_or_default())
    }

    /// Logs `message` through the instance's sink with `status`; returns `status`.
    fn say(&self, status: c_int, message: &str) -> c_int {
        if let (Ok(m), Ok(cat)) = (CString::new(message.replace('\0', " ")), CString::new("cosim")) {
            // SAFETY: env is the live InstanceEnv; the strings outlive the call.
            unsafe { log_sink(self.env, std::ptr::null(), status, cat.as_ptr(), m.as_ptr()) };
        }
        status
    }

    fn wrong(&self, vr: u32, wanted: &str) -> c_int {
        let ty = self.ty(vr).map_or("unknown", Type3::as_str);
        self.say(ERROR, &format!("value reference {vr}: its FMI 3.0 type is {ty}, not {wanted}"))
    }
}

/// NULL-tolerant slices of the C arguments.
///
/// # Safety
/// Non-null pointers point to `n` elements.
unsafe fn arr<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// # Safety
/// As [`arr`], writable.
unsafe fn arr_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    if p.is_null() || n == 0 {
        &mut []
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }
}

unsafe extern "C" fn get_types_platform() -> *const c_char {
    c"default".as_ptr()
}

unsafe extern "C" fn version3() -> *const c_char {
    c"3.0".as_ptr()
}

unsafe extern "C" fn instantiate_unused(
    _: *const c_char,
    _: c_int,
    _: *const c_char,
    _: *const c_char,
    _: fmi_api::CallbacksPtr,
    _: c_int,
    _: c_int,
) -> Component {
    // Instance::new calls `instantiate` above for 3.0 binaries.
    std::ptr::null_mut()
}

unsafe extern "C" fn set_debug_logging(c: Component, on: c_int, n: usize, cats: *const *const c_char) -> c_int {
    // SAFETY: `c` per `adapter`; `cats` has n strings.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().set_debug_logging)(a.inst, on != 0, n, cats)) }
}

unsafe extern "C" fn free_instance(c: Component) {
    if c.is_null() {
        return;
    }
    // SAFETY: `c` came from Box::into_raw in `instantiate` and is freed once (Instance::drop).
    let a = unsafe { Box::from_raw(c.cast::<Adapter>()) };
    // SAFETY: the live fmi3Instance, freed once.
    unsafe { (a.api().free_instance)(a.inst) };
}

unsafe extern "C" fn setup_experiment(
    c: Component,
    tol_def: c_int,
    tol: f64,
    start: f64,
    stop_def: c_int,
    stop: f64,
) -> c_int {
    // SAFETY: `c` per `adapter`.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    a.tolerance = (tol_def != 0).then_some(tol);
    a.start = start;
    a.stop = (stop_def != 0).then_some(stop);
    a.last_time = start;
    OK
}

unsafe extern "C" fn enter_initialization_mode(c: Component) -> c_int {
    // SAFETY: `c` per `adapter`.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    // SAFETY: live instance, scalar arguments.
    unsafe {
        (a.api().enter_initialization_mode)(
            a.inst,
            a.tolerance.is_some(),
            a.tolerance.unwrap_or(0.0),
            a.start,
            a.stop.is_some(),
            a.stop.unwrap_or(0.0),
        )
    }
}

macro_rules! simple {
    ($name:ident, $field:ident) => {
        unsafe extern "C" fn $name(c: Component) -> c_int {
            // SAFETY: `c` per `adapter`; the live instance.
            unsafe { adapter(c).map_or(ERROR, |a| (a.api().$field)(a.inst)) }
        }
    };
}
simple!(exit_initialization_mode, exit_initialization_mode);
simple!(terminate, terminate);

unsafe extern "C" fn reset(c: Component) -> c_int {
    // SAFETY: `c` per `adapter`; the live instance.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    a.terminated = false;
    // SAFETY: as above.
    unsafe { (a.api().reset)(a.inst) }
}

/// One element of a numeric getter, by the variable's 3.0 type, as f64 or i64.
macro_rules! get_one {
    ($a:expr, $vr:expr, $field:ident, $t:ty) => {{
        let mut v: $t = Default::default();
        // SAFETY: the live instance; one reference, one value.
        let s = unsafe { ($a.api().$field)($a.inst, &$vr, 1, &mut v, 1) };
        (s, v)
    }};
}

macro_rules! set_one {
    ($a:expr, $vr:expr, $field:ident, $v:expr) => {{
        let v = $v;
        // SAFETY: the live instance; one reference, one value.
        unsafe { ($a.api().$field)($a.inst, &$vr, 1, &v, 1) }
    }};
}

unsafe extern "C" fn get_real(c: Component, vr: *const Vr, n: usize, out: *mut f64) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, out) = unsafe { (arr(vr, n), arr_mut(out, n)) };
    if vr.iter().all(|r| a.ty(*r) == Some(Type3::Float64)) {
        // SAFETY: the live instance; n references and n values.
        return unsafe { (a.api().get_float64)(a.inst, vr.as_ptr(), vr.len(), out.as_mut_ptr(), out.len()) };
    }
    let mut status = OK;
    for (r, o) in vr.iter().zip(out.iter_mut()) {
        let s = match a.ty(*r) {
            Some(Type3::Float64) => {
                let (s, v) = get_one!(a, *r, get_float64, f64);
                *o = v;
                s
            }
            Some(Type3::Float32) => {
                let (s, v) = get_one!(a, *r, get_float32, f32);
                *o = f64::from(v);
                s
            }
            _ => match a.element(*r) {
                Some((el, Type3::Float64)) => {
                    let (s, v) = a.get_element(el, a.api().get_float64);
                    *o = v;
                    s
                }
                Some((el, Type3::Float32)) => {
                    let (s, v) = a.get_element(el, a.api().get_float32);
                    *o = f64::from(v);
                    s
                }
                _ => return a.wrong(*r, "Float64 or Float32"),
            },
        };
        if s > WARNING {
            return s;
        }
        status = status.max(s);
    }
    status
}

/// `fmi2GetReal` of a binary whose Reals are all scalar Float64s: `fmi3GetFloat64` as is.
unsafe extern "C" fn get_real_float64(c: Component, vr: *const Vr, n: usize, out: *mut f64) -> c_int {
    // SAFETY: `c` per `adapter`; the live instance; arrays of n references and n values.
    unsafe { adapter(c).map_or(ERROR, |a| (a.get_float64)(a.inst, vr, n, out, n)) }
}

/// `fmi2SetReal` of a binary whose Reals are all scalar Float64s: `fmi3SetFloat64` as is.
unsafe extern "C" fn set_real_float64(c: Component, vr: *const Vr, n: usize, values: *const f64) -> c_int {
    // SAFETY: as `get_real_float64`.
    unsafe { adapter(c).map_or(ERROR, |a| (a.set_float64)(a.inst, vr, n, values, n)) }
}

unsafe extern "C" fn set_real(c: Component, vr: *const Vr, n: usize, values: *const f64) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, values) = unsafe { (arr(vr, n), arr(values, n)) };
    if vr.iter().all(|r| a.ty(*r) == Some(Type3::Float64)) {
        // SAFETY: the live instance; n references and n values.
        return unsafe { (a.api().set_float64)(a.inst, vr.as_ptr(), vr.len(), values.as_ptr(), values.len()) };
    }
    let mut status = OK;
    for (r, v) in vr.iter().zip(values) {
        let s = match a.ty(*r) {
            Some(Type3::Float64) => set_one!(a, *r, set_float64, *v),
            // Rounded to the nearest f32, as the FMU stores it.
            Some(Type3::Float32) => set_one!(a, *r, set_float32, *v as f32),
            _ => match a.element(*r) {
                Some((el, Type3::Float64)) => {
                    let api = a.api().set_float64;
                    let inst = a.inst;
                    let Some(values) = a.shadow.get_mut(&el.array_vr).filter(|s| s.len() == el.len) else {
                        return a.say(
                            ERROR,
                            &format!("value reference {r}: the array has no start values to set an element of"),
                        );
                    };
                    values[el.index] = *v;
                    // SAFETY: the live instance; one array reference, its `len` values.
                    unsafe { api(inst, &el.array_vr, 1, values.as_ptr(), values.len()) }
                }
                Some((_, ty)) => {
                    return a.say(
                        ERROR,
                        &format!("value reference {r}: setting an element of a {} array is not supported", ty.as_str()),
                    )
                }
                None => return a.wrong(*r, "Float64 or Float32"),
            },
        };
        if s > WARNING {
            return s;
        }
        status = status.max(s);
    }
    status
}

unsafe extern "C" fn get_integer(c: Component, vr: *const Vr, n: usize, out: *mut c_int) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, out) = unsafe { (arr(vr, n), arr_mut(out, n)) };
    if vr.iter().all(|r| a.ty(*r) == Some(Type3::Int32)) {
        // SAFETY: the live instance; n references and n values.
        return unsafe { (a.api().get_int32)(a.inst, vr.as_ptr(), vr.len(), out.as_mut_ptr(), out.len()) };
    }
    let mut status = OK;
    for (r, o) in vr.iter().zip(out.iter_mut()) {
        let (s, v): (c_int, i128) = match a.ty(*r) {
            Some(Type3::Int8) => get_one!(a, *r, get_int8, i8).map1(),
            Some(Type3::UInt8) => get_one!(a, *r, get_uint8, u8).map1(),
            Some(Type3::Int16) => get_one!(a, *r, get_int16, i16).map1(),
            Some(Type3::UInt16) => get_one!(a, *r, get_uint16, u16).map1(),
            Some(Type3::Int32) => get_one!(a, *r, get_int32, i32).map1(),
            Some(Type3::UInt32) => get_one!(a, *r, get_uint32, u32).map1(),
            Some(Type3::Int64 | Type3::Enumeration) => get_one!(a, *r, get_int64, i64).map1(),
            Some(Type3::UInt64) => get_one!(a, *r, get_uint64, u64).map1(),
            _ => match a.element(*r) {
                Some((el, Type3::Int8)) => a.get_element(el, a.api().get_int8).map1(),
                Some((el, Type3::UInt8)) => a.get_element(el, a.api().get_uint8).map1(),
                Some((el, Type3::Int16)) => a.get_element(el, a.api().get_int16).map1(),
                Some((el, Type3::UInt16)) => a.get_element(el, a.api().get_uint16).map1(),
                Some((el, Type3::Int32)) => a.get_element(el, a.api().get_int32).map1(),
                Some((el, Type3::UInt32)) => a.get_element(el, a.api().get_uint32).map1(),
                Some((el, Type3::Int64 | Type3::Enumeration)) => a.get_element(el, a.api().get_int64).map1(),
                Some((el, Type3::UInt64)) => a.get_element(el, a.api().get_uint64).map1(),
                _ => return a.wrong(*r, "an integer type or Enumeration"),
            },
        };
        if s > WARNING {
            return s;
        }
        match i32::try_from(v) {
            Ok(v) => *o = v,
            Err(_) => {
                let ty = a.ty(*r).map_or("?", Type3::as_str);
                return a.say(
                    ERROR,
                    &format!("value reference {r} ({ty}) = {v} does not fit the master's 32-bit integers"),
                );
            }
        }
        status = status.max(s);
    }
    status
}

/// Widening of a (status, value) pair of any integer type.
trait Map1 {
    fn map1(self) -> (c_int, i128);
}
impl<T: Into<i128>> Map1 for (c_int, T) {
    fn map1(self) -> (c_int, i128) {
        (self.0, self.1.into())
    }
}

unsafe extern "C" fn set_integer(c: Component, vr: *const Vr, n: usize, values: *const c_int) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, values) = unsafe { (arr(vr, n), arr(values, n)) };
    let mut status = OK;
    for (r, v) in vr.iter().zip(values) {
        let ty = a.ty(*r);
        let out_of_range = || {
            a.say(ERROR, &format!("value reference {r}: {v} is outside the range of {}", ty.map_or("?", Type3::as_str)))
        };
        let s = match ty {
            Some(Type3::Int8) => match i8::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_int8, x),
                Err(_) => return out_of_range(),
            },
            Some(Type3::UInt8) => match u8::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_uint8, x),
                Err(_) => return out_of_range(),
            },
            Some(Type3::Int16) => match i16::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_int16, x),
                Err(_) => return out_of_range(),
            },
            Some(Type3::UInt16) => match u16::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_uint16, x),
                Err(_) => return out_of_range(),
            },
            Some(Type3::Int32) => set_one!(a, *r, set_int32, *v),
            Some(Type3::UInt32) => match u32::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_uint32, x),
                Err(_) => return out_of_range(),
            },
            Some(Type3::Int64 | Type3::Enumeration) => set_one!(a, *r, set_int64, i64::from(*v)),
            Some(Type3::UInt64) => match u64::try_from(*v) {
                Ok(x) => set_one!(a, *r, set_uint64, x),
                Err(_) => return out_of_range(),
            },
            _ => return a.wrong(*r, "an integer type or Enumeration"),
        };
        if s > WARNING {
            return s;
        }
        status = status.max(s);
    }
    status
}

unsafe extern "C" fn get_boolean(c: Component, vr: *const Vr, n: usize, out: *mut c_int) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, out) = unsafe { (arr(vr, n), arr_mut(out, n)) };
    if vr.iter().any(|r| a.element(*r).is_some()) {
        let mut status = OK;
        for (r, o) in vr.iter().zip(out.iter_mut()) {
            let (s, v) = match a.element(*r) {
                Some((el, Type3::Boolean)) => a.get_element(el, a.api().get_boolean),
                Some(_) => return a.wrong(*r, "Boolean"),
                // SAFETY: the live instance; one reference, one byte.
                None => {
                    let mut b = 0u8;
                    (unsafe { (a.api().get_boolean)(a.inst, r, 1, &mut b, 1) }, b)
                }
            };
            if s > WARNING {
                return s;
            }
            *o = c_int::from(v != 0);
            status = status.max(s);
        }
        return status;
    }
    let mut raw = vec![0u8; vr.len()];
    // SAFETY: the live instance; n references, n bytes (C bool).
    let s = unsafe { (a.api().get_boolean)(a.inst, vr.as_ptr(), vr.len(), raw.as_mut_ptr(), raw.len()) };
    for (o, b) in out.iter_mut().zip(&raw) {
        *o = c_int::from(*b != 0);
    }
    s
}

unsafe extern "C" fn set_boolean(c: Component, vr: *const Vr, n: usize, values: *const c_int) -> c_int {
    // SAFETY: `c` per `adapter`; arrays of n elements.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let (vr, values) = unsafe { (arr(vr, n), arr(values, n)) };
    let raw: Vec<u8> = values.iter().map(|v| u8::from(*v != 0)).collect();
    // SAFETY: the live instance; n references, n bytes.
    unsafe { (a.api().set_boolean)(a.inst, vr.as_ptr(), vr.len(), raw.as_ptr(), raw.len()) }
}

unsafe extern "C" fn get_string(c: Component, vr: *const Vr, n: usize, out: *mut *const c_char) -> c_int {
    // SAFETY: `c` per `adapter`; the live instance; arrays of n elements.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().get_string)(a.inst, vr, n, out, n)) }
}

unsafe extern "C" fn set_string(c: Component, vr: *const Vr, n: usize, values: *const *const c_char) -> c_int {
    // SAFETY: as `get_string`.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().set_string)(a.inst, vr, n, values, n)) }
}

unsafe extern "C" fn get_fmu_state(c: Component, s: *mut *mut c_void) -> c_int {
    // SAFETY: `c` per `adapter`; the live instance; `s` writable.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().get_fmu_state)(a.inst, s)) }
}

unsafe extern "C" fn set_fmu_state(c: Component, s: *mut c_void) -> c_int {
    // SAFETY: as above.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    a.terminated = false;
    // SAFETY: as above.
    unsafe { (a.api().set_fmu_state)(a.inst, s) }
}

unsafe extern "C" fn free_fmu_state(c: Component, s: *mut *mut c_void) -> c_int {
    // SAFETY: as above.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().free_fmu_state)(a.inst, s)) }
}

unsafe extern "C" fn serialized_fmu_state_size(c: Component, s: *mut c_void, size: *mut usize) -> c_int {
    // SAFETY: as above.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().serialized_fmu_state_size)(a.inst, s, size)) }
}

unsafe extern "C" fn serialize_fmu_state(c: Component, s: *mut c_void, bytes: *mut c_char, size: usize) -> c_int {
    // SAFETY: as above.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().serialize_fmu_state)(a.inst, s, bytes, size)) }
}

unsafe extern "C" fn deserialize_fmu_state(
    c: Component,
    bytes: *const c_char,
    size: usize,
    s: *mut *mut c_void,
) -> c_int {
    // SAFETY: as above.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().deserialize_fmu_state)(a.inst, bytes, size, s)) }
}

unsafe extern "C" fn get_directional_derivative(
    c: Component,
    _: *const Vr,
    _: usize,
    _: *const Vr,
    _: usize,
    _: *const f64,
    _: *mut f64,
) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe { adapter(c).map_or(ERROR, |a| a.say(ERROR, "directional derivatives of FMI 3.0 FMUs are not used")) }
}

unsafe extern "C" fn set_real_input_derivatives(
    c: Component,
    _: *const Vr,
    _: usize,
    _: *const c_int,
    _: *const f64,
) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe {
        adapter(c).map_or(ERROR, |a| a.say(ERROR, "FMI 3.0 has no input derivatives (no fmi3SetInputDerivatives)"))
    }
}

unsafe extern "C" fn get_real_output_derivatives(
    c: Component,
    vr: *const Vr,
    n: usize,
    order: *const c_int,
    out: *mut f64,
) -> c_int {
    // SAFETY: `c` per `adapter`; the live instance; arrays of n elements.
    unsafe { adapter(c).map_or(ERROR, |a| (a.api().get_output_derivatives)(a.inst, vr, n, order, out, n)) }
}

unsafe extern "C" fn do_step(c: Component, t: f64, h: f64, no_set_prior: c_int) -> c_int {
    // SAFETY: `c` per `adapter`.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    a.step(t, h, no_set_prior != 0)
}

impl Adapter {
    /// `fmi3DoStep` and the 2.0 status its outputs translate to (module documentation).
    #[inline]
    fn step(&mut self, t: f64, h: f64, no_set_prior: bool) -> c_int {
        let a = self;
        let (mut event, mut terminate, mut early, mut last) = (false, false, false, f64::NAN);
        // SAFETY: the live instance; four writable outputs.
        let status =
            unsafe { (a.api().do_step)(a.inst, t, h, no_set_prior, &mut event, &mut terminate, &mut early, &mut last) };
        a.last_time = if last.is_finite() { last } else { t };
        if status > DISCARD {
            return status;
        }
        if terminate {
            a.terminated = true;
            a.say(
                OK,
                &format!("fmi3DoStep(t = {t}, h = {h}): terminateSimulation = true at lastSuccessfulTime = {last}"),
            );
            return DISCARD;
        }
        if status == DISCARD {
            return DISCARD;
        }
        if early {
            return a.say(
                ERROR,
                &format!(
                "fmi3DoStep(t = {t}, h = {h}) returned early at t = {last} although the master instantiated it with \
                 earlyReturnAllowed = false"
            ),
            );
        }
        if event {
            a.say(
                WARNING,
                &format!(
                    "fmi3DoStep(t = {t}, h = {h}): eventHandlingNeeded = true; cosim does not use event mode \
                 (eventModeUsed = false), the step is taken as completed"
                ),
            );
        }
        status
    }
}

unsafe extern "C" fn cancel_step(c: Component) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe { adapter(c).map_or(ERROR, |a| a.say(ERROR, "FMI 3.0 has no fmi3CancelStep")) }
}

unsafe extern "C" fn get_status(c: Component, _: c_int, _: *mut c_int) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe { adapter(c).map_or(ERROR, |a| a.say(ERROR, "FMI 3.0 has no fmi3GetStatus")) }
}

unsafe extern "C" fn get_integer_status(c: Component, _: c_int, _: *mut c_int) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe { adapter(c).map_or(ERROR, |a| a.say(ERROR, "FMI 3.0 has no fmi3GetIntegerStatus")) }
}

unsafe extern "C" fn get_string_status(c: Component, _: c_int, _: *mut *const c_char) -> c_int {
    // SAFETY: `c` per `adapter`.
    unsafe { adapter(c).map_or(ERROR, |a| a.say(ERROR, "FMI 3.0 has no fmi3GetStringStatus")) }
}

/// `fmi2GetRealStatus(fmi2LastSuccessfulTime)`: the `lastSuccessfulTime` of the last step.
unsafe extern "C" fn get_real_status(c: Component, kind: c_int, out: *mut f64) -> c_int {
    // SAFETY: `c` per `adapter`; `out` writable.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    match (kind, unsafe { out.as_mut() }) {
        (2, Some(o)) => {
            *o = a.last_time;
            OK
        }
        _ => DISCARD,
    }
}

/// `fmi2GetBooleanStatus(fmi2Terminated)`: `terminateSimulation` of the last step.
unsafe extern "C" fn get_boolean_status(c: Component, kind: c_int, out: *mut c_int) -> c_int {
    // SAFETY: `c` per `adapter`; `out` writable.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    match (kind, unsafe { out.as_mut() }) {
        (3, Some(o)) => {
            *o = c_int::from(a.terminated);
            OK
        }
        _ => DISCARD,
    }
}
