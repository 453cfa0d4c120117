//! [`MeInstance`]: a Model Exchange instance that the schemes see as a participant like a
//! Co-Simulation one. It implements [`FmuInstance`]; its `do_step(t, h)` integrates the FMU from
//! t to t + h with an integrator of [`crate::ode`], handling events as the pseudo-code of FMI
//! 2.0.4 §3.2.2 (and FMI 3.0.1 §3.2.5) does:
//!
//! - the initialization event after `ExitInitialization` (the FMU is in Event Mode then);
//! - time events: the integrator stops at `nextEventTime`;
//! - state events: the event indicators are the integrator's root functions (both directions),
//!   the integrator stops at the located time;
//! - step events: `completedIntegratorStep` asks for Event Mode after an accepted step;
//! - event iteration: `newDiscreteStates` / `updateDiscreteStates` until no new discrete states
//!   are needed; `terminateSimulation` ends the run ([`MasterError::Terminated`], as a
//!   Co-Simulation FMU that terminates); after every event the integrator restarts (`reset`)
//!   from the FMU's continuous states (new when `valuesOfContinuousStatesChanged`).
//!
//! Inputs: the values set at a communication point are held over the step; where the scheme
//! sets first-order input derivatives ([`Call::SetInputDerivatives`], order 1), the inputs are
//! extrapolated linearly from the step's start at every evaluation of the right-hand side. A
//! change of a real input restarts the integrator (the right-hand side jumped). Getters after a
//! step read the FMU at t + h (its time and states are set there).
//!
//! FMU states (iterative coupling): [`Call::SaveState`] saves the FMU's state
//! (`fmi2GetFMUstate` / `fmi3GetFMUState`, which the `<ModelExchange>` element must declare) and
//! the integrator's whole state with it ([`Saved`]); [`Call::RestoreState`] sets both back, so that
//! a communication step redone with the same inputs gives bit-identical results.

use super::{Call, FmuInstance, Version};
use crate::error::{MasterError, Result};
use crate::ode::{self, Advance, Integrator, OdeError, OdeProblem};

/// What the event update (`fmi2NewDiscreteStates`, `fmi3UpdateDiscreteStates`) reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventInfo {
    /// `newDiscreteStatesNeeded`: iterate again.
    pub new_discrete_states_needed: bool,
    /// `terminateSimulation`.
    pub terminate_simulation: bool,
    /// `nominalsOfContinuousStatesChanged`.
    pub nominals_changed: bool,
    /// `valuesOfContinuousStatesChanged`.
    pub values_changed: bool,
    /// `nextEventTime` when `nextEventTimeDefined`.
    pub next_event_time: Option<f64>,
}

/// The vectors of reals an ME instance reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vector {
    /// `fmi2GetContinuousStates`.
    States,
    /// `fmi2GetDerivatives` / `fmi3GetContinuousStateDerivatives`.
    Derivatives,
    /// `fmi2GetEventIndicators`.
    EventIndicators,
    /// `fmi2GetNominalsOfContinuousStates`.
    Nominals,
}

/// The Model Exchange calls of one FMU instance (FMI 2.0 or 3.0), each error naming its
/// function; implemented by the versions' instances.
pub trait ModelExchange: FmuInstance {
    /// Number of continuous states and of event indicators.
    fn sizes(&mut self) -> Result<(usize, usize)>;
    /// Reads one of the vectors into `out`.
    fn vector(&mut self, which: Vector, out: &mut [f64]) -> Result<()>;
    /// `fmi2SetTime`.
    fn set_time(&mut self, t: f64) -> Result<()>;
    /// `fmi2SetContinuousStates`.
    fn set_states(&mut self, x: &[f64]) -> Result<()>;
    /// `fmi2EnterEventMode`.
    fn enter_event_mode(&mut self) -> Result<()>;
    /// `fmi2NewDiscreteStates` / `fmi3UpdateDiscreteStates`.
    fn update_discrete_states(&mut self) -> Result<EventInfo>;
    /// `fmi2EnterContinuousTimeMode`.
    fn enter_continuous_time_mode(&mut self) -> Result<()>;
    /// `fmi2CompletedIntegratorStep(noSetFMUStatePriorToCurrentPoint = true)`: (enterEventMode,
    /// terminateSimulation).
    fn completed_integrator_step(&mut self) -> Result<(bool, bool)>;
}

