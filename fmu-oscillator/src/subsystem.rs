//! One point mass of the double oscillator of seed 001 §A.1 (Fig. 17, eqs. 34–41), tied to the
//! ground by a spring k and a damper c, and to the other mass by the coupling spring kc and
//! damper cc, which may live in this subsystem or in the other one.
//!
//! Internal integration: classical RK4 with `n = ceil(H / h_max)` equal sub-steps per
//! communication step H (default h_max = 0.1 ms). For the stiffest subsystem (ω = √1100 rad/s)
//! the local error is ~(ω h)⁵/120 ≈ 3·10⁻¹⁰ per step, far below the O(H) coupling error of the
//! co-simulation, so the co-simulation error dominates. Inputs follow their polynomials
//! (`fmi2SetRealInputDerivatives`) at every RK4 stage.

use fmu_export::{Context, EnumType, InputSignal, ModelError, StateVisitor};

/// `DampingCase`: the three damping cases of seed 001 §A.1 (c1 = c2 = cc), or custom values.
pub static DAMPING: EnumType = EnumType {
    name: "DampingCase",
    description: "Damping of seed 001 A.1: c1 = c2 = cc for cases 1-3, or the parameters c and cc",
    items: &[
        ("case1", 1, "c1 = c2 = cc = 0 N.s/m (undamped)"),
        ("case2", 2, "c1 = c2 = cc = 0.01 N.s/m"),
        ("case3", 3, "c1 = c2 = cc = 10 N.s/m"),
        ("custom", 4, "the parameters c and cc"),
    ],
};

/// Damping coefficient of a case (N·s/m), `None` for custom.
pub fn case_damping(case: i32) -> Option<f64> {
    match case {
        1 => Some(0.0),
        2 => Some(0.01),
        3 => Some(10.0),
        _ => None,
    }
}

/// How this mass is coupled to the other subsystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coupling {
    /// The coupling spring-damper is here; inputs are the other mass's position and velocity
    /// (eq. 37 / 40 / 41).
    Spring,
    /// The coupling force is an input (eq. 39).
    Force,
}

/// State and parameters of one point-mass subsystem.
#[derive(Debug, Clone)]
pub struct PointMass {
    /// Coupling kind (fixed per FMU).
    pub coupling: Coupling,
    /// Mass m (kg).
    pub m: f64,
    /// Ground spring stiffness k (N/m).
    pub k: f64,
    /// Ground damper c (N·s/m), used when `damping` is custom.
    pub c: f64,
    /// Coupling spring stiffness kc (N/m) (Spring coupling only).
    pub kc: f64,
    /// Coupling damper cc (N·s/m), used when `damping` is custom (Spring coupling only).
    pub cc: f64,
    /// Damping case, an item of [`DAMPING`].
    pub damping: i32,
    /// Initial position x₀ (m).
    pub x0: f64,
    /// Initial velocity v₀ (m/s).
    pub v0: f64,
    /// Largest internal RK4 step (s).
    pub h_max: f64,
    /// Position x (m).
    pub x: f64,
    /// Velocity v = ẋ (m/s).
    pub v: f64,
    /// Input: position of the other mass (m), or the coupling force (N) for Force coupling.
    pub u0: InputSignal,
    /// Input: velocity of the other mass (m/s) (Spring coupling only).
    pub u1: InputSignal,
}

impl PointMass {
    /// A subsystem with the given mass, stiffness and initial velocity; kc = 100 N/m, case 1.
    pub fn new(coupling: Coupling, m: f64, k: f64, v0: f64) -> Self {
        Self {
            coupling,
            m,
            k,
            c: 0.0,
            kc: 100.0,
            cc: 0.0,
            damping: 1,
            x0: 0.0,
            v0,
            h_max: 1e-4,
            x: 0.0,
            v: v0,
            u0: InputSignal::new(0.0),
            u1: InputSignal::new(0.0),
        }
    }

