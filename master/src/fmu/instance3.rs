//! [`Fmi3Instance`]: one instance of an FMI 3.0 Co-Simulation FMU, calling the `fmi3*`
//! functions directly (`ffi3.rs`) for every [`Call`]: each value travels in its carrier
//! ([`super::value`]) and is got or set with its own type's function (`fmi3GetInt8`,
//! `fmi3GetUInt64`, …); errors name that function.
//!
//! - [`Call::Setup`] is remembered and passed to `fmi3EnterInitializationMode`;
//! - a call whose variables are all of the carrier's own type (Float64 for [`Call::GetFloat64`],
//!   Int64 for [`Call::GetInt64`], UInt64) is one FMI call into the caller's slice; otherwise one
//!   call per variable of its type (Float32 widened exactly, narrow integers range-checked);
//! - fixed-size array elements (value references from `ARRAY_ELEMENT_VR_BASE`) are read by
//!   reading the whole array; a Float64 element is set by setting the whole array from the values
//!   set so far (kept per instance from the start values);
//! - an FMU without `hasEventMode` is instantiated with `eventModeUsed = false`,
//!   `earlyReturnAllowed = false`: `terminateSimulation` becomes the master's termination
//!   protocol (the step is discarded, [`Call::GetBooleanStatus`] answers terminated and
//!   [`Call::GetRealStatus`] the `lastSuccessfulTime`); `eventHandlingNeeded` is noted as a
//!   warning (FMI 3.0 §4.2.2: without event mode the FMU handles its events internally); an
//!   early return is an error.
//! - an FMU with `hasEventMode` runs in event mode (`events.rs`): [`Call::DoStep`] from t to
//!   t + h handles every event inside the step at its own time (early return, `nextEventTime`)
//!   and reaches t + h; [`Call::EnterEventMode`], [`Call::UpdateDiscreteStates`],
//!   [`Call::EnterStepMode`], [`Call::GetClock`] and [`Call::SetClock`] call their functions
//!   (refused naming the function when the binary lacks it); input derivatives do not exist in
//!   FMI 3.0.

use super::call::{status_kind, Version};
use super::ffi::{DISCARD, OK, WARNING};
use super::ffi3::{Get, Instance3, Modes, Set};
use super::instance::Core;
use super::value::ValueType;
use super::{Call, FmuInstance};
use crate::error::{MasterError, Result};
use model_description::{ArrayElement, ModelDescription};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Arc;

const V: Version = Version::Fmi3;

/// The type of every value reference of a 3.0 FMU, decided once at load time.
pub(crate) struct Types3 {
    /// The type of each scalar value reference below `dense.len()` (an indexed lookup on every
    /// getter and setter instead of a hash).
    dense: Vec<Option<ValueType>>,
    types: HashMap<u32, ValueType>,
    /// Array elements by their own value reference, with the array's type.
    elements: HashMap<u32, (ArrayElement, ValueType)>,
    /// Start values of the Float64 arrays (by the array's reference).
    starts: HashMap<u32, Vec<f64>>,
    /// Every Float variable is a scalar Float64: the Float64 calls are a plain forward.
    floats_are_float64: bool,
    /// The structural parameters (not in `types`: never on a getter's or setter's fast path):
    /// name, type and the value each instance is configured with, by value reference.
    pub(crate) structural: Vec<(u32, String, ValueType, i128)>,
    /// How instances are instantiated (event mode when the FMU declares `hasEventMode`).
    pub(crate) modes: Modes,
    /// The `<Clock>` variables (Scheduled Execution activates their partitions).
    pub(crate) clocks: Vec<model_description::Clock3>,
    /// Clocks in Co-Simulation (`clocks.rs`): the FMU has `<Clock>` variables and event mode.
    pub(crate) cs_clocks: bool,
    /// The scalar clocked variables: value reference, its clocks, an input (else read only),
    /// the start value (what the master reads before the first activation).
    pub(crate) clocked: Vec<(u32, Vec<u32>, bool, Option<super::Value>)>,
}