/// Counters of an ME instance's integration (summary.json).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeStats {
    /// The integrator's counters, summed over its restarts.
    pub solver: ode::Stats,
    /// Events handled (time, state and step events; the initialization event not counted).
    pub events: u64,
    /// Of which time events.
    pub time_events: u64,
    /// Of which state events.
    pub state_events: u64,
    /// Of which step events.
    pub step_events: u64,
}

impl MeStats {
    /// After an accepted step: whether an event is due (a root, a time event reached, or the
    /// FMU's step event), counted by kind (a root before a time event before a step event).
    pub(crate) fn event_due(&mut self, root: bool, time_event: bool, step_event: bool) -> bool {
        if root {
            self.state_events += 1;
        } else if time_event {
            self.time_events += 1;
        } else if step_event {
            self.step_events += 1;
        }
        root || time_event || step_event
    }
}

/// The most continuous states an ME instance may declare (checked before anything is allocated
/// for them): beyond it the vectors alone are hundreds of megabytes.
pub const MAX_STATES: usize = 100_000;
/// The most continuous states the BDF integrates: its Jacobian is dense (n² reals; 200 MB and
/// an LU of 4e10 operations at this size).
pub const MAX_BDF_STATES: usize = 5_000;
/// The most event indicators an ME instance may declare.
pub const MAX_EVENT_INDICATORS: usize = 1_000_000;
/// The most calls of one event iteration (`newDiscreteStatesNeeded` still true after them: the
/// iteration does not converge), as in Co-Simulation event mode.
pub const MAX_EVENT_ITERATIONS: u32 = 1000;
/// The most events at one time (an FMU whose `nextEventTime` is the current time again and again).
pub const MAX_EVENTS_AT_ONE_TIME: u32 = 1000;

/// [`Call::GetRealStatus`] of kind `SOLVER_STATS_KIND + i` answers counter `i` of
/// [`MeStats::counters`] (exact up to 2⁵³): how the master reads the statistics of an ME instance
/// in a worker process (`--isolate`). No FMU is called.
pub const SOLVER_STATS_KIND: i32 = 1000;

impl MeStats {
    /// The number of counters.
    pub const COUNTERS: usize = 11;

    /// Every counter, in a fixed order (read back by [`MeStats::from_counters`]).
    pub fn counters(&self) -> [u64; Self::COUNTERS] {
        let s = &self.solver;
        [
            s.steps,
            s.rhs_evaluations,
            s.root_evaluations,
            s.jacobians,
            s.rejected_steps,
            s.error_test_failures,
            s.convergence_failures,
            self.events,
            self.time_events,
            self.state_events,
            self.step_events,
        ]
    }

    /// The statistics of [`MeStats::counters`].
    pub fn from_counters(c: [u64; Self::COUNTERS]) -> Self {
        let [steps, rhs_evaluations, root_evaluations, jacobians, rejected_steps, error_test_failures, convergence_failures, events, time_events, state_events, step_events] =
            c;
        Self {
            solver: ode::Stats {
                steps,
                rhs_evaluations,
                root_evaluations,
                jacobians,
                rejected_steps,
                error_test_failures,
                convergence_failures,
            },
            events,
            time_events,
            state_events,
            step_events,
        }
    }
}

/// Real inputs over a step: the values set at its start, the first derivatives set by the scheme.
#[derive(Default, Clone)]
struct Inputs {
    vr: Vec<u32>,
    u0: Vec<f64>,
    du: Vec<f64>,
    t0: f64,
    /// Scratch: the extrapolated values.
    u: Vec<f64>,
}

impl Inputs {
    fn slot(&mut self, vr: u32) -> usize {
        match self.vr.iter().position(|&r| r == vr) {
            Some(i) => i,
            None => {
                self.vr.push(vr);
                self.u0.push(f64::NAN);
                self.du.push(0.0);
                self.vr.len() - 1
            }
        }
    }
    fn extrapolates(&self) -> bool {
        self.du.iter().any(|d| *d != 0.0)
    }
}

/// The FMU as the integrator's problem, for the duration of one integrator call.
struct Problem<'a, F: ModelExchange> {
    fmu: &'a mut F,
    nx: usize,
    nz: usize,
    inputs: &'a mut Inputs,
    failure: &'a mut Option<MasterError>,
}

