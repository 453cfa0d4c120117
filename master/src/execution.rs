//! [`Execution`]: a validated [`System`] with its instances, stepped by its [`Algorithm`] and
//! watched by [`Observer`]s — the one run loop every front end drives (`cosim run`, tune,
//! bench, the validation report, tests, and a Python binding).
//!
//! One communication step from t_n to t_n + H:
//! 1. [`Coupling::begin_step`]: inputs at t_n (time tables, extrapolated links, feedthrough order),
//!    unless set already at the end of the previous step with nothing changed since;
//! 2. [`Bonds::begin`]: residual power at t_n as the inputs were set;
//! 3. [`Algorithm::step`]: the scheme steps every instance and reads its outputs at t_n + H;
//! 4. [`Bonds::end`]: residual power and energy over the step, the divergence bound;
//! 5. the inputs at t_n + H are set (item 1 for the point reached, the stop time's included), so
//!    that its row shows feedthrough outputs and inputs of its time; the recorded values are read
//!    and every observer's `step` is called.

use crate::algorithm::{self, Algorithm};
use crate::bonds::{BondState, Bonds};
use crate::coupling::Coupling;
use crate::error::{MasterError, Result};
use crate::fmu::{FmuCache, FmuInstance};
use crate::host::StopRequest;
use crate::observer::{BondSummary, InstanceSummary, Observer, Status, Summary};
use crate::step_control::{Ecco, StepControl};
use crate::system::{Overrides, System, SystemBuilder, VarRef};
use model_description::{BaseType, ModelDescription};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Where the run is.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Instances instantiated, not initialized.
    New,
    /// Initialized; stepping.
    Running,
    /// Stopped by an error (the message), an interrupt or an instance that terminated the
    /// simulation; no further steps.
    Stopped(Status, String),
}

/// A system with its instances, ready to step. Instances are initialized on the first
/// [`Execution::step`] (or explicitly by [`Execution::initialize`]); [`Execution::finish`]
/// terminates them and hands every observer the [`Summary`]. A failed step stops the execution:
/// the error is returned, and the summary reports it.
///
/// An instance that ends the simulation (FMI 2.0: `fmi2DoStep` returns `fmi2Discard`, then
/// `fmi2Terminated` is true; see [`FmuInstance::do_step`]) ends the run successfully at its
/// `fmi2LastSuccessfulTime` t_end: the step returns [`MasterError::Terminated`], the outputs are
/// read once more and handed to every observer's [`Observer::end_early`] at t_end (results.csv's
/// last row), [`Execution::run`] / [`Execution::run_until`] return `Ok`, [`Execution::time`] is
/// t_end and the summary's status is [`Status::Terminated`] ("terminated by <instance> at t =
/// t_end"). In a system of several instances the first one to terminate ends the run: the others
/// may have stepped to t_n + H already in that step (Jacobi: all of them; Gauss-Seidel: those
/// before it), their outputs in the last row are as read then.
pub struct Execution {
    system: System,
    instances: Vec<Box<dyn FmuInstance>>,
    coupling: Coupling,
    bonds: Bonds,
    algorithm: Box<dyn Algorithm>,
    observers: Vec<Box<dyn Observer>>,
    /// Values of the recorded variables at the current communication point (read after a step
    /// only when an observer wants them, else on demand: `values_fresh`).
    values: Vec<f64>,
    values_fresh: bool,
    /// Communication steps done.
    steps: u64,
    phase: Phase,
    /// The time an instance ended the simulation at (its fmi2LastSuccessfulTime).
    end_time: Option<f64>,
    wall: Instant,
    interrupt: Option<Arc<dyn StopRequest>>,
    /// Variable communication steps (ECCO), when the system asks for them.
    grid: Option<Grid>,
    /// Unit of each recorded column (`summary.json` `units`).
    units: std::collections::BTreeMap<String, String>,
    /// Paces the steps to the wall clock (real-time runs).
    pacer: Option<crate::realtime::Pacer>,
    /// Values set from outside while the run goes (`[live]` inputs).
    live: Option<Box<dyn InputHook>>,
    /// Declared min/max of each recorded Real column that has one.
    ranges: std::collections::BTreeMap<String, (Option<f64>, Option<f64>)>,
    /// The communication point whose inputs are set, (t, H, H handed to doStep): connections
    /// are propagated (and feedthrough outputs refreshed) before a point's row is written, and
    /// again before its step only when H or an input changed since ([`Execution::propagate`]).
    propagated: Option<(f64, f64, f64)>,
}

/// Values set from outside while the run goes (the `[live]` mailbox of `crate::live`): taken at
/// every communication point, after the pacer's wait and before the step's inputs are set.
pub trait InputHook: Send + std::fmt::Debug {
    /// Applies what changed since the last communication point: overrides a time table's
    /// signal (`Coupling::override_signal`) or sets an instance's input.
    fn apply(&mut self, coupling: &mut crate::coupling::Coupling, instances: &mut [Box<dyn FmuInstance>])
        -> Result<()>;
}

