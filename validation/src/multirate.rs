//! Seed 004's multi-rate scheme (§4, p. 1032 ff., eq. 40) re-implemented in process on the same
//! model code as the FMUs, step by step as the paper describes it:
//!
//! - the multibody problem conducts the integration: the rod's I3AL-P (trapezoidal rule, eqs.
//!   5–16) at Δt = 10 ms, **without** a restart at the spool jumps (the paper's unified run has
//!   none either);
//! - at every Newton iteration of the mechanics the hydraulics (eq. 29) are re-integrated over
//!   the step with forward Euler at h = 0.2 ms (50 sub-steps), s linear from s_n to the iterate's
//!   s_{n+1} and ṡ constant over the step, ṡ = (s_{n+1} − s_n)/Δt (eq. 40); κ (eq. 38, κ0 for
//!   t ≤ 2 s) read at each sub-step's start;
//! - the actuator force at t_{n+1} is eq. 28, F = (p2 − p1) A − c ṡ, with the pressures of that
//!   integration and the friction evaluated at the mechanics' iterate ṡ_{n+1}. The mechanics here
//!   is the pressure-coupled rod (`multibody-rod-p`, seed 004 cylinder: A on both sides, the
//!   circuit's c, no end dampers), so the friction and its tangent −c sit inside its Newton
//!   iteration exactly as in the paper's;
//! - the step is iterated to convergence, then the pressures are re-integrated once more with the
//!   converged s_{n+1}.
//!
//! The paper's Newton iteration carries the hydraulics inside the mechanics' residual; here the
//! same equations are solved as a scalar equation in s_{n+1}, g(s_{n+1}) = S(P(s_{n+1})) − s_{n+1}
//! = 0 (P: the FWE hydraulics, S: the mechanics' step with those pressures), by the secant method
//! to 1e-9 m. The converged step does not depend on the tangent used to get there.
//!
//! The validation report compares it with the unified solution without restart (the paper's
//! Fig. 4 comparison) and with the tight reference.

use anyhow::{anyhow, bail, Result};
use fmu_export::{CoSimModel, Context, InputSignal};
use fmu_hydraulics::naya::Inputs;
use fmu_hydraulics::NayaFmu;
use fmu_multibody::RodPFmu;
use nalgebra::SVector;

/// Communication (multibody) step Δt of the paper (s).
const BIG_H: f64 = 1e-2;
/// Forward-Euler step of the hydraulics (s): "the largest that reached convergence".
const H_FWE: f64 = 2e-4;
/// Convergence of a step, |g(s_{n+1})| (m): 1e-6 mm, above the round-off of the mechanics' own
/// Newton iteration (1e-10 on q) and far below the 0.1 mm compared.
const TOL: f64 = 1e-9;

/// Seed 004 eq. 38: κ0 for t ≤ 2 s, κ0 − 0.01 for 2 < t ≤ 6 s, κ0 + 0.01 after.
fn kappa_law(kappa0: f64, t: f64) -> f64 {
    if t <= 2.0 + 1e-9 {
        kappa0
    } else if t <= 6.0 + 1e-9 {
        kappa0 - 0.01
    } else {
        kappa0 + 0.01
    }
}

fn model(e: fmu_export::ModelError) -> anyhow::Error {
    anyhow!("{e}")
}

/// How the hydraulics see ṡ within a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdotOverStep {
    /// The paper's eq. 40: ṡ = (s_{n+1} − s_n)/Δt, constant over the step.
    Chord,
    /// Linear from the mechanics' ṡ_n to the iterate's ṡ_{n+1} (what the master's iterative
    /// coupling delivers through the s_dot connection); s still linear.
    Linear,
}

/// The result of a run of the scheme.
#[derive(Debug, Clone)]
pub struct PaperScheme {
    /// s(t_n), n = 1…1000 (m).
    pub s: Vec<(f64, f64)>,
    /// p1(t_n), n = 1…1000 (Pa).
    pub p1: Vec<(f64, f64)>,
    /// Largest number of hydraulics integrations (secant iterations) in one step.
    pub max_iterations: usize,
}

/// Chamber pressures (p1, p2) of the circuit after one step Δt by forward Euler at h = 0.2 ms
/// from `p` (eq. 29), s linear from `s0` to `s1`; ṡ per [`SdotOverStep`] (`sd0`: the
/// mechanics' ṡ_n, `sd1`: the iterate's ṡ_{n+1}); κ of eq. 38 read at each sub-step's start.
#[allow(clippy::too_many_arguments)]
fn hydraulics(
    hyd: &NayaFmu,
    kappa0: f64,
    t: f64,
    p: SVector<f64, 2>,
    (s0, s1): (f64, f64),
    (sd0, sd1): (f64, f64),
    sdot: SdotOverStep,
) -> SVector<f64, 2> {
    let chord = (s1 - s0) / BIG_H; // eq. 40
    let k = (BIG_H / H_FWE).round() as usize;
    let mut p = p;
    for i in 0..k {
        let tau = i as f64 * H_FWE;
        let s_dot = match sdot {
            SdotOverStep::Chord => chord,
            SdotOverStep::Linear => sd0 + (sd1 - sd0) * tau / BIG_H,
        };
        let u = Inputs { s: s0 + chord * tau, s_dot, kappa: kappa_law(kappa0, t + tau) };
        let (d1, d2) = hyd.circuit.pressure_rates(p[0], p[1], &u);
        p += SVector::<f64, 2>::new(d1, d2) * H_FWE;
    }
    p
}

