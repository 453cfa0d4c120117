//! The Model Exchange calls of an [`Instance`] (FMI 2.0 §3.2, FMI 3.0 §3.2): event mode,
//! continuous-time mode, time and continuous states, derivatives, event indicators, nominals.
//! The state machine: `fmi2ExitInitializationMode` leaves an ME instance in event mode;
//! `fmi2EnterContinuousTimeMode` and `fmi2EnterEventMode` switch between the two modes;
//! states are set in continuous-time mode only, the time in either mode; the states, their
//! derivatives, the event indicators and the nominals are read from initialization mode on.
//! Anything else is refused with `fmi2Error` and a message naming the state.

use super::{mask, Instance, Interface, Res, State};
use crate::component::{EventInfo, ModelExchangeCalls};
use crate::model::CoSimModel;
use crate::ode::Ode;
use crate::types::Status;

impl<M: CoSimModel> Instance<M> {
    /// The model's ODE functions, if this is a Model Exchange instance.
    fn ode(&self) -> Res<Ode<M>> {
        match (self.interface, M::model_exchange()) {
            (Interface::ModelExchange, Some(ode)) => Ok(ode),
            (Interface::CoSimulation, _) => Err("this instance was instantiated for Co-Simulation: Model Exchange \
                 calls are not available (event mode is not supported, hasEventMode=\"false\")"
                .into()),
            (Interface::ModelExchange, None) => Err("the model has no continuous states (Model Exchange)".into()),
        }
    }

    /// Runs `f` with the model's ODE table after the interface and state checks.
    fn me_call(&mut self, function: &str, allowed: u16, f: impl FnOnce(&mut Self, Ode<M>) -> Res<Status>) -> Status {
        match self.ode() {
            Ok(ode) => self.call(function, allowed, |s| f(s, ode)),
            Err(m) => self.fail_with(function, &m),
        }
    }

    fn check_n(what: &str, n: usize, expected: usize) -> Res<()> {
        if n == expected {
            Ok(())
        } else {
            Err(format!("{what}: {n} values given, the model has {expected}"))
        }
    }

    /// The state of initialization mode: the model's initial state, computed once more if a
    /// parameter changed (as before a getter).
    fn initialized(&mut self, function: &str) -> Res<Status> {
        if self.state == State::InitializationMode {
            self.refresh(function)
        } else {
            Ok(Status::Ok)
        }
    }
}

impl<M: CoSimModel> ModelExchangeCalls for Instance<M> {
    fn enter_event_mode(&mut self, function: &str) -> Status {
        self.me_call(function, mask::CONTINUOUS, |s, _| {
            s.state = State::EventMode;
            Ok(Status::Ok)
        })
    }

    fn new_discrete_states(&mut self, function: &str) -> Result<EventInfo, Status> {
        // No discrete states, no time events: one event iteration ends at once.
        let status = self.me_call(function, mask::EVENT, |_, _| Ok(Status::Ok));
        match status {
            Status::Ok => Ok(EventInfo::default()),
            s => Err(s),
        }
    }

    fn enter_continuous_time_mode(&mut self, function: &str) -> Status {
        self.me_call(function, mask::EVENT, |s, _| {
            s.state = State::ContinuousTimeMode;
            Ok(Status::Ok)
        })
    }

    fn completed_integrator_step(&mut self, function: &str) -> Result<(bool, bool), Status> {
        match self.me_call(function, mask::CONTINUOUS, |_, _| Ok(Status::Ok)) {
            Status::Ok => Ok((false, false)),
            s => Err(s),
        }
    }

    fn set_time(&mut self, function: &str, t: f64) -> Status {
        self.me_call(function, mask::SET_TIME, |s, _| {
            if !t.is_finite() {
                return Err(format!("time = {t} is not finite"));
            }
            s.time = t;
            s.dirty = true;
            Ok(Status::Ok)
        })
    }

    fn set_continuous_states(&mut self, function: &str, x: &[f64]) -> Status {
        self.me_call(function, mask::CONTINUOUS, |s, ode| {
            Self::check_n("continuous states", x.len(), ode.states.len())?;
            if let Some(i) = x.iter().position(|v| !v.is_finite()) {
                return Err(format!("state \"{}\" cannot be set to {}", ode.states[i].0, x[i]));
            }
            (ode.set)(&mut s.model, x);
            s.dirty = true;
            Ok(Status::Ok)
        })
    }

    fn get_continuous_states(&mut self, function: &str, x: &mut [f64]) -> Status {
        self.me_call(function, mask::ME_GET, |s, ode| {
            Self::check_n("continuous states", x.len(), ode.states.len())?;
            let status = s.initialized(function)?;
            (ode.get)(&s.model, x);
            Ok(status)
        })
    }

    fn get_derivatives(&mut self, function: &str, dx: &mut [f64]) -> Status {
        self.me_call(function, mask::ME_GET, |s, ode| {
            Self::check_n("derivatives", dx.len(), ode.states.len())?;
            let status = s.initialized(function)?;
            let mut ctx = s.context();
            if let Err(e) = (ode.derivatives)(&mut s.model, s.time, dx, &mut ctx) {
                s.flush(function, ctx);
                return Err(format!("derivatives at t = {}: {e}", s.time));
            }
            if let Some(i) = dx.iter().position(|v| !v.is_finite()) {
                s.flush(function, ctx);
                return Err(format!("derivative of \"{}\" = {} at t = {}", ode.states[i].0, dx[i], s.time));
            }
            Ok(status.max(s.flush(function, ctx)))
        })
    }

    fn get_event_indicators(&mut self, function: &str, z: &mut [f64]) -> Status {
        self.me_call(function, mask::ME_GET, |s, ode| {
            Self::check_n("event indicators", z.len(), ode.event_indicators)?;
            let status = s.initialized(function)?;
            (ode.indicators)(&mut s.model, s.time, z).map_err(|e| e.to_string())?;
            Ok(status)
        })
    }

    fn get_nominals(&mut self, function: &str, nominal: &mut [f64]) -> Status {
        self.me_call(function, mask::ANY, |s, ode| {
            Self::check_n("nominals", nominal.len(), ode.states.len())?;
            (ode.nominals)(&s.model, nominal);
            Ok(Status::Ok)
        })
    }

    fn number_of_states(&mut self, function: &str) -> Result<usize, Status> {
        let mut n = 0;
        match self.me_call(function, mask::ANY, |_, ode| {
            n = ode.states.len();
            Ok(Status::Ok)
        }) {
            Status::Ok => Ok(n),
            s => Err(s),
        }
    }

    fn number_of_event_indicators(&mut self, function: &str) -> Result<usize, Status> {
        let mut n = 0;
        match self.me_call(function, mask::ANY, |_, ode| {
            n = ode.event_indicators;
            Ok(Status::Ok)
        }) {
            Status::Ok => Ok(n),
            s => Err(s),
        }
    }
}
