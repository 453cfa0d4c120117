//! `cosim bench --model-exchange FMU…`: work–precision of Model Exchange integration (issue 50
//! item 1). For each FMU, in one run: a tight reference (our BDF at [`REFERENCE_RTOL`], checked
//! against FMPy's CVode at the same tolerance), then our BDF at each relative tolerance, RK4 and
//! Euler at each fixed step, and FMPy's ME simulation (CVode) at the same tolerances, each the
//! median wall time of `repeat` runs and its error against the reference.
//!
//! Like for like: the same FMU, start, stop and output interval (the communication step, FMPy's
//! `output_interval`), the same relative tolerance, our absolute tolerance rtol (FMPy's is rtol ×
//! the state's nominal: equal for nominals of 1, which every FMU here declares or defaults to) and
//! FMPy's largest step (stop − start) / 50. A run's wall time covers instantiation,
//! initialization, the integration, recording the compared variables in memory and termination,
//! the FMU extracted beforehand on both sides (FMPy: the extracted folder and the description
//! read once, `validate=False`). The error is the largest over the compared variables (the
//! continuous states and the outputs) of max |y − y_ref| / max |y_ref| at the output points
//! (FMPy's rows at events left out: the last row at each output time counts).

use anyhow::{bail, Context, Result};
use master::fmu::FmuCache;
use master::observer::{Recorder, SharedRecorder, Status};
use master::single::{self, FmuOptions};
use master::system::{Overrides, Settings, SystemBuilder};
use master::Execution;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Relative tolerance of the reference (our BDF; FMPy's CVode at the same shows its agreement).
pub const REFERENCE_RTOL: f64 = 1e-11;

/// Options of the Model Exchange bench.
pub struct MeOptions {
    /// Relative tolerances of the variable-step solvers.
    pub tolerances: Vec<f64>,
    /// Fixed steps of RK4 and Euler, as fractions of the output interval.
    pub fixed_divisions: Vec<u32>,
    /// Stop time (default: the FMU's `DefaultExperiment`).
    pub stop: Option<f64>,
    /// Repetitions (median reported).
    pub repeat: usize,
    /// Python with FMPy; None: no FMPy rows.
    pub python: Option<PathBuf>,
    /// `master/peers/bench_me_fmpy.py`.
    pub script: PathBuf,
    /// Start values `STEM:name=value` (STEM the FMU's file stem), for both tools.
    pub start_values: Vec<String>,
}

/// One measured configuration.
struct Row {
    tool: String,
    setting: String,
    seconds: f64,
    error: f64,
    /// Relative tolerance of a variable-step row.
    rtol: Option<f64>,
}

/// Values at the output points: times and one column per compared variable.
struct Series {
    times: Vec<f64>,
    columns: Vec<Vec<f64>>,
}

impl Series {
    fn from_recorder(r: &Recorder, n: usize) -> Self {
        let columns = (0..n).map(|j| r.values.iter().map(|v| v[j]).collect()).collect();
        Self { times: r.times.clone(), columns }
    }

    /// max over variables of max |y − y_ref| / max |y_ref| (absolute where y_ref is all zero), at
    /// the reference's times; the last of several rows at one time counts (events).
    fn error(&self, reference: &Series, interval: f64) -> f64 {
        let tol = 1e-9 * interval.max(reference.times.last().copied().unwrap_or(1.0).abs() * 1e-6);
        let mut worst = 0.0_f64;
        let mut k = 0;
        let mut matched = 0;
        for (i, &t) in reference.times.iter().enumerate() {
            while k < self.times.len() && self.times[k] < t - tol {
                k += 1;
            }
            // The last row at this time.
            let mut last = None;
            let mut j = k;
            while j < self.times.len() && (self.times[j] - t).abs() <= tol {
                last = Some(j);
                j += 1;
            }
            let Some(row) = last else { continue };
            matched += 1;
            for (c, rc) in self.columns.iter().zip(&reference.columns) {
                let scale = rc.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
                let scale = if scale > 0.0 { scale } else { 1.0 };
                let d = (c[row] - rc[i]).abs() / scale;
                worst = if d.is_nan() { f64::NAN } else { worst.max(d) };
            }
        }
        if matched < reference.times.len() {
            return f64::NAN;
        }
        worst
    }
}

/// The compared variables: the continuous states (by `derivative`) and the outputs, Reals only.
fn compared(md: &model_description::ModelDescription) -> Vec<String> {
    use model_description::{Causality, VariableKind};
    let vars = &md.model_variables;
    let mut names: Vec<String> = Vec::new();
    for v in vars {
        if let VariableKind::Real { derivative: Some(i), .. } = v.kind {
            if let Some(s) = vars.get(i as usize - 1) {
                names.push(s.name.clone());
            }
        }
    }
    for v in vars {
        if v.causality == Causality::Output && matches!(v.kind, VariableKind::Real { .. }) && !names.contains(&v.name) {
            names.push(v.name.clone());
        }
    }
    names
}

/// One of our runs: (wall seconds, series).
fn ours(b: &SystemBuilder, over: &Overrides, fmus: &mut FmuCache, n: usize) -> Result<(f64, Series)> {
    let t0 = Instant::now();
    let mut run = Execution::from_builder(b, over, fmus)?;
    let rec = SharedRecorder::default();
    run.observe(Box::new(rec.clone()));
    let outcome = run.run();
    let summary = run.finish()?;
    let seconds = t0.elapsed().as_secs_f64();
    outcome?;
    if summary.status != Status::Ok && summary.status != Status::Terminated {
        bail!("the run ended {:?}: {}", summary.status, summary.message);
    }
    let r = rec.lock().map_err(|_| anyhow::anyhow!("recorder poisoned"))?;
    Ok((seconds, Series::from_recorder(&r, n)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn settings(pairs: &[(&str, toml::Value)]) -> Result<Overrides> {
    let mut s = Settings::default();
    for (k, v) in pairs {
        s.set(k, v.clone()).map_err(anyhow::Error::msg)?;
    }
    Ok(Overrides::settings(s))
}

/// One of FMPy's runs: (relative tolerance, median seconds, values).
type PeerRun = (f64, f64, Series);

fn fmpy(
    opts: &MeOptions,
    fmu: &Path,
    experiment: (f64, f64, f64),
    vars: &[String],
    tolerances: &[f64],
    starts: &[String],
) -> Result<(String, Vec<PeerRun>)> {
    let starts: serde_json::Map<String, serde_json::Value> = starts
        .iter()
        .filter_map(|s| s.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.parse::<f64>().map_or_else(|_| v.into(), serde_json::Value::from)))
        .collect();
    let Some(python) = &opts.python else { bail!("no Python given") };
    let spec = serde_json::json!({
        "fmu": fmu, "start": experiment.0, "stop": experiment.1, "output_interval": experiment.2,
        "variables": vars, "tolerances": tolerances, "repeat": opts.repeat, "start_values": starts,
    });
    let out = Command::new(python)
        .arg(&opts.script)
        .arg(spec.to_string())
        .output()
        .with_context(|| format!("running {} {}", python.display(), opts.script.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap_or_default())
        .with_context(|| format!("FMPy's output: {text}{}", String::from_utf8_lossy(&out.stderr)))?;
    if v["ok"] != serde_json::Value::Bool(true) {
        bail!("FMPy failed: {}", v["error"]);
    }
    let version = v["version"].as_str().unwrap_or("?").to_owned();
    let nums = |x: &serde_json::Value| -> Vec<f64> {
        x.as_array().map(|a| a.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect()).unwrap_or_default()
    };
    let runs = v["runs"]
        .as_array()
        .map(|runs| {
            runs.iter()
                .map(|r| {
                    let series = Series {
                        times: nums(&r["time"]),
                        columns: vars.iter().map(|n| nums(&r["values"][n])).collect(),
                    };
                    (r["rtol"].as_f64().unwrap_or(f64::NAN), median(nums(&r["seconds"])), series)
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((version, runs))
}

fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2e}")
    } else {
        "-".into()
    }
}

/// The bench of one FMU as Markdown.
fn one(fmu: &Path, opts: &MeOptions, fmus: &mut FmuCache) -> Result<String> {
    let listing = master::fmu::Archive::read_model_description(fmu)?;
    let md = model_description::from_str(&listing.model_description)
        .map_err(|e| anyhow::anyhow!("{}: {e}", fmu.display()))?;
    let vars = compared(&md);
    if vars.is_empty() {
        bail!("{}: no continuous state or Real output to compare", fmu.display());
    }
    let stem = fmu.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let starts: Vec<String> = opts
        .start_values
        .iter()
        .filter_map(|s| s.split_once(':').filter(|(f, _)| *f == stem).map(|(_, v)| v.to_owned()))
        .collect();
    let fopts = FmuOptions {
        stop: opts.stop,
        output_variables: Some(vars.clone()),
        start_values: starts.clone(),
        ..FmuOptions::default()
    };
    let single = single::builder(fmu, &fopts)?;
    let b = single.builder;
    let sys = b.load_with(fmus, &settings(&[("interface", "me".into())])?)?;
    let (start, stop, h) = (sys.start(), sys.stop(), sys.step());
    drop(sys);
    let max_step = (stop - start) / 50.0;
    let n = vars.len();
    let me = |rtol: f64| {
        settings(&[
            ("interface", "me".into()),
            ("solver", "bdf".into()),
            ("relative_tolerance", rtol.into()),
            ("absolute_tolerance", rtol.into()),
            ("max_solver_step", max_step.into()),
        ])
    };
    // The reference (twice: the first run also extracts the FMU).
    let (_, reference) = ours(&b, &me(REFERENCE_RTOL)?, fmus, n)?;
    let mut rows = Vec::new();
    // Ours also between the listed tolerances (× 1, 1/2, 1/5), so that "at equal or better
    // accuracy" finds a configuration close to each of FMPy's errors.
    let mut ours_tol: Vec<f64> = opts.tolerances.iter().flat_map(|t| [*t, t / 2.0, t / 5.0]).collect();
    ours_tol.sort_by(|a, b| b.total_cmp(a));
    ours_tol.dedup();
    for &rtol in &ours_tol {
        let over = me(rtol)?;
        let mut times = Vec::new();
        let mut error = f64::NAN;
        for _ in 0..opts.repeat {
            let (s, series) = ours(&b, &over, fmus, n)?;
            times.push(s);
            error = series.error(&reference, h);
        }
        rows.push(Row {
            tool: "cosim".into(),
            setting: format!("bdf, rtol {rtol:e}"),
            seconds: median(times),
            error,
            rtol: Some(rtol),
        });
    }
    for method in ["rk4", "euler"] {
        for &k in &opts.fixed_divisions {
            let step = h / f64::from(k);
            let over =
                settings(&[("interface", "me".into()), ("solver", method.into()), ("solver_step", step.into())])?;
            let mut times = Vec::new();
            let mut error = f64::NAN;
            for _ in 0..opts.repeat {
                match ours(&b, &over, fmus, n) {
                    Ok((s, series)) => {
                        times.push(s);
                        error = series.error(&reference, h);
                    }
                    Err(_) => {
                        times.push(f64::NAN);
                        break;
                    }
                }
            }
            rows.push(Row {
                tool: "cosim".into(),
                setting: format!("{method}, h {step:e} s"),
                seconds: median(times),
                error,
                rtol: None,
            });
        }
    }
    let mut notes = Vec::new();
    let mut tolerances = opts.tolerances.clone();
    tolerances.push(REFERENCE_RTOL);
    match fmpy(opts, fmu, (start, stop, h), &vars, &tolerances, &starts) {
        Ok((version, runs)) => {
            for (rtol, seconds, series) in runs {
                let error = series.error(&reference, h);
                if rtol == REFERENCE_RTOL {
                    notes.push(format!(
                        "FMPy {version}'s CVode at rtol {rtol:e} differs from the reference by {} (the reference's own check).",
                        sci(error)
                    ));
                    continue;
                }
                rows.push(Row {
                    tool: format!("FMPy {version}"),
                    setting: format!("CVode, rtol {rtol:e}"),
                    seconds,
                    error,
                    rtol: Some(rtol),
                });
            }
        }
        Err(e) => notes.push(format!("FMPy: not measured ({e}).")),
    }
    let mut s = format!(
        "## {}\n\n{} s to {} s, output interval {} s, start values: {}; compared: {}; reference: our BDF at rtol {REFERENCE_RTOL:e}; median of {} runs.\n\n",
        fmu.file_name().map_or_else(|| fmu.display().to_string(), |f| f.to_string_lossy().into_owned()),
        start,
        stop,
        h,
        if starts.is_empty() { "the FMU's".to_owned() } else { starts.join(", ") },
        vars.join(", "),
        opts.repeat
    );
    s.push_str(
        "| tool | solver | wall time (ms) | error (max relative) | FMPy at this rtol / this |\n|---|---|---|---|---|\n",
    );
    for r in &rows {
        let peer = rows.iter().find(|p| p.tool.starts_with("FMPy") && p.rtol.is_some() && p.rtol == r.rtol);
        let ratio = match (r.tool.as_str(), peer) {
            ("cosim", Some(p)) if r.seconds > 0.0 => format!("{:.1}×", p.seconds / r.seconds),
            _ => "".into(),
        };
        s.push_str(&format!("| {} | {} | {:.3} | {} | {ratio} |\n", r.tool, r.setting, r.seconds * 1e3, sci(r.error)));
    }
    // At equal or better accuracy: for each FMPy row, our fastest row at least as accurate.
    let mut eq = String::new();
    for p in rows.iter().filter(|p| p.tool.starts_with("FMPy")) {
        let best = rows
            .iter()
            .filter(|r| r.tool == "cosim" && r.seconds.is_finite() && r.error <= p.error)
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
        match best {
            Some(r) => eq.push_str(&format!(
                "| {} ({}) | {} ({}) | {:.1}× |\n",
                p.setting,
                sci(p.error),
                r.setting,
                sci(r.error),
                p.seconds / r.seconds
            )),
            None => eq.push_str(&format!("| {} ({}) | none as accurate | - |\n", p.setting, sci(p.error))),
        }
    }
    if !eq.is_empty() {
        s.push_str("\nAt equal or better accuracy (our fastest configuration at least as accurate as FMPy's):\n\n| FMPy (error) | cosim (error) | FMPy time / cosim time |\n|---|---|---|\n");
        s.push_str(&eq);
    }
    for n in notes {
        s.push_str(&format!("\n{n}\n"));
    }
    s.push('\n');
    Ok(s)
}

/// `cosim bench --model-exchange`: the work–precision tables of `fmus_paths`.
pub fn model_exchange(paths: &[PathBuf], opts: &MeOptions) -> Result<String> {
    if paths.is_empty() {
        bail!("--model-exchange needs FMUs");
    }
    let mut fmus = FmuCache::with_host(crate::guard::host());
    let mut out = String::from("# Model Exchange: work–precision against FMPy\n\n");
    for p in paths {
        eprintln!("[bench --model-exchange] {}", p.display());
        match one(p, opts, &mut fmus) {
            Ok(s) => out.push_str(&s),
            Err(e) => out.push_str(&format!("## {}\n\nnot measured: {e:#}\n\n", p.display())),
        }
    }
    Ok(out)
}
