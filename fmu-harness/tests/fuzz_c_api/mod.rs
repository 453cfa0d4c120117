#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Fuzzing the FMU side (issue 7 §4): random sequences of legal and illegal fmi2 calls with random
//! arguments (value references in and out of range, wrong types, NaN/±inf, out-of-range values,
//! unknown status kinds, garbage FMU states…) on every model of a library's `FMUS`, in process
//! through the [`Component`] trait that the C functions call. One test binary per FMU library
//! (`fuzz_c_api_oscillator.rs`, `fuzz_c_api_hydraulics.rs`).
//!
//! An oracle tracks the set of machine states the instance may be in (from the FMI 2.0 §4.2.4
//! table and the statuses returned) and the time. Properties:
//! - no call panics (the C layer would catch it, but a panic in model code is a bug);
//! - every call that is illegal in every possible state, or has invalid arguments, returns
//!   fmi2Error and changes nothing;
//! - legal calls whose outcome does not depend on the model (setters, mode changes, FMU states)
//!   return fmi2OK (fmi2Warning for inputs outside [min, max]);
//! - after `fmi2Reset` the instance is as good as new: the same legal run gives bit-identical
//!   outputs as on a fresh instance.
//!
//! Bounded for CI (a few seconds per library in a debug build); `FUZZ_CASES=N` sets the number
//! of sequences of each property.

use fmu_export::types::{FMI2_DO_STEP_STATUS, FMI2_LAST_SUCCESSFUL_TIME, FMI2_PENDING_STATUS, FMI2_TERMINATED};
use fmu_export::{Component, Fmu, Logger, Status};
use model_description::{Causality, ModelDescription, ScalarVariable, SimpleTypeKind, Variability, VariableKind};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

// ---------------------------------------------------------------------------------------------
// Calls

/// A value reference: an index into the FMU's variables (always in range) or a raw number.
#[derive(Debug, Clone, Copy)]
pub enum Vr {
    Index(usize),
    Raw(u32),
}

#[derive(Debug, Clone, Copy)]
pub enum TimePick {
    /// The time the oracle expects (legal).
    Current,
    /// One second off (illegal: the tolerance is 10⁻³ H ≤ 1 ms).
    Off,
    Value(f64),
}

#[derive(Debug, Clone)]
pub enum Call {
    SetDebugLogging {
        on: bool,
        categories: Vec<Option<&'static str>>,
    },
    Setup {
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    },
    EnterInit,
    ExitInit,
    Terminate,
    Reset,
    GetReal {
        vrs: Vec<Vr>,
        out: usize,
    },
    GetInteger {
        vrs: Vec<Vr>,
        out: usize,
    },
    GetBoolean {
        vrs: Vec<Vr>,
        out: usize,
    },
    GetString {
        vrs: Vec<Vr>,
        out: usize,
    },
    SetReal {
        vrs: Vec<Vr>,
        values: Vec<f64>,
    },
    SetInteger {
        vrs: Vec<Vr>,
        values: Vec<i32>,
    },
    SetBoolean {
        vrs: Vec<Vr>,
        values: Vec<i32>,
    },
    SetString {
        vrs: Vec<Vr>,
        values: Vec<Option<String>>,
    },
    SetInputDerivatives {
        vrs: Vec<Vr>,
        orders: Vec<i32>,
        values: Vec<f64>,
    },
    GetOutputDerivatives {
        vrs: Vec<Vr>,
        orders: Vec<i32>,
        out: usize,
    },
    DoStep {
        t: TimePick,
        h: f64,
    },
    CancelStep,
    GetState,
    SetState(usize),
    /// Serialize a saved state, deserialize it and set it.
    StateRoundTrip(usize),
    /// Deserialize bytes that are not a state of this FMU: garbage, a truncated or extended
    /// serialization, or another FMU's.
    BadState(BadState),
    Status {
        which: u8,
        kind: i32,
    },
}

#[derive(Debug, Clone)]
pub enum BadState {
    Garbage(Vec<u8>),
    Truncated(usize, usize),
    Trailing(usize, u8),
    OtherFmu(usize),
}

