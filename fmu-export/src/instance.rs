//! One FMU instance of model `M`: the FMI 2.0 Co-Simulation state machine, value access through
//! the variable table, FMU states.

use crate::component::{Component, Snapshot};
use crate::description::Description;
use crate::input::InputSignal;
use crate::logger::{Category, Logger};
use crate::model::{CoSimModel, Context};
use crate::state::{Reader, StateVisitor, Writer};
use crate::types::{self, Status};
use crate::variable::{Access, Variable};
use crate::MAX_INPUT_ORDER;
use model_description::{Causality, Variability};
use std::ffi::{c_char, CString};

/// States of FMI 2.0 §4.2.4 (Co-Simulation); `StepInProgress` never occurs (our steps are
/// synchronous).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// After `fmi2Instantiate` / `fmi2Reset`.
    Instantiated,
    /// Between `fmi2EnterInitializationMode` and `fmi2ExitInitializationMode`.
    InitializationMode,
    /// Ready for `fmi2DoStep` ("slaveInitialized").
    StepComplete,
    /// A step returned `fmi2Discard`.
    StepFailed,
    /// A step was canceled.
    StepCanceled,
    /// After `fmi2Terminate`.
    Terminated,
    /// A call returned `fmi2Error` because the model failed: only getters, FMU states,
    /// `fmi2Reset` and `fmi2FreeInstance` are allowed.
    Error,
}

impl State {
    fn bit(self) -> u8 {
        match self {
            Self::Instantiated => 1,
            Self::InitializationMode => 2,
            Self::StepComplete => 4,
            Self::StepFailed => 8,
            Self::StepCanceled => 16,
            Self::Terminated => 32,
            Self::Error => 64,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Instantiated => "instantiated",
            Self::InitializationMode => "initializationMode",
            Self::StepComplete => "stepComplete",
            Self::StepFailed => "stepFailed",
            Self::StepCanceled => "stepCanceled",
            Self::Terminated => "terminated",
            Self::Error => "error",
        }
    }

    fn names(mask: u8) -> String {
        let all = [
            Self::Instantiated,
            Self::InitializationMode,
            Self::StepComplete,
            Self::StepFailed,
            Self::StepCanceled,
            Self::Terminated,
            Self::Error,
        ];
        let v: Vec<_> = all.iter().filter(|s| mask & s.bit() != 0).map(|s| s.name()).collect();
        v.join(", ")
    }
}

/// Allowed-state masks, one per function (FMI 2.0 §4.2.4 table).
mod mask {
    pub const ANY: u8 = 0x7f;
    pub const INSTANTIATED: u8 = 1;
    pub const INIT: u8 = 2;
    pub const SETUP: u8 = INSTANTIATED;
    pub const ENTER_INIT: u8 = INSTANTIATED;
    pub const EXIT_INIT: u8 = INIT;
    pub const TERMINATE: u8 = 4 | 8 | 16;
    pub const GET: u8 = 2 | 4 | 8 | 16 | 32 | 64;
    pub const SET: u8 = 1 | 2 | 4;
    pub const DO_STEP: u8 = 4;
    pub const OUTPUT_DERIVATIVES: u8 = 4 | 8 | 16 | 32 | 64;
    pub const STATUS: u8 = 4 | 8 | 16 | 32;
}

/// The getter of a Real variable.
type RealGetter<M> = fn(&M) -> f64;