/// The start value of a clocked variable of type `ty` as the master carries it.
fn clocked_start(kind: &model_description::VariableKind, ty: ValueType) -> Option<super::Value> {
    use super::value::Carrier;
    use super::Value;
    use model_description::VariableKind as K;
    Some(match (kind, ty.carrier()) {
        (K::Real { start: Some(x), .. }, Carrier::Float) => Value::Float(*x),
        (K::Integer { start: Some(k), .. }, Carrier::Int) => Value::Int(i64::try_from(*k).ok()?),
        (K::Integer { start: Some(k), .. }, Carrier::UInt) => Value::UInt(u64::try_from(*k).ok()?),
        (K::Boolean { start: Some(b), .. }, Carrier::Boolean) => Value::Boolean(*b),
        _ => return None,
    })
}

impl Types3 {
    pub(crate) fn new(md: &ModelDescription, x: &model_description::Fmi3) -> Self {
        let mut t = Self {
            dense: Vec::new(),
            types: HashMap::new(),
            elements: HashMap::new(),
            starts: HashMap::new(),
            floats_are_float64: true,
            structural: x
                .structural
                .iter()
                .filter_map(|s| Some((s.vr, s.name.clone(), ValueType::of3(s.ty), s.value?)))
                .collect(),
            modes: Modes {
                event_mode_used: x.has_event_mode,
                early_return_allowed: x.has_event_mode && x.might_return_early,
                intermediate_update: x.has_event_mode && x.provides_intermediate_update,
                scheduled: !x.has_co_simulation && x.scheduled_execution.is_some(),
            },
            clocks: x.clocks.clone(),
            cs_clocks: x.has_co_simulation && x.has_event_mode && !x.clocks.is_empty(),
            clocked: x
                .clocked
                .iter()
                .filter_map(|(name, _, refs)| {
                    let i = md.model_variables.iter().position(|v| v.name == *name)?;
                    let v = &md.model_variables[i];
                    let ty = ValueType::of3(*x.types.get(i)?);
                    let input = v.causality == model_description::Causality::Input;
                    Some((v.value_reference, refs.clone(), input, clocked_start(&v.kind, ty)))
                })
                .collect(),
        };
        for c in &x.clocks {
            t.types.insert(c.vr, ValueType::Clock);
        }
        for (v, ty) in md.model_variables.iter().zip(&x.types) {
            let ty = ValueType::of3(*ty);
            if x.structural.iter().any(|s| s.vr == v.value_reference) {
                continue;
            }
            match x.elements.iter().find(|el| el.vr == v.value_reference) {
                Some(el) => {
                    t.elements.insert(el.vr, (*el, ty));
                    if ty == ValueType::Float64 {
                        let start = match v.kind {
                            model_description::VariableKind::Real { start, .. } => start.unwrap_or(0.0),
                            _ => 0.0,
                        };
                        let values = t.starts.entry(el.array_vr).or_insert_with(|| vec![0.0; el.len]);
                        if let Some(s) = values.get_mut(el.index) {
                            *s = start;
                        }
                    }
                }
                None => {
                    t.types.insert(v.value_reference, ty);
                }
            }
        }
        t.floats_are_float64 = t.elements.is_empty() && !t.types.values().any(|ty| *ty == ValueType::Float32);
        let max = t.types.keys().copied().filter(|vr| *vr < 1 << 16).max().map_or(0, |m| m as usize + 1);
        t.dense = vec![None; max];
        for (vr, ty) in &t.types {
            if let Some(d) = t.dense.get_mut(*vr as usize) {
                *d = Some(*ty);
            }
        }
        t
    }

    /// The type of scalar `vr`.
    #[inline]
    fn ty(&self, vr: u32) -> Option<ValueType> {
        match self.dense.get(vr as usize) {
            Some(t) => *t,
            None => self.types.get(&vr).copied(),
        }
    }

    /// The type of `vr` and, for an array element, which element.
    fn lookup(&self, vr: u32) -> Option<(ValueType, Option<ArrayElement>)> {
        match self.ty(vr) {
            Some(t) => Some((t, None)),
            None => self
                .elements
                .get(&vr)
                .map(|(el, t)| (*t, Some(*el)))
                .or_else(|| self.structural.iter().find(|s| s.0 == vr).map(|s| (s.2, None))),
        }
    }

    #[inline]
    fn all(&self, vr: &[u32], ty: ValueType) -> bool {
        vr.iter().all(|r| self.ty(*r) == Some(ty))
    }
}

