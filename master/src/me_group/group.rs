//! [`Group`]: Model Exchange instances integrated as one ODE by one [`crate::ode::Integrator`]
//! (strong coupling, issue 52 item 2). The states of the members are concatenated in member
//! order, and so are their event indicators (the integrator's root functions). At every
//! evaluation of the right-hand side or of the root functions the time and the states of every
//! member are set, the inputs from outside the group (held or extrapolated linearly over the
//! communication step, as for one ME instance) are set, the connections between members are
//! resolved in dependency order (a source output is read only once every input it depends on is
//! set), and the derivatives (or event indicators) are read.
//!
//! Events are the group's: a state event of any member, a time event (the earliest
//! `nextEventTime` of the members), a step event (any member's `completedIntegratorStep`), or a
//! discrete input set from outside puts every member in Event Mode; the event iteration calls
//! every member's `newDiscreteStates` / `updateDiscreteStates` and propagates the connections
//! (Real and discrete) until no member needs new discrete states and no connected input changed;
//! then every member enters Continuous-Time Mode and the integrator restarts from the members'
//! states. `terminateSimulation` from any member ends the run ([`MasterError::Terminated`] naming
//! that member).

use crate::error::{MasterError, Result};
use crate::fmu::me::{
    EventInfo, MeStats, ModelExchange, Vector, MAX_BDF_STATES, MAX_EVENTS_AT_ONE_TIME, MAX_EVENT_INDICATORS,
    MAX_EVENT_ITERATIONS, MAX_STATES,
};
use crate::fmu::{Call, FmuInstance, Value, ValueType};
use crate::ode::{self, Advance, Integrator, OdeError, OdeProblem};
use model_description::BaseType;

/// A Real connection between two members: `dst.dst_vr = gain · src.src_vr + offset`.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) src: usize,
    pub(crate) src_vr: u32,
    pub(crate) dst: usize,
    pub(crate) dst_vr: u32,
    pub(crate) gain: f64,
    pub(crate) offset: f64,
    /// The value set last (the event iteration repeats while a connected input changes).
    pub(crate) last: f64,
}

/// A non-Real connection between two members, copied in the event iteration.
#[derive(Debug, Clone)]
pub(crate) struct DiscreteLink {
    pub(crate) src: usize,
    pub(crate) src_vr: u32,
    pub(crate) dst: usize,
    pub(crate) dst_vr: u32,
    /// The source's base type (its carrier where the instance does not tell its own type).
    pub(crate) ty: BaseType,
    pub(crate) value: Option<Value>,
}

/// Real inputs from outside the group over a communication step: the values set at its start,
/// the first derivatives set by the scheme.
#[derive(Default, Clone)]
pub(crate) struct Inputs {
    pub(crate) vr: Vec<u32>,
    pub(crate) u0: Vec<f64>,
    pub(crate) du: Vec<f64>,
    /// Scratch: the extrapolated values.
    u: Vec<f64>,
}