fn real() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 0.25, 1e-3, 1e5, -1e5, 1e300, -1e300, f64::NAN, f64::INFINITY,
            f64::NEG_INFINITY, f64::MIN_POSITIVE,
        ]),
        1 => -1e3..1e3f64,
    ]
}

/// Integers: no huge positive counts (an iteration cap of 2³¹ is a legal, if slow, request).
fn int() -> impl Strategy<Value = i32> {
    prop::sample::select(vec![-1, 0, 1, 2, 3, 4, 5, 7, 100, 1000, i32::MIN])
}

fn vr() -> impl Strategy<Value = Vr> {
    prop_oneof![8 => (0..64usize).prop_map(Vr::Index), 1 => any::<u32>().prop_map(Vr::Raw)]
}

fn vrs() -> impl Strategy<Value = Vec<Vr>> {
    prop::collection::vec(vr(), 0..4)
}

/// Output length: usually the number of value references, sometimes not.
fn len_like(n: usize) -> impl Strategy<Value = usize> {
    prop_oneof![6 => Just(n), 1 => 0..5usize]
}

fn step() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => prop::sample::select(vec![1e-3, 1e-2, 0.1]),
        1 => prop::sample::select(vec![0.0, -1e-3, f64::NAN, f64::INFINITY]),
    ]
}

pub fn call() -> impl Strategy<Value = Call> {
    let category = prop::sample::select(vec![
        Some("logStatusWarning"),
        Some("logStatusError"),
        Some("logAll"),
        Some("logBogus"),
        None,
    ]);
    prop_oneof![
        1 => (any::<bool>(), prop::collection::vec(category, 0..3))
            .prop_map(|(on, categories)| Call::SetDebugLogging { on, categories }),
        2 => (prop::option::of(real()), prop::sample::select(vec![0.0, 1.0, -1.0, f64::NAN, f64::INFINITY]),
              prop::option::of(prop::sample::select(vec![0.0, 0.5, 10.0, 1e6, -1.0, f64::NAN])))
            .prop_map(|(tolerance, start, stop)| Call::Setup { tolerance, start, stop }),
        3 => Just(Call::EnterInit),
        3 => Just(Call::ExitInit),
        1 => Just(Call::Terminate),
        1 => Just(Call::Reset),
        3 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n)) }).prop_map(|(vrs, out)| Call::GetReal { vrs, out }),
        1 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n)) }).prop_map(|(vrs, out)| Call::GetInteger { vrs, out }),
        1 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n)) }).prop_map(|(vrs, out)| Call::GetBoolean { vrs, out }),
        1 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n)) }).prop_map(|(vrs, out)| Call::GetString { vrs, out }),
        5 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(real(), k))) })
            .prop_map(|(vrs, values)| Call::SetReal { vrs, values }),
        2 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(int(), k))) })
            .prop_map(|(vrs, values)| Call::SetInteger { vrs, values }),
        1 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(-2..3i32, k))) })
            .prop_map(|(vrs, values)| Call::SetBoolean { vrs, values }),
        1 => vrs().prop_flat_map(|v| { let n = v.len(); (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(prop::option::of(".{0,4}"), k))) })
            .prop_map(|(vrs, values)| Call::SetString { vrs, values }),
        2 => vrs().prop_flat_map(|v| {
                let n = v.len();
                (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(-1..6i32, k)), len_like(n).prop_flat_map(|k| prop::collection::vec(real(), k)))
            })
            .prop_map(|(vrs, orders, values)| Call::SetInputDerivatives { vrs, orders, values }),
        1 => vrs().prop_flat_map(|v| {
                let n = v.len();
                (Just(v), len_like(n).prop_flat_map(|k| prop::collection::vec(-1..4i32, k)), len_like(n))
            })
            .prop_map(|(vrs, orders, out)| Call::GetOutputDerivatives { vrs, orders, out }),
        8 => (prop_oneof![8 => Just(TimePick::Current), 1 => Just(TimePick::Off), 1 => real().prop_map(TimePick::Value)], step())
            .prop_map(|(t, h)| Call::DoStep { t, h }),
        1 => Just(Call::CancelStep),
        1 => Just(Call::GetState),
        1 => (0..4usize).prop_map(Call::SetState),
        1 => (0..4usize).prop_map(Call::StateRoundTrip),
        1 => prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64).prop_map(BadState::Garbage),
                (0..4usize, 0..1000usize).prop_map(|(s, n)| BadState::Truncated(s, n)),
                (0..4usize, any::<u8>()).prop_map(|(s, b)| BadState::Trailing(s, b)),
                (0..8usize).prop_map(BadState::OtherFmu),
            ].prop_map(Call::BadState),
        1 => (0..5u8, prop::sample::select(vec![FMI2_DO_STEP_STATUS, FMI2_PENDING_STATUS, FMI2_LAST_SUCCESSFUL_TIME, FMI2_TERMINATED, -1, 99]))
            .prop_map(|(which, kind)| Call::Status { which, kind }),
    ]
}

