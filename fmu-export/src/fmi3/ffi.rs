//! The FMI 3.0 functions that differ from their 2.0 counterparts: instantiation, the typed
//! getters and setters (`nValues`, `Int64`, C `bool`), `fmi3EnterInitializationMode` (2.0's
//! `fmi2SetupExperiment` folded in) and `fmi3DoStep` with its output arguments. The others
//! (`fmi3FreeInstance`, `fmi3Terminate`, FMU states…) are the calls both versions share,
//! [`crate::common`]: an `fmi3Instance` is the same [`crate::handle`] as an `fmi2Component`,
//! with the [`Extra`] table beside the component.
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI 3.0 standard's

use super::{fmi3BooleanIn, fmi3Instance, fmi3InstanceEnvironment, fmi3String, Extra, LogMessageCallback};
use crate::component::Component;
use crate::factory::Fmu;
use crate::handle::{register, slice, slice_mut, text, with, with_api};
use crate::logger::{Category, Logger};
use crate::types::{FMI2_LAST_SUCCESSFUL_TIME, FMI2_TERMINATED};
use crate::Status;
use model_description::Type3;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why event-mode functions fail.
pub const NO_EVENT_MODE: &str = "event mode is not supported (hasEventMode=\"false\")";
/// Why clock functions fail.
pub const NO_CLOCKS: &str = "the FMU has no clocks";
/// Why configuration-mode functions fail.
pub const NO_STRUCTURAL: &str = "the FMU has no structural parameters (configuration mode is not supported)";
/// Why dependency queries fail.
pub const NO_DEPENDENCIES: &str = "not provided (providesPerElementDependencies=\"false\")";

/// A function the FMU does not support: logs why, `fmi3Error`.
pub unsafe fn unsupported(c: fmi3Instance, function: &str, why: &str) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, function, |comp| comp.fail(function, why)) }
}

/// `fmi3InstantiateModelExchange` / `fmi3InstantiateScheduledExecution`: NULL, with the reason logged.
pub unsafe fn refuse_instantiate(
    name: fmi3String,
    env: fmi3InstanceEnvironment,
    log: Option<LogMessageCallback>,
    function: &str,
    why: &str,
) -> fmi3Instance {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: NULL or NUL-terminated (FMI 3.0).
        let name = unsafe { text(name) }.unwrap_or("?");
        Logger::new_fmi3(log, env, name, true).log(Status::Error, Category::Error, &format!("{function}: {why}"));
    }));
    std::ptr::null_mut()
}

/// `fmi3InstantiateCoSimulation`: finds the model by instantiation token among `fmus`.
#[allow(clippy::too_many_arguments)] // the arguments of fmi3InstantiateCoSimulation, plus the model list
pub unsafe fn instantiate_co_simulation(
    fmus: &'static [&'static dyn Fmu],
    instance_name: fmi3String,
    token: fmi3String,
    resource_path: fmi3String,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    env: fmi3InstanceEnvironment,
    log: Option<LogMessageCallback>,
) -> fmi3Instance {
    const F: &str = "fmi3InstantiateCoSimulation";
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: strings are NULL or NUL-terminated (FMI 3.0).
        let name = unsafe { text(instance_name) };
        let mut logger = Logger::new_fmi3(log, env, name.unwrap_or("?"), logging_on);
        let mut fail = |msg: String| {
            logger.log(Status::Error, Category::Error, &format!("{F}: {msg}"));
            std::ptr::null_mut()
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return fail("instanceName is NULL or empty".into());
        };
        if event_mode_used {
            return fail(format!("eventModeUsed = true but {NO_EVENT_MODE}"));
        }
        // SAFETY: as above.
        let fmu = match unsafe { find(fmus, token) } {
            Ok(f) => f,
            Err(m) => return fail(m),
        };
        // SAFETY: as above.
        let resources = unsafe { text(resource_path) }.unwrap_or("");
        let extra = match Extra::of(fmu, early_return_allowed) {
            Ok(e) => e,
            Err(e) => return fail(e.to_string()),
        };
        match fmu.instantiate(resources, Logger::new_fmi3(log, env, name, logging_on)) {
            Ok(inner) => register(inner, extra),
            Err(e) => fail(e.to_string()),
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// The model of `fmus` whose instantiation token is `token`, or why there is none.
unsafe fn find(fmus: &'static [&'static dyn Fmu], token: fmi3String) -> Result<&'static dyn Fmu, String> {
    // SAFETY: NULL or NUL-terminated (FMI 3.0).
    let Some(token) = (unsafe { text(token) }) else { return Err("instantiationToken is NULL".into()) };
    match fmus.iter().find(|f| f.description().is_ok_and(|d| d.guid == token)) {
        Some(f) => Ok(*f),
        None => {
            let known: Vec<String> = fmus
                .iter()
                .filter_map(|f| f.description().ok().map(|d| format!("{} {}", f.info().model_identifier, d.guid)))
                .collect();
            Err(format!(
                "instantiationToken {token} matches no model of this binary (it serves: {}); is modelDescription.xml from another build?",
                known.join(", ")
            ))
        }
    }
}

