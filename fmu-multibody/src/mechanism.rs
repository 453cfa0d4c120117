//! A small planar multibody engine in natural (fully Cartesian, plus angles where convenient)
//! coordinates: what a solver needs from a mechanism, and the pieces every mechanism shares.
//!
//! A mechanism with `N` generalized coordinates q and `M` kinematic constraints Φ(q) = 0
//! provides a constant mass matrix M, constant generalized gravity forces, Φ, the Jacobian
//! Φ_q, the convective term Φ̇_q q̇, and its hydraulic cylinders as [`Actuator`]s. Applied
//! forces are assembled by [`applied_forces`] from gravity and the cylinder forces of a
//! [`ForceLaw`] (input forces, or pressures with friction and end dampers), together with the
//! damping and stiffness matrices C = −∂Q/∂q̇, K = −∂Q/∂q of the Newton tangent (seed 004
//! eq. 13).

use nalgebra::{DMatrix, DVector, SMatrix, SVector, Vector2};

/// Most cylinders a mechanism of this crate has.
pub const MAX_ACTUATORS: usize = 2;

/// The kinematics of one hydraulic cylinder: its length s(q).
#[derive(Debug, Clone, PartialEq)]
pub enum Actuator<const N: usize> {
    /// s = q\[i\]: the length is itself a generalized coordinate, tied to the geometry by a
    /// constraint (seed 004 rod, eq. 35 fourth row). Its generalized force is F on q\[i\] (eq. 34).
    Coordinate(usize),
    /// s = |D q + d₀|: the distance between two points whose coordinates are linear in q (a
    /// cylinder between a ground point and a body point, or between two body points). Its
    /// generalized force is F (∂s/∂q)ᵀ = F Dᵀ u with u = (D q + d₀)/s the cylinder direction.
    Distance {
        /// 2×N map from q to the vector between the cylinder ends.
        d: SMatrix<f64, 2, N>,
        /// Constant part of that vector (m).
        d0: Vector2<f64>,
    },
}

/// Length, velocity and acceleration of a cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Kinematics {
    /// s (m).
    pub s: f64,
    /// ṡ (m/s).
    pub s_dot: f64,
    /// s̈ (m/s²).
    pub s_ddot: f64,
}

impl<const N: usize> Actuator<N> {
    /// s(q) (m).
    pub fn length(&self, q: &SVector<f64, N>) -> f64 {
        match self {
            Self::Coordinate(i) => q.get(*i).copied().unwrap_or(f64::NAN),
            Self::Distance { d, d0 } => (d * q + d0).norm(),
        }
    }

    /// ∂s/∂q (column).
    pub fn gradient(&self, q: &SVector<f64, N>) -> SVector<f64, N> {
        match self {
            Self::Coordinate(i) => {
                let mut g = SVector::<f64, N>::zeros();
                if let Some(x) = g.get_mut(*i) {
                    *x = 1.0;
                }
                g
            }
            Self::Distance { d, d0 } => {
                let v = d * q + d0;
                d.transpose() * (v / v.norm())
            }
        }
    }

    /// Length s and gradient ∂s/∂q together, from one evaluation of v = D q + d0: the same values
    /// as [`length`](Self::length) and [`gradient`](Self::gradient).
    pub fn length_and_gradient(&self, q: &SVector<f64, N>) -> (f64, SVector<f64, N>) {
        match self {
            Self::Coordinate(_) => (self.length(q), self.gradient(q)),
            Self::Distance { d, d0 } => {
                let v = d * q + d0;
                let s = v.norm();
                (s, d.transpose() * (v / s))
            }
        }
    }

    /// ∂²s/∂q² = Dᵀ (I − u uᵀ) D / s (zero for a coordinate).
    pub fn hessian(&self, q: &SVector<f64, N>) -> SMatrix<f64, N, N> {
        self.length_gradient_hessian(q).2
    }

