//! The test functions of Publication III §2.4.2 (eqs. 12–15) that replace unknown external inputs,
//! as time tables ([`Signal`]) the engine applies at every communication point.
//!
//! v0 is the input's initial value, v_min/v_max its range; the nominal test length is T = 1 s.
//! Every H must cover the same simulated time: a run takes N = ⌈T/H⌉ steps and covers
//! T_c = N·H ∈ [T, T + H); the signals are defined for all t ≥ 0 (held after T, sinusoids keep
//! oscillating) and the criterion judges Σ|δE|/T_c. Sinusoids run over a whole number of periods
//! (at least T, see [`TestFn::duration`]), so a 70 Hz test is 70 periods, not one period of 14 ms
//! which H = 4 ms would cover in 3.6 steps.

use crate::system::{Signal, VarRef};

/// One test function.
#[derive(Debug, Clone, PartialEq)]
pub enum TestFn {
    /// w1, eq. (12): v0 before T/2, v_max after.
    Step,
    /// w2, eq. (13): v0 before T/2, then v0 + 2(t − T/2)/T·(v_max − v0), reaching v_max at T.
    Ramp,
    /// w3, eq. (14): v_max on [T/2 − d/2, T/2 + d/2), v0 elsewhere; d in s.
    Impulse(f64),
    /// w4, eq. (15): v0 + a sin(2π f t), a = min(v_max − v0, v0 − v_min); f in Hz.
    Sin(f64),
    /// No test signal: the inputs keep v0 and the system's own start values excite it (for
    /// systems without external inputs, e.g. the free double oscillator).
    Free,
}

impl TestFn {
    /// Parses `step`, `ramp`, `impulse` (d = 0.4 s, Pub III §3.4), `impulse:D`, `sin:F`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        let num = |a: &str, what: &str| -> Result<f64, String> {
            match a.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                _ => Err(format!("test \"{s}\": {what} \"{a}\" must be a positive number")),
            }
        };
        match (name, arg) {
            ("step", None) => Ok(Self::Step),
            ("ramp", None) => Ok(Self::Ramp),
            ("impulse", None) => Ok(Self::Impulse(0.4)),
            ("impulse", Some(a)) => Ok(Self::Impulse(num(a, "width")?)),
            ("sin", Some(a)) => Ok(Self::Sin(num(a, "frequency (Hz)")?)),
            ("free", None) => Ok(Self::Free),
            _ => Err(format!("unknown test \"{s}\" (expected step, ramp, impulse[:WIDTH_S], sin:FREQ_HZ or free)")),
        }
    }

    /// Short label for tables and files (`step`, `impulse:0.4`, `sin:17.5`).
    pub fn label(&self) -> String {
        match self {
            Self::Step => "step".into(),
            Self::Ramp => "ramp".into(),
            Self::Impulse(d) => format!("impulse:{d}"),
            Self::Sin(f) => format!("sin:{f}"),
            Self::Free => "free".into(),
        }
    }

    /// Human name as in Tables 4 and 5.
    pub fn title(&self) -> String {
        match self {
            Self::Step => "Step".into(),
            Self::Ramp => "Ramp".into(),
            Self::Impulse(d) => format!("Impulse (d = {d} s)"),
            Self::Sin(f) => format!("Sinusoidal {f} Hz"),
            Self::Free => "Free response".into(),
        }
    }

    /// Simulated duration of the test for the nominal length `t_nom`: `t_nom` for step, ramp and
    /// impulse; for a sinusoid `periods` whole periods if given (Publication III: one), else the
    /// smallest whole number of periods that is at least `t_nom`.
    pub fn duration(&self, t_nom: f64, periods: Option<u32>) -> f64 {
        match (self, periods) {
            (Self::Sin(f), Some(k)) => f64::from(k.max(1)) / f,
            (Self::Sin(f), None) => (t_nom * f - 1e-9).ceil().max(1.0) / f,
            _ => t_nom,
        }
    }

    /// The test as a time table on `to` with initial value v0 and range [v_min, v_max]
    /// (`t_nom`: nominal length T). Sinusoids are tabulated at 64 points per period with linear
    /// interpolation (the slope is passed to FMUs that interpolate inputs).
    pub fn signal(&self, to: VarRef, v0: f64, v_min: f64, v_max: f64, t_nom: f64) -> Signal {
        let half = 0.5 * t_nom;
        let (times, values, linear) = match self {
            Self::Free => (vec![0.0], vec![v0], false),
            Self::Step => (vec![0.0, half], vec![v0, v_max], false),
            Self::Ramp => (vec![0.0, half, t_nom], vec![v0, v0, v_max], true),
            Self::Impulse(d) => {
                let d = d.min(t_nom);
                let t0 = (half - 0.5 * d).max(0.0);
                if t0 > 0.0 {
                    (vec![0.0, t0, t0 + d], vec![v0, v_max, v0], false)
                } else {
                    (vec![0.0, d], vec![v_max, v0], false)
                }
            }
            Self::Sin(f) => {
                let a = (v_max - v0).min(v0 - v_min).max(0.0);
                // Tabulate a little past the duration so T_c = ⌈T/H⌉·H still sees the sinusoid.
                let n = ((self.duration(t_nom, None) + 1.0) * f * 64.0).ceil() as usize;
                let dt = 1.0 / (64.0 * f);
                let times: Vec<f64> = (0..=n).map(|k| k as f64 * dt).collect();
                let values = times.iter().map(|t| v0 + a * (2.0 * std::f64::consts::PI * f * t).sin()).collect();
                (times, values, true)
            }
        };
        Signal::new(to, times, values, linear)
    }
}

