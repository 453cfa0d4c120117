//! Penalty (augmented Lagrangian) semi-recursive formulation, monolithic with the circuit
//! (Pub I eqs. 15–28, 37–45; 002 eqs. 18–21): unknowns x = [z; p], trapezoidal rule on both
//! (eqs. 17, 38), residual f(x) = (Δt²/4)[M z̈ + Φ_zᵀαΦ + Φ_zᵀλ* − Q; ṗ − h] (eq. 41), Newton
//! with the tangent of eq. 42 ([`Tangent::Analytic`]: every block exact, the mechanical ones by
//! dual numbers) or the forward-difference tangent of eq. 45 ([`Tangent::Numerical`],
//! δ = 1e-8·max(1e-2, |x0|)); λ* ← λ* + αΦ after every iteration (eq. 16); mass-damping-stiffness
//! projections of ż and z̈ after convergence (eqs. 27–28 / 002 eqs. 20–21).

use crate::circuit::Drive;
use crate::mechanism::{Bodies, Eval, MAX_BODIES, MAX_CONSTRAINTS};
use crate::models::Model;
use crate::scalar::{DualN, Scalar};
use crate::state::{finish_step, State, StepStats};
use nalgebra::{SMatrix, SVector};

/// Padded size of the Newton system [z; p] (unused rows and columns are identity).
const D: usize = MAX_BODIES + 3;
/// A Newton vector.
type Vd = SVector<f64, D>;
/// A Newton matrix.
type Md = SMatrix<f64, D, D>;
/// A joint-space matrix (padded with identity).
type Mb = SMatrix<f64, MAX_BODIES, MAX_BODIES>;

/// Iterations after which the Newton update is halved (see [`Penalty::step`]).
pub const DAMP_AFTER: usize = 25;

/// Tangent matrix of the Newton iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tangent {
    /// Eq. 42, exact.
    Analytic,
    /// Forward differences, eq. 45.
    Numerical,
}

/// Solver settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Time step Δt (s).
    pub dt: f64,
    /// Penalty factor α (Pub I, 002: 1e11).
    pub alpha: f64,
    /// Position tolerance (rad).
    pub tol_z: f64,
    /// Pressure tolerance (Pa).
    pub tol_p: f64,
    /// Iteration cap (100, Pub II).
    pub max_iter: usize,
    /// Tangent.
    pub tangent: Tangent,
}

impl Settings {
    /// The papers' settings for `model` at step `dt`.
    pub fn paper(model: &Model, dt: f64, tangent: Tangent) -> Self {
        Self { dt, alpha: 1e11, tol_z: model.tol_z, tol_p: model.tol_p, max_iter: 100, tangent }
    }
}

/// The constant parts of the trapezoidal rule (eqs. 17, 38): ż = (2/Δt) z + ẑ̇, z̈ = (4/Δt²) z + ẑ̈,
/// ṗ = (2/Δt) p + p̂̇.
#[derive(Debug, Clone)]
pub struct Hats {
    /// ẑ̇.
    pub zd: [f64; MAX_BODIES],
    /// ẑ̈.
    pub zdd: [f64; MAX_BODIES],
    /// p̂̇.
    pub pd: [f64; 3],
}

impl Hats {
    /// From the state at t_n.
    pub fn new(st: &State, dt: f64) -> Self {
        let (c2, c4) = (2.0 / dt, 4.0 / (dt * dt));
        let (mut zd, mut zdd) = ([0.0; MAX_BODIES], [0.0; MAX_BODIES]);
        for j in 0..st.z.len().min(MAX_BODIES) {
            zd[j] = -(c2 * st.z[j] + st.zd[j]);
            zdd[j] = -(c4 * st.z[j] + 2.0 * c2 * st.zd[j] + st.zdd[j]);
        }
        Self { zd, zdd, pd: [0, 1, 2].map(|i| -(c2 * st.p[i] + st.pd[i])) }
    }
}

/// Pressure force F_p at the iterate x (N): from the pressures in x, or the given force.
fn fp_of(x: &Vd, n: usize, drive: Drive, circuit: &crate::circuit::Circuit) -> f64 {
    match drive {
        // p3 does not act on the piston.
        Drive::Circuit | Drive::CircuitRef(..) => circuit.pressure_force(&[x[n], x[n + 1], 0.0]),
        Drive::Force(fp) => fp,
    }
}

