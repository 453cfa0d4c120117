//! The planar semi-recursive engine (Pub I §2, 002 §2): a mechanism is a table of bodies, each
//! joined to its parent (or the ground) by a revolute joint with relative angle z_k, plus cut
//! joints that close the loops (Φ(z) = 0) and one hydraulic actuator between two points.
//!
//! Planar body coordinates Z_k = [ṙ_k; ω_k] (ṙ_k: velocity of the body point coincident with the
//! global origin). Recursion (Pub I eqs. 2–6, 002 eqs. 1–6): Z_k = Z_{k−1} + b_k ż_k,
//! Ż_k = Ż_{k−1} + b_k z̈_k + d_k, with b_k = [y_k; −x_k; 1] for a revolute joint at (x_k, y_k)
//! and d_k = ḃ_k ż_k. The path matrix T (T_kj = I when joint j lies on the path from the ground
//! to body k) and R_d = diag(b_k) give Z = T R_d ż, so M(z) = R_dᵀ Tᵀ M̄ T R_d (Pub I eq. 11) and
//! Q = R_dᵀ Tᵀ (Q̄ − M̄ T Ṙ_d ż) (002 eq. 11; the printed Pub I eq. 12 misses Ṙ_d).
//!
//! Body matrices, planar form of Pub I eqs. 8–10: with the centre of mass g_k and
//! N_k = [1 0 −g_y; 0 1 g_x] (v_g = N_k Z_k), M̄_k = m N_kᵀN_k + J e₃e₃ᵀ and
//! Q̄_k = N_kᵀ (f_k − m ω_k ẑ × v_g) + e₃ n_k. Everything is generic over [`Scalar`] so the same
//! code yields exact derivatives with [`crate::scalar::Dual`].

use crate::scalar::Scalar;
use nalgebra::{DMatrix, DVector};
use std::ops::{Deref, DerefMut};

/// Most bodies (joint coordinates) a mechanism may have.
pub const MAX_BODIES: usize = 6;
/// Most constraint equations.
pub const MAX_CONSTRAINTS: usize = 4;
/// Capacity of Φ_z (row-major).
pub const MAX_JACOBIAN: usize = MAX_BODIES * MAX_CONSTRAINTS;

/// A vector of at most `C` values on the stack (the engine allocates nothing per evaluation);
/// derefs to the slice of its `len` values.
#[derive(Debug, Clone, Copy)]
pub struct Fixed<T: Copy, const C: usize> {
    len: usize,
    data: [T; C],
}

impl<T: Copy, const C: usize> Fixed<T, C> {
    /// `len` copies of `fill`.
    #[inline]
    pub fn filled(len: usize, fill: T) -> Self {
        Self { len: len.min(C), data: [fill; C] }
    }

    /// Empty, with `fill` in the unused slots.
    #[inline]
    pub fn empty(fill: T) -> Self {
        Self { len: 0, data: [fill; C] }
    }

    /// Appends (ignored beyond the capacity, which [`Mechanism::new`] rules out).
    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len < C {
            self.data[self.len] = v;
            self.len += 1;
        }
    }

    /// From a function of the index.
    #[inline]
    pub fn from_fn(len: usize, fill: T, f: impl Fn(usize) -> T) -> Self {
        let mut out = Self::filled(len, fill);
        for i in 0..out.len {
            out.data[i] = f(i);
        }
        out
    }
}

impl<T: Copy, const C: usize> Deref for Fixed<T, C> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.data[..self.len]
    }
}

impl<T: Copy, const C: usize> DerefMut for Fixed<T, C> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.data[..self.len]
    }
}

/// Per-body values.
pub type Bodies<T> = Fixed<T, MAX_BODIES>;

/// A point fixed on a body (local coordinates in the body frame, m) or on the ground (global).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Body index, `None` for the ground.
    pub body: Option<usize>,
    /// Coordinates in the body frame (origin at the body's joint, x along the body) or global (m).
    pub local: [f64; 2],
}

impl Point {
    /// A point of body `b`.
    pub const fn on(b: usize, x: f64, y: f64) -> Self {
        Self { body: Some(b), local: [x, y] }
    }
    /// A ground point.
    pub const fn ground(x: f64, y: f64) -> Self {
        Self { body: None, local: [x, y] }
    }
}

