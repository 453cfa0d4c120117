//! Publication I's four-bar (Model A, DIGEST §1.2) in natural coordinates: the "Gl" (global
//! formulation) comparison of Pub I Table 3 for the semi-recursive crate `fmu-semirecursive`.
//!
//! Basic points: O = (0, 0) and C = (1, 0) on the ground, A (body 1–body 2 joint) and B (body
//! 2–body 3 joint); q = [x_A, y_A, x_B, y_B]. Body 1 = O–A (L1 = 1 m), body 2 = A–B (L2 = 1 m),
//! body 3 pivots at C through B (|B − C| = 1 m) and extends to 2.5 m from C, its centre of mass
//! 1.25 m from C on the ray C→B. Constraints (rigid links):
//!
//! Φ = [x_A² + y_A² − L1²; (x_B − x_A)² + (y_B − y_A)² − L2²; (x_B − 1)² + y_B² − 1].
//!
//! Mass matrix of a body between basic points i and j (distance L, centre of mass on the line at
//! a from i, inertia J_i about i): [[m − 2ma/L + J_i/L², ma/L − J_i/L²], [·, J_i/L²]] ⊗ I₂
//! (García de Jalón & Bayo); a fixed point drops its rows. Beam inertias J = m(L² + 0.05²)/12
//! about the centre (SPEC §3.7). The cylinder runs from D = (0, −1) to the middle of body 1, A/2.

use crate::mechanism::{Actuator, Mechanism};
use nalgebra::{SMatrix, SVector, Vector2};

/// Coordinates.
pub const N: usize = 4;
/// Constraints.
pub const M: usize = 3;

/// The four-bar's parameters (Pub I §5, Table 1; SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct FourBar {
    /// Masses m1, m2, m3 (kg): 50, 50, 250.
    pub m: [f64; 3],
    /// Lengths L1, L2, L3 (m): 1, 1, 2.5.
    pub l: [f64; 3],
    /// Beam cross-section width (m) of the inertias m(L² + w²)/12: 0.05.
    pub width: f64,
    /// Gravity g (m/s²) along −y: 9.81.
    pub g: f64,
}

impl Default for FourBar {
    fn default() -> Self {
        Self { m: [50.0, 50.0, 250.0], l: [1.0, 1.0, 2.5], width: 0.05, g: 9.81 }
    }
}

impl FourBar {
    /// Inertia about the centre of mass of body k (kg·m²).
    fn j_cm(&self, k: usize) -> f64 {
        self.m[k] * (self.l[k] * self.l[k] + self.width * self.width) / 12.0
    }

    /// Body 3's centre of mass from C, as a fraction of |B − C| = 1 m.
    fn c3(&self) -> f64 {
        self.l[2] / 2.0
    }

    /// The initial configuration of Pub I Table 2: body 1 at −30°, body 2 horizontal.
    pub fn initial(&self) -> SVector<f64, N> {
        let a = Vector2::new(self.l[0] * (-30f64).to_radians().cos(), self.l[0] * (-30f64).to_radians().sin());
        SVector::<f64, N>::new(a[0], a[1], a[0] + self.l[1], a[1])
    }
}

impl Mechanism<N, M> for FourBar {
    fn mass_matrix(&self) -> SMatrix<f64, N, N> {
        let mut mm = SMatrix::<f64, N, N>::zeros();
        // Body 1 (O fixed, A): J_O/L1² on A.
        let j_o = self.j_cm(0) + self.m[0] * (self.l[0] / 2.0).powi(2);
        // Body 2 (A, B): centre at L2/2.
        let (m2, l2) = (self.m[1], self.l[1]);
        let j_a = self.j_cm(1) + m2 * (l2 / 2.0).powi(2);
        // a = L2/2: m − 2ma/L2 = 0.
        let (aa, ab, bb) = (j_a / (l2 * l2), m2 * 0.5 - j_a / (l2 * l2), j_a / (l2 * l2));
        // Body 3 (C fixed, B at 1 m): J_C/1².
        let j_c = self.j_cm(2) + self.m[2] * self.c3().powi(2);
        for d in 0..2 {
            mm[(d, d)] = j_o / (self.l[0] * self.l[0]) + aa;
            mm[(d, 2 + d)] = ab;
            mm[(2 + d, d)] = ab;
            mm[(2 + d, 2 + d)] = bb + j_c;
        }
        mm
    }

    fn gravity_forces(&self) -> SVector<f64, N> {
        // y of the centres: y_A/2, (y_A + y_B)/2, 1.25 y_B.
        let g = self.g;
        SVector::<f64, N>::new(
            0.0,
            -g * (self.m[0] + self.m[1]) / 2.0,
            0.0,
            -g * (self.m[1] / 2.0 + self.m[2] * self.c3()),
        )
    }