impl<F: ModelExchange> Problem<'_, F> {
    fn at(&mut self, t: f64, x: &[f64]) -> Result<()> {
        self.fmu.set_time(t)?;
        if self.nx > 0 {
            self.fmu.set_states(x)?;
        }
        if self.inputs.extrapolates() {
            let i = &mut *self.inputs;
            i.u.clear();
            i.u.extend(i.u0.iter().zip(&i.du).map(|(u, d)| u + d * (t - i.t0)));
            self.fmu.set_real(&i.vr, &i.u)?;
        }
        Ok(())
    }

    fn fail(&mut self, e: MasterError) -> OdeError {
        let message = e.to_string();
        *self.failure = Some(e);
        OdeError::new(message)
    }
}

impl<F: ModelExchange> OdeProblem for Problem<'_, F> {
    fn dim(&self) -> usize {
        self.nx.max(1)
    }
    fn n_roots(&self) -> usize {
        self.nz
    }
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> std::result::Result<(), OdeError> {
        let r = self.at(t, x).and_then(|()| {
            if self.nx == 0 {
                dx.fill(0.0);
                Ok(())
            } else {
                self.fmu.vector(Vector::Derivatives, dx)
            }
        });
        r.map_err(|e| self.fail(e))
    }
    fn roots(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> std::result::Result<(), OdeError> {
        if self.nz == 0 {
            return Ok(());
        }
        let r = self.at(t, x).and_then(|()| self.fmu.vector(Vector::EventIndicators, g));
        r.map_err(|e| self.fail(e))
    }
}

/// What an ME instance saves besides its FMU state ([`Call::SaveState`], iterative coupling):
/// the integrator whole (history, step size, order, Jacobian, root values) and the bookkeeping of
/// the integration (time, pending events and steps, inputs), so that a step redone from the
/// saved state gives bit-identical results. The counters are not in it: they count the work
/// done, repetitions included.
struct Saved {
    integrator: Option<Box<dyn Integrator>>,
    x: Vec<f64>,
    time: f64,
    next_event: Option<f64>,
    restart: bool,
    event_pending: bool,
    running: bool,
    inputs: Inputs,
    terminated_at: Option<f64>,
    ahead_of: Option<f64>,
    pending: Option<(f64, bool)>,
}

/// A Model Exchange instance driven by the master's integrator (see the module's text).
pub struct MeInstance<F: ModelExchange> {
    fmu: F,
    options: ode::Options,
    integrator: Option<Box<dyn Integrator>>,
    nx: usize,
    nz: usize,
    /// The states (a dummy one when the FMU has none).
    x: Vec<f64>,
    time: f64,
    next_event: Option<f64>,
    /// The integrator restarts before the next step (inputs changed, state restored).
    restart: bool,
    /// Discrete inputs changed: an event before the next step.
    event_pending: bool,
    /// In Continuous-Time Mode (after the initialization event).
    running: bool,
    inputs: Inputs,
    stats: MeStats,
    /// The counters of the integrators replaced so far.
    past: ode::Stats,
    steps: u64,
    /// The instance's state besides the FMU's, saved with it ([`Call::SaveState`]).
    saved: Option<Box<Saved>>,
    /// Where the FMU asked to end the simulation.
    terminated_at: Option<f64>,
    /// The run's stop time (`Setup`): how far the BDF may step past a communication point.
    stop: Option<f64>,
    /// The communication point last reached, when the integrator stepped past it ([`Self::time`]
    /// is then the integrator's, later): the FMU is set to the interpolated state there.
    ahead_of: Option<f64>,
    /// An internal step that ended past the last communication point, not yet completed
    /// (`completedIntegratorStep`, its event): (its end, whether a root stopped it).
    pending: Option<(f64, bool)>,
}

impl<F: ModelExchange> MeInstance<F> {
    /// The instance `fmu` (instantiated for Model Exchange), integrated with `options`.
    pub fn new(fmu: F, options: ode::Options) -> Self {
        Self {
            fmu,
            options,
            integrator: None,
            nx: 0,
            nz: 0,
            x: Vec::new(),
            time: 0.0,
            next_event: None,
            restart: false,
            event_pending: false,
            running: false,
            inputs: Inputs::default(),
            stats: MeStats::default(),
            past: ode::Stats::default(),
            steps: 0,
            saved: None,
            terminated_at: None,
            stop: None,
            ahead_of: None,
            pending: None,
        }
    }