/// One body and the revolute joint to its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// Name (documentation, error messages).
    pub name: &'static str,
    /// Parent body (index below this one's), `None` for the ground.
    pub parent: Option<usize>,
    /// Joint position in the parent's frame (global if the parent is the ground) (m).
    pub joint: [f64; 2],
    /// Mass m (kg).
    pub mass: f64,
    /// Moment of inertia about the centre of mass J (kg·m²).
    pub inertia: f64,
    /// Centre of mass in the body frame (m).
    pub com: [f64; 2],
}

/// A cut joint: constraints Φ that close a loop of the tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CutJoint {
    /// Revolute: point `a` coincides with point `b` (2 equations, m).
    Revolute {
        /// Point on one side.
        a: Point,
        /// Point on the other side.
        b: Point,
    },
    /// Prismatic (translational): body `b` keeps the angle θ_b − θ_a = `angle` (rad) and its
    /// point `b` stays on the line through point `a` along `axis` (a unit vector in a's frame):
    /// Φ = [θ_b − θ_a − angle; u × (r_b − r_a)] (rad, m).
    Prismatic {
        /// Point of the line, on body a (or ground).
        a: Point,
        /// Line direction in a's frame (unit).
        axis: [f64; 2],
        /// Sliding point of body b.
        b: Point,
        /// Relative angle θ_b − θ_a (rad).
        angle: f64,
    },
}

impl CutJoint {
    /// Number of constraint equations (2 for both kinds in the plane).
    pub const fn equations(&self) -> usize {
        2
    }
}

/// A mechanism: the table of bodies and joints, the cut joints, the actuator and gravity.
#[derive(Debug, Clone, PartialEq)]
pub struct Mechanism {
    /// Bodies in tree order (a parent before its children).
    pub bodies: Vec<Body>,
    /// Loop-closing cut joints.
    pub cuts: Vec<CutJoint>,
    /// Actuator ends: base and attachment; s = |r_attach − r_base| (Pub I eqs. 47–49).
    pub actuator: [Point; 2],
    /// Gravitational acceleration along −Y, g (m/s²).
    pub gravity: f64,
    /// path\[k\]\[j\]: joint j lies on the path from the ground to body k (T_kj = I, Pub I eq. 7).
    path: Vec<Vec<bool>>,
}

/// Absolute angles θ_k and joint positions (origins of the body frames), from z.
#[derive(Debug, Clone)]
pub struct Pose<S: Copy> {
    /// θ_k (rad).
    pub theta: Bodies<S>,
    /// Joint position of body k (global, m).
    pub origin: Bodies<[S; 2]>,
    /// [cos θ_k, sin θ_k], evaluated once per pose.
    pub cs: Bodies<[S; 2]>,
}

/// What one evaluation of the mechanism at (z, ż, z̈) gives.
#[derive(Debug, Clone)]
pub struct Eval<S: Copy> {
    /// M z̈ − Q_g = R_dᵀTᵀ(M̄Ż − Q̄) (N·m): the open-loop equations of motion (002 eq. 11) with
    /// gravity and the velocity terms, without actuator and constraint forces.
    pub r: Bodies<S>,
    /// Φ(z) (m or rad).
    pub phi: Fixed<S, MAX_CONSTRAINTS>,
    /// Φ_z, row-major (m × n).
    pub phi_z: Fixed<S, MAX_JACOBIAN>,
    /// Actuator length s (m).
    pub s: S,
    /// ṡ = J_s ż (m/s).
    pub s_dot: S,
    /// J_s = ∂s/∂z (m).
    pub js: Bodies<S>,
}

/// Errors found when building a mechanism.
fn check(bodies: &[Body]) -> Result<(), String> {
    for (k, b) in bodies.iter().enumerate() {
        if let Some(p) = b.parent {
            if p >= k {
                return Err(format!("body {k} ({}): parent {p} must come before it in the table", b.name));
            }
        }
        if !(b.mass > 0.0 && b.inertia > 0.0) {
            return Err(format!(
                "body {k} ({}): mass {} kg and inertia {} kg·m² must be positive",
                b.name, b.mass, b.inertia
            ));
        }
    }
    Ok(())
}

