//! Two-chamber cylinder with an open-centre 4-way valve: Naya et al. 2011 (seed 004) §4,
//! eqs. 28–32 and 36–37; parameters of seed 001 §A.4 Table 2.

use crate::cavitation::Cavitation;
use crate::integrator::Ode;
use fmu_export::InputSignal;
use nalgebra::{SMatrix, SVector};

/// Circuit parameters (SI units), defaults of seed 001 Table 2 / seed 004 §4.
#[derive(Debug, Clone, PartialEq)]
pub struct Naya {
    /// Piston area A (m²).
    pub a_p: f64,
    /// Cylinder length l (m).
    pub l: f64,
    /// Viscous friction coefficient c (N·s/m).
    pub c: f64,
    /// Valve discharge coefficient c_d.
    pub cd: f64,
    /// Fluid density ρ (kg/m³).
    pub rho: f64,
    /// Pump pressure p_P (Pa).
    pub p_p: f64,
    /// Tank pressure p_T (Pa).
    pub p_t: f64,
    /// Bulk-modulus coefficient a (1/Pa), eq. 3.
    pub a: f64,
    /// Bulk-modulus coefficient b (1/Pa²), eq. 3.
    pub b: f64,
    /// Actuator length at which both chambers have equal length, s₀ (m), eq. 30.
    pub s0: f64,
    /// Valve area per unit spool displacement (m²), eq. 31: A_i = a_v κ, A_o = a_v (1 − κ).
    pub a_v: f64,
    /// Low-pressure law below the cavitation pressure ([`crate::cavitation`]).
    pub cavitation: Cavitation,
}

impl Default for Naya {
    fn default() -> Self {
        Self {
            a_p: 65e-4,
            l: 0.442,
            c: 1e5,
            cd: 0.67,
            rho: 850.0,
            p_p: 7.6e6,
            p_t: 0.1e6,
            a: 6.53e-10,
            b: -1.19e-18,
            s0: 0.5,
            a_v: 5e-4,
            cavitation: Cavitation::default(),
        }
    }
}

/// The static equilibrium of eq. 32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Equilibrium {
    /// Upper-chamber pressure p1 (Pa).
    pub p1: f64,
    /// Lower-chamber pressure p2 (Pa).
    pub p2: f64,
    /// Spool position κ₀.
    pub kappa: f64,
}

/// Inputs at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// Actuator length s (m).
    pub s: f64,
    /// Actuator velocity ṡ (m/s).
    pub s_dot: f64,
    /// Spool position κ ∈ [0, 1].
    pub kappa: f64,
}

/// √(2Δp/ρ) δ(Δp): orifice velocity, zero for negative Δp (the δ of eq. 29).
fn orifice_speed(dp: f64, rho: f64) -> f64 {
    if dp > 0.0 {
        (2.0 * dp / rho).sqrt()
    } else {
        0.0
    }
}

/// d/dΔp of [`orifice_speed`], with Δp floored at 1 Pa so the Jacobian stays finite at Δp → 0.
fn orifice_speed_slope(dp: f64, rho: f64) -> f64 {
    if dp > 0.0 {
        1.0 / (rho * orifice_speed(dp.max(1.0), rho))
    } else {
        0.0
    }
}

impl Naya {
    /// Bulk modulus β(p) = (1 + a p + b p²)/(a + 2 b p) (eq. 3), Pa.
    pub fn beta(&self, p: f64) -> f64 {
        (1.0 + self.a * p + self.b * p * p) / (self.a + 2.0 * self.b * p)
    }

    /// dβ/dp = 1 − 2 b (1 + a p + b p²)/(a + 2 b p)².
    pub fn beta_slope(&self, p: f64) -> f64 {
        let d = self.a + 2.0 * self.b * p;
        1.0 - 2.0 * self.b * (1.0 + self.a * p + self.b * p * p) / (d * d)
    }

    /// Effective bulk modulus and its slope (Pa, 1): β(p) of eq. 3, collapsing below the
    /// cavitation pressure ([`Cavitation::modulus`]); exactly β(p), β'(p) above it.
    #[inline]
    pub fn beta_eff(&self, p: f64) -> (f64, f64) {
        if self.cavitation.active(p) {
            self.cavitation.modulus(self.beta(p), self.beta_slope(p), p)
        } else {
            (self.beta(p), self.beta_slope(p))
        }
    }

    /// [`beta_eff`](Self::beta_eff)'s value alone (Pa).
    #[inline]
    pub fn beta_e(&self, p: f64) -> f64 {
        if self.cavitation.active(p) {
            self.beta_eff(p).0
        } else {
            self.beta(p)
        }
    }

    /// Chamber lengths l1 = 0.5 l + s₀ − s, l2 = 0.5 l + s − s₀ (eq. 30), m.
    pub fn chamber_lengths(&self, s: f64) -> (f64, f64) {
        (0.5 * self.l + self.s0 - s, 0.5 * self.l + s - self.s0)
    }