// ---------------------------------------------------------------------------------------------
// Oracle

const INSTANTIATED: u8 = 1;
const INIT: u8 = 2;
const STEP_COMPLETE: u8 = 4;
const STEP_FAILED: u8 = 8;
const STEP_CANCELED: u8 = 16;
const TERMINATED: u8 = 32;
const ERROR: u8 = 64;
/// FMI 2.0 §4.2.4 (Co-Simulation), "stepInProgress" never occurs.
const GET: u8 = INIT | STEP_COMPLETE | STEP_FAILED | STEP_CANCELED | TERMINATED | ERROR;
const SET: u8 = INSTANTIATED | INIT | STEP_COMPLETE;
const TERMINATE: u8 = STEP_COMPLETE | STEP_FAILED | STEP_CANCELED;
const OUTPUT_DERIVATIVES: u8 = STEP_COMPLETE | STEP_FAILED | STEP_CANCELED | TERMINATED | ERROR;
const STATUS: u8 = STEP_COMPLETE | STEP_FAILED | STEP_CANCELED | TERMINATED;

fn states(mask: u8) -> impl Iterator<Item = u8> {
    (0..7).map(|i| 1u8 << i).filter(move |s| mask & s != 0)
}

/// What the instance may be: a set of machine states, and the time fields (all known exactly:
/// a rejected call changes nothing, an accepted one sets them deterministically).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Oracle {
    states: u8,
    start: f64,
    stop: Option<f64>,
    time: f64,
}

impl Oracle {
    fn new() -> Self {
        Self { states: INSTANTIATED, start: 0.0, stop: None, time: 0.0 }
    }
}

/// Everything the oracle needs to know about the FMU's variables.
struct Model {
    md: &'static ModelDescription,
    can_interpolate: bool,
    max_output_derivative_order: u32,
}

impl Model {
    fn var(&self, vr: Vr) -> Option<&'static ScalarVariable> {
        let n = self.md.model_variables.len();
        match vr {
            Vr::Index(i) => self.md.model_variables.get(i % n),
            Vr::Raw(r) => self.md.model_variables.iter().find(|v| v.value_reference == r),
        }
    }

    fn raw(&self, vr: Vr) -> u32 {
        match vr {
            Vr::Index(i) => self.md.model_variables[i % self.md.model_variables.len()].value_reference,
            Vr::Raw(r) => r,
        }
    }

    /// Whether `v` may be set in state `s` (FMI 2.0 §4.2.4; our variables with a setter are the
    /// parameters and inputs).
    fn may_set(v: &ScalarVariable, s: u8) -> bool {
        match v.causality {
            Causality::Parameter => s & (INSTANTIATED | INIT) != 0 || v.variability == Variability::Tunable,
            Causality::Input => true,
            _ => false,
        }
    }

    fn enum_items(&self, declared: &str) -> Vec<i32> {
        match self.md.simple_type(declared).map(|t| &t.kind) {
            Some(SimpleTypeKind::Enumeration { items, .. }) => items.iter().map(|i| i.value).collect(),
            _ => Vec::new(),
        }
    }
}

/// Legality of a call in one state: `Err(())` illegal (fmi2Error expected), `Ok(strict)`
/// legal; `strict` when the outcome does not depend on the model (the expected status is then
/// fmi2OK, or fmi2Warning when `warn`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Legal {
    No,
    /// Legal; the exact status is known (OK, or Warning if the bool).
    Exact(bool),
    /// Legal; the model decides (OK, Warning or Error).
    Model,
}