    /// Length, gradient and Hessian together, from one evaluation of v = D q + d0 and its norm:
    /// the same values as [`length`](Self::length), [`gradient`](Self::gradient) and
    /// [`hessian`](Self::hessian).
    pub fn length_gradient_hessian(&self, q: &SVector<f64, N>) -> (f64, SVector<f64, N>, SMatrix<f64, N, N>) {
        match self {
            Self::Coordinate(_) => (self.length(q), self.gradient(q), SMatrix::<f64, N, N>::zeros()),
            Self::Distance { d, d0 } => {
                let v = d * q + d0;
                let s = v.norm();
                let u = v / s;
                // Dᵀ (I − u uᵀ) D / s entry by entry. Each entry is a sum of two products (the
                // inner dimension is 2), so the order of the terms does not matter: the same
                // values as the matrix products. Coordinates the cylinder does not touch (zero
                // columns of D) have zero rows and columns; only the others are evaluated and
                // divided by s (a division is the slowest arithmetic there is).
                let p = [[1.0 - u[0] * u[0], 0.0 - u[0] * u[1]], [0.0 - u[1] * u[0], 1.0 - u[1] * u[1]]];
                let mut h = SMatrix::<f64, N, N>::zeros();
                let active = |j: usize| d[(0, j)] != 0.0 || d[(1, j)] != 0.0 || !(s > 0.0 && s.is_finite());
                for i in (0..N).filter(|&i| active(i)) {
                    let a = [d[(0, i)] * p[0][0] + d[(1, i)] * p[1][0], d[(0, i)] * p[0][1] + d[(1, i)] * p[1][1]];
                    for j in (0..N).filter(|&j| active(j)) {
                        h[(i, j)] = (a[0] * d[(0, j)] + a[1] * d[(1, j)]) / s;
                    }
                }
                (s, d.transpose() * u, h)
            }
        }
    }

    /// s, ṡ = (∂s/∂q) q̇ and s̈ = (∂s/∂q) q̈ + q̇ᵀ (∂²s/∂q²) q̇.
    pub fn kinematics(&self, q: &SVector<f64, N>, qd: &SVector<f64, N>, qdd: &SVector<f64, N>) -> Kinematics {
        match self {
            Self::Coordinate(i) => Kinematics {
                s: q.get(*i).copied().unwrap_or(f64::NAN),
                s_dot: qd.get(*i).copied().unwrap_or(f64::NAN),
                s_ddot: qdd.get(*i).copied().unwrap_or(f64::NAN),
            },
            Self::Distance { d, d0 } => {
                // v = D q + d0, s = |v|, ṡ = u·v̇, s̈ = u·v̈ + (|v̇|² − ṡ²)/s.
                let v = d * q + d0;
                let (vd, vdd) = (d * qd, d * qdd);
                let s = v.norm();
                let u = v / s;
                let s_dot = u.dot(&vd);
                Kinematics { s, s_dot, s_ddot: u.dot(&vdd) + (vd.norm_squared() - s_dot * s_dot) / s }
            }
        }
    }
}

/// A planar mechanism in natural coordinates: N coordinates, M constraints.
pub trait Mechanism<const N: usize, const M: usize> {
    /// Constant mass matrix M (may be singular on coordinates without inertia, e.g. the rod's
    /// midpoint and s in seed 004 eq. 33, as long as M + Φ_qᵀΦ_q is regular).
    fn mass_matrix(&self) -> SMatrix<f64, N, N>;
    /// Constant generalized gravity forces; the potential energy is −Q_gᵀ q (datum y = 0).
    fn gravity_forces(&self) -> SVector<f64, N>;
    /// Φ(q).
    fn constraints(&self, q: &SVector<f64, N>) -> SVector<f64, M>;
    /// Φ_q(q).
    fn jacobian(&self, q: &SVector<f64, N>) -> SMatrix<f64, M, N>;
    /// Φ̇_q q̇, so that Φ̈ = Φ_q q̈ + Φ̇_q q̇ (the constraints are scleronomic: Φ_t = 0).
    fn jacobian_dot_times_velocity(&self, q: &SVector<f64, N>, qd: &SVector<f64, N>) -> SVector<f64, M> {
        self.jacobian_dot(q, qd) * qd
    }
    /// Σ_k (∂Φ_q/∂q_k) v_k: the time derivative of Φ_q along velocity v (Φ̇_q for v = q̇). By the
    /// symmetry of second derivatives it is also ∂(Φ_q a)/∂q for a = v.
    fn jacobian_dot(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> SMatrix<f64, M, N>;
    /// Number of cylinders (≤ [`MAX_ACTUATORS`]).
    fn actuator_count(&self) -> usize;
    /// Cylinder `k` (0-based); `k` must be below [`Self::actuator_count`].
    fn actuator(&self, k: usize) -> Actuator<N>;
    /// Initial positions from the parameters (assembled: Φ = 0).
    fn initial_positions(&self) -> SVector<f64, N>;
    /// Checks the parameters; the message names the bad one.
    fn check(&self) -> Result<(), String>;

    /// Kinetic energy ½ q̇ᵀ M q̇ (J).
    fn kinetic_energy(&self, qd: &SVector<f64, N>) -> f64 {
        0.5 * qd.dot(&(self.mass_matrix() * qd))
    }
    /// Potential energy −Q_gᵀ q (J), zero at y = 0.
    fn potential_energy(&self, q: &SVector<f64, N>) -> f64 {
        -self.gravity_forces().dot(q)
    }
}

/// A cylinder force and its partial derivatives.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CylinderForce {
    /// Force along s, positive when it extends the cylinder (N).
    pub f: f64,
    /// ∂f/∂s (N/m): minus a stiffness.
    pub df_ds: f64,
    /// ∂f/∂ṡ (N·s/m): minus a damping coefficient.
    pub df_dsd: f64,
}

