//! The stopping rule of the H sweep (Publication III §2.4, Fig. 4): "the co-simulation is stable
//! and accurate as long as the relation between the accumulated energy residual and the
//! communication step-size is approximately linear". The paper gives no number; this module is
//! our explicit version of it.
//!
//! The quantity judged is the residual rate e(H) = Σ|δE| / T_c, the accumulated absolute
//! residual energy of all bonds divided by the simulated time T_c the run covered (so every H is
//! judged over the same time, see [`crate::tune::signals`]).
//!
//! A point (H_k, e_k) is *accepted* when all hold:
//! 1. the run succeeded and e_k is finite;
//! 2. **no excess over the power law** — let ln e = a + p ln H be the least-squares line through
//!    the last [`Criterion::window`] accepted points (with a single accepted point, the line of
//!    slope [`Criterion::p_max`] through it). Then
//!    `ln e_k − (a + p ln H_k) ≤ ln κ` ([`Criterion::kappa`]). A power law e = c Hᵖ lies on the
//!    line and passes at every H; a sudden jump, or an exponential rise after a power-law range
//!    (a lightly damped mode doubling e every H_inc: a factor 2 where the line predicts
//!    (H_k/H_{k−1})ᵖ ≈ 1.05…1.3), exceeds κ at the first point where it starts;
//! 3. **bounded local exponent** — the slope over the last two increments,
//!    `ln(e_k/e_{k−2}) / ln(H_k/H_{k−2})`, is at most [`Criterion::p_max`]. This catches an
//!    exponential e ∝ exp(λH) that is present from H_ini on: its log-log slope λH grows without
//!    bound, while a power law keeps a constant slope p. The theory allows Σ|δE| = O(H^{m+1})
//!    for extrapolation order m ≤ 4, i.e. slopes up to 5; the default p_max = 6 adds one for the
//!    scatter of a slope measured over two increments only.
//!
//! The sweep stops at the first rejected point; the limit is the last accepted H.

/// Thresholds of the linearity test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    /// Largest accepted excess factor κ of e_k over the power-law extrapolation of the accepted
    /// points (default 1.5).
    pub kappa: f64,
    /// Steepest accepted local power law e ∝ H^p_max (default 6: the O(H^{m+1}) bound 5 for m = 4,
    /// plus 1 for the scatter of a slope measured over two increments).
    pub p_max: f64,
    /// Number of trailing accepted points the power law is fitted to (default 4).
    pub window: usize,
}

impl Default for Criterion {
    fn default() -> Self {
        Self { kappa: 1.5, p_max: 6.0, window: 4 }
    }
}