/// The variable-step grid of an ECCO run: time counted in quanta Δ from the start.
struct Grid {
    controller: Ecco,
    params: crate::step_control::EccoParams,
    quantum: f64,
    /// Quanta from the start to now, to the stop time, and to where `run_until` stops.
    now: u64,
    span: u64,
    until: u64,
    /// Time-table breakpoints (quanta after the start), ascending; steps end on them.
    breakpoints: Vec<u64>,
    /// Quanta between output points (`record_every` > 1), 0 for none: steps end on them too,
    /// without restarting the controller.
    output: u64,
    /// Every step taken: (t_{n+1}, H_n, ε_n).
    history: Vec<(f64, f64, f64)>,
}

impl Grid {
    /// Time of `units` quanta after `start`: start + (units·Δ in ps)/10¹² — the nearest double to
    /// the exact decimal time, so that a grid point equals a time-table breakpoint written in
    /// the file (a product units·Δ in floating point can land one ulp before it, and the switch
    /// would wait a step).
    fn time(&self, start: f64, units: u64) -> f64 {
        let ps = (self.quantum * 1e12).round() as u64;
        start + (units * ps) as f64 / 1e12
    }

    /// The next step in quanta: the controller's, cut at the next breakpoint, the stop time and
    /// `run_until`'s target.
    fn next_units(&self) -> u64 {
        // Sorted and distinct: a binary search (a file's 10⁶ times are not scanned every step).
        let next_break = self.breakpoints.get(self.breakpoints.partition_point(|b| *b <= self.now)).copied();
        let next_break = next_break.unwrap_or(u64::MAX);
        let next_output = match self.output {
            0 => u64::MAX,
            k => (self.now / k).saturating_add(1).saturating_mul(k),
        };
        let limit = next_break.min(next_output).min(self.span).min(self.until.max(self.now + 1));
        self.controller.units().min(limit - self.now).max(1)
    }
}

impl Execution {
    /// In-process instances of the system's FMUs, taken from `fmus` (loaded there by
    /// [`SystemBuilder::load`] or [`FmuCache::load`]); one worker process per instance when the
    /// system is isolated (`isolate`). A system with `real_time` is paced.
    pub fn new(system: System, fmus: &FmuCache) -> Result<Self> {
        Self::new_named(system, fmus, "")
    }

    /// [`Execution::new`] with `suffix` appended to each instance name given to the FMU
    /// (distinct names for runs in parallel). An isolated system (`isolate`) runs each instance
    /// in its own worker process instead.
    pub fn new_named(system: System, fmus: &FmuCache, suffix: &str) -> Result<Self> {
        let stop = fmus.host().stop.clone();
        let mut e = if system.isolate() {
            let names = system.instances().iter().map(|s| (s.name.clone(), s.fmu.clone())).collect();
            let (workers, descriptions) = Self::workers(system.path(), names, fmus, |_, e| e)?;
            let mds: Vec<&ModelDescription> = descriptions.iter().collect();
            Self::isolated(system, workers, &mds)?
        } else {
            let mut instances = Vec::with_capacity(system.instances().len());
            for spec in system.instances() {
                let fmu = fmus.get_configured(&spec.fmu, &spec.configuration).ok_or_else(|| MasterError::Fmu {
                    path: spec.fmu.clone(),
                    message: format!("instance {}: this FMU was not loaded into the cache", spec.name),
                })?;
                instances.push(fmu.instantiate(&format!("{}{suffix}", spec.name))?);
            }
            let fmus: Vec<_> =
                system.instances().iter().filter_map(|s| fmus.get_configured(&s.fmu, &s.configuration)).collect();
            let mds: Vec<&ModelDescription> = fmus.iter().map(|f| f.model_description()).collect();
            // Model Exchange instances strongly coupled: each group one ODE (crate::me_group).
            let instances = crate::me_group::assemble(&system, instances, &mds)?;
            Self::with_instances(system, instances, &mds)?
        };
        if let Some(s) = stop {
            e.interrupt_on(s);
        }
        Ok(e)
    }

    /// A system file (or a builder) with its FMUs: in process from `fmus` (loading each FMU once),
    /// or, when isolated (`--isolate` / `[simulation].isolate`), each instance in its own worker
    /// process (the master then loads no FMU binary itself).
    pub fn from_builder(b: &SystemBuilder, over: &Overrides, fmus: &mut FmuCache) -> Result<Self> {
        let settings = b.settings().overridden_by(&over.settings).and_then(|s| s.model_exchange(s.step));
        let (interface, solver) = settings.map_err(|message| MasterError::System {
            path: b.path().to_path_buf(),
            key: "simulation".into(),
            message,
        })?;
        fmus.set_model_exchange(interface, solver);
        if b.isolated(over) {
            let (workers, descriptions) = Self::workers(b.path(), b.fmus(), fmus, |name, e| b.fmu_error(name, e))?;
            let mds: Vec<&ModelDescription> = descriptions.iter().collect();
            let clocks: Vec<&[model_description::Clock3]> = workers.iter().map(|w| w.clocks()).collect();
            let system = b.build_with_clocks(&mds, &clocks, over)?;
            let mut e = Self::isolated(system, workers, &mds)?;
            if let Some(s) = fmus.host().stop.clone() {
                e.interrupt_on(s);
            }
            return Ok(e);
        }
        let system = b.load_with(fmus, over)?;
        Self::new(system, fmus)
    }

