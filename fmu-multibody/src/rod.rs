//! The seed 004 rod (Naya, Cuadrado, Dopico, Lugrís 2011, §4, Fig. 2, eqs. 27, 33–35): a rod of
//! length L and mass m pinned at A, a point mass at its tip, a cylinder from the ground point B
//! to the rod's midpoint.
//!
//! q = {x1, y1, x2, y2, s} (eq. 27): point 1 is the rod's midpoint, point 2 its tip, s the
//! cylinder length. The rod's inertia is lumped at A and at point 2 (m/3 at the tip, eq. 33),
//! so point 1 and s carry no mass; gravity acts on the rod at point 1 and on the tip mass
//! (eq. 34). Four constraints (eq. 35): |A1| = L/2, A2 = 2·A1 (two rows), |B1| = s.

use crate::mechanism::{Actuator, Mechanism};
use nalgebra::{SMatrix, SVector};

/// Rod parameters (SI). Defaults: seed 004 §4.
#[derive(Debug, Clone, PartialEq)]
pub struct Rod {
    /// Rod length L (m): 1.
    pub l: f64,
    /// Rod mass m (kg), uniformly distributed: 200.
    pub m: f64,
    /// Point mass at the tip M (kg): 250.
    pub m_tip: f64,
    /// Pin A (m): (0, 0).
    pub a: [f64; 2],
    /// Cylinder ground point B (m): (√3/2, 0).
    pub b: [f64; 2],
    /// Initial angle between the rod and the ground θ₀ (rad): 30°.
    pub theta0: f64,
    /// Gravitational acceleration g (m/s²), acting along −y: 9.81.
    pub g: f64,
}

impl Default for Rod {
    fn default() -> Self {
        Self {
            l: 1.0,
            m: 200.0,
            m_tip: 250.0,
            a: [0.0, 0.0],
            b: [3f64.sqrt() / 2.0, 0.0],
            theta0: std::f64::consts::PI / 6.0,
            g: 9.81,
        }
    }
}

/// Number of coordinates of the rod.
pub const N: usize = 5;
/// Number of constraints of the rod.
pub const M: usize = 4;

impl Mechanism<N, M> for Rod {
    /// Eq. 33: diag(0, 0, M + m/3, M + m/3, 0).
    fn mass_matrix(&self) -> SMatrix<f64, N, N> {
        let mt = self.m_tip + self.m / 3.0;
        SMatrix::<f64, N, N>::from_diagonal(&SVector::<f64, N>::new(0.0, 0.0, mt, mt, 0.0))
    }

    /// Eq. 34 without the cylinder term: (0, −m g, 0, −M g, 0).
    fn gravity_forces(&self) -> SVector<f64, N> {
        SVector::<f64, N>::new(0.0, -self.m * self.g, 0.0, -self.m_tip * self.g, 0.0)
    }

    /// Eq. 35.
    fn constraints(&self, q: &SVector<f64, N>) -> SVector<f64, M> {
        let (x1, y1, x2, y2, s) = (q[0] - self.a[0], q[1] - self.a[1], q[2] - self.a[0], q[3] - self.a[1], q[4]);
        let (bx, by) = (q[0] - self.b[0], q[1] - self.b[1]);
        SVector::<f64, M>::new(
            x1 * x1 + y1 * y1 - 0.25 * self.l * self.l,
            x2 - 2.0 * x1,
            y2 - 2.0 * y1,
            bx * bx + by * by - s * s,
        )
    }

    fn jacobian(&self, q: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        let (x1, y1) = (q[0] - self.a[0], q[1] - self.a[1]);
        let (bx, by) = (q[0] - self.b[0], q[1] - self.b[1]);
        SMatrix::<f64, M, N>::from_row_slice(&[
            2.0 * x1,
            2.0 * y1,
            0.0,
            0.0,
            0.0, //
            -2.0,
            0.0,
            1.0,
            0.0,
            0.0, //
            0.0,
            -2.0,
            0.0,
            1.0,
            0.0, //
            2.0 * bx,
            2.0 * by,
            0.0,
            0.0,
            -2.0 * q[4],
        ])
    }

