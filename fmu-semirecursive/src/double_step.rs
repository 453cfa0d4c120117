//! Double-step semi-recursive formulation (002 §2.2, §3; eqs. 13–17, 30–38): independent
//! coordinates z^i by full-pivoting elimination of Φ_z ([`Partition`]), dependent ones by Newton on
//! Φ(z) = 0, the reduced equations M″z̈^i = Q″ with M″ = R_zᵀM R_z, Q″ = R_zᵀ(Q − M Ṙ_z ż^i)
//! (eq. 16), trapezoidal rule on [z^i; p] (eqs. 32–34) solved by Newton on the residual of
//! eq. 38 with the numerical tangent of eq. 41.

use crate::circuit::Drive;
use crate::models::Model;
use crate::partition::Partition;
use crate::penalty::Settings;
use crate::state::{finish_step, State, StepStats};
use nalgebra::{DMatrix, DVector};

/// The double-step integrator.
#[derive(Debug, Clone)]
pub struct DoubleStep<'m> {
    /// Model.
    pub model: &'m Model,
    /// Settings (α and the tangent choice are not used: the tangent is numerical).
    pub set: Settings,
}

/// Everything at one iterate x = [z^i; p].
struct Point {
    z: Vec<f64>,
    zd: Vec<f64>,
    zdd: Vec<f64>,
    f: DVector<f64>,
    fp: f64,
}

impl<'m> DoubleStep<'m> {
    /// An integrator.
    pub fn new(model: &'m Model, set: Settings) -> Self {
        Self { model, set }
    }

    /// Dependent coordinates from Φ(z) = 0 (Newton, to round-off), starting from `z`.
    fn close(&self, part: &Partition, z: &mut [f64]) -> Result<(), String> {
        let mech = &self.model.mechanism;
        let (n, m) = (mech.n(), mech.m());
        for _ in 0..30 {
            let (phi, phi_z) = mech.constraints(&mech.pose(z));
            let phi_z = DMatrix::from_row_slice(m, n, &phi_z);
            let (d, _) = part.split(&phi_z);
            let dz = d.lu().solve(&(-DVector::from_column_slice(&phi))).ok_or("singular dependent Jacobian")?;
            for (k, &j) in part.dependent.iter().enumerate() {
                z[j] += dz[k];
            }
            if dz.amax() <= 1e-15 * (1.0 + z.iter().fold(0.0f64, |a, v| a.max(v.abs()))) {
                return Ok(());
            }
        }
        let (phi, _) = mech.constraints(&mech.pose(z));
        if phi.iter().all(|v| v.abs() < 1e-12) {
            Ok(())
        } else {
            Err("position problem Φ(z) = 0 did not converge".into())
        }
    }

