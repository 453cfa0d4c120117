//! One FMU instance of model `M`: the FMI 2.0 Co-Simulation state machine, value access through
//! the variable table, FMU states.

use crate::component::{Component, Snapshot};
use crate::description::Description;
use crate::input::InputSignal;
use crate::logger::{Category, Logger};
use crate::model::{CoSimModel, Context};
use crate::types::{self, Status};
use crate::variable::{Access, Variable};
use crate::MAX_INPUT_ORDER;
use model_description::Causality;
use snapshot::Saved;
use std::ffi::{c_char, CString};

mod me;
mod snapshot;
mod step;
mod values;

/// States of FMI 2.0 §4.2.4 (Co-Simulation; `StepInProgress` never occurs, our steps are
/// synchronous) and §3.2.3 (Model Exchange: event and continuous-time mode).
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
    /// Model Exchange: event mode (after initialization and `fmi2EnterEventMode`).
    EventMode,
    /// Model Exchange: continuous-time mode (`fmi2EnterContinuousTimeMode`).
    ContinuousTimeMode,
}

/// The interface an instance was instantiated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    /// `fmi2CoSimulation`, `fmi3InstantiateCoSimulation`.
    CoSimulation,
    /// `fmi2ModelExchange`, `fmi3InstantiateModelExchange`.
    ModelExchange,
}

impl State {
    fn bit(self) -> u16 {
        match self {
            Self::Instantiated => 1,
            Self::InitializationMode => 2,
            Self::StepComplete => 4,
            Self::StepFailed => 8,
            Self::StepCanceled => 16,
            Self::Terminated => 32,
            Self::Error => 64,
            Self::EventMode => 128,
            Self::ContinuousTimeMode => 256,
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
            Self::EventMode => "eventMode",
            Self::ContinuousTimeMode => "continuousTimeMode",
        }
    }

    fn names(mask: u16) -> String {
        let all = [
            Self::Instantiated,
            Self::InitializationMode,
            Self::StepComplete,
            Self::StepFailed,
            Self::StepCanceled,
            Self::Terminated,
            Self::Error,
            Self::EventMode,
            Self::ContinuousTimeMode,
        ];
        let v: Vec<_> = all.iter().filter(|s| mask & s.bit() != 0).map(|s| s.name()).collect();
        v.join(", ")
    }
}

/// Allowed-state masks, one per function (FMI 2.0 §4.2.4 and §3.2.3 tables). An ME instance is
/// never in the CS states past initialization, nor a CS instance in the ME modes.
mod mask {
    pub const ANY: u16 = 0x1ff;
    pub const INSTANTIATED: u16 = 1;
    pub const INIT: u16 = 2;
    pub const SETUP: u16 = INSTANTIATED;
    pub const ENTER_INIT: u16 = INSTANTIATED;
    pub const EXIT_INIT: u16 = INIT;
    pub const EVENT: u16 = 128;
    pub const CONTINUOUS: u16 = 256;
    pub const TERMINATE: u16 = 4 | 8 | 16 | EVENT | CONTINUOUS;
    pub const GET: u16 = 2 | 4 | 8 | 16 | 32 | 64 | EVENT | CONTINUOUS;
    pub const SET: u16 = 1 | 2 | 4 | EVENT | CONTINUOUS;
    pub const DO_STEP: u16 = 4;
    pub const OUTPUT_DERIVATIVES: u16 = 4 | 8 | 16 | 32 | 64;
    pub const STATUS: u16 = 4 | 8 | 16 | 32;
    /// Model Exchange: the state vector and its functions (initialization mode: after the
    /// model computed its initial state).
    pub const ME_GET: u16 = 2 | 32 | 64 | EVENT | CONTINUOUS;
    pub const SET_TIME: u16 = EVENT | CONTINUOUS;
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
    /// The interface it was instantiated for.
    interface: Interface,
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
            interface: Interface::CoSimulation,
        }
    }

    /// A new Model Exchange instance in state `Instantiated` (the model must have
    /// [`CoSimModel::model_exchange`]; [`crate::Factory`] checks).
    pub fn new_model_exchange(table: &'static Table<M>, resource_location: &str, log: Logger) -> Self {
        Self { interface: Interface::ModelExchange, ..Self::new(table, resource_location, log) }
    }

    /// The interface this instance was instantiated for.
    pub fn interface(&self) -> Interface {
        self.interface
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
    fn guard(&self, allowed: u16) -> Res<()> {
        if allowed & self.state.bit() != 0 {
            Ok(())
        } else {
            Err(self.illegal(allowed))
        }
    }

    #[cold]
    #[inline(never)]
    fn illegal(&self, allowed: u16) -> String {
        format!(
            "illegal call sequence: not allowed in state {}; allowed in: {}",
            self.state.name(),
            State::names(allowed)
        )
    }

    /// Runs `f` after the state check; an `Err` is logged and returned as `fmi2Error`.
    #[inline]
    fn call(&mut self, function: &str, allowed: u16, f: impl FnOnce(&mut Self) -> Res<Status>) -> Status {
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
            s.state = match s.interface {
                Interface::CoSimulation => State::StepComplete,
                Interface::ModelExchange => State::EventMode,
            };
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
