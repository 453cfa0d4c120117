//! The sweep's answer: Publication III's table layout (test function | extrapolation | one column
//! per parameter axis | H), the paper's recommendation (the most pessimistic row, §4.1) and a
//! robust one (the configuration whose smallest limit over all tests is largest), `tune.json`
//! ([`json`] builds it, [`read_json`] reads it back).

use super::space::{value_text, Config};
use super::verify::Verified;
use super::{Limit, Sweep};
use crate::error::{MasterError, Result};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::Path;

/// The best configuration for one test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableRow {
    /// Test label.
    pub test: String,
    /// Test title (as in Tables 4 and 5).
    pub title: String,
    /// Configuration index (not in `tune.json`: 0 when read back).
    #[serde(skip)]
    pub config: usize,
    /// Configuration label.
    pub config_label: String,
    /// Largest stable H (s), `None` if no configuration passed H_ini.
    #[serde(rename = "H")]
    pub h: Option<f64>,
}

/// A recommendation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recommendation {
    /// Communication step (s).
    #[serde(rename = "H")]
    pub h: f64,
    /// Configuration label.
    pub config: String,
    /// Extrapolation (`m = 2`, `I2`).
    pub extrapolation: String,
    /// Parameter values by key.
    pub params: std::collections::BTreeMap<String, String>,
    /// Index into the configurations (not in `tune.json`: 0 when read back).
    #[serde(skip)]
    pub index: usize,
}

impl Recommendation {
    fn new(h: f64, index: usize, c: &Config) -> Self {
        Self {
            h,
            config: c.label(),
            extrapolation: c.extrapolation.label(),
            params: c.params.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
            index,
        }
    }
}

/// The parsed results.
#[derive(Debug, Clone)]
pub struct Report {
    /// One row per test.
    pub table: Vec<TableRow>,
    /// The most pessimistic row of the table (Publication III §4.1).
    pub paper: Option<Recommendation>,
    /// The configuration with the largest limit min over all tests, at that limit.
    pub robust: Option<Recommendation>,
}

fn limits_of(sweep: &Sweep, test: usize) -> impl Iterator<Item = &Limit> {
    sweep.limits.iter().filter(move |l| l.test == test)
}

