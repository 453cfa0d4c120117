//! The run's time span: start, stop and communication step, representable and a whole number
//! of steps.

use super::*;

/// The run's time span, checked ([`Resolver::span`]).
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) start: f64,
    pub(super) stop: f64,
    pub(super) step: f64,
    /// Communication steps from start to stop.
    pub(super) n: f64,
    /// The key (or flag) blamed for a span that is not a whole number of steps.
    pub(super) key: &'static str,
}

impl Resolver<'_> {
    /// Start, stop and communication step, checked: finite, in order, representable, and a whole
    /// number of steps between start and stop. A value the command line gave (`given`) is blamed
    /// on its flag, else on the file's key.
    pub(super) fn span(&self, sim: &Settings, given: &Settings) -> Result<Span> {
        let start = sim.start.unwrap_or(0.0);
        let stop = sim.stop.ok_or_else(|| self.err("simulation.stop", "no stop time given"))?;
        let step = sim.step.ok_or_else(|| self.err("simulation.step", "no communication step given"))?;
        // A value the front end gave is named as it was given (`Resolver::err`).
        let (start_key, stop_key, step_key) = ("simulation.start", "simulation.stop", "simulation.step");
        if !start.is_finite() {
            return Err(self.err(start_key, format!("{start} is not finite")));
        }
        if !(stop.is_finite() && stop > start) {
            return Err(self.err(stop_key, format!("stop time {stop} must be after the start time {start}")));
        }
        if !(step.is_finite() && step > 0.0) {
            return Err(self.err(step_key, format!("communication step {step} must be positive")));
        }
        let span = stop - start;
        if !span.is_finite() {
            return Err(self.err(
                stop_key,
                format!(
                    "stop - start = {stop:e} - ({start:e}) s overflows a double: the time points are not representable"
                ),
            ));
        }
        check_time_resolution(start, stop, step).map_err(|m| self.err(step_key, m))?;
        // At most 4.5e12 steps after that check: n and n·H are exact in a double.
        let n = (span / step).round();
        // A span that is not a whole number of steps: blame the flag that was given.
        let span_key = if given.stop.is_some() && given.step.is_none() { stop_key } else { step_key };
        if (n * step - span).abs() > 1e-9 * span.abs().max(step) {
            return Err(self.err(
                span_key,
                format!(
                    "stop - start = {} s is not a whole number of communication steps H = {step} s: {}",
                    crate::suggest::short(span),
                    crate::suggest::fitting_span(start, stop, step)
                ),
            ));
        }
        Ok(Span { start, stop, step, n, key: span_key })
    }
}

/// Every time point start + n·h in [start, stop] must be distinct and each step t_{n+1} − t_n
/// equal to h within 0.1 %: the spacing of doubles near the larger of |start| and |stop| must be
/// at most h / 1000 (e.g. start = 1e17 s has a spacing of 16 s: no step of 1 ms exists there).
/// This also bounds the number of steps (stop − start)/h by ≈ 4.5e12, so that step numbers and
/// n·h are exact in a double and no count overflows.
pub(super) fn check_time_resolution(start: f64, stop: f64, h: f64) -> std::result::Result<(), String> {
    let t = start.abs().max(stop.abs());
    // The distance from t to the next double: the resolution of time near t.
    let spacing = f64::from_bits(t.to_bits() + 1) - t;
    if spacing > h * 1e-3 {
        return Err(format!(
            "step {h:e} s is not representable at t = {t:e} s (doubles there are {spacing:e} s apart; the step must be \
             at least 1000 times that spacing): shift start and stop towards 0"
        ));
    }
    Ok(())
}

/// How long `seconds` is, roughly: "17 min", "12 days", "3.2e10 years".
pub(super) fn duration_words(seconds: f64) -> String {
    const UNITS: [(&str, f64); 4] = [("years", 365.25 * 86400.0), ("days", 86400.0), ("h", 3600.0), ("min", 60.0)];
    match UNITS.iter().find(|(_, size)| seconds >= *size) {
        Some((unit, size)) if seconds / size >= 1e4 => format!("{:.1e} {unit}", seconds / size),
        Some((unit, size)) => format!("{:.0} {unit}", seconds / size),
        None => format!("{seconds:.0} s"),
    }
}
