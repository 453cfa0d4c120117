//! The FMI 3.0 Model Exchange calls of an [`Instance3`] (FMI 3.0.1 §3.2), with the raw
//! `fmi3Status`; the status handling is in `fmu/me3.rs`, the integration in `fmu/me.rs`.
//!
//! An ME-only binary does not export the Co-Simulation functions of the common table
//! (`fmi3InstantiateCoSimulation`, `fmi3DoStep`, `fmi3GetOutputDerivatives`); loaded for Model
//! Exchange, each missing one is resolved to a stub of its own signature that fails (the ME
//! instance never calls them: its step is the master's integration).

use super::{log3, Instance3};
use crate::fmu::ffi::{InstanceEnv, InstantiateError, ERROR, NOT_CALLED};
use crate::fmu::me::{EventInfo, Vector};
use fmi_api::{Component, IntermediateUpdate3, LogMessage3, Status, Vr};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn instantiate_co_simulation(
    _: *const c_char,
    _: *const c_char,
    _: *const c_char,
    _: bool,
    _: bool,
    _: bool,
    _: bool,
    _: *const Vr,
    _: usize,
    _: *mut c_void,
    _: Option<LogMessage3>,
    _: Option<IntermediateUpdate3>,
) -> Component {
    std::ptr::null_mut()
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn do_step(
    _: Component,
    _: f64,
    _: f64,
    _: bool,
    _: *mut bool,
    _: *mut bool,
    _: *mut bool,
    _: *mut f64,
) -> Status {
    ERROR
}
unsafe extern "C" fn output_derivatives(
    _: Component,
    _: *const Vr,
    _: usize,
    _: *const c_int,
    _: *mut f64,
    _: usize,
) -> Status {
    ERROR
}

/// The stub of the Co-Simulation function `name` (NUL-terminated), of that function's signature;
/// `None` for any other name.
pub(super) fn co_simulation_stub(name: &[u8]) -> Option<NonNull<c_void>> {
    let f: *const () = match name.strip_suffix(b"\0").unwrap_or(name) {
        b"fmi3InstantiateCoSimulation" => instantiate_co_simulation as *const (),
        b"fmi3DoStep" => do_step as *const (),
        b"fmi3GetOutputDerivatives" => output_derivatives as *const (),
        _ => return None,
    };
    NonNull::new(f.cast_mut().cast())
}

impl Instance3 {
    /// `fmi3InstantiateModelExchange(name, token, resources, visible = false, logging_on, env,
    /// logger)` of a binary loaded for Model Exchange.
    pub(crate) fn new_model_exchange(
        binary: &Arc<super::Binary3>,
        name: &str,
        token: &str,
        resource_uri: &str,
        logging_on: bool,
        log: Option<Arc<dyn crate::host::FmuLog>>,
    ) -> Result<Self, InstantiateError> {
        let path = resource_uri.strip_prefix("file://").unwrap_or(resource_uri);
        let path = if path.ends_with('/') { path.to_owned() } else { format!("{path}/") };
        let env = InstanceEnv::create(name, token, &path, log)?;
        let env_ptr = env.as_ptr();
        let inst = match &binary.me {
            // SAFETY: as `Instance3::new`: NUL-terminated strings inside the environment, which
            // outlives the instance; our logger never unwinds.
            Some(me) => unsafe {
                let (c_name, c_token, c_path) = (*env_ptr).c_strings();
                (me.instantiate_model_exchange)(c_name, c_token, c_path, false, logging_on, env_ptr.cast(), Some(log3))
            },
            None => std::ptr::null_mut(),
        };
        match NonNull::new(inst) {
            Some(inst) => Ok(Self { inst, env, binary: Arc::clone(binary), saved: std::ptr::null_mut() }),
            // SAFETY: no instance was made, so nothing refers to the environment.
            None => Err(InstantiateError::Null(unsafe { InstanceEnv::free(env) })),
        }
    }

    fn me(&self) -> Option<&fmi_api::Fmi3Me> {
        self.binary.me.as_ref()
    }

    /// `fmi3EnterEventMode` (Model Exchange).
    pub(crate) fn me_enter_event_mode(&mut self) -> c_int {
        let Some(f) = self.me().map(|m| m.enter_event_mode) else { return NOT_CALLED };
        // SAFETY: live instance.
        unsafe { f(self.c()) }
    }

    /// `fmi3UpdateDiscreteStates` (Model Exchange) into `out`.
    pub(crate) fn me_update_discrete_states(&mut self, out: &mut EventInfo) -> c_int {
        let Some(f) = self.me().map(|m| m.update_discrete_states) else { return NOT_CALLED };
        let (mut need, mut term, mut nominals, mut values, mut defined, mut next) =
            (false, false, false, false, false, 0.0);
        // SAFETY: live instance; six writable outputs.
        let status = unsafe { f(self.c(), &mut need, &mut term, &mut nominals, &mut values, &mut defined, &mut next) };
        *out = EventInfo {
            new_discrete_states_needed: need,
            terminate_simulation: term,
            nominals_changed: nominals,
            values_changed: values,
            next_event_time: defined.then_some(next),
        };
        status
    }

    /// `fmi3EnterContinuousTimeMode`.
    pub(crate) fn enter_continuous_time_mode(&mut self) -> c_int {
        let Some(f) = self.me().map(|m| m.enter_continuous_time_mode) else { return NOT_CALLED };
        // SAFETY: live instance.
        unsafe { f(self.c()) }
    }

    /// `fmi3CompletedIntegratorStep(noSetFMUStatePriorToCurrentPoint = true)`: (enterEventMode,
    /// terminateSimulation).
    pub(crate) fn completed_integrator_step(&mut self, out: &mut (bool, bool)) -> c_int {
        let Some(f) = self.me().map(|m| m.completed_integrator_step) else { return NOT_CALLED };
        let (mut event, mut terminate) = (false, false);
        // SAFETY: live instance; two writable fmi3Booleans.
        let s = unsafe { f(self.c(), true, &mut event, &mut terminate) };
        *out = (event, terminate);
        s
    }

    /// `fmi3SetTime`.
    pub(crate) fn set_time(&mut self, t: f64) -> c_int {
        let Some(f) = self.me().map(|m| m.set_time) else { return NOT_CALLED };
        // SAFETY: live instance, scalar argument.
        unsafe { f(self.c(), t) }
    }

    /// `fmi3SetContinuousStates`.
    pub(crate) fn set_continuous_states(&mut self, x: &[f64]) -> c_int {
        let Some(f) = self.me().map(|m| m.set_continuous_states) else { return NOT_CALLED };
        // SAFETY: live instance; an array of x.len() reals.
        unsafe { f(self.c(), x.as_ptr(), x.len()) }
    }

    /// `fmi3GetContinuousStates`, `fmi3GetContinuousStateDerivatives`, `fmi3GetEventIndicators`
    /// or `fmi3GetNominalsOfContinuousStates` (`which`) into `out`.
    pub(crate) fn get_vector(&mut self, which: Vector, out: &mut [f64]) -> c_int {
        let Some(me) = self.me() else { return NOT_CALLED };
        let f = match which {
            Vector::States => me.get_continuous_states,
            Vector::Derivatives => me.get_continuous_state_derivatives,
            Vector::EventIndicators => me.get_event_indicators,
            Vector::Nominals => me.get_nominals_of_continuous_states,
        };
        // SAFETY: live instance; an array of out.len() reals.
        unsafe { f(self.c(), out.as_mut_ptr(), out.len()) }
    }

    /// `fmi3GetNumberOfContinuousStates` (`states`) or `fmi3GetNumberOfEventIndicators`: (status,
    /// the number).
    pub(crate) fn number_of(&mut self, states: bool) -> (c_int, usize) {
        let Some(me) = self.me() else { return (NOT_CALLED, 0) };
        let f = if states { me.get_number_of_continuous_states } else { me.get_number_of_event_indicators };
        let mut n = 0usize;
        // SAFETY: live instance; one writable size_t.
        let s = unsafe { f(self.c(), &mut n) };
        (s, n)
    }
}