/// Number of communication steps N = ⌈T/H⌉ that cover the duration T (with a tolerance for
/// rounding, so H = T/k gives exactly k).
pub fn steps_covering(duration: f64, h: f64) -> u64 {
    ((duration / h) - 1e-9).ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use model_description::{BaseType, Causality};

    fn var() -> VarRef {
        VarRef { instance: 0, name: "U_ref".into(), vr: 0, ty: BaseType::Real, causality: Causality::Input }
    }

    #[test]
    fn test_functions_follow_eqs_12_to_15() {
        let s = TestFn::Step.signal(var(), 0.0, -10.0, 10.0, 1.0);
        assert_eq!((s.at(0.49).0, s.at(0.5).0), (0.0, 10.0));
        let r = TestFn::Ramp.signal(var(), 0.0, -10.0, 10.0, 1.0);
        assert_eq!(r.at(0.3).0, 0.0);
        assert!((r.at(0.75).0 - 5.0).abs() < 1e-12 && (r.at(1.0).0 - 10.0).abs() < 1e-12);
        assert!((r.at(0.75).1 - 20.0).abs() < 1e-12);
        let i = TestFn::parse("impulse").unwrap().signal(var(), 0.0, -10.0, 10.0, 1.0);
        assert_eq!((i.at(0.29).0, i.at(0.3).0, i.at(0.69).0, i.at(0.7).0), (0.0, 10.0, 10.0, 0.0));
        let w = TestFn::Sin(35.0).signal(var(), 0.0, -10.0, 10.0, 1.0);
        let t = 0.25 / 35.0;
        assert!((w.at(t).0 - 10.0).abs() < 0.02, "{}", w.at(t).0);
        // Amplitude fits the range on both sides of v0.
        let w = TestFn::Sin(35.0).signal(var(), 2.0, -10.0, 10.0, 1.0);
        assert!((w.at(t).0 - 10.0).abs() < 0.02);
    }

    #[test]
    fn durations_are_whole_periods_and_steps_cover_them() {
        assert!((TestFn::Sin(17.5).duration(1.0, None) - 18.0 / 17.5).abs() < 1e-12);
        assert!((TestFn::Sin(70.0).duration(1.0, None) - 1.0).abs() < 1e-12);
        assert!((TestFn::Sin(70.0).duration(1.0, Some(1)) - 1.0 / 70.0).abs() < 1e-12);
        assert_eq!(TestFn::Ramp.duration(1.0, Some(1)), 1.0);
        assert_eq!(steps_covering(1.0, 1e-3), 1000);
        assert_eq!(steps_covering(1.0, 1.2e-3), 834);
        assert_eq!(steps_covering(1.0, 0.2), 5);
    }

    #[test]
    fn bad_test_names_are_reported() {
        assert!(TestFn::parse("sin").unwrap_err().contains("unknown test"));
        assert!(TestFn::parse("sin:-3").unwrap_err().contains("positive"));
        assert!(TestFn::parse("chirp").unwrap_err().contains("chirp"));
        assert_eq!(TestFn::parse("impulse:0.2").unwrap(), TestFn::Impulse(0.2));
    }
}
