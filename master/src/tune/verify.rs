//! Verification stage (beyond Publication III): short test signals can recommend an H that
//! diverges on a real cycle — the paper saw it for its ramp and 70 Hz tests (§4.1). The
//! recommended configuration runs the cycle (e.g. J1 of SPEC §3.6) at its H, is compared with a
//! reference run of the same configuration at a small step, and H is backed off by H_inc until
//! the run is stable and every compared variable is within the tolerance:
//! `max_t |x(t) − x_ref(t)| ≤ tol · (max x_ref − min x_ref)`.

use super::runner::Base;
use super::space::{Config, TuneSpec};
use crate::error::{MasterError, Result};
use crate::system::{InputDraft, Signal, VarRef};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A cycle for the external inputs.
#[derive(Debug, Clone)]
pub struct Cycle {
    /// Where it came from (for messages and the report).
    pub name: String,
    /// Duration (s).
    pub stop: f64,
    /// Signals on the replaced inputs.
    pub signals: Vec<Signal>,
}

/// A cycle file: `stop = T` and `[[inputs]]` tables of the system file's schema.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCycle {
    stop: f64,
    #[serde(default)]
    inputs: Vec<InputDraft>,
}

impl Cycle {
    /// `system`: the system file's own `[[inputs]]` and stop time; otherwise a TOML file with
    /// `stop = T` and `[[inputs]]` tables in the system-file format (to, times, values,
    /// interpolation).
    pub fn load(arg: &str, base: &Base) -> Result<Self> {
        let (path, raw) = if arg == "system" {
            // The system file's own `[[inputs]]` and stop time, as read.
            let p = base.path().to_path_buf();
            let stop = base.settings().stop.ok_or_else(|| MasterError::System {
                path: p.clone(),
                key: "stop".into(),
                message: "no stop time".into(),
            })?;
            (p, RawCycle { stop, inputs: base.inputs().to_vec() })
        } else {
            let p = Path::new(arg).to_path_buf();
            let text = std::fs::read_to_string(&p).map_err(|source| MasterError::Io { path: p.clone(), source })?;
            let raw = toml::from_str(&text).map_err(|e: toml::de::Error| MasterError::System {
                path: p.clone(),
                key: String::new(),
                message: e.message().to_owned(),
            })?;
            (p, raw)
        };
        let err = |key: &str, message: String| MasterError::System { path: path.clone(), key: key.into(), message };
        let mut signals = Vec::new();
        for (k, i) in raw.inputs.iter().enumerate() {
            let to = base.var(i.to())?;
            let (times, values) = (i.times(), i.values());
            if times.is_empty() || times.len() != values.len() || times.windows(2).any(|w| w[1] <= w[0]) {
                return Err(err(
                    &format!("inputs[{k}]"),
                    "times must be strictly increasing, as many as values".into(),
                ));
            }
            signals.push(Signal::new(to, times.to_vec(), values.to_vec(), i.is_linear()));
        }
        if !(raw.stop.is_finite() && raw.stop > 0.0) {
            return Err(err("stop", format!("{} must be positive", raw.stop)));
        }
        Ok(Self { name: arg.to_owned(), stop: raw.stop, signals })
    }
}

/// One verification run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    /// Communication step (s).
    #[serde(rename = "H")]
    pub h: f64,
    /// Ran to the end.
    pub stable: bool,
    /// Failure message.
    pub message: String,
    /// Largest relative error over the compared variables (error / range of the reference);
    /// infinite for a failed run (`null` in `tune.json`).
    #[serde(deserialize_with = "null_as_infinity")]
    pub error: f64,
    /// The variable with that error.
    pub worst: String,
    /// Σ|δE| over the cycle (J; `null` in `tune.json` if not finite, NaN when read back).
    #[serde(deserialize_with = "null_as_nan")]
    pub sum_abs_de: f64,
}

/// serde_json writes a non-finite f64 as `null`: the relative error of a failed run.
fn null_as_infinity<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// A non-finite Σ|δE| (written as `null`) read back as NaN.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The verification's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verified {
    /// Verified H (s), `None` if even H_ini failed.
    #[serde(rename = "H")]
    pub h: Option<f64>,
    /// Configuration label.
    pub config: String,
    /// The cycle.
    pub cycle: String,
    /// Reference step (s).
    pub reference_step: f64,
    /// What the reference is.
    pub reference: String,
    /// Relative tolerance.
    pub tolerance: f64,
    /// Compared variables.
    pub compare: Vec<String>,
    /// Every run, largest H first.
    pub attempts: Vec<Attempt>,
}

/// Traces written for plots: time and the compared variables.
pub struct Traces {
    /// Reference (t, values).
    pub reference: (f64, Vec<Vec<f64>>),
    /// The first attempt (the paper's H).
    pub first: Option<(f64, Vec<Vec<f64>>)>,
    /// The verified run.
    pub verified: Option<(f64, Vec<Vec<f64>>)>,
}

/// Where the verification's reference comes from.
pub enum Reference<'a> {
    /// The configuration under test at this step (s).
    SameConfig(f64),
    /// Another system (e.g. the unified model) run at its own step with its own inputs: the
    /// system, its step (s), its stop time (s) and the variables matching `compare`.
    System(&'a Base, f64, f64, Vec<String>),
}