#[inline]
fn rot<S: Scalar>(cs: [S; 2], p: [f64; 2]) -> [S; 2] {
    let [c, s] = cs;
    [c * S::cst(p[0]) - s * S::cst(p[1]), s * S::cst(p[0]) + c * S::cst(p[1])]
}

#[inline]
fn cross<S: Scalar>(a: [S; 2], b: [S; 2]) -> S {
    a[0] * b[1] - a[1] * b[0]
}

impl Mechanism {
    /// Builds the mechanism and its path matrix; the message names a bad body.
    pub fn new(bodies: Vec<Body>, cuts: Vec<CutJoint>, actuator: [Point; 2], gravity: f64) -> Result<Self, String> {
        check(&bodies)?;
        let m: usize = cuts.iter().map(CutJoint::equations).sum();
        if bodies.len() > MAX_BODIES || m > MAX_CONSTRAINTS {
            return Err(format!(
                "{} bodies and {m} constraint equations: at most {MAX_BODIES} and {MAX_CONSTRAINTS} (MAX_BODIES, MAX_CONSTRAINTS)",
                bodies.len()
            ));
        }
        let n = bodies.len();
        let mut path = vec![vec![false; n]; n];
        for k in 0..n {
            let mut j = Some(k);
            while let Some(i) = j {
                path[k][i] = true;
                j = bodies[i].parent;
            }
        }
        Ok(Self { bodies, cuts, actuator, gravity, path })
    }

    /// Number of joint coordinates n.
    pub fn n(&self) -> usize {
        self.bodies.len()
    }

    /// Number of constraints m.
    pub fn m(&self) -> usize {
        self.cuts.iter().map(CutJoint::equations).sum()
    }

    /// Whether joint j is on the path to body k (the block T_kj of Pub I eq. 7).
    pub fn on_path(&self, k: usize, j: usize) -> bool {
        self.path[k][j]
    }

    /// Positions: θ_k = θ_parent + z_k, joint k at r_parent + A(θ_parent) joint_k.
    pub fn pose<S: Scalar>(&self, z: &[S]) -> Pose<S> {
        let zero = S::cst(0.0);
        let mut theta = Bodies::empty(zero);
        let mut origin = Bodies::empty([zero; 2]);
        let mut cs = Bodies::empty([zero; 2]);
        for (k, b) in self.bodies.iter().enumerate() {
            match b.parent {
                None => {
                    theta.push(z[k]);
                    origin.push([S::cst(b.joint[0]), S::cst(b.joint[1])]);
                }
                Some(p) => {
                    let d = rot(cs[p], b.joint);
                    let o: [S; 2] = origin[p];
                    theta.push(theta[p] + z[k]);
                    origin.push([o[0] + d[0], o[1] + d[1]]);
                }
            }
            cs.push([theta[k].cos(), theta[k].sin()]);
        }
        Pose { theta, origin, cs }
    }

    /// Global position of a point (m).
    pub fn point<S: Scalar>(&self, pose: &Pose<S>, p: &Point) -> [S; 2] {
        match p.body {
            None => [S::cst(p.local[0]), S::cst(p.local[1])],
            Some(b) => {
                let d = rot(pose.cs[b], p.local);
                [pose.origin[b][0] + d[0], pose.origin[b][1] + d[1]]
            }
        }
    }

    /// ∂r/∂z_j of a point at r on body `body`: ẑ × (r − r_j) for joints j on its path, else 0.
    fn point_jacobian<S: Scalar>(&self, pose: &Pose<S>, body: Option<usize>, r: [S; 2]) -> Bodies<[S; 2]> {
        let zero = S::cst(0.0);
        Bodies::from_fn(self.n(), [zero; 2], |j| match body {
            Some(b) if self.path[b][j] => {
                let o = pose.origin[j];
                [-(r[1] - o[1]), r[0] - o[0]]
            }
            _ => [zero, zero],
        })
    }

