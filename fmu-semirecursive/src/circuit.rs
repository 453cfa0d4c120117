//! The lumped-fluid circuit of the semi-recursive models (DIGEST §1.1, §4.5; SPEC §3.7): the
//! three-volume circuit of `fmu_hydraulics::lumped3` (the same pressure build-up, bulk moduli, valve
//! and throttle laws, spool law), configured without end dampers and viscous friction, plus the
//! cylinder friction of SPEC §3.7, F_μ = (1 − η)|p1A1 − p2A2| tanh(ṡ/v_ε), and the spool voltage
//! integrated by the trapezoidal rule.
//!
//! p3 is either a state of the Newton system (lumped fluid, [`P3Model::Lf`]) or algebraic by
//! singular perturbation ([`P3Model::Sp`], Publication II eqs. 33–35 through `fmu_hydraulics::sp`):
//! then the pressure unknowns are [p1, p2] ([`Circuit::np`]) and p3 follows from (p1, U).

use crate::scalar::Scalar;
use fmu_hydraulics::lumped3::{Constants, Inputs, Lumped3};
use fmu_hydraulics::sp::{self, Gamma};
use nalgebra::{Matrix3, SVector, Vector3};
use std::f64::consts::PI;

/// Circuit of one model: lumped3 parameters plus the friction law.
#[derive(Debug, Clone, PartialEq)]
pub struct Circuit {
    /// Pressure build-up, volumes, valves (Pub I Table 1 values; SPEC §3.7 for the rest).
    pub lumped: Lumped3,
    /// Cylinder efficiency η (Pub I Table 1: 0.88).
    pub eta: f64,
    /// Friction regularisation velocity v_ε (m/s), SPEC §3.7: 1 mm/s.
    pub v_eps: f64,
    /// How p3 is modelled (default lumped fluid).
    pub p3: P3Model,
    constants: Constants,
}

/// The model of the valve–throttle pressure p3 (Publication II §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum P3Model {
    /// Lumped fluid: p3 a state, Pub I eq. 52 (third row).
    #[default]
    Lf,
    /// Singular perturbation: p3 the quasi-steady state of `fmu_hydraulics::sp` (eqs. 33–34, the
    /// exact root in the laminar band), the throttle flow γ± Q̄31 (eq. 35).
    Sp(Gamma),
}

/// Pressures of the circuit x = [p1, p2, p3] (Pa): piston side, rod side, valve–throttle volume.
pub type Pressures = [f64; 3];

impl Circuit {
    /// Pub I Table 1 with the SPEC §3.7 defaults (τ = 1/(2π·35 Hz), A_t = π(3 mm)²/4,
    /// C_v = 2.138e-8 m³/(s·V·√Pa), laminar band 2 bar), at the model's s0 and chamber lengths.
    pub fn pub1(s0: f64, l10: f64, l20: f64) -> Self {
        let lumped = Lumped3 {
            d1: 0.080,
            d2: 0.035,
            l10,
            l20,
            s0,
            l_d: 0.0,
            k_d: 0.0,
            c_damp: 0.0,
            c: 0.0,
            rho: 850.0,
            b_o: 1500e6,
            b_c: 31_500e6,
            b_h: 550e6,
            v_h1: 3.14e-5,
            v_h2: 7.85e-5,
            v_h3: 4.71e-5,
            p_t: 0.1e6,
            p_p: 7.6e6,
            cd: 0.8,
            a_t: PI * 0.003 * 0.003 / 4.0,
            cv: 2.138e-8,
            f45: 35.0,
            dp_lam: 2e5,
            // No cavitation law (Pub I, 002): Model D's rod side dips to about −0.23 MPa for ~20 ms
            // and is integrated through (SPEC §3.7); the monolithic Newton iteration is not
            // made for the law's steep collapse near zero.
            cavitation: fmu_hydraulics::cavitation::Cavitation { strict: true, ..Default::default() },
        };
        Self::new(lumped, 0.88, 1e-3)
    }

    /// A circuit from lumped3 parameters and the friction law.
    pub fn new(lumped: Lumped3, eta: f64, v_eps: f64) -> Self {
        let constants = lumped.constants();
        Self { lumped, eta, v_eps, p3: P3Model::Lf, constants }
    }

    /// This circuit with p3 modelled by `p3`.
    pub fn with_p3(mut self, p3: P3Model) -> Self {
        self.p3 = p3;
        self
    }

    /// Number of pressure unknowns of the Newton system: 3 (LF: p1, p2, p3) or 2 (SP: p1, p2).
    pub fn np(&self) -> usize {
        match self.p3 {
            P3Model::Lf => 3,
            P3Model::Sp(_) => 2,
        }
    }

