//! The hydraulic energy stored in a crane circuit's volumes (J), from the pressures and the
//! cylinder length the FMUs output, with the hydraulics crate's own geometry and bulk moduli (the
//! model code the hydraulics and unified FMUs are built from, so nothing is restated here).
//!
//! A volume V of fluid with bulk modulus β, compressed from p = 0 to p, stores
//! E = ∫₀ᵖ p′ V/β(p′) dp′ (dV_fluid = −V dp/β): for the three-volume circuit of Publication III,
//! whose effective moduli B_ei (eqs. 23–25: oil, cylinder wall, hose) depend on s only,
//! E = Σ V_i p_i² / (2 B_ei); for seed 004's circuit, β(p) of eq. 3 and V_i = A l_i (eq. 30),
//! integrated by Simpson's rule. Energy is counted from p = 0 (the same for the co-simulation and
//! the unified reference, so differences are the coupling's); the cavitation law's collapsed
//! modulus below the cavitation pressure is not applied (the energy there is ~0 either way).

use fmu_hydraulics::lumped3::Lumped3;
use fmu_hydraulics::naya::Naya;

/// A crane circuit: seed 004's two-chamber cylinder (crane-a4) or Publication III's three-volume
/// circuit (crane-pub3), with the actuator length s0 of its FMU instance.
pub enum Circuit {
    Naya(Naya),
    Lumped3(Lumped3),
}

/// Simpson intervals for ∫ p/β(p) dp (β varies by a few per cent over the circuit's pressures).
const SIMPSON: usize = 32;

impl Circuit {
    /// Seed 004's circuit (hydraulics-naya, the unified crane-a4) with its s0 (m).
    pub fn naya(s0: f64) -> Self {
        Self::Naya(Naya { s0, ..Naya::default() })
    }

    /// Publication III's three-volume circuit (hydraulics-lumped3, the unified crane) with its s0 (m).
    pub fn lumped3(s0: f64) -> Self {
        Self::Lumped3(Lumped3 { s0, ..Lumped3::default() })
    }

    /// The pressures the energy needs, as the FMUs name their outputs.
    pub fn pressures(&self) -> &'static [&'static str] {
        match self {
            Self::Naya(_) => &["p1", "p2"],
            Self::Lumped3(_) => &["p1", "p2", "p3"],
        }
    }

    /// Energy stored in the circuit's volumes at cylinder length s and pressures p (Pa, in the
    /// order of [`pressures`](Self::pressures)), J.
    pub fn stored(&self, s: f64, p: &[f64]) -> f64 {
        match self {
            Self::Naya(n) => {
                let (l1, l2) = n.chamber_lengths(s);
                [l1, l2].iter().zip(p).map(|(l, p)| n.a_p * l * compliance_integral(n, *p)).sum()
            }
            Self::Lumped3(c) => {
                let (v, b) = (c.volumes(s), c.bulk_moduli(s));
                (0..3).map(|i| v[i] * p[i] * p[i] / (2.0 * b[i])).sum()
            }
        }
    }
}

/// ∫₀ᵖ p′/β(p′) dp′ (Pa) with β of seed 004's eq. 3, Simpson's rule.
fn compliance_integral(n: &Naya, p: f64) -> f64 {
    let f = |x: f64| x / n.beta(x);
    let h = p / SIMPSON as f64;
    let inner: f64 = (1..SIMPSON).map(|k| if k % 2 == 1 { 4.0 } else { 2.0 } * f(k as f64 * h)).sum();
    h / 3.0 * (f(0.0) + inner + f(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_modulus_gives_the_quadratic_energy() {
        // b = 0: β(p) = (1 + a p)/a, so ∫ p/β dp = ∫ a p/(1 + a p) dp = p − ln(1 + a p)/a.
        let n = Naya { b: 0.0, ..Naya::default() };
        let p = 5e6;
        let exact = p - (1.0 + n.a * p).ln() / n.a;
        assert!(
            (compliance_integral(&n, p) - exact).abs() <= 1e-9 * exact,
            "{} vs {exact}",
            compliance_integral(&n, p)
        );
        // Near p = 0, β ≈ 1/a: ≈ a p²/2.
        assert!((compliance_integral(&n, 1e3) / (n.a * 1e6 / 2.0) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn naya_energy_changes_by_the_valve_power_with_the_piston_held() {
        // With s fixed, the only power into the fluid is the valves': dE/dt = p1 Q1 + p2 Q2, with
        // ṗ_i from the model's own eq. 29 (a central difference over ±1 µs).
        let n = Naya::default();
        let c = Circuit::naya(n.s0);
        let u = fmu_hydraulics::naya::Inputs { s: n.s0 + 0.05, s_dot: 0.0, kappa: 0.6 };
        let p = [3.0e6, 4.5e6];
        let (q1, q2) = n.flows(p[0], p[1], u.kappa);
        let (r1, r2) = n.pressure_rates(p[0], p[1], &u);
        let dt = 1e-6;
        let at = |k: f64| c.stored(u.s, &[p[0] + k * r1 * dt, p[1] + k * r2 * dt]);
        let rate = (at(1.0) - at(-1.0)) / (2.0 * dt);
        let power = p[0] * q1 + p[1] * q2;
        assert!((rate - power).abs() <= 1e-6 * power.abs(), "dE/dt {rate} W vs valve power {power} W");
    }

    #[test]
    fn lumped3_energy_changes_by_the_valve_power_with_the_piston_held() {
        // Publication III's eqs. 20–22 with s fixed: dE/dt = p1 Q31 − p2 Q2V + p3 (Q_V3 − Q31).
        let c = Lumped3::default();
        let circuit = Circuit::lumped3(c.s0);
        let u = fmu_hydraulics::lumped3::Inputs { s: c.s0 + 0.1, s_dot: 0.0, u_ref: 5.0 };
        let x = nalgebra::SVector::<f64, 4>::new(4.0e6, 3.0e6, 5.0e6, 5.0);
        let (r, q) = (c.rates(&x, &u), c.flows(&x));
        let dt = 1e-6;
        let at = |k: f64| circuit.stored(u.s, &[x[0] + k * r[0] * dt, x[1] + k * r[1] * dt, x[2] + k * r[2] * dt]);
        let rate = (at(1.0) - at(-1.0)) / (2.0 * dt);
        let power = x[0] * q.q31 - x[1] * q.q2v + x[2] * (q.qv3 - q.q31);
        assert!((rate - power).abs() <= 1e-6 * power.abs(), "dE/dt {rate} W vs valve power {power} W");
        assert_eq!(circuit.stored(u.s, &[0.0; 3]), 0.0);
    }
}
