//! Family 7, determinism and finiteness: the whole experiment, every output after every step
//! finite, every status fmi2OK (a warning is a WARN), and a second run in a new instance
//! bit-identical to the first.

use super::probe::{Probe, Rows};
use super::Outcome;
use crate::error::MasterError;
use crate::fmu::FmuInstance;

/// How one run ended.
struct Ran {
    rows: Rows,
    warnings: u64,
    last_log: String,
    /// The FMU ended the simulation (fmi2Terminated) at this time.
    terminated: Option<f64>,
}

fn one(p: &Probe, name: &str) -> Result<Ran, String> {
    let mut s = p.instantiate(name)?;
    p.init(&mut s)?;
    let mut rows = vec![p.read(&mut s)?];
    let mut terminated = None;
    for k in 0..p.plan.steps {
        let t = p.time(k);
        p.note(format_args!("fmi2DoStep(t = {t}, h = {}) of {name}", p.plan.step));
        match s.do_step(t, p.plan.step) {
            Ok(()) => {}
            Err(MasterError::Terminated { time, .. }) => {
                terminated = Some(time);
                rows.push(p.read(&mut s)?);
                break;
            }
            Err(e) => return Err(e.to_string()),
        }
        let row = p.read(&mut s)?;
        if let Some((j, y)) = row.iter().enumerate().find(|(_, y)| !y.is_finite()) {
            let name = p.outputs.get(j).map_or("?", |v| v.name.as_str());
            return Err(format!("{name} = {y} after the step from t = {t} (to t = {})", p.time(k + 1)));
        }
        rows.push(row);
    }
    p.note(format_args!("fmi2Terminate of {name}"));
    s.terminate().map_err(|e| e.to_string())?;
    Ok(Ran { rows, warnings: s.warnings(), last_log: s.last_log(), terminated })
}

/// The experiment twice, in two instances one after the other.
pub fn run(p: &mut Probe) -> Outcome {
    let first = match one(p, "run1") {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    if let Some((j, y)) = first.rows.first().and_then(|r| r.iter().enumerate().find(|(_, y)| !y.is_finite())) {
        let name = p.outputs.get(j).map_or("?", |v| v.name.as_str());
        return Outcome::fail(format!("{name} = {y} after initialization (t = {})", p.plan.start));
    }
    let second = match one(p, "run2") {
        Ok(r) => r,
        Err(e) => return Outcome::fail(format!("second run: {e}")),
    };
    if let Some(d) = p.diff(&first.rows, &second.rows, 0) {
        return Outcome::fail(format!("not deterministic: the second run differs from the first {d}"));
    }
    let peak = first.rows.iter().flatten().fold(0.0f64, |m, y| m.max(y.abs()));
    let end = match first.terminated {
        Some(t) => format!("the FMU ended the simulation at t = {t} (fmi2Terminated)"),
        None => format!("{} steps to t = {}", p.plan.steps, p.plan.stop),
    };
    let text = format!(
        "{end}; {} outputs finite at every point (max |y| = {peak:e}); two runs bit-identical",
        p.outputs.len()
    );
    if first.warnings > 0 {
        return Outcome::warn(format!(
            "{text}; {} warnings (calls that returned fmi2Warning, or messages logged with status fmi2Warning by calls that returned fmi2OK), the last message: {}",
            first.warnings, first.last_log
        ));
    }
    Outcome::pass(text)
}