/// One instance of an FMI 3.0 Co-Simulation FMU (module documentation). Dropping it calls
/// `fmi3FreeInstance`.
pub struct Fmi3Instance {
    // Field order is drop order: fmi3FreeInstance runs before the FMU reference is released.
    pub(crate) raw: Instance3,
    pub(crate) core: Core,
    types: Arc<Types3>,
    tolerance: Option<f64>,
    start: f64,
    stop: Option<f64>,
    /// `terminateSimulation` and `lastSuccessfulTime` of the last step.
    pub(super) terminated: bool,
    pub(super) last_time: f64,
    /// Event mode (`events.rs`): the `nextEventTime` the FMU announced last, and counts.
    pub(super) events: super::events::EventState,
    /// Scheduled Execution (`scheduled.rs`): the clocks' intervals and activation counts.
    pub(super) schedule: super::scheduled::Schedule,
    /// Clocks in Co-Simulation (`clocks.rs`; boxed: most instances have none).
    pub(super) clockset: Box<super::clocks::ClockSet>,
    /// The values of the Float64 arrays whose elements the master sets.
    shadow: HashMap<u32, Vec<f64>>,
    /// Reused fmi3Boolean buffer.
    bools: Vec<u8>,
    /// `fmi3GetFloat64` and `fmi3SetFloat64`, copied out of the table: the hot path reads each
    /// with one load.
    get_float64: Get<f64>,
    set_float64: Set<f64>,
}

impl std::fmt::Debug for Fmi3Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fmi3Instance")
            .field("name", &self.core.name)
            .field("time", &self.core.time)
            .finish_non_exhaustive()
    }
}

impl Fmi3Instance {
    pub(crate) fn new(raw: Instance3, types: Arc<Types3>, core: Core) -> Self {
        let shadow = types.starts.clone();
        let clockset = Box::new(super::clocks::ClockSet::new(&types));
        let (get_float64, set_float64) = (raw.api().get_float64, raw.api().set_float64);
        Self {
            get_float64,
            set_float64,
            raw,
            core,
            types,
            tolerance: None,
            start: 0.0,
            stop: None,
            terminated: false,
            last_time: f64::NAN,
            events: super::events::EventState::default(),
            schedule: super::scheduled::Schedule::default(),
            clockset,
            shadow,
            bools: Vec::new(),
        }
    }

    /// Runs one FMI call: its status and the FMU's message count before it.
    #[inline(always)]
    pub(super) fn call(&mut self, f: impl FnOnce(&mut Instance3) -> c_int) -> (c_int, u64) {
        let before = self.raw.env().message_count();
        (self.core.timed(&mut self.raw, f), before)
    }

    #[inline]
    pub(super) fn check(&mut self, function: impl FnOnce() -> &'static str, s: (c_int, u64)) -> Result<()> {
        self.core.check(V, function, s, self.raw.env())
    }

    pub(crate) fn fmu_warnings(&self) -> u64 {
        self.core.warnings + self.raw.env().counts().1
    }

    /// The name of the variable with value reference `vr` (for errors).
    fn var(&self, vr: u32) -> String {
        self.core
            .fmu
            .0
            .variables()
            .iter()
            .find(|v| v.value_reference == vr)
            .map_or_else(|| format!("value reference {vr}"), |v| format!("{} (value reference {vr})", v.name))
    }

    /// A call refused before the FMU is called.
    pub(super) fn refuse(&self, function: &'static str, why: String) -> MasterError {
        self.core.invalid(function, why)
    }

    fn wrong(&self, function: &'static str, vr: u32, wanted: &str) -> MasterError {
        let ty = self.types.lookup(vr).map_or("unknown", |(t, _)| t.name());
        self.refuse(function, format!("{}: its type is {ty}, not {wanted}", self.var(vr)))
    }

    /// One value of `r` (a scalar or an array element) with getter `get`.
    fn get_one<T: Copy + Default>(
        &mut self,
        get: Get<T>,
        function: &'static str,
        r: u32,
        el: Option<ArrayElement>,
    ) -> Result<T> {
        match el {
            None => {
                let mut v = T::default();
                let s = self.call(|i| i.get(get, &[r], std::slice::from_mut(&mut v)));
                self.check(|| function, s)?;
                Ok(v)
            }
            Some(el) => {
                let mut buf = vec![T::default(); el.len];
                let s = self.call(|i| i.get(get, &[el.array_vr], &mut buf));
                self.check(|| function, s)?;
                Ok(buf.get(el.index).copied().unwrap_or_default())
            }
        }
    }