/// `fmi3InstantiateModelExchange`: finds the model by instantiation token among `fmus`; NULL
/// with the reason logged when it has no continuous states.
#[allow(clippy::too_many_arguments)] // the arguments of fmi3InstantiateModelExchange, plus the model list
pub unsafe fn instantiate_model_exchange(
    fmus: &'static [&'static dyn Fmu],
    instance_name: fmi3String,
    token: fmi3String,
    resource_path: fmi3String,
    logging_on: bool,
    env: fmi3InstanceEnvironment,
    log: Option<LogMessageCallback>,
) -> fmi3Instance {
    const F: &str = "fmi3InstantiateModelExchange";
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: strings are NULL or NUL-terminated (FMI 3.0).
        let name = unsafe { text(instance_name) };
        let mut logger = Logger::new_fmi3(log, env, name.unwrap_or("?"), logging_on);
        let mut fail = |msg: String| {
            logger.log(Status::Error, Category::Error, &format!("{F}: {msg}"));
            std::ptr::null_mut()
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return fail("instanceName is NULL or empty".into());
        };
        // SAFETY: as above.
        let fmu = match unsafe { find(fmus, token) } {
            Ok(f) => f,
            Err(m) => return fail(m),
        };
        // SAFETY: as above.
        let resources = unsafe { text(resource_path) }.unwrap_or("");
        let extra = match Extra::of(fmu, false) {
            Ok(e) => e,
            Err(e) => return fail(e.to_string()),
        };
        match fmu.instantiate_model_exchange(resources, Logger::new_fmi3(log, env, name, logging_on)) {
            Ok(inner) => register(inner, extra),
            Err(e) => fail(e),
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// `fmi3UpdateDiscreteStates` (Model Exchange instances; a Co-Simulation instance has no event
/// mode and refuses it). The output pointers are checked for NULL.
#[allow(clippy::too_many_arguments)] // the arguments of fmi3UpdateDiscreteStates
pub unsafe fn update_discrete_states(
    c: fmi3Instance,
    need_update: *mut bool,
    terminate: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_defined: *mut bool,
    next: *mut f64,
) -> Status {
    const F: &str = "fmi3UpdateDiscreteStates";
    // SAFETY: `c` per `with`; the pointers are NULL or writable.
    unsafe {
        crate::me_calls::new_discrete_states(c, F, |comp, e| {
            let (Some(a), Some(b), Some(n), Some(v), Some(d), Some(t)) = (
                need_update.as_mut(),
                terminate.as_mut(),
                nominals_changed.as_mut(),
                values_changed.as_mut(),
                next_defined.as_mut(),
                next.as_mut(),
            ) else {
                return comp.fail(F, "an output argument is NULL");
            };
            *a = e.new_discrete_states_needed;
            *b = e.terminate_simulation;
            *n = e.nominals_changed;
            *v = e.values_changed;
            *d = e.next_event_time.is_some();
            *t = e.next_event_time.unwrap_or(0.0);
            Status::Ok
        })
    }
}

/// The number of continuous states or event indicators (`fmi3GetNumberOf…`).
pub unsafe fn number_of(c: fmi3Instance, function: &str, states: bool, n: *mut usize) -> Status {
    // SAFETY: `c` per `with`; `n` NULL or writable.
    unsafe {
        with(c, function, |comp| {
            let Some(out) = n.as_mut() else { return comp.fail(function, "argument is NULL") };
            let got = if states { comp.number_of_states(function) } else { comp.number_of_event_indicators(function) };
            match got {
                Ok(k) => {
                    *out = k;
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}

/// `fmi3EnterInitializationMode`: 2.0's `fmi2SetupExperiment` + `fmi2EnterInitializationMode`.
pub unsafe fn enter_initialization_mode(
    c: fmi3Instance,
    tolerance_defined: bool,
    tolerance: f64,
    start: f64,
    stop_defined: bool,
    stop: f64,
) -> Status {
    // SAFETY: see `with`.
    unsafe {
        with(c, "fmi3EnterInitializationMode", |comp| {
            let setup =
                comp.setup_experiment(tolerance_defined.then_some(tolerance), start, stop_defined.then_some(stop));
            if setup > Status::Warning {
                return setup;
            }
            setup.max(comp.enter_initialization_mode())
        })
    }
}

/// The instance's 3.0 table (`x` is None for a 2.0 instance handed to a 3.0 function).
fn extra<'a>(comp: &mut dyn Component, x: Option<&'a Extra>, function: &str) -> Result<&'a Extra, Status> {
    match x {
        Some(x) => Ok(x),
        None => Err(comp.fail(function, "the instance was made by fmi2Instantiate, not fmi3InstantiateCoSimulation")),
    }
}

/// Checks that every value reference names a scalar of one of the types `want` (and that
/// there is one value per reference: our variables are scalars).
fn check(
    comp: &mut dyn Component,
    x: &Extra,
    function: &str,
    vr: &[u32],
    n_values: usize,
    want: &[Type3],
    time_ok: bool,
) -> Result<(), Status> {
    if n_values != vr.len() {
        return Err(comp.fail(
            function,
            &format!(
                "nValues = {n_values} but {} value references of scalar variables were given (the FMU has no arrays)",
                vr.len()
            ),
        ));
    }
    for r in vr {
        if *r == x.time_vr {
            if time_ok {
                continue;
            }
            let why = if want.contains(&Type3::Float64) {
                format!("variable \"time\" (vr {r}) is the independent variable and cannot be set")
            } else {
                format!("variable \"time\" (vr {r}) is of type Float64, not {}", names(want))
            };
            return Err(comp.fail(function, &why));
        }
        match x.vars.get(*r as usize) {
            Some((_, ty)) if want.contains(ty) => {}
            Some((name, ty)) => {
                return Err(comp.fail(
                    function,
                    &format!("variable \"{name}\" (vr {r}) is of type {}, not {}", ty.as_str(), names(want)),
                ))
            }
            None => {
                return Err(
                    comp.fail(function, &format!("value reference {r} does not exist (valid: 0..={})", x.time_vr))
                )
            }
        }
    }
    Ok(())
}

fn names(want: &[Type3]) -> String {
    want.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" or ")
}

/// Runs `f` on a 3.0 instance with checked value references and value slices.
#[allow(clippy::too_many_arguments)] // the getter's arguments and its type rule
unsafe fn typed<T, V>(
    c: fmi3Instance,
    function: &str,
    vr: *const u32,
    n: usize,
    values: *mut T,
    n_values: usize,
    want: &[Type3],
    time_ok: bool,
    f: impl FnOnce(&mut dyn Component, &Extra, &[u32], V) -> Status,
    view: impl FnOnce(*mut T, usize) -> Option<V>,
) -> Status {
    // SAFETY: see `with_api`; the rest forwarded.
    unsafe {
        with_api::<Extra>(c, function, |comp, x| {
            typed_in(comp, x, function, vr, n, values, n_values, want, time_ok, f, view)
        })
    }
}

/// [`typed`] on the instance's component and 3.0 table.
#[allow(clippy::too_many_arguments)] // as `typed`
unsafe fn typed_in<T, V>(
    comp: &mut dyn Component,
    x: Option<&Extra>,
    function: &str,
    vr: *const u32,
    n: usize,
    values: *mut T,
    n_values: usize,
    want: &[Type3],
    time_ok: bool,
    f: impl FnOnce(&mut dyn Component, &Extra, &[u32], V) -> Status,
    view: impl FnOnce(*mut T, usize) -> Option<V>,
) -> Status {
    let x = match extra(comp, x, function) {
        Ok(x) => x,
        Err(s) => return s,
    };
    // SAFETY: the importer passes arrays of n and n_values elements (FMI 3.0).
    let (Some(vr), Some(v)) = (unsafe { slice(vr, n) }, view(values, n_values)) else {
        return comp.fail(function, "valueReferences or values is NULL");
    };
    if let Err(s) = check(comp, x, function, vr, n_values, want, time_ok) {
        return s;
    }
    f(comp, x, vr, v)
}

/// `fmi3GetFloat64` (also the independent variable `time`). The common call (Float64
/// variables of the model, one value each) goes straight to the component, as `fmi2GetReal`
/// does; anything else takes `get_float64_checked`.
pub unsafe fn get_float64(c: fmi3Instance, vr: *const u32, n: usize, v: *mut f64, nv: usize) -> Status {
    const F: &str = "fmi3GetFloat64";
    // SAFETY: see `with_api`; the importer passes n references and nv writable values (FMI 3.0).
    unsafe {
        with_api::<Extra>(c, F, |comp, x| match (x, slice(vr, n), slice_mut(v, nv)) {
            (Some(x), Some(vr), Some(out)) if x.plain_float64(vr, nv) => comp.get_real(vr, out),
            _ => get_float64_checked(comp, x, vr, n, v, nv),
        })
    }
}

/// `fmi3GetFloat64` with `time`, or an error naming what is wrong with the call.
#[cold]
#[inline(never)]
unsafe fn get_float64_checked(
    comp: &mut dyn Component,
    x: Option<&Extra>,
    vr: *const u32,
    n: usize,
    v: *mut f64,
    nv: usize,
) -> Status {
    // SAFETY: forwarded; `v` has nv writable elements.
    unsafe {
        typed_in(
            comp,
            x,
            "fmi3GetFloat64",
            vr,
            n,
            v,
            nv,
            &[Type3::Float64],
            true,
            |comp, x, vr, out: &mut [f64]| {
                let mut status = Status::Ok;
                for (r, o) in vr.iter().zip(out.iter_mut()) {
                    let s = if *r == x.time_vr {
                        *o = comp.time();
                        Status::Ok
                    } else {
                        comp.get_real(&[*r], std::slice::from_mut(o))
                    };
                    if s > Status::Warning {
                        return s;
                    }
                    status = status.max(s);
                }
                status
            },
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3GetInt32`.
pub unsafe fn get_int32(c: fmi3Instance, vr: *const u32, n: usize, v: *mut i32, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3GetInt32",
            vr,
            n,
            v,
            nv,
            &[Type3::Int32],
            false,
            |comp, _, vr, out: &mut [i32]| comp.get_integer(vr, out),
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3GetInt64` (Int64 counters and enumerations).
pub unsafe fn get_int64(c: fmi3Instance, vr: *const u32, n: usize, v: *mut i64, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3GetInt64",
            vr,
            n,
            v,
            nv,
            &[Type3::Int64, Type3::Enumeration],
            false,
            |comp, _, vr, out: &mut [i64]| {
                let mut buf = vec![0i32; vr.len()];
                let s = comp.get_integer(vr, &mut buf);
                if s <= Status::Warning {
                    for (o, b) in out.iter_mut().zip(&buf) {
                        *o = i64::from(*b);
                    }
                }
                s
            },
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3GetBoolean`.
pub unsafe fn get_boolean(c: fmi3Instance, vr: *const u32, n: usize, v: *mut bool, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3GetBoolean",
            vr,
            n,
            v,
            nv,
            &[Type3::Boolean],
            false,
            |comp, _, vr, out: &mut [bool]| {
                let mut buf = vec![0i32; vr.len()];
                let s = comp.get_boolean(vr, &mut buf);
                if s <= Status::Warning {
                    for (o, b) in out.iter_mut().zip(&buf) {
                        *o = *b != 0;
                    }
                }
                s
            },
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3GetString`.
pub unsafe fn get_string(c: fmi3Instance, vr: *const u32, n: usize, v: *mut fmi3String, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3GetString",
            vr,
            n,
            v,
            nv,
            &[Type3::String],
            false,
            |comp, _, vr, out: &mut [fmi3String]| comp.get_string(vr, out),
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3SetFloat64`: as [`get_float64`], the common call straight to the component.
pub unsafe fn set_float64(c: fmi3Instance, vr: *const u32, n: usize, v: *const f64, nv: usize) -> Status {
    const F: &str = "fmi3SetFloat64";
    // SAFETY: see `with_api`; the importer passes n references and nv values (FMI 3.0).
    unsafe {
        with_api::<Extra>(c, F, |comp, x| match (x, slice(vr, n), slice(v, nv)) {
            (Some(x), Some(vr), Some(vals)) if x.plain_float64(vr, nv) => comp.set_real(vr, vals),
            _ => set_float64_checked(comp, x, vr, n, v, nv),
        })
    }
}

/// `fmi3SetFloat64` that [`set_float64`] did not pass on: an error naming what is wrong.
#[cold]
#[inline(never)]
unsafe fn set_float64_checked(
    comp: &mut dyn Component,
    x: Option<&Extra>,
    vr: *const u32,
    n: usize,
    v: *const f64,
    nv: usize,
) -> Status {
    // SAFETY: forwarded; `v` has nv readable elements.
    unsafe {
        typed_in(
            comp,
            x,
            "fmi3SetFloat64",
            vr,
            n,
            v.cast_mut(),
            nv,
            &[Type3::Float64],
            false,
            |comp, _, vr, vals: &[f64]| comp.set_real(vr, vals),
            |p, k| slice(p.cast_const(), k),
        )
    }
}

/// `fmi3SetInt32`.
pub unsafe fn set_int32(c: fmi3Instance, vr: *const u32, n: usize, v: *const i32, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3SetInt32",
            vr,
            n,
            v.cast_mut(),
            nv,
            &[Type3::Int32],
            false,
            |comp, _, vr, vals: &[i32]| comp.set_integer(vr, vals),
            |p, k| slice(p.cast_const(), k),
        )
    }
}

/// `fmi3SetInt64` (enumerations; our Int64 variables are outputs, which the component refuses).
pub unsafe fn set_int64(c: fmi3Instance, vr: *const u32, n: usize, v: *const i64, nv: usize) -> Status {
    const F: &str = "fmi3SetInt64";
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            F,
            vr,
            n,
            v.cast_mut(),
            nv,
            &[Type3::Int64, Type3::Enumeration],
            false,
            |comp, x, vr, vals: &[i64]| {
                let mut buf = Vec::with_capacity(vals.len());
                for (r, val) in vr.iter().zip(vals) {
                    match i32::try_from(*val) {
                        Ok(b) => buf.push(b),
                        Err(_) => {
                            let name = x.vars.get(*r as usize).map_or("?", |(n, _)| n.as_str());
                            return comp.fail(F, &format!("variable \"{name}\" (vr {r}) cannot be set to {val}: outside the model's 32-bit range"));
                        }
                    }
                }
                comp.set_integer(vr, &buf)
            },
            |p, k| slice(p.cast_const(), k),
        )
    }
}

/// `fmi3SetBoolean`.
pub unsafe fn set_boolean(c: fmi3Instance, vr: *const u32, n: usize, v: *const fmi3BooleanIn, nv: usize) -> Status {
    // SAFETY: forwarded.
    unsafe {
        typed(
            c,
            "fmi3SetBoolean",
            vr,
            n,
            v.cast_mut(),
            nv,
            &[Type3::Boolean],
            false,
            |comp, _, vr, vals: &[u8]| {
                let buf: Vec<i32> = vals.iter().map(|b| i32::from(*b != 0)).collect();
                comp.set_boolean(vr, &buf)
            },
            |p, k| slice(p.cast_const(), k),
        )
    }
}

/// `fmi3SetString`.
pub unsafe fn set_string(c: fmi3Instance, vr: *const u32, n: usize, v: *const fmi3String, nv: usize) -> Status {
    // SAFETY: forwarded; strings NUL-terminated.
    unsafe {
        typed(
            c,
            "fmi3SetString",
            vr,
            n,
            v.cast_mut(),
            nv,
            &[Type3::String],
            false,
            |comp, _, vr, vals: &[fmi3String]| {
                let v: Vec<Option<&str>> = vals.iter().map(|p| text(*p)).collect();
                comp.set_string(vr, &v)
            },
            |p, k| slice(p.cast_const(), k),
        )
    }
}

/// A getter or setter of a type the FMU has no variable of: fine for no value references,
/// else an error naming the first variable's type.
pub unsafe fn no_such_type(c: fmi3Instance, function: &'static str, vr: *const u32, n: usize) -> Status {
    let ty = function.trim_start_matches("fmi3Get").trim_start_matches("fmi3Set");
    // SAFETY: see `with_api`; `vr` has n elements.
    unsafe {
        with_api::<Extra>(c, function, |comp, x| {
            let x = match extra(comp, x, function) {
                Ok(x) => x,
                Err(s) => return s,
            };
            let Some(vr) = slice(vr, n) else { return comp.fail(function, "valueReferences is NULL") };
            let Some(r) = vr.first() else { return Status::Ok };
            let what = if *r == x.time_vr {
                format!("variable \"time\" (vr {r}) is of type Float64")
            } else {
                match x.vars.get(*r as usize) {
                    Some((name, t)) => format!("variable \"{name}\" (vr {r}) is of type {}", t.as_str()),
                    None => format!("value reference {r} does not exist"),
                }
            };
            comp.fail(function, &format!("{what}, not {ty} (the FMU has no {ty} variable)"))
        })
    }
}

/// `fmi3GetOutputDerivatives`.
pub unsafe fn get_output_derivatives(
    c: fmi3Instance,
    vr: *const u32,
    n: usize,
    orders: *const i32,
    v: *mut f64,
    nv: usize,
) -> Status {
    const F: &str = "fmi3GetOutputDerivatives";
    // SAFETY: forwarded; `orders` has n elements.
    unsafe {
        typed(
            c,
            F,
            vr,
            n,
            v,
            nv,
            &[Type3::Float64],
            false,
            |comp, _, vr, out: &mut [f64]| match slice(orders, vr.len()) {
                Some(orders) => comp.get_real_output_derivatives(vr, orders, out),
                None => comp.fail(F, "orders is NULL"),
            },
            |p, k| slice_mut(p, k),
        )
    }
}

/// `fmi3DoStep` for an importer without event mode: a step that ends normally reports
/// `lastSuccessfulTime` = t + h; a model that ends the simulation ([`crate::Context::terminate`])
/// returns `fmi3OK` with `terminateSimulation` = true and `lastSuccessfulTime` where it stopped
/// (`earlyReturn` = true if that is before t + h and the importer allowed early return); a
/// discarded step returns `fmi3Discard` with `lastSuccessfulTime` = t. `eventHandlingNeeded` is
/// always false (the models have no events).
#[allow(clippy::too_many_arguments)] // the arguments of fmi3DoStep
pub unsafe fn do_step(
    c: fmi3Instance,
    t: f64,
    h: f64,
    no_set_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    // SAFETY: see `with_api`; the output pointers are writable (FMI 3.0).
    unsafe {
        with_api::<Extra>(c, DO_STEP, |comp, x| {
            let (Some(x), Some(ev), Some(term), Some(early), Some(last)) = (
                x,
                event_handling_needed.as_mut(),
                terminate_simulation.as_mut(),
                early_return.as_mut(),
                last_successful_time.as_mut(),
            ) else {
                return do_step_refused(comp, x);
            };
            *ev = false;
            *term = false;
            *early = false;
            let status = comp.do_step(t, h, no_set_prior);
            match status {
                Status::Ok | Status::Warning => {
                    *last = comp.time();
                    status
                }
                Status::Discard => discarded(comp, x, t, h, term, early, last),
                other => other,
            }
        })
    }
}

const DO_STEP: &str = "fmi3DoStep";

/// Why [`do_step`] did not step: a 2.0 instance, or a NULL output argument.
#[cold]
#[inline(never)]
fn do_step_refused(comp: &mut dyn Component, x: Option<&Extra>) -> Status {
    match extra(comp, x, DO_STEP) {
        Err(s) => s,
        Ok(_) => comp.fail(
            DO_STEP,
            "an output argument (eventHandlingNeeded, terminateSimulation, earlyReturn, lastSuccessfulTime) is NULL",
        ),
    }
}

/// The outputs of a discarded step: `lastSuccessfulTime`, and a model that ended the
/// simulation turned into `fmi3OK` with `terminateSimulation` (and `earlyReturn` if allowed).
#[cold]
#[inline(never)]
fn discarded(
    comp: &mut dyn Component,
    x: &Extra,
    t: f64,
    h: f64,
    term: &mut bool,
    early: &mut bool,
    last: &mut f64,
) -> Status {
    let at = comp.get_real_status(FMI2_LAST_SUCCESSFUL_TIME).unwrap_or(t);
    *last = at;
    if comp.get_boolean_status(FMI2_TERMINATED) == Ok(true) {
        *term = true;
        *early = x.early_return_allowed && at < t + h;
        Status::Ok
    } else {
        Status::Discard
    }
}
