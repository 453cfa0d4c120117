//! Singular-perturbation (SP) reduction of the three-volume circuit (Publication II §2.2, §3.2,
//! eqs. 33–35, in seed 000; DIGEST §4.6).
//!
//! Eq. 22 is ε ṗ3 = Q_V3 − Q31 with ε = V3/B_e3 tiny (V_h3 = 7.85e-7 m³): the stiffest
//! eigenvalue of the circuit. Tikhonov's theorem lets p3 follow its quasi-steady state
//! Q_V3(p3, U) = Q31(p3, p1): p3 leaves the state, which becomes [p1, p2, U].
//!
//! **Eqs. 33–34** (both orifices turbulent): with α = (U C_v/C_t)²,
//! p3 = (p1 + α p_P)/(1 + α) for U > 0, p3 = (p1 + α p_T)/(1 + α) for U < 0, and p3 = p1 at
//! U = 0 (both flows vanish). **The laminar band**, which Publication II does not address: our
//! orifice law g (see [`crate::orifice::orifice`]) is linear for |Δp| < Δp_L, so eqs. 33–34 are
//! the quasi-steady state only while both the valve edge and the throttle see |Δp| ≥ Δp_L. In
//! the band SP takes the exact quasi-steady state of eq. 22 with the same orifice laws as the
//! lumped-fluid model: the unique root of F(p3) = Q_V3(p3) − Q31(p3) (F is strictly decreasing
//! in p3 for U ≠ 0), by Newton's method safeguarded by bisection on the bracket between p1 and
//! the supply (p_P for U > 0, p_T for U < 0). Outside the band this root is eqs. 33–34 exactly
//! (the closed form is used there, so SP reproduces the paper's formula).
//!
//! **Eq. 35**: the throttle flow entering ṗ1 is Q31 = γ+ Q̄31 (U > 0) or γ− Q̄31 (U < 0), Q̄31 =
//! C_t g(p3 − p1) with the algebraic p3. Publication II tunes γ+ = 1.16, γ− = 1.05 "manually";
//! with the exact quasi-steady state above, γ± = 1 is the consistent choice (SPEC §3.7), which is
//! the FMU default; the paper's values are parameters.

use crate::integrator::Ode;
use crate::lumped3::{idx, Constants, Gains, Inputs, Lumped3, Lumped3Ode, Lumped3Point};
use nalgebra::{SMatrix, SVector};

/// Index of a state in the reduced state vector y = [p1, p2, U].
pub mod idx_sp {
    /// Piston-side pressure p1 (Pa).
    pub const P1: usize = 0;
    /// Rod-side pressure p2 (Pa).
    pub const P2: usize = 1;
    /// Spool position U (V).
    pub const U: usize = 2;
}

/// The flow corrections of eq. 35.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gamma {
    /// γ+ (U > 0).
    pub plus: f64,
    /// γ− (U < 0).
    pub minus: f64,
}

impl Default for Gamma {
    fn default() -> Self {
        Self { plus: 1.0, minus: 1.0 }
    }
}

impl Gamma {
    /// Publication II Table 1: γ+ = 1.16, γ− = 1.05.
    pub const PUBLICATION_II: Self = Self { plus: 1.16, minus: 1.05 };

    /// γ for the spool position U.
    #[inline]
    pub fn at(&self, u: f64) -> f64 {
        if u > 0.0 {
            self.plus
        } else if u < 0.0 {
            self.minus
        } else {
            1.0
        }
    }
}

/// Valve edge into V3: (Q_V3, ∂Q_V3/∂p3, ∂Q_V3/∂U) at (p3, U) — eq. 27 as in
/// [`Lumped3::flows_with`].
#[inline]
fn valve_v3(circuit: &Lumped3, c: &Constants, p3: f64, u: f64) -> (f64, f64, f64) {
    if u >= 0.0 {
        let (g, s) = c.orifice_g_and_slope(circuit.p_p - p3);
        (circuit.cv * u * g, -circuit.cv * u * s, circuit.cv * g)
    } else {
        let (g, s) = c.orifice_g_and_slope(p3 - circuit.p_t);
        (circuit.cv * u * g, circuit.cv * u * s, circuit.cv * g)
    }
}