    /// Sets scalar `r` to `v` with setter `set`.
    fn set_one<T: Copy>(&mut self, set: Set<T>, function: &'static str, r: u32, v: T) -> Result<()> {
        let s = self.call(|i| i.set(set, &[r], &[v]));
        self.check(|| function, s)
    }

    /// An integer value of `r` of any integer type, exactly.
    fn get_int(&mut self, function: &'static str, r: u32) -> Result<i128> {
        let api = *self.raw.api();
        let Some((ty, el)) = self.types.lookup(r) else { return Err(self.wrong(function, r, "an integer type")) };
        Ok(match ty {
            ValueType::Int8 => self.get_one(api.get_int8, "fmi3GetInt8", r, el)?.into(),
            ValueType::UInt8 => self.get_one(api.get_uint8, "fmi3GetUInt8", r, el)?.into(),
            ValueType::Int16 => self.get_one(api.get_int16, "fmi3GetInt16", r, el)?.into(),
            ValueType::UInt16 => self.get_one(api.get_uint16, "fmi3GetUInt16", r, el)?.into(),
            ValueType::Int32 => self.get_one(api.get_int32, "fmi3GetInt32", r, el)?.into(),
            ValueType::UInt32 => self.get_one(api.get_uint32, "fmi3GetUInt32", r, el)?.into(),
            ValueType::Int64 | ValueType::Enumeration => self.get_one(api.get_int64, "fmi3GetInt64", r, el)?.into(),
            ValueType::UInt64 => self.get_one(api.get_uint64, "fmi3GetUInt64", r, el)?.into(),
            _ => return Err(self.wrong(function, r, "an integer type")),
        })
    }

    /// Sets integer `r` of any integer type to `v`, refused outside the type's range.
    fn set_int(&mut self, function: &'static str, r: u32, v: i128) -> Result<()> {
        if let Some((_, name, _, configured)) = self.types.structural.iter().find(|s| s.0 == r) {
            // Set in configuration mode at instantiation ([`Fmi3Instance::configure`]): the same
            // value again is that value; another one would change the arrays' sizes mid-run.
            if v == *configured {
                return Ok(());
            }
            let why = format!(
                "structural parameter {name} is configured as {configured} (set before instantiation, in \
                 configuration mode); it cannot be set to {v} afterwards"
            );
            return Err(self.refuse(function, why));
        }
        self.set_int_now(function, r, v)
    }

    /// [`Self::set_int`] without the structural parameters' guard.
    fn set_int_now(&mut self, function: &'static str, r: u32, v: i128) -> Result<()> {
        let api = *self.raw.api();
        let Some((ty, el)) = self.types.lookup(r) else { return Err(self.wrong(function, r, "an integer type")) };
        if el.is_some() {
            let why = format!("{}: setting an element of a {ty} array is not supported", self.var(r));
            return Err(self.refuse(function, why));
        }
        if let Some((lo, hi)) = ty.int_range() {
            if v < lo || v > hi {
                let why = format!("{}: {v} is outside the range of {ty} ({lo} to {hi})", self.var(r));
                return Err(self.refuse(ty.fmi3_setter(), why));
            }
        }
        // In range (checked above): the casts are exact.
        match ty {
            ValueType::Int8 => self.set_one(api.set_int8, "fmi3SetInt8", r, v as i8),
            ValueType::UInt8 => self.set_one(api.set_uint8, "fmi3SetUInt8", r, v as u8),
            ValueType::Int16 => self.set_one(api.set_int16, "fmi3SetInt16", r, v as i16),
            ValueType::UInt16 => self.set_one(api.set_uint16, "fmi3SetUInt16", r, v as u16),
            ValueType::Int32 => self.set_one(api.set_int32, "fmi3SetInt32", r, v as i32),
            ValueType::UInt32 => self.set_one(api.set_uint32, "fmi3SetUInt32", r, v as u32),
            ValueType::Int64 | ValueType::Enumeration => self.set_one(api.set_int64, "fmi3SetInt64", r, v as i64),
            ValueType::UInt64 => self.set_one(api.set_uint64, "fmi3SetUInt64", r, v as u64),
            _ => Err(self.wrong(function, r, "an integer type")),
        }
    }

