//! Three-volume hydraulic circuit of Publication III (Rahikainen, González, Naya 2019; seed 000
//! §3.2, eqs. 20–31, Table 2): pump and tank at constant pressure, a 4/3 directional valve with
//! first-order spool dynamics, a throttle on the piston side and a double-acting cylinder with
//! end dampers.
//!
//! Volumes: V1 = piston-side chamber + hose 1, V2 = rod-side chamber + hose 2, V3 = hose 3
//! between the directional valve and the throttle. Flows: Q_V3 valve → V3, Q31 V3 → V1 through
//! the throttle, Q2V V2 → valve.
//!
//! Two printed typos are corrected (seed DIGEST §1.1): the chamber lengths are
//! l1 = l10 + (s − s0), l2 = l20 − (s − s0) (chamber 1 expands when the actuator extends, as
//! eq. 20 and the end dampers of eq. 31 require), and B_e2 (eq. 24) uses A2 l2, not A2 l1.

use crate::cavitation::Cavitation;
use crate::integrator::Ode;
use crate::orifice::Orifice;
use fmu_export::InputSignal;
use nalgebra::{SMatrix, SVector};
use std::f64::consts::PI;

/// Circuit parameters (SI units). Defaults: Publication III Table 2, except where a field says
/// otherwise (project defaults of SPEC §3.6 for values the paper leaves out).
#[derive(Debug, Clone, PartialEq)]
pub struct Lumped3 {
    /// Piston diameter d1 (m), Table 2: 80 mm.
    pub d1: f64,
    /// Piston-rod diameter d2 (m), Table 2: 35 mm.
    pub d2: f64,
    /// Piston-side chamber length at s = s0, l10 (m), Table 2: 0.05 m. (Stroke l = l10 + l20 = 0.3 m.)
    pub l10: f64,
    /// Rod-side chamber length at s = s0, l20 (m), Table 2: 0.25 m.
    pub l20: f64,
    /// Initial actuator length s0 (m), Table 2: 0.5 m.
    pub s0: f64,
    /// End damper length l_d (m), eq. 31, Table 2: 0.008 m.
    pub l_d: f64,
    /// End damper spring coefficient k_d (N/m), eq. 31, Table 2: 1e7 N/m.
    pub k_d: f64,
    /// End damper damping coefficient c_d (N·s/m), eq. 31, Table 2: 5e3 N·s/m.
    pub c_damp: f64,
    /// Viscous friction coefficient c (N·s/m), eq. 30. Not in the paper: SPEC §3.6 project
    /// default 1e5 N·s/m (the value of seeds 001 §A.4 and 004 for this crane's cylinder).
    pub c: f64,
    /// Fluid density ρ (kg/m³), Table 2: 850.
    pub rho: f64,
    /// Oil bulk modulus B_o (Pa), eqs. 23–25, Table 2: 1500 MPa.
    pub b_o: f64,
    /// Cylinder bulk modulus B_c (Pa), eqs. 23–24, Table 2: 31 500 MPa.
    pub b_c: f64,
    /// Hose bulk modulus B_h (Pa), eqs. 23–25, Table 2: 150 MPa.
    pub b_h: f64,
    /// Volume of hose 1, V_h1 (m³), Table 2: 3.14e-5.
    pub v_h1: f64,
    /// Volume of hose 2, V_h2 (m³), Table 2: 7.85e-5.
    pub v_h2: f64,
    /// Volume of hose 3, V_h3 = V3 (m³), Table 2: 7.85e-7.
    pub v_h3: f64,
    /// Tank pressure p_T (Pa), Table 2: 0.1 MPa.
    pub p_t: f64,
    /// Pump pressure p_P (Pa), Table 2: 7.6 MPa.
    pub p_p: f64,
    /// Throttle discharge coefficient C_d, Table 2: 0.8 (C_t = C_d A_t √(2/ρ), §3.2.1).
    pub cd: f64,
    /// Throttle area A_t (m²). Not in the paper: SPEC §3.6 project default π (3 mm)²/4.
    pub a_t: f64,
    /// Semi-empirical coefficient of the directional valve C_v (m³/(s·V·√Pa)), eq. 27,
    /// Table 2: 1.069e-8.
    pub cv: f64,
    /// Spool frequency at −45° phase shift f₋₄₅ (Hz), eq. 29, Table 2: 35 Hz.
    pub f45: f64,
    /// Half-width of the laminar region of the valve laws Δp_L (Pa), §3.2.1: 2 bar.
    pub dp_lam: f64,
    /// Low-pressure law of V1, V2, V3 below the cavitation pressure ([`crate::cavitation`]).
    pub cavitation: Cavitation,
}

impl Default for Lumped3 {
    fn default() -> Self {
        Self {
            d1: 0.080,
            d2: 0.035,
            l10: 0.05,
            l20: 0.25,
            s0: 0.5,
            l_d: 0.008,
            k_d: 1e7,
            c_damp: 5e3,
            c: 1e5,
            rho: 850.0,
            b_o: 1500e6,
            b_c: 31_500e6,
            b_h: 150e6,
            v_h1: 3.14e-5,
            v_h2: 7.85e-5,
            v_h3: 7.85e-7,
            p_t: 0.1e6,
            p_p: 7.6e6,
            cd: 0.8,
            a_t: PI * 0.003 * 0.003 / 4.0,
            cv: 1.069e-8,
            f45: 35.0,
            dp_lam: 2e5,
            cavitation: Cavitation::default(),
        }
    }
}

/// Inputs at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// Actuator length s (m).
    pub s: f64,
    /// Actuator velocity ṡ (m/s).
    pub s_dot: f64,
    /// Valve reference U_ref (V), −10…10.
    pub u_ref: f64,
}

/// The three valve flows (m³/s), positive in the directions of Publication III Fig. 7.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flows {
    /// Q31: V3 → V1 through the throttle.
    pub q31: f64,
    /// Q_V3: directional valve → V3.
    pub qv3: f64,
    /// Q2V: V2 → directional valve.
    pub q2v: f64,
}

