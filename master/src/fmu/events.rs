//! FMI 3.0 Co-Simulation in event mode (`eventModeUsed = true`, issue 43): what
//! [`Fmi3Instance`]'s `fmi3DoStep` does for an FMU that declares `hasEventMode`.
//!
//! A communication step from t to t + h is taken as sub-steps, each ending at an event or at
//! t + h; the master's step is never cut short, the other participants are not interrupted (their
//! inputs, and this FMU's, are held over the step as always; docs/fmi3.md "Event mode"):
//!
//! 1. a sub-step ends at the `nextEventTime` the FMU announced last when it lies inside the step
//!    (a time event: the master lands on it exactly);
//! 2. `fmi3DoStep` may return early (`earlyReturn`, when the FMU declares
//!    `mightReturnEarlyFromDoStep`) at `lastSuccessfulTime`, which must lie in the sub-step;
//! 3. at an event (`eventHandlingNeeded`, or the time event reached) the event iteration:
//!    `fmi3EnterEventMode`, `fmi3UpdateDiscreteStates` until `discreteStatesNeedUpdate` is false
//!    (at most [`MAX_EVENT_ITERATIONS`] times, else an error naming the function), then
//!    `fmi3EnterStepMode`; `nextEventTime` is kept for item 1 and `terminateSimulation` ends
//!    the simulation as in plain Co-Simulation (the step is discarded at the event time).
//!
//! The same iteration runs after `fmi3ExitInitializationMode` (the FMU is in event mode then).
//! Misuse by the FMU is an error naming `fmi3DoStep` and the value: an early return when the
//! master did not allow it, a `lastSuccessfulTime` outside the sub-step, an early return that
//! makes no progress [`MAX_EVENTS_PER_STEP`] times.

use super::ffi::{DISCARD, OK};
use super::instance3::Fmi3Instance;
use super::DiscreteStates;
use crate::error::{MasterError, Result};

/// The most `fmi3UpdateDiscreteStates` calls of one event iteration.
pub(crate) const MAX_EVENT_ITERATIONS: u32 = 1000;

/// The most events inside one communication step.
pub(crate) const MAX_EVENTS_PER_STEP: u32 = 100_000;

/// Event-mode state of an instance.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct EventState {
    /// The `nextEventTime` the FMU announced at its last event iteration.
    pub(crate) next_event_time: Option<f64>,
    /// Event iterations run so far (after initialization included).
    pub(crate) events: u64,
    /// Early returns so far.
    pub(crate) early_returns: u64,
}

impl Fmi3Instance {
    /// Refuses a call whose function the binary does not export.
    pub(super) fn present(&self, function: &'static str, exported: bool) -> Result<()> {
        if exported {
            Ok(())
        } else {
            Err(self.refuse(function, format!("the binary does not export {function}")))
        }
    }

    /// The event-mode counts, to the log at `fmi3Terminate` (level info).
    pub(super) fn note_event_counts(&self) {
        let e = self.events;
        self.raw.env().note(
            OK,
            &format!(
                "event mode: {} event iterations, {} early returns, {} intermediate updates",
                e.events,
                e.early_returns,
                self.raw.env().intermediate_updates()
            ),
        );
    }

    /// An FMU that broke the event-mode contract of `function` at `time`.
    fn misuse(&self, function: &'static str, time: f64, why: String) -> MasterError {
        MasterError::Call {
            instance: self.core.name.clone(),
            function,
            time,
            status: why,
            last_log: self.raw.env().last_message(),
        }
    }

