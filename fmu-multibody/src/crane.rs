//! The planar hydraulic crane of Publication III §3.1.1–3.1.2 (Rahikainen et al. 2019, in seed
//! 000; also seed 001 Appendix A.4), Table 1.
//!
//! Link 1 (O–Q, length L, mass m, uniform) is pinned at the origin O; P is its midpoint. Link 2
//! (Q–R, length L_h) is massless; point masses m_p at Q and m_h at R. Coordinates
//! q = [x_P, y_P, θ1, x_R, y_R] (Pub III §3.1.1) with the three constraints of eq. 16:
//!
//! Φ = [L cos θ1 − 2 x_P; L sin θ1 − 2 y_P; (x_R − L cos θ1)² + (y_R − L sin θ1)² − L_h²].
//!
//! Mass matrix (not printed in the paper; DIGEST §1.4): link 1 = its mass at its centre P plus
//! a slender-rod inertia m L²/12 about P (SPEC §3.6), m_p at Q = 2P, m_h at R:
//! M = diag(m + 4 m_p, m + 4 m_p, m L²/12, m_h, m_h); gravity Q_g = (0, −(m + 2 m_p) g, 0, 0, −m_h g).
//!
//! Cylinder 1 runs from the ground point B to P. The double-actuator crane (§3.1.2) adds
//! cylinder 2 from P to the midpoint of link 2, (Q + R)/2 = P + R/2, so that s2 = |R|/2 (its
//! vector is linear in q through Q = 2P, which the first two constraints enforce).

use crate::mechanism::{Actuator, Mechanism};
use nalgebra::{SMatrix, SVector, Vector2};
use std::cell::Cell;
use std::f64::consts::PI;

/// (sin θ, cos θ) of the last angle θ1 the crane evaluated, keyed by the bits of θ1.
///
/// A solver step evaluates Φ, Φ_q and Φ̇_q q̇ at the same positions several times (the Newton
/// update and the next iteration's Jacobian, the projections, the restart at the next
/// communication point, the constraint-violation outputs); each needs sin θ1 and cos θ1, a
/// library call on the critical path. The memo returns the very values `θ1.sin_cos()` gives, so
/// results are bit-identical. It is not a parameter: it compares equal, clones along and never
/// changes a result.
#[derive(Clone)]
pub struct SinCosMemo(Cell<(u64, f64, f64)>);

impl SinCosMemo {
    /// (sin θ, cos θ), from the memo when θ is the angle of the last call.
    #[inline]
    pub fn sin_cos(&self, theta: f64) -> (f64, f64) {
        let (bits, sn, cs) = self.0.get();
        if bits == theta.to_bits() {
            return (sn, cs);
        }
        let (sn, cs) = theta.sin_cos();
        self.0.set((theta.to_bits(), sn, cs));
        (sn, cs)
    }
}

impl Default for SinCosMemo {
    fn default() -> Self {
        // NaN: sin and cos of a NaN angle are NaN, so even that key returns the right values.
        Self(Cell::new((f64::NAN.to_bits(), f64::NAN, f64::NAN)))
    }
}

impl PartialEq for SinCosMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for SinCosMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SinCosMemo")
    }
}

/// Crane parameters (SI). Defaults: Publication III Table 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Crane {
    /// Length of link 1, L (m): 1.0.
    pub l: f64,
    /// Length of link 2, L_h (m): 0.5.
    pub l_h: f64,
    /// Mass of link 1, m (kg): 200.
    pub m: f64,
    /// Point mass at Q, m_p (kg): 250.
    pub m_p: f64,
    /// Point mass at R, m_h (kg): 100.
    pub m_h: f64,
    /// Fixed point B (m): (√3/2, 0).
    pub b: [f64; 2],
    /// Initial angle of link 1, θ1₀ (rad): π/6.
    pub theta1_0: f64,
    /// Initial (absolute) angle of link 2, θ2₀ (rad): 3π/2 (hanging).
    pub theta2_0: f64,
    /// Gravitational acceleration g (m/s²), along −y (Table 1 writes −9.81 m/s²): 9.81.
    pub g: f64,
    /// Whether cylinder 2 (P to the midpoint of link 2) exists: the double-actuator crane.
    pub double: bool,
    /// sin θ1 and cos θ1 of the last evaluation (not a parameter; see [`SinCosMemo`]).
    pub trig: SinCosMemo,
}