/// What eqs. 20–30 need that depends on the parameters only (A1, A2, C_t, τ, the oil term of
/// eqs. 23–25, B_e3/V3, √Δp_L), evaluated once per communication step instead of at every
/// right-hand-side evaluation. Every value is computed exactly as the accessor that defines it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constants {
    /// A1 (m²), [`Lumped3::a1`].
    pub a1: f64,
    /// A2 (m²), [`Lumped3::a2`].
    pub a2: f64,
    /// C_t (m³/(s·√Pa)), [`Lumped3::c_t`].
    pub c_t: f64,
    /// τ (s), [`Lumped3::tau`].
    pub tau: f64,
    /// 1/B_o (1/Pa), eqs. 23–25.
    oil: f64,
    /// B_e3/V3 (Pa/m³), eqs. 22, 25: independent of s.
    k3: f64,
    /// 1/B_c (1/Pa), eqs. 23–24.
    inv_b_c: f64,
    /// V_h1/B_h, V_h2/B_h (m³/Pa), eqs. 23–24.
    vh_b_h: [f64; 2],
    orifice: Orifice,
}

/// The hydraulic stiffnesses B_ei/V_i of eqs. 20–22 at one s and the bulk moduli B_ei they
/// come from (the cavitation law needs the liquid's modulus).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gains {
    /// B_e1/V1, B_e2/V2, B_e3/V3 (Pa/m³).
    pub k: [f64; 3],
    /// B_e1, B_e2, B_e3 (Pa).
    pub b: [f64; 3],
}

impl Constants {
    /// (g(Δp), dg/dΔp) of the orifice law ([`crate::orifice::orifice`],
    /// [`crate::orifice::orifice_slope`]) with this circuit's laminar band.
    #[inline]
    pub fn orifice_g_and_slope(&self, dp: f64) -> (f64, f64) {
        self.orifice.g_and_slope(dp)
    }

    /// Half-width of the laminar band Δp_L (Pa).
    #[inline]
    pub fn dp_lam(&self) -> f64 {
        self.orifice.dp_lam
    }
}

/// Index of a state in the state vector x = [p1, p2, p3, U].
pub mod idx {
    /// Piston-side pressure p1 (Pa).
    pub const P1: usize = 0;
    /// Rod-side pressure p2 (Pa).
    pub const P2: usize = 1;
    /// Pressure p3 between valve and throttle (Pa).
    pub const P3: usize = 2;
    /// Spool position U (V).
    pub const U: usize = 3;
}

impl Lumped3 {
    /// Piston-side area A1 = π d1²/4 (m²).
    pub fn a1(&self) -> f64 {
        PI * self.d1 * self.d1 / 4.0
    }

    /// Rod-side (annulus) area A2 = π (d1² − d2²)/4 (m²).
    pub fn a2(&self) -> f64 {
        PI * (self.d1 * self.d1 - self.d2 * self.d2) / 4.0
    }

    /// Spool time constant τ = 1/(2π f₋₄₅) (s), eq. 29.
    pub fn tau(&self) -> f64 {
        1.0 / (2.0 * PI * self.f45)
    }

    /// Throttle coefficient C_t = C_d A_t √(2/ρ) (m³/(s·√Pa)), §3.2.1.
    pub fn c_t(&self) -> f64 {
        self.cd * self.a_t * (2.0 / self.rho).sqrt()
    }

    /// Chamber lengths l1 = l10 + (s − s0), l2 = l20 − (s − s0) (m): Publication I eq. 50 with
    /// the signs corrected (DIGEST §1.1). Beyond a stroke end (the piston position is the
    /// mechanism's) a chamber keeps its length 0, i.e. only its dead volume V_h; the FMU warns
    /// ([`Self::stroke_positions`] are the unclamped lengths).
    #[inline]
    pub fn chamber_lengths(&self, s: f64) -> (f64, f64) {
        let (l1, l2) = self.stroke_positions(s);
        // `l <= 0.0` is false for NaN, which passes through.
        (if l1 <= 0.0 { 0.0 } else { l1 }, if l2 <= 0.0 { 0.0 } else { l2 })
    }

    /// Unclamped l1, l2 (m): negative beyond the lower (l1) or upper (l2) stroke end.
    #[inline]
    pub fn stroke_positions(&self, s: f64) -> (f64, f64) {
        (self.l10 + (s - self.s0), self.l20 - (s - self.s0))
    }

    /// Volumes V1 = V_h1 + A1 l1, V2 = V_h2 + A2 l2, V3 = V_h3 (m³), Publication I eq. 51.
    pub fn volumes(&self, s: f64) -> [f64; 3] {
        let (l1, l2) = self.chamber_lengths(s);
        [self.v_h1 + self.a1() * l1, self.v_h2 + self.a2() * l2, self.v_h3]
    }

    /// Effective bulk moduli B_e1, B_e2, B_e3 (Pa), eqs. 23–25 (B_e2 with A2 l2: the fix).
    pub fn bulk_moduli(&self, s: f64) -> [f64; 3] {
        let (l1, l2) = self.chamber_lengths(s);
        let [v1, v2, _] = self.volumes(s);
        let oil = 1.0 / self.b_o;
        [
            1.0 / (oil + self.a1() * l1 / (v1 * self.b_c) + self.v_h1 / (v1 * self.b_h)),
            1.0 / (oil + self.a2() * l2 / (v2 * self.b_c) + self.v_h2 / (v2 * self.b_h)),
            1.0 / (oil + 1.0 / self.b_h),
        ]
    }

    /// Hydraulic stiffnesses B_ei/V_i (Pa/m³), the factors of eqs. 20–22. They depend on s only.
    pub fn gains(&self, s: f64) -> [f64; 3] {
        let b = self.bulk_moduli(s);
        let v = self.volumes(s);
        [b[0] / v[0], b[1] / v[1], b[2] / v[2]]
    }

    /// The parameter-only coefficients (see [`Constants`]).
    pub fn constants(&self) -> Constants {
        let oil = 1.0 / self.b_o;
        Constants {
            a1: self.a1(),
            a2: self.a2(),
            c_t: self.c_t(),
            tau: self.tau(),
            oil,
            k3: 1.0 / (oil + 1.0 / self.b_h) / self.v_h3,
            inv_b_c: 1.0 / self.b_c,
            vh_b_h: [self.v_h1 / self.b_h, self.v_h2 / self.b_h],
            orifice: Orifice::new(self.dp_lam),
        }
    }

