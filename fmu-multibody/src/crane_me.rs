//! `multibody-crane-me.fmu`: the single-actuator crane of Publication III (§3.1.1, Table 1) in
//! minimal coordinates as a Model Exchange FMU (FMI 2.0 and 3.0; it declares Co-Simulation
//! too, integrated with RK4).
//!
//! The crane has two degrees of freedom: the boom angle θ1 (link 1, O–Q) and the absolute angle
//! θ2 of the hanging link 2 (Q–R). The coordinates of [`Crane`] follow from them,
//!
//! q(θ) = [L/2 cos θ1, L/2 sin θ1, θ1, L cos θ1 + L_h cos θ2, L sin θ1 + L_h sin θ2],
//!
//! which satisfy the constraints of eq. 16 identically, so the equations of motion are an ODE
//! (Lagrange's equations of the second kind with q̇ = J θ̇, J = ∂q/∂θ):
//!
//! Jᵀ M J θ̈ = Jᵀ (Q(q, q̇) − M J̇ θ̇),
//!
//! with M, Q = Q_g + F ∂s/∂q (gravity and the cylinder force along its gradient) the crane's own
//! ([`Crane::mass_matrix`], [`generalized_forces`]): the physics of `multibody-crane.fmu` and of
//! the unified crane (`fmu-unified`), whose index-3 formulation integrates the same dynamics with
//! the constraints. States x = [θ1, θ2, ω1, ω2] (rad, rad, rad/s, rad/s); input F (N); outputs
//! the cylinder length s (m) and velocity ṡ (m/s).

use crate::crane::Crane;
use crate::mechanism::{generalized_forces, static_forces, GivenForces, Mechanism};
use fmu_export::{CoSimModel, Context, InputSignal, ModelError, ModelInfo, StateVisitor, StoredOde, Variable};
use nalgebra::{Matrix2, SMatrix, SVector, Vector2};

/// Coordinates of [`Crane`].
const N: usize = crate::crane::N;

/// The model.
#[derive(Debug, Clone)]
pub struct CraneMeFmu {
    /// The crane (Publication III Table 1).
    pub crane: Crane,
    /// State [θ1, θ2, ω1, ω2].
    pub x: [f64; 4],
    /// ẋ at the current state and input.
    pub dx: [f64; 4],
    /// Input: cylinder force F (N), positive extends.
    pub f: InputSignal,
    /// Static cylinder force at the initial configuration (calculated, N).
    pub f_static: f64,
}

impl Default for CraneMeFmu {
    fn default() -> Self {
        let crane = Crane::default();
        let f_static = static_forces(&crane, &crane.initial_positions()).map_or(f64::NAN, |f| f[0]);
        Self {
            x: [crane.theta1_0, crane.theta2_0, 0.0, 0.0],
            crane,
            dx: [0.0; 4],
            f: InputSignal::new(f_static),
            f_static,
        }
    }
}

/// q, q̇, J and J̇ θ̇ at the state x.
fn kinematics(c: &Crane, x: &[f64; 4]) -> (SVector<f64, N>, SVector<f64, N>, SMatrix<f64, N, 2>, SVector<f64, N>) {
    let (s1, c1) = x[0].sin_cos();
    let (s2, c2) = x[1].sin_cos();
    let (w1, w2) = (x[2], x[3]);
    let (l, lh) = (c.l, c.l_h);
    let q = SVector::<f64, N>::from([0.5 * l * c1, 0.5 * l * s1, x[0], l * c1 + lh * c2, l * s1 + lh * s2]);
    #[rustfmt::skip]
    let j = SMatrix::<f64, N, 2>::from_row_slice(&[
        -0.5 * l * s1, 0.0,
        0.5 * l * c1,  0.0,
        1.0,           0.0,
        -l * s1,       -lh * s2,
        l * c1,        lh * c2,
    ]);
    let qd = j * Vector2::new(w1, w2);
    let gamma = SVector::<f64, N>::from([
        -0.5 * l * c1 * w1 * w1,
        -0.5 * l * s1 * w1 * w1,
        0.0,
        -l * c1 * w1 * w1 - lh * c2 * w2 * w2,
        -l * s1 * w1 * w1 - lh * s2 * w2 * w2,
    ]);
    (q, qd, j, gamma)
}

impl CraneMeFmu {
    /// Cylinder length s (m) and velocity ṡ (m/s) at the current state.
    pub fn cylinder(&self) -> (f64, f64) {
        let (q, qd, _, _) = kinematics(&self.crane, &self.x);
        let (s, g) = self.crane.actuator(0).length_and_gradient(&q);
        (s, g.dot(&qd))
    }

