//! [`Instance`], one instance of a loaded [`super::Fmu`], of its FMI version: [`Fmi2Instance`]
//! (this file) calls the FMI 2.0 API, [`super::Fmi3Instance`] (`instance3.rs`) the FMI 3.0 API;
//! both implement [`FmuInstance`] over the same [`Call`]s and share [`Core`] (name, time, timing,
//! status handling).

use super::call::Version;
use super::ffi;
use super::instance3::Fmi3Instance;
use super::load::{Fmu, Live};
use super::me::MeInstance;
use super::{Call, FmuInstance};
use crate::error::{MasterError, Result};
use std::ffi::c_int;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An instance of a loaded FMU, by FMI version and interface: Co-Simulation, or Model Exchange
/// integrated by the master's solver ([`MeInstance`] over the version's instance).
pub enum Instance {
    /// FMI 2.0 Co-Simulation.
    Fmi2(Fmi2Instance),
    /// FMI 3.0 Co-Simulation.
    Fmi3(Fmi3Instance),
    /// FMI 2.0 Model Exchange, integrated by the master ([`MeInstance`]).
    Me2(Box<MeInstance<Fmi2Instance>>),
    /// FMI 3.0 Model Exchange, integrated by the master ([`MeInstance`]).
    Me3(Box<MeInstance<Fmi3Instance>>),
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (version, core) = match self {
            Self::Fmi2(i) => ("Fmi2", &i.core),
            Self::Fmi3(i) => ("Fmi3", &i.core),
            Self::Me2(i) => ("Me2", &i.inner().core),
            Self::Me3(i) => ("Me3", &i.inner().core),
        };
        f.debug_struct(version)
            .field("name", &core.name)
            .field("fmu", &core.fmu.0.path())
            .field("time", &core.time)
            .finish_non_exhaustive()
    }
}

// Instances move to worker threads.
const _: () = {
    const fn send<T: Send>() {}
    send::<Instance>();
};

impl Instance {
    /// This instance as the master holds it (`Execution::new`): the version's own instance,
    /// boxed here, so that its methods are this crate's code (a box made in another crate calls
    /// that crate's copies of the generic methods, inlined differently; `cosim bench` measures the
    /// master's own), with one dynamic dispatch per call as before.
    pub fn boxed(self) -> Box<dyn FmuInstance> {
        match self {
            Self::Fmi2(i) => Box::new(i),
            Self::Fmi3(i) => Box::new(i),
            Self::Me2(i) => i,
            Self::Me3(i) => i,
        }
    }

    /// A Model Exchange instance's FMU and its integrator's options, for a group integrated as
    /// one ODE (`crate::me_group`); `Err(self)` for a Co-Simulation instance.
    pub fn into_model_exchange(
        self,
    ) -> std::result::Result<(Box<dyn super::me::ModelExchange>, crate::ode::Options), Box<Self>> {
        match self {
            Self::Me2(i) => {
                let (fmu, options) = i.into_parts();
                Ok((Box::new(fmu), options))
            }
            Self::Me3(i) => {
                let (fmu, options) = i.into_parts();
                Ok((Box::new(fmu), options))
            }
            other => Err(Box::new(other)),
        }
    }

    fn core(&self) -> &Core {
        match self {
            Self::Fmi2(i) => &i.core,
            Self::Fmi3(i) => &i.core,
            Self::Me2(i) => &i.inner().core,
            Self::Me3(i) => &i.inner().core,
        }
    }

    /// The FMU this is an instance of.
    pub fn fmu(&self) -> &Arc<Fmu> {
        &self.core().fmu.0
    }

    /// The last message the FMU logged for this instance (empty if none).
    pub fn last_log(&self) -> String {
        match self {
            Self::Fmi2(i) => i.last_log(),
            Self::Fmi3(i) => i.raw.env().last_message(),
            Self::Me2(i) => i.inner().last_log(),
            Self::Me3(i) => i.inner().raw.env().last_message(),
        }
    }

    /// The time of the last successful `setup` or `do_step` end point.
    pub fn time(&self) -> f64 {
        self.core().time
    }

    /// How many warnings this instance gave: messages logged with status Warning (our FMUs
    /// report physical states such as cavitation this way while the call returns OK) plus calls
    /// that returned Warning without logging anything.
    pub fn warnings(&self) -> u64 {
        self.fmu_warnings()
    }