    /// [`gains`](Self::gains) with the constants evaluated (eqs. 20–25), equal to round-off:
    /// B_e1/V1 = 1/(V1/B_o + A1 l1/B_c + V_h1/B_h) is eq. 23 divided by V1, one division per
    /// gain instead of four (they are evaluated at every time point of the integrator).
    pub fn gains_with(&self, c: &Constants, s: f64) -> Gains {
        let (l1, l2) = self.chamber_lengths(s);
        let (v1, v2) = (self.v_h1 + c.a1 * l1, self.v_h2 + c.a2 * l2);
        let k1 = 1.0 / (v1 * c.oil + c.a1 * l1 * c.inv_b_c + c.vh_b_h[0]);
        let k2 = 1.0 / (v2 * c.oil + c.a2 * l2 * c.inv_b_c + c.vh_b_h[1]);
        Gains { k: [k1, k2, c.k3], b: [k1 * v1, k2 * v2, c.k3 * self.v_h3] }
    }

    /// The gains with the cavitation law applied to V1, V2, V3 ([`Cavitation::modulus`]):
    /// k_i β_e(p_i)/B_ei, and d/dp_i of it, or the gains unchanged (and `None`) when every
    /// pressure is at or above the cavitation pressure (or the law is off): the common case is
    /// three comparisons.
    #[inline]
    pub fn cavitating_gains(&self, g: &Gains, x: &SVector<f64, 4>) -> ([f64; 3], Option<[f64; 3]>) {
        let cav = &self.cavitation;
        if !(cav.active(x[idx::P1]) || cav.active(x[idx::P2]) || cav.active(x[idx::P3])) {
            return (g.k, None);
        }
        let (mut k, mut dk) = (g.k, [0.0; 3]);
        for i in 0..3 {
            if cav.active(x[i]) {
                // B_ei does not depend on p_i: k_i β_e/B_ei, d/dp = k_i β_e'/B_ei.
                let (b, db) = cav.modulus(g.b[i], 0.0, x[i]);
                k[i] = g.k[i] * (b / g.b[i]);
                dk[i] = g.k[i] * (db / g.b[i]);
            }
        }
        (k, Some(dk))
    }

    /// d(B_ei/V_i)/ds (Pa/m⁴): how the hydraulic stiffnesses of eqs. 20–22 change with the
    /// actuator length (l̇1 = ṡ, l̇2 = −ṡ, so dV1/ds = A1, dV2/ds = −A2; V3 is fixed). From eqs.
    /// 23–24: d(1/B_e1)/ds = A1 V_h1/V1² (1/B_c − 1/B_h), d(1/B_e2)/ds = −A2 V_h2/V2² (1/B_c − 1/B_h).
    /// Used by the unified solver's tangent (∂h/∂q).
    pub fn gains_slope(&self, s: f64) -> [f64; 3] {
        let b = self.bulk_moduli(s);
        let [v1, v2, _] = self.volumes(s);
        let (a1, a2) = (self.a1(), self.a2());
        let soft = 1.0 / self.b_c - 1.0 / self.b_h;
        let db1 = -b[0] * b[0] * a1 * self.v_h1 / (v1 * v1) * soft;
        let db2 = b[1] * b[1] * a2 * self.v_h2 / (v2 * v2) * soft;
        [db1 / v1 - b[0] * a1 / (v1 * v1), db2 / v2 + b[1] * a2 / (v2 * v2), 0.0]
    }

    /// Valve flows for the state x = [p1, p2, p3, U] (eqs. 26–27 with the laminar region).
    ///
    /// Port mapping of the 4/3 valve (DIGEST §1.1, confirmed by Publication II eq. 33):
    /// U ≥ 0: P → V3 and V2 → T, Q_V3 = C_v U g(p_P − p3), Q2V = C_v U g(p2 − p_T);
    /// U < 0: V3 → T and P → V2, Q_V3 = C_v U g(p3 − p_T), Q2V = C_v U g(p_P − p2);
    /// throttle Q31 = C_t g(p3 − p1), with g = [`crate::orifice::orifice`]. Both branches vanish at U = 0.
    pub fn flows(&self, x: &SVector<f64, 4>) -> Flows {
        self.flows_with(&self.constants(), x)
    }

    /// [`flows`](Self::flows) with the constants evaluated.
    #[inline]
    pub fn flows_with(&self, c: &Constants, x: &SVector<f64, 4>) -> Flows {
        let (p1, p2, p3, u) = (x[idx::P1], x[idx::P2], x[idx::P3], x[idx::U]);
        let g = |dp: f64| c.orifice.g(dp);
        let (qv3, q2v) = if u >= 0.0 {
            (self.cv * u * g(self.p_p - p3), self.cv * u * g(p2 - self.p_t))
        } else {
            (self.cv * u * g(p3 - self.p_t), self.cv * u * g(self.p_p - p2))
        };
        Flows { q31: c.c_t * g(p3 - p1), qv3, q2v }
    }

    /// Q31 of [`flows`](Self::flows) alone, the same arithmetic (one square root instead of the
    /// constants' and all three flows').
    pub fn throttle_flow(&self, x: &SVector<f64, 4>) -> f64 {
        self.c_t() * Orifice::new(self.dp_lam).g(x[idx::P3] - x[idx::P1])
    }

    /// Q_V3 of [`flows`](Self::flows) alone, the same arithmetic.
    pub fn valve_flow_v3(&self, x: &SVector<f64, 4>) -> f64 {
        let (p3, u) = (x[idx::P3], x[idx::U]);
        let o = Orifice::new(self.dp_lam);
        self.cv * u * o.g(if u >= 0.0 { self.p_p - p3 } else { p3 - self.p_t })
    }

    /// Q2V of [`flows`](Self::flows) alone, the same arithmetic.
    pub fn valve_flow_2v(&self, x: &SVector<f64, 4>) -> f64 {
        let (p2, u) = (x[idx::P2], x[idx::U]);
        let o = Orifice::new(self.dp_lam);
        self.cv * u * o.g(if u >= 0.0 { p2 - self.p_t } else { self.p_p - p2 })
    }

