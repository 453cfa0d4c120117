//! Family 3, calls a master may legally make: getters in initialization mode, after steps and
//! after `fmi2Terminate`; inputs set between steps and outside their declared range; varying
//! step sizes (when declared); a zero-length step.

use super::probe::{Probe, Rows};
use super::Outcome;
use crate::fmu::FmuInstance;
use model_description::{BaseType, Causality};

/// Reads every Real/Integer/Boolean/String variable of `causality`-filter `pick`.
fn read_all(
    p: &Probe,
    s: &mut crate::fmu::Instance,
    pick: impl Fn(Causality) -> bool,
    when: &str,
) -> Result<usize, String> {
    let mut n = 0;
    for ty in [
        BaseType::Real,
        BaseType::Integer,
        BaseType::Enumeration,
        BaseType::Boolean,
        BaseType::String,
        BaseType::Binary,
    ] {
        let vrs: Vec<u32> = p
            .fmu
            .variables()
            .iter()
            .filter(|v| v.kind.base_type() == ty && pick(v.causality))
            .map(|v| v.value_reference)
            .collect();
        if vrs.is_empty() {
            continue;
        }
        p.note(format_args!("fmi2Get{ty} of {} variables {when}", vrs.len()));
        let r = match ty {
            BaseType::Real => s.get_real(&vrs, &mut vec![0.0; vrs.len()]),
            BaseType::Integer | BaseType::Enumeration => s.get_int64(&vrs, &mut vec![0; vrs.len()]),
            BaseType::Boolean => s.get_boolean(&vrs, &mut vec![false; vrs.len()]),
            BaseType::String => s.get_string(&vrs).map(|_| ()),
            BaseType::Binary => s.get_binary(&vrs, &mut vec![Vec::new(); vrs.len()]),
        };
        r.map_err(|e| format!("{when}: {e}"))?;
        n += vrs.len();
    }
    Ok(n)
}

/// Getters in initialization mode (outputs), after steps and after `fmi2Terminate` (every
/// variable).
pub fn getters(p: &mut Probe) -> Outcome {
    let go = || -> Result<String, String> {
        let mut s = p.instantiate("getters")?;
        p.enter(&mut s)?;
        let init = read_all(p, &mut s, |c| c == Causality::Output, "in initialization mode")?;
        p.note("fmi2ExitInitializationMode");
        s.exit_initialization().map_err(|e| e.to_string())?;
        let steps = p.plan.short_steps.min(3);
        p.run(&mut s, 0, steps)?;
        let stepped = read_all(p, &mut s, |_| true, "after steps")?;
        p.note("fmi2Terminate");
        s.terminate().map_err(|e| e.to_string())?;
        let ended = read_all(p, &mut s, |_| true, "after fmi2Terminate")?;
        Ok(format!(
            "{init} outputs in initialization mode, {stepped} variables after {steps} steps, {ended} after fmi2Terminate"
        ))
    };
    go().map_or_else(Outcome::fail, Outcome::pass)
}