/// A model's variable table and description, built once per process.
pub struct Table<M> {
    /// The variables; value reference = index.
    pub vars: Vec<Variable<M>>,
    /// The description built from them.
    pub description: Description,
    /// The input signals' accessors, in table order (fmi2DoStep moves every one to the step end).
    inputs: Vec<fn(&mut M) -> &mut InputSignal>,
    /// Name and getter of every Real output but the on-demand ones, in table order (fmi2DoStep
    /// checks their values).
    real_outputs: Vec<(&'static str, RealGetter<M>)>,
    /// By value reference: the Real inputs (causality input with an input signal), for the
    /// setters' fast path ([`Instance::set_inputs_fast`]).
    inputs_by_vr: Vec<Option<RealInput<M>>>,
}

/// A Real input as the setters' fast path needs it.
struct RealInput<M> {
    signal: fn(&mut M) -> &mut InputSignal,
    min: Option<f64>,
    max: Option<f64>,
}

impl<M> Table<M> {
    /// The table of `vars` and their description; the per-step lists are extracted once here,
    /// so fmi2DoStep does not scan every variable.
    pub fn new(vars: Vec<Variable<M>>, description: Description) -> Self {
        let inputs = vars
            .iter()
            .filter_map(|v| match &v.access {
                Access::Real { input: Some(signal), .. } => Some(*signal),
                _ => None,
            })
            .collect();
        let real_outputs = vars
            .iter()
            .filter(|v| v.causality == Causality::Output && !v.on_demand)
            .filter_map(|v| match &v.access {
                Access::Real { get, .. } => Some((v.name, *get)),
                _ => None,
            })
            .collect();
        let inputs_by_vr = vars
            .iter()
            .map(|v| match &v.access {
                Access::Real { input: Some(signal), min, max, .. } if v.causality == Causality::Input => {
                    Some(RealInput { signal: *signal, min: *min, max: *max })
                }
                _ => None,
            })
            .collect();
        Self { vars, description, inputs, real_outputs, inputs_by_vr }
    }
}

/// A saved state: everything that changes over a run.
#[derive(Clone)]
struct Saved<M> {
    model: M,
    state: State,
    time: f64,
    start_time: f64,
    stop_time: Option<f64>,
    dirty: bool,
    terminated: bool,
}

const STATE_MAGIC: &[u8; 8] = b"HCFMUst1";

/// An instance of model `M`.
pub struct Instance<M: CoSimModel> {
    table: &'static Table<M>,
    /// The logger (public for in-process tests that read its history).
    pub log: Logger,
    #[allow(dead_code)]
    resource_location: String,
    state: State,
    model: M,
    start_time: f64,
    stop_time: Option<f64>,
    time: f64,
    /// Parameters or inputs changed since the model last computed its outputs.
    dirty: bool,
    strings: Vec<CString>,
    last_step_status: Status,
    /// The model ended the simulation in the last step ([`Context::terminate`]):
    /// `fmi2GetBooleanStatus(fmi2Terminated)` is true.
    terminated: bool,
}

type Res<T> = Result<T, String>;

impl<M: CoSimModel> Instance<M> {
    /// A new instance in state `Instantiated`.
    pub fn new(table: &'static Table<M>, resource_location: &str, log: Logger) -> Self {
        Self {
            table,
            log,
            resource_location: resource_location.to_owned(),
            state: State::Instantiated,
            model: M::default(),
            start_time: 0.0,
            stop_time: None,
            time: 0.0,
            dirty: true,
            strings: Vec::new(),
            last_step_status: Status::Ok,
            terminated: false,
        }
    }

    /// The model (in-process tests and monolithic solvers).
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Current state of the state machine.
    pub fn state(&self) -> State {
        self.state
    }

    fn error(&mut self, function: &str, message: &str) -> Status {
        self.log.log(Status::Error, Category::Error, &format!("{function}: {message}"));
        Status::Error
    }

    #[inline]
    fn guard(&self, allowed: u8) -> Res<()> {
        if allowed & self.state.bit() != 0 {
            Ok(())
        } else {
            Err(self.illegal(allowed))
        }
    }

    #[cold]
    #[inline(never)]
    fn illegal(&self, allowed: u8) -> String {
        format!(
            "illegal call sequence: not allowed in state {}; allowed in: {}",
            self.state.name(),
            State::names(allowed)
        )
    }

    /// Runs `f` after the state check; an `Err` is logged and returned as `fmi2Error`.
    #[inline]
    fn call(&mut self, function: &str, allowed: u8, f: impl FnOnce(&mut Self) -> Res<Status>) -> Status {
        match self.guard(allowed).and_then(|()| f(self)) {
            Ok(s) => s,
            Err(msg) => self.fail_with(function, &msg),
        }
    }

    #[cold]
    #[inline(never)]
    fn fail_with(&mut self, function: &str, message: &str) -> Status {
        self.error(function, message)
    }

    #[inline]
    fn context(&self) -> Context {
        Context { want_infos: self.log.enabled(Category::All), ..Context::default() }
    }

    /// Logs the context's messages; `Warning` if any warning was reported (physical-state
    /// reports are logged as warnings but leave the status `Ok`). A discard request still present
    /// here (do_step takes its own) came from another call: a warning.
    #[inline]
    fn flush(&mut self, function: &str, ctx: Context) -> Status {
        if ctx.warnings.is_empty()
            && ctx.reports.is_empty()
            && ctx.infos.is_empty()
            && ctx.discarded.is_none()
            && ctx.terminated.is_none()
        {
            return Status::Ok;
        }
        self.flush_messages(function, ctx)
    }

    #[cold]
    #[inline(never)]
    fn flush_messages(&mut self, function: &str, mut ctx: Context) -> Status {
        if let Some(m) = ctx.discarded.take() {
            ctx.warnings.push(format!("fmi2Discard is only possible from fmi2DoStep, ignored: {m}"));
        }
        if let Some((at, m)) = ctx.terminated.take() {
            ctx.warnings.push(format!("terminating (at t = {at}) is only possible from fmi2DoStep, ignored: {m}"));
        }
        for m in &ctx.infos {
            self.log.log(Status::Ok, Category::All, &format!("{function}: {m}"));
        }
        for m in ctx.reports.iter().chain(&ctx.warnings) {
            self.log.log(Status::Warning, Category::Warning, &format!("{function}: {m}"));
        }
        if ctx.warnings.is_empty() {
            Status::Ok
        } else {
            Status::Warning
        }
    }

    #[inline]
    fn var(&self, vr: u32) -> Res<&'static Variable<M>> {
        let table: &'static Table<M> = self.table;
        match table.vars.get(vr as usize) {
            Some(v) => Ok(v),
            None => Err(Self::no_such_vr(vr, table.vars.len())),
        }
    }

