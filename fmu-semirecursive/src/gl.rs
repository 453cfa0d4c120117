//! The "Gl" comparison of Pub I Table 3: Model A in natural coordinates (`fmu_multibody::fourbar`)
//! with the same circuit, integrated by the existing global solver — index-3 augmented
//! Lagrangian with projections, trapezoidal rule, mechanism and circuit in one Newton system
//! (`fmu_unified::solver`, seed 004 §3). Only the adapter of this crate's circuit (its friction law of
//! SPEC §3.7) to the unified solver's `Circuit` is new.

use crate::circuit::Circuit as SrCircuit;
use crate::models::Model;
use fmu_multibody::fourbar::{joint_angles, FourBar, M, N};
use fmu_multibody::mechanism::{CylinderForce, Mechanism};
use fmu_multibody::solver::State;
use fmu_unified::circuit::{Circuit, RateJacobians};
use fmu_unified::solver::{self, Settings, UState};
use nalgebra::SVector;

/// This crate's circuit as a circuit of the unified solver: x = [p1, p2, p3, U], u = U_ref.
#[derive(Debug, Clone, PartialEq)]
pub struct GlCircuit(pub SrCircuit);

impl Circuit<4> for GlCircuit {
    const STATES: [&'static str; 4] = ["p1", "p2", "p3", "U"];
    const UNITS: [&'static str; 4] = ["Pa", "Pa", "Pa", "V"];

    fn nominal(&self) -> SVector<f64, 4> {
        SVector::<f64, 4>::new(1e6, 1e6, 1e6, 1.0)
    }

    fn rates(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64, u: f64) -> SVector<f64, 4> {
        let h = self.0.rates(&[x[0], x[1], x[2]], x[3], s, s_dot);
        let tau = self.0.lumped.tau();
        SVector::<f64, 4>::new(h[0], h[1], h[2], (u - x[3]) / tau)
    }

    fn rate_jacobians(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64, _u: f64) -> RateJacobians<4> {
        let l = &self.0.lumped;
        let c = l.constants();
        let dx = l.jacobian_with(&c, &l.gains_with(&c, s), x, s_dot);
        let (_, ds, dsd) = self.0.rates_derivatives(&[x[0], x[1], x[2]], x[3], s, s_dot);
        RateJacobians {
            dx,
            ds: SVector::<f64, 4>::new(ds[0], ds[1], ds[2], 0.0),
            dsd: SVector::<f64, 4>::new(dsd[0], dsd[1], dsd[2], 0.0),
        }
    }

    fn force(&self, x: &SVector<f64, 4>, _s: f64, s_dot: f64) -> (CylinderForce, SVector<f64, 4>) {
        let p = [x[0], x[1], x[2]];
        let fp = self.0.pressure_force(&p);
        let t = (s_dot / self.0.v_eps).tanh();
        // ∂F/∂ṡ = −(1 − η)|F_p|(1 − tanh²)/v_ε.
        let df_dsd = -(1.0 - self.0.eta) * fp.abs() * (1.0 - t * t) / self.0.v_eps;
        let dp = self.0.force_dp(&p, s_dot);
        (
            CylinderForce { f: self.0.force_from(fp, s_dot), df_ds: 0.0, df_dsd },
            SVector::<f64, 4>::new(dp[0], dp[1], dp[2], 0.0),
        )
    }

    fn rest(&mut self, s0: f64, f_static: f64) -> Result<(SVector<f64, 4>, f64), String> {
        self.0.lumped.s0 = s0;
        let p = self.0.static_pressures(f_static, 3.5e6);
        Ok((SVector::<f64, 4>::new(p[0], p[1], p[2], 0.0), 0.0))
    }

    fn check_state(&self, x: &SVector<f64, 4>, _s: f64) -> Result<(), String> {
        if x.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(format!("circuit state {x:?} is not finite"))
        }
    }

    fn check(&self) -> Result<(), String> {
        self.0.lumped.check()
    }
}

/// One recorded point of a Gl run: time, joint angles z (rad), pressures (Pa), iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct GlSample {
    /// t (s).
    pub t: f64,
    /// z (rad), from the natural coordinates.
    pub z: [f64; 3],
    /// p1, p2, p3 (Pa).
    pub p: [f64; 3],
    /// Newton iterations of the step.
    pub iterations: u32,
}

/// The Gl integrator for Model A (the same circuit and cycle as `model`).
#[derive(Debug, Clone)]
pub struct Gl {
    /// Mechanism.
    pub mech: FourBar,
    /// Circuit.
    pub circuit: [GlCircuit; 1],
    /// Solver settings: α = 1e11 with Pub I's tolerances.
    pub settings: Settings,
    /// State.
    pub st: UState<N, M, 4>,
    /// Work cycle.
    pub cycle: crate::circuit::WorkCycle,
    /// Time (s).
    pub t: f64,
}

impl Gl {
    /// At rest in Model A's initial state (the model's circuit, F_s0 and p0).
    pub fn new(model: &Model) -> Result<Self, String> {
        let mech = FourBar::default();
        let q = mech.initial_positions();
        let circuit = [GlCircuit(model.circuit.clone())];
        let x0 = SVector::<f64, 4>::new(model.p0[0], model.p0[1], model.p0[2], 0.0);
        let mut st = UState { mech: State::at_rest(q), x: [x0; 2], xd: [SVector::zeros(); 2] };
        // Pub I's tolerances: 1e-7 on positions, 1e2 Pa on pressures (relative to 1 MPa: 1e-4).
        let settings = Settings { alpha: 1e11, tol_q: 1e-7, tol_x: 1e-4, max_iter: 100 };
        solver::consistent_rates(&mech, &circuit, &mut st, &[0.0]).map_err(|e| e.to_string())?;
        Ok(Self { mech, circuit, settings, st, cycle: model.cycle.clone(), t: 0.0 })
    }

    /// One step Δt; returns the iterations.
    pub fn step(&mut self, dt: f64) -> Result<u32, String> {
        let u1 = self.cycle.at(self.t + dt);
        let it = solver::step(&self.mech, &self.circuit, &self.settings, &mut self.st, &[u1], dt)
            .map_err(|e| format!("Gl at t = {}: {e}", self.t + dt))?;
        self.t += dt;
        Ok(it)
    }

    /// The current sample.
    pub fn sample(&self, iterations: u32) -> GlSample {
        let x = &self.st.x[0];
        GlSample { t: self.t, z: joint_angles(&self.st.mech.q), p: [x[0], x[1], x[2]], iterations }
    }

    /// A whole run of `duration` at step `dt`.
    pub fn simulate(model: &Model, dt: f64, duration: f64) -> Result<Vec<GlSample>, String> {
        let mut gl = Self::new(model)?;
        let steps = (duration / dt).round() as usize;
        let mut out = Vec::with_capacity(steps + 1);
        out.push(gl.sample(0));
        for _ in 0..steps {
            let it = gl.step(dt)?;
            out.push(gl.sample(it));
        }
        Ok(out)
    }
}