    /// `fmi2Reset` / `fmi3Reset`: back to the state after instantiation.
    pub fn reset(&mut self) -> Result<()> {
        match self {
            Self::Fmi2(i) => i.reset(),
            Self::Fmi3(i) => i.reset(),
            Self::Me2(_) => Err(Call::Terminate.unsupported_in(self.name(), Version::Fmi2)),
            Self::Me3(_) => Err(Call::Terminate.unsupported_in(self.name(), Version::Fmi3)),
        }
    }

    /// `fmi2GetRealOutputDerivatives` / `fmi3GetOutputDerivatives` (one order for all given
    /// references).
    pub fn get_output_derivatives(&mut self, vr: &[u32], order: i32, out: &mut [f64]) -> Result<()> {
        match self {
            Self::Fmi2(i) => i.get_output_derivatives(vr, order, out),
            Self::Fmi3(i) => i.get_output_derivatives(vr, order, out),
            Self::Me2(i) => Err(MasterError::Worker {
                instance: i.name().to_owned(),
                function: "fmi2GetRealOutputDerivatives",
                time: i.inner().core.time,
                message: "a Model Exchange instance has no output derivatives".into(),
            }),
            Self::Me3(i) => Err(MasterError::Worker {
                instance: i.name().to_owned(),
                function: "fmi3GetOutputDerivatives",
                time: i.inner().core.time,
                message: "a Model Exchange instance has no output derivatives".into(),
            }),
        }
    }
}

impl FmuInstance for Instance {
    fn name(&self) -> &str {
        &self.core().name
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match self {
            Self::Fmi2(i) => i.execute(call),
            Self::Fmi3(i) => i.execute(call),
            Self::Me2(i) => i.execute(call),
            Self::Me3(i) => i.execute(call),
        }
    }
    fn version(&self) -> Version {
        match self {
            Self::Fmi2(_) | Self::Me2(_) => Version::Fmi2,
            Self::Fmi3(_) | Self::Me3(_) => Version::Fmi3,
        }
    }
    fn value_type(&self, vr: u32) -> Option<super::ValueType> {
        match self {
            Self::Fmi2(_) | Self::Me2(_) => None,
            Self::Fmi3(i) => i.value_type(vr),
            Self::Me3(i) => i.value_type(vr),
        }
    }
    fn can_interpolate_inputs(&self) -> bool {
        match self {
            Self::Fmi2(i) => i.can_interpolate_inputs(),
            Self::Fmi3(i) => i.can_interpolate_inputs(),
            Self::Me2(i) => i.can_interpolate_inputs(),
            Self::Me3(i) => i.can_interpolate_inputs(),
        }
    }
    fn call_stats(&self) -> (f64, u64) {
        match self {
            Self::Me2(i) => i.call_stats(),
            Self::Me3(i) => i.call_stats(),
            _ => (self.core().busy.as_secs_f64(), self.core().steps),
        }
    }
    fn fmu_warnings(&self) -> u64 {
        match self {
            Self::Fmi2(i) => i.fmu_warnings(),
            Self::Fmi3(i) => i.fmu_warnings(),
            Self::Me2(i) => i.fmu_warnings(),
            Self::Me3(i) => i.fmu_warnings(),
        }
    }
    fn set_timing(&mut self, on: bool) {
        match self {
            Self::Fmi2(i) => i.set_timing(on),
            Self::Fmi3(i) => i.set_timing(on),
            Self::Me2(i) => i.set_timing(on),
            Self::Me3(i) => i.set_timing(on),
        }
    }
    fn solver_stats(&mut self) -> Option<super::me::MeStats> {
        match self {
            Self::Me2(i) => i.solver_stats(),
            Self::Me3(i) => i.solver_stats(),
            _ => None,
        }
    }
}

/// What every instance keeps whatever its version: name, time, timing, counters, status handling.
pub(crate) struct Core {
    // Field order is drop order: the FMU reference goes after the instance (declared before
    // `Core` in each instance type).
    pub(crate) fmu: Live,
    pub(crate) name: String,
    pub(crate) time: f64,
    pub(crate) busy: Duration,
    pub(crate) steps: u64,
    pub(crate) warnings: u64,
    pub(crate) can_interpolate_inputs: bool,
    /// Measure the time inside FMU calls (two clock reads per call; off for overhead benchmarks).
    pub(crate) timing: bool,
}

impl Core {
    pub(crate) fn new(fmu: Live, name: &str, can_interpolate_inputs: bool) -> Self {
        Self {
            fmu,
            name: name.to_owned(),
            time: 0.0,
            busy: Duration::ZERO,
            steps: 0,
            warnings: 0,
            can_interpolate_inputs,
            timing: false,
        }
    }