    #[cold]
    #[inline(never)]
    fn no_such_vr(vr: u32, n: usize) -> String {
        format!(
            "value reference {vr} does not exist in model {} (valid: 0..={})",
            M::info().model_name,
            n.saturating_sub(1)
        )
    }

    fn wrong_type(v: &Variable<M>, vr: u32, wanted: &str) -> String {
        format!("variable \"{}\" (vr {vr}) is of type {}, not {wanted}", v.name, v.type_name())
    }

    /// Makes outputs consistent with the current parameters and inputs before they are read.
    fn refresh(&mut self, function: &str) -> Res<Status> {
        if !self.dirty {
            return Ok(Status::Ok);
        }
        let mut ctx = self.context();
        if self.state == State::InitializationMode {
            self.model.initialize(self.start_time, &mut ctx).map_err(|e| e.to_string())?;
        }
        if matches!(self.state, State::InitializationMode | State::StepComplete) {
            self.model.evaluate(&mut ctx).map_err(|e| e.to_string())?;
            self.dirty = false;
        }
        Ok(self.flush(function, ctx))
    }

    fn check_lengths(vr: &[u32], n: usize) -> Res<()> {
        if vr.len() == n {
            Ok(())
        } else {
            Err(format!("{} value references but {n} values", vr.len()))
        }
    }

    /// Whether `v` may be set in the current state (FMI 2.0 §4.2.4: before initialization
    /// variables with a start value; afterwards inputs and tunable parameters only).
    #[inline]
    fn may_set(&self, v: &Variable<M>, vr: u32) -> Res<()> {
        if !v.is_settable() {
            return Err(format!("variable \"{}\" (vr {vr}, causality {}) cannot be set", v.name, v.causality));
        }
        match self.state {
            State::Instantiated | State::InitializationMode => Ok(()),
            _ if v.causality == Causality::Input => Ok(()),
            _ if v.causality == Causality::Parameter && v.variability == Variability::Tunable => Ok(()),
            _ => Err(format!(
                "variable \"{}\" (vr {vr}) is a {} {}: it can only be set before fmi2ExitInitializationMode",
                v.name, v.variability, v.causality
            )),
        }
    }

    /// Bounds check: parameters out of range are errors, inputs out of range warnings.
    #[inline]
    fn check_range(v: &Variable<M>, x: f64, min: Option<f64>, max: Option<f64>, warnings: &mut Vec<String>) -> Res<()> {
        let below = min.is_some_and(|m| x < m);
        let above = max.is_some_and(|m| x > m);
        if !(below || above) {
            return Ok(());
        }
        let msg = format!(
            "variable \"{}\" = {x} is outside [{}, {}]",
            v.name,
            min.map_or("-inf".into(), |m| m.to_string()),
            max.map_or("inf".into(), |m| m.to_string())
        );
        if v.causality == Causality::Input {
            warnings.push(msg);
            Ok(())
        } else {
            Err(msg)
        }
    }

    #[inline]
    fn finish_set(&mut self, function: &str, warnings: Vec<String>) -> Res<Status> {
        self.dirty = true;
        if warnings.is_empty() {
            return Ok(Status::Ok);
        }
        let mut status = Status::Ok;
        for w in warnings {
            self.log.log(Status::Warning, Category::Warning, &format!("{function}: {w}"));
            status = Status::Warning;
        }
        Ok(status)
    }

    /// fmi2SetReal's common case, with the general path's outcome: every value reference a Real
    /// input and every value finite and within its bounds sets them all and returns `fmi2OK`
    /// (inputs may be set in every state that allows fmi2SetReal). Anything else returns `None`,
    /// changing nothing, and the general path checks, reports and sets.
    #[inline]
    fn set_inputs_fast(&mut self, vr: &[u32], values: &[f64]) -> Option<Status> {
        let table: &'static Table<M> = self.table;
        if vr.len() != values.len() || mask::SET & self.state.bit() == 0 {
            return None;
        }
        for (r, x) in vr.iter().zip(values) {
            let input = table.inputs_by_vr.get(*r as usize)?.as_ref()?;
            let inside = x.is_finite() && !input.min.is_some_and(|m| *x < m) && !input.max.is_some_and(|m| *x > m);
            if !inside {
                return None;
            }
        }
        for (r, x) in vr.iter().zip(values) {
            if let Some(Some(input)) = table.inputs_by_vr.get(*r as usize) {
                (input.signal)(&mut self.model).value = *x;
            }
        }
        self.dirty = true;
        Some(Status::Ok)
    }