    fn get_floats(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        let api = *self.raw.api();
        for (r, o) in vr.iter().zip(out.iter_mut()) {
            *o = match self.types.lookup(*r) {
                Some((ValueType::Float64, el)) => self.get_one(api.get_float64, "fmi3GetFloat64", *r, el)?,
                Some((ValueType::Float32, el)) => f64::from(self.get_one(api.get_float32, "fmi3GetFloat32", *r, el)?),
                _ => return Err(self.wrong("fmi3GetFloat64", *r, "Float64 or Float32")),
            };
        }
        Ok(())
    }

    fn set_floats(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        let api = *self.raw.api();
        for (r, v) in vr.iter().zip(values) {
            match self.types.lookup(*r) {
                Some((ValueType::Float64, None)) => self.set_one(api.set_float64, "fmi3SetFloat64", *r, *v)?,
                // Rounded to the nearest f32, as the FMU stores it.
                Some((ValueType::Float32, None)) => self.set_one(api.set_float32, "fmi3SetFloat32", *r, *v as f32)?,
                Some((ValueType::Float64, Some(el))) => {
                    let Some(mut values) = self.shadow.remove(&el.array_vr).filter(|s| s.len() == el.len) else {
                        let why = format!("{}: the array has no start values to set an element of", self.var(*r));
                        return Err(self.refuse("fmi3SetFloat64", why));
                    };
                    values[el.index] = *v;
                    let s = self.call(|i| i.set(api.set_float64, &[el.array_vr], &values));
                    self.shadow.insert(el.array_vr, values);
                    self.check(|| "fmi3SetFloat64", s)?;
                }
                Some((ty, Some(_))) => {
                    let why = format!("{}: setting an element of a {ty} array is not supported", self.var(*r));
                    return Err(self.refuse("fmi3SetFloat64", why));
                }
                _ => return Err(self.wrong("fmi3SetFloat64", *r, "Float64 or Float32")),
            }
        }
        Ok(())
    }

