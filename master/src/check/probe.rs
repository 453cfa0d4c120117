//! The worker side's toolkit: a loaded FMU with the plan, instances set up the way `cosim run`
//! sets them up, runs on the plan's time grid that record every output after every step, bitwise
//! comparison of two runs, and the trace line written before each FMU call.

use super::Plan;
use crate::fmu::{Fmu, FmuInstance, Instance, Version};
use model_description::{BaseType, Causality, CoSimulation, ScalarVariable};
use std::fs::File;
use std::io::Write;
use std::sync::Arc;

/// A variable the checks read or set.
#[derive(Debug, Clone)]
pub struct Var {
    /// Name.
    pub name: String,
    /// Value reference.
    pub vr: u32,
    /// 1-based index in `ModelVariables` (as `ModelStructure` refers to it).
    pub index: u32,
    /// Base type.
    pub ty: BaseType,
}

/// Rows of outputs: one per communication point, [`Probe::outputs`] order, each value as f64
/// (Integer and Boolean converted exactly).
pub type Rows = Vec<Vec<f64>>;

/// A loaded FMU in a worker, with the plan of the checks.
pub struct Probe {
    /// The FMU.
    pub fmu: Arc<Fmu>,
    /// Experiment and start values.
    pub plan: Plan,
    /// Where trace lines go (`None`: nowhere, e.g. in unit tests).
    out: Option<File>,
    /// The worker's secret, in front of every line (see `worker.rs`).
    key: String,
    /// Outputs that are read: Real, then Integer/Enumeration, then Boolean.
    pub outputs: Vec<Var>,
    /// Real inputs.
    pub inputs: Vec<Var>,
    real_vr: Vec<u32>,
    int_vr: Vec<u32>,
    bool_vr: Vec<u32>,
}

fn var(index: usize, v: &ScalarVariable) -> Var {
    Var { name: v.name.clone(), vr: v.value_reference, index: index as u32 + 1, ty: v.kind.base_type() }
}

impl Probe {
    /// Puts `key` and a space in front of every line (the worker's secret).
    pub fn with_key(mut self, key: &str) -> Self {
        self.key = format!("{key} ");
        self
    }

