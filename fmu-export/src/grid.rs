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
//!
//! The same master ends its run with whatever its time lacks of the stop time: OMSimulator's
//! naya run (H = 10 ms, 1000 steps to t = 9.99999999999983) calls `fmi2DoStep` a last time with
//! H = 1.69e-13 s, legal in FMI 2.0 (any H > 0). A step no longer than [`tolerance`] is such a
//! [remainder](is_remainder): it is taken as n = 0 internal steps, the state held over it (the
//! error, |H·ẋ|, is below what the master's time carries anyway). An integrator that took it
//! literally would fail or warn (the rod's I3AL-P: "(h^2/4) alpha = 0.000 times the largest
//! mass", then Newton diverges).

use crate::ModelError;

/// The accepted |n·h − H| for a step from `t`: 1e-9·H (the relative rounding of H itself), plus a
/// millionth of h, plus 1e-10·|t| for the drift of a float-accumulated master time (an average
/// drift of ε|t|/2 per step reaches 1e-10·|t| only after ~10⁶ steps in the worst case, and ~10¹²
/// steps for a random walk of rounding errors). Each term is far below h: a step off by a real
/// fraction of h is still refused.
pub fn tolerance(t: f64, big_h: f64, h: f64) -> f64 {
    1e-9 * big_h.abs() + 1e-6 * h + 1e-10 * t.abs().max((t + big_h).abs())
}

/// Whether the communication step `big_h` from `t` is only a remainder of a master's float time
/// (no longer than [`tolerance`] for internal steps `h`, 0 for none): zero internal steps.
pub fn is_remainder(t: f64, big_h: f64, h: f64) -> bool {
    big_h <= tolerance(t, big_h, h)
}

/// The number n of internal steps of size `h` in the communication step `big_h` from `t` (0 for
/// a [remainder](is_remainder), else at least 1), or an error naming H, t, h, H/h and the
/// mismatch (see the module documentation).
pub fn internal_steps(t: f64, big_h: f64, h: f64) -> Result<u64, ModelError> {
    if is_remainder(t, big_h, h) {
        return Ok(0);
    }
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

    #[test]
    fn the_remainder_of_a_float_accumulated_time_is_zero_internal_steps() {
        // OMSimulator's last naya step (H = 10 ms, h = 0.2 ms and none).
        let (t, big_h) = (9.999_999_999_999_831, 1.687_538_997_430_238e-13);
        for h in [2e-4, 0.0] {
            assert!(is_remainder(t, big_h, h));
        }
        assert_eq!(internal_steps(t, big_h, 2e-4).unwrap(), 0);
        // t += H 1000 times: the steps are whole, the remainder to 10 s is one.
        let (mut t, mut remainders) = (0.0f64, 0);
        while t < 10.0 {
            let step = (10.0 - t).min(1e-2);
            let n = internal_steps(t, step, 2e-4).unwrap();
            assert!(n == 50 || (n == 0 && is_remainder(t, step, 0.0)), "t = {t}, H = {step:e}: {n}");
            remainders += usize::from(n == 0);
            t += 1e-2;
        }
        assert!(remainders <= 1);
        // A real step is none: at t = 0, and a step of a thousandth of h at 10 s.
        assert!(!is_remainder(0.0, 1e-15, 0.0));
        assert!(!is_remainder(10.0, 2e-7, 2e-4));
        assert!(internal_steps(10.0, 2e-7, 2e-4).is_err());
    }
}
