//! Work–precision measurement (`cosim bench --precision`): the wall time of a co-simulation
//! against its error with respect to a reference, over a grid of configurations (communication
//! step H, extrapolation order, any start value such as a hydraulics integrator, its internal
//! step or a mechanism's solver), and the Pareto front of the two: the honest performance
//! number of a co-simulation is the wall time to reach a given accuracy.
//!
//! Errors are taken where both runs have a communication point (|t − t_ref| ≤ 1e-9 H): no
//! interpolation of the reference enters the error. Wall time covers instantiation,
//! initialization, every step and termination, with only the compared variables recorded (in
//! memory, no file output); the median of `repeat` runs.

use crate::bonds::BondState;
use crate::error::{MasterError, Result};
use crate::execution::Execution;
use crate::fmu::FmuCache;
use crate::observer::{Observer, SharedRecorder, Status};
use crate::system::{Overrides, SystemBuilder, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One dimension of the grid: `step`, `extrapolation` or a start value `instance.variable`,
/// with the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Dimension {
    /// `step`, `extrapolation` or `instance.variable`.
    pub key: String,
    /// Values, in order.
    pub values: Vec<Value>,
}

impl Dimension {
    /// `KEY=V1,V2,…` (numbers as Real or Integer, `true`/`false`, anything else a string such as
    /// an enumeration item name).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let (key, values) =
            text.split_once('=').ok_or_else(|| format!("grid dimension \"{text}\": expected KEY=V1,V2,..."))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("grid dimension \"{text}\": empty key"));
        }
        let values: Vec<Value> = values.split(',').map(|v| parse_value(v.trim())).collect();
        if values.iter().any(|v| matches!(v, Value::String(s) if s.is_empty())) {
            return Err(format!("grid dimension \"{text}\": empty value"));
        }
        let dim = Self { key: key.to_owned(), values };
        match key {
            "step" => {
                for v in &dim.values {
                    if !as_f64(v).is_some_and(|h| h > 0.0 && h.is_finite()) {
                        return Err(format!("grid dimension step: {v} is not a positive number of seconds"));
                    }
                }
            }
            "extrapolation" => {
                for v in &dim.values {
                    if !matches!(v, Value::Integer(0..=4)) {
                        return Err(format!("grid dimension extrapolation: {v} is not an order 0-4"));
                    }
                }
            }
            k if !k.contains('.') => {
                return Err(format!(
                    "grid dimension \"{k}\": expected step, extrapolation or a start value instance.variable"
                ))
            }
            _ => {}
        }
        Ok(dim)
    }
}

fn parse_value(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        Value::Integer(i)
    } else if let Ok(x) = v.parse::<f64>() {
        Value::Real(x)
    } else if v == "true" || v == "false" {
        Value::Boolean(v == "true")
    } else {
        Value::String(v.to_owned())
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Real(x) => Some(*x),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The grid: every combination of the dimensions' values is one configuration.
    pub grid: Vec<Dimension>,
    /// Compared variables: (system's `instance.variable`, reference's `instance.variable`). The
    /// first is the accuracy measure of the front.
    pub compare: Vec<(String, String)>,
    /// Runs per configuration (median wall time).
    pub repeat: usize,
}

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct Point {
    /// (dimension key, value) of this configuration.
    pub settings: Vec<(String, Value)>,
    /// Median wall time of a whole run (s).
    pub seconds: f64,
    /// Simulated time (s).
    pub simulated: f64,
    /// Max |Δ| per compared variable (its unit), over the common communication points.
    pub errors: Vec<f64>,
    /// Σ|δE| over every bond at the end (J).
    pub residual_energy: f64,
    /// Communication steps.
    pub steps: u64,
    /// Why the run did not complete (then errors are not meaningful).
    pub failure: Option<String>,
}

impl Point {
    /// `step = 0.002; extrapolation = 1; hyd.integrator = TR`.
    pub fn label(&self) -> String {
        let parts: Vec<String> = self.settings.iter().map(|(k, v)| format!("{k} = {}", plain(v))).collect();
        parts.join("; ")
    }

    /// Simulated seconds per wall-clock second.
    pub fn real_time_factor(&self) -> f64 {
        self.simulated / self.seconds
    }