    /// ẋ = [ṗ1, ṗ2, ṗ3, U̇]: eqs. 20–22 and the spool law U̇ = (U_ref − U)/τ (eq. 28).
    pub fn rates(&self, x: &SVector<f64, 4>, u: &Inputs) -> SVector<f64, 4> {
        let c = self.constants();
        self.rates_with(&c, &self.gains_with(&c, u.s), x, u.s_dot, u.u_ref)
    }

    /// [`rates`](Self::rates) with the constants and the gains B_ei/V_i at s evaluated (they
    /// depend on the inputs only, so a Newton iteration reuses them).
    #[inline]
    pub fn rates_with(&self, c: &Constants, g: &Gains, x: &SVector<f64, 4>, s_dot: f64, u_ref: f64) -> SVector<f64, 4> {
        let [k1, k2, k3] = self.cavitating_gains(g, x).0;
        let q = self.flows_with(c, x);
        SVector::<f64, 4>::new(
            k1 * (q.q31 - c.a1 * s_dot),
            k2 * (c.a2 * s_dot - q.q2v),
            k3 * (q.qv3 - q.q31),
            (u_ref - x[idx::U]) / c.tau,
        )
    }

    /// Analytic ∂ẋ/∂x of [`rates`](Self::rates). The bulk moduli and volumes depend on s only,
    /// so only the flows contribute. At U = 0 it is the derivative of the U ≥ 0 branch. Below
    /// the cavitation pressure the gain of a volume depends on its pressure too (the term
    /// d(k_i β_e/B_ei)/dp_i times the volume balance, which involves ṡ).
    pub fn jacobian(&self, x: &SVector<f64, 4>, u: &Inputs) -> SMatrix<f64, 4, 4> {
        let c = self.constants();
        self.jacobian_with(&c, &self.gains_with(&c, u.s), x, u.s_dot)
    }

    /// [`jacobian`](Self::jacobian) with the constants and gains evaluated.
    pub fn jacobian_with(&self, c: &Constants, g: &Gains, x: &SVector<f64, 4>, s_dot: f64) -> SMatrix<f64, 4, 4> {
        let (k, dk) = self.cavitating_gains(g, x);
        let k = &k;
        let (p1, p2, p3, v) = (x[idx::P1], x[idx::P2], x[idx::P3], x[idx::U]);
        let o = &c.orifice;
        // ∂Q31/∂p3 = −∂Q31/∂p1.
        let d31 = c.c_t * o.g_and_slope(p3 - p1).1;
        // ∂Q_V3/∂p3, ∂Q_V3/∂U, ∂Q2V/∂p2, ∂Q2V/∂U.
        let (dv3_p3, dv3_u, d2v_p2, d2v_u) = if v >= 0.0 {
            let (g3, s3) = o.g_and_slope(self.p_p - p3);
            let (g2, s2) = o.g_and_slope(p2 - self.p_t);
            (-self.cv * v * s3, self.cv * g3, self.cv * v * s2, self.cv * g2)
        } else {
            let (g3, s3) = o.g_and_slope(p3 - self.p_t);
            let (g2, s2) = o.g_and_slope(self.p_p - p2);
            (self.cv * v * s3, self.cv * g3, -self.cv * v * s2, self.cv * g2)
        };
        let mut j = Self::assemble_jacobian(c, k, d31, [dv3_p3, dv3_u, d2v_p2, d2v_u]);
        if let Some(dk) = dk {
            Self::add_cavitation_terms(c, &mut j, &dk, &self.flows_with(c, x), s_dot);
        }
        j
    }

    /// The diagonal terms of the cavitation law: d(k_i)/dp_i times the volume balances of eqs.
    /// 20–22 (Q31 − A1 ṡ, A2 ṡ − Q2V, Q_V3 − Q31).
    #[cold]
    fn add_cavitation_terms(c: &Constants, j: &mut SMatrix<f64, 4, 4>, dk: &[f64; 3], q: &Flows, s_dot: f64) {
        j[(idx::P1, idx::P1)] += dk[0] * (q.q31 - c.a1 * s_dot);
        j[(idx::P2, idx::P2)] += dk[1] * (c.a2 * s_dot - q.q2v);
        j[(idx::P3, idx::P3)] += dk[2] * (q.qv3 - q.q31);
    }

    /// The Jacobian's non-zero entries from the gains, ∂Q31/∂p1 (`d31`) and the valve slopes
    /// [∂Q_V3/∂p3, ∂Q_V3/∂U, ∂Q2V/∂p2, ∂Q2V/∂U].
    fn assemble_jacobian(c: &Constants, k: &[f64; 3], d31: f64, valve: [f64; 4]) -> SMatrix<f64, 4, 4> {
        let [k1, k2, k3] = *k;
        let [dv3_p3, dv3_u, d2v_p2, d2v_u] = valve;
        let mut j = SMatrix::<f64, 4, 4>::zeros();
        j[(idx::P1, idx::P1)] = -k1 * d31;
        j[(idx::P1, idx::P3)] = k1 * d31;
        j[(idx::P2, idx::P2)] = -k2 * d2v_p2;
        j[(idx::P2, idx::U)] = -k2 * d2v_u;
        j[(idx::P3, idx::P1)] = k3 * d31;
        j[(idx::P3, idx::P3)] = k3 * (dv3_p3 - d31);
        j[(idx::P3, idx::U)] = k3 * dv3_u;
        j[(idx::U, idx::U)] = -1.0 / c.tau;
        j
    }