/// After a monolithic step with SP: the algebraic p3 and its rate at the new (p1, U) (Pub II
/// eqs. 33–34); nothing for LF.
pub(crate) fn sp_p3(circuit: &crate::circuit::Circuit, st: &mut State, u1: f64, u_ref1: f64) {
    if let Some(pd3) = circuit.p3_rate(&st.p, &st.pd, u1, circuit.spool_rate(u1, u_ref1)) {
        st.p = circuit.pressures(&st.p, u1);
        st.pd[2] = pd3;
    }
}

/// The penalty integrator for one model.
#[derive(Debug, Clone)]
pub struct Penalty<'m> {
    /// Model.
    pub model: &'m Model,
    /// Settings.
    pub set: Settings,
    /// Iterations after which the update is halved: [`DAMP_AFTER`], or `usize::MAX` for plain
    /// Newton as the papers describe it ([`plain_newton`](Self::plain_newton)).
    pub damp_after: usize,
}

impl<'m> Penalty<'m> {
    /// An integrator.
    pub fn new(model: &'m Model, set: Settings) -> Self {
        Self { model, set, damp_after: DAMP_AFTER }
    }

    /// This integrator without the halving of the update: plain Newton (Pub I eqs. 19–20, 40).
    pub fn plain_newton(mut self) -> Self {
        self.damp_after = usize::MAX;
        self
    }

    /// Mechanical rows of eq. 15 (unscaled): M z̈ − Q_g − F_s J_sᵀ + Φ_zᵀ(αΦ + λ*), and s, ṡ.
    fn mech_rows<S: Scalar>(&self, z: &[S], zd: &[S], zdd: &[S], fp: f64, lambda: &[f64]) -> (Bodies<S>, Eval<S>) {
        let mech = &self.model.mechanism;
        let (n, m) = (mech.n(), mech.m());
        let e = mech.eval(z, zd, zdd);
        let f = self.model.circuit.force_from(S::cst(fp), e.s_dot);
        let mut rows = e.r;
        let mut mult = [S::cst(0.0); MAX_CONSTRAINTS];
        for i in 0..m {
            mult[i] = S::cst(self.set.alpha) * e.phi[i] + S::cst(lambda[i]);
        }
        for j in 0..n {
            rows[j] -= f * e.js[j];
            for i in 0..m {
                rows[j] += e.phi_z[i * n + j] * mult[i];
            }
        }
        (rows, e)
    }

    /// f(x) of eq. 41, all in f64.
    fn residual(&self, x: &Vd, hats: &Hats, u1: f64, lambda: &[f64], drive: Drive) -> Vd {
        let n = self.model.mechanism.n();
        let dt = self.set.dt;
        let (c2, c4, h4) = (2.0 / dt, 4.0 / (dt * dt), dt * dt / 4.0);
        let z = Bodies::from_fn(n, 0.0, |j| x[j]);
        let zd = Bodies::from_fn(n, 0.0, |j| c2 * z[j] + hats.zd[j]);
        let zdd = Bodies::from_fn(n, 0.0, |j| c4 * z[j] + hats.zdd[j]);
        let (rows, e) = self.mech_rows(&z, &zd, &zdd, fp_of(x, n, drive, &self.model.circuit), lambda);
        let (s, sd) = (e.s, e.s_dot);
        let mut f = Vd::zeros();
        for j in 0..n {
            f[j] = h4 * rows[j];
        }
        if drive.monolithic() {
            let circuit = &self.model.circuit;
            let p = circuit.pressures(&x.as_slice()[n..], u1);
            let h = circuit.rates(&p, u1, s, sd);
            for i in 0..circuit.np() {
                f[n + i] = h4 * (c2 * p[i] + hats.pd[i] - h[i]);
            }
        }
        f
    }

    /// f(x) and the tangent of eq. 42.
    fn system(&self, x: &Vd, hats: &Hats, u1: f64, lambda: &[f64], drive: Drive) -> (Vd, Md) {
        let n = self.model.mechanism.n();
        let dim = n + if drive.monolithic() { self.model.circuit.np() } else { 0 };
        let (f, mut jac) = self.system_unpadded(x, hats, u1, lambda, drive, n, dim);
        for k in dim..D {
            jac[(k, k)] = 1.0;
        }
        (f, jac)
    }