/// The throttle pressure drop Δ = p3 − p1 (Pa) of the quasi-steady p3 for (p1, U): eqs. 33–34,
/// Δ = α (p_supply − p1)/(1 + α), where both orifices are turbulent, else the root of
/// Q_V3(p1 + Δ) = C_t g(Δ) (see the module documentation). Solved for Δ rather than p3, so that a
/// small drop keeps its digits (p3 − p1 would cancel).
pub fn throttle_drop(circuit: &Lumped3, c: &Constants, p1: f64, u: f64) -> f64 {
    if u == 0.0 || !(p1.is_finite() && u.is_finite()) {
        return 0.0;
    }
    let supply = if u > 0.0 { circuit.p_p } else { circuit.p_t };
    // Eqs. 33–34.
    let alpha = (u * circuit.cv / c.c_t).powi(2);
    let closed = alpha * (supply - p1) / (1.0 + alpha);
    if (supply - p1 - closed).abs() >= c.dp_lam() && closed.abs() >= c.dp_lam() {
        return closed;
    }
    // F(Δ) = Q_V3(p1 + Δ) − C_t g(Δ), strictly decreasing; root between 0 and supply − p1.
    let f = |d: f64| {
        let (qv3, dqv3, _) = valve_v3(circuit, c, p1 + d, u);
        let (g31, s31) = c.orifice_g_and_slope(d);
        (qv3 - c.c_t * g31, dqv3 - c.c_t * s31)
    };
    let (mut lo, mut hi) = if supply > p1 { (0.0, supply - p1) } else { (supply - p1, 0.0) };
    let mut d = closed.clamp(lo, hi);
    for _ in 0..200 {
        let (fv, df) = f(d);
        if fv == 0.0 {
            return d;
        }
        // F decreasing: F > 0 means the root lies above Δ.
        if fv > 0.0 {
            lo = d;
        } else {
            hi = d;
        }
        let newton = d - fv / df;
        let next = if newton > lo && newton < hi && df < 0.0 { newton } else { 0.5 * (lo + hi) };
        if (next - d).abs() <= 4.0 * f64::EPSILON * d.abs() || next == lo || next == hi {
            return next;
        }
        d = next;
    }
    d
}

/// The quasi-steady p3 (Pa) for (p1, U): p1 + [`throttle_drop`].
pub fn p3_quasi_steady(circuit: &Lumped3, c: &Constants, p1: f64, u: f64) -> f64 {
    p1 + throttle_drop(circuit, c, p1, u)
}

/// The full state [p1, p2, p3, U] of the reduced state y = [p1, p2, U].
pub fn full_state(circuit: &Lumped3, c: &Constants, y: &SVector<f64, 3>) -> SVector<f64, 4> {
    let (p1, u) = (y[idx_sp::P1], y[idx_sp::U]);
    SVector::<f64, 4>::new(p1, y[idx_sp::P2], p3_quasi_steady(circuit, c, p1, u), u)
}

/// The reduced state of a full one (drops p3).
pub fn reduced_state(x: &SVector<f64, 4>) -> SVector<f64, 3> {
    SVector::<f64, 3>::new(x[idx::P1], x[idx::P2], x[idx::U])
}

/// ∂p3/∂p1 and ∂p3/∂U of the quasi-steady p3 (implicit function theorem on Q_V3 − Q31 = 0) with
/// the slopes of Q31 = C_t g(p3 − p1) (`d31` = ∂Q31/∂p3) and of Q_V3.
#[inline]
fn p3_slopes(d31: f64, dv3_p3: f64, dv3_u: f64) -> (f64, f64) {
    let denom = d31 - dv3_p3;
    if denom > 0.0 && denom.is_finite() {
        (d31 / denom, dv3_u / denom)
    } else {
        (1.0, 0.0)
    }
}

/// dp3/dt of the quasi-steady p3 for the reduced state `y` and its rate `y_dot`:
/// ∂p3/∂p1 ṗ1 + ∂p3/∂U U̇ (implicit function theorem on Q_V3 − Q31 = 0).
pub fn p3_rate(circuit: &Lumped3, c: &Constants, y: &SVector<f64, 3>, y_dot: &SVector<f64, 3>) -> f64 {
    let (p1, u) = (y[idx_sp::P1], y[idx_sp::U]);
    let drop = throttle_drop(circuit, c, p1, u);
    let d31 = c.c_t * c.orifice_g_and_slope(drop).1;
    let (_, dv3_p3, dv3_u) = valve_v3(circuit, c, p1 + drop, u);
    let (dp3_dp1, dp3_du) = p3_slopes(d31, dv3_p3, dv3_u);
    dp3_dp1 * y_dot[idx_sp::P1] + dp3_du * y_dot[idx_sp::U]
}