impl Default for Crane {
    fn default() -> Self {
        Self {
            l: 1.0,
            l_h: 0.5,
            m: 200.0,
            m_p: 250.0,
            m_h: 100.0,
            b: [3f64.sqrt() / 2.0, 0.0],
            theta1_0: PI / 6.0,
            theta2_0: 3.0 * PI / 2.0,
            g: 9.81,
            double: false,
            trig: SinCosMemo::default(),
        }
    }
}

impl Crane {
    /// The double-actuator crane of §3.1.2 with Table 1 values.
    pub fn double() -> Self {
        Self { double: true, ..Self::default() }
    }

    /// Link-1 inertia about its centre, m L²/12 (kg·m²): the slender-rod assumption of SPEC §3.6.
    pub fn inertia(&self) -> f64 {
        self.m * self.l * self.l / 12.0
    }
}

/// Number of coordinates.
pub const N: usize = 5;
/// Number of constraints.
pub const M: usize = 3;

impl Mechanism<N, M> for Crane {
    fn mass_matrix(&self) -> SMatrix<f64, N, N> {
        let mp = self.m + 4.0 * self.m_p;
        SMatrix::<f64, N, N>::from_diagonal(&SVector::<f64, N>::new(mp, mp, self.inertia(), self.m_h, self.m_h))
    }

    fn gravity_forces(&self) -> SVector<f64, N> {
        SVector::<f64, N>::new(0.0, -(self.m + 2.0 * self.m_p) * self.g, 0.0, 0.0, -self.m_h * self.g)
    }

    /// Eq. 16.
    fn constraints(&self, q: &SVector<f64, N>) -> SVector<f64, M> {
        let (sn, cs) = self.trig.sin_cos(q[2]);
        let (dx, dy) = (q[3] - self.l * cs, q[4] - self.l * sn);
        SVector::<f64, M>::new(
            self.l * cs - 2.0 * q[0],
            self.l * sn - 2.0 * q[1],
            dx * dx + dy * dy - self.l_h * self.l_h,
        )
    }

    fn jacobian(&self, q: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        let (sn, cs) = self.trig.sin_cos(q[2]);
        let (dx, dy) = (q[3] - self.l * cs, q[4] - self.l * sn);
        SMatrix::<f64, M, N>::from_row_slice(&[
            -2.0,
            0.0,
            -self.l * sn,
            0.0,
            0.0, //
            0.0,
            -2.0,
            self.l * cs,
            0.0,
            0.0, //
            0.0,
            0.0,
            2.0 * self.l * (dx * sn - dy * cs),
            2.0 * dx,
            2.0 * dy,
        ])
    }

    fn jacobian_dot_times_velocity(&self, q: &SVector<f64, N>, qd: &SVector<f64, N>) -> SVector<f64, M> {
        let (sn, cs) = self.trig.sin_cos(q[2]);
        let w = qd[2];
        let (dx, dy) = (q[3] - self.l * cs, q[4] - self.l * sn);
        // ḋ = Ṙ − d/dt(L cos θ, L sin θ).
        let (dxd, dyd) = (qd[3] + self.l * sn * w, qd[4] - self.l * cs * w);
        SVector::<f64, M>::new(
            -self.l * cs * w * w,
            -self.l * sn * w * w,
            2.0 * (dxd * dxd + dyd * dyd) + 2.0 * self.l * w * w * (dx * cs + dy * sn),
        )
    }

    fn jacobian_dot(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        let (sn, cs) = self.trig.sin_cos(q[2]);
        let w = v[2];
        let (dx, dy) = (q[3] - self.l * cs, q[4] - self.l * sn);
        let (dxd, dyd) = (v[3] + self.l * sn * w, v[4] - self.l * cs * w);
        let mut jd = SMatrix::<f64, M, N>::zeros();
        jd[(0, 2)] = -self.l * cs * w;
        jd[(1, 2)] = -self.l * sn * w;
        jd[(2, 2)] = 2.0 * self.l * (dxd * sn + dx * cs * w - dyd * cs + dy * sn * w);
        jd[(2, 3)] = 2.0 * dxd;
        jd[(2, 4)] = 2.0 * dyd;
        jd
    }