/// Why a point ends the sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    /// Still in the approximately linear (power-law) region.
    Accept,
    /// The run failed (FMU error, NaN, residual blow-up) or gave a non-finite residual.
    Failed,
    /// e_k exceeds the power-law extrapolation by the factor (> κ).
    Excess(#[serde(with = "super::dask::float")] f64),
    /// The local log-log slope (> p_max).
    Steep(#[serde(with = "super::dask::float")] f64),
}

impl Criterion {
    /// Judges `(h, e)` given the accepted points so far (increasing H, e > 0 where finite).
    pub fn judge(&self, accepted: &[(f64, f64)], h: f64, e: f64) -> Verdict {
        if !e.is_finite() {
            return Verdict::Failed;
        }
        let Some(&(h_last, e_last)) = accepted.last() else { return Verdict::Accept };
        // A residual of exactly zero (no bonds excited) stays "linear" as long as it stays zero.
        if e_last <= 0.0 || e <= 0.0 {
            return if e <= e_last.max(0.0) * self.kappa || e_last <= 0.0 && e <= 0.0 {
                Verdict::Accept
            } else {
                Verdict::Excess(f64::INFINITY)
            };
        }
        let window = &accepted[accepted.len().saturating_sub(self.window.max(1))..];
        let (a, p) =
            if window.len() >= 2 { fit_log_log(window) } else { (e_last.ln() - self.p_max * h_last.ln(), self.p_max) };
        let excess = (e.ln() - (a + p * h.ln())).exp();
        if excess > self.kappa {
            return Verdict::Excess(excess);
        }
        if accepted.len() >= 2 {
            let (h2, e2) = accepted[accepted.len() - 2];
            if e2 > 0.0 && h > h2 {
                let slope = (e / e2).ln() / (h / h2).ln();
                if slope > self.p_max {
                    return Verdict::Steep(slope);
                }
            }
        }
        Verdict::Accept
    }

    /// Runs the criterion over a whole measured curve (H increasing; `None` = failed run) and
    /// returns the index of the last accepted point and the verdict that ended the sweep
    /// (`Accept` if every point passed).
    pub fn limit(&self, curve: &[(f64, Option<f64>)]) -> (Option<usize>, Verdict) {
        let mut accepted: Vec<(f64, f64)> = Vec::new();
        for (k, (h, e)) in curve.iter().enumerate() {
            let v = match e {
                None => Verdict::Failed,
                Some(e) => self.judge(&accepted, *h, *e),
            };
            if v != Verdict::Accept {
                return (k.checked_sub(1), v);
            }
            accepted.push((*h, e.unwrap_or(0.0)));
        }
        (curve.len().checked_sub(1), Verdict::Accept)
    }
}

/// Least-squares line ln e = a + p ln H; returns (a, p).
fn fit_log_log(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
    for (h, e) in points {
        let (x, y) = (h.ln(), e.ln());
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    let den = n * sxx - sx * sx;
    if den.abs() < 1e-300 {
        return (sy / n, 0.0);
    }
    let p = (n * sxy - sx * sy) / den;
    ((sy - p * sx) / n, p)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const H_INI: f64 = 1e-3;
    const H_INC: f64 = 0.2e-3;

    fn grid(n: usize) -> Vec<f64> {
        (0..n).map(|k| H_INI + k as f64 * H_INC).collect()
    }

    fn limit_of(f: impl Fn(f64) -> f64) -> Option<f64> {
        let hs = grid(30);
        let curve: Vec<(f64, Option<f64>)> = hs.iter().map(|h| (*h, Some(f(*h)))).collect();
        Criterion::default().limit(&curve).0.map(|k| hs[k])
    }

    #[test]
    fn power_laws_with_ripple_are_accepted_over_the_whole_range() {
        for p in [0.5, 1.0, 2.0, 3.0, 4.0] {
            // ±3 % deterministic ripple, as the discontinuous test inputs give.
            let f = |h: f64| 7.0 * (h / H_INI).powf(p) * (1.0 + 0.03 * (h * 1e4).sin());
            assert_eq!(limit_of(f), Some(grid(30)[29]), "power law p = {p}");
        }
        // A smooth sum of power laws (the slope drifts from 1 to 3) is a power law too.
        assert_eq!(limit_of(|h: f64| h + 200.0 * h.powi(3)), Some(grid(30)[29]));
    }

    #[test]
    fn a_sudden_jump_is_rejected_at_the_jump() {
        let h_c = H_INI + 8.0 * H_INC;
        let f = |h: f64| if h <= h_c + 1e-12 { 3.0 * h } else { 30.0 * h };
        assert!((limit_of(f).unwrap() - h_c).abs() < 1e-12);
    }

    #[test]
    fn smooth_exponential_growth_after_a_linear_range_is_rejected_within_one_increment() {
        // A lightly damped mode: linear up to h_c, then doubling every H_inc without a jump.
        let h_c = H_INI + 10.0 * H_INC;
        let f = |h: f64| if h <= h_c { h } else { h_c * 2f64.powf((h - h_c) / H_INC) };
        let lim = limit_of(f).unwrap();
        assert!((lim - h_c).abs() < 1e-12, "limit {lim} vs {h_c}");
        // The same growth, smoothly blended in: e = H + b·2^((H − h_c)/H_inc). Rejected within
        // the crossover H_x where the exponential term reaches the linear one, and not before it
        // has grown to a noticeable fraction (a quarter: two doublings earlier).
        let b = 1e-6;
        let g = |h: f64| h + b * 2f64.powf((h - h_c) / H_INC);
        let h_x = grid(30).into_iter().find(|h| b * 2f64.powf((h - h_c) / H_INC) >= *h).unwrap();
        let lim = limit_of(g).unwrap();
        assert!(lim < h_x && lim >= h_x - 2.0 * H_INC - 1e-12, "limit {lim}, crossover {h_x}");
    }

    #[test]
    fn exponential_growth_from_the_first_h_is_rejected_by_the_slope_bound() {
        let lim = limit_of(|h: f64| 2f64.powf(h / H_INC)).unwrap();
        assert!(lim < 2.0 * H_INI, "limit {lim}");
    }

    #[test]
    fn failed_runs_and_nan_end_the_sweep() {
        let hs = grid(5);
        let mut curve: Vec<(f64, Option<f64>)> = hs.iter().map(|h| (*h, Some(*h))).collect();
        curve[3].1 = None;
        assert_eq!(Criterion::default().limit(&curve), (Some(2), Verdict::Failed));
        curve[3].1 = Some(f64::NAN);
        assert_eq!(Criterion::default().limit(&curve), (Some(2), Verdict::Failed));
        curve[0].1 = None;
        assert_eq!(Criterion::default().limit(&curve).0, None);
    }
}