    /// Event mode at `time`: `fmi3EnterEventMode` (unless `in_event_mode`: after initialization),
    /// the `fmi3UpdateDiscreteStates` iteration, `fmi3EnterStepMode`. A `terminateSimulation`
    /// ends the simulation at `time` (the termination protocol of the step).
    pub(super) fn event_iteration(&mut self, time: f64, in_event_mode: bool) -> Result<()> {
        const U: &str = "fmi3UpdateDiscreteStates";
        self.core.time = time;
        if !in_event_mode {
            self.present("fmi3EnterEventMode", self.raw.api().enter_event_mode.is_some())?;
            let s = self.call(super::ffi3::Instance3::enter_event_mode);
            self.check(|| "fmi3EnterEventMode", s)?;
        }
        self.present(U, self.raw.api().update_discrete_states.is_some())?;
        self.present("fmi3EnterStepMode", self.raw.api().enter_step_mode.is_some())?;
        self.events.events += 1;
        if self.cs_clocks() {
            self.clocks_before_update(time, in_event_mode)?;
        }
        let mut out = DiscreteStates::default();
        let mut converged = false;
        for _ in 0..MAX_EVENT_ITERATIONS {
            let s = self.call(|i| i.update_discrete_states(&mut out));
            self.check(|| U, s)?;
            if out.terminate {
                self.terminated = true;
                self.last_time = time;
                self.raw.env().note(OK, &format!("{U} at t = {time}: terminateSimulation = true"));
                if in_event_mode {
                    return Err(self.misuse(U, time, "terminateSimulation = true during initialization".into()));
                }
                // The termination protocol of the step (FmuInstance::do_step): a discard of it.
                return Err(self.misuse("fmi3DoStep", time, format!("fmi3Discard: {U}: terminateSimulation = true")));
            }
            if !out.need_update {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(self.misuse(
                U,
                time,
                format!(
                    "the event iteration did not converge: discreteStatesNeedUpdate was still true after \
                     {MAX_EVENT_ITERATIONS} calls"
                ),
            ));
        }
        self.events.next_event_time = match out.next_event_time {
            Some(te) if te.is_finite() && te >= time => Some(te),
            Some(te) => {
                return Err(self.misuse(
                    U,
                    time,
                    format!("nextEventTime = {te} is not a time at or after the event time {time}"),
                ))
            }
            None => None,
        };
        if self.cs_clocks() {
            self.clocks_after_update(time)?;
        }
        let s = self.call(super::ffi3::Instance3::enter_step_mode);
        self.check(|| "fmi3EnterStepMode", s)
    }

    /// `fmi3DoStep(t, h)` of an instance in event mode (module documentation).
    pub(super) fn step_with_events(&mut self, t: f64, h: f64) -> Result<()> {
        const F: &str = "fmi3DoStep";
        let end = t + h;
        let mut now = t;
        let mut events = 0u32;
        if self.cs_clocks() && self.clockset.due(t) {
            // A triggered input clock activated from a connection since the last step.
            self.event_iteration(t, false)?;
        }
        loop {
            events += 1;
            if events > MAX_EVENTS_PER_STEP {
                return Err(self.misuse(
                    F,
                    now,
                    format!(
                        "more than {MAX_EVENTS_PER_STEP} events or early returns between t = {t} and t = {end} \
                         (the last at t = {now}): the FMU does not advance"
                    ),
                ));
            }
            // A time event inside the step (not at its end: that one is handled after it).
            let announced = self.events.next_event_time.filter(|te| *te > now && *te < end);
            // The next tick of an input clock inside the step (near its end: handled at the end).
            let tick = self.clockset.next_tick(now).filter(|te| *te < end - super::clocks::close(end));
            let time_event = match (announced, tick) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let sub = time_event.map_or(end - now, |te| te - now);
            self.core.time = now;
            let mut r = super::ffi3::StepResult::default();
            let s = self.call(|i| {
                let (status, out) = i.do_step(now, sub, true);
                r = out;
                status
            });
            self.core.steps += 1;
            let last = r.last_successful_time;
            let (status, before) = s;
            self.last_time = if last.is_finite() { last } else { now };
            if status > DISCARD {
                return self.check(|| F, s);
            }
            if r.terminate_simulation {
                self.terminated = true;
                self.raw.env().note(
                    OK,
                    &format!("{F}(t = {now}, h = {sub}): terminateSimulation = true at lastSuccessfulTime = {last}"),
                );
                return self.check(|| F, (DISCARD, before));
            }
            if status == DISCARD {
                return self.check(|| F, s);
            }
            self.check(|| F, s)?;
            let reached = if r.early_return {
                if !self.modes().early_return_allowed {
                    return Err(self.misuse(
                        F,
                        now,
                        format!(
                            "an early return at t = {last} (step t = {now}, h = {sub}) although the master \
                             instantiated it with earlyReturnAllowed = false"
                        ),
                    ));
                }
                if !(last >= now && last <= now + sub) {
                    return Err(self.misuse(
                        F,
                        now,
                        format!(
                            "an early return with lastSuccessfulTime = {last}, outside the step [{now}, {}]",
                            now + sub
                        ),
                    ));
                }
                self.events.early_returns += 1;
                last
            } else {
                time_event.unwrap_or(end)
            };
            let at_time_event = time_event.is_some_and(|te| reached == te);
            let at_end = !r.early_return && time_event.is_none();
            let due_at_end = at_end && (self.events.next_event_time == Some(end) || self.clockset.due(end));
            if r.event_handling_needed || at_time_event || due_at_end {
                self.event_iteration(reached, false)?;
            }
            if at_end || (r.early_return && reached >= end) {
                break;
            }
            now = reached;
        }
        self.core.time = end;
        self.last_time = end;
        Ok(())
    }
}
