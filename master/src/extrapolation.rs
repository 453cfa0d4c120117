//! Input extrapolation and interpolation polynomials (seed 001 §2.3, dissertation eqs. 2.42–2.51).
//!
//! A polynomial is kept in the local variable τ = t − t_n as its Taylor coefficients at τ = 0,
//! which is exactly what `fmi2SetRealInputDerivatives` takes (derivative k = k!·c_k).

/// Highest polynomial order.
pub const MAX_ORDER: usize = 4;

/// A polynomial p(τ) = Σ c_k τ^k, k ≤ 4, around a communication point.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Poly {
    /// Coefficients c_0 … c_4.
    pub c: [f64; MAX_ORDER + 1],
    /// Order actually used (degree bound).
    pub order: usize,
}

impl Poly {
    /// A constant.
    pub fn constant(v: f64) -> Self {
        Self { c: [v, 0.0, 0.0, 0.0, 0.0], order: 0 }
    }

    /// p(τ).
    #[inline]
    pub fn value(&self, tau: f64) -> f64 {
        let c = &self.c;
        c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * c[4])))
    }

    /// d^k p/dτ^k at τ = 0 (k = 1…4), the value `fmi2SetRealInputDerivatives` takes.
    #[inline]
    pub fn derivative_at_0(&self, k: usize) -> f64 {
        const FACT: [f64; 5] = [1.0, 1.0, 2.0, 6.0, 24.0];
        if k > MAX_ORDER {
            0.0
        } else {
            self.c[k] * FACT[k]
        }
    }

    /// The same polynomial re-expanded around τ = s (Taylor shift), for multirate sub-steps.
    pub fn shifted(&self, s: f64) -> Self {
        let mut c = [0.0; MAX_ORDER + 1];
        // c'_j = Σ_{k ≥ j} C(k, j) c_k s^{k−j}
        const BINOM: [[f64; 5]; 5] = [
            [1.0, 0.0, 0.0, 0.0, 0.0],
            [1.0, 1.0, 0.0, 0.0, 0.0],
            [1.0, 2.0, 1.0, 0.0, 0.0],
            [1.0, 3.0, 3.0, 1.0, 0.0],
            [1.0, 4.0, 6.0, 4.0, 1.0],
        ];
        for (j, cj) in c.iter_mut().enumerate() {
            let mut sp = 1.0;
            for (row, ck) in BINOM.iter().zip(self.c.iter()).skip(j) {
                *cj += row[j] * ck * sp;
                sp *= s;
            }
        }
        Self { c, order: self.order }
    }
}

/// Lagrange polynomial through the points (τ_i, y_i) (distinct τ; any spacing), in monomial
/// form around τ = 0. The order is `points.len() − 1` (at most 4).
///
/// Newton's divided differences in the scaled variable x = τ/scale (≤ 10 divisions, no
/// allocation, no pivoting), then the Newton form expanded to monomials by nested
/// multiplication; `scale` should be the communication step.
pub fn lagrange(points: &[(f64, f64)], scale: f64) -> Poly {
    let n = points.len().clamp(1, MAX_ORDER + 1);
    let pts = &points[..n];
    if n == 1 {
        return Poly::constant(pts[0].1);
    }
    let s = if scale > 0.0 { scale } else { 1.0 };
    let inv_s = 1.0 / s;
    let mut x = [0.0f64; MAX_ORDER + 1];
    let mut d = [0.0f64; MAX_ORDER + 1];
    for (i, (tau, y)) in pts.iter().enumerate() {
        x[i] = tau * inv_s;
        d[i] = *y;
    }
    // d[k] ← f[x_0, …, x_k] (in place, column by column).
    for j in 1..n {
        for i in (j..n).rev() {
            let dx = x[i] - x[i - j];
            if dx == 0.0 {
                // Coincident points: fall back to the most recent value.
                return Poly::constant(pts[0].1);
            }
            d[i] = (d[i] - d[i - 1]) / dx;
        }
    }
    // p(x) = d_0 + (x − x_0)(d_1 + (x − x_1)(d_2 + …)): expand from the innermost factor.
    let mut c = [0.0; MAX_ORDER + 1];
    c[0] = d[n - 1];
    for k in (0..n - 1).rev() {
        // c ← c·(x − x_k) + d_k, degree grows by one.
        for j in (1..n - k).rev() {
            c[j] = c[j - 1] - x[k] * c[j];
        }
        c[0] = d[k] - x[k] * c[0];
    }
    // Undo the scaling: c_k x^k = (c_k / s^k) τ^k.
    let mut sk = 1.0;
    for ck in c.iter_mut().take(n) {
        *ck /= sk;
        sk *= s;
    }
    Poly { c, order: n - 1 }
}

/// History of one coupling signal at past communication points, newest first, for
/// extrapolation of order ≤ 4 (start-up: as many points as exist).
#[derive(Debug, Clone, Default)]
pub struct History {
    t: [f64; MAX_ORDER + 1],
    y: [f64; MAX_ORDER + 1],
    len: usize,
}