    /// The FMU instance.
    pub fn inner(&self) -> &F {
        &self.fmu
    }

    /// The FMU instance, for calls of its own between steps (`cosim check`'s Model Exchange
    /// checks evaluate it at points of their choosing and set it back).
    pub fn inner_mut(&mut self) -> &mut F {
        &mut self.fmu
    }

    /// The FMU instance and the integrator's options, before `ExitInitialization`: a member of a
    /// group of ME instances integrated as one ODE (`crate::me_group`).
    pub fn into_parts(self) -> (F, ode::Options) {
        (self.fmu, self.options)
    }

    /// The counters so far.
    pub fn stats(&self) -> MeStats {
        let mut s = self.stats;
        let now = self.integrator.as_ref().map(|i| i.stats()).unwrap_or_default();
        s.solver = add(self.past, now);
        s
    }

    fn solver_error(&self, function: &'static str, e: OdeError) -> MasterError {
        MasterError::Worker {
            instance: self.fmu.name().to_owned(),
            function,
            time: self.time,
            message: format!("the {:?} integrator failed: {e}", self.options.method),
        }
    }

    /// Runs `f` on the integrator with the FMU as its problem.
    fn with_problem<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Integrator, &mut dyn OdeProblem) -> std::result::Result<R, OdeError>,
    ) -> Result<R> {
        let mut failure = None;
        let Some(integrator) = self.integrator.as_deref_mut() else {
            return Err(self.solver_error("DoStep", OdeError::new("not initialized (ExitInitialization first)")));
        };
        let mut problem =
            Problem { fmu: &mut self.fmu, nx: self.nx, nz: self.nz, inputs: &mut self.inputs, failure: &mut failure };
        let r = f(integrator, &mut problem);
        match (r, failure) {
            (Ok(v), _) => Ok(v),
            (Err(_), Some(e)) => Err(e),
            (Err(e), None) => Err(self.solver_error("DoStep", e)),
        }
    }

    /// Restarts the integrator at the current time from the FMU's states.
    fn restart(&mut self) -> Result<()> {
        if self.nx > 0 {
            self.fmu.vector(Vector::States, &mut self.x)?;
        }
        let (t, x) = (self.time, std::mem::take(&mut self.x));
        let r = self.with_problem(|i, p| i.reset(p, t, &x));
        self.x = x;
        self.restart = false;
        r?;
        // The integrator evaluated the FMU at trial points: back to the state at t.
        self.set_point(t)
    }

    /// Sets the FMU's time, states (`self.x`) and extrapolated inputs to those at `t`.
    fn set_point(&mut self, t: f64) -> Result<()> {
        let x = std::mem::take(&mut self.x);
        let mut failure = None;
        let r =
            Problem { fmu: &mut self.fmu, nx: self.nx, nz: self.nz, inputs: &mut self.inputs, failure: &mut failure }
                .at(t, &x);
        self.x = x;
        r
    }

    /// The version's name of the event update (named in errors).
    fn update_function(&self) -> &'static str {
        match self.fmu.version() {
            Version::Fmi2 => "fmi2NewDiscreteStates",
            Version::Fmi3 => "fmi3UpdateDiscreteStates",
        }
    }

    /// An error of the FMU's event handling at the current time, naming `function`.
    fn misuse(&self, function: &'static str, message: String) -> MasterError {
        MasterError::Worker { instance: self.fmu.name().to_owned(), function, time: self.time, message }
    }

    /// The event iteration from Event Mode back to Continuous-Time Mode, then the restart. At
    /// most [`MAX_EVENT_ITERATIONS`] calls; a `nextEventTime` before the current time is refused.
    fn event_iteration(&mut self) -> Result<()> {
        let mut info = self.fmu.update_discrete_states()?;
        let mut calls = 1;
        while info.new_discrete_states_needed && !info.terminate_simulation {
            if calls >= MAX_EVENT_ITERATIONS {
                let function = self.update_function();
                return Err(self.misuse(
                    function,
                    format!(
                        "the event iteration did not converge: newDiscreteStatesNeeded is still true after \
                         {calls} calls at t = {}",
                        self.time
                    ),
                ));
            }
            info = self.fmu.update_discrete_states()?;
            calls += 1;
        }
        if info.terminate_simulation {
            return Err(self.terminated(self.time));
        }
        if let Some(te) = info.next_event_time.filter(|te| *te < self.time || te.is_nan()) {
            let function = self.update_function();
            return Err(self.misuse(
                function,
                format!("nextEventTime = {te} is before the current time t = {} (a time event in the past)", self.time),
            ));
        }
        self.fmu.enter_continuous_time_mode()?;
        self.next_event = info.next_event_time;
        self.restart()
    }

    /// After ExitInitialization: the initialization event, the integrator made and started.
    fn start(&mut self, t: f64) -> Result<()> {
        let (nx, nz) = self.fmu.sizes()?;
        let bdf = self.options.method == ode::Method::Bdf;
        let limit = if bdf { MAX_BDF_STATES } else { MAX_STATES };
        let too_many = if nx > limit {
            let why = if bdf { " (the BDF's Jacobian is dense; Euler and RK4 take up to 100000)" } else { "" };
            Some(format!("the FMU declares {nx} continuous states, more than cosim's limit of {limit}{why}"))
        } else if nz > MAX_EVENT_INDICATORS {
            Some(format!("the FMU declares {nz} event indicators, more than cosim's limit of {MAX_EVENT_INDICATORS}"))
        } else {
            None
        };
        if let Some(message) = too_many {
            let function = super::Op::ExitInitialization.function(self.fmu.version());
            self.time = t;
            return Err(self.misuse(function, message));
        }
        self.nx = nx;
        self.nz = nz;
        self.x = vec![0.0; nx.max(1)];
        self.time = t;
        self.integrator = Some(
            ode::integrator(nx.max(1), nz, &self.options).map_err(|e| self.solver_error("ExitInitialization", e))?,
        );
        self.running = true;
        self.event_iteration()
    }

    /// The FMU asked to end the simulation at `t`: the step is discarded and the status calls
    /// say so, as a Co-Simulation FMU's (FMI 2.0 §4.2.3; [`FmuInstance::do_step`] turns it into
    /// [`MasterError::Terminated`], in process and through a worker process alike).
    fn terminated(&mut self, t: f64) -> MasterError {
        self.terminated_at = Some(t);
        let version = self.fmu.version();
        let prefix = if version == Version::Fmi2 { "fmi2" } else { "fmi3" };
        MasterError::Call {
            instance: self.fmu.name().to_owned(),
            function: super::Op::DoStep.function(version),
            time: t,
            status: format!("{prefix}Discard"),
            last_log: format!("terminateSimulation at t = {t}"),
        }
    }

    fn event(&mut self) -> Result<()> {
        self.stats.events += 1;
        self.fmu.enter_event_mode()?;
        self.event_iteration()
    }

    /// Integrates from `t` to `t + h`.
    ///
    /// The BDF of an instance whose real inputs are not set during the run steps past the
    /// communication points (towards the stop time, the next time event or a root, as CVODE's
    /// `CV_NORMAL` that FMPy uses) and leaves the FMU at the state interpolated at `t + h`; the
    /// internal step that ended past it is completed (`completedIntegratorStep`, its event) in the
    /// next call. Landing on every communication point instead would reset the BDF's order at
    /// each one. Where inputs are set at communication points, or inputs change while the
    /// integrator is ahead (the step past the point is then dropped and the integrator restarts
    /// there), and for the fixed-step methods, every communication point is an integrator stop.
    fn integrate(&mut self, t: f64, h: f64) -> Result<()> {
        if !self.running {
            return Err(self.solver_error("DoStep", OdeError::new("not initialized (ExitInitialization first)")));
        }
        self.steps += 1;
        let t_end = t + h;
        self.inputs.t0 = t;
        if let Some(tc) = self.ahead_of.take() {
            if self.event_pending || self.restart {
                // Inputs changed at the communication point: the step past it is void.
                self.pending = None;
                self.time = tc;
            }
        }
        if self.event_pending {
            // Event Mode entered when the discrete inputs were set.
            self.event_pending = false;
            self.stats.events += 1;
            self.event_iteration()?;
        } else if self.restart {
            self.restart()?;
        }
        if let Some((ti, root)) = self.pending {
            if ti > t_end {
                return self.output_at(t_end);
            }
            self.pending = None;
            self.complete_step(ti, root)?;
        }
        let dense = self.options.method == ode::Method::Bdf
            && self.inputs.vr.is_empty()
            && self.stop.is_some_and(|stop| stop > t_end);
        let horizon = if dense { self.stop.unwrap_or(t_end) } else { t_end };
        let mut at_one_time = (self.time, 0u32);
        while self.time < t_end {
            if self.next_event.is_some_and(|te| te <= self.time) {
                if at_one_time.0 == self.time {
                    at_one_time.1 += 1;
                    if at_one_time.1 > MAX_EVENTS_AT_ONE_TIME {
                        let function = self.update_function();
                        return Err(self.misuse(
                            function,
                            format!(
                                "{MAX_EVENTS_AT_ONE_TIME} time events at t = {} without the time advancing \
                                 (nextEventTime is the current time again and again)",
                                self.time
                            ),
                        ));
                    }
                } else {
                    at_one_time = (self.time, 1);
                }
                self.stats.time_events += 1;
                self.event()?;
                continue;
            }
            let t_stop = self.next_event.map_or(horizon, |te| te.min(horizon));
            let advance = self.with_problem(|i, p| i.step(p, t_stop))?;
            let (ti, root) = match advance {
                Advance::Step { t } => (t, false),
                Advance::Root { t, .. } => (t, true),
            };
            self.time = ti;
            if ti > t_end {
                self.pending = Some((ti, root));
                return self.output_at(t_end);
            }
            self.complete_step(ti, root)?;
        }
        self.time = t_end;
        Ok(())
    }

    /// The FMU at the communication point `t`, inside the integrator's last step: the state
    /// interpolated there.
    fn output_at(&mut self, t: f64) -> Result<()> {
        if let Some(integrator) = self.integrator.as_deref() {
            integrator.interpolate(t, &mut self.x);
        }
        self.ahead_of = Some(t);
        self.set_point(t)
    }

    /// After an accepted internal step (or a root) at `ti`: the FMU set there,
    /// `completedIntegratorStep`, and the event it, a root or a time event asks for.
    fn complete_step(&mut self, ti: f64, root: bool) -> Result<()> {
        // The FMU at the accepted point (the integrator's last evaluation may be elsewhere).
        let Some(integrator) = self.integrator.as_deref() else { return Ok(()) };
        self.x.copy_from_slice(integrator.state());
        self.set_point(ti)?;
        let (step_event, terminate) = self.fmu.completed_integrator_step()?;
        if terminate {
            return Err(self.terminated(ti));
        }
        let time_event = self.next_event.is_some_and(|te| ti >= te);
        if self.stats.event_due(root, time_event, step_event) {
            self.event()?;
        }
        Ok(())
    }
}