    /// fmi2SetRealInputDerivatives' common case, as [`Instance::set_inputs_fast`]: every value
    /// reference a Real input, every order in 1..=MAX_INPUT_ORDER and every value finite.
    #[inline]
    fn set_input_derivatives_fast(&mut self, vr: &[u32], order: &[i32], values: &[f64]) -> Option<Status> {
        let table: &'static Table<M> = self.table;
        if vr.len() != values.len() || vr.len() != order.len() || mask::SET & self.state.bit() == 0 {
            return None;
        }
        if !M::info().interpolates_inputs {
            return None;
        }
        for ((r, k), x) in vr.iter().zip(order).zip(values) {
            table.inputs_by_vr.get(*r as usize)?.as_ref()?;
            if !((1..=MAX_INPUT_ORDER as i32).contains(k) && x.is_finite()) {
                return None;
            }
        }
        for ((r, k), x) in vr.iter().zip(order).zip(values) {
            if let Some(Some(input)) = table.inputs_by_vr.get(*r as usize) {
                (input.signal)(&mut self.model).derivatives[(*k - 1) as usize] = *x;
            }
        }
        self.dirty = true;
        Some(Status::Ok)
    }

    fn saved(&self) -> Saved<M> {
        Saved {
            model: self.model.clone(),
            state: self.state,
            time: self.time,
            start_time: self.start_time,
            stop_time: self.stop_time,
            dirty: self.dirty,
            terminated: self.terminated,
        }
    }

    fn encode(&self, s: &Saved<M>) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes.extend_from_slice(STATE_MAGIC);
        w.string(&mut self.table.description.guid.clone());
        let mut model = s.model.clone();
        let mut head = header_fields(s);
        visit_header(&mut w, &mut head);
        model.visit_state(&mut w);
        w.bytes
    }

    fn decode(&self, bytes: &[u8]) -> Res<Saved<M>> {
        let guid = &self.table.description.guid;
        if bytes.get(..8) != Some(STATE_MAGIC.as_slice()) {
            return Err(format!("the {} bytes given are not a serialized FMU state of this exporter", bytes.len()));
        }
        let mut r = Reader::new(&bytes[8..]);
        let mut their_guid = String::new();
        r.string(&mut their_guid);
        if &their_guid != guid {
            return Err(format!("the serialized state belongs to FMU GUID {their_guid}, this FMU is {guid}"));
        }
        let mut s = self.saved();
        let mut head = header_fields(&s);
        visit_header(&mut r, &mut head);
        s.model.visit_state(&mut r);
        // Not serialized: a deserialized state has not terminated the simulation.
        s.terminated = false;
        if let Some(e) = r.error {
            return Err(e);
        }
        if r.remaining() != 0 {
            return Err(format!("serialized state has {} unexpected trailing bytes", r.remaining()));
        }
        apply_header(&mut s, &head)?;
        Ok(s)
    }

    fn restore(&mut self, s: &Saved<M>) {
        self.model = s.model.clone();
        self.state = s.state;
        self.time = s.time;
        self.start_time = s.start_time;
        self.stop_time = s.stop_time;
        self.dirty = s.dirty;
        self.terminated = s.terminated;
    }

    /// The end of a step in which the model terminated the simulation at `at`
    /// ([`Context::terminate`]): fmi2Discard, state stepFailed, time `at`, fmi2Terminated true.
    fn terminated_in_step(&mut self, t: f64, h: f64, at: f64, why: &str, ctx: Context) -> Res<Status> {
        let tol = (1e-9 * h).max(4.0 * f64::EPSILON * t.abs());
        if !(at >= t - tol && at <= t + h + tol) {
            self.flush("fmi2DoStep", ctx);
            self.state = State::Error;
            self.last_step_status = Status::Error;
            return Err(format!(
                "the model terminated the step from t = {t} with h = {h} at t = {at}, outside the step"
            ));
        }
        let at = at.max(t).min(t + h);
        let table: &'static Table<M> = self.table;
        for signal in &table.inputs {
            signal(&mut self.model).end_step(at - t);
        }
        for (name, get) in &table.real_outputs {
            let y = get(&self.model);
            if !y.is_finite() {
                self.flush("fmi2DoStep", ctx);
                self.state = State::Error;
                self.last_step_status = Status::Error;
                return Err(format!("output \"{name}\" = {y} at the termination at t = {at}"));
            }
        }
        self.flush("fmi2DoStep", ctx);
        let msg = format!(
            "fmi2DoStep: the model terminated the simulation at t = {at} (step from t = {t} with h = {h}): {why}"
        );
        self.log.log(Status::Discard, Category::Warning, &msg);
        self.time = at;
        self.dirty = false;
        self.state = State::StepFailed;
        self.terminated = true;
        self.last_step_status = Status::Discard;
        Ok(Status::Discard)
    }

    fn status_kind(kind: i32) -> &'static str {
        match kind {
            types::FMI2_DO_STEP_STATUS => "fmi2DoStepStatus",
            types::FMI2_PENDING_STATUS => "fmi2PendingStatus",
            types::FMI2_LAST_SUCCESSFUL_TIME => "fmi2LastSuccessfulTime",
            types::FMI2_TERMINATED => "fmi2Terminated",
            _ => "an unknown fmi2StatusKind",
        }
    }

    fn status_guard(&mut self, function: &str) -> Result<(), Status> {
        self.guard(mask::STATUS).map_err(|m| self.error(function, &m))
    }

    fn discard_status(&mut self, function: &str, kind: i32) -> Status {
        self.log.log(
            Status::Discard,
            Category::Warning,
            &format!(
                "{function}: {} is not available from this function (steps are synchronous)",
                Self::status_kind(kind)
            ),
        );
        Status::Discard
    }
}

