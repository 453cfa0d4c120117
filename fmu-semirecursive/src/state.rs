//! The state both integrators advance, the initial state of a model, and the energy bookkeeping
//! (E_kin + E_pot − W_act, friction counted inside W_act).

use crate::circuit::Pressures;
use crate::models::Model;
use nalgebra::{DMatrix, DVector};

/// State at one time point.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Time t (s).
    pub t: f64,
    /// Joint coordinates z (rad).
    pub z: Vec<f64>,
    /// ż (rad/s).
    pub zd: Vec<f64>,
    /// z̈ (rad/s²).
    pub zdd: Vec<f64>,
    /// Pressures p1, p2, p3 (Pa).
    pub p: Pressures,
    /// ṗ (Pa/s).
    pub pd: Pressures,
    /// Spool voltage U (V).
    pub u: f64,
    /// Penalty multipliers λ* (N or N·m), Pub I eq. 16.
    pub lambda: Vec<f64>,
    /// Actuator work W_act = ∫ F_s ṡ dt (J), trapezoidal.
    pub w_act: f64,
    /// Friction work ∫ F_μ ṡ dt (J) (dissipated; already inside W_act).
    pub w_fric: f64,
    /// Actuator force F_s (N) at t.
    pub force: f64,
    /// Friction force F_μ (N) at t.
    pub friction: f64,
    /// Actuator length s (m), ṡ (m/s), s̈ (m/s²) at t.
    pub s: [f64; 3],
    /// Potential energy at t = 0 (J).
    pub e_pot0: f64,
}

impl State {
    /// Static equilibrium at t = 0: z0, ż = z̈ = 0, p0, U = 0, λ* from Φ_zᵀλ = Q (least squares).
    pub fn initial(model: &Model) -> Self {
        let mech = &model.mechanism;
        let n = mech.n();
        let zero = vec![0.0; n];
        let e = mech.eval(&model.z0, &zero, &zero);
        let phi_z = DMatrix::from_row_slice(mech.m(), n, &e.phi_z);
        // Q = −r + F0 J_s at rest; Φ_zᵀ λ = Q.
        let q = DVector::from_iterator(n, e.r.iter().zip(e.js.iter()).map(|(r, j)| -r + model.f0 * j));
        let lambda = (&phi_z * phi_z.transpose())
            .lu()
            .solve(&(&phi_z * q))
            .map_or_else(|| vec![0.0; mech.m()], |l| l.as_slice().to_vec());
        Self {
            t: 0.0,
            z: model.z0.clone(),
            zd: zero.clone(),
            zdd: zero,
            p: model.p0,
            pd: [0.0; 3],
            u: 0.0,
            lambda,
            w_act: 0.0,
            w_fric: 0.0,
            force: model.circuit.force(model.p0[0], model.p0[1], 0.0),
            friction: 0.0,
            s: [e.s, 0.0, 0.0],
            e_pot0: mech.potential_energy(&model.z0),
        }
    }

    /// E_kin (J).
    pub fn kinetic(&self, model: &Model) -> f64 {
        model.mechanism.kinetic_energy(&self.z, &self.zd)
    }

    /// E_pot − E_pot(0) (J).
    pub fn potential(&self, model: &Model) -> f64 {
        model.mechanism.potential_energy(&self.z) - self.e_pot0
    }

    /// Energy balance E_kin + ΔE_pot − W_act (J): zero for an exact integration.
    pub fn energy_error(&self, model: &Model) -> f64 {
        self.kinetic(model) + self.potential(model) - self.w_act
    }
}

/// Convergence and constraint diagnostics of one step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    /// Newton iterations.
    pub iterations: usize,
    /// ‖Φ‖∞ (m or rad).
    pub phi: f64,
    /// ‖Φ̇‖∞ = ‖Φ_z ż‖∞.
    pub phi_d: f64,
    /// ‖Φ̈‖∞ = ‖Φ_z z̈ + Φ̇_z ż‖∞.
    pub phi_dd: f64,
    /// Independent coordinate (double-step; the first one if several), else `usize::MAX`.
    pub independent: usize,
}

/// Fills the constraint norms of `stats` and the actuator kinematics and work of `st` after a step
/// whose actuator force at the start was `f_prev` with velocity `sd_prev`; `fp` is the pressure
/// force p1A1 − p2A2 at the end (N).
pub fn finish_step(model: &Model, st: &mut State, f_prev: f64, sd_prev: f64, fp: f64, stats: &mut StepStats, dt: f64) {
    use crate::mechanism::Bodies;
    use crate::scalar::Dual;
    let mech = &model.mechanism;
    let (n, m) = (mech.n(), mech.m());
    // One pass along ż: values Φ, Φ_z, s, J_s and their time derivatives Φ̇_z, ṡ, J̇_s.
    let zz = Bodies::from_fn(n, Dual::default(), |j| Dual::new(st.z[j], st.zd[j]));
    let pose = mech.pose(&zz);
    let (phi, phi_z) = mech.constraints(&pose);
    let (s, js) = mech.actuator(&pose);
    let (mut p, mut pd, mut pdd) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..m {
        let (mut v, mut a) = (0.0, 0.0);
        for j in 0..n {
            let g = phi_z[i * n + j];
            v += g.v * st.zd[j];
            a += g.v * st.zdd[j] + g.d * st.zd[j];
        }
        p = p.max(phi[i].v.abs());
        pd = pd.max(v.abs());
        pdd = pdd.max(a.abs());
    }
    (stats.phi, stats.phi_d, stats.phi_dd) = (p, pd, pdd);
    // s̈ = J_s z̈ + J̇_s ż.
    let s_ddot: f64 = (0..n).map(|j| js[j].v * st.zdd[j] + js[j].d * st.zd[j]).sum();
    st.s = [s.v, s.d, s_ddot];
    st.force = model.circuit.force_from(fp, s.d);
    st.w_act += 0.5 * dt * (f_prev * sd_prev + st.force * s.d);
    let fric = model.circuit.friction(fp, s.d);
    st.w_fric += 0.5 * dt * (st.friction * sd_prev + fric * s.d);
    st.friction = fric;
}
