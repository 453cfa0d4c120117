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

use master::bonds::BondState;
use master::error::{MasterError, Result};
use master::execution::Execution;
use master::fmu::FmuCache;
use master::observer::{Observer, SharedRecorder, Status};
use master::system::{Overrides, Settings, SystemBuilder, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One dimension of the grid with the values it takes. Its key is one of:
///
/// - `extrapolation`: the Lagrange order 0..4 of every connection (over each connection's own);
/// - `system`: alternative system files (e.g. force coupling, pressure coupling and the interface
///   model of one machine; paths relative to the working directory), each compared against the
///   same reference;
/// - `instances.NAME.step`: instance NAME's own step h = H/k (multirate);
/// - any key of the run's settings ([`Settings`], `[simulation]` of a system file), dotted for a
///   nested table: `step`, `step_control`, `ecco.rtol`, `energy_correction`, `iterations`, …
///   (a settings key wins over an instance of the same name);
/// - otherwise a start value `instance.variable` (e.g. `hyd.integrator`, `hyd.h`, `mech.solver`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dimension {
    /// The key (see above).
    pub key: String,
    /// Values, in order.
    pub values: Vec<Value>,
}

/// What a dimension's key sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Extrapolation,
    System,
    InstanceStep,
    Setting,
    Start,
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
        Self::new(key, values)
    }

    /// A dimension with its values checked against what its key sets. `KEY1+KEY2` sets both keys
    /// to each value (e.g. `hyd1.integrator+hyd2.integrator`).
    pub fn new(key: &str, values: Vec<Value>) -> std::result::Result<Self, String> {
        if values.is_empty() {
            return Err(format!("grid dimension {key}: no values"));
        }
        for part in key.split('+') {
            Self { key: part.trim().to_owned(), values: values.clone() }.check()?;
        }
        Ok(Self { key: key.to_owned(), values })
    }

    fn check(&self) -> std::result::Result<(), String> {
        let (dim, key) = (self, self.key.as_str());
        match dim.kind() {
            Kind::Extrapolation => {
                for v in &dim.values {
                    if !matches!(v, Value::Integer(0..=4)) {
                        return Err(format!("grid dimension extrapolation: {v} is not an order 0-4"));
                    }
                }
            }
            Kind::System => {
                for v in &dim.values {
                    if !matches!(v, Value::String(_)) {
                        return Err(format!("grid dimension system: {v} is not a system file"));
                    }
                }
            }
            Kind::InstanceStep => {
                for v in &dim.values {
                    if !as_f64(v).is_some_and(|h| h > 0.0 && h.is_finite()) {
                        return Err(format!("grid dimension {key}: {v} is not a positive number of seconds"));
                    }
                }
            }
            Kind::Setting => {
                for v in &dim.values {
                    if key == "step" && !as_f64(v).is_some_and(|h| h > 0.0 && h.is_finite()) {
                        return Err(format!("grid dimension step: {v} is not a positive number of seconds"));
                    }
                    Settings::default().set(key, to_toml(v)).map_err(|e| format!("grid dimension {e}"))?;
                }
            }
            Kind::Start if !key.contains('.') => {
                return Err(format!(
                    "grid dimension \"{key}\": expected a setting ({}), extrapolation, system, \
                     instances.NAME.step or a start value instance.variable",
                    Settings::keys().join(", ")
                ))
            }
            Kind::Start => {}
        }
        Ok(())
    }

    fn kind(&self) -> Kind {
        let first = self.key.split('.').next().unwrap_or_default();
        let parts: Vec<&str> = self.key.split('.').collect();
        match self.key.as_str() {
            "extrapolation" => Kind::Extrapolation,
            "system" => Kind::System,
            _ if parts.len() == 3 && parts[0] == "instances" && parts[2] == "step" => Kind::InstanceStep,
            _ if Settings::keys().contains(&first) => Kind::Setting,
            _ => Kind::Start,
        }
    }
}