impl Inputs {
    pub(crate) fn slot(&mut self, vr: u32) -> usize {
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

/// One member: its FMU, where its states and event indicators lie in the group's vectors, its
/// inputs from outside and the inputs the group sets itself.
pub(crate) struct Member {
    pub(crate) fmu: Box<dyn ModelExchange>,
    pub(crate) name: String,
    nx: usize,
    nz: usize,
    x_off: usize,
    z_off: usize,
    pub(crate) inputs: Inputs,
    /// Inputs fed by connections within the group (Real and discrete): the group sets them.
    pub(crate) internal: Vec<u32>,
    next_event: Option<f64>,
    /// `ExitInitialization` done.
    pub(crate) initialized: bool,
}

impl Member {
    pub(crate) fn new(fmu: Box<dyn ModelExchange>, internal: Vec<u32>) -> Self {
        let name = fmu.name().to_owned();
        Self {
            fmu,
            name,
            nx: 0,
            nz: 0,
            x_off: 0,
            z_off: 0,
            inputs: Inputs::default(),
            internal,
            next_event: None,
            initialized: false,
        }
    }
}

/// Everything the right-hand side needs (the integrator apart, so that both can be borrowed).
pub(crate) struct Core {
    pub(crate) members: Vec<Member>,
    /// In dependency order.
    links: Vec<Link>,
    discrete: Vec<DiscreteLink>,
    nx: usize,
    nz: usize,
    /// The step's start: inputs from outside are extrapolated from it.
    t0: f64,
    failure: Option<MasterError>,
    /// Scratch for one value.
    one: [f64; 1],
}

/// What the group saves besides its members' FMU states (iterative coupling): the integrator
/// whole and the bookkeeping of the integration, so that a communication step redone from them
/// gives bit-identical results (as [`crate::fmu::MeInstance`]'s). The counters are not in it.
struct Saved {
    integrator: Option<Box<dyn Integrator>>,
    x: Vec<f64>,
    time: f64,
    next_event: Option<f64>,
    restart: bool,
    event_pending: bool,
    running: bool,
    t0: f64,
    /// Per member: its inputs from outside and its next time event.
    members: Vec<(Inputs, Option<f64>)>,
    links: Vec<f64>,
    discrete: Vec<Option<Value>>,
    terminated: Option<(usize, f64)>,
}

/// A group of Model Exchange instances integrated as one ODE (see the module's text).
pub(crate) struct Group {
    pub(crate) core: Core,
    options: ode::Options,
    integrator: Option<Box<dyn Integrator>>,
    /// The states (a dummy one when no member has any).
    x: Vec<f64>,
    pub(crate) time: f64,
    next_event: Option<f64>,
    /// The integrator restarts before the next step (inputs changed, state restored).
    pub(crate) restart: bool,
    /// Discrete inputs changed: every member is in Event Mode, an event before the next step.
    pub(crate) event_pending: bool,
    /// In Continuous-Time Mode (after the initialization event).
    pub(crate) running: bool,
    stats: MeStats,
    /// Group integrations (communication steps).
    pub(crate) steps: u64,
    /// The group's state besides the members' FMU states, saved with them (iterative coupling).
    saved: Option<Box<Saved>>,
    /// Which member asked to end the simulation, and when.
    pub(crate) terminated: Option<(usize, f64)>,
}

impl Core {
    /// Member `m`'s FMU, where an FMU call site needs a `&mut dyn FmuInstance`.
    fn fmu(&mut self, m: usize) -> &mut dyn ModelExchange {
        self.members[m].fmu.as_mut()
    }

    /// Resolves the Real connections in dependency order; whether a connected input changed.
    fn propagate(&mut self) -> Result<bool> {
        let mut changed = false;
        for k in 0..self.links.len() {
            let (src, src_vr) = (self.links[k].src, self.links[k].src_vr);
            self.members[src].fmu.get_real(&[src_vr], &mut self.one)?;
            let l = &mut self.links[k];
            let v = self.one[0] * l.gain + l.offset;
            if v.to_bits() != l.last.to_bits() {
                changed = true;
                l.last = v;
            }
            let (dst, dst_vr) = (l.dst, l.dst_vr);
            self.members[dst].fmu.set_real(&[dst_vr], &[v])?;
        }
        Ok(changed)
    }

    /// Copies the discrete connections (in Event Mode); whether a value changed.
    fn copy_discrete(&mut self) -> Result<bool> {
        let mut changed = false;
        for k in 0..self.discrete.len() {
            let d = &self.discrete[k];
            let (src, src_vr, dst, dst_vr, ty) = (d.src, d.src_vr, d.dst, d.dst_vr, d.ty);
            let carrier = self.members[src].fmu.value_type(src_vr).unwrap_or_else(|| ValueType::of2(ty)).carrier();
            let mut v = Value::zero(carrier);
            v.read(&mut Up(self.fmu(src)), src_vr)?;
            if self.discrete[k].value.as_ref() != Some(&v) {
                changed = true;
                v.write(&mut Up(self.fmu(dst)), dst_vr)?;
                self.discrete[k].value = Some(v);
            }
        }
        Ok(changed)
    }

    /// Sets every member's time, states and inputs to those at (t, x) and resolves the
    /// connections.
    fn at(&mut self, t: f64, x: &[f64]) -> Result<()> {
        for m in &mut self.members {
            m.fmu.set_time(t)?;
            if m.nx > 0 {
                m.fmu.set_states(&x[m.x_off..m.x_off + m.nx])?;
            }
            if m.inputs.extrapolates() {
                let i = &mut m.inputs;
                i.u.clear();
                i.u.extend(i.u0.iter().zip(&i.du).map(|(u, d)| u + d * (t - self.t0)));
                m.fmu.set_real(&i.vr, &i.u)?;
            }
        }
        self.propagate()?;
        Ok(())
    }

    fn fail(&mut self, e: MasterError) -> OdeError {
        let message = e.to_string();
        self.failure = Some(e);
        OdeError::new(message)
    }
}

impl OdeProblem for Core {
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
            }
            for m in &mut self.members {
                if m.nx > 0 {
                    m.fmu.vector(Vector::Derivatives, &mut dx[m.x_off..m.x_off + m.nx])?;
                }
            }
            Ok(())
        });
        r.map_err(|e| self.fail(e))
    }
    fn roots(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> std::result::Result<(), OdeError> {
        if self.nz == 0 {
            return Ok(());
        }
        let r = self.at(t, x).and_then(|()| {
            for m in &mut self.members {
                if m.nz > 0 {
                    m.fmu.vector(Vector::EventIndicators, &mut g[m.z_off..m.z_off + m.nz])?;
                }
            }
            Ok(())
        });
        r.map_err(|e| self.fail(e))
    }
}

