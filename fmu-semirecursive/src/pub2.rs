//! Publication II (seed 000; DIGEST §1.3, §2.2, §4.6): Model A′ — Model A with the small
//! valve–throttle volume V_h3 = 7.85e-7 m³ and the flow corrections γ+ = 1.16, γ− = 1.05 of
//! Table 1 — simulated monolithically with p3 either a state (lumped fluid, LF) or algebraic by
//! singular perturbation (SP, eqs. 33–35), and the time series the Publication II comparison
//! needs (s, p1, Q31, energy balance, iterations).
//!
//! The initial state is Model A's static equilibrium (Pub I eqs. 53–54: p2 = 3.5 MPa, p1 = p3
//! from p1A1 − p2A2 = F_s0); the volume V3 does not enter it, and SP's p3 at U = 0 is p1.

use crate::circuit::{Circuit, P3Model};
use crate::models::{model_a, Model};
use crate::penalty::{Penalty, Settings, Tangent};
use crate::state::State;
use fmu_hydraulics::sp::Gamma;

/// Pub II Table 1: V_h3 = 7.85e-7 m³ (Pub I: 4.71e-5 m³).
pub const V_H3: f64 = 7.85e-7;

/// Pub II Table 1's flow corrections γ+ = 1.16, γ− = 1.05 (eq. 35).
pub const GAMMA: Gamma = Gamma::PUBLICATION_II;

/// Model A′ with p3 modelled by `p3` (LF, or SP with the given γ±).
pub fn model_a_prime(p3: P3Model) -> Result<Model, String> {
    let mut m = model_a()?;
    let mut lumped = m.circuit.lumped.clone();
    lumped.v_h3 = V_H3;
    m.circuit = Circuit::new(lumped, m.circuit.eta, m.circuit.v_eps).with_p3(p3);
    m.name = match p3 {
        P3Model::Lf => "A′ (LF)",
        P3Model::Sp(_) => "A′ (SP)",
    };
    Ok(m)
}

/// One recorded time point of a Publication II run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// t (s).
    pub t: f64,
    /// Actuator length s (m).
    pub s: f64,
    /// Pressures p1, p2, p3 (Pa).
    pub p: [f64; 3],
    /// Spool position U (V).
    pub u: f64,
    /// Throttle flow Q31 into V1 (m³/s), with γ± for SP.
    pub q31: f64,
    /// Energy balance E_kin + ΔE_pot − W_act (J).
    pub energy: f64,
    /// Actuator work W_act (J).
    pub work: f64,
    /// Newton iterations of the step ending at t (0 at t = 0).
    pub iterations: usize,
}

/// A finished run, or how far it got.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Every step from t = 0.
    pub points: Vec<Point>,
    /// The failure that stopped it (e.g. no convergence within the iteration cap), if any.
    pub failure: Option<String>,
    /// Step Δt (s).
    pub dt: f64,
}

impl Trace {
    /// Runs `model` with the penalty formulation (Pub I/II settings: α = 1e11, 1e-7 rad, 1e2 Pa,
    /// 100 iterations) at step `dt` over `duration`, stopping at the first failed step.
    pub fn simulate(model: &Model, tangent: Tangent, dt: f64, duration: f64) -> Self {
        Self::simulate_with(&Penalty::new(model, Settings::paper(model, dt, tangent)), duration)
    }

    /// As [`simulate`](Self::simulate) with the integrator `integ` (e.g.
    /// [`Penalty::plain_newton`]: Pub II's Newton iteration, the update never halved).
    pub fn simulate_with(integ: &Penalty<'_>, duration: f64) -> Self {
        let (model, dt) = (integ.model, integ.set.dt);
        let mut st = State::initial(model);
        let steps = (duration / dt).round() as usize;
        let mut points = Vec::with_capacity(steps + 1);
        points.push(point(model, &st, 0));
        for _ in 0..steps {
            match integ.step(&mut st) {
                Ok(stats) => points.push(point(model, &st, stats.iterations)),
                Err(e) => return Self { points, failure: Some(format!("model {}: {e}", model.name)), dt },
            }
        }
        Self { points, failure: None, dt }
    }

    /// Whether every step converged.
    pub fn converged(&self) -> bool {
        self.failure.is_none()
    }

    /// Average and maximum Newton iterations per step.
    pub fn iterations(&self) -> (f64, usize) {
        let it = || self.points[1..].iter().map(|p| p.iterations);
        (it().sum::<usize>() as f64 / it().count().max(1) as f64, it().max().unwrap_or(0))
    }

    /// Peak |E_kin + ΔE_pot − W_act| (J).
    pub fn energy_peak(&self) -> f64 {
        self.points.iter().fold(0.0, |a, p| a.max(p.energy.abs()))
    }

    /// Largest |W_act| (J).
    pub fn max_work(&self) -> f64 {
        self.points.iter().fold(0.0, |a, p| a.max(p.work.abs()))
    }

    /// `f` at time t, linear between the recorded points (t within the run).
    pub fn at(&self, t: f64, f: impl Fn(&Point) -> f64) -> f64 {
        let i = self.points.partition_point(|p| p.t < t);
        if i == 0 {
            return f(&self.points[0]);
        }
        let Some(b) = self.points.get(i) else { return f(&self.points[self.points.len() - 1]) };
        let a = &self.points[i - 1];
        let w = if b.t > a.t { (t - a.t) / (b.t - a.t) } else { 1.0 };
        f(a) + w * (f(b) - f(a))
    }
}

fn point(model: &Model, st: &State, iterations: usize) -> Point {
    Point {
        t: st.t,
        s: st.s[0],
        p: st.p,
        u: st.u,
        q31: model.circuit.q31(&st.p, st.u),
        energy: st.energy_error(model),
        work: st.w_act,
        iterations,
    }
}

/// The Publication II comparison of two runs on the grid of `coarse` (every point of it is also a
/// time point of `fine` when the fine step divides the coarse one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// max |s_coarse − s_fine| over the run (m).
    pub ds: f64,
    /// max |p1_coarse − p1_fine| outside the `settle` seconds after each valve switch (Pa).
    pub dp1: f64,
    /// max |p1_coarse − p1_fine| over the whole run (Pa).
    pub dp1_all: f64,
    /// Range max p1 − min p1 of `fine` (Pa).
    pub p1_range: f64,
}

/// Compares `coarse` with `fine`; p1 is judged outside [t_k, t_k + settle) after each switch time
/// t_k of `switches`.
pub fn compare(coarse: &Trace, fine: &Trace, switches: &[f64], settle: f64) -> Comparison {
    let (mut ds, mut dp1, mut dp1_all) = (0.0f64, 0.0f64, 0.0f64);
    for c in &coarse.points {
        ds = ds.max((c.s - fine.at(c.t, |p| p.s)).abs());
        let d = (c.p[0] - fine.at(c.t, |p| p.p[0])).abs();
        dp1_all = dp1_all.max(d);
        if !switches.iter().any(|&t0| c.t >= t0 - 1e-12 && c.t < t0 + settle) {
            dp1 = dp1.max(d);
        }
    }
    let (lo, hi) =
        fine.points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.p[0]), b.max(p.p[0])));
    Comparison { ds, dp1, dp1_all, p1_range: hi - lo }
}

/// Valve switch times of the Pub II eq. 40 cycle (s): where U_ref changes.
pub fn switch_times(model: &Model) -> Vec<f64> {
    model.cycle.table.iter().map(|(t, _)| *t).collect()
}