    /// One worker process per instance (`(name, FMU file)`), each FMU extracted once and shared
    /// by the workers of its instances; with their model descriptions. `fmu_error` says an
    /// error of instance `name`'s FMU.
    fn workers(
        source: &std::path::Path,
        instances: Vec<(String, std::path::PathBuf)>,
        fmus: &FmuCache,
        fmu_error: impl Fn(&str, MasterError) -> MasterError,
    ) -> Result<(Vec<crate::fmu::IsolatedInstance>, Vec<ModelDescription>)> {
        let exe = crate::fmu::isolated::worker_command(fmus.host()).map_err(|e| MasterError::System {
            path: source.to_path_buf(),
            key: "simulation.isolate".into(),
            message: e.to_string(),
        })?;
        let mut workers = Vec::new();
        let mut descriptions = Vec::new();
        let mut archives: Vec<std::sync::Arc<crate::fmu::Archive>> = Vec::new();
        let cpus = crate::fmu::isolated::worker_cpus(instances.len());
        for ((name, fmu_path), cpu) in instances.into_iter().zip(cpus) {
            let archive = match archives.iter().find(|a| a.source() == fmu_path) {
                Some(a) => std::sync::Arc::clone(a),
                None => {
                    let a = crate::fmu::Archive::extract_in(&fmu_path, fmus.host()).map_err(|e| fmu_error(&name, e))?;
                    let a = std::sync::Arc::new(a);
                    archives.push(std::sync::Arc::clone(&a));
                    a
                }
            };
            let (instance, md) = crate::fmu::IsolatedInstance::spawn_shared(&exe, &archive, &name, cpu)
                .map_err(|e| fmu_error(&name, e))?;
            workers.push(instance);
            descriptions.push(md);
        }
        Ok((workers, descriptions))
    }

    /// The run of `system` on its worker processes (the system's worker timeout set on each).
    fn isolated(system: System, workers: Vec<crate::fmu::IsolatedInstance>, mds: &[&ModelDescription]) -> Result<Self> {
        let instances: Vec<Box<dyn FmuInstance>> = workers
            .into_iter()
            .map(|mut w| {
                w.set_timeout(system.worker_timeout());
                Box::new(w) as Box<dyn FmuInstance>
            })
            .collect();
        Self::with_instances(system, instances, mds)
    }

    /// Paces every following step to the wall clock ([`crate::realtime`]).
    pub fn pace(&mut self, pacer: crate::realtime::Pacer) -> &mut Self {
        self.pacer = Some(pacer);
        self
    }

    /// Unit of each recorded column (`summary.json` `units`: columns without a unit left out).
    pub fn units(&self) -> &std::collections::BTreeMap<String, String> {
        &self.units
    }

    /// The declared min/max of each recorded Real column that declares one.
    pub fn declared_ranges(&self) -> &std::collections::BTreeMap<String, (Option<f64>, Option<f64>)> {
        &self.ranges
    }

    /// The pacer of a real-time run.
    pub fn pacer_mut(&mut self) -> Option<&mut crate::realtime::Pacer> {
        self.pacer.as_mut()
    }

    /// Takes values set from outside at every communication point ([`InputHook`]).
    pub fn live_inputs(&mut self, live: Box<dyn InputHook>) -> &mut Self {
        self.live = Some(live);
        self
    }

    /// With instances made elsewhere (one per system instance, in order; e.g. mocks, or
    /// instances wrapped to record their calls); `mds[i]` is instance i's model description.
    pub fn with_instances(
        system: System,
        instances: Vec<Box<dyn FmuInstance>>,
        mds: &[&ModelDescription],
    ) -> Result<Self> {
        if instances.len() != system.instances().len() || mds.len() != instances.len() {
            return Err(MasterError::System {
                path: system.path().to_path_buf(),
                key: "instances".into(),
                message: format!(
                    "{} instances in the system, but {} instances and {} model descriptions given",
                    system.instances().len(),
                    instances.len(),
                    mds.len()
                ),
            });
        }
        let interpolates: Vec<bool> = instances.iter().map(|s| s.can_interpolate_inputs()).collect();
        let (coupling, bonds) = crate::bonds::couple(&system, mds, &interpolates)?;
        let units = crate::units::output_units(&system, mds);
        let ranges = crate::units::output_ranges(&system, mds);
        let algorithm = algorithm::for_system(&system, &coupling);
        let output = system.step_control().output_units(system.record_every()).unwrap_or(0);
        // Every execution of a paced system is paced, however it was made.
        let pacer =
            system.real_time().map(|rt| crate::realtime::Pacer::new(rt.clone(), system.start(), system.steps()));
        let grid = match system.step_control() {
            StepControl::Fixed => None,
            StepControl::Ecco { params, quantum, units, breakpoints } => {
                let span = ((system.stop() - system.start()) / quantum).round() as u64;
                Some(Grid {
                    controller: Ecco::new(*params, *units),
                    params: *params,
                    quantum: *quantum,
                    now: 0,
                    span,
                    until: span,
                    breakpoints: breakpoints.clone(),
                    output,
                    history: Vec::new(),
                })
            }
        };
        Ok(Self {
            values: Vec::with_capacity(system.outputs().len()),
            values_fresh: false,
            system,
            instances,
            coupling,
            bonds,
            algorithm,
            observers: Vec::new(),
            steps: 0,
            phase: Phase::New,
            end_time: None,
            wall: Instant::now(),
            interrupt: None,
            grid,
            units,
            pacer,
            live: None,
            ranges,
            propagated: None,
        })
    }

