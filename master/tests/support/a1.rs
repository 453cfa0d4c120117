//! The A.1 double oscillator's exact solution (seed 001 Appendix A.1), shared by the energy
//! tests.

/// The A.1 double oscillator, case 1 (m1 = m2 = 1 kg, k1 = 10, k2 = 1000, k_c = 100 N/m, no
/// damping, x(0) = 0, v(0) = (100, −100) m/s), solved in its modes: x(t) = Σ φ_i (φ_i·v₀)
/// sin(ω_i t)/ω_i with K φ_i = ω_i² φ_i.
pub fn a1_exact(t: f64) -> [f64; 2] {
    let (a, b, d) = (110.0f64, -100.0f64, 1100.0f64); // K = [[a, b], [b, d]]
    let (mid, rad) = (0.5 * (a + d), (0.25 * (a - d) * (a - d) + b * b).sqrt());
    let v0 = [100.0, -100.0];
    let mut x = [0.0; 2];
    for lambda in [mid - rad, mid + rad] {
        let (p, q) = (b, lambda - a);
        let n = (p * p + q * q).sqrt();
        let phi = [p / n, q / n];
        let w = lambda.sqrt();
        let c = (phi[0] * v0[0] + phi[1] * v0[1]) * (w * t).sin() / w;
        x[0] += phi[0] * c;
        x[1] += phi[1] * c;
    }
    x
}