/// How the cylinder forces depend on time and on the cylinder's own motion.
pub trait ForceLaw {
    /// Force of cylinder `k` at `tau` seconds into the current communication step, for length
    /// `s` and velocity `s_dot`.
    fn force(&self, k: usize, tau: f64, s: f64, s_dot: f64) -> CylinderForce;
}

/// Cylinder forces given directly (force coupling): f_k = F_k(τ), no dependence on s, ṡ.
#[derive(Debug, Clone, Copy)]
pub struct GivenForces<F: Fn(usize, f64) -> f64>(pub F);

impl<F: Fn(usize, f64) -> f64> ForceLaw for GivenForces<F> {
    fn force(&self, k: usize, tau: f64, _s: f64, _s_dot: f64) -> CylinderForce {
        CylinderForce { f: (self.0)(k, tau), df_ds: 0.0, df_dsd: 0.0 }
    }
}

/// Generalized applied forces at one state, with their tangent contributions.
#[derive(Debug, Clone)]
pub struct Applied<const N: usize> {
    /// Q = Q_g + Σ f_k ∂s_k/∂q.
    pub q: SVector<f64, N>,
    /// C = −∂Q/∂q̇ = −Σ (∂f/∂ṡ) g gᵀ.
    pub c: SMatrix<f64, N, N>,
    /// K ≈ −∂Q/∂q = −Σ [f ∂²s/∂q² + (∂f/∂s) g gᵀ] (the non-symmetric term (∂f/∂ṡ) g (∂ṡ/∂q)ᵀ is
    /// left out: an approximate tangent, as in seed 004 eq. 13).
    pub k: SMatrix<f64, N, N>,
    /// Cylinder forces f_k.
    pub forces: [f64; MAX_ACTUATORS],
    /// Cylinder velocities ṡ_k.
    pub s_dot: [f64; MAX_ACTUATORS],
}

impl<const N: usize> Applied<N> {
    /// Actuator power Σ f_k ṡ_k (W).
    pub fn power(&self) -> f64 {
        self.forces.iter().zip(&self.s_dot).map(|(f, v)| f * v).sum()
    }
}

/// Assembles Q, C, K at (q, q̇) and `tau` seconds into the step.
pub fn applied_forces<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: f64,
) -> Applied<N> {
    let mut out = Applied {
        q: mech.gravity_forces(),
        c: SMatrix::<f64, N, N>::zeros(),
        k: SMatrix::<f64, N, N>::zeros(),
        forces: [0.0; MAX_ACTUATORS],
        s_dot: [0.0; MAX_ACTUATORS],
    };
    for k in 0..mech.actuator_count().min(MAX_ACTUATORS) {
        let (s, g, hessian) = mech.actuator(k).length_gradient_hessian(q);
        let s_dot = g.dot(qd);
        let f = law.force(k, tau, s, s_dot);
        out.q += g * f.f;
        // A given force (force coupling) has no derivatives: nothing to add to C and K.
        if f.df_dsd != 0.0 || f.df_ds != 0.0 {
            let ggt = g * g.transpose();
            out.c -= ggt * f.df_dsd;
            out.k -= ggt * f.df_ds;
        }
        if f.f != 0.0 {
            out.k -= hessian * f.f;
        }
        out.forces[k] = f.f;
        out.s_dot[k] = s_dot;
    }
    out
}

