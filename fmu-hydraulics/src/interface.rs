//! Interface-model (IM) mode of the circuit FMUs (Publication IV; Peiret, González, Kövecses,
//! Teichmann, Mech. Mach. Theory 127, 2018): instead of following s(τ), ṡ(τ) extrapolated from
//! the last communication point, the circuit integrates the cylinder motion itself with the
//! mechanism reduced to its actuator coordinate,
//!
//! m_eff s̈ = F(p, s, ṡ) + f_eff,
//!
//! m_eff and f_eff given by the mechanism FMU at the communication point (outputs `m_eff`,
//! `f_eff` of the multibody FMUs) and held over the step, s and ṡ starting from the inputs at the
//! communication point. The state is [circuit states, s, ṡ]; the Jacobian of the coupled system
//! is evaluated by central differences (the circuit's analytic Jacobian covers only its own
//! states).

use crate::integrator::Ode;
use nalgebra::{SMatrix, SVector};

/// A circuit whose rates and force can be evaluated at a given s, ṡ (`P` circuit states).
pub trait ImCircuit<const P: usize> {
    /// Circuit rates at τ into the step for cylinder length s and velocity ṡ.
    fn rates_at(&self, tau: f64, x: &SVector<f64, P>, s: f64, s_dot: f64) -> SVector<f64, P>;
    /// Cylinder force along s (N) for the circuit state at (s, ṡ).
    fn force_at(&self, x: &SVector<f64, P>, s: f64, s_dot: f64) -> f64;
    /// The circuit state is admissible ([`Ode::admissible`]).
    fn admissible_states(&self, x: &SVector<f64, P>) -> bool;
    /// Failed steps may be redone with backward Euler ([`Ode::rescues`]).
    fn rescues_steps(&self) -> bool;
}

/// The coupled ODE x = [circuit states (P), s, ṡ]; N must be P + 2.
pub struct ImOde<'a, C, const P: usize> {
    /// The circuit.
    pub circuit: &'a C,
    /// Effective mass m_eff (kg), held over the step.
    pub m_eff: f64,
    /// Effective force f_eff (N), held over the step.
    pub f_eff: f64,
}

impl<C: ImCircuit<P>, const P: usize> ImOde<'_, C, P> {
    fn split<const N: usize>(x: &SVector<f64, N>) -> (SVector<f64, P>, f64, f64) {
        (SVector::<f64, P>::from_fn(|i, _| x[i]), x[P], x[P + 1])
    }
}

impl<C: ImCircuit<P>, const P: usize, const N: usize> Ode<N> for ImOde<'_, C, P> {
    type Point = f64;
    fn point(&self, tau: f64) -> f64 {
        tau
    }
    fn f_at(&self, tau: &f64, x: &SVector<f64, N>) -> SVector<f64, N> {
        let (p, s, s_dot) = Self::split(x);
        let rates = self.circuit.rates_at(*tau, &p, s, s_dot);
        let s_ddot = (self.circuit.force_at(&p, s, s_dot) + self.f_eff) / self.m_eff;
        SVector::<f64, N>::from_fn(|i, _| match i {
            i if i < P => rates[i],
            i if i == P => s_dot,
            _ => s_ddot,
        })
    }
    fn jacobian_at(&self, tau: &f64, x: &SVector<f64, N>) -> SMatrix<f64, N, N> {
        let mut j = SMatrix::<f64, N, N>::zeros();
        for c in 0..N {
            // 1 Pa on pressures, 1 µm, 1 µm/s, 1 µV: scaled to the state's magnitude.
            let d = 1e-7 * x[c].abs().max(if c < P { 1e6 } else { 1.0 }) + 1e-9;
            let (mut hi, mut lo) = (*x, *x);
            hi[c] += d;
            lo[c] -= d;
            j.set_column(c, &((self.f_at(tau, &hi) - self.f_at(tau, &lo)) / (2.0 * d)));
        }
        j
    }
    fn admissible(&self, x: &SVector<f64, N>) -> bool {
        self.circuit.admissible_states(&Self::split(x).0)
    }
    fn rescues(&self) -> bool {
        self.circuit.rescues_steps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrator::{step, Method, Newton};

    /// A circuit without pressure dynamics pushing with a spring-damper force: the IM ODE is then
    /// m s̈ = −k (s − 1) − c ṡ + f, a damped oscillator with a known solution.
    struct Spring;
    impl ImCircuit<1> for Spring {
        fn rates_at(&self, _tau: f64, _x: &SVector<f64, 1>, _s: f64, _s_dot: f64) -> SVector<f64, 1> {
            SVector::<f64, 1>::zeros()
        }
        fn force_at(&self, _x: &SVector<f64, 1>, s: f64, s_dot: f64) -> f64 {
            -100.0 * (s - 1.0) - 2.0 * s_dot
        }
        fn admissible_states(&self, _x: &SVector<f64, 1>) -> bool {
            true
        }
        fn rescues_steps(&self) -> bool {
            false
        }
    }

    #[test]
    fn im_ode_integrates_the_reduced_mechanics() {
        // m = 1, k = 100, c = 2, f_eff = 50: equilibrium s = 1.5; ω_d = √(100 − 1).
        let ode = ImOde { circuit: &Spring, m_eff: 1.0, f_eff: 50.0 };
        for method in [Method::Trapezoidal, Method::Rk4] {
            let mut x = SVector::<f64, 3>::new(0.0, 1.0, 0.0);
            let h = 1e-4;
            for i in 0..10_000 {
                step(&ode, method, &mut x, f64::from(i) * h, h, &Newton::default()).unwrap();
            }
            let t: f64 = 1.0;
            let wd = 99.0f64.sqrt();
            let exact = 1.5 - 0.5 * (-t).exp() * ((wd * t).cos() + (wd * t).sin() / wd);
            assert!((x[1] - exact).abs() < 1e-5, "{method:?}: s = {} vs {exact}", x[1]);
        }
    }
}