    /// Completed, with finite errors.
    pub fn ok(&self) -> bool {
        self.failure.is_none() && self.errors.iter().all(|e| e.is_finite())
    }
}

fn fail(path: &Path, key: &str, message: String) -> MasterError {
    MasterError::System { path: path.to_path_buf(), key: key.to_owned(), message }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The reference's compared values at its communication points.
struct Reference {
    times: Vec<f64>,
    values: Vec<Vec<f64>>,
}

fn reference(path: &Path, compare: &[(String, String)], fmus: &mut FmuCache) -> Result<Reference> {
    let mut b = SystemBuilder::read(path)?;
    b.outputs(compare.iter().map(|(_, r)| r.clone()));
    let mut run = Execution::from_builder(&b, &Overrides::default(), fmus)?;
    let rec = SharedRecorder::default();
    run.observe(Box::new(rec.clone()));
    run.run()?;
    let summary = run.finish()?;
    if summary.status != Status::Ok {
        return Err(fail(
            path,
            "reference",
            format!("the reference run ended {:?}: {}", summary.status, summary.message),
        ));
    }
    let r = rec.lock().map_err(|_| fail(path, "reference", "recorder poisoned".into()))?;
    Ok(Reference { times: r.times.clone(), values: r.values.clone() })
}

/// Max |Δ| against the reference at common communication points, and the last Σ|δE|, computed
/// while the run steps (no allocation per step).
struct Errors {
    reference: Arc<Reference>,
    cursor: usize,
    tol: f64,
    max: Vec<f64>,
    compared: u64,
    residual_energy: f64,
}

impl Errors {
    fn point(&mut self, t: f64, values: &[f64], bonds: &[BondState]) {
        let r = &self.reference;
        while self.cursor < r.times.len() && r.times[self.cursor] < t - self.tol {
            self.cursor += 1;
        }
        if self.cursor < r.times.len() && (r.times[self.cursor] - t).abs() <= self.tol {
            for ((m, v), rv) in self.max.iter_mut().zip(values).zip(&r.values[self.cursor]) {
                let d = (v - rv).abs();
                // NaN propagates: a run that produced NaN has no finite error.
                *m = if d.is_nan() { f64::NAN } else { m.max(d) };
            }
            self.compared += 1;
        }
        self.residual_energy = bonds.iter().map(|b| b.e_abs).sum();
    }
}

type SharedErrors = Arc<Mutex<Errors>>;

struct ErrorObserver(SharedErrors);

impl Observer for ErrorObserver {
    fn start(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        if let Ok(mut e) = self.0.lock() {
            e.point(t, values, bonds);
        }
        Ok(())
    }
    fn step(&mut self, _n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        if let Ok(mut e) = self.0.lock() {
            e.point(t, values, bonds);
        }
        Ok(())
    }
}

/// Every combination of the grid's values, in order (the last dimension varies fastest).
pub fn configurations(grid: &[Dimension]) -> Vec<Vec<(String, Value)>> {
    let mut all: Vec<Vec<(String, Value)>> = vec![Vec::new()];
    for d in grid {
        all = all
            .into_iter()
            .flat_map(|c| {
                d.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((d.key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    all
}

/// Applies one configuration to a copy of the system.
fn configure(base: &SystemBuilder, settings: &[(String, Value)]) -> Result<(SystemBuilder, Overrides)> {
    let mut b = base.clone();
    let mut over = Overrides::default();
    for (key, value) in settings {
        match key.as_str() {
            "step" => over.settings.step = as_f64(value),
            "extrapolation" => over.extrapolation = as_f64(value).map(|m| m as usize),
            dotted => {
                let (inst, var) = dotted.split_once('.').unwrap_or((dotted, ""));
                let draft = b.instance_mut(inst).ok_or_else(|| MasterError::System {
                    path: base.path().to_path_buf(),
                    key: dotted.to_owned(),
                    message: format!(
                        "grid dimension {dotted}: no instance \"{inst}\" in this system{}",
                        crate::suggest::did_you_mean(inst, base.instances.keys().map(String::as_str))
                    ),
                })?;
                draft.start(var, value.clone());
            }
        }
    }
    Ok((b, over))
}

/// One run of a configuration: (wall seconds, simulated seconds, errors and Σ|δE|, steps, failure).
fn run_once(
    b: &SystemBuilder,
    over: &Overrides,
    fmus: &mut FmuCache,
    reference: &Arc<Reference>,
    n: usize,
) -> Result<(f64, f64, Errors, u64, Option<String>)> {
    let t0 = Instant::now();
    let mut run = Execution::from_builder(b, over, fmus)?;
    let tol = 1e-9 * run.system().step();
    let simulated = run.system().stop() - run.system().start();
    let errors = Arc::new(Mutex::new(Errors {
        reference: Arc::clone(reference),
        cursor: 0,
        tol,
        max: vec![0.0; n],
        compared: 0,
        residual_energy: 0.0,
    }));
    run.observe(Box::new(ErrorObserver(Arc::clone(&errors))));
    let outcome = run.run();
    let steps = run.steps();
    let summary = run.finish();
    let seconds = t0.elapsed().as_secs_f64();
    let failure = match (outcome, summary) {
        (Err(e), _) => Some(e.to_string()),
        (Ok(()), Err(e)) => Some(e.to_string()),
        (Ok(()), Ok(s)) if s.status != Status::Ok && s.status != Status::Terminated => Some(s.message),
        _ => None,
    };
    let e = Arc::try_unwrap(errors)
        .ok()
        .and_then(|m| m.into_inner().ok())
        .ok_or_else(|| fail(b.path(), "precision", "error recorder still shared".into()))?;
    Ok((seconds, simulated, e, steps, failure))
}

/// Runs the reference once, then every configuration of the grid `spec.repeat` times.
/// `progress` is called after each configuration.
pub fn measure(
    system: &Path,
    reference_path: &Path,
    spec: &Spec,
    mut progress: impl FnMut(&Point),
) -> Result<Vec<Point>> {
    if spec.compare.is_empty() {
        return Err(fail(system, "compare", "nothing to compare (give --compare SYS=REF)".into()));
    }
    let mut fmus = FmuCache::with_host(crate::guard::host());
    let reference = Arc::new(reference(reference_path, &spec.compare, &mut fmus)?);
    let mut base = SystemBuilder::read(system)?;
    base.outputs(spec.compare.iter().map(|(s, _)| s.clone()));
    let mut points = Vec::new();
    for settings in configurations(&spec.grid) {
        let (b, over) = configure(&base, &settings)?;
        let mut times = Vec::new();
        let mut first = None;
        for _ in 0..spec.repeat.max(1) {
            let (s, simulated, e, steps, failure) = run_once(&b, &over, &mut fmus, &reference, spec.compare.len())?;
            times.push(s);
            if first.is_none() {
                first = Some((simulated, e, steps, failure.clone()));
            }
            if failure.is_some() {
                break;
            }
        }
        times.sort_by(f64::total_cmp);
        let (simulated, e, steps, failure) = first.ok_or_else(|| fail(system, "precision", "no run".into()))?;
        let failure = failure
            .or_else(|| (e.compared == 0).then(|| "no communication point in common with the reference".to_owned()));
        let p = Point {
            settings,
            seconds: times[times.len() / 2],
            simulated,
            errors: e.max,
            residual_energy: e.residual_energy,
            steps,
            failure,
        };
        progress(&p);
        points.push(p);
    }
    Ok(points)
}

/// Indices of the Pareto front in (wall time, error of compared variable `metric`): sorted by
/// wall time, each strictly more accurate than every faster point.
pub fn front(points: &[Point], metric: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| points[i].ok()).collect();
    order.sort_by(|&a, &b| points[a].seconds.total_cmp(&points[b].seconds));
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for i in order {
        let e = points[i].errors[metric];
        if e < best {
            best = e;
            out.push(i);
        }
    }
    out
}

/// The fastest completed configuration whose error in `metric` is within `tolerance`.
pub fn fastest_within(points: &[Point], metric: usize, tolerance: f64) -> Option<usize> {
    (0..points.len())
        .filter(|&i| points[i].ok() && points[i].errors[metric] <= tolerance)
        .min_by(|&a, &b| points[a].seconds.total_cmp(&points[b].seconds))
}

fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3e}")
    } else {
        "-".into()
    }
}

/// The front and the full table as Markdown.
pub fn markdown(points: &[Point], spec: &Spec) -> String {
    let cols: String = spec.compare.iter().map(|(s, _)| format!(" max \\|Δ {s}\\| |")).collect();
    let head = format!(
        "| configuration | wall time (s) | real-time factor |{cols} Σ\\|δE\\| (J) |\n|---|---|---|{}---|\n",
        "---|".repeat(spec.compare.len())
    );
    let row = |p: &Point| {
        let errs: String = p.errors.iter().map(|e| format!(" {} |", sci(*e))).collect();
        match &p.failure {
            None => format!(
                "| {} | {:.4} | {:.0}× |{errs} {} |\n",
                p.label(),
                p.seconds,
                p.real_time_factor(),
                sci(p.residual_energy)
            ),
            Some(f) => {
                let f: String = f.replace('|', "/").replace('\n', " ").chars().take(100).collect();
                format!("| {} | {:.4} | failed: {f} |{} - |\n", p.label(), p.seconds, " - |".repeat(spec.compare.len()))
            }
        }
    };
    let mut s = format!("### Pareto front (wall time vs max |Δ {}|)\n\n{head}", spec.compare[0].0);
    for i in front(points, 0) {
        s.push_str(&row(&points[i]));
    }
    s.push_str(&format!("\n<details><summary>Every configuration ({})</summary>\n\n{head}", points.len()));
    for p in points {
        s.push_str(&row(p));
    }
    s.push_str("\n</details>\n");
    s
}

/// The points as CSV: configuration, seconds, real-time factor, errors, Σ|δE|, front, failure.
pub fn csv(points: &[Point], spec: &Spec) -> String {
    let on_front = front(points, 0);
    let mut s = String::from("configuration,seconds,real_time_factor");
    for (v, _) in &spec.compare {
        s.push_str(&format!(",max_abs_error:{v}"));
    }
    s.push_str(",residual_energy,front,failure\n");
    for (i, p) in points.iter().enumerate() {
        s.push_str(&format!("\"{}\",{},{}", p.label().replace('"', "\"\""), p.seconds, p.real_time_factor()));
        for e in &p.errors {
            s.push_str(&format!(",{e}"));
        }
        let failure = p.failure.as_deref().unwrap_or("").replace('"', "\"\"").replace('\n', " ");
        s.push_str(&format!(",{},{},\"{failure}\"\n", p.residual_energy, on_front.contains(&i)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(seconds: f64, error: f64) -> Point {
        Point {
            settings: vec![("step".into(), Value::Real(seconds))],
            seconds,
            simulated: 1.0,
            errors: vec![error],
            residual_energy: 0.0,
            steps: 1,
            failure: None,
        }
    }

    #[test]
    fn front_keeps_only_points_no_faster_point_beats() {
        let pts = vec![point(3.0, 1e-6), point(1.0, 1e-3), point(2.0, 1e-2), point(2.5, 1e-4), point(0.5, f64::NAN)];
        assert_eq!(front(&pts, 0), vec![1, 3, 0]);
        assert_eq!(fastest_within(&pts, 0, 1e-4), Some(3));
        assert_eq!(fastest_within(&pts, 0, 1e-9), None);
    }

    #[test]
    fn grid_is_the_cartesian_product() {
        let g = vec![
            Dimension::parse("step=1e-3,2e-3").unwrap(),
            Dimension::parse("extrapolation=0,1,2").unwrap(),
            Dimension::parse("hyd.integrator=TR,FWE").unwrap(),
        ];
        let c = configurations(&g);
        assert_eq!(c.len(), 12);
        assert_eq!(
            c[0],
            vec![
                ("step".into(), Value::Real(1e-3)),
                ("extrapolation".into(), Value::Integer(0)),
                ("hyd.integrator".into(), Value::String("TR".into()))
            ]
        );
        assert_eq!(c[11][2].1, Value::String("FWE".into()));
    }

    #[test]
    fn bad_dimensions_are_named() {
        assert!(Dimension::parse("step=0").unwrap_err().contains("step"));
        assert!(Dimension::parse("extrapolation=5").unwrap_err().contains("order 0-4"));
        assert!(Dimension::parse("solver=TR").unwrap_err().contains("instance.variable"));
        assert!(Dimension::parse("nothing").unwrap_err().contains("KEY=V1"));
    }
}