/// The generalized forces Q of [`applied_forces`] alone (gravity plus the cylinder forces along
/// their gradients), without the tangent matrices C and K: what the restart needs. The same
/// arithmetic, so Q is bit-identical to `applied_forces(..).q`.
pub fn generalized_forces<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: f64,
) -> SVector<f64, N> {
    let mut out = mech.gravity_forces();
    for k in 0..mech.actuator_count().min(MAX_ACTUATORS) {
        let (s, g) = mech.actuator(k).length_and_gradient(q);
        let f = law.force(k, tau, s, g.dot(qd));
        out += g * f.f;
    }
    out
}

/// The power of the cylinder forces Σ F_k ṡ_k (W) of [`applied_forces`] alone (the energy
/// bookkeeping after each step), without assembling Q, C and K. Bit-identical to
/// `applied_forces(..).power()`.
pub fn actuator_power<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: f64,
) -> f64 {
    let mut forces = [0.0; MAX_ACTUATORS];
    let mut s_dot = [0.0; MAX_ACTUATORS];
    for k in 0..mech.actuator_count().min(MAX_ACTUATORS) {
        let (s, g) = mech.actuator(k).length_and_gradient(q);
        s_dot[k] = g.dot(qd);
        forces[k] = law.force(k, tau, s, s_dot[k]).f;
    }
    forces.iter().zip(&s_dot).map(|(f, v)| f * v).sum()
}

/// The cylinder forces that hold the mechanism at rest in configuration `q`: the solution of
/// Φ_qᵀ λ − Σ F_k ∂s_k/∂q = Q_g (static equilibrium, q̇ = q̈ = 0) for λ and F, by least squares.
/// An error when no set of cylinder forces holds this configuration (e.g. a crane whose
/// hanging link is not vertical) or when the forces are not unique.
pub fn static_forces<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    q: &SVector<f64, N>,
) -> Result<[f64; MAX_ACTUATORS], String> {
    let na = mech.actuator_count().min(MAX_ACTUATORS);
    let jt = mech.jacobian(q).transpose();
    let mut a = DMatrix::<f64>::zeros(N, M + na);
    for i in 0..N {
        for j in 0..M {
            a[(i, j)] = jt[(i, j)];
        }
    }
    for k in 0..na {
        let g = mech.actuator(k).gradient(q);
        for i in 0..N {
            a[(i, M + k)] = -g[i];
        }
    }
    let b = DVector::<f64>::from_iterator(N, mech.gravity_forces().iter().copied());
    let svd = a.clone().svd(true, true);
    let smax = svd.singular_values.max();
    let smin = svd.singular_values.min();
    if smin.is_nan() || smin <= 1e-10 * smax {
        return Err(format!(
            "the static cylinder forces are not unique in the initial configuration (singular values {:.3e} … {:.3e})",
            smax, smin
        ));
    }
    let x = svd.solve(&b, 1e-12 * smax)?;
    let residual = (&a * &x - &b).norm();
    if residual > 1e-9 * b.norm().max(1.0) {
        return Err(format!(
            "no cylinder forces hold the initial configuration at rest (equilibrium residual {residual:.3e} N): \
             a link that is not actuated is not at rest there"
        ));
    }
    let mut f = [0.0; MAX_ACTUATORS];
    for (k, fk) in f.iter_mut().enumerate().take(na) {
        *fk = x[M + k];
    }
    Ok(f)
}

/// The interface model (IM) of the mechanism at its cylinders (Publication IV; Peiret, González,
/// Kövecses, Teichmann, Mech. Mach. Theory 127, 2018): the mechanics reduced to the actuator
/// coordinates s, m_eff s̈ = f_h + f_eff, f_h the cylinder forces.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InterfaceModel {
    /// Effective mass matrix m_eff = (G A Gᵀ)⁻¹ (kg); the off-diagonal terms couple the cylinders.
    pub m_eff: [[f64; MAX_ACTUATORS]; MAX_ACTUATORS],
    /// Effective force f_eff = m_eff (G A Q_g + G B c + ṡ-terms) (N), everything but the cylinder
    /// forces: gravity and the velocity terms of the constraints and of s(q).
    pub f_eff: [f64; MAX_ACTUATORS],
}