    fn jacobian_dot_times_velocity(&self, _q: &SVector<f64, N>, qd: &SVector<f64, N>) -> SVector<f64, M> {
        let v1 = qd[0] * qd[0] + qd[1] * qd[1];
        SVector::<f64, M>::new(2.0 * v1, 0.0, 0.0, 2.0 * v1 - 2.0 * qd[4] * qd[4])
    }

    fn jacobian_dot(&self, _q: &SVector<f64, N>, v: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        let mut jd = SMatrix::<f64, M, N>::zeros();
        for r in [0, 3] {
            jd[(r, 0)] = 2.0 * v[0];
            jd[(r, 1)] = 2.0 * v[1];
        }
        jd[(3, 4)] = -2.0 * v[4];
        jd
    }

    fn actuator_count(&self) -> usize {
        1
    }

    /// The cylinder length is coordinate 5; its force is Q(5) (eq. 28/34).
    fn actuator(&self, _k: usize) -> Actuator<N> {
        Actuator::Coordinate(4)
    }

    fn initial_positions(&self) -> SVector<f64, N> {
        let (sn, cs) = self.theta0.sin_cos();
        let (x1, y1) = (self.a[0] + 0.5 * self.l * cs, self.a[1] + 0.5 * self.l * sn);
        let s = ((x1 - self.b[0]).powi(2) + (y1 - self.b[1]).powi(2)).sqrt();
        SVector::<f64, N>::new(x1, y1, self.a[0] + self.l * cs, self.a[1] + self.l * sn, s)
    }

    fn check(&self) -> Result<(), String> {
        for (name, v) in [("L", self.l), ("m_tip", self.m_tip)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("parameter {name} = {v} must be positive"));
            }
        }
        for (name, v) in [("m", self.m), ("g", self.g)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("parameter {name} = {v} must be non-negative"));
            }
        }
        let q = self.initial_positions();
        if q[4].is_nan() || q[4] <= 1e-6 {
            return Err(format!(
                "the initial cylinder length s = {} m is not positive: B lies on the rod's midpoint",
                q[4]
            ));
        }
        // The cylinder must not be aligned with the rod (no lever arm: singular constraints).
        let (x1, y1) = (q[0] - self.a[0], q[1] - self.a[1]);
        let (bx, by) = (q[0] - self.b[0], q[1] - self.b[1]);
        if (x1 * by - y1 * bx).abs() < 1e-9 * q[4] * self.l {
            return Err("the cylinder is aligned with the rod in the initial configuration (theta0, B)".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{static_forces, testing::derivative_errors};

    #[test]
    fn initial_configuration_is_assembled_with_s0_half_a_metre() {
        let r = Rod::default();
        let q = r.initial_positions();
        assert!(r.constraints(&q).amax() < 1e-15);
        assert!((q[4] - 0.5).abs() < 1e-15, "s0 = {}", q[4]);
        r.check().unwrap();
    }

    #[test]
    fn jacobian_and_convective_term_match_finite_differences() {
        let r = Rod::default();
        let q = SVector::<f64, N>::new(0.41, 0.27, 0.83, 0.55, 0.52);
        let qd = SVector::<f64, N>::new(-0.3, 0.5, -0.6, 1.0, 0.2);
        let (e_j, e_jd) = derivative_errors(&r, &q, &qd);
        assert!(e_j < 1e-8 && e_jd < 1e-7, "{e_j:e} {e_jd:e}");
    }

    #[test]
    fn static_force_is_seed_004_eq_32() {
        // (2M + m) g = 700 kg · 9.81 m/s² = 6867 N.
        let r = Rod::default();
        let f = static_forces(&r, &r.initial_positions()).unwrap();
        assert!((f[0] - 6867.0).abs() < 1e-9, "{}", f[0]);
    }
}
