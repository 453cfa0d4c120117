//! The FMI 2.0 Model Exchange calls of an [`Instance`] (FMI 2.0.4 §3.2), with the raw
//! `fmi2Status`; the status handling is in `instance.rs`, the integration in `fmu/me.rs`.
//!
//! An ME-only binary does not export the Co-Simulation functions of the common table; loaded for
//! Model Exchange, each missing one is resolved to a stub of its own signature that returns
//! `fmi2Error` (the ME instance never calls them: its `fmi2DoStep` is the master's integration).

use super::{Instance, ERROR, NOT_CALLED};
use crate::fmu::me::{EventInfo, Vector};
use fmi_api::{Component, EventInfo2, Status, Vr};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;

unsafe extern "C" fn do_step(_: Component, _: f64, _: f64, _: c_int) -> Status {
    ERROR
}
unsafe extern "C" fn cancel_step(_: Component) -> Status {
    ERROR
}
unsafe extern "C" fn status_int(_: Component, _: c_int, _: *mut c_int) -> Status {
    ERROR
}
unsafe extern "C" fn status_real(_: Component, _: c_int, _: *mut f64) -> Status {
    ERROR
}
unsafe extern "C" fn status_string(_: Component, _: c_int, _: *mut *const c_char) -> Status {
    ERROR
}
unsafe extern "C" fn input_derivatives(_: Component, _: *const Vr, _: usize, _: *const c_int, _: *const f64) -> Status {
    ERROR
}
unsafe extern "C" fn output_derivatives(_: Component, _: *const Vr, _: usize, _: *const c_int, _: *mut f64) -> Status {
    ERROR
}

/// The stub of the Co-Simulation function `name` (NUL-terminated), of that function's signature;
/// `None` for any other name.
pub(super) fn co_simulation_stub(name: &[u8]) -> Option<NonNull<c_void>> {
    let f: *const () = match name.strip_suffix(b"\0").unwrap_or(name) {
        b"fmi2DoStep" => do_step as *const (),
        b"fmi2CancelStep" => cancel_step as *const (),
        b"fmi2GetStatus" | b"fmi2GetIntegerStatus" | b"fmi2GetBooleanStatus" => status_int as *const (),
        b"fmi2GetRealStatus" => status_real as *const (),
        b"fmi2GetStringStatus" => status_string as *const (),
        b"fmi2SetRealInputDerivatives" => input_derivatives as *const (),
        b"fmi2GetRealOutputDerivatives" => output_derivatives as *const (),
        _ => return None,
    };
    NonNull::new(f.cast_mut().cast())
}

impl Instance {
    fn me(&self) -> Option<&fmi_api::Fmi2Me> {
        self.binary.me.as_ref()
    }

    /// `fmi2EnterEventMode`.
    pub(crate) fn enter_event_mode(&mut self) -> c_int {
        let Some(f) = self.me().map(|m| m.enter_event_mode) else { return NOT_CALLED };
        // SAFETY: live component.
        unsafe { f(self.c()) }
    }

    /// `fmi2NewDiscreteStates`.
    pub(crate) fn new_discrete_states(&mut self, out: &mut EventInfo) -> c_int {
        let Some(f) = self.me().map(|m| m.new_discrete_states) else { return NOT_CALLED };
        let mut info = EventInfo2::default();
        // SAFETY: live component; a pointer to one fmi2EventInfo.
        let s = unsafe { f(self.c(), &mut info) };
        *out = EventInfo {
            new_discrete_states_needed: info.new_discrete_states_needed != 0,
            terminate_simulation: info.terminate_simulation != 0,
            nominals_changed: info.nominals_of_continuous_states_changed != 0,
            values_changed: info.values_of_continuous_states_changed != 0,
            next_event_time: (info.next_event_time_defined != 0).then_some(info.next_event_time),
        };
        s
    }

    /// `fmi2EnterContinuousTimeMode`.
    pub(crate) fn enter_continuous_time_mode(&mut self) -> c_int {
        let Some(f) = self.me().map(|m| m.enter_continuous_time_mode) else { return NOT_CALLED };
        // SAFETY: live component.
        unsafe { f(self.c()) }
    }

    /// `fmi2CompletedIntegratorStep(noSetFMUStatePriorToCurrentPoint = true)`: (enterEventMode,
    /// terminateSimulation).
    pub(crate) fn completed_integrator_step(&mut self, out: &mut (bool, bool)) -> c_int {
        let Some(f) = self.me().map(|m| m.completed_integrator_step) else { return NOT_CALLED };
        let (mut event, mut terminate): (c_int, c_int) = (0, 0);
        // SAFETY: live component; pointers to two fmi2Booleans.
        let s = unsafe { f(self.c(), 1, &mut event, &mut terminate) };
        *out = (event != 0, terminate != 0);
        s
    }

    /// `fmi2SetTime`.
    pub(crate) fn set_time(&mut self, t: f64) -> c_int {
        let Some(f) = self.me().map(|m| m.set_time) else { return NOT_CALLED };
        // SAFETY: live component, scalar argument.
        unsafe { f(self.c(), t) }
    }

    /// `fmi2SetContinuousStates`.
    pub(crate) fn set_continuous_states(&mut self, x: &[f64]) -> c_int {
        let Some(f) = self.me().map(|m| m.set_continuous_states) else { return NOT_CALLED };
        // SAFETY: live component; an array of x.len() reals.
        unsafe { f(self.c(), x.as_ptr(), x.len()) }
    }

    /// `fmi2GetContinuousStates`, `fmi2GetDerivatives`, `fmi2GetEventIndicators` or
    /// `fmi2GetNominalsOfContinuousStates` (`which`) into `out`.
    pub(crate) fn get_vector(&mut self, which: Vector, out: &mut [f64]) -> c_int {
        let Some(me) = self.me() else { return NOT_CALLED };
        let f = match which {
            Vector::States => me.get_continuous_states,
            Vector::Derivatives => me.get_derivatives,
            Vector::EventIndicators => me.get_event_indicators,
            Vector::Nominals => me.get_nominals_of_continuous_states,
        };
        // SAFETY: live component; an array of out.len() reals.
        unsafe { f(self.c(), out.as_mut_ptr(), out.len()) }
    }
}