    /// Runs one FMU call `f` on `raw`, adding its duration to the time spent inside the FMU when
    /// timing is on. Always inlined: an out-of-line copy per call kind costs ~30 instructions per
    /// call on the hot path.
    #[inline(always)]
    pub(crate) fn timed<R>(&mut self, raw: &mut R, f: impl FnOnce(&mut R) -> c_int) -> c_int {
        if !self.timing {
            return f(raw);
        }
        let t0 = Instant::now();
        let status = f(raw);
        self.busy += t0.elapsed();
        status
    }

    /// Maps a status to `Ok` or [`MasterError::Call`] naming `function()` (a name asked for only
    /// on that cold path: the hot path costs one comparison). `messages_before` is the FMU's
    /// message count before the call, to tell whether the last message belongs to this call.
    #[inline]
    pub(crate) fn check(
        &mut self,
        version: Version,
        function: impl FnOnce() -> &'static str,
        (status, messages_before): (c_int, u64),
        env: &ffi::InstanceEnv,
    ) -> Result<()> {
        if status == ffi::OK {
            return Ok(());
        }
        self.check_status(version, function(), status, messages_before, env)
    }

    /// [`Self::check`] for a status other than OK.
    #[cold]
    fn check_status(
        &mut self,
        version: Version,
        function: &'static str,
        status: c_int,
        messages_before: u64,
        env: &ffi::InstanceEnv,
    ) -> Result<()> {
        let prefix = match version {
            Version::Fmi2 => "fmi2",
            Version::Fmi3 => "fmi3",
        };
        match status {
            ffi::OK => Ok(()),
            ffi::WARNING => {
                if env.counts().0 == messages_before {
                    self.warnings += 1;
                    // The FMU gave no reason; say at least which call warned.
                    env.note(
                        ffi::WARNING,
                        &format!("{function} at t = {} returned {prefix}Warning (no message from the FMU)", self.time),
                    );
                }
                Ok(())
            }
            _ => {
                let last = env.last_message();
                let last_log = if env.counts().0 != messages_before || last.is_empty() {
                    last
                } else {
                    format!("(no message during this call; the FMU's last message was: {last})")
                };
                let mut status = ffi::status_name(status).replacen("fmi2", prefix, 1);
                if status.ends_with("Pending") {
                    status.push_str(" (asynchronous steps are not supported)");
                }
                if status.ends_with("Discard") && function.ends_with("DoStep") {
                    status.push_str(" (the FMU could not complete the step; cosim does not retry steps)");
                }
                Err(MasterError::Call { instance: self.name.clone(), function, time: self.time, status, last_log })
            }
        }
    }

    /// A [`MasterError::Call`] for arguments rejected before calling the FMU.
    pub(crate) fn invalid(&self, function: &'static str, why: String) -> MasterError {
        MasterError::Call {
            instance: self.name.clone(),
            function,
            time: self.time,
            status: format!("not called: {why}"),
            last_log: String::new(),
        }
    }

    #[inline]
    pub(crate) fn lengths(&self, function: impl FnOnce() -> &'static str, refs: usize, values: usize) -> Result<()> {
        if refs == values {
            Ok(())
        } else {
            Err(self.invalid(function(), format!("{refs} value references but {values} values")))
        }
    }
}

/// One instance of an FMI 2.0 Co-Simulation FMU, calling the `fmi2*` functions. `Send`, so it may
/// move to a worker thread (one thread at a time: every call takes `&mut self`). Dropping it calls
/// `fmi2FreeInstance`.
///
/// Status handling: fmi2OK and fmi2Warning (handed to the log sink with the FMU's message)
/// succeed; fmi2Discard, fmi2Error, fmi2Fatal and fmi2Pending (asynchronous steps are not
/// supported) give [`MasterError::Call`] with the function, the time, the status and the FMU's
/// message.
pub struct Fmi2Instance {
    // Field order is drop order: fmi2FreeInstance runs before the FMU reference is released.
    instance: ffi::Instance,
    core: Core,
    /// Reused `order` array of fmi2SetRealInputDerivatives (no allocation per step).
    orders: Vec<i32>,
    /// Reused fmi2Integer buffer of the Int64 calls.
    ints: Vec<i32>,
}

impl Fmi2Instance {
    pub(crate) fn new(instance: ffi::Instance, core: Core) -> Self {
        Self { instance, core, orders: Vec::new(), ints: Vec::new() }
    }

