//! One point mass of the double oscillator of seed 001 §A.1 (Fig. 17, eqs. 34–41), tied to the
//! ground by a spring k and a damper c, and to the other mass by the coupling spring kc and
//! damper cc, which may live in this subsystem or in the other one.
//!
//! Internal integration: classical RK4 with `n = ceil(H / h_max)` equal sub-steps per
//! communication step H (default h_max = 0.1 ms). For the stiffest subsystem (ω = √1100 rad/s)
//! the local error is ~(ω h)⁵/120 ≈ 3·10⁻¹⁰ per step, far below the O(H) coupling error of the
//! co-simulation, so the co-simulation error dominates. Inputs follow their polynomials
//! (`fmi2SetRealInputDerivatives`) at every RK4 stage.

use crate::divisor::Divisor;
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

/// The equation of motion of one step: parameters with the damping case resolved.
#[derive(Debug, Clone, Copy)]
pub struct Law {
    /// Coupling kind.
    pub coupling: Coupling,
    /// Mass m (kg), as a divisor.
    pub m: Divisor,
    /// Ground spring stiffness k (N/m).
    pub k: f64,
    /// Ground damper c (N·s/m).
    pub c: f64,
    /// Coupling spring stiffness kc (N/m).
    pub kc: f64,
    /// Coupling damper cc (N·s/m).
    pub cc: f64,
}

impl Law {
    /// Coupling force f_c = kc (x − ξ) + cc (ẋ − ξ̇) with the inputs u = (ξ, ξ̇) (eq. 38).
    #[inline(always)]
    pub fn coupling_force(&self, x: f64, v: f64, u: (f64, f64)) -> f64 {
        self.kc * (x - u.0) + self.cc * (v - u.1)
    }

    /// Acceleration at (x, v) with the inputs u: eq. 37/40/41 (Spring, u = (ξ, ξ̇)) or eq. 39
    /// (Force, u.0 = f_c).
    #[inline(always)]
    pub fn acceleration(&self, x: f64, v: f64, u: (f64, f64)) -> f64 {
        let external = match self.coupling {
            Coupling::Spring => -self.coupling_force(x, v, u),
            Coupling::Force => u.0,
        };
        self.m.divide(external - self.c * v - self.k * x)
    }
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

    /// The force law with the damping case resolved (read once per step, not per RK4 stage).
    pub fn law(&self) -> Law {
        let (c, cc) = self.dampers();
        Law { coupling: self.coupling, m: Divisor::new(self.m), k: self.k, c, kc: self.kc, cc }
    }

    /// The inputs (u₀, u₁) at `tau` into the step, from their polynomials.
    #[inline]
    pub fn inputs(&self, tau: f64) -> (f64, f64) {
        (self.u0.at(tau), self.u1.at(tau))
    }

    /// Coupling force f_c = kc (x − ξ) + cc (ẋ − ξ̇) acting from this mass on the other one
    /// (eq. 38), with the inputs at `tau` into the step.
    pub fn coupling_force(&self, x: f64, v: f64, tau: f64) -> f64 {
        self.law().coupling_force(x, v, self.inputs(tau))
    }

    /// Acceleration at (x, v) with the inputs at `tau`: eq. 37/40/41 (Spring) or eq. 39 (Force).
    pub fn acceleration(&self, x: f64, v: f64, tau: f64) -> f64 {
        self.law().acceleration(x, v, self.inputs(tau))
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
        let law = self.law();
        let (mut x, mut v) = (self.x, self.v);
        for i in 0..n as u64 {
            // Stage times τ, τ + dt/2 (k2 and k3) and τ + dt, each input evaluated once per time.
            let tau = i as f64 * dt;
            let (u_start, u_mid, u_end) = (self.inputs(tau), self.inputs(tau + 0.5 * dt), self.inputs(tau + dt));
            let f = |x: f64, v: f64, u: (f64, f64)| (v, law.acceleration(x, v, u));
            let k1 = f(x, v, u_start);
            let k2 = f(x + 0.5 * dt * k1.0, v + 0.5 * dt * k1.1, u_mid);
            let k3 = f(x + 0.5 * dt * k2.0, v + 0.5 * dt * k2.1, u_mid);
            let k4 = f(x + dt * k3.0, v + dt * k3.1, u_end);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// RK4 of eqs. 37–41 as written in the paper, every stage evaluating the inputs at its time
    /// and dividing by m: the reference `do_step` must match bit for bit.
    fn reference_step(p: &PointMass, h: f64) -> (f64, f64) {
        let (c, cc) = p.dampers();
        let a = |x: f64, v: f64, tau: f64| {
            let external = match p.coupling {
                Coupling::Spring => -(p.kc * (x - p.u0.at(tau)) + cc * (v - p.u1.at(tau))),
                Coupling::Force => p.u0.at(tau),
            };
            (external - c * v - p.k * x) / p.m
        };
        let n = (h / p.h_max).ceil().max(1.0);
        let dt = h / n;
        let (mut x, mut v) = (p.x, p.v);
        for i in 0..n as u64 {
            let tau = i as f64 * dt;
            let k1 = (v, a(x, v, tau));
            let k2 = (v + 0.5 * dt * k1.1, a(x + 0.5 * dt * k1.0, v + 0.5 * dt * k1.1, tau + 0.5 * dt));
            let k3 = (v + 0.5 * dt * k2.1, a(x + 0.5 * dt * k2.0, v + 0.5 * dt * k2.1, tau + 0.5 * dt));
            let k4 = (v + dt * k3.1, a(x + dt * k3.0, v + dt * k3.1, tau + dt));
            x += dt / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            v += dt / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        }
        (x, v)
    }

    #[test]
    fn do_step_has_the_bits_of_the_textbook_rk4() {
        // Masses that divide exactly (1, 0.5 kg) and not (3 kg), both couplings, damping cases
        // and custom dampers, inputs held and following cubic polynomials.
        for (coupling, m, damping) in [
            (Coupling::Spring, 1.0, 1),
            (Coupling::Spring, 3.0, 3),
            (Coupling::Force, 0.5, 2),
            (Coupling::Force, 1.0, 4),
            (Coupling::Spring, 0.7, 4),
        ] {
            let mut p = PointMass::new(coupling, m, 1000.0, -100.0);
            p.damping = damping;
            p.c = 0.3;
            p.cc = 2.5;
            p.x0 = 0.01;
            p.initialize().unwrap();
            for n in 0..200 {
                let s = f64::from(n);
                p.u0 = InputSignal { value: 0.1 * s.sin(), derivatives: [s.cos(), -0.5, 3.0 * s, 0.0] };
                p.u1 = InputSignal {
                    value: s.cos(),
                    derivatives: if n % 2 == 0 { [0.0; 4] } else { [1.0, 2.0, -3.0, 4.0] },
                };
                let want = reference_step(&p, 1e-3);
                p.do_step(s * 1e-3, 1e-3, &mut Context::default()).unwrap();
                assert_eq!(
                    (p.x.to_bits(), p.v.to_bits()),
                    (want.0.to_bits(), want.1.to_bits()),
                    "{coupling:?} m = {m}, step {n}"
                );
            }
        }
    }
}