/// The [`InterfaceModel`] at (q, q̇). With ṡ = G q̇ (G: the rows ∂s_k/∂q) the constrained equations
/// of motion [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q_g + Gᵀ f_h; −Φ̇_q q̇] give q̈ = A (Q_g + Gᵀ f_h) + B c,
/// with A, B the blocks of the inverse of the KKT matrix. A is the inverse mass matrix projected
/// onto the admissible motions, A = R (Rᵀ M R)⁻¹ Rᵀ for any basis R of the null space of Φ_q (so a
/// singular M is allowed as long as the KKT matrix is regular): constrained systems are handled by
/// this null-space projection, evaluated through the KKT solve. Then s̈ = G q̈ + q̇ᵀ (∂²s/∂q²) q̇ =
/// W f_h + b with W = G A Gᵀ, so m_eff = W⁻¹ and f_eff = m_eff b; for an unconstrained system
/// this is the m_eff = (J M⁻¹ Jᵀ)⁻¹, f_eff = m_eff (J M⁻¹ f + J̇ q̇). `None` when the KKT
/// matrix or W is singular.
pub fn interface_model<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
) -> Option<InterfaceModel> {
    let na = mech.actuator_count().min(MAX_ACTUATORS);
    let (mm, j) = (mech.mass_matrix(), mech.jacobian(q));
    // Right-hand sides: one unit cylinder force per actuator, then gravity and the constraints'
    // velocity term.
    let mut grads = [SVector::<f64, N>::zeros(); MAX_ACTUATORS];
    let mut curvature = [0.0; MAX_ACTUATORS];
    for k in 0..na {
        let (_, g, h) = mech.actuator(k).length_gradient_hessian(q);
        grads[k] = g;
        curvature[k] = qd.dot(&(h * qd));
    }
    let qg = mech.gravity_forces();
    let c = -mech.jacobian_dot_times_velocity(q, qd);
    // The accelerations q̈ of each right-hand side, from [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; c]: on the
    // stack (evaluated after every step, so no allocation) when N + M fits, else on the heap.
    let mut x = [[0.0; N]; MAX_ACTUATORS + 1];
    if N + M <= crate::kkt::KKT_CAPACITY {
        let kkt = crate::kkt::Kkt::<N, M>::new(&mm, &j)?;
        for (col, xc) in x.iter_mut().enumerate().take(na + 1) {
            let mut b = [0.0; crate::kkt::KKT_CAPACITY];
            if col < na {
                b[..N].copy_from_slice(grads[col].as_slice());
            } else {
                b[..N].copy_from_slice(qg.as_slice());
                b[N..N + M].copy_from_slice(c.as_slice());
            }
            let sol = kkt.solve(&b);
            xc.copy_from_slice(&sol[..N]);
        }
    } else {
        let mut kkt = DMatrix::<f64>::zeros(N + M, N + M);
        for r in 0..N {
            for cc in 0..N {
                kkt[(r, cc)] = mm[(r, cc)];
            }
            for cc in 0..M {
                kkt[(r, N + cc)] = j[(cc, r)];
                kkt[(N + cc, r)] = j[(cc, r)];
            }
        }
        let mut rhs = DMatrix::<f64>::zeros(N + M, na + 1);
        for k in 0..na {
            for r in 0..N {
                rhs[(r, k)] = grads[k][r];
            }
        }
        for r in 0..N {
            rhs[(r, na)] = qg[r];
        }
        for r in 0..M {
            rhs[(N + r, na)] = c[r];
        }
        let sol = kkt.lu().solve(&rhs)?;
        for (col, xc) in x.iter_mut().enumerate().take(na + 1) {
            for (r, v) in xc.iter_mut().enumerate() {
                *v = sol[(r, col)];
            }
        }
    }
    let acc = |g: &SVector<f64, N>, col: usize| (0..N).map(|r| g[r] * x[col][r]).sum::<f64>();
    let mut w = [[0.0; MAX_ACTUATORS]; MAX_ACTUATORS];
    let mut b = [0.0; MAX_ACTUATORS];
    for i in 0..na {
        for (k, wik) in w[i].iter_mut().enumerate().take(na) {
            *wik = acc(&grads[i], k);
        }
        b[i] = acc(&grads[i], na) + curvature[i];
    }
    let mut im = InterfaceModel::default();
    match na {
        1 => im.m_eff[0][0] = 1.0 / w[0][0],
        2 => {
            let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
            im.m_eff = [[w[1][1] / det, -w[0][1] / det], [-w[1][0] / det, w[0][0] / det]];
        }
        _ => return None,
    }
    for i in 0..na {
        im.f_eff[i] = (0..na).map(|k| im.m_eff[i][k] * b[k]).sum();
    }
    let finite = im.m_eff.iter().flatten().chain(&im.f_eff).all(|v| v.is_finite());
    finite.then_some(im)
}