    /// [`system`](Self::system) on the first `dim` rows and columns.
    #[allow(clippy::too_many_arguments)]
    fn system_unpadded(
        &self,
        x: &Vd,
        hats: &Hats,
        u1: f64,
        lambda: &[f64],
        drive: Drive,
        n: usize,
        dim: usize,
    ) -> (Vd, Md) {
        let dt = self.set.dt;
        let (c2, c4, h4) = (2.0 / dt, 4.0 / (dt * dt), dt * dt / 4.0);
        match self.set.tangent {
            Tangent::Numerical => {
                let f0 = self.residual(x, hats, u1, lambda, drive);
                let mut jac = Md::zeros();
                for k in 0..dim {
                    // Eq. 45: δ = 1e-8·max(1e-2, |x0|).
                    let d = 1e-8 * x[k].abs().max(1e-2);
                    let mut xp = *x;
                    xp[k] += d;
                    jac.set_column(k, &((self.residual(&xp, hats, u1, lambda, drive) - f0) / d));
                }
                (f0, jac)
            }
            Tangent::Analytic => {
                let circuit = &self.model.circuit;
                let fp = fp_of(x, n, drive, circuit);
                let mut f = Vd::zeros();
                let mut jac = Md::zeros();
                let mut ds = [(0.0, 0.0); MAX_BODIES];
                let mut js = [0.0; MAX_BODIES];
                // All n columns in one pass: lane k carries ∂/∂z_k (ż and z̈ follow z by the trapezoidal rule).
                type D6 = DualN<MAX_BODIES>;
                let z = Bodies::from_fn(n, D6::default(), |j| D6::seed(x[j], j, 1.0));
                let zd = Bodies::from_fn(n, D6::default(), |j| D6::seed(c2 * x[j] + hats.zd[j], j, c2));
                let zdd = Bodies::from_fn(n, D6::default(), |j| D6::seed(c4 * x[j] + hats.zdd[j], j, c4));
                let (rows, e) = self.mech_rows(&z, &zd, &zdd, fp, lambda);
                for j in 0..n {
                    f[j] = h4 * rows[j].v;
                    js[j] = e.js[j].v;
                    for k in 0..n {
                        jac[(j, k)] = h4 * rows[j].d[k];
                    }
                }
                let (s, sd) = (e.s.v, e.s_dot.v);
                for k in 0..n {
                    ds[k] = (e.s.d[k], e.s_dot.d[k]);
                }
                if !drive.monolithic() {
                    return (f, jac);
                }
                let np = circuit.np();
                let p = circuit.pressures(&x.as_slice()[n..], u1);
                // Upper-right block: −(Δt²/4) ∂Q/∂p = (Δt²/4) J_sᵀ ∂F_s/∂p (reversed sign: −F J_s in f).
                let df = circuit.force_dp(&p, sd);
                for j in 0..n {
                    for i in 0..np {
                        jac[(j, n + i)] = -h4 * js[j] * df[i];
                    }
                }
                // Hydraulic rows: −(Δt/2)((Δt/2)∂h/∂z + ∂h/∂ż) and (Δt/2)(I − (Δt/2)∂h/∂p).
                let h = circuit.rates(&p, u1, s, sd);
                let (dh_dp, dh_ds, dh_dsd) = circuit.rates_derivatives(&p, u1, s, sd);
                for i in 0..np {
                    f[n + i] = h4 * (c2 * p[i] + hats.pd[i] - h[i]);
                    for (k, (dsk, dsdk)) in ds.iter().take(n).enumerate() {
                        jac[(n + i, k)] = -h4 * (dh_ds[i] * dsk + dh_dsd[i] * dsdk);
                    }
                    for k in 0..np {
                        jac[(n + i, n + k)] = if i == k { dt / 2.0 } else { 0.0 } - h4 * dh_dp[(i, k)];
                    }
                }
                (f, jac)
            }
        }
    }

    /// One monolithic step Δt from `st`.
    pub fn step(&self, st: &mut State) -> Result<StepStats, String> {
        self.step_driven(st, Drive::Circuit)
    }