    /// [`rates_with`](Self::rates_with) and [`jacobian_with`](Self::jacobian_with) at the same
    /// state, each valve edge's g(Δp) and slope from one square root: the same values.
    pub fn rates_and_jacobian_with(
        &self,
        c: &Constants,
        g: &Gains,
        x: &SVector<f64, 4>,
        s_dot: f64,
        u_ref: f64,
    ) -> (SVector<f64, 4>, SMatrix<f64, 4, 4>) {
        let (p1, p2, p3, v) = (x[idx::P1], x[idx::P2], x[idx::P3], x[idx::U]);
        let (k, dk) = self.cavitating_gains(g, x);
        let [k1, k2, k3] = k;
        let o = &c.orifice;
        let (g31, s31) = o.g_and_slope(p3 - p1);
        // Eqs. 26–27 (see `flows`) and their slopes; the valve edge pair by the spool sign.
        let (qv3, q2v, dv3_p3, dv3_u, d2v_p2, d2v_u) = if v >= 0.0 {
            let (g3, s3) = o.g_and_slope(self.p_p - p3);
            let (g2, s2) = o.g_and_slope(p2 - self.p_t);
            (self.cv * v * g3, self.cv * v * g2, -self.cv * v * s3, self.cv * g3, self.cv * v * s2, self.cv * g2)
        } else {
            let (g3, s3) = o.g_and_slope(p3 - self.p_t);
            let (g2, s2) = o.g_and_slope(self.p_p - p2);
            (self.cv * v * g3, self.cv * v * g2, self.cv * v * s3, self.cv * g3, -self.cv * v * s2, self.cv * g2)
        };
        let q31 = c.c_t * g31;
        let rates = SVector::<f64, 4>::new(
            k1 * (q31 - c.a1 * s_dot),
            k2 * (c.a2 * s_dot - q2v),
            k3 * (qv3 - q31),
            (u_ref - v) / c.tau,
        );
        let d31 = c.c_t * s31;
        let mut j = Self::assemble_jacobian(c, &k, d31, [dv3_p3, dv3_u, d2v_p2, d2v_u]);
        if let Some(dk) = dk {
            Self::add_cavitation_terms(c, &mut j, &dk, &Flows { q31, qv3, q2v }, s_dot);
        }
        (rates, j)
    }

    /// Largest |λ| of [`jacobian`](Self::jacobian) at (x, u) (1/s), in closed form. The
    /// Jacobian is block triangular: U̇ depends on U alone, ṗ2 on (p2, U) and nothing else on p2,
    /// ṗ1 and ṗ3 on (p1, p3, U). So its eigenvalues are ∂U̇/∂U = −1/τ, ∂ṗ2/∂p2 and those of the
    /// (p1, p3) block [a b; c d]: tr/2 ± √((tr/2)² − det), or a complex pair of modulus √det.
    /// The same value as a Schur decomposition up to round-off, without one (it is the output
    /// `lambda_max`, evaluated after every communication step). Infinite when not finite.
    pub fn stiffest_eigenvalue(&self, x: &SVector<f64, 4>, u: &Inputs) -> f64 {
        Self::stiffest_eigenvalue_of(&self.jacobian(x, u))
    }

    /// [`stiffest_eigenvalue`](Self::stiffest_eigenvalue) with the constants and the gains at s
    /// evaluated: the same value.
    pub fn stiffest_eigenvalue_with(&self, c: &Constants, g: &Gains, x: &SVector<f64, 4>, s_dot: f64) -> f64 {
        Self::stiffest_eigenvalue_of(&self.jacobian_with(c, g, x, s_dot))
    }

    /// The closed form of [`stiffest_eigenvalue`](Self::stiffest_eigenvalue) for the Jacobian `j`.
    fn stiffest_eigenvalue_of(j: &SMatrix<f64, 4, 4>) -> f64 {
        if !j.iter().all(|v| v.is_finite()) {
            return f64::INFINITY;
        }
        let (a, b) = (j[(idx::P1, idx::P1)], j[(idx::P1, idx::P3)]);
        let (c, d) = (j[(idx::P3, idx::P1)], j[(idx::P3, idx::P3)]);
        let (half_trace, det) = (0.5 * (a + d), a * d - b * c);
        let disc = half_trace * half_trace - det;
        let pair = if disc >= 0.0 { half_trace.abs() + disc.sqrt() } else { det.sqrt() };
        if pair.is_nan() {
            // a d or (tr/2)² overflowed (huge parameters): as large as it gets.
            return f64::INFINITY;
        }
        pair.max(j[(idx::P2, idx::P2)].abs()).max(j[(idx::U, idx::U)].abs())
    }

    /// End-damper force F_d (N), eq. 31: k_d (l_d − l1) − c_d ṡ when l1 ≤ l_d,
    /// −k_d (l_d − l2) − c_d ṡ when l2 ≤ l_d, 0 otherwise.
    pub fn damper_force(&self, s: f64, s_dot: f64) -> f64 {
        let (l1, l2) = self.chamber_lengths(s);
        if l1 <= self.l_d {
            self.k_d * (self.l_d - l1) - self.c_damp * s_dot
        } else if l2 <= self.l_d {
            -self.k_d * (self.l_d - l2) - self.c_damp * s_dot
        } else {
            0.0
        }
    }

    /// dF_d/dt (N/s) for a smooth motion inside one damper region: −k_d ṡ − c_d s̈ in both
    /// dampers (l̇1 = ṡ, l̇2 = −ṡ), 0 outside.
    pub fn damper_force_rate(&self, s: f64, s_dot: f64, s_ddot: f64) -> f64 {
        let (l1, l2) = self.chamber_lengths(s);
        if l1 <= self.l_d || l2 <= self.l_d {
            -self.k_d * s_dot - self.c_damp * s_ddot
        } else {
            0.0
        }
    }

    /// Cylinder force F = p1 A1 − p2 A2 − c ṡ + F_d (N), eq. 30, along s (positive: extends).
    pub fn force(&self, p1: f64, p2: f64, s: f64, s_dot: f64) -> f64 {
        p1 * self.a1() - p2 * self.a2() - self.c * s_dot + self.damper_force(s, s_dot)
    }

    /// Static initial pressures (p1, p3) for the load `f_static` (N) and the chosen p2 (Pa):
    /// p1 A1 − p2 A2 = F0 at ṡ = 0 outside the dampers, p3 = p1 (no throttle flow), SPEC §3.6
    /// (Publication I eqs. 53–54 use the same rule).
    pub fn static_pressures(&self, f_static: f64, p2: f64) -> (f64, f64) {
        let p1 = (f_static + p2 * self.a2()) / self.a1();
        (p1, p1)
    }