    /// Replaces the scheme the system asked for (e.g. a user's own [`Algorithm`]).
    pub fn set_algorithm(&mut self, a: Box<dyn Algorithm>) {
        self.algorithm = a;
    }

    /// Adds an observer; it sees the start (if not yet initialized), every step and the end.
    pub fn observe(&mut self, o: Box<dyn Observer>) -> &mut Self {
        self.observers.push(o);
        self
    }

    /// Stops the run at the next communication point (and iterative coupling between passes)
    /// when `stop` is requested (`cosim`: SIGINT/SIGTERM).
    pub fn interrupt_on(&mut self, stop: Arc<dyn StopRequest>) -> &mut Self {
        self.coupling.stop = Some(Arc::clone(&stop));
        self.interrupt = Some(stop);
        self
    }

    /// Switches the per-instance step timing of the summary on or off (default on).
    pub fn set_timing(&mut self, on: bool) {
        self.coupling.set_timing(on);
    }

    /// The system.
    pub fn system(&self) -> &System {
        &self.system
    }

    /// The instances (for calls outside the run loop; stepping them directly desynchronizes
    /// the coupling).
    pub fn instances_mut(&mut self) -> &mut [Box<dyn FmuInstance>] {
        self.propagated = None;
        &mut self.instances
    }

    /// The simulated time reached (s): the current communication point, or where an instance
    /// ended the simulation.
    pub fn time(&self) -> f64 {
        self.end_time.unwrap_or_else(|| self.grid_time())
    }

    /// The current communication point: start + n·H, or start + (quanta so far)·Δ with ECCO.
    fn grid_time(&self) -> f64 {
        match &self.grid {
            None => self.system.time_at(self.steps),
            Some(g) => g.time(self.system.start(), g.now),
        }
    }

    /// With step control (ECCO): every step taken so far as (t_{n+1}, H_n, ε_n), ε the error
    /// estimate that sized the next step; empty for a fixed step.
    pub fn step_history(&self) -> &[(f64, f64, f64)] {
        self.grid.as_ref().map_or(&[], |g| &g.history)
    }

    /// Whether an instance ended the simulation ([`MasterError::Terminated`]): the run is over,
    /// successfully, at [`Execution::time`].
    pub fn is_terminated(&self) -> bool {
        matches!(self.phase, Phase::Stopped(Status::Terminated, _))
    }

    /// Communication steps done (the one in which an instance ended the simulation included).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Values of the recorded variables ([`System::outputs`], in order) at the current time.
    pub fn recorded(&mut self) -> Result<&[f64]> {
        if !self.values_fresh {
            self.initialized("recorded values")?;
            self.coupling.recorded(&mut self.instances, &mut self.values)?;
            self.values_fresh = true;
        }
        Ok(&self.values)
    }

    /// The recorded non-Real variables' exact values (in the order of their columns) as
    /// [`Execution::recorded`] read them last; empty when none is recorded.
    pub fn recorded_exact(&self) -> &[crate::fmu::Value] {
        self.coupling.recorded_exact().0
    }

    /// Bond states after the last step.
    pub fn bonds(&self) -> &[BondState] {
        self.bonds.states()
    }

    /// Whether Jacobi steps run on worker threads now.
    pub fn uses_threads(&self) -> bool {
        self.algorithm.uses_threads()
    }

    /// Iterative coupling: (passes done, steps that ended unconverged at the pass limit).
    pub fn iteration_stats(&self) -> (u64, u64) {
        let s = self.algorithm.stats();
        (s.iterations, s.unconverged_steps)
    }

    /// Seconds inside doStep and macro-step doStep calls per instance.
    pub fn step_stats(&self) -> Vec<(f64, u64)> {
        self.coupling.step_stats()
    }

    /// FMI 2.0 reads no value before initialization mode: a clear refusal instead of the FMU's
    /// "illegal call sequence" (found by the Python argument fuzzer, issue 30).
    fn initialized(&self, what: &str) -> Result<()> {
        if self.phase != Phase::New {
            return Ok(());
        }
        Err(MasterError::System {
            path: self.system.path().to_path_buf(),
            key: what.to_owned(),
            message: "no values before the execution is initialized: call initialize() (or step) first".into(),
        })
    }