    /// One step Δt from `st`, the actuator driven by `drive`.
    pub fn step_driven(&self, st: &mut State, drive: Drive) -> Result<StepStats, String> {
        let model = self.model;
        let mech = &model.mechanism;
        let (n, m) = (mech.n(), mech.m());
        let dt = self.set.dt;
        let (c2, c4, h4) = (2.0 / dt, 4.0 / (dt * dt), dt * dt / 4.0);
        let t1 = st.t + dt;
        let (ur0, ur1) = drive.u_ref(&model.cycle, st.t, dt);
        let u1 = model.circuit.spool_step(st.u, ur0, ur1, dt);
        let hats = Hats::new(st, dt);
        // Predictor.
        // Pressure unknowns: [p1, p2, p3] (LF) or [p1, p2] (SP, Pub II: p3 algebraic).
        let np = if drive.monolithic() { model.circuit.np() } else { 0 };
        let mut x = Vd::zeros();
        for j in 0..n {
            x[j] = st.z[j] + dt * st.zd[j] + 0.5 * dt * dt * st.zdd[j];
        }
        for i in 0..np {
            x[n + i] = st.p[i] + dt * st.pd[i];
        }
        let mut lambda = [0.0; MAX_CONSTRAINTS];
        lambda[..m].copy_from_slice(&st.lambda);
        let mut stats = StepStats { independent: usize::MAX, ..StepStats::default() };
        let mut tangent = None;
        for it in 1..=self.set.max_iter {
            let (f, jac) = self.system(&x, &hats, u1, &lambda, drive);
            let mut dx = jac.lu().solve(&(-f)).ok_or_else(|| format!("t = {t1} s: singular tangent"))?;
            if it > self.damp_after {
                // A full Newton step that keeps cycling (the friction law switches sign with ṡ
                // inside the step at large Δt): halve the update. Never reached at Δt ≤ 5 ms.
                dx *= 0.5;
            }
            x += &dx;
            tangent = Some(jac);
            // Eq. 16: λ* ← λ* + αΦ at the new positions.
            let (phi, _) = mech.constraints(&mech.pose(&x.as_slice()[..n]));
            for i in 0..m {
                lambda[i] += self.set.alpha * phi[i];
            }
            let dz = dx.rows(0, n).amax();
            let dp = if np > 0 { dx.rows(n, np).amax() } else { 0.0 };
            if !(dz.is_finite() && dp.is_finite()) {
                return Err(format!("t = {t1} s: Newton diverged"));
            }
            if dz <= self.set.tol_z && dp <= self.set.tol_p {
                stats.iterations = it;
                break;
            }
        }
        if stats.iterations == 0 {
            return Err(format!("t = {t1} s: no convergence in {} iterations", self.set.max_iter));
        }
        let Some(jac) = tangent else { return Err("no iteration".into()) };
        let z = &x.as_slice()[..n];
        let mut zd1 = SVector::<f64, MAX_BODIES>::zeros();
        let mut zdd1 = SVector::<f64, MAX_BODIES>::zeros();
        for j in 0..n {
            zd1[j] = c2 * z[j] + hats.zd[j];
            zdd1[j] = c4 * z[j] + hats.zdd[j];
        }
        // Projections (002 eqs. 20–21): W_α = ∂f_z/∂z, W = W_α − (Δt²/4)Φ_zᵀαΦ_z (padded with I).
        let (_, phi_z_flat) = mech.constraints(&mech.pose(z));
        let mut phi_z = SMatrix::<f64, MAX_CONSTRAINTS, MAX_BODIES>::zeros();
        let mut w_alpha = Mb::identity();
        for j in 0..n {
            for i in 0..m {
                phi_z[(i, j)] = phi_z_flat[i * n + j];
            }
            for k in 0..n {
                w_alpha[(j, k)] = jac[(j, k)];
            }
        }
        let pen = phi_z.transpose() * phi_z * (h4 * self.set.alpha);
        let w = w_alpha - pen;
        let lu = w_alpha.lu();
        let zd = lu.solve(&(w * zd1)).ok_or("singular projection matrix")?;
        let conv_flat = mech.phi_z_dot_zd(z, &zd.as_slice()[..n]);
        let mut conv = SVector::<f64, MAX_CONSTRAINTS>::zeros();
        for i in 0..m {
            conv[i] = conv_flat[i];
        }
        let rhs = w * zdd1 - phi_z.transpose() * conv * (h4 * self.set.alpha);
        let zdd = lu.solve(&rhs).ok_or("singular projection matrix")?;
        let (f_prev, sd_prev) = (st.force, st.s[1]);
        st.t = t1;
        st.z.copy_from_slice(z);
        st.zd.copy_from_slice(&zd.as_slice()[..n]);
        st.zdd.copy_from_slice(&zdd.as_slice()[..n]);
        for i in 0..np {
            st.pd[i] = c2 * x[n + i] + hats.pd[i];
            st.p[i] = x[n + i];
        }
        if np > 0 {
            sp_p3(&model.circuit, st, u1, ur1);
        }
        st.u = u1;
        st.lambda.copy_from_slice(&lambda[..m]);
        let fp = fp_of(&x, n, drive, &model.circuit);
        finish_step(model, st, f_prev, sd_prev, fp, &mut stats, dt);
        Ok(stats)
    }
}