struct Fuzz {
    all: &'static [&'static dyn Fmu],
    fmu: &'static dyn Fmu,
    model: Model,
    inst: Box<dyn Component>,
    oracle: Oracle,
    saved: Vec<(fmu_export::component::Snapshot, Oracle)>,
    log: Vec<String>,
}

impl Fuzz {
    fn new(all: &'static [&'static dyn Fmu], fmu: &'static dyn Fmu) -> Self {
        let d = fmu.description().unwrap();
        let cs = d.model.co_simulation.as_ref().unwrap();
        let model = Model {
            md: &d.model,
            can_interpolate: cs.can_interpolate_inputs,
            max_output_derivative_order: cs.max_output_derivative_order,
        };
        let inst = fmu.instantiate("", Logger::new(None, "fuzz", false)).unwrap();
        Self { all, fmu, model, inst, oracle: Oracle::new(), saved: Vec::new(), log: Vec::new() }
    }

    fn set_legal<T>(&self, s: u8, vrs: &[Vr], values: &[T], ok: impl Fn(&ScalarVariable, &T) -> Option<bool>) -> Legal {
        if s & SET == 0 || vrs.len() != values.len() {
            return Legal::No;
        }
        let mut warn = false;
        for (r, x) in vrs.iter().zip(values) {
            let Some(v) = self.model.var(*r) else { return Legal::No };
            if !Model::may_set(v, s) {
                return Legal::No;
            }
            match ok(v, x) {
                None => return Legal::No,
                Some(w) => warn |= w,
            }
        }
        Legal::Exact(warn)
    }

    fn get_legal(&self, s: u8, vrs: &[Vr], out: usize, ty: impl Fn(&VariableKind) -> bool) -> Legal {
        if s & GET == 0 || vrs.len() != out || vrs.iter().any(|r| self.model.var(*r).is_none_or(|v| !ty(&v.kind))) {
            Legal::No
        } else {
            Legal::Model
        }
    }

    /// Legality of `call` in state `s` given the oracle's time fields.
    fn legality(&self, call: &Call, s: u8) -> Legal {
        let o = &self.oracle;
        match call {
            Call::SetDebugLogging { categories, .. } => {
                if categories.iter().all(|c| c.is_some_and(|c| c != "logBogus")) {
                    Legal::Exact(false)
                } else {
                    Legal::No
                }
            }
            Call::Setup { start, stop, .. } => {
                let stop_ok = stop.is_none_or(|e| !e.is_nan() && e >= *start);
                if s == INSTANTIATED && start.is_finite() && stop_ok {
                    Legal::Exact(false)
                } else {
                    Legal::No
                }
            }
            Call::EnterInit => {
                if s == INSTANTIATED {
                    Legal::Exact(false)
                } else {
                    Legal::No
                }
            }
            Call::ExitInit => {
                if s == INIT {
                    Legal::Model
                } else {
                    Legal::No
                }
            }
            Call::Terminate => {
                if s & TERMINATE != 0 {
                    Legal::Exact(false)
                } else {
                    Legal::No
                }
            }
            Call::Reset => Legal::Exact(false),
            Call::GetReal { vrs, out } => self.get_legal(s, vrs, *out, |k| matches!(k, VariableKind::Real { .. })),
            Call::GetInteger { vrs, out } => self.get_legal(s, vrs, *out, |k| {
                matches!(k, VariableKind::Integer { .. } | VariableKind::Enumeration { .. })
            }),
            Call::GetBoolean { vrs, out } => {
                self.get_legal(s, vrs, *out, |k| matches!(k, VariableKind::Boolean { .. }))
            }
            Call::GetString { vrs, out } => self.get_legal(s, vrs, *out, |k| matches!(k, VariableKind::String { .. })),
            Call::SetReal { vrs, values } => self.set_legal(s, vrs, values, |v, x| {
                let VariableKind::Real { attrs, .. } = &v.kind else { return None };
                if !x.is_finite() {
                    return None;
                }
                let out = attrs.min.is_some_and(|m| *x < m) || attrs.max.is_some_and(|m| *x > m);
                match (out, v.causality) {
                    (false, _) => Some(false),
                    (true, Causality::Input) => Some(true),
                    (true, _) => None,
                }
            }),
            Call::SetInteger { vrs, values } => self.set_legal(s, vrs, values, |v, x| match &v.kind {
                VariableKind::Integer { attrs, .. } => {
                    (!(attrs.min.is_some_and(|m| *x < m) || attrs.max.is_some_and(|m| *x > m))).then_some(false)
                }
                VariableKind::Enumeration { declared_type, .. } => {
                    self.model.enum_items(declared_type).contains(x).then_some(false)
                }
                _ => None,
            }),
            Call::SetBoolean { vrs, values } => {
                self.set_legal(s, vrs, values, |v, _| matches!(v.kind, VariableKind::Boolean { .. }).then_some(false))
            }
            Call::SetString { vrs, values } => self.set_legal(s, vrs, values, |v, x| {
                (matches!(v.kind, VariableKind::String { .. }) && x.is_some()).then_some(false)
            }),
            Call::SetInputDerivatives { vrs, orders, values } => {
                if s & SET == 0 || vrs.len() != values.len() || vrs.len() != orders.len() || !self.model.can_interpolate
                {
                    return Legal::No;
                }
                for ((r, k), x) in vrs.iter().zip(orders).zip(values) {
                    let Some(v) = self.model.var(*r) else { return Legal::No };
                    let real_input = matches!(v.kind, VariableKind::Real { .. }) && v.causality == Causality::Input;
                    if !real_input || !(1..=4).contains(k) || !x.is_finite() {
                        return Legal::No;
                    }
                }
                Legal::Exact(false)
            }
            Call::GetOutputDerivatives { vrs, orders, out } => {
                if s & OUTPUT_DERIVATIVES == 0 || vrs.len() != *out || vrs.len() != orders.len() {
                    return Legal::No;
                }
                for (r, k) in vrs.iter().zip(orders) {
                    let Some(v) = self.model.var(*r) else { return Legal::No };
                    let max = self.model.max_output_derivative_order as i32;
                    if !matches!(v.kind, VariableKind::Real { .. }) || *k < 1 || *k > max {
                        return Legal::No;
                    }
                }
                // Which outputs provide derivatives is not in the description: the model decides.
                Legal::Model
            }
            Call::DoStep { t, h } => {
                if s != STEP_COMPLETE || !(*h > 0.0 && h.is_finite()) {
                    return Legal::No;
                }
                let t = self.step_time(*t);
                let tol = (1e-3 * h).max(4.0 * f64::EPSILON * o.time.abs());
                if !t.is_finite() || (t - o.time).abs() > tol {
                    return Legal::No;
                }
                if o.stop.is_some_and(|stop| t + h > stop + tol) {
                    return Legal::No;
                }
                Legal::Model
            }
            Call::CancelStep => Legal::No,
            Call::GetState | Call::SetState(_) | Call::StateRoundTrip(_) => Legal::Exact(false),
            Call::BadState(_) => Legal::No,
            Call::Status { .. } => {
                if s & STATUS != 0 {
                    Legal::Model
                } else {
                    Legal::No
                }
            }
        }
    }

    fn step_time(&self, t: TimePick) -> f64 {
        match t {
            TimePick::Current => self.oracle.time,
            TimePick::Off => self.oracle.time + 1.0,
            TimePick::Value(x) => x,
        }
    }

    /// The state after a legal call in state `s` that returned `status`.
    fn next(&self, call: &Call, s: u8, status: Status) -> u8 {
        let failed = status >= Status::Error;
        match call {
            Call::EnterInit => INIT,
            Call::ExitInit if failed => ERROR,
            Call::ExitInit => STEP_COMPLETE,
            Call::Terminate => TERMINATED,
            Call::Reset => INSTANTIATED,
            Call::DoStep { .. } if status == Status::Discard => STEP_FAILED,
            Call::DoStep { .. } if failed => ERROR,
            _ => s,
        }
    }

    fn vrs(&self, vrs: &[Vr]) -> Vec<u32> {
        vrs.iter().map(|r| self.model.raw(*r)).collect()
    }

    /// Makes the call and returns its status; a successful fmi2SetFMUstate restores the oracle
    /// saved with the state.
    fn execute(&mut self, call: &Call) -> Status {
        match call {
            Call::SetDebugLogging { on, categories } => self.inst.set_debug_logging(*on, categories),
            Call::Setup { tolerance, start, stop } => self.inst.setup_experiment(*tolerance, *start, *stop),
            Call::EnterInit => self.inst.enter_initialization_mode(),
            Call::ExitInit => self.inst.exit_initialization_mode(),
            Call::Terminate => self.inst.terminate(),
            Call::Reset => self.inst.reset(),
            Call::GetReal { vrs, out } => {
                let vrs = self.vrs(vrs);
                self.inst.get_real(&vrs, &mut vec![0.0; *out])
            }
            Call::GetInteger { vrs, out } => {
                let vrs = self.vrs(vrs);
                self.inst.get_integer(&vrs, &mut vec![0; *out])
            }
            Call::GetBoolean { vrs, out } => {
                let vrs = self.vrs(vrs);
                self.inst.get_boolean(&vrs, &mut vec![0; *out])
            }
            Call::GetString { vrs, out } => {
                let vrs = self.vrs(vrs);
                self.inst.get_string(&vrs, &mut vec![std::ptr::null(); *out])
            }
            Call::SetReal { vrs, values } => {
                let vrs = self.vrs(vrs);
                self.inst.set_real(&vrs, values)
            }
            Call::SetInteger { vrs, values } => {
                let vrs = self.vrs(vrs);
                self.inst.set_integer(&vrs, values)
            }
            Call::SetBoolean { vrs, values } => {
                let vrs = self.vrs(vrs);
                self.inst.set_boolean(&vrs, values)
            }
            Call::SetString { vrs, values } => {
                let vrs = self.vrs(vrs);
                let values: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
                self.inst.set_string(&vrs, &values)
            }
            Call::SetInputDerivatives { vrs, orders, values } => {
                let vrs = self.vrs(vrs);
                self.inst.set_real_input_derivatives(&vrs, orders, values)
            }
            Call::GetOutputDerivatives { vrs, orders, out } => {
                let vrs = self.vrs(vrs);
                self.inst.get_real_output_derivatives(&vrs, orders, &mut vec![0.0; *out])
            }
            Call::DoStep { t, h } => {
                let t = self.step_time(*t);
                self.inst.do_step(t, *h, true)
            }
            Call::CancelStep => self.inst.cancel_step(),
            Call::GetState => match self.inst.get_fmu_state(None) {
                Ok(Some(snapshot)) => {
                    self.saved.push((snapshot, self.oracle));
                    Status::Ok
                }
                Ok(None) => panic!("fmi2GetFMUstate without a state to reuse returned no state"),
                Err(s) => s,
            },
            Call::SetState(i) => {
                if self.saved.is_empty() {
                    return Status::Ok;
                }
                let (snapshot, oracle) = &self.saved[i % self.saved.len()];
                self.inst.set_fmu_state(snapshot).then_restore(oracle, &mut self.oracle)
            }
            Call::StateRoundTrip(i) => {
                if self.saved.is_empty() {
                    return Status::Ok;
                }
                let k = i % self.saved.len();
                let bytes = self.inst.serialize_fmu_state(&self.saved[k].0).unwrap();
                let snapshot = self.inst.deserialize_fmu_state(&bytes).unwrap();
                let oracle = self.saved[k].1;
                self.inst.set_fmu_state(&snapshot).then_restore(&oracle, &mut self.oracle)
            }
            Call::BadState(bad) => {
                let bytes = match bad {
                    BadState::Garbage(b) => b.clone(),
                    BadState::Truncated(..) | BadState::Trailing(..) if self.saved.is_empty() => vec![0; 3],
                    BadState::Truncated(i, n) => {
                        let mut b = self.inst.serialize_fmu_state(&self.saved[i % self.saved.len()].0).unwrap();
                        let cut = n % b.len();
                        b.truncate(cut);
                        b
                    }
                    BadState::Trailing(i, x) => {
                        let mut b = self.inst.serialize_fmu_state(&self.saved[i % self.saved.len()].0).unwrap();
                        b.push(*x);
                        b
                    }
                    BadState::OtherFmu(k) => {
                        let name = self.fmu.info().fmu_name;
                        let Some(other) =
                            self.all.iter().cycle().skip(*k).take(self.all.len()).find(|f| f.info().fmu_name != name)
                        else {
                            return Status::Error; // a library with one FMU: nothing to confuse it with
                        };
                        let mut o = other.instantiate("", Logger::new(None, "other", false)).unwrap();
                        let st = o.get_fmu_state(None).unwrap().unwrap();
                        o.serialize_fmu_state(&st).unwrap()
                    }
                };
                match self.inst.deserialize_fmu_state(&bytes) {
                    Ok(_) => Status::Ok,
                    Err(s) => s,
                }
            }
            Call::Status { which, kind } => {
                let r = match which {
                    0 => self.inst.get_status("fmi2GetStatus", *kind).map(|_| ()),
                    1 => self.inst.get_real_status(*kind).map(|_| ()),
                    2 => self.inst.get_integer_status(*kind).map(|_| ()),
                    3 => self.inst.get_boolean_status(*kind).map(|_| ()),
                    _ => self.inst.get_string_status(*kind).map(|_| ()),
                };
                match r {
                    Ok(()) => Status::Ok,
                    Err(s) => s,
                }
            }
        }
    }

    /// One call with the oracle's checks.
    fn step(&mut self, call: &Call) {
        let before = self.oracle;
        let legality: Vec<(u8, Legal)> = states(before.states).map(|s| (s, self.legality(call, s))).collect();
        let all_illegal = legality.iter().all(|(_, l)| *l == Legal::No);
        let exact: Option<bool> = match legality.as_slice() {
            [(_, Legal::Exact(w))] => Some(*w),
            l if l.iter().all(|(_, x)| *x == Legal::Exact(false)) => Some(false),
            _ => None,
        };
        let t0 = std::time::Instant::now();
        let status = self.execute(call);
        let took = t0.elapsed().as_secs_f64();
        // Every call is bounded (steps ≤ 0.1 s, internal steps ≥ 1e-3 s or must divide H, capped
        // iteration counts): a slow call is a hang in the making.
        assert!(took < 2.0, "{call:?} took {took:.1} s after:\n{}", self.log.join("\n"));
        self.log.push(format!("{call:?} in {:#b} -> {status:?}", before.states));
        let trace = || self.log.join("\n");
        assert!(status != Status::Fatal && status != Status::Pending, "{}", trace());
        if all_illegal {
            assert_eq!(status, Status::Error, "an illegal call must return fmi2Error:\n{}", trace());
            // Nothing changed (FMU-state calls restore the oracle themselves when they succeed).
            self.oracle = before;
            return;
        }
        if let Some(warn) = exact {
            let expected = if warn { Status::Warning } else { Status::Ok };
            assert_eq!(status, expected, "a legal call:\n{}", trace());
        }
        if matches!(call, Call::SetState(_) | Call::StateRoundTrip(_) | Call::GetState) {
            return; // the oracle was restored (or is unchanged)
        }
        // The new state set: from every state in which the call was legal (illegal ones are
        // only possible if the status is Error, and change nothing).
        let mut next = 0;
        for (s, l) in &legality {
            if *l == Legal::No {
                if status == Status::Error {
                    next |= s;
                }
            } else {
                next |= self.next(call, *s, status);
            }
        }
        assert!(next != 0, "no state explains the status:\n{}", trace());
        self.oracle.states = next;
        match call {
            Call::Setup { start, stop, .. } if status == Status::Ok => {
                self.oracle.start = *start;
                self.oracle.stop = *stop;
                self.oracle.time = *start;
            }
            Call::EnterInit | Call::ExitInit if status <= Status::Warning => self.oracle.time = before.start,
            Call::Reset if status == Status::Ok => self.oracle = Oracle::new(),
            Call::DoStep { t, h } if status <= Status::Warning => {
                self.oracle.time = self.step_time(*t) + h;
            }
            _ => {}
        }
    }
}