/// Header fields of a serialized state: (state, time, start, stop defined, stop, dirty).
struct Header {
    state: i64,
    time: f64,
    start: f64,
    has_stop: bool,
    stop: f64,
    dirty: bool,
}

fn header_fields<M>(s: &Saved<M>) -> Header {
    Header {
        state: i64::from(s.state.bit()),
        time: s.time,
        start: s.start_time,
        has_stop: s.stop_time.is_some(),
        stop: s.stop_time.unwrap_or(0.0),
        dirty: s.dirty,
    }
}

fn visit_header(v: &mut dyn StateVisitor, h: &mut Header) {
    v.integer(&mut h.state);
    v.real(&mut h.time);
    v.real(&mut h.start);
    v.boolean(&mut h.has_stop);
    v.real(&mut h.stop);
    v.boolean(&mut h.dirty);
}

fn apply_header<M>(s: &mut Saved<M>, h: &Header) -> Res<()> {
    let all = [
        State::Instantiated,
        State::InitializationMode,
        State::StepComplete,
        State::StepFailed,
        State::StepCanceled,
        State::Terminated,
        State::Error,
    ];
    s.state = all
        .into_iter()
        .find(|st| i64::from(st.bit()) == h.state)
        .ok_or_else(|| format!("serialized state has an invalid machine state {}", h.state))?;
    s.time = h.time;
    s.start_time = h.start;
    s.stop_time = h.has_stop.then_some(h.stop);
    s.dirty = h.dirty;
    Ok(())
}

impl<M: CoSimModel> Component for Instance<M> {
    fn set_debug_logging(&mut self, on: bool, categories: &[Option<&str>]) -> Status {
        self.call("fmi2SetDebugLogging", mask::ANY, |s| {
            let mut cats = Vec::with_capacity(categories.len());
            for c in categories {
                let name = c.ok_or("a category name is NULL")?;
                cats.push(Category::from_name(name).ok_or_else(|| {
                    format!("unknown log category \"{name}\" (known: logStatusWarning, logStatusError, logAll)")
                })?);
            }
            s.log.set_categories(on, &cats);
            Ok(Status::Ok)
        })
    }

    fn setup_experiment(&mut self, tolerance: Option<f64>, start: f64, stop: Option<f64>) -> Status {
        self.call("fmi2SetupExperiment", mask::SETUP, |s| {
            if !start.is_finite() {
                return Err(format!("startTime = {start} is not finite"));
            }
            if let Some(stop) = stop {
                if stop.is_nan() || stop < start {
                    return Err(format!("stopTime = {stop} is before startTime = {start}"));
                }
            }
            if let Some(tol) = tolerance {
                s.log.log(
                    Status::Ok,
                    Category::All,
                    &format!("fmi2SetupExperiment: tolerance {tol} ignored: the model uses fixed internal steps"),
                );
            }
            s.start_time = start;
            s.stop_time = stop;
            s.time = start;
            Ok(Status::Ok)
        })
    }

    fn enter_initialization_mode(&mut self) -> Status {
        self.call("fmi2EnterInitializationMode", mask::ENTER_INIT, |s| {
            s.state = State::InitializationMode;
            s.time = s.start_time;
            s.dirty = true;
            Ok(Status::Ok)
        })
    }

    fn exit_initialization_mode(&mut self) -> Status {
        self.call("fmi2ExitInitializationMode", mask::EXIT_INIT, |s| {
            let mut ctx = s.context();
            let init = s.model.initialize(s.start_time, &mut ctx).and_then(|()| s.model.evaluate(&mut ctx));
            if let Err(e) = init {
                s.flush("fmi2ExitInitializationMode", ctx);
                s.state = State::Error;
                return Err(e.to_string());
            }
            s.dirty = false;
            s.state = State::StepComplete;
            s.time = s.start_time;
            Ok(s.flush("fmi2ExitInitializationMode", ctx))
        })
    }

    fn terminate(&mut self) -> Status {
        self.call("fmi2Terminate", mask::TERMINATE, |s| {
            s.state = State::Terminated;
            Ok(Status::Ok)
        })
    }

    fn reset(&mut self) -> Status {
        self.call("fmi2Reset", mask::ANY, |s| {
            s.model = M::default();
            s.state = State::Instantiated;
            s.start_time = 0.0;
            s.stop_time = None;
            s.time = 0.0;
            s.dirty = true;
            s.last_step_status = Status::Ok;
            s.terminated = false;
            Ok(Status::Ok)
        })
    }

    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Status {
        self.call("fmi2GetReal", mask::GET, |s| {
            Self::check_lengths(vr, out.len())?;
            let status = s.refresh("fmi2GetReal")?;
            for (r, o) in vr.iter().zip(out.iter_mut()) {
                let v = s.var(*r)?;
                match &v.access {
                    Access::Real { get, .. } => *o = get(&s.model),
                    _ => return Err(Self::wrong_type(v, *r, "Real")),
                }
            }
            Ok(status)
        })
    }

    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Status {
        self.call("fmi2GetInteger", mask::GET, |s| {
            Self::check_lengths(vr, out.len())?;
            let status = s.refresh("fmi2GetInteger")?;
            for (r, o) in vr.iter().zip(out.iter_mut()) {
                let v = s.var(*r)?;
                match &v.access {
                    Access::Integer { get, .. } | Access::Enumeration { get, .. } => *o = get(&s.model),
                    _ => return Err(Self::wrong_type(v, *r, "Integer or Enumeration")),
                }
            }
            Ok(status)
        })
    }