    /// Φ(z) and Φ_z (row-major m × n) of the cut joints.
    pub fn constraints<S: Scalar>(&self, pose: &Pose<S>) -> (Fixed<S, MAX_CONSTRAINTS>, Fixed<S, MAX_JACOBIAN>) {
        let n = self.n();
        let zero = S::cst(0.0);
        let mut phi = Fixed::empty(zero);
        let mut phi_z = Fixed::empty(zero);
        for cut in &self.cuts {
            match cut {
                CutJoint::Revolute { a, b } => {
                    let (ra, rb) = (self.point(pose, a), self.point(pose, b));
                    let (ja, jb) = (self.point_jacobian(pose, a.body, ra), self.point_jacobian(pose, b.body, rb));
                    for c in 0..2 {
                        phi.push(ra[c] - rb[c]);
                        for j in 0..n {
                            phi_z.push(ja[j][c] - jb[j][c]);
                        }
                    }
                }
                CutJoint::Prismatic { a, axis, b, angle } => {
                    let th = |p: &Point| p.body.map_or(zero, |i| pose.theta[i]);
                    phi.push(th(b) - th(a) - S::cst(*angle));
                    let on = |p: &Point, j: usize| p.body.is_some_and(|i| self.path[i][j]);
                    for j in 0..n {
                        phi_z.push(S::cst(f64::from(u8::from(on(b, j))) - f64::from(u8::from(on(a, j)))));
                    }
                    let u = match a.body {
                        None => [S::cst(axis[0]), S::cst(axis[1])],
                        Some(i) => rot(pose.cs[i], *axis),
                    };
                    let (ra, rb) = (self.point(pose, a), self.point(pose, b));
                    let d = [rb[0] - ra[0], rb[1] - ra[1]];
                    phi.push(cross(u, d));
                    let (ja, jb) = (self.point_jacobian(pose, a.body, ra), self.point_jacobian(pose, b.body, rb));
                    for j in 0..n {
                        let dd = [jb[j][0] - ja[j][0], jb[j][1] - ja[j][1]];
                        let du = if on(a, j) { cross([-u[1], u[0]], d) } else { zero };
                        phi_z.push(du + cross(u, dd));
                    }
                }
            }
        }
        (phi, phi_z)
    }

    /// s, J_s = ∂s/∂z (Pub I eqs. 47–49: ṡ = J_s ż, the actuator force F enters Q as F J_sᵀ).
    pub fn actuator<S: Scalar>(&self, pose: &Pose<S>) -> (S, Bodies<S>) {
        let [p0, p1] = &self.actuator;
        let (r0, r1) = (self.point(pose, p0), self.point(pose, p1));
        let v = [r1[0] - r0[0], r1[1] - r0[1]];
        let s = (v[0] * v[0] + v[1] * v[1]).sqrt();
        let u = [v[0] / s, v[1] / s];
        let (j0, j1) = (self.point_jacobian(pose, p0.body, r0), self.point_jacobian(pose, p1.body, r1));
        let js =
            Bodies::from_fn(self.n(), S::cst(0.0), |j| u[0] * (j1[j][0] - j0[j][0]) + u[1] * (j1[j][1] - j0[j][1]));
        (s, js)
    }

    /// b_k = [y_k; −x_k; 1] of every joint (the blocks of R_d).
    fn b<S: Scalar>(&self, pose: &Pose<S>) -> Bodies<[S; 3]> {
        Bodies::from_fn(self.n(), [S::cst(0.0); 3], |k| {
            let o = pose.origin[k];
            [o[1], -o[0], S::cst(1.0)]
        })
    }

