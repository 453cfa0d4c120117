//! Family 6, the declared structure against the measured one: outputs that change when an input
//! changes, without a step (direct feedthrough), must list that input in `ModelStructure/Outputs`
//! (the master orders Gauss-Seidel and re-reads outputs by it), a declared dependency that never
//! shows is a WARN; the same in initialization mode against `InitialUnknowns`; and
//! `canInterpolateInputs` must make input derivatives change the result.

use super::probe::{Probe, Var};
use super::Outcome;
use crate::fmu::FmuInstance;
use crate::fmu::Instance;
use model_description::Unknown;

/// One measured response: (input, output index in [`Probe::outputs`], input change, output before,
/// output after).
type Response = (Var, usize, f64, f64, f64);

/// Which outputs change (bitwise) when each input is perturbed, without a step.
fn responses(p: &Probe, s: &mut Instance, when: &str) -> Result<Vec<Response>, String> {
    let mut found = Vec::new();
    let y0 = p.read(s)?;
    for v in p.inputs.clone() {
        let mut u = [0.0];
        s.get_real(&[v.vr], &mut u).map_err(|e| format!("fmi2GetReal of input {}: {e}", v.name))?;
        let d = p.perturbation(&v, u[0]);
        p.note(format_args!("fmi2SetReal({} = {}) {when}", v.name, u[0] + d));
        s.set_real(&[v.vr], &[u[0] + d]).map_err(|e| e.to_string())?;
        let y1 = p.read(s)?;
        for (j, (a, b)) in y0.iter().zip(&y1).enumerate() {
            if a.to_bits() != b.to_bits() {
                found.push((v.clone(), j, d, *a, *b));
            }
        }
        p.note(format_args!("fmi2SetReal({} = {}) back", v.name, u[0]));
        s.set_real(&[v.vr], &u).map_err(|e| e.to_string())?;
    }
    Ok(found)
}

/// Compares measured responses with the declared dependencies of `unknowns`.
fn compare(p: &Probe, unknowns: &[Unknown], found: &[Response], list: &str) -> Outcome {
    let declared = |out: &Var, input: &Var| -> Option<bool> {
        let u = unknowns.iter().find(|u| u.index == out.index)?;
        Some(u.dependencies.as_ref().is_none_or(|d| d.contains(&input.index)))
    };
    let mut fail = Vec::new();
    for (input, j, d, a, b) in found {
        let out = &p.outputs[*j];
        if declared(out, input) == Some(false) {
            fail.push(format!(
                "{} changes from {a:e} to {b:e} when {} changes by {d:e} without a step, but {list} does not list {} among its dependencies",
                out.name, input.name, input.name
            ));
        }
    }
    if !fail.is_empty() {
        return Outcome::fail(super::statics::some(&fail, 3));
    }
    // Declared explicitly but not seen.
    let mut silent = Vec::new();
    let mut listed = 0;
    for out in &p.outputs {
        let Some(u) = unknowns.iter().find(|u| u.index == out.index) else { continue };
        let Some(deps) = &u.dependencies else { continue };
        for input in &p.inputs {
            if deps.contains(&input.index) {
                listed += 1;
                if !found.iter().any(|(i, j, ..)| i.index == input.index && p.outputs[*j].index == out.index) {
                    silent.push(format!("{} on {}", out.name, input.name));
                }
            }
        }
    }
    let text = format!(
        "{} output/input responses measured, {listed} declared in {list}, all measured ones declared",
        found.len()
    );
    if silent.is_empty() {
        Outcome::pass(text)
    } else {
        Outcome::warn(format!(
            "{text}; declared but no response to a 10 % change: {}",
            super::statics::some(&silent, 4)
        ))
    }
}

/// Direct feedthrough after two steps against `ModelStructure/Outputs`.
pub fn feedthrough(p: &mut Probe) -> Outcome {
    if p.inputs.is_empty() {
        return Outcome::skip("no Real inputs");
    }
    let go = || -> Result<Outcome, String> {
        let mut s = p.instantiate("feedthrough")?;
        p.init(&mut s)?;
        let k = p.plan.short_steps.min(2);
        p.run(&mut s, 0, k)?;
        let found = responses(p, &mut s, &format!("at t = {} (no step)", p.time(k)))?;
        Ok(compare(p, &p.fmu.model_description().model_structure.outputs, &found, "ModelStructure/Outputs"))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// Responses in initialization mode against `ModelStructure/InitialUnknowns`.
pub fn initial_unknowns(p: &mut Probe) -> Outcome {
    if p.inputs.is_empty() {
        return Outcome::skip("no Real inputs");
    }
    let unknowns = &p.fmu.model_description().model_structure.initial_unknowns;
    if unknowns.is_empty() {
        return Outcome::skip("no InitialUnknowns declared");
    }
    let go = || -> Result<Outcome, String> {
        let mut s = p.instantiate("initial")?;
        p.enter(&mut s)?;
        let found = responses(p, &mut s, "in initialization mode")?;
        Ok(compare(p, unknowns, &found, "ModelStructure/InitialUnknowns"))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// With `canInterpolateInputs`: a step with the first derivative of one input set differs from
/// the step with the input held (input by input: equal slopes on two inputs may cancel, e.g. the
/// two pressures of a double-rod cylinder).
pub fn interpolate(p: &mut Probe) -> Outcome {
    if p.fmi3() {
        return Outcome::skip("FMI 3.0 has no input derivatives (no fmi3SetInputDerivatives)");
    }
    if !p.cs().can_interpolate_inputs {
        return Outcome::skip("canInterpolateInputs = false");
    }
    if p.inputs.is_empty() {
        return Outcome::skip("no Real inputs");
    }
    let k = p.plan.short_steps.min(2);
    // `which`: the input given a slope (None: all held).
    let one = |which: Option<&Var>| -> Result<Vec<f64>, String> {
        let mut s = p.instantiate(if which.is_some() { "derivative" } else { "held" })?;
        p.init(&mut s)?;
        p.run(&mut s, 0, k)?;
        if let Some(v) = which {
            let mut u = [0.0];
            s.get_real(&[v.vr], &mut u).map_err(|e| e.to_string())?;
            let slope = p.perturbation(v, u[0]) / p.plan.step;
            p.note(format_args!("fmi2SetRealInputDerivatives({}, order 1, {slope})", v.name));
            s.set_input_derivatives(&[v.vr], 1, &[slope]).map_err(|e| e.to_string())?;
        }
        p.step(&mut s, k)?;
        p.read(&mut s)
    };
    let held = match one(None) {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    let mut effective = Vec::new();
    for v in &p.inputs {
        let with = match one(Some(v)) {
            Ok(r) => r,
            Err(e) => return Outcome::fail(e),
        };
        if let Some((j, (x, y))) = held.iter().zip(&with).enumerate().find(|(_, (x, y))| x.to_bits() != y.to_bits()) {
            effective.push(format!("{}: {} {x:e} → {y:e}", v.name, p.outputs[j].name));
        }
    }
    if effective.is_empty() {
        Outcome::warn(format!(
            "declares canInterpolateInputs, but a first derivative on any of the {} inputs changes no output after the step from t = {}",
            p.inputs.len(),
            p.time(k)
        ))
    } else {
        Outcome::pass(format!(
            "the derivatives of {} of {} inputs change the outputs over the step from t = {} ({})",
            effective.len(),
            p.inputs.len(),
            p.time(k),
            super::statics::some(&effective, 2)
        ))
    }
}
