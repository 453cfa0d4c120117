//! One point mass of the triple oscillator (seed 001 §A.2, Fig. 20, eqs. 42–54) and of the
//! double oscillator with nonlinear springs and dampers (§A.3, eqs. 55–71), with any number of
//! coupling spring-dampers living in this subsystem and any number of coupling forces received
//! as inputs.
//!
//! Equation of motion of the mass (eqs. 47, 48, 51–54, 67, 69–71 are all of this form):
//!
//! ```text
//! m ẍ + F_d(c, ẋ) + F_s(k, x) + Σ_j [F_s(kc_j, x − ξ_j) + F_d(cc_j, ẋ − ξ̇_j)] = Σ_i f_i
//! ```
//!
//! with the spring and damper laws of eqs. 55–56, written for displacements in m and velocities
//! in m/s so that the coefficients keep the units N/m and N·s/m for every order n, m:
//!
//! ```text
//! F_s(k, x) = k |x / (1 m)|^(n−1) x          (eq. 55; k* = k |x|^(n−1), eqs. 64–66)
//! F_d(c, ẋ) = c |ẋ / (1 m/s)|^(m−1) ẋ        (eq. 56; c* = c |ẋ|^(m−1), eqs. 61–63)
//! ```
//!
//! n = m = 1 is the linear oscillator of §A.1–A.2. ξ_j, ξ̇_j are the position and velocity of
//! the mass at the other end of coupling j (inputs); f_i are coupling forces computed by other
//! subsystems (inputs, eq. 51: f_3^c = f_1^c + f_2^c). The coupling force this subsystem sends is
//! f_j^c = F_s(kc_j, x − ξ_j) + F_d(cc_j, ẋ − ξ̇_j) (eqs. 49–50, 68).
//!
//! Internal integration: classical RK4 with `ceil(H / h_max)` equal sub-steps per communication
//! step H (default h_max = 0.1 ms), inputs evaluated at every stage from their polynomials
//! (`fmi2SetRealInputDerivatives`), as in [`crate::subsystem`].

use fmu_export::{InputSignal, ModelError, StateVisitor};

/// A coupling spring-damper inside this subsystem (eqs. 49–50): stiffness kc, damper cc, and the
/// position ξ and velocity ξ̇ of the mass at its other end as inputs.
#[derive(Debug, Clone)]
pub struct CouplingSpring {
    /// Coupling spring stiffness kc (N/m).
    pub kc: f64,
    /// Coupling damper cc (N·s/m).
    pub cc: f64,
    /// Input ξ: position of the other mass (m).
    pub xi: InputSignal,
    /// Input ξ̇: velocity of the other mass (m/s).
    pub xi_dot: InputSignal,
}

impl CouplingSpring {
    /// A spring-damper kc, cc with both inputs at 0.
    pub const fn new(kc: f64, cc: f64) -> Self {
        Self { kc, cc, xi: InputSignal::new(0.0), xi_dot: InputSignal::new(0.0) }
    }
}

/// Spring law F_s = k |q|^(n−1) q (eq. 55), q in m.
pub fn spring_law(k: f64, n: f64, q: f64) -> f64 {
    if n == 1.0 {
        k * q
    } else {
        k * q.abs().powf(n - 1.0) * q
    }
}

/// Time derivative of the spring law: d/dt F_s = n k |q|^(n−1) q̇.
pub fn spring_law_rate(k: f64, n: f64, q: f64, q_dot: f64) -> f64 {
    if n == 1.0 {
        k * q_dot
    } else {
        n * k * q.abs().powf(n - 1.0) * q_dot
    }
}

/// A point mass with `S` coupling spring-dampers and `F` coupling-force inputs.
#[derive(Debug, Clone)]
pub struct Mass<const S: usize, const F: usize> {
    /// Mass m (kg).
    pub m: f64,
    /// Ground spring stiffness k (N/m).
    pub k: f64,
    /// Ground damper c (N·s/m).
    pub c: f64,
    /// Order n of every spring law (eq. 55); 1 is linear.
    pub n: f64,
    /// Order m of every damper law (eq. 56); 1 is linear.
    pub m_d: f64,
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
    /// Coupling spring-dampers in this subsystem.
    pub springs: [CouplingSpring; S],
    /// Coupling forces received from other subsystems (N).
    pub forces: [InputSignal; F],
}

impl<const S: usize, const F: usize> Mass<S, F> {
    /// A linear, undamped mass m, k with initial velocity v₀ and the given couplings.
    pub fn new(m: f64, k: f64, v0: f64, springs: [CouplingSpring; S]) -> Self {
        Self {
            m,
            k,
            c: 0.0,
            n: 1.0,
            m_d: 1.0,
            x0: 0.0,
            v0,
            h_max: 1e-4,
            x: 0.0,
            v: v0,
            springs,
            forces: [const { InputSignal::new(0.0) }; F],
        }
    }

    /// Damper law F_d = c |q̇|^(m−1) q̇ (eq. 56), q̇ in m/s.
    pub fn damper(&self, c: f64, q_dot: f64) -> f64 {
        spring_law(c, self.m_d, q_dot)
    }

    /// Coupling force f_j^c = F_s(kc, x − ξ) + F_d(cc, ẋ − ξ̇) of spring `j` on the other mass
    /// (eqs. 49–50, 68), at state (x, v) with the inputs at `tau` into the step.
    pub fn coupling_force(&self, j: usize, x: f64, v: f64, tau: f64) -> f64 {
        let s = &self.springs[j];
        spring_law(s.kc, self.n, x - s.xi.at(tau)) + self.damper(s.cc, v - s.xi_dot.at(tau))
    }

