//! Energy-based coupling control: the communication step chosen from the power bonds' residual
//! energy (ECCO), on a grid that every instance's fixed internal step divides.
//!
//! **ECCO** (Energy-Conservation-based Co-simulation; S. Sadjina, L. T. Kyllingstad, S. Skjong,
//! E. Pedersen, "Energy conservation and power bonds in co-simulations: non-iterative adaptive
//! step size control and error estimation", Engineering with Computers 33, 2017, §4; the same
//! law as libcosim's `ecco_algorithm`). After step n, each bond b gives the error
//!
//! ```text
//! ε_b = |δE_b| / (atol + rtol·|E_b|),   E_b = max_ports |sign·e·f|(t_{n+1}) · H_n   (energy level)
//! ε_n = sqrt( (1/N_b) Σ_b ε_b² )                                                     (RMS over bonds)
//! ```
//!
//! and a PI controller sets the next step
//!
//! ```text
//! H_{n+1} = H_n · clamp( s · ε_n^{−(k_I + k_P)} · ε_{n−1}^{k_P}, r_min, r_max ),  H_min ≤ H_{n+1} ≤ H_max
//! ```
//!
//! (s: safety factor; k_P, k_I: proportional and integral gains). Like the paper the method is
//! non-iterative: a step is never repeated, its error only sizes the next one. ε uses the
//! bonds' *uncorrected* residual energy (the exchanged values alone), so energy correction
//! ([`crate::bonds`]) does not hide the coupling error from the controller.
//!
//! Beyond the paper: every H is a whole multiple of the grid quantum Δ, the least common
//! multiple of the instances' fixed internal steps ([`quantum`]), so an FMU that integrates with
//! a fixed step h (which must divide the communication step) can take every step; time is
//! counted in quanta (no drift); and a step never crosses a breakpoint of a time table
//! (`[[inputs]]`, a valve switch): it ends there, so a step input is applied when it happens,
//! and the controller restarts from at most H_0 (a residual measured before the switch says
//! nothing about the steps after it).

/// How the communication step is chosen (`[simulation] step_control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepControlKind {
    /// A constant H (`[simulation] step`).
    Fixed,
    /// ECCO: H from the bonds' residual energy ([`Ecco`]).
    Ecco,
}

impl StepControlKind {
    /// Parses `fixed` / `ecco`.
    pub fn parse(s: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(s, false).ok()
    }

    /// The name in system files and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Ecco => "ecco",
        }
    }
}

/// ECCO's parameters (`[simulation.ecco]`); defaults as in Sadjina et al. 2017 §5 and libcosim.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EccoParams {
    /// Relative tolerance on the residual energy per step (of the energy level).
    pub rtol: f64,
    /// Absolute tolerance on the residual energy per step (J).
    pub atol: f64,
    /// Safety factor s.
    pub safety: f64,
    /// Proportional gain k_P.
    pub p_gain: f64,
    /// Integral gain k_I.
    pub i_gain: f64,
    /// Smallest step (s; rounded up to the grid quantum).
    pub h_min: f64,
    /// Largest step (s; rounded down to the grid quantum).
    pub h_max: f64,
    /// Smallest change factor H_{n+1}/H_n.
    pub min_rate: f64,
    /// Largest change factor H_{n+1}/H_n.
    pub max_rate: f64,
}

impl Default for EccoParams {
    fn default() -> Self {
        Self {
            rtol: 1e-3,
            atol: 1e-4,
            safety: 0.9,
            p_gain: 0.2,
            i_gain: 0.15,
            h_min: 0.0,
            h_max: f64::INFINITY,
            min_rate: 0.2,
            max_rate: 1.5,
        }
    }
}

/// Resolution of the quantum computation (s): steps are compared as integer multiples of 1 ps.
const PICO: f64 = 1e-12;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The grid quantum Δ: the least common multiple of the fixed internal steps `steps` (s), or
/// `None` when one of them is not a whole number of picoseconds (to 1e-9 relative) or the
/// multiple overflows. An empty list gives `Some(None)`: no constraint.
pub fn quantum(steps: &[f64]) -> Option<Option<f64>> {
    let mut l: u64 = 0;
    for h in steps {
        let k = (h / PICO).round();
        if !((1.0..1e18).contains(&k) && (k * PICO - h).abs() <= 1e-9 * h) {
            return None;
        }
        let k = k as u64;
        l = if l == 0 { k } else { (l / gcd(l, k)).checked_mul(k)? };
    }
    Some((l > 0).then_some(l as f64 * PICO))
}