    fn actuator_count(&self) -> usize {
        if self.double {
            2
        } else {
            1
        }
    }

    /// Cylinder 1: P − B. Cylinder 2: (P + R/2) − P = R/2.
    fn actuator(&self, k: usize) -> Actuator<N> {
        let mut d = SMatrix::<f64, 2, N>::zeros();
        if k == 0 {
            d[(0, 0)] = 1.0;
            d[(1, 1)] = 1.0;
            Actuator::Distance { d, d0: Vector2::new(-self.b[0], -self.b[1]) }
        } else {
            d[(0, 3)] = 0.5;
            d[(1, 4)] = 0.5;
            Actuator::Distance { d, d0: Vector2::zeros() }
        }
    }

    fn initial_positions(&self) -> SVector<f64, N> {
        let (s1, c1) = self.theta1_0.sin_cos();
        let (s2, c2) = self.theta2_0.sin_cos();
        let (xq, yq) = (self.l * c1, self.l * s1);
        SVector::<f64, N>::new(0.5 * xq, 0.5 * yq, self.theta1_0, xq + self.l_h * c2, yq + self.l_h * s2)
    }

    fn check(&self) -> Result<(), String> {
        for (name, v) in [("L", self.l), ("L_h", self.l_h), ("m_h", self.m_h), ("m", self.m)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("parameter {name} = {v} must be positive"));
            }
        }
        for (name, v) in [("m_p", self.m_p), ("g", self.g)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("parameter {name} = {v} must be non-negative"));
            }
        }
        let q = self.initial_positions();
        for k in 0..self.actuator_count() {
            let s = self.actuator(k).length(&q);
            if s.is_nan() || s <= 1e-6 {
                return Err(format!("the initial length of cylinder {} is {s} m: its ends coincide", k + 1));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{static_forces, testing::derivative_errors};

    #[test]
    fn initial_configuration_matches_the_digest() {
        // P0 = (0.4330, 0.25), R0 = (0.8660, 0) = B, s1 = 0.5 m, s2 = |R|/2 = 0.433 m.
        let c = Crane::double();
        let q = c.initial_positions();
        assert!(c.constraints(&q).amax() < 1e-15);
        assert!((q[0] - 0.433_012_7).abs() < 1e-7 && (q[1] - 0.25).abs() < 1e-15);
        assert!((q[3] - 0.866_025_4).abs() < 1e-7 && q[4].abs() < 1e-15);
        assert!((c.actuator(0).length(&q) - 0.5).abs() < 1e-15);
        assert!((c.actuator(1).length(&q) - 0.433_012_7).abs() < 1e-7);
        c.check().unwrap();
    }

    #[test]
    fn jacobian_and_convective_term_match_finite_differences() {
        let c = Crane::default();
        let q = SVector::<f64, N>::new(0.41, 0.29, 0.61, 0.95, 0.12);
        let qd = SVector::<f64, N>::new(-0.3, 0.5, 1.3, -0.6, 1.0);
        let (e_j, e_jd) = derivative_errors(&c, &q, &qd);
        assert!(e_j < 1e-8 && e_jd < 1e-7, "{e_j:e} {e_jd:e}");
    }

    #[test]
    fn static_forces_are_8829_n_and_0_n() {
        // 2 g (m/2 + m_p + m_h) = 8829 N (DIGEST §1.4); the hanging link needs no force from cylinder 2.
        let c = Crane::default();
        let f = static_forces(&c, &c.initial_positions()).unwrap();
        assert!((f[0] - 8829.0).abs() < 1e-9, "{}", f[0]);
        let c2 = Crane::double();
        let f2 = static_forces(&c2, &c2.initial_positions()).unwrap();
        assert!((f2[0] - 8829.0).abs() < 1e-9 && f2[1].abs() < 1e-9, "{f2:?}");
    }

    #[test]
    fn a_link_not_at_rest_has_no_static_force() {
        let c = Crane { theta2_0: 1.2 * PI, ..Crane::default() };
        let e = static_forces(&c, &c.initial_positions()).unwrap_err();
        assert!(e.contains("not at rest"), "{e}");
    }
}