    /// Checks the parameters; the message names the bad one.
    pub fn check(&self) -> Result<(), String> {
        let positive = [
            ("d_1", self.d1),
            ("l_10", self.l10),
            ("l_20", self.l20),
            ("rho", self.rho),
            ("B_o", self.b_o),
            ("B_c", self.b_c),
            ("B_h", self.b_h),
            ("V_h3", self.v_h3),
            ("f_45", self.f45),
            ("dp_lam", self.dp_lam),
            ("p_P", self.p_p),
        ];
        for (name, v) in positive {
            if v.is_nan() || v <= 0.0 {
                return Err(format!("parameter {name} = {v} must be positive"));
            }
        }
        let non_negative = [
            ("d_2", self.d2),
            ("l_damper", self.l_d),
            ("k_damper", self.k_d),
            ("c_damper", self.c_damp),
            ("c", self.c),
            ("V_h1", self.v_h1),
            ("V_h2", self.v_h2),
            ("p_T", self.p_t),
            ("C_d", self.cd),
            ("A_t", self.a_t),
            ("C_v", self.cv),
        ];
        for (name, v) in non_negative {
            if v.is_nan() || v < 0.0 {
                return Err(format!("parameter {name} = {v} must be >= 0"));
            }
        }
        if self.d2 >= self.d1 {
            return Err(format!("rod diameter d_2 = {} m must be below piston diameter d_1 = {} m", self.d2, self.d1));
        }
        if self.p_t >= self.p_p {
            return Err(format!(
                "tank pressure p_T = {} Pa must be below pump pressure p_P = {} Pa",
                self.p_t, self.p_p
            ));
        }
        self.cavitation.check()
    }
}

/// The circuit ODE with its inputs as polynomials in τ.
pub struct Lumped3Ode<'a> {
    /// Parameters.
    pub circuit: &'a Lumped3,
    /// The parameter-only coefficients of `circuit`.
    pub constants: Constants,
    /// Actuator length s(τ).
    pub s: &'a InputSignal,
    /// Actuator velocity ṡ(τ).
    pub s_dot: &'a InputSignal,
    /// Valve reference U_ref(τ).
    pub u_ref: &'a InputSignal,
    /// s, ṡ and U_ref with their coefficient divisions done once (evaluated at every time point).
    polys: [Poly; 3],
}

/// An input's Taylor polynomial ([`InputSignal::at`]) with the divisions by 2 and 6 of its
/// coefficients done once per communication step instead of at every evaluation: the same
/// value (only the sign of a zero may differ), without two divisions per evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Poly {
    value: f64,
    d1: f64,
    d2_half: f64,
    d3_sixth: f64,
    d4: f64,
}

impl Poly {
    fn new(u: &InputSignal) -> Self {
        let d = &u.derivatives;
        Self { value: u.value, d1: d[0], d2_half: d[1] / 2.0, d3_sixth: d[2] / 6.0, d4: d[3] }
    }

    /// [`InputSignal::at`]: the same Horner form; the fourth-order term (a division) only when
    /// its coefficient is not zero.
    #[inline]
    fn at(&self, tau: f64) -> f64 {
        let inner = if self.d4 == 0.0 { self.d3_sixth } else { self.d3_sixth + tau * self.d4 / 24.0 };
        self.value + tau * (self.d1 + tau * (self.d2_half + tau * inner))
    }
}

/// The inputs at one τ and the gains B_ei/V_i at s(τ): what [`Lumped3Ode`] evaluates once per
/// time point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lumped3Point {
    /// B_ei/V_i at s(τ) (Pa/m³).
    pub gains: Gains,
    /// The inputs at τ.
    pub inputs: Inputs,
}

impl<'a> Lumped3Ode<'a> {
    /// The ODE of `circuit` with these inputs.
    pub fn new(circuit: &'a Lumped3, s: &'a InputSignal, s_dot: &'a InputSignal, u_ref: &'a InputSignal) -> Self {
        let polys = [Poly::new(s), Poly::new(s_dot), Poly::new(u_ref)];
        Self { circuit, constants: circuit.constants(), s, s_dot, u_ref, polys }
    }

    /// The inputs at τ.
    pub fn inputs(&self, tau: f64) -> Inputs {
        let [s, s_dot, u_ref] = &self.polys;
        Inputs { s: s.at(tau), s_dot: s_dot.at(tau), u_ref: u_ref.at(tau) }
    }

    /// s(τ) alone (the same value as [`inputs`](Self::inputs)`(τ).s`).
    pub fn s_at(&self, tau: f64) -> f64 {
        self.polys[0].at(tau)
    }
}

