//! Family 9, Model Exchange (FMI 2.0 §3): the FMU loaded for Model Exchange from the worker's
//! extraction, initialized as `cosim run --interface me` initializes it (the initialization event
//! iteration, then Continuous-Time Mode), and evaluated at points of the checks' choosing.
//!
//! - [`derivatives`]: the state vector is the state variables the description declares, the
//!   derivative vector equals the derivative variables (`fmi2GetReal` of `der(x)`), states set
//!   are states got, the derivatives are a function of (t, x, u) (the same point twice gives the
//!   same bits, whatever was evaluated in between), and a derivative that changes when a state or
//!   an input is perturbed lists it in `ModelStructure/Derivatives`;
//! - [`events`]: the experiment integrated by cosim's integrator; event indicators finite; between
//!   two communication points without an event and without an indicator changing sign the
//!   derivatives have no jump (bisection of the segment between the two points: a jump that
//!   persists down to 2⁻⁴⁰ of the step is a discontinuity no event indicator signals);
//! - [`completed_step`]: a fixed-step RK4 (H/4) calling `fmi2CompletedIntegratorStep` after every
//!   step; with `completedIntegratorStepNotNeeded` the same without the calls, bit-identical;
//! - [`directional`]: with `providesDirectionalDerivative(s)`, `fmi2GetDirectionalDerivative`
//!   (`fmi3GetDirectionalDerivative`) of the
//!   derivatives and Real outputs with respect to each state and Real input against central
//!   finite differences;
//! - [`state`]: with `canGetAndSetFMUstate` (`canSerializeFMUstate`) in `<ModelExchange>`, the
//!   `state` (`serialize`) checks through the Model Exchange instance.
//!
//! FMI 3.0 Model Exchange goes through the same [`ModelExchange`] trait (`fmi3*` calls).

use super::probe::{Probe, Rows};
use super::{raw, Outcome};
use crate::fmu::me::{ModelExchange, Vector};
use crate::fmu::{ffi, Fmu, FmuInstance, Instance, Interface};
use model_description::VariableKind;
use std::sync::Arc;

/// The `<ModelExchange>` capability flags the checks use (read from the XML: the description
/// model keeps only the modelIdentifier of this element).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MeFlags {
    /// `completedIntegratorStepNotNeeded`.
    pub completed_integrator_step_not_needed: bool,
    /// `providesDirectionalDerivative`.
    pub provides_directional_derivative: bool,
    /// `canGetAndSetFMUstate`.
    pub can_get_and_set_fmu_state: bool,
    /// `canSerializeFMUstate`.
    pub can_serialize_fmu_state: bool,
}

/// The boolean attribute `name` of the first `<ModelExchange` tag of `xml`.
fn attribute(xml: &str, name: &str) -> bool {
    let Some(start) = xml.find("<ModelExchange") else { return false };
    let tag = &xml[start..];
    let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
    let mut rest = tag;
    while let Some(i) = rest.find(name) {
        let before = &rest[..i];
        let after = &rest[i + name.len()..];
        rest = after;
        if !before.ends_with(char::is_whitespace) {
            continue;
        }
        let Some(value) = after.trim_start().strip_prefix('=') else { continue };
        let value = value.trim_start().trim_start_matches(['"', '\'']);
        return value.starts_with("true") || value.starts_with('1');
    }
    false
}

/// The flags of the `<ModelExchange>` element of `xml` (FMI 3.0 spells them
/// `providesDirectionalDerivatives`, `canGetAndSetFMUState`, `canSerializeFMUState` and has
/// `needsCompletedIntegratorStep`, default false, for FMI 2.0's `completedIntegratorStepNotNeeded`).
pub fn flags(xml: &str, fmi3: bool) -> MeFlags {
    let either = |a: &str, b: &str| attribute(xml, a) || attribute(xml, b);
    MeFlags {
        completed_integrator_step_not_needed: if fmi3 {
            !attribute(xml, "needsCompletedIntegratorStep")
        } else {
            attribute(xml, "completedIntegratorStepNotNeeded")
        },
        provides_directional_derivative: either("providesDirectionalDerivative", "providesDirectionalDerivatives"),
        can_get_and_set_fmu_state: either("canGetAndSetFMUstate", "canGetAndSetFMUState"),
        can_serialize_fmu_state: either("canSerializeFMUstate", "canSerializeFMUState"),
    }
}