    /// Damping to ground and coupling damping in force (N·s/m).
    pub fn dampers(&self) -> (f64, f64) {
        match case_damping(self.damping) {
            Some(c) => (c, c),
            None => (self.c, self.cc),
        }
    }

    /// Coupling force f_c = kc (x − ξ) + cc (ẋ − ξ̇) acting from this mass on the other one
    /// (eq. 38), with the inputs at `tau` into the step.
    pub fn coupling_force(&self, x: f64, v: f64, tau: f64) -> f64 {
        let (_, cc) = self.dampers();
        self.kc * (x - self.u0.at(tau)) + cc * (v - self.u1.at(tau))
    }

    /// Acceleration at (x, v) with the inputs at `tau`: eq. 37/40/41 (Spring) or eq. 39 (Force).
    pub fn acceleration(&self, x: f64, v: f64, tau: f64) -> f64 {
        let (c, _) = self.dampers();
        let external = match self.coupling {
            Coupling::Spring => -self.coupling_force(x, v, tau),
            Coupling::Force => self.u0.at(tau),
        };
        (external - c * v - self.k * x) / self.m
    }

    /// Time derivative of the coupling force at the current state (held inputs).
    pub fn coupling_force_rate(&self) -> f64 {
        let (_, cc) = self.dampers();
        let a = self.acceleration(self.x, self.v, 0.0);
        self.kc * (self.v - self.u1.at(0.0)) + cc * (a - self.u1.rate_at(0.0))
    }

    /// Checks parameters and sets x, v to their initial values.
    pub fn initialize(&mut self) -> Result<(), ModelError> {
        for (name, value) in [("m", self.m), ("h_max", self.h_max)] {
            if value.is_nan() || value <= 0.0 {
                return Err(ModelError::new(format!("parameter {name} = {value} must be positive")));
            }
        }
        if case_damping(self.damping).is_none() && (self.c < 0.0 || self.cc < 0.0) {
            return Err(ModelError::new(format!(
                "damping = custom needs c >= 0 and cc >= 0, got c = {}, cc = {}",
                self.c, self.cc
            )));
        }
        self.x = self.x0;
        self.v = self.v0;
        Ok(())
    }

    /// Advances by `h` with RK4 sub-steps of at most `h_max`.
    pub fn do_step(&mut self, t: f64, h: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        let n = (h / self.h_max).ceil().max(1.0);
        if n > 1e9 {
            return Err(ModelError::new(format!("step h = {h} needs {n} sub-steps of h_max = {}", self.h_max)));
        }
        let dt = h / n;
        let (mut x, mut v) = (self.x, self.v);
        for i in 0..n as u64 {
            let tau = i as f64 * dt;
            let f = |x: f64, v: f64, s: f64| (v, self.acceleration(x, v, s));
            let k1 = f(x, v, tau);
            let k2 = f(x + 0.5 * dt * k1.0, v + 0.5 * dt * k1.1, tau + 0.5 * dt);
            let k3 = f(x + 0.5 * dt * k2.0, v + 0.5 * dt * k2.1, tau + 0.5 * dt);
            let k4 = f(x + dt * k3.0, v + dt * k3.1, tau + dt);
            x += dt / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            v += dt / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        }
        if !(x.is_finite() && v.is_finite()) {
            return Err(ModelError::new(format!("state diverged at t = {}: x = {x}, v = {v}", t + h)));
        }
        self.x = x;
        self.v = v;
        Ok(())
    }

    /// Every field of the state, parameters included.
    pub fn visit(&mut self, s: &mut dyn StateVisitor) {
        for p in [
            &mut self.m,
            &mut self.k,
            &mut self.c,
            &mut self.kc,
            &mut self.cc,
            &mut self.x0,
            &mut self.v0,
            &mut self.h_max,
            &mut self.x,
            &mut self.v,
        ] {
            s.real(p);
        }
        let mut d = i64::from(self.damping);
        s.integer(&mut d);
        self.damping = i32::try_from(d).unwrap_or(1);
        s.input(&mut self.u0);
        s.input(&mut self.u1);
    }
}