    /// Valve areas A_i = a_v κ, A_o = a_v (1 − κ) (eq. 31), κ clamped to [0, 1], m².
    pub fn valve_areas(&self, kappa: f64) -> (f64, f64) {
        let k = kappa.clamp(0.0, 1.0);
        (self.a_v * k, self.a_v * (1.0 - k))
    }

    /// Net valve flows into chambers 1 and 2 (m³/s), the orifice terms of eq. 29.
    pub fn flows(&self, p1: f64, p2: f64, kappa: f64) -> (f64, f64) {
        let (ai, ao) = self.valve_areas(kappa);
        let q = |area: f64, dp: f64| area * self.cd * orifice_speed(dp, self.rho);
        (q(ai, self.p_p - p1) - q(ao, p1 - self.p_t), q(ao, self.p_p - p2) - q(ai, p2 - self.p_t))
    }

    /// ∂(flows)/∂p: (∂Q1/∂p1, ∂Q2/∂p2), m³/(s·Pa).
    fn flow_slopes(&self, p1: f64, p2: f64, kappa: f64) -> (f64, f64) {
        let (ai, ao) = self.valve_areas(kappa);
        let s = |area: f64, dp: f64| area * self.cd * orifice_speed_slope(dp, self.rho);
        (-s(ai, self.p_p - p1) - s(ao, p1 - self.p_t), -s(ao, self.p_p - p2) - s(ai, p2 - self.p_t))
    }

    /// ṗ1, ṗ2 (eq. 29), Pa/s.
    pub fn pressure_rates(&self, p1: f64, p2: f64, u: &Inputs) -> (f64, f64) {
        let (l1, l2) = self.chamber_lengths(u.s);
        let (q1, q2) = self.flows(p1, p2, u.kappa);
        (
            self.beta_e(p1) / (self.a_p * l1) * (self.a_p * u.s_dot + q1),
            self.beta_e(p2) / (self.a_p * l2) * (-self.a_p * u.s_dot + q2),
        )
    }

    /// ∂(ṗ1, ṗ2)/∂(p1, p2): diagonal (eqs. 36–37, plus the dβ/dp term the paper neglects).
    pub fn pressure_jacobian(&self, p1: f64, p2: f64, u: &Inputs) -> (f64, f64) {
        let (l1, l2) = self.chamber_lengths(u.s);
        let (q1, q2) = self.flows(p1, p2, u.kappa);
        let (dq1, dq2) = self.flow_slopes(p1, p2, u.kappa);
        let ((b1, db1), (b2, db2)) = (self.beta_eff(p1), self.beta_eff(p2));
        (
            (db1 * (self.a_p * u.s_dot + q1) + b1 * dq1) / (self.a_p * l1),
            (db2 * (-self.a_p * u.s_dot + q2) + b2 * dq2) / (self.a_p * l2),
        )
    }

    /// Actuator force F = (p2 − p1) A − c ṡ (eq. 28), N.
    pub fn force(&self, p1: f64, p2: f64, s_dot: f64) -> f64 {
        (p2 - p1) * self.a_p - self.c * s_dot
    }

    /// Static equilibrium for the load `f_static` (N): eq. 32, F = (p2 − p1) A, h1 = h2 = 0.
    ///
    /// With ṡ = 0 and p_T < p_i < p_P, h1 = 0 and h2 = 0 give κ²(p_P − p1) = (1−κ)²(p1 − p_T) and
    /// (1−κ)²(p_P − p2) = κ²(p2 − p_T). With r = κ²/(1−κ)²: p1 = (r p_P + p_T)/(1 + r),
    /// p2 = (p_P + r p_T)/(1 + r), so p2 − p1 = (p_P − p_T)(1 − r)/(1 + r) = F/A fixes r, and
    /// κ = √r/(1 + √r). The solution is exact (no iteration).
    pub fn equilibrium(&self, f_static: f64) -> Result<Equilibrium, String> {
        let d = f_static / (self.a_p * (self.p_p - self.p_t));
        if d.is_nan() || d.abs() >= 1.0 || self.p_p <= self.p_t {
            return Err(format!(
                "no static equilibrium: F_static = {f_static} N needs |p2 - p1| = {} Pa, more than p_P - p_T = {} Pa",
                f_static / self.a_p,
                self.p_p - self.p_t
            ));
        }
        let r = (1.0 - d) / (1.0 + d);
        let sr = r.sqrt();
        Ok(Equilibrium {
            p1: (r * self.p_p + self.p_t) / (1.0 + r),
            p2: (self.p_p + r * self.p_t) / (1.0 + r),
            kappa: sr / (1.0 + sr),
        })
    }