    /// ẋ = [ω1, ω2, θ̈1, θ̈2] from Jᵀ M J θ̈ = Jᵀ (Q − M J̇ θ̇).
    pub fn rates(&self) -> Result<[f64; 4], String> {
        let c = &self.crane;
        let (q, qd, j, gamma) = kinematics(c, &self.x);
        let f = self.f.value;
        let forces = generalized_forces(c, &GivenForces(|_, _| f), &q, &qd, 0.0);
        let m = c.mass_matrix();
        let mbar: Matrix2<f64> = j.transpose() * m * j;
        let rhs: Vector2<f64> = j.transpose() * (forces - m * gamma);
        let acc = mbar.lu().solve(&rhs).ok_or_else(|| {
            format!("the reduced mass matrix Jᵀ M J is singular at θ1 = {}, θ2 = {}", self.x[0], self.x[1])
        })?;
        Ok([self.x[2], self.x[3], acc[0], acc[1]])
    }
}

const DOCS: &str = r#"<p>The single-actuator crane of Publication III (§3.1.1, Table 1; <code>multibody-crane.fmu</code>'s physics) in minimal coordinates,
as a <b>Model Exchange</b> FMU: boom angle θ1 and the absolute angle θ2 of the hanging link 2 (rad), angular velocities ω1, ω2 (rad/s).</p>
<p>q(θ) = [L/2 cos θ1, L/2 sin θ1, θ1, L cos θ1 + L_h cos θ2, L sin θ1 + L_h sin θ2] satisfies eq. 16 identically; with J = ∂q/∂θ the equations of
motion are Jᵀ M J θ̈ = Jᵀ (Q_g + F ∂s/∂q − M J̇ θ̇), M = diag(m + 4 m_p, m + 4 m_p, m L²/12, m_h, m_h), Q_g = (0, −(m + 2 m_p) g, 0, 0, −m_h g).
The cylinder runs from B = (√3/2, 0) to the midpoint P of link 1: s = |P − B| (m), ṡ (m/s). Input F (N, positive extends); its start is the static force F_static
that holds the crane at rest at θ1 = π/6, θ2 = 3π/2. Under Co-Simulation the same right-hand side is integrated with classical RK4 at internal steps
of at most 10 µs, the input held over the step.</p>"#;

impl CoSimModel for CraneMeFmu {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "MultibodyCraneME",
            model_identifier: "multibody_crane_me",
            fmu_name: "multibody-crane-me",
            description: "Publication III single-actuator crane in minimal coordinates (boom angle, hanging link angle) as a Model Exchange FMU: input F; outputs s, s_dot",
            documentation_html: DOCS,
            source: "Rahikainen, González, Naya 2019, Publication III §3.1.1 (eq. 16, Table 1) in seed 000; SPEC §3.6",
            default_experiment: (0.0, 20.0, 1e-3),
            interpolates_inputs: false,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        macro_rules! param {
            ($name:literal, $unit:literal, $descr:literal, $field:ident) => {
                Variable::parameter($name, $unit, $descr, |m: &Self| m.crane.$field, |m, v| m.crane.$field = v)
            };
        }
        vec![
            param!("L", "m", "Length of link 1 (Table 1)", l).min(1e-9),
            param!("L_h", "m", "Length of link 2 (Table 1)", l_h).min(1e-9),
            param!("m", "kg", "Mass of link 1 (Table 1)", m).min(1e-9),
            param!("m_p", "kg", "Point mass at Q (Table 1)", m_p).min(0.0),
            param!("m_h", "kg", "Point mass at R (Table 1)", m_h).min(1e-9),
            param!("g", "m/s2", "Gravitational acceleration (Table 1)", g).min(0.0),
            param!("theta1_0", "rad", "Initial boom angle (Table 1: pi/6)", theta1_0),
            param!("theta2_0", "rad", "Initial absolute angle of link 2 (3 pi/2: hanging)", theta2_0),
            Variable::calculated_parameter(
                "F_static",
                "N",
                "Cylinder force that holds the initial configuration at rest",
                |m: &Self| m.f_static,
            ),
            Variable::input(
                "F",
                "N",
                "Cylinder force, positive extends (start: F_static)",
                |m: &Self| m.f.value,
                |m| &mut m.f,
            ),
            Variable::output("s", "m", "Cylinder length |P - B|", |m: &Self| m.cylinder().0),
            Variable::output("s_dot", "m/s", "Cylinder velocity ds/dt", |m: &Self| m.cylinder().1),
            Variable::output("theta1", "rad", "Boom angle (state)", |m: &Self| m.x[0]),
            Variable::output("theta2", "rad", "Absolute angle of link 2 (state)", |m: &Self| m.x[1]),
            Variable::output("omega1", "rad/s", "Boom angular velocity (state)", |m: &Self| m.x[2]),
            Variable::output("omega2", "rad/s", "Angular velocity of link 2 (state)", |m: &Self| m.x[3]),
            Variable::local("der_theta1", "rad/s", "dtheta1/dt = omega1", |m: &Self| m.dx[0]),
            Variable::local("der_theta2", "rad/s", "dtheta2/dt = omega2", |m: &Self| m.dx[1]),
            Variable::local("der_omega1", "rad/s2", "Boom angular acceleration", |m: &Self| m.dx[2]),
            Variable::local("der_omega2", "rad/s2", "Angular acceleration of link 2", |m: &Self| m.dx[3]),
        ]
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.crane.check().map_err(ModelError::new)?;
        self.f_static = static_forces(&self.crane, &self.crane.initial_positions()).map_err(ModelError::new)?[0];
        self.x = [self.crane.theta1_0, self.crane.theta2_0, 0.0, 0.0];
        self.update_rates()
    }

    fmu_export::stored_ode_cosim!();

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        for p in [
            &mut self.crane.l,
            &mut self.crane.l_h,
            &mut self.crane.m,
            &mut self.crane.m_p,
            &mut self.crane.m_h,
            &mut self.crane.g,
            &mut self.crane.theta1_0,
            &mut self.crane.theta2_0,
            &mut self.f_static,
        ] {
            v.real(p);
        }
        v.reals(&mut self.x);
        v.reals(&mut self.dx);
        v.input(&mut self.f);
    }
}