/// Per test the configuration with the largest limit (ties: the smaller residual rate there,
/// then enumeration order); the paper's and the robust recommendation.
pub fn report(sweep: &Sweep) -> Report {
    let mut table = Vec::new();
    for (t, test) in sweep.spec.tests.iter().enumerate() {
        let best = limits_of(sweep, t).filter(|l| l.h.is_some()).min_by(|a, b| {
            let (ha, hb) = (a.h.unwrap_or(0.0), b.h.unwrap_or(0.0));
            hb.total_cmp(&ha)
                .then(a.rate.unwrap_or(f64::INFINITY).total_cmp(&b.rate.unwrap_or(f64::INFINITY)))
                .then(a.config.cmp(&b.config))
        });
        table.push(TableRow {
            test: test.label(),
            title: test.title(),
            config: best.map_or(0, |l| l.config),
            config_label: best.map_or("(none)".into(), |l| sweep.configs[l.config].label()),
            h: best.and_then(|l| l.h),
        });
    }
    // A test that no configuration passes at H_ini leaves no recommendation.
    let paper = table
        .iter()
        .map(|r| r.h.map(|h| (h, r.config)))
        .collect::<Option<Vec<_>>>()
        .and_then(|rows| rows.into_iter().min_by(|a, b| a.0.total_cmp(&b.0)))
        .map(|(h, c)| Recommendation::new(h, c, &sweep.configs[c]));
    let robust = (0..sweep.configs.len())
        .filter_map(|c| {
            let hs: Vec<Option<f64>> = sweep.limits.iter().filter(|l| l.config == c).map(|l| l.h).collect();
            let min = hs.iter().try_fold(f64::INFINITY, |m, h| h.map(|h| m.min(h)))?;
            Some((min, c))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(h, c)| Recommendation::new(h, c, &sweep.configs[c]));
    Report { table, paper, robust }
}

fn ms(h: Option<f64>) -> String {
    h.map_or("—".into(), |h| format!("{:.1} ms", h * 1e3))
}

/// Table 4/5 layout in Markdown (test function | extrapolation | parameters… | H).
pub fn markdown_table(sweep: &Sweep, rep: &Report) -> String {
    let keys: Vec<&String> = sweep.spec.params.iter().map(|(k, _)| k).collect();
    let inc = format!("H ({} ms steps)", sweep.spec.h_inc * 1e3);
    let mut s = format!(
        "| test function | extrapolation |{} {inc} |\n|---|---|{}---|\n",
        keys.iter().map(|k| format!(" {k} |")).collect::<String>(),
        "---|".repeat(keys.len())
    );
    for r in &rep.table {
        let c = &sweep.configs[r.config];
        let (extrap, params): (String, String) = if r.h.is_some() {
            (c.extrapolation.label(), c.params.iter().map(|(_, v)| format!(" {} |", value_text(v))).collect())
        } else {
            ("—".into(), " — |".repeat(keys.len()))
        };
        s += &format!("| {} | {extrap} |{params} {} |\n", r.title, ms(r.h));
    }
    s
}

/// The recommendation lines printed under the table.
pub fn recommendation_text(rep: &Report) -> String {
    let mut s = String::new();
    match &rep.paper {
        Some(r) => s += &format!("Paper method (smallest H over the tests): H = {} with {}\n", ms(Some(r.h)), r.config),
        None => s += "Paper method: no configuration was stable at H_ini for some test\n",
    }
    match &rep.robust {
        Some(r) => {
            s += &format!("Robust (one configuration stable for every test): H = {} with {}\n", ms(Some(r.h)), r.config)
        }
        None => s += "Robust: no configuration passed every test at H_ini\n",
    }
    s
}

/// `tune.json`: borrowed from the sweep's report when written ([`json`]), owned when read back
/// ([`read_json`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct TuneJson<'a> {
    /// The recommendation (the paper's method, most pessimistic row).
    pub recommended: Option<Cow<'a, Recommendation>>,
    /// The configuration stable for every test, at its smallest limit.
    pub robust: Option<Cow<'a, Recommendation>>,
    /// After the verification stage, if run.
    pub verified: Option<Cow<'a, Verified>>,
    /// Per test.
    pub table: Cow<'a, [TableRow]>,
    /// Every (test, configuration) limit.
    pub limits: Vec<LimitJson>,
    /// Sweep settings.
    pub h_ini: f64,
    /// Increment.
    pub h_inc: f64,
    /// Largest H tried.
    pub h_max: f64,
    /// Runs done, and reused from an interrupted sweep.
    pub runs: usize,
    /// Reused runs.
    pub reused: usize,
}

/// One limit in `tune.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitJson {
    /// Test label.
    pub test: String,
    /// Configuration label.
    pub config: String,
    /// Largest accepted H (s).
    #[serde(rename = "H")]
    pub h: Option<f64>,
    /// Why the sweep stopped (`failed`, `excess 2.1`, `steep 6.3`, `h_max`).
    pub stop: String,
}

/// Builds `tune.json`'s content.
pub fn json<'a>(sweep: &'a Sweep, rep: &'a Report, verified: Option<&'a Verified>) -> TuneJson<'a> {
    use super::criterion::Verdict;
    TuneJson {
        recommended: rep.paper.as_ref().map(Cow::Borrowed),
        robust: rep.robust.as_ref().map(Cow::Borrowed),
        verified: verified.map(Cow::Borrowed),
        table: Cow::Borrowed(&rep.table),
        limits: sweep
            .limits
            .iter()
            .map(|l| LimitJson {
                test: sweep.spec.tests[l.test].label(),
                config: sweep.configs[l.config].label(),
                h: l.h,
                stop: match &l.verdict {
                    Verdict::Accept => "h_max".into(),
                    Verdict::Failed => "failed".into(),
                    Verdict::Excess(x) => format!("excess {x:.3}"),
                    Verdict::Steep(p) => format!("steep {p:.3}"),
                },
            })
            .collect(),
        h_ini: sweep.spec.h_ini,
        h_inc: sweep.spec.h_inc,
        h_max: sweep.spec.h_max,
        runs: sweep.rows.len(),
        reused: sweep.reused,
    }
}