    fn get_booleans(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()> {
        let api = *self.raw.api();
        if vr.iter().any(|r| self.types.ty(*r) != Some(ValueType::Boolean)) {
            for (r, o) in vr.iter().zip(out.iter_mut()) {
                *o = match self.types.lookup(*r) {
                    Some((ValueType::Boolean, el)) => self.get_one(api.get_boolean, "fmi3GetBoolean", *r, el)? != 0,
                    _ => return Err(self.wrong("fmi3GetBoolean", *r, "Boolean")),
                };
            }
            return Ok(());
        }
        let mut raw = std::mem::take(&mut self.bools);
        raw.clear();
        raw.resize(vr.len(), 0);
        let s = self.call(|i| i.get(api.get_boolean, vr, &mut raw));
        for (o, b) in out.iter_mut().zip(&raw) {
            *o = *b != 0;
        }
        self.bools = raw;
        self.check(|| "fmi3GetBoolean", s)
    }

    /// `fmi3DoStep` and what its outputs mean to the master (module documentation).
    #[inline(always)]
    fn step(&mut self, t: f64, h: f64) -> Result<()> {
        if self.types.modes.event_mode_used {
            return self.step_with_events(t, h);
        }
        if self.types.modes.scheduled {
            return self.step_scheduled(t, h);
        }
        const F: &str = "fmi3DoStep";
        self.core.time = t;
        let mut r = super::ffi3::StepResult::default();
        let s = self.call(|i| {
            let (status, out) = i.do_step(t, h, true);
            r = out;
            status
        });
        self.core.steps += 1;
        let last = r.last_successful_time;
        self.last_time = if last.is_finite() { last } else { t };
        let (status, before) = s;
        if status > DISCARD {
            return self.check(|| F, s);
        }
        if r.terminate_simulation {
            self.terminated = true;
            self.raw
                .env()
                .note(OK, &format!("{F}(t = {t}, h = {h}): terminateSimulation = true at lastSuccessfulTime = {last}"));
            return self.check(|| F, (DISCARD, before));
        }
        if status == DISCARD {
            return self.check(|| F, s);
        }
        if r.early_return {
            return Err(MasterError::Call {
                instance: self.core.name.clone(),
                function: F,
                time: t,
                status: format!(
                    "{F}(t = {t}, h = {h}) returned early at t = {last} although the master instantiated it with \
                     earlyReturnAllowed = false"
                ),
                last_log: self.raw.env().last_message(),
            });
        }
        if r.event_handling_needed {
            self.core.warnings += 1;
            self.raw.env().note(
                WARNING,
                &format!(
                    "{F}(t = {t}, h = {h}): eventHandlingNeeded = true; cosim does not use event mode \
                     (eventModeUsed = false), the step is taken as completed"
                ),
            );
        }
        self.check(|| F, s)?;
        self.core.time = t + h;
        Ok(())
    }

    /// Configuration mode right after instantiation (FMI 3.0 §2.3.2): each structural parameter
    /// set to its configured value between `fmi3EnterConfigurationMode` and
    /// `fmi3ExitConfigurationMode`, then read back — the arrays were sized from these values, so
    /// an FMU that holds another one is an error naming the parameter. Nothing without
    /// structural parameters.
    pub(crate) fn configure(&mut self) -> Result<()> {
        if self.types.structural.is_empty() {
            return Ok(());
        }
        let missing =
            |name: &str| format!("the FMU has structural parameters but does not export {name} (FMI 3.0 requires it)");
        if self.raw.api().enter_configuration_mode.is_none() {
            return Err(self.refuse("fmi3EnterConfigurationMode", missing("fmi3EnterConfigurationMode")));
        }
        if self.raw.api().exit_configuration_mode.is_none() {
            return Err(self.refuse("fmi3ExitConfigurationMode", missing("fmi3ExitConfigurationMode")));
        }
        let s = self.call(|i| i.configuration_mode(true));
        self.check(|| "fmi3EnterConfigurationMode", s)?;
        let structural = self.types.structural.clone();
        for (vr, _, ty, v) in &structural {
            self.set_int_now(ty.fmi3_setter(), *vr, *v)?;
        }
        let s = self.call(|i| i.configuration_mode(false));
        self.check(|| "fmi3ExitConfigurationMode", s)?;
        for (vr, name, ty, v) in &structural {
            let now = self.get_int(ty.fmi3_setter(), *vr)?;
            if now != *v {
                let why = format!(
                    "structural parameter {name} reads {now} after configuration mode, not the {v} set: \
                     the arrays sized by it would not match the FMU's"
                );
                return Err(self.refuse("fmi3ExitConfigurationMode", why));
            }
        }
        Ok(())
    }

    /// How the instance was instantiated (event mode, early return).
    pub(super) fn modes(&self) -> Modes {
        self.types.modes
    }

    /// Whether the instance runs clocks in Co-Simulation (`clocks.rs`).
    pub(super) fn cs_clocks(&self) -> bool {
        self.types.cs_clocks
    }

    /// The FMU's `<Clock>` variables.
    pub(super) fn clocks(&self) -> &[model_description::Clock3] {
        &self.types.clocks
    }

    /// `fmi3Reset`.
    pub(crate) fn reset(&mut self) -> Result<()> {
        self.terminated = false;
        *self.clockset = super::clocks::ClockSet::new(&self.types);
        let s = self.call(Instance3::reset);
        self.check(|| "fmi3Reset", s)?;
        // Reset puts the structural parameters back to their start values.
        self.configure()
    }

    /// `fmi3GetOutputDerivatives` (one order for all given references).
    pub(crate) fn get_output_derivatives(&mut self, vr: &[u32], order: i32, out: &mut [f64]) -> Result<()> {
        let function = "fmi3GetOutputDerivatives";
        self.core.lengths(|| function, vr.len(), out.len())?;
        let orders = vec![order; vr.len()];
        let s = self.call(|i| i.get_output_derivatives(vr, &orders, out));
        self.check(|| function, s)
    }
}

impl FmuInstance for Fmi3Instance {
    fn name(&self) -> &str {
        &self.core.name
    }