/// A probe of the FMU loaded for Model Exchange and its flags, or the SKIP (no
/// `<ModelExchange>`, FMI 3.0) or FAIL (it does not load) of the check.
fn me_probe(p: &Probe) -> Result<(Probe, MeFlags), Outcome> {
    if p.fmu.model_description().model_exchange.is_none() {
        return Err(Outcome::skip("no <ModelExchange> interface"));
    }
    let xml = std::fs::read_to_string(p.fmu.extracted_dir().join("modelDescription.xml")).unwrap_or_default();
    let fmu = if p.fmu.interface() == Interface::ModelExchange {
        Arc::clone(&p.fmu)
    } else {
        p.note("loading the binary for Model Exchange (the fmi2 Model Exchange functions)");
        let log: Arc<dyn crate::host::FmuLog> = Arc::new(crate::host::StderrLog::default());
        Fmu::load_extracted_as(p.fmu.path(), p.fmu.extracted_dir(), Some(log), Some(Interface::ModelExchange), None)
            .map_err(|e| Outcome::fail(format!("cannot be loaded for Model Exchange: {e}")))?
    };
    Ok((p.with_fmu(fmu), flags(&xml, p.fmi3())))
}

/// The FMU instance inside a Model Exchange instance.
fn me(s: &mut Instance) -> Result<&mut dyn ModelExchange, String> {
    match s {
        Instance::Me2(m) => Ok(m.inner_mut()),
        Instance::Me3(m) => Ok(m.inner_mut()),
        _ => Err("not a Model Exchange instance".into()),
    }
}

fn text(e: crate::error::MasterError) -> String {
    e.to_string()
}

/// The continuous states as the description declares them, in `ModelStructure/Derivatives`
/// order: the derivative variable and the state variable (`derivative="…"`) of each.
struct Layout {
    der_vr: Vec<u32>,
    der_name: Vec<String>,
    /// The state's value reference and 1-based index (`None`: no `derivative` attribute).
    state: Vec<Option<(u32, u32)>>,
    state_name: Vec<String>,
}

fn layout(p: &Probe) -> Layout {
    let md = p.fmu.model_description();
    let mut l = Layout { der_vr: Vec::new(), der_name: Vec::new(), state: Vec::new(), state_name: Vec::new() };
    for u in &md.model_structure.derivatives {
        let der = md.variable_by_index(u.index);
        l.der_vr.push(der.map_or(u32::MAX, |v| v.value_reference));
        l.der_name.push(der.map_or_else(|| format!("derivative {}", u.index), |v| v.name.clone()));
        let of = der.and_then(|v| match &v.kind {
            VariableKind::Real { derivative: Some(i), .. } => md.variable_by_index(*i).map(|s| (s, *i)),
            _ => None,
        });
        l.state.push(of.map(|(s, i)| (s.value_reference, i)));
        l.state_name.push(of.map_or_else(|| "?".into(), |(s, _)| s.name.clone()));
    }
    l
}

/// `a` and `b` agree to round-off: within 1e-9 of the larger, or of `scale` × 1e-12.
fn close(a: f64, b: f64, scale: f64) -> bool {
    a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12 * scale
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// A perturbation of state `x` with nominal `nominal`: 1e-3 of the larger.
fn bump(x: f64, nominal: f64) -> f64 {
    1e-3 * x.abs().max(nominal.abs()).max(1e-6)
}

/// An initialized Model Exchange instance (Continuous-Time Mode after the initialization event)
/// with its number of states and event indicators.
fn start(q: &Probe, name: &str) -> Result<(Instance, usize, usize), String> {
    let mut s = q.instantiate(name)?;
    q.init(&mut s)?;
    let (nx, nz) = me(&mut s)?.sizes().map_err(text)?;
    Ok((s, nx, nz))
}

/// A vector of `n` values.
fn vector(q: &Probe, f: &mut dyn ModelExchange, which: Vector, n: usize) -> Result<Vec<f64>, String> {
    let mut v = vec![0.0; n];
    if n > 0 {
        q.note(format_args!("{which:?}: fmi2Get{}", vector_name(which)));
        f.vector(which, &mut v).map_err(text)?;
    }
    Ok(v)
}

fn vector_name(which: Vector) -> &'static str {
    match which {
        Vector::States => "ContinuousStates",
        Vector::Derivatives => "Derivatives",
        Vector::EventIndicators => "EventIndicators",
        Vector::Nominals => "NominalsOfContinuousStates",
    }
}

/// The derivatives at (t, x): `fmi2SetTime`, `fmi2SetContinuousStates`, `fmi2GetDerivatives`.
fn derivatives_at(q: &Probe, f: &mut dyn ModelExchange, t: f64, x: &[f64]) -> Result<Vec<f64>, String> {
    f.set_time(t).map_err(text)?;
    f.set_states(x).map_err(text)?;
    vector(q, f, Vector::Derivatives, x.len())
}