    /// All three pressures from the `np()` pressure unknowns `x` at spool position U (V): SP
    /// appends the quasi-steady p3 (Pub II eqs. 33–34).
    pub fn pressures(&self, x: &[f64], u: f64) -> Pressures {
        match self.p3 {
            P3Model::Lf => [x[0], x[1], x[2]],
            P3Model::Sp(_) => [x[0], x[1], sp::p3_quasi_steady(&self.lumped, &self.constants, x[0], u)],
        }
    }

    /// dp3/dt (Pa/s) of the quasi-steady p3 (SP) for ṗ1 and U̇ at (p1, U); `None` for LF.
    pub fn p3_rate(&self, p: &Pressures, pd: &Pressures, u: f64, u_dot: f64) -> Option<f64> {
        match self.p3 {
            P3Model::Lf => None,
            P3Model::Sp(_) => {
                let y = SVector::<f64, 3>::new(p[0], p[1], u);
                let yd = SVector::<f64, 3>::new(pd[0], pd[1], u_dot);
                Some(sp::p3_rate(&self.lumped, &self.constants, &y, &yd))
            }
        }
    }

    /// U̇ = (U_ref − U)/τ (V/s), Pub I eq. 34.
    pub fn spool_rate(&self, u: f64, u_ref: f64) -> f64 {
        (u_ref - u) / self.constants.tau
    }

    /// Throttle flow V3 → V1 (m³/s): C_t g(p3 − p1), times γ± for SP (Pub II eq. 35).
    pub fn q31(&self, p: &Pressures, u: f64) -> f64 {
        let q = self.constants.c_t * self.constants.orifice_g_and_slope(p[2] - p[0]).0;
        match self.p3 {
            P3Model::Lf => q,
            P3Model::Sp(gamma) => gamma.at(u) * q,
        }
    }

    /// SP rates [ṗ1, ṗ2] and ∂/∂[p1, p2] (Pub II eqs. 33–35 via `fmu_hydraulics::sp`).
    fn sp_rates(&self, gamma: &Gamma, p: &Pressures, u: f64, s: f64, s_dot: f64) -> (Vector3<f64>, Matrix3<f64>) {
        let k = self.lumped.gains_with(&self.constants, s);
        let y = SVector::<f64, 3>::new(p[0], p[1], u);
        let inputs = Inputs { s, s_dot, u_ref: u };
        let (r, j) = sp::rates_and_jacobian(&self.lumped, &self.constants, gamma, &k, &inputs, &y);
        let mut dp = Matrix3::zeros();
        dp.fixed_view_mut::<2, 2>(0, 0).copy_from(&j.fixed_view::<2, 2>(0, 0));
        (Vector3::new(r[0], r[1], 0.0), dp)
    }

    /// A1, A2 (m²).
    pub fn areas(&self) -> (f64, f64) {
        (self.constants.a1, self.constants.a2)
    }

    /// Cylinder force along s, F_s = p1A1 − p2A2 − F_μ (Pub I eq. 36), F_μ of SPEC §3.7 (N).
    pub fn force<S: Scalar>(&self, p1: S, p2: S, s_dot: S) -> S {
        let (a1, a2) = self.areas();
        self.force_from(p1 * S::cst(a1) - p2 * S::cst(a2), s_dot)
    }

    /// F_s from the pressure force F_p = p1A1 − p2A2: F_p − (1 − η)|F_p| tanh(ṡ/v_ε) (N).
    pub fn force_from<S: Scalar>(&self, fp: S, s_dot: S) -> S {
        fp - S::cst(1.0 - self.eta) * fp.abs() * (s_dot / S::cst(self.v_eps)).tanh()
    }

    /// Pressure force F_p = p1A1 − p2A2 (N).
    pub fn pressure_force(&self, p: &Pressures) -> f64 {
        let (a1, a2) = self.areas();
        p[0] * a1 - p[1] * a2
    }

    /// Friction force F_μ for the pressure force F_p (N).
    pub fn friction(&self, fp: f64, s_dot: f64) -> f64 {
        (1.0 - self.eta) * fp.abs() * (s_dot / self.v_eps).tanh()
    }

    /// ∂F_s/∂p (N/Pa).
    pub fn force_dp(&self, p: &Pressures, s_dot: f64) -> [f64; 3] {
        let (a1, a2) = self.areas();
        let sg = if p[0] * a1 - p[1] * a2 < 0.0 { -1.0 } else { 1.0 };
        let k = 1.0 - (1.0 - self.eta) * sg * (s_dot / self.v_eps).tanh();
        [a1 * k, -a2 * k, 0.0]
    }

    fn x(p: &Pressures, u: f64) -> SVector<f64, 4> {
        SVector::<f64, 4>::new(p[0], p[1], p[2], u)
    }