#[cfg(test)]
pub(crate) mod testing {
    //! Finite-difference checks shared by the mechanism tests.
    use super::*;

    /// Max abs difference between Φ_q and central differences of Φ, and between Φ̇_q (and
    /// Φ̇_q q̇) and central differences of Φ_q along q̇.
    pub fn derivative_errors<const N: usize, const M: usize>(
        mech: &impl Mechanism<N, M>,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
    ) -> (f64, f64) {
        let eps = 1e-6;
        let j = mech.jacobian(q);
        let mut e_j: f64 = 0.0;
        for i in 0..N {
            let mut dq = SVector::<f64, N>::zeros();
            dq[i] = eps;
            let col = (mech.constraints(&(q + dq)) - mech.constraints(&(q - dq))) / (2.0 * eps);
            e_j = e_j.max((col - j.column(i)).amax());
        }
        let jd = (mech.jacobian(&(q + qd * eps)) - mech.jacobian(&(q - qd * eps))) / (2.0 * eps);
        let e_jd =
            (jd * qd - mech.jacobian_dot_times_velocity(q, qd)).amax().max((jd - mech.jacobian_dot(q, qd)).amax());
        (e_j, e_jd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Hessian entry by entry is the matrix product Dᵀ (I − u uᵀ) D / s.
    #[test]
    fn hessian_equals_the_matrix_product() {
        let crane = crate::crane::Crane::double();
        let q = SVector::<f64, 5>::new(0.41, 0.29, 0.61, 0.95, -0.12);
        for k in 0..2 {
            let a = crate::mechanism::Mechanism::actuator(&crane, k);
            let Actuator::Distance { d, d0 } = &a else { panic!("distance actuator") };
            let v = d * q + d0;
            let s = v.norm();
            let u = v / s;
            let product = d.transpose() * (nalgebra::Matrix2::identity() - u * u.transpose()) * d / s;
            let (len, g, h) = a.length_gradient_hessian(&q);
            assert_eq!((len, g), a.length_and_gradient(&q));
            // Equal values (a zero may differ in sign, which no sum it enters sees).
            assert_eq!(h, product);
        }
    }

    #[test]
    fn distance_actuator_derivatives_match_finite_differences() {
        // s = |P − B| with P = (q0, q1), B = (1, 0.2), q2 unused.
        let mut d = SMatrix::<f64, 2, 3>::zeros();
        d[(0, 0)] = 1.0;
        d[(1, 1)] = 1.0;
        let a = Actuator::Distance { d, d0: Vector2::new(-1.0, -0.2) };
        let q = SVector::<f64, 3>::new(0.3, 0.7, 5.0);
        let qd = SVector::<f64, 3>::new(-0.4, 0.9, 1.0);
        let qdd = SVector::<f64, 3>::new(2.0, -1.0, 3.0);
        let eps = 1e-6;
        let g = a.gradient(&q);
        let h = a.hessian(&q);
        for i in 0..3 {
            let mut dq = SVector::<f64, 3>::zeros();
            dq[i] = eps;
            let gi = (a.length(&(q + dq)) - a.length(&(q - dq))) / (2.0 * eps);
            assert!((gi - g[i]).abs() < 1e-9);
            let hi = (a.gradient(&(q + dq)) - a.gradient(&(q - dq))) / (2.0 * eps);
            assert!((hi - h.column(i)).amax() < 1e-8);
        }
        // s(t) along q(t) = q + qd t + qdd t²/2: ṡ and s̈ by differences.
        let s_at = |t: f64| a.length(&(q + qd * t + qdd * (t * t / 2.0)));
        let k = a.kinematics(&q, &qd, &qdd);
        let e = 1e-4;
        assert!((k.s_dot - (s_at(e) - s_at(-e)) / (2.0 * e)).abs() < 1e-7);
        assert!((k.s_ddot - (s_at(e) - 2.0 * s_at(0.0) + s_at(-e)) / (e * e)).abs() < 1e-5);
    }
}