impl StoredOde for CraneMeFmu {
    const STATES: &'static [(&'static str, &'static str)] =
        &[("theta1", "der_theta1"), ("theta2", "der_theta2"), ("omega1", "der_omega1"), ("omega2", "der_omega2")];
    const CS_STEP: f64 = 1e-5;

    fn x(&self) -> &[f64] {
        &self.x
    }

    fn x_mut(&mut self) -> &mut [f64] {
        &mut self.x
    }

    fn dx(&self) -> &[f64] {
        &self.dx
    }

    fn update_rates(&mut self) -> Result<(), ModelError> {
        self.dx = self.rates().map_err(ModelError::new)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::applied_forces;

    #[test]
    fn rests_under_the_static_force() {
        let mut m = CraneMeFmu::default();
        m.initialize(0.0, &mut Context::default()).unwrap();
        assert!((m.f_static - 8829.0).abs() < 1.0, "{}", m.f_static);
        for d in m.rates().unwrap() {
            assert!(d.abs() < 1e-9, "{d}");
        }
        let (s, s_dot) = m.cylinder();
        assert!((s - 0.5).abs() < 1e-12 && s_dot == 0.0, "{s} {s_dot}");
    }

    /// The reduced dynamics equal the constrained ones of the crane (eq. 16): M q̈ = Q + Φ_qᵀ λ
    /// with q̈ = J θ̈ + J̇ θ̇ consistent with Φ̈ = 0 and the residual in the range of Φ_qᵀ.
    #[test]
    fn equals_the_constrained_equations_of_motion() {
        let mut m = CraneMeFmu { x: [0.7, 4.4, 0.3, -1.2], ..CraneMeFmu::default() };
        m.f.value = 12000.0;
        let d = m.rates().unwrap();
        let (q, qd, j, gamma) = kinematics(&m.crane, &m.x);
        let qdd = j * Vector2::new(d[2], d[3]) + gamma;
        let c = &m.crane;
        // Φ(q) = 0 and Φ̈ = Φ_q q̈ + Φ̇_q q̇ = 0.
        assert!(c.constraints(&q).amax() < 1e-14);
        assert!((c.jacobian(&q) * qdd + c.jacobian_dot_times_velocity(&q, &qd)).amax() < 1e-10);
        // M q̈ − Q = Φ_qᵀ λ for some λ: its projection onto the admissible motions J vanishes.
        let applied = applied_forces(c, &GivenForces(|_, _| 12000.0), &q, &qd, 0.0);
        let residual = c.mass_matrix() * qdd - applied.q;
        assert!((j.transpose() * residual).amax() < 1e-9, "{}", j.transpose() * residual);
    }
}