    fn var(&self, name: &str) -> Result<VarRef> {
        self.system.lookup(name).cloned().map_err(|message| MasterError::System {
            path: self.system.path().to_path_buf(),
            key: name.to_owned(),
            message: format!("{message} in this system"),
        })
    }

    /// The current value of any Real, Integer, Enumeration or Boolean variable `instance.variable`
    /// (read from the instance now).
    pub fn value(&mut self, dotted: &str) -> Result<f64> {
        let v = self.var(dotted)?;
        self.initialized(dotted)?;
        let instance = &mut self.instances[v.instance];
        match v.ty {
            BaseType::Real => {
                let mut x = [0.0];
                instance.get_real(&[v.vr], &mut x)?;
                Ok(x[0])
            }
            BaseType::Boolean => {
                let mut b = [false];
                instance.get_boolean(&[v.vr], &mut b)?;
                Ok(f64::from(u8::from(b[0])))
            }
            BaseType::Integer | BaseType::Enumeration => {
                let carrier = instance.value_type(v.vr).map_or(crate::fmu::value::Carrier::Int, |t| t.carrier());
                let mut x = crate::fmu::Value::zero(carrier);
                x.read(instance.as_mut(), v.vr)?;
                Ok(x.as_f64())
            }
            BaseType::String | BaseType::Binary => Err(MasterError::System {
                path: self.system.path().to_path_buf(),
                key: dotted.to_owned(),
                message: format!("a {} has no numeric value", v.ty),
            }),
        }
    }

    /// Sets a Real variable `instance.variable` now (an unconnected input, e.g. from a controller
    /// outside the system; connected inputs are overwritten at the next step).
    pub fn set_real(&mut self, dotted: &str, value: f64) -> Result<()> {
        let v = self.var(dotted)?;
        if v.ty != BaseType::Real {
            return Err(MasterError::System {
                path: self.system.path().to_path_buf(),
                key: dotted.to_owned(),
                message: format!("{dotted} is {}, not Real", v.ty),
            });
        }
        self.propagated = None;
        self.instances[v.instance].set_real(&[v.vr], &[value])
    }

    fn stopped(&self) -> Option<MasterError> {
        match &self.phase {
            Phase::Stopped(Status::Interrupted, _) => Some(MasterError::Interrupted { time: self.time() }),
            Phase::Stopped(_, message) => Some(MasterError::Stopped { message: message.clone() }),
            _ => None,
        }
    }

