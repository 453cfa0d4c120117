//! The `[tune]` table of a system file and the configuration space it spans (Publication III
//! §2.4.1 step 2: extrapolation method × subsystem solvers).
//!
//! ```toml
//! [tune]
//! inputs = ["hyd.U_ref"]               # external inputs replaced by the test functions
//! range = { "hyd.U_ref" = [-10.0, 10.0] }  # v_min, v_max (default: the variable's min/max)
//! h_ini = 1e-3                         # s
//! h_inc = 0.2e-3                       # s
//! h_max = 10e-3                        # s, the sweep stops here (default 10 h_ini)
//! duration = 1.0                       # nominal test length T, s
//! sine_periods = 1                     # sinusoids over this many periods (default: ⌈f·T⌉)
//! tests = ["step", "ramp", "impulse:0.4", "sin:17.5", "sin:35", "sin:70"]
//! extrapolate = ["hyd.s", "hyd.s_dot"] # connections (by destination) whose extrapolation is swept
//!                                      # (default: every Real connection)
//! compare = ["mech.s", "mech.s_dot"]   # variables the verification compares (default: [outputs])
//! tolerance = 0.05                     # verification: max error / range of the reference
//! reference = "crane-pub3-unified.toml"  # verification reference: another system file (its own
//! reference_compare = ["unified.s", "unified.s_dot"]  # [[inputs]] must drive the same cycle)
//! [tune.space]
//! extrapolation = [0, 1, 2, 3, 4, "I2"]
//! "mech.solver" = ["I3AL-P", "I1AL"]
//! "hyd.integrator" = ["FWE", "TR", "RK4"]       # "a.x,b.x" = [...] sets several together
//! "simulation.energy_correction" = [false, true] # `simulation.<key>`: a [simulation] setting
//! "simulation.step_control" = ["fixed", "ecco"]  # (with ECCO, H of the sweep is H_0)
//! [tune.i2]                            # derivative outputs for I2, per swept connection
//! "hyd.s" = ["mech.s_dot", "mech.s_ddot"]
//! "hyd.s_dot" = ["mech.s_ddot"]
//! ```

use super::criterion::Criterion;
use super::signals::TestFn;
use crate::system::TuneTable;
use std::collections::BTreeMap;

/// An extrapolation choice of the space.
#[derive(Debug, Clone, PartialEq)]
pub enum Extrap {
    /// Lagrange order m (0–4).
    Order(usize),
    /// Integration of s and ṡ from their derivative outputs.
    I2,
}

impl Extrap {
    /// `m = 2`, `I2`.
    pub fn label(&self) -> String {
        match self {
            Self::Order(m) => format!("m = {m}"),
            Self::I2 => "I2".into(),
        }
    }
}

/// One point of the configuration space.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Extrapolation of the swept connections.
    pub extrapolation: Extrap,
    /// Start values: (key as written, e.g. `mech.solver` or `hyd1.integrator,hyd2.integrator`, value).
    pub params: Vec<(String, toml::Value)>,
}

impl Config {
    /// `m = 2; mech.solver = I1AL; hyd.integrator = FWE` (stable, used as key in tune.csv).
    pub fn label(&self) -> String {
        let mut s = self.extrapolation.label();
        for (k, v) in &self.params {
            s += &format!("; {k} = {}", value_text(v));
        }
        s
    }
}

/// A TOML value without quotes.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Most H values one sweep may try (h_ini … h_max in steps of h_inc).
pub const MAX_GRID: usize = 1_000_000;
/// Most configurations (extrapolation × `[tune.space]` axes) one sweep may have.
pub const MAX_CONFIGS: usize = 100_000;