/// Inputs changed between steps (a ramp within their range): every output finite (a NaN FAILs;
/// an error status is a WARN: the model refuses, e.g. a physical limit it reports); then each
/// bounded input set outside its min/max: refused (an error status) or handled (the next step
/// works, outputs finite; NaN outputs WARN).
pub fn inputs(p: &mut Probe) -> Outcome {
    if p.inputs.is_empty() {
        return Outcome::skip("no Real inputs");
    }
    let n = p.plan.short_steps;
    let inputs = p.inputs.clone();
    let vrs: Vec<u32> = inputs.iter().map(|v| v.vr).collect();
    let mut notes = Vec::new();
    let mut warn = Vec::new();
    // Ok(Some(why)): the FMU refused the inputs with an error status (a model limit, WARN).
    let go = |notes: &mut Vec<String>| -> Result<Option<String>, String> {
        let mut s = p.instantiate("inputs")?;
        p.init(&mut s)?;
        let mut base = vec![0.0; vrs.len()];
        s.get_real(&vrs, &mut base).map_err(|e| format!("fmi2GetReal of the inputs: {e}"))?;
        let deltas: Vec<f64> = inputs.iter().zip(&base).map(|(v, u)| p.perturbation(v, *u)).collect();
        for k in 0..n {
            // A ramp to base + 10 % (of the nominal, or of max(|u|, 1)) over the run: every value
            // stays in the declared range and no step sees a jump larger than the ramp's slope.
            let f = (k + 1) as f64 / n as f64;
            let values: Vec<f64> = base.iter().zip(&deltas).map(|(u, d)| u + f * d).collect();
            p.note(format_args!("fmi2SetReal of {} inputs before the step from t = {}", vrs.len(), p.time(k)));
            s.set_real(&vrs, &values).map_err(|e| e.to_string())?;
            p.note(format_args!("fmi2DoStep(t = {}, h = {})", p.time(k), p.plan.step));
            if let Err(e) = s.do_step(p.time(k), p.plan.step) {
                return Ok(Some(format!(
                    "the step from t = {} refused inputs ramped by {:.0} % of the way to +10 %: {e}",
                    p.time(k),
                    100.0 * f
                )));
            }
            let row = p.read(&mut s)?;
            if let Some((j, y)) = row.iter().enumerate().find(|(_, y)| !y.is_finite()) {
                return Err(format!(
                    "{} = {y} at t = {} with inputs changed between steps",
                    p.outputs[j].name,
                    p.time(k + 1)
                ));
            }
        }
        notes.push(format!("{} inputs ramped by 10 % over {n} steps (set before each): outputs finite", vrs.len()));
        Ok(None)
    };
    match go(&mut notes) {
        Err(e) => return Outcome::fail(e),
        Ok(Some(why)) => warn.push(why),
        Ok(None) => {}
    }
    // Out of range, one input at a time, each in a new instance.
    for v in &inputs {
        let (min, max, _) = p.bounds(v);
        let outside = match (min, max) {
            (_, Some(hi)) => hi + hi.abs().max(1.0),
            (Some(lo), None) => lo - lo.abs().max(1.0),
            (None, None) => continue,
        };
        let r = (|| -> Result<String, String> {
            let mut s = p.instantiate("range")?;
            p.init(&mut s)?;
            p.note(format_args!("fmi2SetReal({} = {outside}) outside [{min:?}, {max:?}]", v.name));
            if let Err(e) = s.set_real(&[v.vr], &[outside]) {
                return Ok(format!("{} = {outside} refused by fmi2SetReal ({})", v.name, status_of(&e)));
            }
            p.note(format_args!("fmi2DoStep with {} = {outside}", v.name));
            if let Err(e) = s.do_step(p.time(0), p.plan.step) {
                return Ok(format!("{} = {outside} refused by fmi2DoStep ({})", v.name, status_of(&e)));
            }
            let row = p.read(&mut s)?;
            if let Some((j, y)) = row.iter().enumerate().find(|(_, y)| !y.is_finite()) {
                return Err(format!(
                    "{} = {outside} (outside its range) accepted, then {} = {y}",
                    v.name, p.outputs[j].name
                ));
            }
            Ok(format!("{} = {outside} accepted, outputs finite", v.name))
        })();
        match r {
            Ok(t) => notes.push(t),
            Err(e) => warn.push(e),
        }
    }
    if !warn.is_empty() {
        return Outcome::warn(format!("{}; {}", notes.join("; "), warn.join("; ")));
    }
    Outcome::pass(notes.join("; "))
}

/// The status of a call error, for the evidence ("fmi2Error", …).
fn status_of(e: &crate::MasterError) -> String {
    match e {
        crate::MasterError::Call { status, .. } => status.clone(),
        e => e.to_string(),
    }
}

/// Outputs at some communication points: (k, the row).
type Points = Vec<(u64, Vec<f64>)>;