    /// Acceleration ẍ at (x, v) with the inputs at `tau` (the equation in the module docs).
    pub fn acceleration(&self, x: f64, v: f64, tau: f64) -> f64 {
        let mut force = -spring_law(self.k, self.n, x) - self.damper(self.c, v);
        for j in 0..S {
            force -= self.coupling_force(j, x, v, tau);
        }
        for f in &self.forces {
            force += f.at(tau);
        }
        force / self.m
    }

    /// Time derivative of coupling force `j` at the current state, as for §A.1 (see
    /// [`crate::subsystem::PointMass::coupling_force_rate`]): the other mass moves with the
    /// input velocity ξ̇, whose own rate comes from its input derivative (0 when held):
    /// n kc |Δx|^(n−1) (ẋ − ξ̇) + m cc |Δẋ|^(m−1) (ẍ − dξ̇/dt).
    pub fn coupling_force_rate(&self, j: usize) -> f64 {
        let s = &self.springs[j];
        let a = self.acceleration(self.x, self.v, 0.0);
        let (dx, dv) = (self.x - s.xi.at(0.0), self.v - s.xi_dot.at(0.0));
        spring_law_rate(s.kc, self.n, dx, dv) + spring_law_rate(s.cc, self.m_d, dv, a - s.xi_dot.rate_at(0.0))
    }

    /// Checks parameters and sets x, v to their initial values.
    pub fn initialize(&mut self) -> Result<(), ModelError> {
        for (name, value) in [("mass", self.m), ("h_max", self.h_max)] {
            if value.is_nan() || value <= 0.0 {
                return Err(ModelError::new(format!("parameter {name} = {value} must be positive")));
            }
        }
        for (name, value) in [("n", self.n), ("m", self.m_d)] {
            if value.is_nan() || value < 1.0 {
                return Err(ModelError::new(format!("order {name} = {value} must be >= 1 (eqs. 55-56)")));
            }
        }
        let mut coefficients = vec![("k", self.k), ("c", self.c)];
        for s in &self.springs {
            coefficients.push(("kc", s.kc));
            coefficients.push(("cc", s.cc));
        }
        if let Some((name, value)) = coefficients.into_iter().find(|(_, v)| v.is_nan() || *v < 0.0) {
            return Err(ModelError::new(format!("parameter {name} = {value} must be >= 0")));
        }
        self.x = self.x0;
        self.v = self.v0;
        Ok(())
    }

    /// Advances by `h` with RK4 sub-steps of at most `h_max`.
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<(), ModelError> {
        let n = (h / self.h_max).ceil().max(1.0);
        if n > 1e9 {
            return Err(ModelError::new(format!("step h = {h} needs {n} sub-steps of h_max = {}", self.h_max)));
        }
        let dt = h / n;
        let (mut x, mut v) = (self.x, self.v);
        let f = |x: f64, v: f64, tau: f64| (v, self.acceleration(x, v, tau));
        for i in 0..n as u64 {
            let tau = i as f64 * dt;
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
            &mut self.n,
            &mut self.m_d,
            &mut self.x0,
            &mut self.v0,
            &mut self.h_max,
            &mut self.x,
            &mut self.v,
        ] {
            s.real(p);
        }
        for sp in &mut self.springs {
            s.real(&mut sp.kc);
            s.real(&mut sp.cc);
            s.input(&mut sp.xi);
            s.input(&mut sp.xi_dot);
        }
        for f in &mut self.forces {
            s.input(f);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn linear_laws_reduce_to_hooke_and_viscous() {
        assert_eq!(spring_law(100.0, 1.0, -0.5), -50.0);
        assert_eq!(spring_law(2.0, 3.0, -2.0), -16.0);
        assert_eq!(spring_law_rate(2.0, 3.0, -2.0, 0.5), 3.0 * 2.0 * 4.0 * 0.5);
    }

    #[test]
    fn free_vibration_matches_the_analytical_solution() {
        // m = 10 kg, k = 10 N/m plus kc = 100 N/m to a fixed mass: ω² = 11 1/s², v0 = 10 m/s.
        let mut a: Mass<1, 0> = Mass::new(10.0, 10.0, 10.0, [CouplingSpring::new(100.0, 0.0)]);
        a.initialize().unwrap();
        for i in 0..100 {
            a.do_step(i as f64 * 0.01, 0.01).unwrap();
        }
        let w = 11f64.sqrt();
        assert!((a.x - 10.0 / w * (w * 1.0).sin()).abs() < 1e-9, "{}", a.x);
    }

    #[test]
    fn coupling_force_rate_is_the_derivative_of_the_coupling_force() {
        // Other mass at rest (ξ̇ = 0, held), cubic laws: the rate is d/dt of eq. 68 along the motion.
        let mut a: Mass<1, 1> = Mass::new(1.0, 10.0, 3.0, [CouplingSpring::new(100.0, 0.5)]);
        a.n = 3.0;
        a.m_d = 3.0;
        a.c = 0.2;
        a.x0 = 0.1;
        a.initialize().unwrap();
        a.forces[0].value = 7.0;
        a.springs[0].xi.value = 0.3;
        let rate = a.coupling_force_rate(0);
        let h = 1e-6;
        let mut ahead = a.clone();
        ahead.do_step(0.0, h).unwrap();
        let f = |b: &Mass<1, 1>| b.coupling_force(0, b.x, b.v, 0.0);
        let numeric = (f(&ahead) - f(&a)) / h;
        assert!((numeric - rate).abs() < 1e-3 * rate.abs().max(1.0), "{numeric} vs {rate}");
    }
}