/// States and derivatives against their declaration; derivatives a function of (t, x, u);
/// measured dependencies against `ModelStructure/Derivatives`.
pub fn derivatives(p: &mut Probe) -> Outcome {
    let (q, _) = match me_probe(p) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let go = || -> Result<Outcome, String> {
        let (mut s, nx, _) = start(&q, "derivatives")?;
        if nx == 0 {
            return Ok(Outcome::skip("no continuous states (ModelStructure/Derivatives is empty)"));
        }
        let l = layout(&q);
        let md = q.fmu.model_description();
        let t0 = q.plan.start;
        let f = me(&mut s)?;
        let x0 = vector(&q, f, Vector::States, nx)?;
        let f0 = vector(&q, f, Vector::Derivatives, nx)?;
        let nominal = vector(&q, f, Vector::Nominals, nx)?;
        let mut problems = Vec::new();
        // The state vector is the declared state variables.
        let declared: Vec<(usize, u32)> =
            l.state.iter().enumerate().filter_map(|(i, s)| s.map(|(vr, _)| (i, vr))).collect();
        let mut xs = vec![0.0; declared.len()];
        let vrs: Vec<u32> = declared.iter().map(|(_, vr)| *vr).collect();
        q.note("fmi2GetReal of the state variables");
        f.get_real(&vrs, &mut xs).map_err(text)?;
        for ((i, _), v) in declared.iter().zip(&xs) {
            if !close(x0[*i], *v, max_abs(&x0)) {
                problems.push(format!(
                    "fmi2GetContinuousStates()[{i}] = {:e} but {} = {v:e} (fmi2GetReal): the state vector is not the state variables ModelStructure/Derivatives declares",
                    x0[*i], l.state_name[*i]
                ));
            }
        }
        // The derivative vector is the derivative variables.
        let mut ds = vec![0.0; nx];
        q.note("fmi2GetReal of the derivative variables");
        f.get_real(&l.der_vr, &mut ds).map_err(text)?;
        for (i, v) in ds.iter().enumerate() {
            if !close(f0[i], *v, max_abs(&f0)) {
                problems.push(format!(
                    "fmi2GetDerivatives()[{i}] = {:e} but {} = {v:e} (fmi2GetReal) at t = {t0}: the integrated derivative is not the declared one",
                    f0[i], l.der_name[i]
                ));
            }
        }
        // States set are states got; the derivatives are a function of the point.
        let x1: Vec<f64> = x0.iter().zip(&nominal).map(|(x, n)| x + bump(*x, *n)).collect();
        f.set_states(&x1).map_err(text)?;
        let back = vector(&q, f, Vector::States, nx)?;
        if let Some(i) = (0..nx).find(|i| back[*i].to_bits() != x1[*i].to_bits()) {
            problems.push(format!(
                "fmi2SetContinuousStates({} = {:e}) then fmi2GetContinuousStates gives {:e}",
                l.state_name[i], x1[i], back[i]
            ));
        }
        let _ = vector(&q, f, Vector::Derivatives, nx)?;
        let again = derivatives_at(&q, f, t0, &x0)?;
        if let Some(i) = (0..nx).find(|i| again[*i].to_bits() != f0[*i].to_bits()) {
            problems.push(format!(
                "{} at the same (t, x) is {:e}, then {:e} after an evaluation at another x: the derivatives depend on the evaluation history, not only on (t, x, u)",
                l.der_name[i], f0[i], again[i]
            ));
        }
        // Measured dependencies on the states and the Real inputs.
        let mut measured = 0;
        let deps = &md.model_structure.derivatives;
        let mut undeclared = |i: usize, known: u32, what: &str, a: f64, b: f64, problems: &mut Vec<String>| {
            measured += 1;
            let listed = deps.get(i).and_then(|u| u.dependencies.as_ref()).is_none_or(|d| d.contains(&known));
            if !listed {
                problems.push(format!(
                    "{} changes from {a:e} to {b:e} when {what} changes, but ModelStructure/Derivatives does not list it among its dependencies",
                    l.der_name[i]
                ));
            }
        };
        for j in 0..nx {
            let mut x = x0.clone();
            x[j] += bump(x0[j], nominal[j]);
            let fj = derivatives_at(&q, f, t0, &x)?;
            let Some((_, known)) = l.state[j] else { continue };
            for i in 0..nx {
                if fj[i].to_bits() != f0[i].to_bits() {
                    undeclared(i, known, &l.state_name[j], f0[i], fj[i], &mut problems);
                }
            }
        }
        f.set_states(&x0).map_err(text)?;
        for v in q.inputs.clone() {
            let mut u = [0.0];
            f.get_real(&[v.vr], &mut u).map_err(text)?;
            let d = q.perturbation(&v, u[0]);
            q.note(format_args!("fmi2SetReal({} = {})", v.name, u[0] + d));
            f.set_real(&[v.vr], &[u[0] + d]).map_err(text)?;
            let fu = vector(&q, f, Vector::Derivatives, nx)?;
            f.set_real(&[v.vr], &u).map_err(text)?;
            for i in 0..nx {
                if fu[i].to_bits() != f0[i].to_bits() {
                    undeclared(i, v.index, &v.name, f0[i], fu[i], &mut problems);
                }
            }
        }
        if !problems.is_empty() {
            return Ok(Outcome::fail(super::statics::some(&problems, 3)));
        }
        q.note("fmi2Terminate");
        let _ = s.terminate();
        Ok(Outcome::pass(format!(
            "{nx} states at t = {t0}: the state vector is the declared state variables and the derivatives the declared derivative variables; states set are states got; the same (t, x) gives bit-identical derivatives after another point; {measured} state/input dependencies measured, all declared"
        )))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// A point of the trajectory: time, states, derivatives, event indicators.
struct Point {
    t: f64,
    x: Vec<f64>,
    der: Vec<f64>,
    z: Vec<f64>,
}

fn point(q: &Probe, f: &mut dyn ModelExchange, t: f64, nx: usize, nz: usize) -> Result<Point, String> {
    Ok(Point {
        t,
        x: vector(q, f, Vector::States, nx)?,
        der: vector(q, f, Vector::Derivatives, nx)?,
        z: vector(q, f, Vector::EventIndicators, nz)?,
    })
}

/// The largest change from `a` to `b` relative to `scale`, and its component.
fn change(a: &[f64], b: &[f64], scale: &[f64]) -> (f64, usize) {
    let mut worst = (0.0, 0);
    for (i, ((x, y), s)) in a.iter().zip(b).zip(scale).enumerate() {
        let d = (x - y).abs() / s;
        if d > worst.0 || d.is_nan() {
            worst = (if d.is_nan() { f64::INFINITY } else { d }, i);
        }
    }
    worst
}

/// A jump of the derivatives on the segment from `a` to `b` (time and states linear in between):
/// the half with the larger change is kept 40 times; a change that does not shrink from 2⁻²⁰ to
/// 2⁻⁴⁰ of the step (a continuous function's shrinks a million times) and exceeds 1e-6 of the
/// derivative's scale is a jump: (time, component, value before, value after).
fn jump(q: &Probe, f: &mut dyn ModelExchange, a: &Point, b: &Point) -> Result<Option<(f64, usize, f64, f64)>, String> {
    let big = max_abs(&a.der).max(max_abs(&b.der));
    let scale: Vec<f64> =
        a.der.iter().zip(&b.der).map(|(x, y)| x.abs().max(y.abs()).max(1e-6 * big).max(f64::MIN_POSITIVE)).collect();
    let at = |s: f64| -> (f64, Vec<f64>) {
        (a.t + s * (b.t - a.t), a.x.iter().zip(&b.x).map(|(x, y)| x + s * (y - x)).collect())
    };
    let eval = |f: &mut dyn ModelExchange, s: f64| -> Result<Vec<f64>, String> {
        let (t, x) = at(s);
        derivatives_at(q, f, t, &x)
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    let (mut glo, mut ghi) = (eval(f, 0.0)?, eval(f, 1.0)?);
    if change(&glo, &ghi, &scale).0 <= 1e-6 {
        return Ok(None);
    }
    let mut d20 = 0.0;
    for k in 1..=40 {
        let mid = 0.5 * (lo + hi);
        let gm = eval(f, mid)?;
        if change(&glo, &gm, &scale).0 >= change(&gm, &ghi, &scale).0 {
            (hi, ghi) = (mid, gm);
        } else {
            (lo, glo) = (mid, gm);
        }
        if k == 20 {
            d20 = change(&glo, &ghi, &scale).0;
        }
    }
    let (d40, i) = change(&glo, &ghi, &scale);
    Ok((d40 > 1e-6 && d40 > 0.5 * d20).then(|| (at(lo).0, i, glo[i], ghi[i])))
}

/// The number of steps of the event check: the experiment, at most this many.
const EVENT_STEPS: u64 = 500;

/// The experiment integrated by cosim: indicators finite, no jump of the derivatives between
/// events that no indicator signals.
pub fn events(p: &mut Probe) -> Outcome {
    let (q, _) = match me_probe(p) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let go = || -> Result<Outcome, String> {
        let (mut s, nx, nz) = start(&q, "events")?;
        let n = q.plan.steps.min(EVENT_STEPS);
        let stats = |s: &Instance| match s {
            Instance::Me2(m) => m.stats(),
            Instance::Me3(m) => m.stats(),
            _ => Default::default(),
        };
        let mut prev = point(&q, me(&mut s)?, q.plan.start, nx, nz)?;
        let mut checked = 0;
        for k in 0..n {
            let before = stats(&s).events;
            q.step(&mut s, k)?;
            let t = q.time(k + 1);
            let during = stats(&s).events - before;
            let f = me(&mut s)?;
            let cur = point(&q, f, t, nx, nz)?;
            if let Some(i) = cur.z.iter().position(|z| !z.is_finite()) {
                return Ok(Outcome::fail(format!("event indicator {i} = {} at t = {t}", cur.z[i])));
            }
            if let Some(i) = cur.der.iter().position(|d| !d.is_finite()) {
                return Ok(Outcome::fail(format!("fmi2GetDerivatives()[{i}] = {} at t = {t}", cur.der[i])));
            }
            let crossed = prev.z.iter().zip(&cur.z).any(|(a, b)| (*a > 0.0) != (*b > 0.0) || *a == 0.0 || *b == 0.0);
            if during == 0 && !crossed && nx > 0 {
                checked += 1;
                if let Some((tj, i, a, b)) = jump(&q, f, &prev, &cur)? {
                    let name = layout(&q).der_name.get(i).cloned().unwrap_or_default();
                    return Ok(Outcome::fail(format!(
                        "{name} jumps from {a:e} to {b:e} at t ≈ {tj:.9} (on the chord between the points of the integration at t = {} and {t}) in Continuous-Time Mode while no event indicator changes sign ({nz} indicators): an importer's integrator steps across a discontinuity the FMU does not signal",
                        prev.t
                    )));
                }
                // Back to the point the integration reached.
                f.set_time(t).map_err(text)?;
                f.set_states(&cur.x).map_err(text)?;
            }
            prev = cur;
        }
        let st = stats(&s);
        q.note("fmi2Terminate");
        let _ = s.terminate();
        let indicators = if nz == 0 {
            "no event indicators".to_owned()
        } else {
            format!("{nz} event indicators finite at every communication point")
        };
        let jumps = if nx == 0 {
            "no continuous states".to_owned()
        } else {
            format!("no jump of the derivatives in the {checked} of {n} intervals without an event or an indicator changing sign")
        };
        Ok(Outcome::pass(format!(
            "{n} steps to t = {}: {} state, {} time and {} step events; {indicators}; {jumps}",
            q.time(n),
            st.state_events,
            st.time_events,
            st.step_events
        )))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// Event Mode, the event iteration, Continuous-Time Mode; whether the FMU asked to terminate.
fn event_iteration(q: &Probe, f: &mut dyn ModelExchange) -> Result<bool, String> {
    q.note("fmi2EnterEventMode");
    f.enter_event_mode().map_err(text)?;
    for _ in 0..1000 {
        q.note("fmi2NewDiscreteStates");
        let info = f.update_discrete_states().map_err(text)?;
        if info.terminate_simulation {
            return Ok(true);
        }
        if !info.new_discrete_states_needed {
            q.note("fmi2EnterContinuousTimeMode");
            f.enter_continuous_time_mode().map_err(text)?;
            return Ok(false);
        }
    }
    Err("the event iteration did not end in 1000 rounds of fmi2NewDiscreteStates".into())
}

/// Sub-steps of the fixed-step RK4 per communication step.
const SUB: u64 = 4;

/// The short run with a fixed-step RK4 (H/4) of our own, state events at the end of the step in
/// which an indicator changes sign, `fmi2CompletedIntegratorStep` after every step when `call`:
/// the outputs at the communication points, the calls made and how often they asked for Event Mode.
fn drive(q: &Probe, s: &mut Instance, nx: usize, nz: usize, call: bool) -> Result<(Rows, u64, u64), String> {
    let n = q.plan.short_steps.max(1);
    let h = q.plan.step / SUB as f64;
    let mut rows = vec![q.read(s)?];
    let (mut calls, mut asked) = (0, 0);
    let f = me(s)?;
    let mut x = vector(q, f, Vector::States, nx)?;
    let mut z = vector(q, f, Vector::EventIndicators, nz)?;
    for k in 0..n {
        let f = me(s)?;
        for i in 0..SUB {
            let t = q.plan.start + (k * SUB + i) as f64 * h;
            if nx > 0 {
                let k1 = derivatives_at(q, f, t, &x)?;
                let x2: Vec<f64> = x.iter().zip(&k1).map(|(x, d)| x + 0.5 * h * d).collect();
                let k2 = derivatives_at(q, f, t + 0.5 * h, &x2)?;
                let x3: Vec<f64> = x.iter().zip(&k2).map(|(x, d)| x + 0.5 * h * d).collect();
                let k3 = derivatives_at(q, f, t + 0.5 * h, &x3)?;
                let x4: Vec<f64> = x.iter().zip(&k3).map(|(x, d)| x + h * d).collect();
                let k4 = derivatives_at(q, f, t + h, &x4)?;
                for j in 0..nx {
                    x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
                }
            }
            let t1 = q.plan.start + (k * SUB + i + 1) as f64 * h;
            f.set_time(t1).map_err(text)?;
            if nx > 0 {
                f.set_states(&x).map_err(text)?;
            }
            let mut event = false;
            if call {
                q.note(format_args!("fmi2CompletedIntegratorStep at t = {t1}"));
                let (enter, terminate) = f.completed_integrator_step().map_err(text)?;
                calls += 1;
                if terminate {
                    return Ok((rows, calls, asked));
                }
                asked += u64::from(enter);
                event = enter;
            }
            let z1 = vector(q, f, Vector::EventIndicators, nz)?;
            event |= z.iter().zip(&z1).any(|(a, b)| (*a > 0.0) != (*b > 0.0));
            if event {
                if event_iteration(q, f)? {
                    return Ok((rows, calls, asked));
                }
                x = vector(q, f, Vector::States, nx)?;
                z = vector(q, f, Vector::EventIndicators, nz)?;
            } else {
                z = z1;
            }
        }
        rows.push(q.read(s)?);
    }
    Ok((rows, calls, asked))
}

/// `fmi2CompletedIntegratorStep` after every step of a fixed-step integration answers OK; with
/// `completedIntegratorStepNotNeeded` it never asks for Event Mode and leaving it out changes
/// nothing, bit for bit.
pub fn completed_step(p: &mut Probe) -> Outcome {
    let (q, flags) = match me_probe(p) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let go = || -> Result<Outcome, String> {
        let (mut a, nx, nz) = start(&q, "with-calls")?;
        let (with, calls, asked) = drive(&q, &mut a, nx, nz, true)?;
        let _ = a.terminate();
        drop(a);
        let how = format!(
            "{} communication steps of a fixed-step RK4 (H/{SUB}): fmi2CompletedIntegratorStep answered fmi2OK {calls} times, asking for Event Mode {asked} times",
            with.len() - 1
        );
        let not_needed =
            if q.fmi3() { "needsCompletedIntegratorStep = false" } else { "completedIntegratorStepNotNeeded = true" };
        if !flags.completed_integrator_step_not_needed {
            return Ok(Outcome::pass(format!("{how} (handled)")));
        }
        if asked > 0 {
            return Ok(Outcome::fail(format!(
                "{how}, but <ModelExchange> declares {not_needed}: an importer that does not call it misses these events"
            )));
        }
        let (mut b, nx, nz) = start(&q, "without-calls")?;
        let (without, ..) = drive(&q, &mut b, nx, nz, false)?;
        let _ = b.terminate();
        if let Some(d) = q.diff(&with, &without, 0) {
            return Ok(Outcome::fail(format!("{how}; without the calls ({not_needed}) the outputs differ {d}")));
        }
        Ok(Outcome::pass(format!(
            "{how}; without the calls ({not_needed}) bit-identical ({} values)",
            Probe::count(&with)
        )))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// The relative difference above which a directional derivative FAILs (WARN above 1e-3).
const DIRECTIONAL_FAIL: f64 = 0.1;

/// With `providesDirectionalDerivative`: `fmi2GetDirectionalDerivative` against central finite
/// differences, column by column (each state and Real input), at the initialized point.
pub fn directional(p: &mut Probe) -> Outcome {
    let (q, flags) = match me_probe(p) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if !flags.provides_directional_derivative {
        return Outcome::skip("providesDirectionalDerivative = false in <ModelExchange>");
    }
    let function = if q.fmi3() { "fmi3GetDirectionalDerivative" } else { "fmi2GetDirectionalDerivative" };
    let go = || -> Result<Outcome, String> {
        let (mut s, nx, _) = start(&q, "directional")?;
        let l = layout(&q);
        let t0 = q.plan.start;
        let outputs: Vec<(u32, String)> = q
            .outputs
            .iter()
            .filter(|v| v.ty == model_description::BaseType::Real)
            .map(|v| (v.vr, v.name.clone()))
            .collect();
        let unknowns: Vec<u32> = l.der_vr.iter().copied().chain(outputs.iter().map(|o| o.0)).collect();
        let names: Vec<String> = l.der_name.iter().cloned().chain(outputs.iter().map(|o| o.1.clone())).collect();
        let f = me(&mut s)?;
        let x0 = vector(&q, f, Vector::States, nx)?;
        let nominal = vector(&q, f, Vector::Nominals, nx)?;
        // The unknowns at (t0, x, u): derivatives, then Real outputs.
        let read = |f: &mut dyn ModelExchange, x: &[f64]| -> Result<Vec<f64>, String> {
            let mut v = derivatives_at(&q, f, t0, x)?;
            let mut y = vec![0.0; outputs.len()];
            let vrs: Vec<u32> = outputs.iter().map(|o| o.0).collect();
            f.get_real(&vrs, &mut y).map_err(text)?;
            v.extend(y);
            Ok(v)
        };
        // Knowns: (value reference, name, value, whether a state (its index) or an input).
        let mut knowns: Vec<(u32, String, f64, Option<usize>)> = Vec::new();
        for (j, st) in l.state.iter().enumerate() {
            if let Some((vr, _)) = st {
                knowns.push((*vr, l.state_name[j].clone(), x0[j], Some(j)));
            }
        }
        for v in &q.inputs {
            let mut u = [0.0];
            f.get_real(&[v.vr], &mut u).map_err(text)?;
            knowns.push((v.vr, v.name.clone(), u[0], None));
        }
        let (mut worst, mut at) = (0.0f64, String::new());
        for (vr, name, value, state) in &knowns {
            let f = me(&mut s)?;
            let delta = 1e-6 * value.abs().max(state.map_or(1.0, |j| nominal[j].abs())).max(1e-6);
            let mut plus = x0.clone();
            let mut minus = x0.clone();
            let (yp, ym) = match state {
                Some(j) => {
                    plus[*j] += delta;
                    minus[*j] -= delta;
                    (read(f, &plus)?, read(f, &minus)?)
                }
                None => {
                    f.set_real(&[*vr], &[value + delta]).map_err(text)?;
                    let yp = read(f, &x0)?;
                    f.set_real(&[*vr], &[value - delta]).map_err(text)?;
                    let ym = read(f, &x0)?;
                    f.set_real(&[*vr], &[*value]).map_err(text)?;
                    (yp, ym)
                }
            };
            f.set_states(&x0).map_err(text)?;
            let fd: Vec<f64> = yp.iter().zip(&ym).map(|(a, b)| (a - b) / (2.0 * delta)).collect();
            let mut dd = vec![0.0; unknowns.len()];
            q.note(format_args!("{function} with respect to {name}"));
            let st = raw::directional_derivative(&mut s, &unknowns, &[*vr], &[1.0], &mut dd);
            if st > ffi::WARNING {
                return Ok(Outcome::fail(format!(
                    "{function} with respect to {name} returned {} although <ModelExchange> declares providesDirectionalDerivative",
                    ffi::status_name(st)
                )));
            }
            let column = max_abs(&fd).max(max_abs(&dd));
            for (i, (a, b)) in dd.iter().zip(&fd).enumerate() {
                let scale = a.abs().max(b.abs()).max(1e-6 * column).max(f64::MIN_POSITIVE);
                let e = if a.is_finite() { (a - b).abs() / scale } else { f64::INFINITY };
                if e > worst {
                    worst = e;
                    at = format!("∂{}/∂{name} = {a:e}, finite differences {b:e}", names[i]);
                }
            }
        }
        let _ = s.terminate();
        let text = format!(
            "{} unknowns (derivatives, Real outputs) × {} knowns (states, Real inputs) at t = {t0}: largest relative difference from central finite differences {worst:.1e}",
            unknowns.len(),
            knowns.len()
        );
        Ok(if worst > DIRECTIONAL_FAIL {
            Outcome::fail(format!("{text} ({at}): an implicit integrator or a linearization gets a wrong Jacobian"))
        } else if worst > 1e-3 {
            Outcome::warn(format!("{text} ({at})"))
        } else {
            Outcome::pass(text)
        })
    };
    go().unwrap_or_else(Outcome::fail)
}

/// With `canGetAndSetFMUstate` in `<ModelExchange>`: `fmi2GetFMUstate` in the middle of the short
/// run, then `fmi2SetFMUstate` twice, each followed by the rest of the run: bit-identical (cosim's
/// ME instance restores its integrator's saved state with the FMU's, so both continuations start
/// alike; an FMU that restores nothing continues from the run's end the second time). With
/// `canSerializeFMUstate`, the state serialized and freed, the run continued, the bytes
/// deserialized and set: the same continuation (in the same instance: cosim's ME instance keeps
/// the time of the state it saved, FMI 2.0 has no getter of an ME FMU's time).
pub fn state(p: &mut Probe) -> Outcome {
    let (q, flags) = match me_probe(p) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if !flags.can_get_and_set_fmu_state {
        return Outcome::skip("canGetAndSetFMUstate = false in <ModelExchange>");
    }
    let n = q.plan.short_steps.max(2);
    let k0 = n / 2;
    let t0 = q.time(k0);
    let go = || -> Result<Outcome, String> {
        let mut a = q.instantiate("state")?;
        q.init(&mut a)?;
        q.run(&mut a, 0, k0)?;
        q.note(format_args!("fmi2GetFMUstate at t = {t0}"));
        a.save_state().map_err(text)?;
        let continuation = |s: &mut Instance| -> Result<Rows, String> {
            q.note(format_args!("fmi2SetFMUstate (back to t = {t0})"));
            s.restore_state().map_err(text)?;
            let mut rows = vec![q.read(s)?];
            rows.extend(q.run(s, k0, n)?);
            Ok(rows)
        };
        let first = continuation(&mut a)?;
        let again = continuation(&mut a)?;
        if let Some(d) = q.diff(&first, &again, k0) {
            return Ok(Outcome::fail(format!(
                "the state saved at t = {t0} does not restore: the steps after the second fmi2SetFMUstate differ from those after the first {d}"
            )));
        }
        let mut text = format!(
            "saved at t = {t0}, set twice, the {} steps after each bit-identical ({} values)",
            n - k0,
            Probe::count(&first)
        );
        if flags.can_serialize_fmu_state {
            q.note("fmi2SerializedFMUstateSize, fmi2SerializeFMUstate");
            let (st, bytes) = raw::serialize_saved(&mut a);
            if st > ffi::WARNING {
                return Ok(Outcome::fail(format!("fmi2SerializeFMUstate returned {}", ffi::status_name(st))));
            }
            q.note("fmi2FreeFMUstate");
            let _ = raw::free_saved_state(&mut a);
            q.note(format_args!("fmi2DeSerializeFMUstate of {} bytes", bytes.len()));
            let st = raw::deserialize_into_saved(&mut a, &bytes);
            if st > ffi::WARNING {
                return Ok(Outcome::fail(format!("fmi2DeSerializeFMUstate returned {}", ffi::status_name(st))));
            }
            let copy = continuation(&mut a)?;
            if let Some(d) = q.diff(&first, &copy, k0) {
                return Ok(Outcome::fail(format!(
                    "the state deserialized from {} bytes continues differently {d}",
                    bytes.len()
                )));
            }
            let _ = raw::free_saved_state(&mut a);
            text.push_str(&format!(
                "; serialized ({} bytes), freed, deserialized at the run's end and set: the same steps",
                bytes.len()
            ));
        }
        Ok(Outcome::pass(text))
    };
    go().unwrap_or_else(Outcome::fail)
}

#[cfg(test)]
mod tests {
    #[test]
    fn model_exchange_flags_are_read_from_its_element_only() {
        let xml = r#"<fmiModelDescription><ModelExchange modelIdentifier="m" completedIntegratorStepNotNeeded = "true"
            providesDirectionalDerivative='true' canGetAndSetFMUstate="false"/>
            <CoSimulation modelIdentifier="m" canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>"#;
        let f = super::flags(xml, false);
        assert!(f.completed_integrator_step_not_needed && f.provides_directional_derivative);
        assert!(!f.can_get_and_set_fmu_state && !f.can_serialize_fmu_state);
        assert_eq!(super::flags("<CoSimulation canGetAndSetFMUstate=\"true\"/>", false), super::MeFlags::default());
        let f =
            super::flags(r#"<ModelExchange canGetAndSetFMUState="true" needsCompletedIntegratorStep="true"/>"#, true);
        assert!(f.can_get_and_set_fmu_state && !f.completed_integrator_step_not_needed);
        assert!(super::flags("<ModelExchange/>", true).completed_integrator_step_not_needed);
    }
}