/// Everything `cosim tune` needs besides the system itself. Defaults are Publication III's
/// single-actuator settings (§3.4).
#[derive(Debug, Clone)]
pub struct TuneSpec {
    /// Replaced inputs `inst.var`.
    pub inputs: Vec<String>,
    /// Explicit ranges (v_min, v_max) per input.
    pub range: BTreeMap<String, (f64, f64)>,
    /// First H (s; default 1 ms).
    pub h_ini: f64,
    /// Increment (s; default 0.2 ms).
    pub h_inc: f64,
    /// Last H tried (s; default 10 h_ini).
    pub h_max: f64,
    /// Nominal test length T (s; default 1).
    pub duration: f64,
    /// Sinusoid length in whole periods (`None`: as many as cover `duration`; Publication III: 1).
    pub sine_periods: Option<u32>,
    /// Test functions (default: step, ramp, impulse 0.4 s, sin 17.5/35/70 Hz).
    pub tests: Vec<TestFn>,
    /// Destinations of the connections whose extrapolation is swept (`None`: all Real ones).
    pub extrapolate: Option<Vec<String>>,
    /// Variables compared in the verification (`None`: the system's outputs).
    pub compare: Option<Vec<String>>,
    /// Verification tolerance: max |x − x_ref| / range(x_ref) (default 0.05).
    pub tolerance: f64,
    /// Reference system file for the verification (relative to the system file), e.g. the
    /// unified (monolithic) model driven by the same cycle; `None`: the same configuration at the
    /// reference step.
    pub reference: Option<String>,
    /// The reference system's variables matching `compare`, in the same order.
    pub reference_compare: Option<Vec<String>>,
    /// Extrapolation choices (default {0…4}).
    pub extrapolations: Vec<Extrap>,
    /// Parameter axes: key and its values.
    pub params: Vec<(String, Vec<toml::Value>)>,
    /// I2 derivative outputs per swept destination.
    pub i2: BTreeMap<String, Vec<String>>,
    /// The stopping rule.
    pub criterion: Criterion,
}

impl Default for TuneSpec {
    fn default() -> Self {
        Self {
            inputs: Vec::new(),
            range: BTreeMap::new(),
            h_ini: 1e-3,
            h_inc: 0.2e-3,
            h_max: 10e-3,
            duration: 1.0,
            sine_periods: None,
            tests: default_tests(),
            extrapolate: None,
            compare: None,
            tolerance: 0.05,
            reference: None,
            reference_compare: None,
            extrapolations: (0..=4).map(Extrap::Order).collect(),
            params: Vec::new(),
            i2: BTreeMap::new(),
            criterion: Criterion::default(),
        }
    }
}

/// Publication III §3.4: step, ramp, impulse (d = 0.4 s), sinusoids at 17.5, 35 and 70 Hz.
pub fn default_tests() -> Vec<TestFn> {
    vec![TestFn::Step, TestFn::Ramp, TestFn::Impulse(0.4), TestFn::Sin(17.5), TestFn::Sin(35.0), TestFn::Sin(70.0)]
}

impl TuneSpec {
    /// Reads a `[tune]` table given as TOML (`None`: defaults). Errors name the key and the value.
    pub fn from_table(table: Option<&toml::Value>) -> Result<Self, String> {
        let raw: Option<TuneTable> = table
            .map(|t| t.clone().try_into().map_err(|e: toml::de::Error| format!("[tune]: {}", e.message())))
            .transpose()?;
        Self::from_tune(raw.as_ref())
    }