impl<F: ModelExchange> MeInstance<F> {
    /// The state besides the FMU's, after the FMU saved its own ([`Saved`]).
    fn save(&mut self) {
        let integrator = self.integrator.as_ref().map(|i| i.snapshot());
        let saved = Saved {
            integrator,
            x: self.x.clone(),
            time: self.time,
            next_event: self.next_event,
            restart: self.restart,
            event_pending: self.event_pending,
            running: self.running,
            inputs: self.inputs.clone(),
            terminated_at: self.terminated_at,
            ahead_of: self.ahead_of,
            pending: self.pending,
        };
        self.saved = Some(Box::new(saved));
    }

    /// Back to the state [`Self::save`] saved, after the FMU restored its own; the integrator
    /// continues from its saved history (no restart). Nothing saved: the integrator restarts at
    /// the current time from the FMU's states.
    fn restore(&mut self) -> Result<()> {
        let Some(s) = self.saved.as_deref() else {
            (self.ahead_of, self.pending) = (None, None);
            self.restart = true;
            return Ok(());
        };
        match (self.integrator.as_deref_mut(), s.integrator.as_deref()) {
            (Some(now), Some(saved)) => {
                if let Err(e) = now.restore(saved) {
                    let function = super::Op::RestoreState.function(self.fmu.version());
                    return Err(self.solver_error(function, e));
                }
            }
            (now, saved) => {
                if let Some(now) = now {
                    self.past = add(self.past, now.stats());
                }
                self.integrator = saved.map(|i| i.snapshot());
            }
        }
        self.x.clone_from(&s.x);
        self.inputs.clone_from(&s.inputs);
        (self.time, self.next_event, self.restart, self.event_pending, self.running) =
            (s.time, s.next_event, s.restart, s.event_pending, s.running);
        (self.terminated_at, self.ahead_of, self.pending) = (s.terminated_at, s.ahead_of, s.pending);
        Ok(())
    }
}

