//! The Model Exchange calls FMI 2.0 and FMI 3.0 share (the same arguments up to the C type
//! names and the function's name): the entry points of both [`crate::fmi2`] (`fmi2SetTime`,
//! `fmi2GetDerivatives`, …) and [`crate::fmi3`] (`fmi3SetTime`,
//! `fmi3GetContinuousStateDerivatives`, …) call these over the [`crate::handle`], naming their
//! own function. The instance's [`crate::component::ModelExchangeCalls`] checks the state
//! machine; a Co-Simulation instance refuses every one of them.
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI standards'

use crate::component::{Component, EventInfo};
use crate::handle::{null_arg, slice, slice_mut, with};
use crate::types::Status;
use std::ffi::c_void;

/// `fmi2SetTime` / `fmi3SetTime`.
pub unsafe fn set_time(c: *mut c_void, function: &str, t: f64) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, function, |comp| comp.set_time(function, t)) }
}

/// `fmi2EnterEventMode` / `fmi3EnterEventMode`.
pub unsafe fn enter_event_mode(c: *mut c_void, function: &str) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, function, |comp| comp.enter_event_mode(function)) }
}

/// `fmi2EnterContinuousTimeMode` / `fmi3EnterContinuousTimeMode`.
pub unsafe fn enter_continuous_time_mode(c: *mut c_void, function: &str) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, function, |comp| comp.enter_continuous_time_mode(function)) }
}

/// `fmi2SetContinuousStates` / `fmi3SetContinuousStates`.
pub unsafe fn set_continuous_states(c: *mut c_void, function: &str, x: *const f64, n: usize) -> Status {
    // SAFETY: `c` per `with`; `x` is an array of n elements.
    unsafe {
        with(c, function, |comp| match slice(x, n) {
            Some(x) => comp.set_continuous_states(function, x),
            None => null_arg!(comp, function, "x"),
        })
    }
}

/// Which vector a getter of [`get_vector`] reads.
#[derive(Debug, Clone, Copy)]
pub enum Vector {
    /// The continuous states.
    States,
    /// Their derivatives.
    Derivatives,
    /// The event indicators.
    EventIndicators,
    /// The states' nominal values.
    Nominals,
}

/// `fmi2GetContinuousStates`, `fmi2GetDerivatives`, `fmi2GetEventIndicators`,
/// `fmi2GetNominalsOfContinuousStates` and their 3.0 counterparts.
pub unsafe fn get_vector(c: *mut c_void, function: &str, which: Vector, out: *mut f64, n: usize) -> Status {
    // SAFETY: `c` per `with`; `out` is a writable array of n elements.
    unsafe {
        with(c, function, |comp| {
            let Some(out) = slice_mut(out, n) else { return null_arg!(comp, function, "the output array") };
            match which {
                Vector::States => comp.get_continuous_states(function, out),
                Vector::Derivatives => comp.get_derivatives(function, out),
                Vector::EventIndicators => comp.get_event_indicators(function, out),
                Vector::Nominals => comp.get_nominals(function, out),
            }
        })
    }
}

/// `fmi2CompletedIntegratorStep` / `fmi3CompletedIntegratorStep`: writes enterEventMode and
/// terminateSimulation (`B`: `fmi2Boolean` or C `bool`).
pub unsafe fn completed_integrator_step<B: From<bool>>(
    c: *mut c_void,
    function: &str,
    enter_event_mode: *mut B,
    terminate_simulation: *mut B,
) -> Status {
    // SAFETY: `c` per `with`; the pointers are writable (FMI contract), checked for NULL.
    unsafe {
        with(c, function, |comp| {
            let (Some(e), Some(t)) = (enter_event_mode.as_mut(), terminate_simulation.as_mut()) else {
                return null_arg!(comp, function, "enterEventMode or terminateSimulation");
            };
            match comp.completed_integrator_step(function) {
                Ok((enter, terminate)) => {
                    *e = B::from(enter);
                    *t = B::from(terminate);
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}

/// `fmi2NewDiscreteStates` / `fmi3UpdateDiscreteStates`: the event iteration's outcome handed to
/// `write` (each version writes its own output arguments).
pub unsafe fn new_discrete_states(
    c: *mut c_void,
    function: &str,
    write: impl FnOnce(&mut dyn Component, EventInfo) -> Status,
) -> Status {
    // SAFETY: see `with`.
    unsafe {
        with(c, function, |comp| match comp.new_discrete_states(function) {
            Ok(info) => write(comp, info),
            Err(s) => s,
        })
    }
}