/// The resolved step control of a system.
#[derive(Debug, Clone, PartialEq)]
pub enum StepControl {
    /// Constant H.
    Fixed,
    /// ECCO on the grid `quantum` (s); `h_min`/`h_max` in quanta.
    Ecco {
        /// Parameters as given.
        params: EccoParams,
        /// Grid quantum Δ (s).
        quantum: f64,
        /// H_min, H_max, H_0 in quanta.
        units: (u64, u64, u64),
        /// Time-table breakpoints in quanta after the start (steps end there).
        breakpoints: Vec<u64>,
    },
}

impl StepControl {
    /// `fixed` or `ecco`.
    pub fn kind(&self) -> StepControlKind {
        match self {
            Self::Fixed => StepControlKind::Fixed,
            Self::Ecco { .. } => StepControlKind::Ecco,
        }
    }

    /// ECCO with `record_every = k > 1`: the output interval k·H_0 in quanta (the steps end on
    /// its multiples); `None` for fixed steps or `k` 1 (a row per step).
    pub fn output_units(&self, record_every: u64) -> Option<u64> {
        match self {
            Self::Ecco { units: (_, _, h0), .. } if record_every > 1 => record_every.checked_mul(*h0),
            _ => None,
        }
    }
}

/// ECCO's error measure of one step (see the module docs): the RMS over the bonds of
/// |δE| / (atol + rtol·E_level), with the uncorrected δE. `bonds` gives each bond's
/// (uncorrected δE, power level), i.e. [`crate::bonds::BondState`]'s `de_uncorrected` and
/// `level`. `None` without bonds.
///
/// A bond without residual (δE = 0) has error 0 whatever the tolerance; a residual against a
/// tolerance that is 0 (`atol = 0` and a level of 0, or a product rtol·E that underflows) has
/// error +∞, and [`Ecco::update`] shrinks the step for it (it used to grow it: ∞ was taken
/// for "no residual").
pub fn error_estimate(bonds: impl ExactSizeIterator<Item = (f64, f64)>, h: f64, p: &EccoParams) -> Option<f64> {
    let n = bonds.len();
    if n == 0 {
        return None;
    }
    let sum: f64 = bonds
        .map(|(de_uncorrected, level)| {
            let level = level * h;
            let de = de_uncorrected.abs();
            let tol = p.atol + p.rtol * level.abs();
            let e = if de == 0.0 { 0.0 } else { de / tol };
            e * e
        })
        .sum();
    Some((sum / n as f64).sqrt())
}

/// The ECCO controller: its state between steps.
#[derive(Debug, Clone)]
pub struct Ecco {
    params: EccoParams,
    /// H_min, H_max in quanta.
    min_units: u64,
    max_units: u64,
    /// The wanted step in quanta (before a breakpoint or the stop time cut it).
    units: u64,
    /// The wanted step as a real number of quanta (the controller's state, not rounded).
    h_units: f64,
    /// H_0 in quanta.
    start_units: u64,
    /// ε of the previous step (0: none yet).
    prev_error: f64,
    /// ε of the last step.
    last_error: f64,
}

impl Ecco {
    /// A controller with H_min, H_max and H_0 in quanta.
    pub fn new(params: EccoParams, (min_units, max_units, start_units): (u64, u64, u64)) -> Self {
        Self {
            params,
            min_units,
            max_units,
            units: start_units,
            h_units: start_units as f64,
            start_units,
            prev_error: 0.0,
            last_error: 0.0,
        }
    }

    /// Restarts at a discontinuity of the inputs (a time-table breakpoint): the step falls back
    /// to at most H_0 and the controller forgets the previous error, as an integrator restarts
    /// after an event.
    pub fn restart(&mut self) {
        self.h_units = self.h_units.min(self.start_units as f64);
        self.units = (self.h_units.floor() as u64).clamp(self.min_units, self.max_units);
        self.prev_error = 0.0;
    }

    /// The step wanted now, in quanta.
    pub fn units(&self) -> u64 {
        self.units
    }

    /// ε of the last step.
    pub fn last_error(&self) -> f64 {
        self.last_error
    }