    fn get_boolean(&mut self, vr: &[u32], out: &mut [i32]) -> Status {
        self.call("fmi2GetBoolean", mask::GET, |s| {
            Self::check_lengths(vr, out.len())?;
            let status = s.refresh("fmi2GetBoolean")?;
            for (r, o) in vr.iter().zip(out.iter_mut()) {
                let v = s.var(*r)?;
                match &v.access {
                    Access::Boolean { get, .. } => *o = i32::from(get(&s.model)),
                    _ => return Err(Self::wrong_type(v, *r, "Boolean")),
                }
            }
            Ok(status)
        })
    }

    fn get_string(&mut self, vr: &[u32], out: &mut [*const c_char]) -> Status {
        self.call("fmi2GetString", mask::GET, |s| {
            Self::check_lengths(vr, out.len())?;
            let status = s.refresh("fmi2GetString")?;
            // The returned pointers stay valid until the next call on this instance.
            s.strings.clear();
            for r in vr {
                let v = s.var(*r)?;
                match &v.access {
                    Access::String { get, .. } => {
                        s.strings.push(CString::new(get(&s.model).replace('\0', " ")).unwrap_or_default())
                    }
                    _ => return Err(Self::wrong_type(v, *r, "String")),
                }
            }
            for (o, c) in out.iter_mut().zip(&s.strings) {
                *o = c.as_ptr();
            }
            Ok(status)
        })
    }

    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Status {
        if let Some(status) = self.set_inputs_fast(vr, values) {
            return status;
        }
        self.call("fmi2SetReal", mask::SET, |s| {
            Self::check_lengths(vr, values.len())?;
            // Check everything first: a rejected call changes nothing.
            let mut warnings = Vec::new();
            for (r, x) in vr.iter().zip(values) {
                let v = s.var(*r)?;
                let Access::Real { min, max, .. } = &v.access else {
                    return Err(Self::wrong_type(v, *r, "Real"));
                };
                s.may_set(v, *r)?;
                if !x.is_finite() {
                    return Err(format!("variable \"{}\" (vr {r}) cannot be set to {x}", v.name));
                }
                Self::check_range(v, *x, *min, *max, &mut warnings)?;
            }
            for (r, x) in vr.iter().zip(values) {
                if let Ok(Variable { access: Access::Real { set, input, .. }, .. }) = s.var(*r) {
                    if let Some(signal) = input {
                        signal(&mut s.model).value = *x;
                    } else if let Some(set) = set {
                        set(&mut s.model, *x);
                    }
                }
            }
            s.finish_set("fmi2SetReal", warnings)
        })
    }

    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Status {
        self.call("fmi2SetInteger", mask::SET, |s| {
            Self::check_lengths(vr, values.len())?;
            for (r, x) in vr.iter().zip(values) {
                let v = s.var(*r)?;
                s.may_set(v, *r)?;
                match &v.access {
                    Access::Integer { min, max, .. } => {
                        if min.is_some_and(|m| *x < m) || max.is_some_and(|m| *x > m) {
                            return Err(format!("variable \"{}\" = {x} is outside [{min:?}, {max:?}]", v.name));
                        }
                    }
                    Access::Enumeration { ty, .. } => {
                        if ty.item_name(*x).is_none() {
                            let items: Vec<String> = ty.items.iter().map(|(n, k, _)| format!("{k} = {n}")).collect();
                            return Err(format!(
                                "variable \"{}\" = {x} is not an item of enumeration {} ({})",
                                v.name,
                                ty.name,
                                items.join(", ")
                            ));
                        }
                    }
                    _ => return Err(Self::wrong_type(v, *r, "Integer or Enumeration")),
                }
            }
            for (r, x) in vr.iter().zip(values) {
                if let Ok(v) = s.var(*r) {
                    if let Access::Integer { set: Some(set), .. } | Access::Enumeration { set: Some(set), .. } =
                        &v.access
                    {
                        set(&mut s.model, *x);
                    }
                }
            }
            s.finish_set("fmi2SetInteger", Vec::new())
        })
    }

    fn set_boolean(&mut self, vr: &[u32], values: &[i32]) -> Status {
        self.call("fmi2SetBoolean", mask::SET, |s| {
            Self::check_lengths(vr, values.len())?;
            for r in vr {
                let v = s.var(*r)?;
                s.may_set(v, *r)?;
                if !matches!(v.access, Access::Boolean { .. }) {
                    return Err(Self::wrong_type(v, *r, "Boolean"));
                }
            }
            for (r, x) in vr.iter().zip(values) {
                if let Ok(Variable { access: Access::Boolean { set: Some(set), .. }, .. }) = s.var(*r) {
                    set(&mut s.model, *x != types::FMI2_FALSE);
                }
            }
            s.finish_set("fmi2SetBoolean", Vec::new())
        })
    }