    /// Runs one FMU call: its status and the FMU's message count before it.
    #[inline(always)]
    fn call(&mut self, f: impl FnOnce(&mut ffi::Instance) -> c_int) -> (c_int, u64) {
        let before = self.instance.env().message_count();
        (self.core.timed(&mut self.instance, f), before)
    }

    fn fmu_warnings(&self) -> u64 {
        self.core.warnings + self.instance.env().counts().1
    }

    /// The raw instance, for calls the [`FmuInstance`] API does not make (`cosim check`).
    pub(crate) fn raw(&mut self) -> &mut ffi::Instance {
        &mut self.instance
    }

    /// The last message the FMU logged for this instance (empty if none).
    pub fn last_log(&self) -> String {
        self.instance.env().last_message()
    }

    /// How many warnings this instance gave ([`Instance::warnings`]).
    pub fn warnings(&self) -> u64 {
        self.fmu_warnings()
    }

    /// `fmi2Reset`: back to the state after instantiation.
    pub fn reset(&mut self) -> Result<()> {
        let s = self.call(ffi::Instance::reset);
        self.core.check(V, || "fmi2Reset", s, self.instance.env())
    }

    /// `fmi2GetRealOutputDerivatives` (one order for all given references).
    pub fn get_output_derivatives(&mut self, vr: &[u32], order: i32, out: &mut [f64]) -> Result<()> {
        let function = || "fmi2GetRealOutputDerivatives";
        self.core.lengths(function, vr.len(), out.len())?;
        let orders = vec![order; vr.len()];
        let s = self.call(|r| r.get_real_output_derivatives(vr, &orders, out));
        self.core.check(V, function, s, self.instance.env())
    }
}

const V: Version = Version::Fmi2;

impl super::me::ModelExchange for Fmi2Instance {
    fn sizes(&mut self) -> Result<(usize, usize)> {
        let md = self.core.fmu.0.model_description();
        Ok((md.model_structure.derivatives.len(), md.number_of_event_indicators.unwrap_or(0) as usize))
    }
    fn vector(&mut self, which: super::me::Vector, out: &mut [f64]) -> Result<()> {
        use super::me::Vector;
        let s = self.call(|i| i.get_vector(which, out));
        let function = || match which {
            Vector::States => "fmi2GetContinuousStates",
            Vector::Derivatives => "fmi2GetDerivatives",
            Vector::EventIndicators => "fmi2GetEventIndicators",
            Vector::Nominals => "fmi2GetNominalsOfContinuousStates",
        };
        self.core.check(V, function, s, self.instance.env())
    }
    fn set_time(&mut self, t: f64) -> Result<()> {
        self.core.time = t;
        let s = self.call(|i| i.set_time(t));
        self.core.check(V, || "fmi2SetTime", s, self.instance.env())
    }
    fn set_states(&mut self, x: &[f64]) -> Result<()> {
        let s = self.call(|i| i.set_continuous_states(x));
        self.core.check(V, || "fmi2SetContinuousStates", s, self.instance.env())
    }
    fn enter_event_mode(&mut self) -> Result<()> {
        let s = self.call(ffi::Instance::enter_event_mode);
        self.core.check(V, || "fmi2EnterEventMode", s, self.instance.env())
    }
    fn update_discrete_states(&mut self) -> Result<super::me::EventInfo> {
        let mut info = super::me::EventInfo::default();
        let s = self.call(|i| i.new_discrete_states(&mut info));
        self.core.check(V, || "fmi2NewDiscreteStates", s, self.instance.env())?;
        Ok(info)
    }
    fn enter_continuous_time_mode(&mut self) -> Result<()> {
        let s = self.call(ffi::Instance::enter_continuous_time_mode);
        self.core.check(V, || "fmi2EnterContinuousTimeMode", s, self.instance.env())
    }
    fn completed_integrator_step(&mut self) -> Result<(bool, bool)> {
        let mut out = (false, false);
        let s = self.call(|i| i.completed_integrator_step(&mut out));
        self.core.check(V, || "fmi2CompletedIntegratorStep", s, self.instance.env())?;
        Ok(out)
    }
}

impl FmuInstance for Fmi2Instance {
    fn name(&self) -> &str {
        &self.core.name
    }