    /// A probe of `fmu` running `plan`, tracing to `out`.
    pub fn new(fmu: Arc<Fmu>, plan: Plan, out: Option<File>) -> Self {
        let vars = fmu.variables();
        let of = |ty: BaseType| -> Vec<Var> {
            vars.iter()
                .enumerate()
                .filter(|(_, v)| v.causality == Causality::Output && v.kind.base_type() == ty)
                .map(|(i, v)| var(i, v))
                .collect()
        };
        let reals = of(BaseType::Real);
        let ints: Vec<Var> = of(BaseType::Integer).into_iter().chain(of(BaseType::Enumeration)).collect();
        let bools = of(BaseType::Boolean);
        let inputs = vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.causality == Causality::Input && v.kind.base_type() == BaseType::Real)
            .map(|(i, v)| var(i, v))
            .collect();
        let real_vr = reals.iter().map(|v| v.vr).collect();
        let int_vr = ints.iter().map(|v| v.vr).collect();
        let bool_vr = bools.iter().map(|v| v.vr).collect();
        let outputs = reals.into_iter().chain(ints).chain(bools).collect();
        Self { fmu, plan, out, key: String::new(), outputs, inputs, real_vr, int_vr, bool_vr }
    }

    /// A probe of another loading of the same FMU (the Model Exchange interface of the FMU this
    /// probe has loaded for Co-Simulation), tracing to the same place with the same plan.
    pub fn with_fmu(&self, fmu: Arc<Fmu>) -> Self {
        let out = self.out.as_ref().and_then(|f| f.try_clone().ok());
        let mut p = Self::new(fmu, self.plan.clone(), out);
        p.key.clone_from(&self.key);
        p
    }

    /// The `<CoSimulation>` capabilities.
    pub fn cs(&self) -> &CoSimulation {
        self.fmu.co_simulation()
    }

    /// Whether the FMU is an FMI 3.0 FMU (its calls are the `fmi3*` functions).
    pub fn fmi3(&self) -> bool {
        self.fmu.version() == Version::Fmi3
    }

    /// `text` naming the functions of the FMU's version (the checks name FMI 2.0's).
    pub fn named(&self, text: String) -> String {
        if self.fmi3() {
            super::raw::names3(&text)
        } else {
            text
        }
    }

    /// Writes the trace line `call WHAT` (before an FMU call: a crash or hang then names it).
    pub fn note(&self, what: impl std::fmt::Display) {
        if let Some(mut out) = self.out.as_ref() {
            // One write per line: lines of two threads do not interleave.
            let _ = out.write_all(format!("{}{}", self.key, self.named(format!("call {what}\n"))).as_bytes());
        }
    }

    /// Writes `found TEXT`: a partial result the supervisor adds to the evidence should the worker
    /// die or hang later in the check.
    pub fn found(&self, what: impl std::fmt::Display) {
        if let Some(mut out) = self.out.as_ref() {
            let found = self.named(format!("found {}\n", super::worker::cut_evidence(what.to_string())));
            let _ = out.write_all(format!("{}{found}", self.key).as_bytes());
        }
    }

    /// Time of communication point `k`.
    pub fn time(&self, k: u64) -> f64 {
        self.plan.start + k as f64 * self.plan.step
    }

    /// `fmi2Instantiate` / `fmi3InstantiateCoSimulation` as `name`.
    pub fn instantiate(&self, name: &str) -> Result<Instance, String> {
        self.note(format_args!("fmi2Instantiate(\"{name}\")"));
        self.fmu.instantiate(name).map_err(|e| e.to_string())
    }

    /// `fmi2SetupExperiment`, the start values, `fmi2EnterInitializationMode`.
    pub fn enter(&self, s: &mut Instance) -> Result<(), String> {
        let p = &self.plan;
        self.note(format_args!("fmi2SetupExperiment(start = {}, stop = {}) of {}", p.start, p.stop, s.name()));
        s.setup(p.start, Some(p.stop)).map_err(|e| e.to_string())?;
        for (vr, v) in &p.starts {
            self.note(format_args!("fmi2Set* of start value vr {vr} = {v:?}"));
            crate::system::StartValue::from(v).apply(s, *vr).map_err(|e| e.to_string())?;
        }
        self.note(format_args!("fmi2EnterInitializationMode of {}", s.name()));
        s.enter_initialization().map_err(|e| e.to_string())
    }

    /// [`Probe::enter`] and `fmi2ExitInitializationMode`.
    pub fn init(&self, s: &mut Instance) -> Result<(), String> {
        self.enter(s)?;
        self.note(format_args!("fmi2ExitInitializationMode of {}", s.name()));
        s.exit_initialization().map_err(|e| e.to_string())
    }

    /// Every output now, [`Probe::outputs`] order.
    pub fn read(&self, s: &mut Instance) -> Result<Vec<f64>, String> {
        let mut row = vec![0.0; self.real_vr.len()];
        if !self.real_vr.is_empty() {
            s.get_real(&self.real_vr, &mut row).map_err(|e| e.to_string())?;
        }
        if !self.int_vr.is_empty() {
            let mut v = vec![0; self.int_vr.len()];
            s.get_int64(&self.int_vr, &mut v).map_err(|e| e.to_string())?;
            row.extend(v.into_iter().map(|k| k as f64));
        }
        if !self.bool_vr.is_empty() {
            let mut v = vec![false; self.bool_vr.len()];
            s.get_boolean(&self.bool_vr, &mut v).map_err(|e| e.to_string())?;
            row.extend(v.into_iter().map(|b| f64::from(u8::from(b))));
        }
        Ok(row)
    }

    /// `fmi2DoStep` from communication point `k` over H.
    pub fn step(&self, s: &mut Instance, k: u64) -> Result<(), String> {
        let t = self.time(k);
        self.note(format_args!("fmi2DoStep(t = {t}, h = {}) of {}", self.plan.step, s.name()));
        s.do_step(t, self.plan.step).map_err(|e| e.to_string())
    }

    /// Steps `from..to` on the grid, reading the outputs after each step.
    pub fn run(&self, s: &mut Instance, from: u64, to: u64) -> Result<Rows, String> {
        let mut rows = Vec::with_capacity((to - from) as usize);
        for k in from..to {
            self.step(s, k)?;
            rows.push(self.read(s)?);
        }
        Ok(rows)
    }

    /// A whole run in a new instance: instantiate, initialize, outputs at t0, `steps` steps
    /// (reading after each), terminate, free.
    pub fn fresh_run(&self, name: &str, steps: u64) -> Result<Rows, String> {
        let mut s = self.instantiate(name)?;
        self.init(&mut s)?;
        let mut rows = vec![self.read(&mut s)?];
        rows.extend(self.run(&mut s, 0, steps)?);
        self.note(format_args!("fmi2Terminate of {name}"));
        s.terminate().map_err(|e| e.to_string())?;
        self.note(format_args!("fmi2FreeInstance of {name}"));
        drop(s);
        Ok(rows)
    }

    /// The first bitwise difference of two runs whose rows start at communication point `k0`:
    /// "at t = …: y = a vs b", or `None` when identical.
    pub fn diff(&self, a: &Rows, b: &Rows, k0: u64) -> Option<String> {
        if a.len() != b.len() {
            return Some(format!("{} vs {} communication points", a.len(), b.len()));
        }
        for (k, (ra, rb)) in a.iter().zip(b).enumerate() {
            for (j, (x, y)) in ra.iter().zip(rb).enumerate() {
                if x.to_bits() != y.to_bits() {
                    let name = self.outputs.get(j).map_or("?", |v| v.name.as_str());
                    return Some(format!("at t = {}: {name} = {x:e} vs {y:e}", self.time(k0 + k as u64)));
                }
            }
        }
        None
    }

    /// The number of values in `rows`.
    pub fn count(rows: &Rows) -> usize {
        rows.iter().map(Vec::len).sum()
    }

    /// The model variable with 1-based index `index`.
    pub fn variable(&self, index: u32) -> Option<&ScalarVariable> {
        self.fmu.model_description().variable_by_index(index)
    }

    /// A perturbation of Real input `v` at value `u`: 10 % of its nominal (or of max(|u|, 1)),
    /// pointing inside [min, max] when the variable declares them.
    pub fn perturbation(&self, v: &Var, u: f64) -> f64 {
        let (min, max, nominal) = self.bounds(v);
        let mut d = 0.1 * nominal.map_or(u.abs().max(1.0), f64::abs);
        if max.is_some_and(|m| u + d > m) {
            d = -d;
        }
        if min.is_some_and(|m| u + d < m) {
            if let (Some(lo), Some(hi)) = (min, max) {
                d = 0.1 * (hi - lo) * if u + 0.1 * (hi - lo) <= hi { 1.0 } else { -1.0 };
            }
        }
        d
    }

    /// min, max and nominal of Real `v` (its own, else its declared type's).
    pub fn bounds(&self, v: &Var) -> (Option<f64>, Option<f64>, Option<f64>) {
        let md = self.fmu.model_description();
        let Some(sv) = self.variable(v.index) else { return (None, None, None) };
        let model_description::VariableKind::Real { attrs, declared_type, .. } = &sv.kind else {
            return (None, None, None);
        };
        let ty = declared_type.as_deref().and_then(|t| md.simple_type(t)).and_then(|t| match &t.kind {
            model_description::SimpleTypeKind::Real(a) => Some(a),
            _ => None,
        });
        let pick =
            |own: Option<f64>, f: fn(&model_description::RealAttributes) -> Option<f64>| own.or_else(|| ty.and_then(f));
        (pick(attrs.min, |a| a.min), pick(attrs.max, |a| a.max), pick(attrs.nominal, |a| a.nominal))
    }
}

/// Resident set size of this process (bytes), from /proc/self/statm.
pub fn rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