    /// Residual of eq. 38 at x (and the full z, ż, z̈).
    #[allow(clippy::too_many_arguments)]
    fn point(
        &self,
        part: &Partition,
        x: &DVector<f64>,
        zdep: &[f64],
        hats: &crate::penalty::Hats,
        u1: f64,
        drive: Drive,
    ) -> Result<Point, String> {
        let model = self.model;
        let mech = &model.mechanism;
        let (n, m) = (mech.n(), mech.m());
        let ni = n - m;
        let dt = self.set.dt;
        let (c2, c4, h4) = (2.0 / dt, 4.0 / (dt * dt), dt * dt / 4.0);
        let mut z = zdep.to_vec();
        for (k, &j) in part.independent.iter().enumerate() {
            z[j] = x[k];
        }
        self.close(part, &mut z)?;
        let (_, phi_z) = mech.constraints(&mech.pose(&z));
        let phi_z = DMatrix::from_row_slice(m, n, &phi_z);
        let rz = part.r_z(&phi_z)?;
        let zdi = DVector::from_iterator(ni, part.independent.iter().map(|&j| c2 * z[j] + hats.zd[j]));
        let zddi = DVector::from_iterator(ni, part.independent.iter().map(|&j| c4 * z[j] + hats.zdd[j]));
        let zd = &rz * zdi;
        let conv = DVector::from_column_slice(&mech.phi_z_dot_zd(&z, zd.as_slice()));
        // z̈ = R_z z̈^i + Ṙ_z ż^i: the dependent part from Φ_z z̈ = −Φ̇_z ż (eq. 15).
        let (d, i) = part.split(&phi_z);
        let zdd_dep = d.lu().solve(&(-(i * &zddi) - conv)).ok_or("singular dependent Jacobian")?;
        let zdd = part.join(&zdd_dep, &zddi);
        let e = mech.eval(&z, zd.as_slice(), zdd.as_slice());
        let fp = match drive {
            // p3 does not act on the piston.
            Drive::Circuit | Drive::CircuitRef(..) => model.circuit.pressure_force(&[x[ni], x[ni + 1], 0.0]),
            Drive::Force(fp) => fp,
        };
        let force = model.circuit.force_from(fp, e.s_dot);
        let rows = DVector::from_iterator(n, (0..n).map(|j| e.r[j] - force * e.js[j]));
        let red = rz.transpose() * rows;
        let mut f = DVector::zeros(x.len());
        for k in 0..ni {
            f[k] = h4 * red[k];
        }
        if drive.monolithic() {
            let p = model.circuit.pressures(&x.as_slice()[ni..], u1);
            let h = model.circuit.rates(&p, u1, e.s, e.s_dot);
            for k in 0..model.circuit.np() {
                f[ni + k] = h4 * (c2 * p[k] + hats.pd[k] - h[k]);
            }
        }
        Ok(Point { z, zd: zd.as_slice().to_vec(), zdd: zdd.as_slice().to_vec(), f, fp })
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
        let ni = n - m;
        let dt = self.set.dt;
        let c2 = 2.0 / dt;
        let t1 = st.t + dt;
        let (ur0, ur1) = drive.u_ref(&model.cycle, st.t, dt);
        let u1 = model.circuit.spool_step(st.u, ur0, ur1, dt);
        let hats = crate::penalty::Hats::new(st, dt);
        let (_, phi_z) = mech.constraints(&mech.pose(&st.z));
        let part = Partition::choose(&DMatrix::from_row_slice(m, n, &phi_z))?;
        // Predictors (eq. 32 ff.): z_{k+1} = z_k + ż_k Δt + ½ z̈_k Δt², p_{k+1} = p_k + ṗ_k Δt.
        let zpred: Vec<f64> = (0..n).map(|j| st.z[j] + dt * st.zd[j] + 0.5 * dt * dt * st.zdd[j]).collect();
        // Pressure unknowns: [p1, p2, p3] (LF) or [p1, p2] (SP).
        let np = if drive.monolithic() { model.circuit.np() } else { 0 };
        let mut x = DVector::zeros(ni + np);
        for (k, &j) in part.independent.iter().enumerate() {
            x[k] = zpred[j];
        }
        for k in 0..np {
            x[ni + k] = st.p[k] + dt * st.pd[k];
        }
        let mut zdep = zpred;
        let mut stats = StepStats { independent: part.independent[0], ..StepStats::default() };
        let mut cur = self.point(&part, &x, &zdep, &hats, u1, drive)?;
        for it in 1..=self.set.max_iter {
            zdep.clone_from(&cur.z);
            let mut jac = DMatrix::zeros(ni + np, ni + np);
            for k in 0..ni + np {
                let d = 1e-8 * x[k].abs().max(1e-2);
                let mut xp = x.clone();
                xp[k] += d;
                let fp = self.point(&part, &xp, &zdep, &hats, u1, drive)?.f;
                jac.set_column(k, &((fp - &cur.f) / d));
            }
            let dx = jac.lu().solve(&(-&cur.f)).ok_or_else(|| format!("t = {t1} s: singular tangent"))?;
            x += &dx;
            cur = self.point(&part, &x, &zdep, &hats, u1, drive)?;
            let dz = dx.rows(0, ni).amax();
            let dp = if np > 0 { dx.rows(ni, np).amax() } else { 0.0 };
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
        let (f_prev, sd_prev) = (st.force, st.s[1]);
        st.t = t1;
        for k in 0..np {
            st.pd[k] = c2 * x[ni + k] + hats.pd[k];
            st.p[k] = x[ni + k];
        }
        if np > 0 {
            crate::penalty::sp_p3(&model.circuit, st, u1, ur1);
        }
        let fp = cur.fp;
        st.z = cur.z;
        st.zd = cur.zd;
        st.zdd = cur.zdd;
        st.u = u1;
        finish_step(model, st, f_prev, sd_prev, fp, &mut stats, dt);
        Ok(stats)
    }
}