    /// Keeps the outcome of an operation: an error stops the execution.
    fn track<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            let status = match e {
                MasterError::Interrupted { .. } => Status::Interrupted,
                MasterError::Terminated { .. } => Status::Terminated,
                _ => Status::Failed,
            };
            if !matches!(self.phase, Phase::Stopped(..)) {
                self.phase = Phase::Stopped(status, e.to_string());
            }
        }
        r
    }

    /// Sets the start values, initializes every instance, reads the outputs at the start time
    /// and starts the observers. Called by the first step if not before.
    pub fn initialize(&mut self) -> Result<()> {
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        if self.phase != Phase::New {
            return Ok(());
        }
        self.wall = Instant::now();
        let r = self.initialize_now();
        self.track(r)?;
        self.phase = Phase::Running;
        Ok(())
    }

    fn initialize_now(&mut self) -> Result<()> {
        let sys = &self.system;
        for (i, (spec, instance)) in sys.instances().iter().zip(self.instances.iter_mut()).enumerate() {
            instance.setup(sys.start(), Some(sys.stop()))?;
            for (v, value) in &spec.starts {
                value.apply(instance.as_mut(), v.vr)?;
            }
            for (k, sig) in sys.signals().iter().enumerate().filter(|(_, s)| s.to.instance == i) {
                let x = self.coupling.signal_at(k, sys.start())?;
                crate::coupling::set_signal(instance.as_mut(), sig, x)?;
            }
            instance.enter_initialization()?;
            instance.exit_initialization()?;
        }
        self.coupling.initialize(&mut self.instances)?;
        // The start row like every other: connections propagated first.
        self.size_step();
        self.propagate()?;
        self.coupling.recorded(&mut self.instances, &mut self.values)?;
        self.values_fresh = true;
        for o in self.observers.iter_mut() {
            hand_exact(self.coupling.recorded_exact().0, o.as_mut());
            o.start(self.system.start(), &self.values, self.bonds.states())?;
        }
        Ok(())
    }

    /// One communication step (initializing first if needed).
    pub fn step(&mut self) -> Result<()> {
        if self.phase != Phase::Running {
            // Initializes a new execution; refuses a stopped one.
            self.initialize()?;
        }
        if self.interrupt.as_ref().is_some_and(|s| s.requested()) {
            let e = MasterError::Interrupted { time: self.time() };
            return self.track(Err(e));
        }
        match self.step_now() {
            Ok(()) => Ok(()),
            Err(MasterError::Terminated { instance, time }) => {
                let r = self.end_early(instance, time);
                self.track(r)
            }
            r => self.track(r),
        }
    }

    /// An instance ended the simulation at `time` during the step from the current point: the
    /// outputs are read as they are now (the terminated instance's at `time`; an instance that
    /// cannot be read keeps its last values) and handed to the observers' `end_early`. Returns
    /// the [`MasterError::Terminated`] that stops the execution (or the observers' error).
    fn end_early(&mut self, instance: String, time: f64) -> Result<()> {
        self.end_time = Some(time);
        // The step that ended the run was taken (up to `time`): it counts, in the summary's
        // steps and in the instance's doStep calls (`cosim run Stair.fmu`: 45 calls, 45 steps).
        self.steps += 1;
        if let Some(i) = self.system.instances().iter().position(|s| s.name == instance) {
            self.coupling.count_terminating_call(i);
        }
        self.values_fresh = false;
        for i in 0..self.instances.len() {
            // Best effort: the last row shows what can be read.
            let _ = self.coupling.read_outputs(crate::ids::InstanceId::new(i), &mut self.instances, time);
        }
        if !self.observers.is_empty() && self.coupling.recorded(&mut self.instances, &mut self.values).is_ok() {
            self.values_fresh = true;
            for o in self.observers.iter_mut() {
                hand_exact(self.coupling.recorded_exact().0, o.as_mut());
                o.end_early(time, &self.values, self.bonds.states())?;
            }
        }
        Err(MasterError::Terminated { instance, time })
    }

    fn step_now(&mut self) -> Result<()> {
        let n = self.steps;
        let t = self.grid_time();
        if let Some(p) = &mut self.pacer {
            p.before_step(self.interrupt.as_deref());
            // A signal while paused: stop here, without the step.
            if self.interrupt.as_ref().is_some_and(|f| f.requested()) {
                return Err(MasterError::Interrupted { time: t });
            }
        }
        if let Some(live) = &mut self.live {
            live.apply(&mut self.coupling, &mut self.instances)?;
            self.propagated = None;
        }
        let units = self.size_step();
        self.propagate()?;
        self.bonds.begin(&self.coupling);
        self.algorithm.step(&mut self.coupling, &mut self.instances, n, t)?;
        let h = self.coupling.h();
        self.bonds.end(&mut self.coupling, h, t + h)?;
        self.steps = n + 1;
        if let Some(g) = &mut self.grid {
            g.now += units;
            let eps = crate::step_control::error_estimate(
                self.bonds.states().iter().map(|b| (b.de_uncorrected, b.level)),
                h,
                &g.params,
            )
            .unwrap_or(0.0);
            g.controller.update(units, eps);
            if g.breakpoints.binary_search(&g.now).is_ok() {
                g.controller.restart();
            }
            g.history.push((g.time(self.system.start(), g.now), h, eps));
        }
        let t = self.grid_time();
        // The communication point t: connections propagated and feedthrough outputs refreshed
        // before its row, the stop time's included (with the last step's H there).
        if !self.at_stop() {
            self.size_step();
        }
        self.propagate()?;
        self.values_fresh = false;
        if !self.observers.is_empty() {
            self.coupling.recorded(&mut self.instances, &mut self.values)?;
            self.values_fresh = true;
            for o in self.observers.iter_mut() {
                hand_exact(self.coupling.recorded_exact().0, o.as_mut());
                o.step(n, t, &self.values, self.bonds.states())?;
            }
        }
        if let Some(p) = &mut self.pacer {
            p.after_step(t, self.interrupt.as_deref())?;
        }
        Ok(())
    }

    /// Sizes the step from the current point (fixed: t_{n+1} − t_n; ECCO: the controller's,
    /// cut at breakpoints, the stop time and `run_until`'s target); returns it in quanta (ECCO)
    /// or 0. Depends only on the run's state: sizing the same point twice gives the same H.
    fn size_step(&mut self) -> u64 {
        let t = self.grid_time();
        match &self.grid {
            None => {
                self.coupling.set_step_size(self.system.time_at(self.steps + 1) - t);
                0
            }
            Some(g) => {
                let k = g.next_units();
                let t_end = g.time(self.system.start(), g.now + k);
                self.coupling.set_variable_step(t_end - t);
                k
            }
        }
    }

    /// Whether the run is at its stop time.
    fn at_stop(&self) -> bool {
        match &self.grid {
            None => self.steps >= self.system.steps(),
            Some(g) => g.now >= g.span,
        }
    }

    /// Sets every input at the current point ([`Coupling::begin_step`]: time tables, links,
    /// feedthrough outputs re-read) unless done already for this point and step size with no
    /// input changed since (a live value, [`Execution::set_real`]); repeating it is exact.
    fn propagate(&mut self) -> Result<()> {
        let key = (self.grid_time(), self.coupling.h(), self.coupling.step_size());
        if self.propagated.is_some_and(|p| p.0.to_bits() == key.0.to_bits() && p.1 == key.1 && p.2 == key.2) {
            return Ok(());
        }
        self.propagated = None;
        self.coupling.begin_step(&mut self.instances, key.0)?;
        self.propagated = Some(key);
        Ok(())
    }

    /// Steps until the communication point nearest to `t` (at most the stop time), or until an
    /// instance ends the simulation ([`Execution::is_terminated`]; `Ok` too).
    pub fn run_until(&mut self, t: f64) -> Result<()> {
        self.run_until_while(t, |_| true).map(|_| ())
    }

    /// [`Execution::run_until`] that asks `go` before each step whether to go on (e.g. to give a
    /// caller a chance to check for signals); `Ok(true)` when the point is reached or the run
    /// ended, `Ok(false)` when `go` said stop. With ECCO the point is a time, not a step count:
    /// every front end that steps in slices must use this (or [`Execution::reached`]).
    pub fn run_until_while(&mut self, t: f64, mut go: impl FnMut(&Self) -> bool) -> Result<bool> {
        if self.is_terminated() {
            return Ok(true);
        }
        let sys = &self.system;
        if let Some(g) = &mut self.grid {
            g.until = ((t - sys.start()) / g.quantum).round().clamp(0.0, g.span as f64) as u64;
        }
        self.initialize()?;
        while !self.reached(t) {
            if !go(self) {
                return Ok(false);
            }
            match self.step() {
                Err(MasterError::Terminated { .. }) => return Ok(true),
                r => r?,
            }
        }
        Ok(true)
    }

    /// Whether the run is at (or past) the communication point nearest to `t` (at most the stop
    /// time), or an instance ended it.
    pub fn reached(&self, t: f64) -> bool {
        if self.is_terminated() {
            return true;
        }
        let sys = &self.system;
        match &self.grid {
            Some(g) => g.now >= ((t - sys.start()) / g.quantum).round().clamp(0.0, g.span as f64) as u64,
            None => self.steps >= ((t - sys.start()) / sys.step()).round().clamp(0.0, sys.steps() as f64) as u64,
        }
    }

    /// Steps to the stop time (or until an instance ends the simulation).
    pub fn run(&mut self) -> Result<()> {
        self.run_until(self.system.stop())
    }

    /// The summary as of now: status `running` before the run ended (see [`Execution::finish`]).
    pub fn summary(&self) -> Summary {
        let (status, message) = match &self.phase {
            Phase::Stopped(s, m) => (*s, m.clone()),
            Phase::New | Phase::Running if self.steps < self.system.steps() => (Status::Running, String::new()),
            _ => (Status::Ok, String::new()),
        };
        let message = match status {
            Status::Interrupted => {
                let by = self.interrupt.as_ref().map_or_else(|| "a stop request".into(), |s| s.by());
                format!("interrupted ({by}) at t = {}", self.time())
            }
            _ => message,
        };
        let stats = self.coupling.step_stats();
        let hs = self.step_history();
        let (h_min, h_max) = hs.iter().fold((f64::INFINITY, 0.0f64), |(a, b), (_, h, _)| (a.min(*h), b.max(*h)));
        let step_range = (!hs.is_empty()).then_some([h_min, h_max]);
        let sys = &self.system;
        Summary {
            status,
            message,
            steps: self.steps,
            time: self.time(),
            wall_time_s: self.wall.elapsed().as_secs_f64(),
            algorithm: self.algorithm.name().into(),
            algorithm_stats: self.algorithm.stats(),
            step_size: sys.step(),
            step_control: sys.step_control().kind().name().into(),
            step_size_range: step_range,
            binary_columns: sys.outputs().iter().filter(|v| v.ty == BaseType::Binary).map(|v| sys.label(v)).collect(),
            live_resets: Vec::new(),
            parallel: self.algorithm.uses_threads(),
            exchange: sys.exchange().name().into(),
            instances: sys
                .instances()
                .iter()
                .enumerate()
                .map(|(i, spec)| {
                    let (secs, calls) = stats.get(i).copied().unwrap_or((0.0, 0));
                    InstanceSummary {
                        name: spec.name.clone(),
                        fmu: spec.fmu.display().to_string(),
                        do_step_calls: calls,
                        do_step_seconds: secs,
                        fmu_warnings: self.instances.get(i).map_or(0, |s| s.fmu_warnings()),
                        solver: None,
                    }
                })
                .collect(),
            bonds: sys
                .bonds()
                .iter()
                .zip(self.bonds.states())
                .map(|(bond, s)| BondSummary {
                    name: bond.name.clone(),
                    energy: s.e,
                    energy_abs: s.e_abs,
                    energy_correction: bond.energy_correction,
                    energy_uncorrected: s.e_uncorrected,
                    energy_abs_uncorrected: s.e_abs_uncorrected,
                })
                .collect(),
            units: self.units.clone(),
            iterations: (sys.iterations() > 1).then(|| {
                let s = self.algorithm.stats();
                let (passes, unconverged_steps) = (s.iterations, s.unconverged_steps);
                crate::observer::IterationSummary {
                    limit: sys.iterations(),
                    tolerance: sys.iteration_tolerance(),
                    passes,
                    unconverged_steps,
                }
            }),
            real_time: self.pacer.as_ref().map(|p| p.summary()),
        }
    }

    /// Terminates the instances (after a successful run), builds the summary and hands it to
    /// every observer (also after a failure: everything up to it is on disk). `Err` only when an
    /// observer could not finish (e.g. a file could not be written).
    pub fn finish(mut self) -> Result<Summary> {
        if matches!(self.phase, Phase::Running | Phase::Stopped(Status::Interrupted | Status::Terminated, _)) {
            let r = self.instances.iter_mut().try_for_each(|s| s.terminate());
            if let Err(e) = r {
                // An interrupted run stays interrupted (its workers may have been killed).
                if !matches!(self.phase, Phase::Stopped(Status::Interrupted, _)) {
                    self.phase = Phase::Stopped(Status::Failed, e.to_string());
                }
            }
        }
        let mut summary = self.summary();
        // Model Exchange instances: their integrators' statistics (an isolated one asks its worker).
        for (i, s) in self.instances.iter_mut().enumerate() {
            if let (Some(stats), Some(out)) = (s.solver_stats(), summary.instances.get_mut(i)) {
                out.solver = Some(stats.into());
            }
        }
        if summary.status == Status::Running {
            // Finished before the stop time (run_until): what was asked for is done.
            summary.status = Status::Ok;
        }
        if let Some(p) = &self.pacer {
            p.write_csv()?;
        }
        // Every observer finishes, also after one failed (a full disk: results.csv could not
        // write its last rows): the later ones (summary.json) get the failure as the outcome.
        let mut failed = None;
        for o in self.observers.iter_mut() {
            if let Err(e) = o.finish(&summary) {
                if failed.is_none() {
                    if !matches!(summary.status, Status::Failed | Status::Interrupted) {
                        summary.status = Status::Failed;
                        summary.message = e.to_string();
                    }
                    failed = Some(e);
                }
            }
        }
        failed.map_or(Ok(summary), Err)
    }
}