trait ThenRestore {
    fn then_restore(self, saved: &Oracle, oracle: &mut Oracle) -> Status;
}

impl ThenRestore for Status {
    /// A successful fmi2SetFMUstate makes the instance what the state was.
    fn then_restore(self, saved: &Oracle, oracle: &mut Oracle) -> Status {
        if self == Status::Ok {
            *oracle = *saved;
        }
        self
    }
}

/// A legal run from a fresh (or reset) instance: default parameters, three steps; every Real.
fn standard_run(inst: &mut dyn Component, md: &ModelDescription) -> Vec<u64> {
    assert_eq!(inst.setup_experiment(None, 0.0, Some(1.0)), Status::Ok);
    assert_eq!(inst.enter_initialization_mode(), Status::Ok);
    assert!(inst.exit_initialization_mode() <= Status::Warning);
    let mut t = 0.0;
    for _ in 0..3 {
        assert!(inst.do_step(t, 1e-3, true) <= Status::Warning);
        t += 1e-3;
    }
    let vrs: Vec<u32> = md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, VariableKind::Real { .. }))
        .map(|v| v.value_reference)
        .collect();
    let mut out = vec![0.0; vrs.len()];
    assert!(inst.get_real(&vrs, &mut out) <= Status::Warning);
    out.iter().map(|x| x.to_bits()).collect()
}