/// The grids of a grid file: each `[[grid]]` table is one product (key = array of values, or one
/// value), the configurations are their union:
///
/// ```toml
/// [[grid]]
/// step = [1e-3, 2e-3]
/// "hyd.integrator" = ["TR", "FWE"]
///
/// [[grid]]
/// step_control = "ecco"
/// "ecco.rtol" = [1e-3, 1e-4]
/// ```
pub fn grids_from_toml(text: &str) -> std::result::Result<Vec<Vec<Dimension>>, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| e.message().trim().to_owned())?;
    for k in table.keys() {
        if k != "grid" {
            return Err(format!("unknown key \"{k}\" (expected [[grid]] tables)"));
        }
    }
    let grids = match table.get("grid") {
        Some(toml::Value::Array(a)) => a,
        _ => return Err("expected [[grid]] tables".into()),
    };
    grids
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let g = g.as_table().ok_or_else(|| format!("grid {}: not a table", i + 1))?;
            g.iter()
                .map(|(k, v)| {
                    let values = match v {
                        toml::Value::Array(a) => a.iter().map(from_toml).collect::<std::result::Result<Vec<_>, _>>(),
                        one => from_toml(one).map(|v| vec![v]),
                    }
                    .map_err(|e| format!("grid {}, {k}: {e}", i + 1))?;
                    Dimension::new(k, values).map_err(|e| format!("grid {}: {e}", i + 1))
                })
                .collect()
        })
        .collect()
}

fn from_toml(v: &toml::Value) -> std::result::Result<Value, String> {
    Ok(match v {
        toml::Value::Float(x) => Value::Real(*x),
        toml::Value::Integer(i) => Value::Integer(*i),
        toml::Value::Boolean(b) => Value::Boolean(*b),
        toml::Value::String(s) => Value::String(s.clone()),
        other => return Err(format!("{other} is not a number, boolean or string")),
    })
}