    /// Checks the parameters; the message names the bad one.
    pub fn check(&self) -> Result<(), String> {
        let positive = [
            ("a_p", self.a_p),
            ("l", self.l),
            ("cd", self.cd),
            ("rho", self.rho),
            ("a", self.a),
            ("a_v", self.a_v),
            ("p_P", self.p_p),
        ];
        for (name, v) in positive {
            if v.is_nan() || v <= 0.0 {
                return Err(format!("parameter {name} = {v} must be positive"));
            }
        }
        if self.p_t >= self.p_p {
            return Err(format!("tank pressure p_T = {} must be below pump pressure p_P = {}", self.p_t, self.p_p));
        }
        if self.c < 0.0 {
            return Err(format!("parameter c = {} must be >= 0", self.c));
        }
        self.cavitation.check()
    }
}

/// The pressure ODE with its inputs as polynomials in τ.
pub struct NayaOde<'a> {
    /// Parameters.
    pub circuit: &'a Naya,
    /// Actuator length s(τ).
    pub s: &'a InputSignal,
    /// Actuator velocity ṡ(τ).
    pub s_dot: &'a InputSignal,
    /// Spool position κ(τ).
    pub kappa: &'a InputSignal,
}

impl NayaOde<'_> {
    /// The inputs at τ.
    pub fn inputs(&self, tau: f64) -> Inputs {
        Inputs { s: self.s.at(tau), s_dot: self.s_dot.at(tau), kappa: self.kappa.at(tau) }
    }
}

impl Ode<2> for NayaOde<'_> {
    type Point = Inputs;
    fn point(&self, tau: f64) -> Inputs {
        self.inputs(tau)
    }
    fn f_at(&self, u: &Inputs, x: &SVector<f64, 2>) -> SVector<f64, 2> {
        let (d1, d2) = self.circuit.pressure_rates(x[0], x[1], u);
        SVector::<f64, 2>::new(d1, d2)
    }
    fn jacobian_at(&self, u: &Inputs, x: &SVector<f64, 2>) -> SMatrix<f64, 2, 2> {
        let (j1, j2) = self.circuit.pressure_jacobian(x[0], x[1], u);
        SMatrix::<f64, 2, 2>::new(j1, 0.0, 0.0, j2)
    }
    fn admissible(&self, x: &SVector<f64, 2>) -> bool {
        self.circuit.cavitation.strict || (x[0] > 0.0 && x[1] > 0.0)
    }
    fn rescues(&self) -> bool {
        !self.circuit.cavitation.strict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equilibrium_reproduces_seed_004_and_solves_eq_32() {
        let n = Naya::default();
        let e = n.equilibrium(6867.0).unwrap();
        assert!((e.p1 - 3.3218e6).abs() < 100.0, "p1 = {}", e.p1);
        assert!((e.p2 - 4.3782e6).abs() < 100.0, "p2 = {}", e.p2);
        assert!((e.kappa - 0.46461).abs() < 1e-5, "kappa = {}", e.kappa);
        let u = Inputs { s: n.s0, s_dot: 0.0, kappa: e.kappa };
        let (h1, h2) = n.pressure_rates(e.p1, e.p2, &u);
        assert!(h1.abs() < 1e-3 && h2.abs() < 1e-3, "h1 = {h1}, h2 = {h2}");
        assert!((n.force(e.p1, e.p2, 0.0) - 6867.0).abs() < 1e-6);
        assert!(n.equilibrium(1e6).is_err());
    }

    #[test]
    fn jacobian_matches_finite_differences() {
        let n = Naya::default();
        let u = Inputs { s: 0.52, s_dot: 0.01, kappa: 0.4 };
        let (p1, p2) = (3.0e6, 4.5e6);
        let (j1, j2) = n.pressure_jacobian(p1, p2, &u);
        let dp = 10.0;
        let fd1 = (n.pressure_rates(p1 + dp, p2, &u).0 - n.pressure_rates(p1 - dp, p2, &u).0) / (2.0 * dp);
        let fd2 = (n.pressure_rates(p1, p2 + dp, &u).1 - n.pressure_rates(p1, p2 - dp, &u).1) / (2.0 * dp);
        assert!((j1 - fd1).abs() < 1e-6 * fd1.abs(), "{j1} vs {fd1}");
        assert!((j2 - fd2).abs() < 1e-6 * fd2.abs(), "{j2} vs {fd2}");
        // Cross terms vanish: ṗ1 does not depend on p2.
        assert_eq!(n.pressure_rates(p1, p2 + 1e5, &u).0, n.pressure_rates(p1, p2, &u).0);
    }

    #[test]
    fn bulk_modulus_of_eq_3() {
        let n = Naya::default();
        // At p = 0: β = 1/a.
        assert!((n.beta(0.0) - 1.0 / 6.53e-10).abs() < 1.0);
        let p = 4e6;
        let fd = (n.beta(p + 1.0) - n.beta(p - 1.0)) / 2.0;
        assert!((n.beta_slope(p) - fd).abs() < 1e-6);
    }
}