/// `results.csv`, `bonds.csv`, `summary.json` (and ECCO's `steps.csv`) in `out_dir`: what
/// `cosim run` records (it adds a progress bar of its own).
pub fn file_observers(sys: &System, out_dir: &Path) -> Result<Vec<Box<dyn Observer>>> {
    file_observers_for(sys, out_dir, &crate::host::Host::default())
}

/// [`file_observers`], whose CSV writer threads `host` is told of ([`crate::host::Host::writers`]).
pub fn file_observers_for(sys: &System, out_dir: &Path, host: &crate::host::Host) -> Result<Vec<Box<dyn Observer>>> {
    let writers = host.writers.clone().unwrap_or_default();
    use crate::observer::{BondsCsv, ResultsCsv, SummaryJson};
    std::fs::create_dir_all(out_dir).map_err(|source| MasterError::Io { path: out_dir.to_path_buf(), source })?;
    let labels: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
    let exact: Vec<usize> = (0..sys.outputs().len()).filter(|k| sys.outputs()[*k].ty != BaseType::Real).collect();
    let bond_names: Vec<String> = sys.bonds().iter().map(|b| b.name.clone()).collect();
    let corrected: Vec<bool> = sys.bonds().iter().map(|b| b.energy_correction).collect();
    // The last communication step is recorded even when record_every does not divide the step
    // count; with ECCO the count is not known in advance.
    let last = match sys.step_control() {
        StepControl::Fixed => sys.steps(),
        StepControl::Ecco { .. } => u64::MAX,
    };
    // ECCO with an output interval: every step is handed on, the output grid picks the rows.
    let span = (sys.start(), sys.stop());
    let grid = sys.step_control().output_units(sys.record_every()).is_some();
    let every = if grid { 1 } else { sys.record_every() };
    let on_grid = |o: Box<dyn Observer>| {
        crate::observer::OutputGrid::wrap(o, sys.step_control(), span, sys.record_every()).unwrap_or_else(|o| o)
    };
    let mut observers: Vec<Box<dyn Observer>> = vec![
        on_grid(Box::new(
            ResultsCsv::with_exact(&out_dir.join("results.csv"), &labels, every, &exact)?
                .drained_by(&writers)
                .ending_at(last),
        )),
        on_grid(Box::new(
            BondsCsv::with_corrections(&out_dir.join("bonds.csv"), &bond_names, &corrected, every)?
                .drained_by(&writers)
                .ending_at(last),
        )),
        Box::new(SummaryJson::new(&out_dir.join("summary.json"))),
    ];
    if let StepControl::Ecco { .. } = sys.step_control() {
        observers.push(Box::new(crate::observer::StepsCsv::create(&out_dir.join("steps.csv"), sys.start())?));
    }
    Ok(observers)
}

/// Hands the recorded non-Real values to `o` ([`Observer::exact`]), if the system records any.
#[inline]
fn hand_exact(values: &[crate::fmu::Value], o: &mut dyn Observer) {
    if !values.is_empty() {
        o.exact(values);
    }
}