impl Ode<4> for Lumped3Ode<'_> {
    type Point = Lumped3Point;
    #[inline]
    fn point(&self, tau: f64) -> Lumped3Point {
        let inputs = self.inputs(tau);
        Lumped3Point { gains: self.circuit.gains_with(&self.constants, inputs.s), inputs }
    }
    #[inline]
    fn f_at(&self, p: &Lumped3Point, x: &SVector<f64, 4>) -> SVector<f64, 4> {
        self.circuit.rates_with(&self.constants, &p.gains, x, p.inputs.s_dot, p.inputs.u_ref)
    }
    fn jacobian_at(&self, p: &Lumped3Point, x: &SVector<f64, 4>) -> SMatrix<f64, 4, 4> {
        self.circuit.jacobian_with(&self.constants, &p.gains, x, p.inputs.s_dot)
    }
    fn f_and_jacobian_at(&self, p: &Lumped3Point, x: &SVector<f64, 4>) -> (SVector<f64, 4>, SMatrix<f64, 4, 4>) {
        self.circuit.rates_and_jacobian_with(&self.constants, &p.gains, x, p.inputs.s_dot, p.inputs.u_ref)
    }
    fn admissible(&self, x: &SVector<f64, 4>) -> bool {
        self.circuit.cavitation.strict || (x[idx::P1] > 0.0 && x[idx::P2] > 0.0 && x[idx::P3] > 0.0)
    }
    fn rescues(&self) -> bool {
        !self.circuit.cavitation.strict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd_jacobian(c: &Lumped3, x: &SVector<f64, 4>, u: &Inputs) -> SMatrix<f64, 4, 4> {
        let mut j = SMatrix::<f64, 4, 4>::zeros();
        for col in 0..4 {
            // 1 Pa for the pressures, 1 µV for the spool.
            let d = if col == idx::U { 1e-6 } else { 1.0 };
            let mut xp = *x;
            let mut xm = *x;
            xp[col] += d;
            xm[col] -= d;
            let fd = (c.rates(&xp, u) - c.rates(&xm, u)) / (2.0 * d);
            j.set_column(col, &fd);
        }
        j
    }

    #[test]
    fn jacobian_matches_central_differences() {
        let c = Lumped3::default();
        // Generic states: valve opening and closing, turbulent and laminar throttle, moving piston.
        let cases = [
            ([4.6e6, 3.5e6, 5.3e6, 3.7], Inputs { s: 0.52, s_dot: 0.01, u_ref: 10.0 }),
            ([5.1e6, 2.2e6, 1.9e6, -6.2], Inputs { s: 0.61, s_dot: -0.03, u_ref: -10.0 }),
            // Throttle and rod-side valve edge inside the laminar region (|Δp| < 2 bar).
            ([4.0e6, 0.2e6, 4.05e6, 1.3], Inputs { s: 0.47, s_dot: 0.0, u_ref: 2.0 }),
            ([3.0e6, 7.5e6, 0.15e6, -0.4], Inputs { s: 0.7, s_dot: 0.002, u_ref: 0.0 }),
        ];
        for (x, u) in cases {
            let x = SVector::<f64, 4>::from(x);
            let j = c.jacobian(&x, &u);
            let fd = fd_jacobian(&c, &x, &u);
            for r in 0..4 {
                for k in 0..4 {
                    let (a, b) = (j[(r, k)], fd[(r, k)]);
                    assert!((a - b).abs() <= 1e-5 * b.abs() + 1e-9, "x = {x:?}: J[{r},{k}] = {a:e}, FD {b:e}");
                }
            }
        }
    }

    #[test]
    fn jacobian_matches_central_differences_below_the_cavitation_pressure() {
        let c = Lumped3::default();
        let cases = [
            ([1.5e3, 3.5e6, 2.9e3, 3.7], Inputs { s: 0.52, s_dot: 0.05, u_ref: 10.0 }),
            ([4.6e6, 2.0e2, 5.3e6, -6.2], Inputs { s: 0.61, s_dot: -0.03, u_ref: -10.0 }),
            ([2.5e3, 1.1e3, 0.8e3, 1.3], Inputs { s: 0.47, s_dot: 0.01, u_ref: 2.0 }),
        ];
        for (x, u) in cases {
            let x = SVector::<f64, 4>::from(x);
            let j = c.jacobian(&x, &u);
            for col in 0..4 {
                let d = if col == idx::U { 1e-6 } else { 1e-2 };
                let (mut xp, mut xm) = (x, x);
                xp[col] += d;
                xm[col] -= d;
                let fd = (c.rates(&xp, &u) - c.rates(&xm, &u)) / (2.0 * d);
                for r in 0..4 {
                    let (a, b) = (j[(r, col)], fd[r]);
                    assert!((a - b).abs() <= 1e-4 * b.abs() + 1e-6, "x = {x:?}: J[{r},{col}] = {a:e}, FD {b:e}");
                }
            }
            // The fused evaluation agrees bit for bit with the separate ones.
            let k = c.constants();
            let (f, jf) = c.rates_and_jacobian_with(&k, &c.gains_with(&k, u.s), &x, u.s_dot, u.u_ref);
            assert_eq!(f, c.rates(&x, &u));
            assert_eq!(jf, j);
        }
        // Above p_cav the law changes nothing; strict switches it off.
        let x = SVector::<f64, 4>::new(1.5e3, 3.5e6, 2.9e3, 3.7);
        let u = Inputs { s: 0.52, s_dot: 0.05, u_ref: 10.0 };
        let strict =
            Lumped3 { cavitation: crate::cavitation::Cavitation { strict: true, ..Default::default() }, ..c.clone() };
        assert_ne!(strict.rates(&x, &u)[idx::P1], c.rates(&x, &u)[idx::P1]);
        assert_eq!(strict.rates(&x, &u)[idx::P2], c.rates(&x, &u)[idx::P2]);
    }

    #[test]
    fn fused_rates_and_jacobian_are_bit_identical_to_the_separate_ones() {
        let c = Lumped3::default();
        let k = c.constants();
        for (x, u) in [
            ([4.6e6, 3.5e6, 5.3e6, 3.7], Inputs { s: 0.52, s_dot: 0.01, u_ref: 10.0 }),
            ([5.1e6, 2.2e6, 1.9e6, -6.2], Inputs { s: 0.61, s_dot: -0.03, u_ref: -10.0 }),
            ([4.0e6, 0.2e6, 4.05e6, 1.3], Inputs { s: 0.47, s_dot: 0.0, u_ref: 2.0 }),
            ([3.0e6, 7.5e6, 0.15e6, 0.0], Inputs { s: 0.7, s_dot: 0.002, u_ref: 0.0 }),
        ] {
            let x = SVector::<f64, 4>::from(x);
            let (f, j) = c.rates_and_jacobian_with(&k, &c.gains_with(&k, u.s), &x, u.s_dot, u.u_ref);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(f.as_slice()), bits(c.rates(&x, &u).as_slice()));
            assert_eq!(bits(j.as_slice()), bits(c.jacobian(&x, &u).as_slice()));
        }
    }

    #[test]
    fn closed_form_stiffest_eigenvalue_matches_the_schur_decomposition() {
        let c = Lumped3::default();
        let cases = [
            ([4.6e6, 3.5e6, 5.3e6, 3.7], Inputs { s: 0.52, s_dot: 0.01, u_ref: 10.0 }),
            ([5.1e6, 2.2e6, 1.9e6, -6.2], Inputs { s: 0.61, s_dot: -0.03, u_ref: -10.0 }),
            ([4.0e6, 0.2e6, 4.05e6, 1.3], Inputs { s: 0.47, s_dot: 0.0, u_ref: 2.0 }),
            ([3.0e6, 7.5e6, 0.15e6, -0.4], Inputs { s: 0.7, s_dot: 0.002, u_ref: 0.0 }),
            ([4.5866e6, 3.5e6, 4.5866e6, 0.0], Inputs { s: 0.5, s_dot: 0.0, u_ref: 0.0 }),
        ];
        for (x, u) in cases {
            let x = SVector::<f64, 4>::from(x);
            let (s, s_dot, u_ref) = (InputSignal::new(u.s), InputSignal::new(u.s_dot), InputSignal::new(u.u_ref));
            let schur = crate::integrator::stiffest_eigenvalue(&Lumped3Ode::new(&c, &s, &s_dot, &u_ref), 0.0, &x);
            let closed = c.stiffest_eigenvalue(&x, &u);
            assert!((closed - schur).abs() <= 1e-9 * schur, "x = {x:?}: {closed} vs Schur {schur}");
        }
    }

    #[test]
    fn gains_slope_matches_central_differences() {
        let c = Lumped3::default();
        for s in [0.46, 0.5, 0.62, 0.74] {
            let e = 1e-6;
            let (hi, lo) = (c.gains(s + e), c.gains(s - e));
            let slope = c.gains_slope(s);
            for i in 0..3 {
                let fd = (hi[i] - lo[i]) / (2.0 * e);
                assert!((fd - slope[i]).abs() <= 1e-6 * fd.abs().max(1.0), "s = {s}, i = {i}: {fd} vs {}", slope[i]);
            }
        }
    }

    #[test]
    fn single_flows_are_bit_identical_to_flows() {
        let c = Lumped3 { cv: 1.069e-8, ..Lumped3::default() };
        for x in [
            SVector::<f64, 4>::new(9.1e6, 3.5e6, 9.3e6, 4.0),
            SVector::<f64, 4>::new(9.1e6, 3.5e6, 9.0e6, -7.5),
            SVector::<f64, 4>::new(9.1e6, 3.5e6, 9.1e6 + 1e4, 0.0),
        ] {
            let q = c.flows(&x);
            assert_eq!(c.throttle_flow(&x).to_bits(), q.q31.to_bits());
            assert_eq!(c.valve_flow_v3(&x).to_bits(), q.qv3.to_bits());
            assert_eq!(c.valve_flow_2v(&x).to_bits(), q.q2v.to_bits());
        }
    }

    #[test]
    fn gains_with_constants_match_the_gains_to_round_off() {
        let c = Lumped3::default();
        let k = c.constants();
        for s in [c.s0 - 0.04, c.s0, c.s0 + 0.1, c.s0 + 0.24] {
            for (a, b) in c.gains_with(&k, s).k.iter().zip(c.gains(s)) {
                assert!((a - b).abs() <= 16.0 * f64::EPSILON * b.abs(), "s = {s}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn input_polynomials_match_the_input_signal() {
        for u in [
            InputSignal { value: 0.31, derivatives: [0.2, -3.0, 7.0, 0.0] },
            InputSignal { value: -1.5, derivatives: [1.0 / 3.0, 0.1, -0.7, 11.0] },
            InputSignal::new(2.0),
        ] {
            let p = Poly::new(&u);
            for tau in [0.0, 1e-4, 3e-4, 1e-3] {
                assert_eq!(p.at(tau), u.at(tau));
            }
        }
    }

    #[test]
    fn derived_values_match_the_digest() {
        let c = Lumped3::default();
        assert!((c.a1() - 5.0265e-3).abs() < 1e-7);
        assert!((c.a2() - 4.0644e-3).abs() < 1e-7);
        assert!((c.tau() - 4.547e-3).abs() < 1e-6);
        let v = c.volumes(c.s0);
        assert!((v[0] - 2.827e-4).abs() < 1e-7 && (v[1] - 1.0946e-3).abs() < 1e-7);
        let b = c.bulk_moduli(c.s0);
        assert!((b[0] - 0.697e9).abs() < 1e6, "B_e1 = {}", b[0]);
        assert!((b[2] - 0.136e9).abs() < 1e6, "B_e3 = {}", b[2]);
        assert!((c.a_t - 7.069e-6).abs() < 1e-9);
        // C_t = 0.8 · 7.069e-6 · √(2/850) = 2.743e-7 m³/(s·√Pa).
        assert!((c.c_t() - 2.743e-7).abs() < 1e-10);
        let (p1, p3) = c.static_pressures(8829.0, 3.5e6);
        assert!((p1 - 4.5866e6).abs() < 200.0 && p3 == p1, "p1 = {p1}");
        // Chamber lengths: extending by 1 cm lengthens chamber 1 and shortens chamber 2.
        let (l1, l2) = c.chamber_lengths(0.51);
        assert!((l1 - 0.06).abs() < 1e-12 && (l2 - 0.24).abs() < 1e-12);
    }

    #[test]
    fn valve_ports_follow_the_spool_sign() {
        let c = Lumped3::default();
        let x = |u: f64| SVector::<f64, 4>::new(4.6e6, 3.5e6, 4.6e6, u);
        let open = c.flows(&x(10.0));
        // P → V3 and V2 → T.
        assert!(open.qv3 > 0.0 && open.q2v > 0.0 && open.q31 == 0.0);
        assert!((open.qv3 - 1.069e-7 * 3.0e6f64.sqrt()).abs() < 1e-12);
        let back = c.flows(&x(-10.0));
        // V3 → T and P → V2.
        assert!(back.qv3 < 0.0 && back.q2v < 0.0);
        assert!((back.q2v + 1.069e-7 * 4.1e6f64.sqrt()).abs() < 1e-12);
        let closed = c.flows(&x(0.0));
        assert_eq!((closed.qv3, closed.q2v), (0.0, 0.0));
    }

    #[test]
    fn end_dampers_push_away_from_the_stroke_ends() {
        let c = Lumped3::default();
        assert_eq!(c.damper_force(c.s0, 0.3), 0.0);
        // l1 = 0.004 m: 1e7 · 0.004 = 40 kN pushing out, minus damping.
        let s_low = c.s0 - 0.046;
        assert!((c.damper_force(s_low, -0.1) - (4e4 + 500.0)).abs() < 1e-6);
        // l2 = 0.004 m: 40 kN pulling in.
        let s_high = c.s0 + 0.246;
        assert!((c.damper_force(s_high, 0.1) - (-4e4 - 500.0)).abs() < 1e-6);
        let ds = 1e-7;
        let rate = (c.damper_force(s_high + ds * 0.1, 0.1 + ds * 2.0) - c.damper_force(s_high, 0.1)) / ds;
        assert!((c.damper_force_rate(s_high, 0.1, 2.0) - rate).abs() < 1e-3 * rate.abs());
    }
}
