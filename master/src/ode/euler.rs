//! Explicit Euler: x₁ = x₀ + h f(t₀, x₀).

/// One Euler step from x0 with f0 = f(t0, x0) into `x1`; no evaluation of f.
pub(super) fn step(x0: &[f64], f0: &[f64], h: f64, x1: &mut [f64]) {
    for ((x1, &x0), &f0) in x1.iter_mut().zip(x0).zip(f0) {
        *x1 = x0 + h * f0;
    }
}