    /// The sweep of a `[tune]` table of the system schema (`None`: defaults), checked. Errors name
    /// the key and the value.
    pub fn from_tune(table: Option<&TuneTable>) -> Result<Self, String> {
        let raw = table.cloned().unwrap_or_default();
        let mut spec = Self { inputs: raw.inputs, ..Self::default() };
        for (k, [lo, hi]) in raw.range {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(format!("[tune].range.\"{k}\" = [{lo}, {hi}]: need finite v_min < v_max"));
            }
            spec.range.insert(k, (lo, hi));
        }
        spec.h_ini = raw.h_ini.unwrap_or(spec.h_ini);
        spec.h_inc = raw.h_inc.unwrap_or(spec.h_inc);
        spec.h_max = raw.h_max.unwrap_or(10.0 * spec.h_ini);
        spec.duration = raw.duration.unwrap_or(spec.duration);
        spec.sine_periods = raw.sine_periods;
        if let Some(tests) = raw.tests {
            spec.tests = tests
                .iter()
                .map(|t| TestFn::parse(t).map_err(|e| format!("[tune].tests: {e}")))
                .collect::<Result<_, _>>()?;
        }
        spec.extrapolate = raw.extrapolate;
        spec.compare = raw.compare;
        spec.tolerance = raw.tolerance.unwrap_or(spec.tolerance);
        spec.reference = raw.reference;
        spec.reference_compare = raw.reference_compare;
        if spec.reference.is_some() != spec.reference_compare.is_some()
            || spec.reference_compare.as_ref().is_some_and(|r| Some(r.len()) != spec.compare.as_ref().map(Vec::len))
        {
            return Err("[tune]: reference needs reference_compare, one variable per compare entry".into());
        }
        spec.i2 = raw.i2;
        if let Some(k) = raw.kappa {
            spec.criterion.kappa = k;
        }
        if let Some(p) = raw.p_max {
            spec.criterion.p_max = p;
        }
        for (key, value) in raw.space {
            let values = match value {
                toml::Value::Array(v) if !v.is_empty() => v,
                other => return Err(format!("[tune.space].\"{key}\" = {other}: expected a non-empty list")),
            };
            if key == "extrapolation" {
                spec.extrapolations = values.iter().map(parse_extrap).collect::<Result<_, _>>()?;
            } else {
                if key.split(',').any(|k| !k.trim().contains('.')) {
                    return Err(format!("[tune.space].\"{key}\": expected instance.variable (several joined by ',')"));
                }
                spec.params.push((key, values));
            }
        }
        spec.check_numbers()?;
        Ok(spec)
    }

    /// Checks everything (after command-line overrides): the numbers and that there is something
    /// to replace.
    pub fn check(&self) -> Result<(), String> {
        self.check_numbers()?;
        if self.inputs.is_empty() && self.tests.iter().any(|t| *t != TestFn::Free) {
            return Err(
                "tune: no inputs to replace (give --input inst.var or [tune].inputs, or tests = [\"free\"])".into()
            );
        }
        Ok(())
    }

    fn check_numbers(&self) -> Result<(), String> {
        let pos = |name: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!("tune {name} = {x}: must be a positive number of seconds"))
            }
        };
        pos("h_ini", self.h_ini)?;
        pos("h_inc", self.h_inc)?;
        pos("duration", self.duration)?;
        if !(self.h_max.is_finite() && self.h_max >= self.h_ini) {
            return Err(format!("tune h_max = {} must be at least h_ini = {}", self.h_max, self.h_ini));
        }
        if self.tests.is_empty() {
            return Err("tune: no test functions".into());
        }
        let (kappa, p_max) = (self.criterion.kappa, self.criterion.p_max);
        if !(kappa.is_finite() && kappa > 1.0 && p_max.is_finite() && p_max > 0.0) {
            return Err(format!(
                "tune: kappa = {} must exceed 1 and p_max = {} be positive (both finite)",
                self.criterion.kappa, self.criterion.p_max
            ));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(format!("tune tolerance = {}: must be positive", self.tolerance));
        }
        // The sweep's size, before anything is allocated (a huge H grid made `steps()` panic
        // with "capacity overflow", a 5×1000×1000 space allocated > 4 GB and aborted).
        let grid = (self.h_max - self.h_ini) / self.h_inc + 1.0;
        if grid.floor() > MAX_GRID as f64 {
            return Err(format!(
                "tune: the H grid h_ini = {:?} s … h_max = {:?} s in steps of h_inc = {:?} s has {grid:.3e} points, \
                 more than cosim's limit of {MAX_GRID}: raise h_inc or lower h_max",
                self.h_ini, self.h_max, self.h_inc
            ));
        }
        let configs = self.params.iter().try_fold(self.extrapolations.len(), |n, (_, v)| n.checked_mul(v.len()));
        match configs {
            Some(n) if n <= MAX_CONFIGS => {}
            _ => {
                let axes: Vec<String> = std::iter::once(format!("{} extrapolations", self.extrapolations.len()))
                    .chain(self.params.iter().map(|(k, v)| format!("{} values of {k}", v.len())))
                    .collect();
                return Err(format!(
                    "tune: the space has {} configurations ({}), more than cosim's limit of {MAX_CONFIGS}: \
                     sweep fewer values",
                    configs.map_or_else(|| "too many to count".to_owned(), |n| n.to_string()),
                    axes.join(" × ")
                ));
            }
        }
        Ok(())
    }

    /// The H grid: h_ini + k h_inc up to h_max (rounded to 1 ns against drift).
    pub fn steps(&self) -> Vec<f64> {
        let n = ((self.h_max - self.h_ini) / self.h_inc + 1e-9).floor().clamp(0.0, MAX_GRID as f64) as usize;
        (0..=n).map(|k| ((self.h_ini + k as f64 * self.h_inc) * 1e9).round() / 1e9).collect()
    }

    /// Every configuration: extrapolation × parameter axes (extrapolation varies slowest).
    pub fn configs(&self) -> Vec<Config> {
        let mut out: Vec<Config> =
            self.extrapolations.iter().map(|e| Config { extrapolation: e.clone(), params: Vec::new() }).collect();
        for (key, values) in &self.params {
            out = out
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.params.push((key.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        out
    }
}

/// `0`…`4`, `"m=2"`, `"I2"`.
pub fn parse_extrap(v: &toml::Value) -> Result<Extrap, String> {
    match v {
        toml::Value::Integer(m) if (0..=4).contains(m) => Ok(Extrap::Order(*m as usize)),
        toml::Value::String(s) => parse_extrap_str(s),
        other => Err(format!("extrapolation {other}: expected 0..4 or \"I2\"")),
    }
}

/// `2`, `m=2`, `I2`.
pub fn parse_extrap_str(s: &str) -> Result<Extrap, String> {
    let t = s.trim().trim_start_matches("m=").trim_start_matches("m =").trim();
    if t.eq_ignore_ascii_case("i2") {
        return Ok(Extrap::I2);
    }
    match t.parse::<usize>() {
        Ok(m) if m <= 4 => Ok(Extrap::Order(m)),
        _ => Err(format!("extrapolation \"{s}\": expected 0..4 or I2")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn space_is_the_product_of_its_axes() {
        let t: toml::Value = toml::from_str(
            "inputs = [\"hyd.U_ref\"]\n[space]\nextrapolation = [0, 2, \"I2\"]\n\"mech.solver\" = [\"I3AL-P\", \"I1AL\"]\n\"hyd.integrator\" = [\"FWE\", \"TR\"]\n",
        )
        .unwrap();
        let spec = TuneSpec::from_table(Some(&t)).unwrap();
        let c = spec.configs();
        assert_eq!(c.len(), 12);
        assert_eq!(c[0].label(), "m = 0; hyd.integrator = FWE; mech.solver = I3AL-P");
        assert_eq!(c[11].extrapolation, Extrap::I2);
        assert_eq!(spec.steps().len(), 46);
        assert_eq!(spec.steps()[5], 2e-3);
    }

    #[test]
    fn sweeps_too_large_to_hold_are_refused_before_they_start() {
        // Issue 30 item 10: a huge H grid panicked ("capacity overflow"); a 5×1000×1000
        // [tune.space] allocated > 4 GB and aborted.
        let t: toml::Value = toml::from_str("inputs = [\"a.u\"]\nh_ini = 1e-3\nh_inc = 1e-300\n").unwrap();
        let e = TuneSpec::from_table(Some(&t)).unwrap_err();
        assert!(e.contains("H grid") && e.contains("h_inc = 1e-300") && e.contains("limit of 1000000"), "{e}");
        let values: Vec<String> = (0..1000).map(|k| k.to_string()).collect();
        let list = values.join(", ");
        let t: toml::Value = toml::from_str(&format!(
            "inputs = [\"a.u\"]\n[space]\nextrapolation = [0, 1, 2, 3, 4]\n\"a.p\" = [{list}]\n\"a.q\" = [{list}]\n"
        ))
        .unwrap();
        let e = TuneSpec::from_table(Some(&t)).unwrap_err();
        assert!(e.contains("5000000 configurations") && e.contains("1000 values of a.p"), "{e}");
        // Overrides (command line, Python) are checked too.
        let mut s = TuneSpec { inputs: vec!["a.u".into()], ..TuneSpec::default() };
        s.h_max = 1e300;
        assert!(s.check().unwrap_err().contains("H grid"));
    }

    #[test]
    fn bad_tables_are_reported_with_key_and_value() {
        let t: toml::Value = toml::from_str("inputs = [\"a.u\"]\nh_inc = -1.0\n").unwrap();
        assert!(TuneSpec::from_table(Some(&t)).unwrap_err().contains("h_inc = -1"));
        let t: toml::Value = toml::from_str("inputs = [\"a.u\"]\n[space]\nextrapolation = [7]\n").unwrap();
        assert!(TuneSpec::from_table(Some(&t)).unwrap_err().contains("extrapolation 7"));
        let t: toml::Value = toml::from_str("inputs = [\"a.u\"]\nh_ini = 1e-3\nbogus = 1\n").unwrap();
        assert!(TuneSpec::from_table(Some(&t)).unwrap_err().contains("bogus"));
        assert!(TuneSpec::from_table(None).unwrap().check().unwrap_err().contains("no inputs"));
    }
}
