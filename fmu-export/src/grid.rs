//! The internal step grid of a physics FMU: how many internal steps of size h make up a
//! communication step H, accepting the H a master with floating-point time sends.
//!
//! A master that accumulates its time (`t += H`, as OMSimulator does) sends steps that differ
//! from k·h by rounding: its last crane step (t = 19.999 s, H = 1 ms, h = 0.1 ms) is
//! H = 0.0009999999985410568 s, 1.46e-12 s short of 10·h. Each `t += H` rounds by at most half
//! an ulp of t, so the drift of such a time grows with |t|. A step is accepted as n = round(H/h)
//! internal steps when |n·h − H| is within [`tolerance`]; the FMU then integrates with
//! h' = H/n (exactly h when H = n·h, so nothing moves for an exact master). A step that really is
//! not a multiple (H = 1.5·h, or H = 1 ms with h = 0.3 ms) is refused with the numbers.

use crate::ModelError;

/// The accepted |n·h − H| for a step from `t`: 1e-9·H (the relative rounding of H itself), plus a
/// millionth of h, plus 1e-10·|t| for the drift of a float-accumulated master time (an average
/// drift of ε|t|/2 per step reaches 1e-10·|t| only after ~10⁶ steps in the worst case, and ~10¹²
/// steps for a random walk of rounding errors). Each term is far below h: a step off by a real
/// fraction of h is still refused.
pub fn tolerance(t: f64, big_h: f64, h: f64) -> f64 {
    1e-9 * big_h.abs() + 1e-6 * h + 1e-10 * t.abs().max((t + big_h).abs())
}

/// The number n ≥ 1 of internal steps of size `h` in the communication step `big_h` from `t`,
/// or an error naming H, t, h, H/h and the mismatch (see the module documentation).
pub fn internal_steps(t: f64, big_h: f64, h: f64) -> Result<u64, ModelError> {
    let ratio = big_h / h;
    let n = ratio.round();
    let tol = tolerance(t, big_h, h);
    let off = (n * h - big_h).abs();
    if !(n >= 1.0 && off <= tol) {
        let why = if n < 1.0 {
            "H is smaller than h".to_owned()
        } else {
            format!("|H - {n}·h| = {off:e} s > {tol:e} s (the tolerance for a master's float time)")
        };
        return Err(ModelError::new(format!(
            "the communication step H = {big_h:e} s from t = {t} s is not a multiple of the internal step h = {h} s: H/h = {ratio}, {why}; choose H = k·h"
        )));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_accumulated_time_grid_is_accepted_and_a_real_fraction_is_refused() {
        // OMSimulator's last crane step.
        assert_eq!(internal_steps(19.999, 0.0009999999985410568, 1e-4).unwrap(), 10);
        // t += H 20 000 times: every step as the master sends it.
        let (mut t, big_h, stop) = (0.0f64, 1e-3, 20.0);
        for _ in 0..20_000 {
            let step = if t + big_h > stop { stop - t } else { big_h };
            assert_eq!(internal_steps(t, step, 1e-4).unwrap(), 10, "t = {t}, H = {step:e}");
            t += big_h;
        }
        for (big_h, h) in [(1.5e-4, 1e-4), (1e-3, 3e-4), (1.0001e-3, 1e-4), (4e-5, 1e-4)] {
            let e = internal_steps(10.0, big_h, h).unwrap_err().0;
            assert!(e.contains(&format!("h = {h} s")) && e.contains("H/h = ") && e.contains("t = 10 s"), "{e}");
        }
        let e = internal_steps(0.0, 2.5e-4, 1e-4).unwrap_err().0;
        assert!(e.contains("H/h = 2.5") && e.contains("|H - 3·h| = 5") && e.contains("e-5 s > "), "{e}");
    }
}