/// The SP rates ẏ = [ṗ1, ṗ2, U̇] and their Jacobian at (gains, inputs, y), with the quasi-steady
/// p3 and the throttle flow γ Q̄31 (eqs. 20–21, 28, 33–35); the cavitation law of V1 and V2 as
/// in the lumped-fluid model ([`Lumped3::cavitating_gains`]).
pub fn rates_and_jacobian(
    circuit: &Lumped3,
    c: &Constants,
    gamma: &Gamma,
    gains: &Gains,
    inputs: &Inputs,
    y: &SVector<f64, 3>,
) -> (SVector<f64, 3>, SMatrix<f64, 3, 3>) {
    let (p1, u) = (y[idx_sp::P1], y[idx_sp::U]);
    let drop = throttle_drop(circuit, c, p1, u);
    let p3 = p1 + drop;
    let x = SVector::<f64, 4>::new(p1, y[idx_sp::P2], p3, u);
    let g = gamma.at(u);
    let (g31, s31) = c.orifice_g_and_slope(drop);
    let q31 = g * c.c_t * g31;
    let d31 = c.c_t * s31;
    let (_, dv3_p3, dv3_u) = valve_v3(circuit, c, p3, u);
    let (dp3_dp1, dp3_du) = p3_slopes(d31, dv3_p3, dv3_u);
    let flows = circuit.flows_with(c, &x);
    let (k, dk) = circuit.cavitating_gains(gains, &x);
    let (k1, k2) = (k[0], k[1]);
    let rates = SVector::<f64, 3>::new(
        k1 * (q31 - c.a1 * inputs.s_dot),
        k2 * (c.a2 * inputs.s_dot - flows.q2v),
        (inputs.u_ref - u) / c.tau,
    );
    // The LF Jacobian's p2 and U rows are unchanged; ṗ1 depends on p1 and U through p3 (and on
    // p1 through the cavitating gain k1(p1) below p_cav).
    let full = circuit.jacobian_with(c, gains, &x, inputs.s_dot);
    let mut j = SMatrix::<f64, 3, 3>::zeros();
    let dk1 = dk.map_or(0.0, |d| d[0]);
    j[(idx_sp::P1, idx_sp::P1)] = k1 * g * d31 * (dp3_dp1 - 1.0) + dk1 * (q31 - c.a1 * inputs.s_dot);
    j[(idx_sp::P1, idx_sp::U)] = k1 * g * d31 * dp3_du;
    j[(idx_sp::P2, idx_sp::P2)] = full[(idx::P2, idx::P2)];
    j[(idx_sp::P2, idx_sp::U)] = full[(idx::P2, idx::U)];
    j[(idx_sp::U, idx_sp::U)] = full[(idx::U, idx::U)];
    (rates, j)
}

/// The SP circuit ODE: [`Lumped3Ode`]'s inputs and gains, the reduced state.
pub struct Lumped3SpOde<'a> {
    /// The lumped-fluid ODE whose inputs and coefficients it shares.
    pub lf: Lumped3Ode<'a>,
    /// Flow corrections of eq. 35.
    pub gamma: Gamma,
}