    fn set_string(&mut self, vr: &[u32], values: &[Option<&str>]) -> Status {
        self.call("fmi2SetString", mask::SET, |s| {
            Self::check_lengths(vr, values.len())?;
            for (r, x) in vr.iter().zip(values) {
                let v = s.var(*r)?;
                s.may_set(v, *r)?;
                if !matches!(v.access, Access::String { .. }) {
                    return Err(Self::wrong_type(v, *r, "String"));
                }
                if x.is_none() {
                    return Err(format!("value for variable \"{}\" is NULL or not UTF-8", v.name));
                }
            }
            for (r, x) in vr.iter().zip(values) {
                if let (Ok(Variable { access: Access::String { set: Some(set), .. }, .. }), Some(x)) = (s.var(*r), x) {
                    set(&mut s.model, x);
                }
            }
            s.finish_set("fmi2SetString", Vec::new())
        })
    }

    fn get_fmu_state(&mut self, reuse: Option<&mut Snapshot>) -> Result<Option<Snapshot>, Status> {
        let saved = self.saved();
        match reuse {
            Some(old) => match old.downcast_mut::<Saved<M>>() {
                Some(slot) => {
                    *slot = saved;
                    Ok(None)
                }
                None => Err(self.error("fmi2GetFMUstate", "*FMUstate is not a state of this FMU")),
            },
            None => Ok(Some(Box::new(saved))),
        }
    }

    fn set_fmu_state(&mut self, state: &Snapshot) -> Status {
        match state.downcast_ref::<Saved<M>>() {
            Some(s) => {
                let s = s.clone();
                self.restore(&s);
                Status::Ok
            }
            None => self.error("fmi2SetFMUstate", "FMUstate is not a state of this FMU"),
        }
    }

    fn check_fmu_state(&mut self, function: &str, state: &Snapshot) -> Status {
        if state.is::<Saved<M>>() {
            Status::Ok
        } else {
            self.error(function, "FMUstate is not a state of this FMU")
        }
    }

    fn serialize_fmu_state(&mut self, state: &Snapshot) -> Result<Vec<u8>, Status> {
        match state.downcast_ref::<Saved<M>>() {
            Some(s) => Ok(self.encode(s)),
            None => Err(self.error("fmi2SerializeFMUstate", "FMUstate is not a state of this FMU")),
        }
    }

    fn deserialize_fmu_state(&mut self, bytes: &[u8]) -> Result<Snapshot, Status> {
        match self.decode(bytes) {
            Ok(s) => Ok(Box::new(s)),
            Err(m) => Err(self.error("fmi2DeSerializeFMUstate", &m)),
        }
    }

    fn set_real_input_derivatives(&mut self, vr: &[u32], order: &[i32], values: &[f64]) -> Status {
        if let Some(status) = self.set_input_derivatives_fast(vr, order, values) {
            return status;
        }
        self.call("fmi2SetRealInputDerivatives", mask::SET, |s| {
            Self::check_lengths(vr, values.len())?;
            Self::check_lengths(vr, order.len())?;
            if !M::info().interpolates_inputs {
                return Err("this FMU cannot interpolate inputs (canInterpolateInputs=\"false\")".into());
            }
            for ((r, k), x) in vr.iter().zip(order).zip(values) {
                let v = s.var(*r)?;
                if !matches!(v.access, Access::Real { input: Some(_), .. }) {
                    return Err(format!("variable \"{}\" (vr {r}) is not a Real input", v.name));
                }
                if !(1..=MAX_INPUT_ORDER as i32).contains(k) {
                    return Err(format!(
                        "derivative order {k} of input \"{}\" is not in 1..={MAX_INPUT_ORDER}",
                        v.name
                    ));
                }
                if !x.is_finite() {
                    return Err(format!("derivative of order {k} of input \"{}\" cannot be {x}", v.name));
                }
            }
            for ((r, k), x) in vr.iter().zip(order).zip(values) {
                if let Ok(Variable { access: Access::Real { input: Some(signal), .. }, .. }) = s.var(*r) {
                    let i = usize::try_from(*k - 1).unwrap_or(0).min(MAX_INPUT_ORDER - 1);
                    signal(&mut s.model).derivatives[i] = *x;
                }
            }
            s.dirty = true;
            Ok(Status::Ok)
        })
    }