/// With `canHandleVariableCommunicationStepSize`: the run with every step H split into a and
/// into b equal steps (a = 2, b = 4; for an FMU with a fixed internal step h, the two smallest
/// divisors > 1 of H/h, so that every step stays a whole number of internal steps). An FMU that
/// handles the step it is given converges: the difference H/a vs H/b is smaller than H vs H/a
/// (integration error of order p ≥ 1). PASS when H vs H/a differ by at most 5 % of each output's
/// range, or converge; WARN above 5 % when converging (accuracy at this step, not a lie); FAIL when
/// the difference above 1 % does not shrink (the FMU does not integrate over the step it is
/// given) or a smaller step is refused. Continuous Real outputs only (counters count steps by
/// design); the range is at least 1e-6 of the output's largest magnitude and 1e-6 absolute
/// (round-off of outputs that are numerically zero, e.g. a constraint residual, is no step-size
/// dependence).
pub fn variable_step(p: &mut Probe) -> Outcome {
    if !p.cs().can_handle_variable_communication_step_size {
        return Outcome::skip("canHandleVariableCommunicationStepSize = false");
    }
    let n = p.plan.short_steps;
    let h = p.plan.step;
    let (a, b) = match p.plan.fixed_step {
        None => (2, Some(4)),
        Some(hi) => {
            let k = (h / hi).round().max(1.0) as u32;
            let mut divisors = (2..=k.min(1000)).filter(|d| k.is_multiple_of(*d));
            match (divisors.next(), divisors.next()) {
                (None, _) => {
                    return Outcome::skip(format!(
                        "H = {h} is one internal step h = {hi} of the FMU: no smaller step is a whole number of them"
                    ))
                }
                (Some(a), b) => (a, b),
            }
        }
    };
    // The run with every step split into `parts` equal steps, read at the communication points.
    let split = |parts: u32| -> Result<Rows, String> {
        let mut s = p.instantiate(&format!("h/{parts}"))?;
        p.init(&mut s)?;
        let mut rows = vec![p.read(&mut s)?];
        for k in 0..n {
            let (t0, t1) = (p.time(k), p.time(k + 1));
            for i in 0..parts {
                let a = t0 + (t1 - t0) * f64::from(i) / f64::from(parts);
                let b = if i + 1 == parts { t1 } else { t0 + (t1 - t0) * f64::from(i + 1) / f64::from(parts) };
                p.note(format_args!("fmi2DoStep(t = {a}, h = {})", b - a));
                s.do_step(a, b - a).map_err(|e| format!("a step of H/{parts} = {} at t = {a}: {e}", b - a))?;
            }
            rows.push(p.read(&mut s)?);
        }
        Ok(rows)
    };
    // Steps that vary within one run, over the same span: H/a, (2a − 1)H/a, H, again and again
    // (every third step ends where the second does: 3H). The outputs are compared with the
    // constant-step run at the communication points the varying run reaches (2H, 3H, 5H, 6H, …).
    // An FMU that latches its first step size, or otherwise ignores the h it is given, drifts
    // here, though evenly split steps (H/a throughout) are consistent for it.
    let cycles = n / 3;
    let varying = |cycles: u64| -> Result<Points, String> {
        let mut s = p.instantiate("varying")?;
        p.init(&mut s)?;
        let mut rows = vec![(0, p.read(&mut s)?)];
        let fa = f64::from(a);
        for c in 0..cycles {
            let k = 3 * c;
            let (t0, t2, t3) = (p.time(k), p.time(k + 2), p.time(k + 3));
            let t1 = t0 + (t2 - t0) / (2.0 * fa);
            for (from, to, at) in [(t0, t1, None), (t1, t2, Some(k + 2)), (t2, t3, Some(k + 3))] {
                p.note(format_args!("fmi2DoStep(t = {from}, h = {}) (steps that vary)", to - from));
                s.do_step(from, to - from).map_err(|e| format!("a step of h = {} at t = {from}: {e}", to - from))?;
                if let Some(k) = at {
                    rows.push((k, p.read(&mut s)?));
                }
            }
        }
        Ok(rows)
    };
    let runs = (|| -> Result<([Rows; 3], Points), String> {
        let whole = p.fresh_run("h", n)?;
        let first = split(a)?;
        let second = match b {
            Some(b) => split(b)?,
            None => first.clone(),
        };
        let vary = if cycles > 0 { varying(cycles)? } else { Vec::new() };
        Ok(([whole, first, second], vary))
    })();
    let ([whole, halves, quarters], vary) = match runs {
        Ok(r) => r,
        Err(e) => return Outcome::fail(format!("declares canHandleVariableCommunicationStepSize but {e}")),
    };
    // Per continuous Real output: the largest difference relative to its range, H vs H/2 and
    // H/2 vs H/4; judged on the output with the largest H vs H/2.
    let mut worst = (0.0f64, 0.0f64, String::new());
    // The steps that vary against the constant ones: the largest difference and where.
    let mut worst_vary = (0.0f64, String::new());
    for j in 0..p.outputs.len() {
        let continuous = p.variable(p.outputs[j].index).is_some_and(|v| {
            v.kind.base_type() == BaseType::Real && v.variability == model_description::Variability::Continuous
        });
        if !continuous {
            continue;
        }
        let col = |r: &Rows| r.iter().map(move |row| row[j]).collect::<Vec<f64>>();
        let (ya, yb, yc) = (col(&whole), col(&halves), col(&quarters));
        let lo = ya.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ya.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let peak = ya.iter().fold(0.0f64, |m, y| m.max(y.abs()));
        let scale = (hi - lo).max(1e-6 * peak).max(1e-6);
        let dev = |x: &[f64], y: &[f64]| -> (f64, usize) {
            x.iter().zip(y).enumerate().fold((0.0, 0), |(m, at), (k, (x, y))| {
                let r = (x - y).abs() / scale;
                let r = if r.is_nan() { f64::INFINITY } else { r };
                if r > m {
                    (r, k)
                } else {
                    (m, at)
                }
            })
        };
        let ((r1, k), (r2, _)) = (dev(&ya, &yb), dev(&yb, &yc));
        for (kv, row) in &vary {
            let (x, y) = (ya[*kv as usize], row[j]);
            let r = (x - y).abs() / scale;
            let r = if r.is_nan() { f64::INFINITY } else { r };
            if r > worst_vary.0 {
                worst_vary =
                    (r, format!("{} = {x:e} (H) vs {y:e} (steps that vary) at t = {}", p.outputs[j].name, p.time(*kv)));
            }
        }
        if r1 > worst.0 {
            worst = (
                r1,
                r2,
                format!(
                    "{} = {:e} (H), {:e} (H/{a}), {:e} (H/{}) at t = {}",
                    p.outputs[j].name,
                    ya[k],
                    yb[k],
                    yc[k],
                    b.unwrap_or(a),
                    p.time(k as u64)
                ),
            );
        }
    }
    let (r1, r2, at) = worst;
    let text = format!(
        "{n} steps of H = {h}, H/{a} and H/{}: largest difference H vs H/{a} {r1:.2e} of the output's range, \
         H/{a} vs H/{} {r2:.2e} ({})",
        b.unwrap_or(a),
        b.unwrap_or(a),
        if at.is_empty() { "none" } else { &at }
    );
    let (rv, vary_at) = worst_vary;
    let text = if cycles > 0 {
        format!(
            "{text}; {} steps that vary (H/{a}, {}H/{a}, H, …) vs constant H: largest difference {rv:.2e} ({})",
            3 * cycles,
            2 * a - 1,
            if vary_at.is_empty() { "none" } else { &vary_at }
        )
    } else {
        format!("{text}; fewer than 3 steps: no run with steps that vary")
    };
    // Without a second split (H/h prime) convergence cannot be told: judged by size alone.
    let converging = b.is_none() || r2 < 0.75 * r1;
    // Steps that vary within a run must agree with constant steps about as well as evenly split
    // ones do (an integration error of a step between H/a and (2a − 1)H/a); far more means the FMU
    // does not take the step it is given.
    if rv > 0.01 && rv > 3.0 * r1.max(r2) {
        Outcome::fail(format!(
            "steps that vary within the run give another result than constant steps, though evenly split steps do \
             not (does the FMU keep its first step size?): {text}"
        ))
    } else if r1 > 0.01 && !converging {
        Outcome::fail(format!("the result depends on the step size and does not converge as it shrinks: {text}"))
    } else if r1 > 0.05 {
        Outcome::warn(format!("{text}: converging, an integration error at this step"))
    } else {
        Outcome::pass(text)
    }
}