/// Reads a `tune.json` written by `cosim tune`.
pub fn read_json(path: &Path) -> Result<TuneJson<'static>> {
    let io = |source: std::io::Error| MasterError::Io { path: path.to_path_buf(), source };
    let text = std::fs::read_to_string(path).map_err(io)?;
    serde_json::from_str(&text).map_err(|e| io(e.into()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tune::criterion::Verdict;
    use crate::tune::signals::TestFn;
    use crate::tune::space::{Extrap, TuneSpec};

    fn sweep(limits: &[(usize, usize, Option<f64>)]) -> Sweep {
        let spec = TuneSpec { tests: vec![TestFn::Step, TestFn::Sin(35.0)], ..TuneSpec::default() };
        let configs = (0..3).map(|m| Config { extrapolation: Extrap::Order(m), params: vec![] }).collect();
        let limits = limits
            .iter()
            .map(|&(test, config, h)| Limit { test, config, h, verdict: Verdict::Failed, rate: Some(1.0) })
            .collect();
        Sweep { spec, configs, rows: vec![], limits, reused: 0 }
    }

    #[test]
    fn paper_rule_takes_the_most_pessimistic_row_and_robust_the_best_worst_case() {
        // step: m=0 4 ms, m=1 3 ms, m=2 2.5 ms; sin:35: m=0 fails at H_ini, m=1 2 ms, m=2 2.2 ms.
        let s = sweep(&[
            (0, 0, Some(4e-3)),
            (0, 1, Some(3e-3)),
            (0, 2, Some(2.5e-3)),
            (1, 0, None),
            (1, 1, Some(2e-3)),
            (1, 2, Some(2.2e-3)),
        ]);
        let r = report(&s);
        assert_eq!((r.table[0].config, r.table[0].h), (0, Some(4e-3)));
        assert_eq!((r.table[1].config, r.table[1].h), (2, Some(2.2e-3)));
        let paper = r.paper.as_ref().unwrap();
        assert_eq!((paper.index, paper.h), (2, 2.2e-3));
        // m = 0 fails one test; m = 1 reaches 2 ms everywhere, m = 2 2.2 ms.
        let robust = r.robust.as_ref().unwrap();
        assert_eq!((robust.index, robust.h), (2, 2.2e-3));
        let md = markdown_table(&s, &r);
        assert!(md.contains("| Sinusoidal 35 Hz | m = 2 | 2.2 ms |"), "{md}");
    }

    #[test]
    fn tune_json_reads_back_to_the_same_text() {
        use crate::tune::verify::{Attempt, Verified};
        let s = sweep(&[
            (0, 0, Some(4.1e-3)),
            (0, 1, Some(3e-3)),
            (0, 2, None),
            (1, 0, None),
            (1, 1, Some(2.2e-3)),
            (1, 2, Some(1.2e-3)),
        ]);
        let r = report(&s);
        let attempt = |h: f64, stable: bool, error: f64| Attempt {
            h,
            stable,
            message: if stable { String::new() } else { "hyd: \"p\" < 0".into() },
            error,
            worst: "m.x".into(),
            sum_abs_de: 15.947455501900967,
        };
        let v = Verified {
            h: Some(1.4e-3),
            config: "m = 2".into(),
            cycle: "system".into(),
            reference_step: 1e-3,
            reference: "same configuration".into(),
            tolerance: 0.05,
            compare: vec!["m.x".into(), "m.v".into()],
            attempts: vec![attempt(2.2e-3, false, f64::INFINITY), attempt(1.4e-3, true, 0.0333)],
        };
        let text = serde_json::to_string_pretty(&json(&s, &r, Some(&v))).unwrap();
        let path = std::env::temp_dir().join(format!("tune-json-{}.json", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let back = read_json(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
        let rec = back.recommended.as_deref().unwrap();
        assert_eq!((rec.config.as_str(), rec.h), ("m = 1", 2.2e-3));
        assert_eq!(back.table[1].test, "sin:35");
        let attempts = &back.verified.as_deref().unwrap().attempts;
        assert_eq!((attempts[0].error, attempts[1].error), (f64::INFINITY, 0.0333));
    }

    #[test]
    fn no_stable_configuration_gives_no_recommendation() {
        let s = sweep(&[(0, 0, None), (0, 1, None), (0, 2, None), (1, 0, Some(1e-3)), (1, 1, None), (1, 2, None)]);
        let r = report(&s);
        assert!(r.paper.is_none() && r.robust.is_none());
        assert_eq!(r.table[0].h, None);
        let text = recommendation_text(&r);
        assert!(text.contains("no configuration was stable") && text.contains("no configuration passed"), "{text}");
    }
}