    // Always inlined into the typed methods (`set_real`, `do_step`, …), where the call's variant
    // is known: the match folds away and the hot path costs what a direct call did.
    #[inline(always)]
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        let op = call.op();
        // Named only where an error needs it (folded away on the hot path).
        let function = move || op.function(V);
        let s = match call {
            Call::Setup { start, stop } => {
                self.core.time = start;
                self.call(|i| i.setup_experiment(None, start, stop))
            }
            Call::EnterInitialization => self.call(|i| i.enter_initialization_mode()),
            Call::ExitInitialization => self.call(|i| i.exit_initialization_mode()),
            Call::GetFloat64 { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_real(vr, out))
            }
            Call::SetFloat64 { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                self.call(|i| i.set_real(vr, values))
            }
            Call::GetInt64 { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                let mut ints = std::mem::take(&mut self.ints);
                ints.clear();
                ints.resize(vr.len(), 0);
                let s = self.call(|i| i.get_integer(vr, &mut ints));
                for (o, k) in out.iter_mut().zip(&ints) {
                    *o = i64::from(*k);
                }
                self.ints = ints;
                s
            }
            Call::SetInt64 { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                let mut ints = std::mem::take(&mut self.ints);
                ints.clear();
                for (r, v) in vr.iter().zip(values) {
                    match i32::try_from(*v) {
                        Ok(k) => ints.push(k),
                        Err(_) => {
                            self.ints = ints;
                            let why = format!("value reference {r}: {v} is outside the range of fmi2Integer (32 bits)");
                            return Err(self.core.invalid(function(), why));
                        }
                    }
                }
                let s = self.call(|i| i.set_integer(vr, &ints));
                self.ints = ints;
                s
            }
            Call::GetBoolean { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_boolean(vr, out))
            }
            Call::SetBoolean { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                self.call(|i| i.set_boolean(vr, values))
            }
            Call::GetString { vr, out } => self.call(|i| {
                let (status, v) = i.get_string(vr);
                *out = v;
                status
            }),
            Call::SetString { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if let Some(v) = values.iter().find(|v| v.contains('\0')) {
                    return Err(self.core.invalid(function(), format!("the value {v:?} contains a NUL character")));
                }
                self.call(|i| i.set_string(vr, values))
            }
            Call::SetInputDerivatives { vr, order, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if self.orders.len() != vr.len() || self.orders.first() != Some(&order) {
                    self.orders.clear();
                    self.orders.resize(vr.len(), order);
                }
                let orders = std::mem::take(&mut self.orders);
                let s = self.call(|i| i.set_real_input_derivatives(vr, &orders, values));
                self.orders = orders;
                s
            }
            Call::DoStep { t, h } => {
                self.core.time = t;
                let s = self.call(|i| i.do_step(t, h, true));
                self.core.steps += 1;
                self.core.check(V, function, s, self.instance.env())?;
                self.core.time = t + h;
                return Ok(());
            }
            Call::Terminate => self.call(|i| i.terminate()),
            Call::SaveState => self.call(ffi::Instance::save_state),
            Call::RestoreState => self.call(ffi::Instance::restore_state),
            Call::GetBooleanStatus { kind, out } => self.call(|i| i.get_boolean_status(kind, out)),
            Call::GetRealStatus { kind, out } => self.call(|i| i.get_real_status(kind, out)),
            other @ (Call::GetBinary { .. }
            | Call::SetBinary { .. }
            | Call::GetUInt64 { .. }
            | Call::SetUInt64 { .. }
            | Call::GetClock { .. }
            | Call::SetClock { .. }
            | Call::EnterEventMode
            | Call::UpdateDiscreteStates { .. }
            | Call::EnterStepMode) => {
                let mut e = other.unsupported_in(&self.core.name, V);
                if let MasterError::Worker { time, .. } = &mut e {
                    *time = self.core.time;
                }
                return Err(e);
            }
        };
        self.core.check(V, function, s, self.instance.env())
    }

    fn version(&self) -> Version {
        V
    }

    fn can_interpolate_inputs(&self) -> bool {
        self.core.can_interpolate_inputs
    }

    /// Time inside every FMU call of this instance (s), measured with [`Instant`] around each
    /// call, and the number of `fmi2DoStep` calls.
    fn call_stats(&self) -> (f64, u64) {
        (self.core.busy.as_secs_f64(), self.core.steps)
    }

    fn fmu_warnings(&self) -> u64 {
        Fmi2Instance::fmu_warnings(self)
    }

    fn set_timing(&mut self, on: bool) {
        self.core.timing = on;
    }
}

impl std::fmt::Debug for Fmi2Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fmi2Instance")
            .field("name", &self.core.name)
            .field("time", &self.core.time)
            .finish_non_exhaustive()
    }
}