fn to_toml(v: &Value) -> toml::Value {
    match v {
        Value::Real(x) => toml::Value::Float(*x),
        Value::Integer(i) => toml::Value::Integer(*i),
        Value::Boolean(b) => toml::Value::Boolean(*b),
        Value::String(s) | Value::Other(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().map(to_toml).collect()),
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
    /// The grids: every combination of one grid's dimensions' values is one configuration; the
    /// configurations of all grids, one after the other.
    pub grids: Vec<Vec<Dimension>>,
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
        // (An empty sum of f64 is -0.0: a system without bonds shows 0.)
        self.residual_energy = bonds.iter().map(|b| b.e_abs).sum::<f64>() + 0.0;
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

/// Applies one configuration to a copy of the system (`system` dimensions already chose it).
fn configure(base: &SystemBuilder, settings: &[(String, Value)]) -> Result<(SystemBuilder, Overrides)> {
    let mut b = base.clone();
    let mut over = Overrides::default();
    let no_instance = |key: &str, inst: &str| MasterError::System {
        path: base.path().to_path_buf(),
        key: key.to_owned(),
        message: format!(
            "grid dimension {key}: no instance \"{inst}\" in this system{}",
            master::suggest::did_you_mean(inst, base.instance_names())
        ),
    };
    for (key, value) in settings.iter().flat_map(|(k, v)| k.split('+').map(move |k| (k.trim().to_owned(), v))) {
        let key = &key;
        let dim = Dimension { key: key.clone(), values: Vec::new() };
        match dim.kind() {
            Kind::System => {}
            Kind::Extrapolation => over.extrapolation = as_f64(value).map(|m| m as usize),
            Kind::Setting => over
                .settings
                .set(key, to_toml(value))
                .map_err(|m| fail(base.path(), key, format!("grid dimension {m}")))?,
            Kind::InstanceStep => {
                let inst = key.split('.').nth(1).unwrap_or_default();
                let h = as_f64(value).unwrap_or(f64::NAN);
                b.instance_mut(inst).ok_or_else(|| no_instance(key, inst))?.step(h);
            }
            Kind::Start => {
                let (inst, var) = key.split_once('.').unwrap_or((key, ""));
                b.instance_mut(inst).ok_or_else(|| no_instance(key, inst))?.start(var, value.clone());
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
    let mut bases: Vec<(String, SystemBuilder)> = Vec::new();
    let mut points = Vec::new();
    for settings in all_configurations(&spec.grids) {
        let path = settings
            .iter()
            .rev()
            .find(|(k, _)| k == "system")
            .map_or_else(|| system.display().to_string(), |(_, v)| plain(v));
        if !bases.iter().any(|(p, _)| *p == path) {
            let mut base = SystemBuilder::read(Path::new(&path))?;
            base.outputs(spec.compare.iter().map(|(s, _)| s.clone()));
            bases.push((path.clone(), base));
        }
        let base = bases
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, b)| b)
            .ok_or_else(|| fail(system, "system", path.clone()))?;
        let (b, over) = configure(base, &settings)?;
        let mut times = Vec::new();
        let mut first = None;
        for _ in 0..spec.repeat.max(1) {
            let (s, simulated, e, steps, failure) = match run_once(&b, &over, &mut fmus, &reference, spec.compare.len())
            {
                Ok(r) => r,
                // This configuration cannot be built (e.g. H does not divide the run): a row,
                // unless the system itself cannot (a compared variable it does not have).
                Err(e) if Execution::from_builder(base, &Overrides::default(), &mut fmus).is_ok() => {
                    let errors = Errors {
                        reference: Arc::clone(&reference),
                        cursor: 0,
                        tol: 0.0,
                        max: vec![f64::NAN; spec.compare.len()],
                        compared: 0,
                        residual_energy: f64::NAN,
                    };
                    (f64::NAN, f64::NAN, errors, 0, Some(e.to_string()))
                }
                Err(e) => return Err(e),
            };
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

/// The configurations of every grid, one grid after the other.
pub fn all_configurations(grids: &[Vec<Dimension>]) -> Vec<Vec<(String, Value)>> {
    grids.iter().flat_map(|g| configurations(g)).collect()
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
        assert!(Dimension::parse("integrator=TR").unwrap_err().contains("instance.variable"));
        let e = Dimension::parse("ecco.rtl=1e-3").unwrap_err();
        assert!(e.contains("ecco.rtl") && e.contains("rtl"), "{e}");
        let e = Dimension::parse("step_control=sometimes").unwrap_err();
        assert!(e.contains("step_control") && e.contains("sometimes"), "{e}");
        assert!(Dimension::parse("instances.hyd.step=0").unwrap_err().contains("positive"));
        assert!(Dimension::parse("system=1").unwrap_err().contains("system file"));
    }

    #[test]
    fn settings_keys_multirate_steps_and_start_values_set_what_they_name() {
        let mut base = SystemBuilder::new();
        base.instance("hyd", "x.fmu");
        base.instance("mech", "y.fmu");
        let config: Vec<(String, Value)> = [
            "step_control=ecco",
            "ecco.rtol=1e-4",
            "energy_correction=true",
            "step=2e-3",
            "extrapolation=2",
            "instances.hyd.step=5e-4",
            "hyd.p3_model+mech.solver=SP",
        ]
        .iter()
        .map(|d| {
            let d = Dimension::parse(d).unwrap();
            (d.key, d.values[0].clone())
        })
        .collect();
        let (b, over) = configure(&base, &config).unwrap();
        let s = &over.settings;
        assert_eq!(s.step_control, Some(master::system::StepControlKind::Ecco));
        assert_eq!((s.ecco.rtol, s.energy_correction, s.step), (Some(1e-4), Some(true), Some(2e-3)));
        assert_eq!(over.extrapolation, Some(2));
        let mut expected = SystemBuilder::new();
        expected.instance("hyd", "x.fmu").step(5e-4).start("p3_model", "SP");
        expected.instance("mech", "y.fmu").start("solver", "SP");
        assert_eq!(format!("{:?}", b.instance_drafts()), format!("{:?}", expected.instance_drafts()));
        let e = configure(&base, &[("instances.mecj.step".into(), Value::Real(1e-3))]).unwrap_err().to_string();
        assert!(e.contains("no instance \"mecj\"") && e.contains("did you mean \"mech\""), "{e}");
    }

    #[test]
    fn a_grid_file_is_a_union_of_products() {
        let g = grids_from_toml(
            "[[grid]]\nstep = [1e-3, 2e-3]\n\"hyd.integrator\" = [\"TR\", \"FWE\"]\n\n[[grid]]\nstep_control = \"ecco\"\n\"ecco.rtol\" = [1e-3, 1e-4, 1e-5]\n",
        )
        .unwrap();
        assert_eq!(all_configurations(&g).len(), 4 + 3);
        assert!(grids_from_toml("[[grid]]\nstep = [0.0]\n").unwrap_err().contains("grid 1"));
        assert!(grids_from_toml("[[grids]]\nstep = [1.0]\n").unwrap_err().contains("grids"));
        assert!(grids_from_toml("[[grid]]\n\"ecco.x\" = [1.0]\n").unwrap_err().contains("ecco.x"));
        assert!(Dimension::parse("nothing").unwrap_err().contains("KEY=V1"));
    }
}