impl Ode<3> for Lumped3SpOde<'_> {
    type Point = Lumped3Point;
    #[inline]
    fn point(&self, tau: f64) -> Lumped3Point {
        self.lf.point(tau)
    }
    fn f_at(&self, p: &Lumped3Point, y: &SVector<f64, 3>) -> SVector<f64, 3> {
        rates_and_jacobian(self.lf.circuit, &self.lf.constants, &self.gamma, &p.gains, &p.inputs, y).0
    }
    fn jacobian_at(&self, p: &Lumped3Point, y: &SVector<f64, 3>) -> SMatrix<f64, 3, 3> {
        rates_and_jacobian(self.lf.circuit, &self.lf.constants, &self.gamma, &p.gains, &p.inputs, y).1
    }
    fn f_and_jacobian_at(&self, p: &Lumped3Point, y: &SVector<f64, 3>) -> (SVector<f64, 3>, SMatrix<f64, 3, 3>) {
        rates_and_jacobian(self.lf.circuit, &self.lf.constants, &self.gamma, &p.gains, &p.inputs, y)
    }
    fn admissible(&self, y: &SVector<f64, 3>) -> bool {
        self.lf.circuit.cavitation.strict || (y[idx_sp::P1] > 0.0 && y[idx_sp::P2] > 0.0)
    }
    fn rescues(&self) -> bool {
        !self.lf.circuit.cavitation.strict
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use fmu_export::InputSignal;

    fn circuit() -> (Lumped3, Constants) {
        let c = Lumped3::default();
        let k = c.constants();
        (c, k)
    }

    /// Outside the laminar band p3 is eqs. 33–34, and Q_V3 = Q31 there.
    #[test]
    fn turbulent_p3_is_the_papers_formula_and_balances_the_flows() {
        let (c, k) = circuit();
        for (p1, u) in [(4.0e6, 10.0), (4.0e6, -10.0), (6.0e6, -7.0), (2.0e6, 8.0)] {
            let p3 = p3_quasi_steady(&c, &k, p1, u);
            let alpha = (u * c.cv / k.c_t).powi(2);
            let supply = if u > 0.0 { c.p_p } else { c.p_t };
            let paper = (p1 + alpha * supply) / (1.0 + alpha);
            assert!((p3 - p1).abs() > k.dp_lam() && (supply - p3).abs() > k.dp_lam(), "turbulent case");
            assert!((p3 - paper).abs() <= 1e-9 * paper, "p1 = {p1}, U = {u}: {p3} vs {paper}");
            let x = SVector::<f64, 4>::new(p1, 3e6, p3, u);
            let f = c.flows(&x);
            assert!((f.qv3 - f.q31).abs() <= 1e-9 * f.q31.abs(), "{f:?}");
        }
        assert_eq!(p3_quasi_steady(&c, &k, 4.0e6, 0.0), 4.0e6);
    }

    /// In the laminar band (a nearly closed spool, or p1 near the supply) the root balances the
    /// flows of the lumped-fluid laws, continuous as U crosses into the turbulent regime.
    #[test]
    fn laminar_band_p3_balances_the_lumped_fluid_flows() {
        let (c, k) = circuit();
        for (p1, u) in [(4.0e6, 1e-3), (4.0e6, -1e-3), (7.5e6, 5.0), (0.2e6, -5.0), (7.7e6, 2.0)] {
            let p3 = p3_quasi_steady(&c, &k, p1, u);
            let x = SVector::<f64, 4>::new(p1, 3e6, p3, u);
            let f = c.flows(&x);
            assert!((f.qv3 - f.q31).abs() <= 1e-9 * f.q31.abs(), "p1 = {p1}, U = {u}: {f:?}");
        }
        // Continuity through the band edge: U from tiny to turbulent.
        let mut last = p3_quasi_steady(&c, &k, 4.0e6, 1e-6);
        for i in 1..2000 {
            let u = 1e-6 + i as f64 * 1e-4;
            let p3 = p3_quasi_steady(&c, &k, 4.0e6, u);
            assert!((p3 - last).abs() < 2e4, "jump at U = {u}: {last} -> {p3}");
            assert!(p3 >= last - 1e-6, "p3 grows with U");
            last = p3;
        }
    }

    /// The analytic Jacobian of the reduced rates against central differences.
    #[test]
    fn jacobian_matches_finite_differences() {
        let (c, _) = circuit();
        let s = InputSignal::new(0.55);
        let sd = InputSignal::new(0.02);
        let ur = InputSignal::new(7.0);
        let ode = Lumped3SpOde { lf: Lumped3Ode::new(&c, &s, &sd, &ur), gamma: Gamma::PUBLICATION_II };
        for y in [
            SVector::<f64, 3>::new(4.1e6, 3.4e6, 6.0),
            SVector::<f64, 3>::new(4.1e6, 3.4e6, -6.0),
            SVector::<f64, 3>::new(7.5e6, 0.5e6, 0.002),
        ] {
            let j = ode.jacobian(0.0, &y);
            for col in 0..3 {
                let d = if col == idx_sp::U { 1e-6 } else { 1.0 };
                let (mut yp, mut ym) = (y, y);
                yp[col] += d;
                ym[col] -= d;
                let fd = (ode.f(0.0, &yp) - ode.f(0.0, &ym)) / (2.0 * d);
                for row in 0..3 {
                    let scale = j[(row, col)].abs().max(fd[row].abs()).max(1e-3);
                    assert!(
                        (j[(row, col)] - fd[row]).abs() <= 1e-4 * scale,
                        "y = {y:?} J[{row},{col}] = {} vs {}",
                        j[(row, col)],
                        fd[row]
                    );
                }
            }
        }
    }

    /// SP removes the stiff V3 mode: the largest eigenvalue drops by orders of magnitude.
    #[test]
    fn sp_is_far_less_stiff_than_lf() {
        let (c, _) = circuit();
        let s = InputSignal::new(0.55);
        let sd = InputSignal::new(0.02);
        let ur = InputSignal::new(10.0);
        let lf = Lumped3Ode::new(&c, &s, &sd, &ur);
        let x = SVector::<f64, 4>::new(4.1e6, 3.4e6, 5.0e6, 10.0);
        let lf_max = crate::integrator::stiffest_eigenvalue(&lf, 0.0, &x);
        let sp = Lumped3SpOde { lf: Lumped3Ode::new(&c, &s, &sd, &ur), gamma: Gamma::default() };
        let sp_max = crate::integrator::stiffest_eigenvalue(&sp, 0.0, &reduced_state(&x));
        assert!(sp_max * 10.0 < lf_max, "SP {sp_max:e} vs LF {lf_max:e}");
    }
}