/// `$FUZZ_CASES` or `default` cases; failures become named regression tests, not files.
pub fn config(default: u32) -> Config {
    let cases = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    Config { cases, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() }
}

/// A sequence that has not finished after this long hangs: the process exits with the sequence
/// printed (a hung thread cannot be stopped, so proptest cannot shrink it).
const HANG: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `calls` on a fresh instance of FMU `which` of `all`, then resets it and checks that it is
/// as new. Panics propagate (proptest shrinks them); a hang ends the process with the sequence.
pub fn fuzz_sequence(all: &'static [&'static dyn Fmu], which: usize, calls: &[Call]) {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let owned = calls.to_vec();
    let (done, finished) = channel();
    let worker = std::thread::spawn(move || {
        run_sequence(all, which, &owned);
        let _ = done.send(());
    });
    match finished.recv_timeout(HANG) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(RecvTimeoutError::Timeout) => {
            eprintln!(
                "HANG: FMU {} did not finish within {HANG:?}: {calls:#?}",
                all[which % all.len()].info().fmu_name
            );
            std::process::exit(2);
        }
    }
}

fn run_sequence(all: &'static [&'static dyn Fmu], which: usize, calls: &[Call]) {
    let fmu = all[which % all.len()];
    let mut f = Fuzz::new(all, fmu);
    for c in calls {
        f.step(c);
    }
    assert_eq!(f.inst.reset(), Status::Ok, "fmi2Reset after:\n{}", f.log.join("\n"));
    let md = f.model.md;
    let after_reset = standard_run(&mut *f.inst, md);
    let mut fresh = fmu.instantiate("", Logger::new(None, "fresh", false)).unwrap();
    assert_eq!(after_reset, standard_run(&mut *fresh, md), "reset is not as new after:\n{}", f.log.join("\n"));
}

/// A run prefix: set up, initialize, three steps, save the state (random calls then start from
/// a running instance; the purely random sequences rarely get that far).
pub fn running() -> Vec<Call> {
    let mut prefix =
        vec![Call::Setup { tolerance: None, start: 0.0, stop: Some(10.0) }, Call::EnterInit, Call::ExitInit];
    for _ in 0..3 {
        prefix.push(Call::DoStep { t: TimePick::Current, h: 1e-3 });
    }
    prefix.push(Call::GetState);
    prefix
}

/// The legal run, twice with a reset between, on every FMU of `all`: bit-identical.
pub fn standard_runs_repeat(all: &'static [&'static dyn Fmu]) {
    for fmu in all {
        let md = &fmu.description().unwrap().model;
        let mut i = fmu.instantiate("", Logger::new(None, "std", false)).unwrap();
        let a = standard_run(&mut *i, md);
        assert_eq!(i.reset(), Status::Ok);
        assert_eq!(a, standard_run(&mut *i, md), "{}", fmu.info().fmu_name);
    }
}