    /// After a step of `h_units` quanta with error `error`: the next wanted step (PI law, the
    /// change factor and the bounds clamped; rounded down to whole quanta). A step cut short
    /// (breakpoint, stop time) does not shrink the next one: the rate applies to the larger of
    /// the step taken and the one wanted.
    pub fn update(&mut self, taken_units: u64, error: f64) -> u64 {
        let p = &self.params;
        self.last_error = error;
        let base = self.h_units.max(taken_units as f64);
        if error > 0.0 && error.is_finite() && self.prev_error > 0.0 {
            let gain = p.safety * error.powf(-(p.i_gain + p.p_gain)) * self.prev_error.powf(p.p_gain);
            let gain = if gain.is_finite() { gain.clamp(p.min_rate, p.max_rate) } else { p.min_rate };
            self.h_units = (base * gain).clamp(self.min_units as f64, self.max_units as f64);
        } else if error > 0.0 && error.is_finite() {
            // First estimate: the I-controller alone (no previous error yet).
            let gain = (p.safety * error.powf(-p.i_gain)).clamp(p.min_rate, p.max_rate);
            self.h_units = (base * gain).clamp(self.min_units as f64, self.max_units as f64);
        } else if error.is_nan() {
            self.h_units = self.min_units as f64;
        } else if error == f64::INFINITY {
            // A residual against a zero tolerance: as large an error as there is.
            self.h_units = (base * p.min_rate).clamp(self.min_units as f64, self.max_units as f64);
        } else {
            // No residual at all: grow at the largest rate.
            self.h_units = (base * p.max_rate).clamp(self.min_units as f64, self.max_units as f64);
        }
        if error > 0.0 && error.is_finite() {
            self.prev_error = error;
        }
        self.units = (self.h_units.floor() as u64).clamp(self.min_units, self.max_units);
        self.units
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantum_is_the_least_common_multiple() {
        assert_eq!(quantum(&[]), Some(None));
        let q = quantum(&[1e-4, 2.5e-5]).unwrap().unwrap();
        assert!((q - 1e-4).abs() < 1e-18, "{q}");
        let q = quantum(&[4e-4, 6e-4]).unwrap().unwrap();
        assert!((q - 1.2e-3).abs() < 1e-15, "{q}");
        assert_eq!(quantum(&[1e-13]), None, "below a picosecond");
    }

    #[test]
    fn the_pi_controller_shrinks_on_large_errors_and_grows_on_small_ones() {
        let p = EccoParams::default();
        let mut c = Ecco::new(p, (1, 100, 10));
        // ε = 1: H_{n+1} = s·H (shrinks by the safety factor).
        c.update(10, 1.0);
        assert!((c.h_units - 9.0).abs() < 1e-9, "{}", c.h_units);
        // A huge error cuts at the smallest rate, a tiny one grows at the largest.
        let before = c.h_units;
        c.update(c.units(), 1e6);
        assert!((c.h_units - (before * p.min_rate).max(1.0)).abs() < 1e-9);
        let before = c.h_units;
        c.update(c.units(), 1e-9);
        assert!((c.h_units - (before * p.max_rate).min(100.0)).abs() < 1e-9);
        // Bounds hold.
        for _ in 0..50 {
            c.update(c.units(), 1e-12);
        }
        assert_eq!(c.units(), 100);
        for _ in 0..50 {
            c.update(c.units(), 1e12);
        }
        assert_eq!(c.units(), 1);
    }

    #[test]
    fn an_infinite_error_shrinks_the_step_and_a_zero_residual_is_no_error() {
        // Issue 30 item 8: tolerance 1e-160 (rtol·E underflows) or atol = 0 with a zero level
        // gave ε = ∞, which the controller took for "no residual" and grew H.
        let bond = |de: f64, level: f64| (de, level);
        let b = bond(1e-3, 0.0);
        let p = EccoParams { atol: 0.0, ..EccoParams::default() };
        assert_eq!(error_estimate([b].into_iter(), 1e-3, &p), Some(f64::INFINITY));
        let tiny = EccoParams { rtol: 1e-160, atol: 0.0, ..EccoParams::default() };
        let b2 = bond(1e-3, 1e-200);
        assert_eq!(error_estimate([b2].into_iter(), 1e-3, &tiny), Some(f64::INFINITY));
        let none = bond(0.0, 0.0);
        assert_eq!(error_estimate([none].into_iter(), 1e-3, &p), Some(0.0), "0/0 is no error, not NaN");
        let mut c = Ecco::new(EccoParams::default(), (1, 1000, 100));
        c.update(100, f64::INFINITY);
        assert_eq!(c.units(), 20, "shrinks at min_rate");
        c.update(c.units(), 0.0);
        assert_eq!(c.units(), 30, "grows at max_rate without residual");
    }

    #[test]
    fn the_pi_law_matches_its_formula() {
        let p = EccoParams { min_rate: 0.0, max_rate: f64::INFINITY, ..EccoParams::default() };
        let mut c = Ecco::new(p, (1, 1_000_000, 1000));
        c.update(1000, 0.5); // first: s·ε^{−k_I}
        let h1 = 1000.0 * 0.9 * 0.5f64.powf(-0.15);
        assert!((c.h_units - h1).abs() < 1e-9);
        c.update(c.units(), 2.0); // then: s·ε_n^{−(k_I+k_P)}·ε_{n−1}^{k_P}
        let h2 = h1 * 0.9 * 2.0f64.powf(-0.35) * 0.5f64.powf(0.2);
        assert!((c.h_units - h2).abs() < 1e-9, "{} vs {h2}", c.h_units);
    }
}