    // Always inlined into the typed methods, as FMI 2.0's.
    #[inline(always)]
    fn execute(&mut self, mut call: Call<'_>) -> Result<()> {
        if self.types.cs_clocks && !self.clockset.bypass {
            if let Some(r) = self.clocked_call(&mut call) {
                return r;
            }
        }
        let op = call.op();
        // Named only where an error needs it (folded away on the hot path).
        let function = move || op.function(V);
        let s = match call {
            Call::Setup { start, stop } => {
                self.core.time = start;
                self.start = start;
                self.stop = stop;
                self.last_time = start;
                return Ok(());
            }
            Call::EnterInitialization => {
                let (tolerance, start, stop) = (self.tolerance, self.start, self.stop);
                self.call(|i| i.enter_initialization_mode(tolerance, start, stop))
            }
            Call::ExitInitialization => {
                let s = self.call(Instance3::exit_initialization_mode);
                self.check(function, s)?;
                if self.types.modes.event_mode_used {
                    // FMI 3.0 §4.2: with eventModeUsed the instance is in event mode now.
                    return self.event_iteration(self.start, true);
                }
                if self.types.modes.scheduled {
                    return self.start_scheduled();
                }
                return Ok(());
            }
            Call::GetFloat64 { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                if !self.types.floats_are_float64 && !self.types.all(vr, ValueType::Float64) {
                    return self.get_floats(vr, out);
                }
                {
                    let f = self.get_float64;
                    self.call(|i| i.get(f, vr, out))
                }
            }
            Call::SetFloat64 { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if !self.types.floats_are_float64 && !self.types.all(vr, ValueType::Float64) {
                    return self.set_floats(vr, values);
                }
                {
                    let f = self.set_float64;
                    self.call(|i| i.set(f, vr, values))
                }
            }
            Call::GetInt64 { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                if !self.types.all(vr, ValueType::Int64) {
                    for (r, o) in vr.iter().zip(out.iter_mut()) {
                        let v = self.get_int(function(), *r)?;
                        *o = i64::try_from(v).map_err(|_| {
                            let why = format!("{} = {v} does not fit Int64: read it as UInt64", self.var(*r));
                            self.refuse(function(), why)
                        })?;
                    }
                    return Ok(());
                }
                {
                    let f = self.raw.api().get_int64;
                    self.call(|i| i.get(f, vr, out))
                }
            }
            Call::SetInt64 { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if !self.types.all(vr, ValueType::Int64) {
                    for (r, v) in vr.iter().zip(values) {
                        self.set_int(function(), *r, i128::from(*v))?;
                    }
                    return Ok(());
                }
                {
                    let f = self.raw.api().set_int64;
                    self.call(|i| i.set(f, vr, values))
                }
            }
            Call::GetUInt64 { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                if !self.types.all(vr, ValueType::UInt64) {
                    for (r, o) in vr.iter().zip(out.iter_mut()) {
                        let v = self.get_int(function(), *r)?;
                        *o = u64::try_from(v).map_err(|_| {
                            let why = format!("{} = {v} does not fit UInt64: read it as Int64", self.var(*r));
                            self.refuse(function(), why)
                        })?;
                    }
                    return Ok(());
                }
                {
                    let f = self.raw.api().get_uint64;
                    self.call(|i| i.get(f, vr, out))
                }
            }
            Call::SetUInt64 { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                for (r, v) in vr.iter().zip(values) {
                    self.set_int(function(), *r, i128::from(*v))?;
                }
                return Ok(());
            }
            Call::GetBoolean { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                return self.get_booleans(vr, out);
            }
            Call::SetBoolean { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                let mut raw = std::mem::take(&mut self.bools);
                raw.clear();
                raw.extend(values.iter().map(|b| u8::from(*b)));
                let f = self.raw.api().set_boolean;
                let s = self.call(|i| i.set(f, vr, &raw));
                self.bools = raw;
                s
            }
            Call::GetString { vr, out } => self.call(|i| {
                let (status, v) = i.get_string(vr);
                *out = v;
                status
            }),
            Call::SetString { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if let Some(v) = values.iter().find(|v| v.contains('\0')) {
                    return Err(self.refuse(function(), format!("the value {v:?} contains a NUL character")));
                }
                self.call(|i| i.set_string(vr, values))
            }
            Call::GetBinary { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                if let Some(r) = vr.iter().find(|r| self.types.ty(**r) != Some(ValueType::Binary)) {
                    return Err(self.wrong(function(), *r, "Binary"));
                }
                if self.raw.api().get_binary.is_none() {
                    return Err(self.refuse(function(), "the binary does not export fmi3GetBinary".into()));
                }
                let fmu = std::sync::Arc::clone(&self.core.fmu.0);
                let check = |r: u32, size: usize, null: bool| {
                    let name = fmu.variables().iter().find(|v| v.value_reference == r).map_or("?", |v| &v.name);
                    super::binary::reported_size(fmu.binary_max(), r, name, size, null)
                };
                let mut fault = None;
                let s = self.call(|i| {
                    let (s, f) = i.get_binary(vr, out, check);
                    fault = f;
                    s
                });
                if let Some(why) = fault {
                    return Err(self.refuse(function(), why));
                }
                s
            }
            Call::SetBinary { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                if let Some(r) = vr.iter().find(|r| self.types.ty(**r) != Some(ValueType::Binary)) {
                    return Err(self.wrong(function(), *r, "Binary"));
                }
                if let Some(why) = super::binary::too_big(self.core.fmu.0.binary_max(), vr, values) {
                    return Err(self.refuse(function(), why));
                }
                if self.raw.api().set_binary.is_none() {
                    return Err(self.refuse(function(), "the binary does not export fmi3SetBinary".into()));
                }
                self.call(|i| i.set_binary(vr, values))
            }
            Call::DoStep { t, h } => return self.step(t, h),
            Call::Terminate => {
                if self.types.modes.event_mode_used {
                    self.note_event_counts();
                }
                if self.types.modes.scheduled {
                    self.note_activations();
                }
                if self.types.cs_clocks {
                    self.note_clock_counts();
                }
                self.call(Instance3::terminate)
            }
            Call::SaveState => self.call(Instance3::save_state),
            Call::RestoreState => {
                self.terminated = false;
                self.call(Instance3::restore_state)
            }
            Call::GetBooleanStatus { kind: status_kind::TERMINATED, out } => {
                *out = self.terminated;
                return Ok(());
            }
            Call::GetRealStatus { kind: status_kind::LAST_SUCCESSFUL_TIME, out } => {
                *out = self.last_time;
                return Ok(());
            }
            Call::GetBooleanStatus { kind, .. } | Call::GetRealStatus { kind, .. } => {
                return Err(self.refuse(function(), format!("FMI 3.0 has no status of kind {kind}")));
            }
            Call::EnterEventMode => {
                self.present(function(), self.raw.api().enter_event_mode.is_some())?;
                self.call(Instance3::enter_event_mode)
            }
            Call::EnterStepMode => {
                self.present(function(), self.raw.api().enter_step_mode.is_some())?;
                self.call(Instance3::enter_step_mode)
            }
            Call::UpdateDiscreteStates { out } => {
                self.present(function(), self.raw.api().update_discrete_states.is_some())?;
                self.call(|i| i.update_discrete_states(out))
            }
            Call::GetClock { vr, out } => {
                self.core.lengths(function, vr.len(), out.len())?;
                self.present(function(), self.raw.api().get_clock.is_some())?;
                self.call(|i| i.get_clock(vr, out))
            }
            Call::SetClock { vr, values } => {
                self.core.lengths(function, vr.len(), values.len())?;
                self.present(function(), self.raw.api().set_clock.is_some())?;
                self.call(|i| i.set_clock(vr, values))
            }
            other @ Call::SetInputDerivatives { .. } => {
                let mut e = other.unsupported_in(&self.core.name, V);
                if let MasterError::Worker { time, .. } = &mut e {
                    *time = self.core.time;
                }
                return Err(e);
            }
        };
        self.check(function, s)
    }

    fn version(&self) -> Version {
        V
    }

    fn value_type(&self, vr: u32) -> Option<ValueType> {
        self.types.lookup(vr).map(|(t, _)| t)
    }

    /// FMI 3.0 has no input derivatives: false whatever the description says.
    fn can_interpolate_inputs(&self) -> bool {
        false
    }

    fn call_stats(&self) -> (f64, u64) {
        (self.core.busy.as_secs_f64(), self.core.steps)
    }

    fn fmu_warnings(&self) -> u64 {
        Fmi3Instance::fmu_warnings(self)
    }

    fn set_timing(&mut self, on: bool) {
        self.core.timing = on;
    }
}