    /// h = ṗ (Pa/s): Pub I eq. 52 (lumped3 eqs. 20–22) at spool position U (V). SP: [ṗ1, ṗ2, 0]
    /// with the quasi-steady p3 and γ± Q̄31 (p[2] is not read).
    pub fn rates(&self, p: &Pressures, u: f64, s: f64, s_dot: f64) -> Vector3<f64> {
        if let P3Model::Sp(gamma) = self.p3 {
            return self.sp_rates(&gamma, p, u, s, s_dot).0;
        }
        let k = self.lumped.gains_with(&self.constants, s);
        let r = self.lumped.rates_with(&self.constants, &k, &Self::x(p, u), s_dot, 0.0);
        Vector3::new(r[0], r[1], r[2])
    }

    /// (∂h/∂p, ∂h/∂s, ∂h/∂ṡ) for the tangent of Pub I eq. 42 (SP: the p1, p2 rows and columns).
    pub fn rates_derivatives(
        &self,
        p: &Pressures,
        u: f64,
        s: f64,
        s_dot: f64,
    ) -> (Matrix3<f64>, Vector3<f64>, Vector3<f64>) {
        let g = self.lumped.gains_with(&self.constants, s);
        let x = Self::x(p, u);
        let (h, dp) = match self.p3 {
            P3Model::Lf => {
                let j = self.lumped.jacobian_with(&self.constants, &g, &x, s_dot);
                (self.rates(p, u, s, s_dot), j.fixed_view::<3, 3>(0, 0).into_owned())
            }
            P3Model::Sp(gamma) => self.sp_rates(&gamma, p, u, s, s_dot),
        };
        let dk = self.lumped.gains_slope(s);
        // h_i = k_i(s) β_e(p_i)/B_ei · (flow sum), B_ei independent of s: ∂h_i/∂s = k_i'(s) h_i / k_i
        // with the liquid gains k_i; ∂h_i/∂ṡ with the cavitating ones.
        let k = g.k;
        let ds = Vector3::new(dk[0] * h[0] / k[0], dk[1] * h[1] / k[1], 0.0);
        let (a1, a2) = self.areas();
        let ke = self.lumped.cavitating_gains(&g, &x).0;
        let dsd = Vector3::new(-ke[0] * a1, ke[1] * a2, 0.0);
        (dp, ds, dsd)
    }

    /// Spool voltage at t + Δt by the trapezoidal rule on U̇ = (U_ref − U)/τ (Pub I eq. 34),
    /// solved exactly (the law is linear).
    pub fn spool_step(&self, u: f64, u_ref0: f64, u_ref1: f64, dt: f64) -> f64 {
        let a = dt / (2.0 * self.constants.tau);
        (u * (1.0 - a) + a * (u_ref0 + u_ref1)) / (1.0 + a)
    }

    /// Static pressures for the actuator force F0 (N) and rod-side p2 (Pa): p1 = p3 =
    /// (F0 + p2 A2)/A1 (Pub I eqs. 53–54).
    pub fn static_pressures(&self, f0: f64, p2: f64) -> Pressures {
        let (p1, p3) = self.lumped.static_pressures(f0, p2);
        [p1, p2, p3]
    }
}

/// What drives the actuator in a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Drive {
    /// The circuit, in the same Newton system (monolithic), the valve reference from the model's
    /// work cycle.
    Circuit,
    /// As `Circuit` with the valve reference U_ref at the start and the end of the step given (V).
    CircuitRef(f64, f64),
    /// A given pressure force F_p = p1A1 − p2A2 at the end of the step (N), friction applied
    /// (co-simulation of the mechanism alone).
    Force(f64),
}

impl Drive {
    /// Whether the circuit is part of the Newton system.
    pub fn monolithic(self) -> bool {
        !matches!(self, Self::Force(_))
    }

    /// U_ref at t and t + Δt (V).
    pub fn u_ref(self, cycle: &WorkCycle, t: f64, dt: f64) -> (f64, f64) {
        match self {
            Self::CircuitRef(a, b) => (a, b),
            _ => (cycle.at(t), cycle.at(t + dt)),
        }
    }
}

/// A piecewise-constant reference voltage, right-continuous: `U_ref(t)` = the value of the last
/// breakpoint at or before t (V).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkCycle {
    /// (start time s, U_ref V), increasing in time; 0 V before the first.
    pub table: Vec<(f64, f64)>,
}

impl WorkCycle {
    /// U_ref(t) (V).
    pub fn at(&self, t: f64) -> f64 {
        // Breakpoints compared with a tolerance far below any step so that t = n·Δt lands on them.
        self.table.iter().take_while(|(t0, _)| *t0 <= t + 1e-12).last().map_or(0.0, |(_, u)| *u)
    }
}