    fn get_real_output_derivatives(&mut self, vr: &[u32], order: &[i32], out: &mut [f64]) -> Status {
        self.call("fmi2GetRealOutputDerivatives", mask::OUTPUT_DERIVATIVES, |s| {
            Self::check_lengths(vr, out.len())?;
            Self::check_lengths(vr, order.len())?;
            let status = s.refresh("fmi2GetRealOutputDerivatives")?;
            for ((r, k), o) in vr.iter().zip(order).zip(out.iter_mut()) {
                let v = s.var(*r)?;
                let provided = match &v.access {
                    Access::Real { derivative: Some((max, f)), .. } => Some((*max, *f)),
                    _ => None,
                };
                match provided {
                    Some((max, f)) if *k >= 1 && (*k as u32) <= max => *o = f(&s.model, *k as u32),
                    _ => {
                        return Err(format!(
                        "variable \"{}\" (vr {r}) provides output derivatives up to order {}, order {k} was requested",
                        v.name,
                        provided.map_or(0, |p| p.0)
                    ))
                    }
                }
            }
            Ok(status)
        })
    }

    fn do_step(&mut self, t: f64, h: f64, _no_set_prior: bool) -> Status {
        self.call("fmi2DoStep", mask::DO_STEP, |s| {
            if !(h > 0.0 && h.is_finite()) {
                return Err(format!("communicationStepSize = {h} must be positive and finite"));
            }
            let tol = (1e-3 * h).max(4.0 * f64::EPSILON * s.time.abs());
            if !t.is_finite() || (t - s.time).abs() > tol {
                return Err(format!("expected currentCommunicationPoint = {:.16e} but was {t:.16e}", s.time));
            }
            if let Some(stop) = s.stop_time {
                if t + h > stop + tol {
                    return Err(format!("step to t = {} goes beyond stopTime = {stop}", t + h));
                }
            }
            let mut ctx = s.context();
            let stepped = s.model.do_step(t, h, &mut ctx);
            if let Err(e) = stepped {
                s.flush("fmi2DoStep", ctx);
                s.state = State::Error;
                s.last_step_status = Status::Error;
                return Err(format!("step from t = {t} with h = {h} failed: {e}"));
            }
            if let Some((at, why)) = ctx.terminated.take() {
                return s.terminated_in_step(t, h, at, &why, ctx);
            }
            if let Some(why) = ctx.discarded.take() {
                // The model stayed at t: the time is not advanced, no further step is possible.
                s.flush("fmi2DoStep", ctx);
                let msg = format!("fmi2DoStep: step from t = {t} with h = {h} discarded: {why}");
                s.log.log(Status::Discard, Category::Error, &msg);
                s.state = State::StepFailed;
                s.last_step_status = Status::Discard;
                return Ok(Status::Discard);
            }
            let table: &'static Table<M> = s.table;
            for signal in &table.inputs {
                signal(&mut s.model).end_step(h);
            }
            // Outputs only: evaluating every getter (parameters, diagnostics) here cost as much as
            // the model's own step for small FMUs.
            for (name, get) in &table.real_outputs {
                let y = get(&s.model);
                if !y.is_finite() {
                    s.flush("fmi2DoStep", ctx);
                    s.state = State::Error;
                    s.last_step_status = Status::Error;
                    return Err(format!("output \"{name}\" = {y} after the step from t = {t} with h = {h}"));
                }
            }
            s.time = t + h;
            s.dirty = false;
            let status = s.flush("fmi2DoStep", ctx);
            s.last_step_status = status;
            Ok(status)
        })
    }

    fn cancel_step(&mut self) -> Status {
        self.error("fmi2CancelStep", "not supported: fmi2DoStep is synchronous and never returns fmi2Pending")
    }

    fn get_status(&mut self, function: &str, kind: i32) -> Result<Status, Status> {
        self.status_guard(function)?;
        if kind == types::FMI2_DO_STEP_STATUS {
            Ok(self.last_step_status)
        } else {
            Err(self.discard_status(function, kind))
        }
    }

    fn get_real_status(&mut self, kind: i32) -> Result<f64, Status> {
        self.status_guard("fmi2GetRealStatus")?;
        if kind == types::FMI2_LAST_SUCCESSFUL_TIME {
            Ok(self.time)
        } else {
            Err(self.discard_status("fmi2GetRealStatus", kind))
        }
    }

    fn get_integer_status(&mut self, kind: i32) -> Result<i32, Status> {
        self.status_guard("fmi2GetIntegerStatus")?;
        Err(self.discard_status("fmi2GetIntegerStatus", kind))
    }

    fn get_boolean_status(&mut self, kind: i32) -> Result<bool, Status> {
        self.status_guard("fmi2GetBooleanStatus")?;
        if kind == types::FMI2_TERMINATED {
            Ok(self.terminated)
        } else {
            Err(self.discard_status("fmi2GetBooleanStatus", kind))
        }
    }

    fn get_string_status(&mut self, kind: i32) -> Result<*const c_char, Status> {
        self.status_guard("fmi2GetStringStatus")?;
        Err(self.discard_status("fmi2GetStringStatus", kind))
    }

    fn fail(&mut self, function: &str, message: &str) -> Status {
        self.error(function, message)
    }

    fn last_message(&self) -> Option<&str> {
        self.log.history.last().map(String::as_str)
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn poison(&mut self, function: &str, message: &str) {
        self.state = State::Error;
        self.error(function, &format!("internal error (panic): {message}; the instance must be reset or freed"));
    }
}