/// `fmi2DoStep(t, 0)`: refused with an error status, or accepted leaving the outputs and the
/// continuation unchanged.
pub fn zero_step(p: &mut Probe) -> Outcome {
    let n = p.plan.short_steps.max(2);
    let k0 = n / 2;
    let go = || -> Result<Outcome, String> {
        let reference = p.fresh_run("reference", n)?;
        let mut s = p.instantiate("zero")?;
        p.init(&mut s)?;
        let mut rows = vec![p.read(&mut s)?];
        rows.extend(p.run(&mut s, 0, k0)?);
        let t = p.time(k0);
        p.note(format_args!("fmi2DoStep(t = {t}, h = 0)"));
        let raw = super::raw::do_step(&mut s, t, 0.0);
        if raw > crate::fmu::ffi::WARNING {
            return Ok(Outcome::pass(format!("refused at t = {t} with {}", crate::fmu::ffi::status_name(raw))));
        }
        let after = p.read(&mut s)?;
        if let Some(d) = p.diff(&vec![rows[rows.len() - 1].clone()], &vec![after], k0) {
            return Ok(Outcome::warn(format!("accepted at t = {t}, but the outputs changed {d}")));
        }
        rows.extend(p.run(&mut s, k0, n)?);
        if let Some(d) = p.diff(&reference, &rows, 0) {
            return Ok(Outcome::fail(format!("accepted at t = {t}, and the run continued differently {d}")));
        }
        Ok(Outcome::pass(format!("accepted at t = {t} as a no-op: outputs and the next {} steps unchanged", n - k0)))
    };
    go().unwrap_or_else(Outcome::fail)
}