    fn constraints(&self, q: &SVector<f64, N>) -> SVector<f64, M> {
        let (xa, ya, xb, yb) = (q[0], q[1], q[2], q[3]);
        SVector::<f64, M>::new(
            xa * xa + ya * ya - self.l[0] * self.l[0],
            (xb - xa).powi(2) + (yb - ya).powi(2) - self.l[1] * self.l[1],
            (xb - 1.0).powi(2) + yb * yb - 1.0,
        )
    }

    fn jacobian(&self, q: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        let (xa, ya, xb, yb) = (q[0], q[1], q[2], q[3]);
        let (dx, dy) = (xb - xa, yb - ya);
        SMatrix::<f64, M, N>::from_row_slice(&[
            2.0 * xa,
            2.0 * ya,
            0.0,
            0.0, //
            -2.0 * dx,
            -2.0 * dy,
            2.0 * dx,
            2.0 * dy, //
            0.0,
            0.0,
            2.0 * (xb - 1.0),
            2.0 * yb,
        ])
    }

    fn jacobian_dot(&self, _q: &SVector<f64, N>, v: &SVector<f64, N>) -> SMatrix<f64, M, N> {
        // Φ_q is linear in q: its derivative along v is Φ_q(v) without the constants.
        let (dx, dy) = (v[2] - v[0], v[3] - v[1]);
        SMatrix::<f64, M, N>::from_row_slice(&[
            2.0 * v[0],
            2.0 * v[1],
            0.0,
            0.0, //
            -2.0 * dx,
            -2.0 * dy,
            2.0 * dx,
            2.0 * dy, //
            0.0,
            0.0,
            2.0 * v[2],
            2.0 * v[3],
        ])
    }

    fn actuator_count(&self) -> usize {
        1
    }

    fn actuator(&self, _k: usize) -> Actuator<N> {
        // s = A/2 − D with D = (0, −1).
        Actuator::Distance {
            d: SMatrix::<f64, 2, N>::from_row_slice(&[0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0]),
            d0: Vector2::new(0.0, 1.0),
        }
    }

    fn initial_positions(&self) -> SVector<f64, N> {
        self.initial()
    }

    fn check(&self) -> Result<(), String> {
        for (name, v) in [("m1", self.m[0]), ("m2", self.m[1]), ("m3", self.m[2]), ("L1", self.l[0]), ("L2", self.l[1])]
        {
            if v.is_nan() || v <= 0.0 {
                return Err(format!("parameter {name} = {v} must be positive"));
            }
        }
        Ok(())
    }
}

/// Relative joint angles [z1, z2, z3] of the semi-recursive model (rad) from natural coordinates:
/// body angles θ1 = ∠(A − O), θ2 = ∠(B − A), θ3 = ∠(C − B); z = [θ1, θ2 − θ1, θ3 − θ2] with the
/// differences wrapped to (−π, π].
pub fn joint_angles(q: &SVector<f64, N>) -> [f64; 3] {
    let th1 = q[1].atan2(q[0]);
    let th2 = (q[3] - q[1]).atan2(q[2] - q[0]);
    let th3 = (0.0 - q[3]).atan2(1.0 - q[2]);
    let wrap = |a: f64| {
        let w = a.rem_euclid(2.0 * std::f64::consts::PI);
        if w > std::f64::consts::PI {
            w - 2.0 * std::f64::consts::PI
        } else {
            w
        }
    };
    [th1, wrap(th2 - th1), wrap(th3 - th2)]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn initial_configuration_is_assembled_and_matches_table_2() {
        let fb = FourBar::default();
        let q = fb.initial();
        assert!(fb.constraints(&q).amax() < 1e-14);
        let z = joint_angles(&q);
        for (a, b) in z.iter().zip([-30.0f64, 30.0, 150.0]) {
            assert!((a.to_degrees() - b).abs() < 1e-12, "{z:?}");
        }
        // s0 = 0.866 m (Table 1).
        assert!((fb.actuator(0).length(&q) - 0.75f64.sqrt()).abs() < 1e-14);
    }

    #[test]
    fn jacobian_dot_is_the_time_derivative_of_the_jacobian() {
        let fb = FourBar::default();
        let q = fb.initial();
        let v = SVector::<f64, N>::new(0.3, -0.2, 0.1, 0.4);
        let h = 1e-7;
        let fd = (fb.jacobian(&(q + v * h)) - fb.jacobian(&(q - v * h))) / (2.0 * h);
        assert!((fd - fb.jacobian_dot(&q, &v)).amax() < 1e-7);
    }
}