/// A member's FMU as a `dyn FmuInstance` (for [`Value::read`] and [`Value::write`]).
struct Up<'a>(&'a mut dyn ModelExchange);

impl FmuInstance for Up<'_> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn version(&self) -> crate::fmu::Version {
        self.0.version()
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        self.0.execute(call)
    }
    fn value_type(&self, vr: u32) -> Option<ValueType> {
        self.0.value_type(vr)
    }
    fn can_interpolate_inputs(&self) -> bool {
        true
    }
}

impl Group {
    /// Members in group order; `links` in dependency order.
    pub(crate) fn new(
        members: Vec<Member>,
        links: Vec<Link>,
        discrete: Vec<DiscreteLink>,
        options: ode::Options,
    ) -> Self {
        Self {
            core: Core { members, links, discrete, nx: 0, nz: 0, t0: 0.0, failure: None, one: [0.0] },
            options,
            integrator: None,
            x: Vec::new(),
            time: 0.0,
            next_event: None,
            restart: false,
            event_pending: false,
            running: false,
            stats: MeStats::default(),
            steps: 0,
            saved: None,
            terminated: None,
        }
    }

    /// The counters so far (summary.json: every member reports its group's).
    pub(crate) fn stats(&self) -> MeStats {
        let mut s = self.stats;
        s.solver = self.integrator.as_ref().map(|i| i.stats()).unwrap_or_default();
        s
    }