fn add(a: ode::Stats, b: ode::Stats) -> ode::Stats {
    ode::Stats {
        steps: a.steps + b.steps,
        rhs_evaluations: a.rhs_evaluations + b.rhs_evaluations,
        root_evaluations: a.root_evaluations + b.root_evaluations,
        jacobians: a.jacobians + b.jacobians,
        rejected_steps: a.rejected_steps + b.rejected_steps,
        error_test_failures: a.error_test_failures + b.error_test_failures,
        convergence_failures: a.convergence_failures + b.convergence_failures,
    }
}

impl<F: ModelExchange> FmuInstance for MeInstance<F> {
    fn name(&self) -> &str {
        self.fmu.name()
    }
    fn version(&self) -> Version {
        self.fmu.version()
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match call {
            Call::Setup { start, stop } => {
                self.time = start;
                self.stop = stop;
                self.fmu.execute(Call::Setup { start, stop })
            }
            Call::ExitInitialization => {
                self.fmu.execute(Call::ExitInitialization)?;
                self.start(self.time)
            }
            Call::DoStep { t, h } => self.integrate(t, h),
            Call::GetBooleanStatus { kind: super::call::status_kind::TERMINATED, out } => {
                *out = self.terminated_at.is_some();
                Ok(())
            }
            Call::GetRealStatus { kind: super::call::status_kind::LAST_SUCCESSFUL_TIME, out } => {
                *out = self.terminated_at.or(self.ahead_of).unwrap_or(self.time);
                Ok(())
            }
            Call::GetRealStatus { kind, out } if kind >= SOLVER_STATS_KIND => {
                let i = (kind - SOLVER_STATS_KIND) as usize;
                *out = self.stats().counters().get(i).map_or(f64::NAN, |c| *c as f64);
                Ok(())
            }
            Call::SetFloat64 { vr, values } => {
                self.fmu.execute(Call::SetFloat64 { vr, values })?;
                if self.running {
                    for (r, v) in vr.iter().zip(values) {
                        let i = self.inputs.slot(*r);
                        if self.inputs.u0[i].to_bits() != v.to_bits() {
                            self.restart = true;
                        }
                        self.inputs.u0[i] = *v;
                        self.inputs.du[i] = 0.0;
                    }
                }
                Ok(())
            }
            Call::SetInputDerivatives { vr, order, values } => {
                if order != 1 {
                    return Err(MasterError::Worker {
                        instance: self.fmu.name().to_owned(),
                        function: "SetInputDerivatives",
                        time: self.time,
                        message: format!(
                            "a Model Exchange instance extrapolates its inputs linearly (order 1), not with order {order}"
                        ),
                    });
                }
                for (r, v) in vr.iter().zip(values) {
                    let i = self.inputs.slot(*r);
                    if self.inputs.du[i] != *v {
                        self.restart = true;
                    }
                    self.inputs.du[i] = *v;
                }
                Ok(())
            }
            c @ (Call::SetInt64 { .. } | Call::SetBoolean { .. } | Call::SetString { .. } | Call::SetUInt64 { .. })
                if self.running =>
            {
                // Discrete inputs change in Event Mode (FMI 2.0.4 §3.2.3): an event before the next step.
                if !self.event_pending {
                    self.fmu.enter_event_mode()?;
                    self.event_pending = true;
                }
                self.fmu.execute(c)
            }
            Call::SaveState => {
                self.fmu.execute(Call::SaveState)?;
                self.save();
                Ok(())
            }
            Call::RestoreState => {
                self.fmu.execute(Call::RestoreState)?;
                self.restore()
            }
            other => self.fmu.execute(other),
        }
    }
    fn value_type(&self, vr: u32) -> Option<super::ValueType> {
        self.fmu.value_type(vr)
    }
    fn can_interpolate_inputs(&self) -> bool {
        true
    }
    fn call_stats(&self) -> (f64, u64) {
        (self.fmu.call_stats().0, self.steps)
    }
    fn solver_stats(&mut self) -> Option<MeStats> {
        Some(self.stats())
    }
    fn fmu_warnings(&self) -> u64 {
        self.fmu.fmu_warnings()
    }
    fn set_timing(&mut self, on: bool) {
        self.fmu.set_timing(on);
    }
}