/// Runs the verification for `config` starting at `h_start`.
pub fn verify(
    base: &Base,
    spec: &TuneSpec,
    config: &Config,
    h_start: f64,
    cycle: &Cycle,
    reference: &Reference<'_>,
) -> Result<(Verified, Traces)> {
    let draft = base.document(spec, config, true)?;
    let compare_names: Vec<String> = match &spec.compare {
        Some(c) => c.clone(),
        None => {
            let sys = draft.build(&base.mds())?;
            sys.outputs().iter().map(|v| sys.label(v)).collect()
        }
    };
    let compare: Vec<VarRef> = compare_names.iter().map(|n| base.var(n)).collect::<Result<_>>()?;
    let steps = |h: f64| super::signals::steps_covering(cycle.stop, h);
    let (reference_step, reference, reference_name) = match reference {
        Reference::SameConfig(h) => (
            *h,
            base.run(&draft, *h, steps(*h), &cycle.signals, None, Some(&compare))?,
            format!("same configuration at H = {} ms", h * 1e3),
        ),
        Reference::System(rb, h, stop, names) => {
            let vars: Vec<VarRef> = names.iter().map(|n| rb.var(n)).collect::<Result<_>>()?;
            let d =
                rb.document(spec, &Config { extrapolation: super::space::Extrap::Order(0), params: vec![] }, false)?;
            let n = super::signals::steps_covering(stop.min(cycle.stop), *h);
            (
                *h,
                rb.run(&d, *h, n, &[], None, Some(&vars))?,
                format!(
                    "{} at H = {} ms",
                    rb.path().file_name().map_or(rb.path().display().to_string(), |f| f.to_string_lossy().into_owned()),
                    h * 1e3
                ),
            )
        }
    };
    if let Some(f) = &reference.failure {
        return Err(MasterError::Diverged {
            time: reference.time,
            message: format!("verification reference run at H = {reference_step} s failed: {f}"),
        });
    }
    let ranges: Vec<f64> = (0..compare.len())
        .map(|j| {
            let (lo, hi) = reference
                .trace
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r[j]), hi.max(r[j])));
            (hi - lo).max(f64::MIN_POSITIVE)
        })
        .collect();
    let mut attempts = Vec::new();
    let mut traces = Traces { reference: (reference_step, reference.trace.clone()), first: None, verified: None };
    let mut verified_h = None;
    let grid: Vec<f64> = spec.steps().into_iter().filter(|h| *h <= h_start * (1.0 + 1e-9)).rev().collect();
    for h in grid {
        let o = base.run(&draft, h, steps(h), &cycle.signals, None, Some(&compare))?;
        let (mut error, mut worst) = (0.0f64, String::new());
        for (n, row) in o.trace.iter().enumerate() {
            let x_ref = interpolate(&reference.trace, reference_step, n as f64 * h);
            for j in 0..compare.len() {
                let e = (row[j] - x_ref[j]).abs() / ranges[j];
                let e = if e.is_nan() { f64::INFINITY } else { e };
                if e > error {
                    error = e;
                    worst = compare_names[j].clone();
                }
            }
        }
        let stable = o.failure.is_none();
        if traces.first.is_none() {
            traces.first = Some((h, o.trace.clone()));
        }
        attempts.push(Attempt {
            h,
            stable,
            message: o.failure.clone().unwrap_or_default(),
            error: if stable { error } else { f64::INFINITY },
            worst,
            sum_abs_de: o.e_abs,
        });
        if stable && error <= spec.tolerance {
            verified_h = Some(h);
            traces.verified = Some((h, o.trace));
            break;
        }
    }
    Ok((
        Verified {
            h: verified_h,
            config: config.label(),
            cycle: cycle.name.clone(),
            reference_step,
            reference: reference_name,
            tolerance: spec.tolerance,
            compare: compare_names,
            attempts,
        },
        traces,
    ))
}

/// Reference values at time t (linear between its communication points, held at the end).
fn interpolate(trace: &[Vec<f64>], h: f64, t: f64) -> Vec<f64> {
    let x = t / h;
    let k = (x.floor() as usize).min(trace.len().saturating_sub(1));
    let w = (x - k as f64).clamp(0.0, 1.0);
    match (trace.get(k), trace.get(k + 1)) {
        (Some(a), Some(b)) => a.iter().zip(b).map(|(a, b)| a + w * (b - a)).collect(),
        (Some(a), None) => a.clone(),
        _ => Vec::new(),
    }
}

/// Writes `time,<vars>` for a trace.
pub fn write_trace(path: &Path, names: &[String], h: f64, trace: &[Vec<f64>]) -> Result<()> {
    let sep = if names.is_empty() { "" } else { "," };
    let mut s = format!("time{sep}{}\n", crate::observer::csv_header(names.iter().map(String::as_str)));
    for (n, row) in trace.iter().enumerate() {
        s += &format!("{:e}", n as f64 * h);
        for x in row {
            s += &format!(",{x:e}");
        }
        s.push('\n');
    }
    std::fs::write(path, s).map_err(|source| MasterError::Io { path: path.to_path_buf(), source })
}