    /// The whole evaluation at (z, ż, z̈): eq. 11 residual, Φ, Φ_z, s, ṡ, J_s.
    pub fn eval<S: Scalar>(&self, z: &[S], zd: &[S], zdd: &[S]) -> Eval<S> {
        let n = self.n();
        let zero = S::cst(0.0);
        let pose = self.pose(z);
        let b = self.b(&pose);
        // Z_k, Ż_k by the recursion (Pub I eqs. 2–6).
        let mut big_z = Bodies::filled(n, [zero; 3]);
        let mut big_zd = Bodies::filled(n, [zero; 3]);
        let mut e = Bodies::filled(n, [zero; 3]);
        for k in 0..n {
            let (zp, zdp, vj) = match self.bodies[k].parent {
                None => ([zero; 3], [zero; 3], [zero; 2]),
                Some(p) => {
                    let (zp, o) = (big_z[p], pose.origin[k]);
                    // Velocity of the joint point: ḃ_k = [v_y; −v_x; 0].
                    (zp, big_zd[p], [zp[0] - zp[2] * o[1], zp[1] + zp[2] * o[0]])
                }
            };
            let db = [vj[1], -vj[0], zero];
            for c in 0..3 {
                big_z[k][c] = zp[c] + b[k][c] * zd[k];
                big_zd[k][c] = zdp[c] + b[k][c] * zdd[k] + db[c] * zd[k];
            }
            // e_k = M̄_k Ż_k − Q̄_k = N_kᵀ(m a_g − f_k) + e₃ J ω̇_k.
            let body = &self.bodies[k];
            let g = self.point(&pose, &Point { body: Some(k), local: body.com });
            let (zk, zdk) = (big_z[k], big_zd[k]);
            let w = zk[2];
            let vg = [zk[0] - w * g[1], zk[1] + w * g[0]];
            let ag = [zdk[0] - zdk[2] * g[1] - w * vg[1], zdk[1] + zdk[2] * g[0] + w * vg[0]];
            let m = S::cst(body.mass);
            let f = [m * ag[0], m * ag[1] + m * S::cst(self.gravity)];
            e[k] = [f[0], f[1], -g[1] * f[0] + g[0] * f[1] + S::cst(body.inertia) * zdk[2]];
        }
        // r = R_dᵀ Tᵀ e: accumulate the subtree sums, then project on b_j.
        for k in (0..n).rev() {
            if let Some(p) = self.bodies[k].parent {
                let ek = e[k];
                for c in 0..3 {
                    e[p][c] += ek[c];
                }
            }
        }
        let r = Bodies::from_fn(n, zero, |j| b[j][0] * e[j][0] + b[j][1] * e[j][1] + b[j][2] * e[j][2]);
        let (phi, phi_z) = self.constraints(&pose);
        let (s, js) = self.actuator(&pose);
        let mut s_dot = zero;
        for j in 0..n {
            s_dot += js[j] * zd[j];
        }
        Eval { r, phi, phi_z, s, s_dot, js }
    }

    /// M(z) = R_dᵀ Tᵀ M̄ T R_d (Pub I eq. 11) (kg·m²).
    pub fn mass_matrix(&self, z: &[f64]) -> DMatrix<f64> {
        let n = self.n();
        let pose = self.pose(z);
        let b = self.b(&pose);
        let mut m = DMatrix::zeros(n, n);
        for (k, body) in self.bodies.iter().enumerate() {
            let g = self.point(&pose, &Point { body: Some(k), local: body.com });
            let mb = nalgebra::Matrix3::new(
                body.mass,
                0.0,
                -body.mass * g[1],
                0.0,
                body.mass,
                body.mass * g[0],
                -body.mass * g[1],
                body.mass * g[0],
                body.inertia + body.mass * (g[0] * g[0] + g[1] * g[1]),
            );
            // Row block k of T R_d.
            let mut rk = nalgebra::Matrix3xX::zeros(n);
            for j in (0..n).filter(|&j| self.path[k][j]) {
                rk.set_column(j, &nalgebra::Vector3::from(b[j]));
            }
            m += rk.transpose() * mb * rk;
        }
        m
    }

    /// Kinetic energy ½ Σ (m |v_g|² + J ω²) (J).
    pub fn kinetic_energy(&self, z: &[f64], zd: &[f64]) -> f64 {
        let m = self.mass_matrix(z);
        let v = DVector::from_column_slice(zd);
        0.5 * v.dot(&(m * &v))
    }

    /// Potential energy Σ m g y_g (J).
    pub fn potential_energy(&self, z: &[f64]) -> f64 {
        let pose = self.pose(z);
        self.bodies
            .iter()
            .enumerate()
            .map(|(k, b)| b.mass * self.gravity * self.point(&pose, &Point { body: Some(k), local: b.com })[1])
            .sum()
    }

    /// Φ̇_z ż (the convective term of the acceleration constraints), by differentiating Φ_z along ż.
    pub fn phi_z_dot_zd(&self, z: &[f64], zd: &[f64]) -> Fixed<f64, MAX_CONSTRAINTS> {
        use crate::scalar::Dual;
        let n = self.n();
        let zz = Bodies::from_fn(z.len(), Dual::default(), |j| Dual::new(z[j], zd[j]));
        let (_, phi_z) = self.constraints(&self.pose(&zz));
        Fixed::from_fn(self.m(), 0.0, |i| (0..n).map(|j| phi_z[i * n + j].d * zd[j]).sum())
    }
}