    fn names(&self) -> String {
        self.core.members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    fn solver_error(&self, function: &'static str, e: OdeError) -> MasterError {
        MasterError::Worker {
            instance: self.core.members.first().map(|m| m.name.clone()).unwrap_or_default(),
            function,
            time: self.time,
            message: format!(
                "the {:?} integrator of the strongly coupled Model Exchange instances {} failed: {e}",
                self.options.method,
                self.names()
            ),
        }
    }

    /// Runs `f` on the integrator with the members as its problem.
    fn with_problem<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Integrator, &mut dyn OdeProblem) -> std::result::Result<R, OdeError>,
    ) -> Result<R> {
        let Some(integrator) = self.integrator.as_deref_mut() else {
            return Err(self.solver_error("DoStep", OdeError::new("not initialized (ExitInitialization first)")));
        };
        self.core.failure = None;
        let r = f(integrator, &mut self.core);
        match (r, self.core.failure.take()) {
            (Ok(v), _) => Ok(v),
            (Err(_), Some(e)) => Err(e),
            (Err(e), None) => Err(self.solver_error("DoStep", e)),
        }
    }

    /// Restarts the integrator at the current time from the members' states.
    fn restart(&mut self) -> Result<()> {
        let mut x = std::mem::take(&mut self.x);
        for m in &mut self.core.members {
            if m.nx > 0 {
                m.fmu.vector(Vector::States, &mut x[m.x_off..m.x_off + m.nx])?;
            }
        }
        let t = self.time;
        let r = self.with_problem(|i, p| i.reset(p, t, &x));
        self.x = x;
        self.restart = false;
        r?;
        // The integrator evaluated the members at trial points: back to the state at t.
        self.set_point(t)
    }

    /// Sets every member's time, states (`self.x`) and inputs to those at `t`.
    fn set_point(&mut self, t: f64) -> Result<()> {
        let x = std::mem::take(&mut self.x);
        let r = self.core.at(t, &x);
        self.x = x;
        r
    }

    /// Member `m`'s event update function (named in errors).
    fn update_function(&self, m: usize) -> &'static str {
        match self.core.members[m].fmu.version() {
            crate::fmu::Version::Fmi2 => "fmi2NewDiscreteStates",
            crate::fmu::Version::Fmi3 => "fmi3UpdateDiscreteStates",
        }
    }

    /// An error of member `m`'s event handling at the current time.
    fn misuse(&self, m: usize, function: &'static str, message: String) -> MasterError {
        MasterError::Worker { instance: self.core.members[m].name.clone(), function, time: self.time, message }
    }

    /// Member `m` asked to end the simulation at `t`.
    fn terminated(&mut self, m: usize, t: f64) -> MasterError {
        self.terminated = Some((m, t));
        MasterError::Terminated { instance: self.core.members[m].name.clone(), time: t }
    }

    /// The event iteration with every member in Event Mode, back to Continuous-Time Mode, then
    /// the restart.
    fn event_iteration(&mut self) -> Result<()> {
        self.core.propagate()?;
        self.core.copy_discrete()?;
        let mut rounds = 0u32;
        loop {
            rounds += 1;
            if rounds > MAX_EVENT_ITERATIONS {
                return Err(MasterError::Worker {
                    instance: self.core.members.first().map(|m| m.name.clone()).unwrap_or_default(),
                    function: self.update_function(0),
                    time: self.time,
                    message: format!(
                        "the event iteration of the strongly coupled Model Exchange instances {} did not \
                         converge in {MAX_EVENT_ITERATIONS} rounds at t = {} (a member still needs new \
                         discrete states, or connected values keep changing)",
                        self.names(),
                        self.time
                    ),
                });
            }
            let mut needed = false;
            for k in 0..self.core.members.len() {
                let info: EventInfo = self.core.members[k].fmu.update_discrete_states()?;
                if info.terminate_simulation {
                    return Err(self.terminated(k, self.time));
                }
                needed |= info.new_discrete_states_needed;
                if let Some(te) = info.next_event_time.filter(|te| *te < self.time || te.is_nan()) {
                    return Err(self.misuse(
                        k,
                        self.update_function(k),
                        format!(
                            "nextEventTime = {te} is before the current time t = {} (a time event in the past)",
                            self.time
                        ),
                    ));
                }
                self.core.members[k].next_event = info.next_event_time;
            }
            // Once more while a member needs it or a connected value changed (its destination
            // has not seen it in an update yet).
            let moved = self.core.propagate()? | self.core.copy_discrete()?;
            if !needed && !moved {
                break;
            }
        }
        for m in &mut self.core.members {
            m.fmu.enter_continuous_time_mode()?;
        }
        self.next_event = self.core.members.iter().filter_map(|m| m.next_event).reduce(f64::min);
        self.restart()
    }

    /// After every member's ExitInitialization: the initialization event, the integrator made
    /// and started.
    pub(crate) fn start(&mut self) -> Result<()> {
        let (mut nx, mut nz) = (0, 0);
        for m in &mut self.core.members {
            let (x, z) = m.fmu.sizes()?;
            (m.nx, m.nz, m.x_off, m.z_off) = (x, z, nx, nz);
            nx += x;
            nz += z;
        }
        let bdf = self.options.method == ode::Method::Bdf;
        let limit = if bdf { MAX_BDF_STATES } else { MAX_STATES };
        let too_many = if nx > limit {
            let why = if bdf { " (the BDF's Jacobian is dense; Euler and RK4 take up to 100000)" } else { "" };
            Some(format!("together {nx} continuous states, more than cosim's limit of {limit}{why}"))
        } else if nz > MAX_EVENT_INDICATORS {
            Some(format!("together {nz} event indicators, more than cosim's limit of {MAX_EVENT_INDICATORS}"))
        } else {
            None
        };
        if let Some(message) = too_many {
            let message = format!("the strongly coupled Model Exchange instances {} declare {message}", self.names());
            return Err(self.misuse(0, "ExitInitialization", message));
        }
        self.core.nx = nx;
        self.core.nz = nz;
        self.x = vec![0.0; nx.max(1)];
        self.integrator = Some(
            ode::integrator(nx.max(1), nz, &self.options).map_err(|e| self.solver_error("ExitInitialization", e))?,
        );
        self.running = true;
        self.event_iteration()
    }

    /// Every member enters Event Mode (an event the group handles).
    pub(crate) fn enter_event_mode(&mut self) -> Result<()> {
        for m in &mut self.core.members {
            m.fmu.enter_event_mode()?;
        }
        Ok(())
    }

    fn event(&mut self) -> Result<()> {
        self.stats.events += 1;
        self.enter_event_mode()?;
        self.event_iteration()
    }

    /// Integrates from `t` to `t + h`; nothing when the group is there already (another
    /// member's step of the same communication step).
    pub(crate) fn integrate(&mut self, t: f64, h: f64) -> Result<()> {
        if !self.running {
            return Err(self.solver_error("DoStep", OdeError::new("not initialized (ExitInitialization first)")));
        }
        let t_end = t + h;
        let tol = 1e-12 * t_end.abs().max(h.abs()).max(1e-300);
        if self.time >= t_end - tol {
            return Ok(());
        }
        self.steps += 1;
        self.core.t0 = t;
        if self.event_pending {
            // Event Mode entered when the discrete inputs were set.
            self.event_pending = false;
            self.stats.events += 1;
            self.event_iteration()?;
        } else if self.restart {
            self.restart()?;
        }
        let mut at_one_time = (self.time, 0u32);
        while self.time < t_end {
            if self.next_event.is_some_and(|te| te <= self.time) {
                if at_one_time.0 == self.time {
                    at_one_time.1 += 1;
                    if at_one_time.1 > MAX_EVENTS_AT_ONE_TIME {
                        let message = format!(
                            "{MAX_EVENTS_AT_ONE_TIME} time events at t = {} without the time advancing \
                             (nextEventTime is the current time again and again)",
                            self.time
                        );
                        let m = self.core.members.iter().position(|m| m.next_event == self.next_event).unwrap_or(0);
                        return Err(self.misuse(m, self.update_function(m), message));
                    }
                } else {
                    at_one_time = (self.time, 1);
                }
                self.stats.time_events += 1;
                self.event()?;
                continue;
            }
            let t_stop = self.next_event.map_or(t_end, |te| te.min(t_end));
            let advance = self.with_problem(|i, p| i.step(p, t_stop))?;
            let (ti, root) = match advance {
                Advance::Step { t } => (t, false),
                Advance::Root { t, .. } => (t, true),
            };
            self.time = ti;
            // The members at the accepted point (the integrator's last evaluation may be elsewhere).
            let Some(integrator) = self.integrator.as_deref() else { break };
            self.x.copy_from_slice(integrator.state());
            self.set_point(ti)?;
            let mut step_event = false;
            for k in 0..self.core.members.len() {
                let (enter, terminate) = self.core.members[k].fmu.completed_integrator_step()?;
                if terminate {
                    return Err(self.terminated(k, ti));
                }
                step_event |= enter;
            }
            let time_event = self.next_event.is_some_and(|te| ti >= te);
            if self.stats.event_due(root, time_event, step_event) {
                self.event()?;
            }
        }
        self.time = t_end;
        Ok(())
    }

    /// The members' FMU states were saved (iterative coupling): the group's state too. Each
    /// member's save calls it; between them nothing changes.
    pub(crate) fn save(&mut self) {
        let c = &self.core;
        self.saved = Some(Box::new(Saved {
            integrator: self.integrator.as_ref().map(|i| i.snapshot()),
            x: self.x.clone(),
            time: self.time,
            next_event: self.next_event,
            restart: self.restart,
            event_pending: self.event_pending,
            running: self.running,
            t0: c.t0,
            members: c.members.iter().map(|m| (m.inputs.clone(), m.next_event)).collect(),
            links: c.links.iter().map(|l| l.last).collect(),
            discrete: c.discrete.iter().map(|d| d.value.clone()).collect(),
            terminated: self.terminated,
        }));
    }

    /// A member's FMU state was restored: the group goes back to its saved state (each member's
    /// restore calls it, the same each time); the integrator continues from its saved history.
    /// Nothing saved: the integrator restarts at the current time from the members' states.
    pub(crate) fn restore(&mut self) -> Result<()> {
        let Some(s) = self.saved.as_deref() else {
            self.restart = true;
            return Ok(());
        };
        match (self.integrator.as_deref_mut(), s.integrator.as_deref()) {
            (Some(now), Some(saved)) => {
                if let Err(e) = now.restore(saved) {
                    return Err(self.solver_error("RestoreState", e));
                }
            }
            (_, saved) => self.integrator = saved.map(|i| i.snapshot()),
        }
        self.x.clone_from(&s.x);
        (self.time, self.next_event, self.restart, self.event_pending, self.running) =
            (s.time, s.next_event, s.restart, s.event_pending, s.running);
        self.terminated = s.terminated;
        let c = &mut self.core;
        c.t0 = s.t0;
        for (m, (inputs, next)) in c.members.iter_mut().zip(&s.members) {
            m.inputs.clone_from(inputs);
            m.next_event = *next;
        }
        for (l, last) in c.links.iter_mut().zip(&s.links) {
            l.last = *last;
        }
        for (d, value) in c.discrete.iter_mut().zip(&s.discrete) {
            d.value.clone_from(value);
        }
        Ok(())
    }
}