/// The rod's pressure inputs: hydraulics-naya numbers its chambers the other way (its p2
/// extends), so naya.p2 → p1 and naya.p1 → p2; linear over the step (the trapezoidal step uses
/// the end values).
fn set_pressures(mech: &mut RodPFmu, p0: &SVector<f64, 2>, p1: &SVector<f64, 2>) {
    mech.inputs[0] = InputSignal { value: p0[1], derivatives: [(p1[1] - p0[1]) / BIG_H, 0.0, 0.0, 0.0] };
    mech.inputs[1] = InputSignal { value: p0[0], derivatives: [(p1[0] - p0[0]) / BIG_H, 0.0, 0.0, 0.0] };
}

/// The paper's multi-rate scheme over 10 s (ṡ of eq. 40).
pub fn paper_scheme() -> Result<PaperScheme> {
    scheme(SdotOverStep::Chord)
}

/// The multi-rate scheme over 10 s with the hydraulics seeing ṡ as `sdot`.
pub fn scheme(sdot: SdotOverStep) -> Result<PaperScheme> {
    let mut ctx = Context::default();
    let mut hyd = NayaFmu::default();
    hyd.initialize(0.0, &mut ctx).map_err(model)?;
    let kappa0 = hyd.kappa0;
    let mut p = hyd.p;
    let mut mech = RodPFmu::default();
    mech.restart = false;
    let cyl = &mut mech.cylinders[0];
    (cyl.a1, cyl.a2, cyl.c) = (hyd.circuit.a_p, hyd.circuit.a_p, hyd.circuit.c);
    (cyl.l_d, cyl.k_d, cyl.c_d) = (0.0, 0.0, 0.0);
    set_pressures(&mut mech, &p, &p);
    mech.initialize(0.0, &mut ctx).map_err(model)?;
    let mut out = PaperScheme { s: Vec::with_capacity(1000), p1: Vec::with_capacity(1000), max_iterations: 0 };
    for n in 0..1000 {
        let t = n as f64 * BIG_H;
        let (m0, kin0) = (mech.clone(), mech.kinematics(0));
        // One evaluation of the step for an iterate s_{n+1} (with its ṡ_{n+1}): the hydraulics
        // integrated over the step, then the mechanics' step with the resulting pressures.
        let evaluate = |s1: f64, sd1: f64| -> Result<(RodPFmu, SVector<f64, 2>)> {
            let p1 = hydraulics(&hyd, kappa0, t, p, (kin0.s, s1), (kin0.s_dot, sd1), sdot);
            let mut m = m0.clone();
            set_pressures(&mut m, &p, &p1);
            m.do_step(t, BIG_H, &mut Context::default()).map_err(model)?;
            Ok((m, p1))
        };
        // Predictor: the step at the current velocity; then secant iterations on g(s) = S(s) − s.
        let mut x0 = kin0.s + BIG_H * kin0.s_dot;
        let (mut m, _) = evaluate(x0, kin0.s_dot)?;
        let mut g0 = m.kinematics(0).s - x0;
        let mut x1 = m.kinematics(0).s;
        let mut iterations = 1;
        loop {
            let sd1 = m.kinematics(0).s_dot;
            (m, _) = evaluate(x1, sd1)?;
            iterations += 1;
            let g1 = m.kinematics(0).s - x1;
            if g1.abs() < TOL {
                break;
            }
            if iterations >= 50 {
                bail!("the multi-rate iteration did not converge at t = {t} s (|g| = {:.3e} m)", g1.abs());
            }
            let x2 = if g1 != g0 { x1 - g1 * (x1 - x0) / (g1 - g0) } else { x1 + g1 };
            (x0, g0, x1) = (x1, g1, x2);
        }
        // Converged: the pressures re-integrated once more with the converged s_{n+1}, ṡ_{n+1}.
        let kin1 = m.kinematics(0);
        p = hydraulics(&hyd, kappa0, t, p, (kin0.s, kin1.s), (kin0.s_dot, kin1.s_dot), sdot);
        mech = m;
        out.max_iterations = out.max_iterations.max(iterations);
        out.s.push((t + BIG_H, kin1.s));
        out.p1.push((t + BIG_H, p[0]));
    }
    Ok(out)
}