impl History {
    /// Adds the sample at time `t` (newer than all stored ones).
    pub fn push(&mut self, t: f64, y: f64) {
        if self.len > 0 && t == self.t[0] {
            self.y[0] = y;
            return;
        }
        for i in (1..=MAX_ORDER).rev() {
            self.t[i] = self.t[i - 1];
            self.y[i] = self.y[i - 1];
        }
        self.t[0] = t;
        self.y[0] = y;
        self.len = (self.len + 1).min(MAX_ORDER + 1);
    }

    /// Number of stored samples.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Newest sample.
    pub fn last(&self) -> Option<(f64, f64)> {
        (self.len > 0).then(|| (self.t[0], self.y[0]))
    }

    /// Extrapolation polynomial of `order` (reduced to the samples available) around the newest
    /// sample's time.
    pub fn extrapolate(&self, order: usize, scale: f64) -> Poly {
        let n = (order + 1).min(self.len).max(1);
        let t0 = self.t[0];
        let mut pts = [(0.0, 0.0); MAX_ORDER + 1];
        for (i, p) in pts.iter_mut().enumerate().take(n) {
            *p = (self.t[i] - t0, self.y[i]);
        }
        lagrange(&pts[..n], scale)
    }

    /// Interpolation polynomial of `order` through a new sample (t_new, y_new) and the newest
    /// stored ones, expanded around the newest stored time (Gauss-Seidel: the predecessor's
    /// t_{n+1} output is known).
    pub fn interpolate_with(&self, t_new: f64, y_new: f64, order: usize, scale: f64) -> Poly {
        let Some((t0, _)) = self.last() else { return Poly::constant(y_new) };
        let n_old = order.min(self.len);
        let mut pts = [(0.0, 0.0); MAX_ORDER + 1];
        pts[0] = (t_new - t0, y_new);
        for i in 0..n_old {
            pts[i + 1] = (self.t[i] - t0, self.y[i]);
        }
        lagrange(&pts[..n_old + 1], scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lagrange_reproduces_polynomials_of_its_order_on_uneven_grids() {
        let f = |t: f64| 2.0 - 3.0 * t + 0.5 * t * t - 4.0 * t.powi(3) + 7.0 * t.powi(4);
        let ts = [0.0, -0.001, -0.0025, -0.0031, -0.005];
        let pts: Vec<(f64, f64)> = ts.iter().map(|t| (*t, f(*t))).collect();
        let p = lagrange(&pts, 0.001);
        assert_eq!(p.order, 4);
        for tau in [0.0, 0.0007, 0.001, 0.002] {
            assert!((p.value(tau) - f(tau)).abs() < 1e-9, "tau = {tau}");
        }
        assert!((p.derivative_at_0(1) + 3.0).abs() < 1e-6);
        assert!((p.derivative_at_0(2) - 1.0).abs() < 1e-4);
    }

    #[test]
    fn extrapolation_error_shrinks_with_order() {
        // sin extrapolated one step ahead: error O(H^{m+1}).
        let h = 0.01;
        let mut hist = History::default();
        for i in 0..5 {
            let t = i as f64 * h;
            hist.push(t, t.sin());
        }
        let t_end = 5.0 * h;
        let mut last = f64::INFINITY;
        for m in 0..=4 {
            let e = (hist.extrapolate(m, h).value(h) - t_end.sin()).abs();
            assert!(e < last, "order {m}: {e} !< {last}");
            last = e;
        }
        assert!(last < 2e-10, "order 4: {last}"); // remainder h^5 max|f^(5)| = 1e-10
    }

    #[test]
    fn start_up_uses_the_samples_available() {
        let mut hist = History::default();
        hist.push(0.0, 1.0);
        assert_eq!(hist.extrapolate(3, 0.1).order, 0);
        hist.push(0.1, 2.0);
        let p = hist.extrapolate(3, 0.1);
        assert_eq!(p.order, 1);
        assert!((p.value(0.1) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn gauss_seidel_interpolation_passes_through_both_ends() {
        let mut hist = History::default();
        hist.push(0.0, 1.0);
        hist.push(0.1, 1.5);
        let p = hist.interpolate_with(0.2, 3.0, 1, 0.1);
        assert!((p.value(0.0) - 1.5).abs() < 1e-12);
        assert!((p.value(0.1) - 3.0).abs() < 1e-12);
        let q = hist.interpolate_with(0.2, 3.0, 2, 0.1);
        assert!((q.value(-0.1) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn shift_matches_direct_evaluation() {
        let p = Poly { c: [1.0, -2.0, 3.0, 0.5, -0.25], order: 4 };
        let q = p.shifted(0.3);
        for tau in [0.0, 0.1, 0.7] {
            assert!((q.value(tau) - p.value(tau + 0.3)).abs() < 1e-12);
        }
    }
}
