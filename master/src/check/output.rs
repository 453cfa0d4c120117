//! The machine-readable forms of `cosim check` reports: JSON (one report, or `{"reports": […]}`
//! for a folder; the schema is in docs/check.md), JUnit XML (one `<testsuite>` per FMU, one
//! `<testcase>` per check) and the summary table of a folder.

use super::{exit_code, Report, Verdict};
use std::fmt::Write as _;

/// The reports of a folder as JSON: `{"reports": [REPORT, …], "exit_code": N}`.
pub fn json_of(reports: &[Report]) -> String {
    let value = serde_json::json!({
        "reports": reports,
        "exit_code": exit_code(reports.iter().flat_map(|r| r.findings.iter().map(|f| f.verdict))),
    });
    serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// `text` with the five XML special characters escaped (and control characters but TAB, LF, CR
/// dropped: XML 1.0 cannot carry them).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML of `reports`: a `<testsuite>` per FMU (named by its file), a `<testcase>` per check
/// (`classname` "cosim.check.FAMILY", `name` the check id, `time` its wall time); FAIL is a
/// `<failure type="FAIL">`, INTERMITTENT a `<failure type="INTERMITTENT">`, SKIP a `<skipped>`,
/// and every evidence (WARN included, "WARN: …") is the testcase's `<system-out>`.
pub fn junit(reports: &[Report]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let all: Vec<_> = reports.iter().flat_map(|r| &r.findings).collect();
    let failures = all.iter().filter(|f| matches!(f.verdict, Verdict::Fail | Verdict::Intermittent)).count();
    let skipped = all.iter().filter(|f| f.verdict == Verdict::Skip).count();
    let time: f64 = all.iter().map(|f| f.seconds).sum();
    let _ = writeln!(
        out,
        "<testsuites name=\"cosim check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">",
        all.len()
    );
    for r in reports {
        let name = r.fmu.display().to_string();
        let failures = r.count(Verdict::Fail) + r.count(Verdict::Intermittent);
        let time: f64 = r.findings.iter().map(|f| f.seconds).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\" time=\"{time:.3}\">",
            xml(&name),
            r.findings.len(),
            r.count(Verdict::Skip)
        );
        let _ = writeln!(
            out,
            "    <properties><property name=\"modelName\" value=\"{}\"/><property name=\"fmiVersion\" value=\"{}\"/></properties>",
            xml(&r.model_name),
            xml(&r.fmi_version)
        );
        for f in &r.findings {
            let _ = write!(
                out,
                "    <testcase classname=\"cosim.check.{}\" name=\"{}\" time=\"{:.3}\">",
                xml(&f.family.replace(' ', "-")),
                xml(&f.check),
                f.seconds
            );
            let first_line = f.evidence.chars().take(200).collect::<String>();
            match f.verdict {
                Verdict::Fail | Verdict::Intermittent => {
                    let _ = write!(
                        out,
                        "<failure type=\"{}\" message=\"{}\">{} [{}]</failure>",
                        f.verdict,
                        xml(&first_line),
                        xml(&f.evidence),
                        xml(&f.section)
                    );
                }
                Verdict::Skip => {
                    let _ = write!(out, "<skipped message=\"{}\"/>", xml(&first_line));
                }
                Verdict::Pass | Verdict::Warn => {}
            }
            let _ = writeln!(
                out,
                "<system-out>{}: {} [{}]</system-out></testcase>",
                f.verdict,
                xml(&f.evidence),
                xml(&f.section)
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The summary table of a folder's reports: one row per FMU (its counts and the checks that
/// FAIL or are INTERMITTENT), then the totals.
pub fn summary(reports: &[Report]) -> String {
    let width = reports.iter().map(|r| r.fmu.display().to_string().chars().count()).max().unwrap_or(3).max(3);
    let mut out =
        format!("{:<width$}  {:>4} {:>4} {:>4} {:>4} {:>5}  failing\n", "FMU", "PASS", "WARN", "FAIL", "SKIP", "INTER");
    let mut totals = [0usize; 5];
    for r in reports {
        let counts =
            [Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Skip, Verdict::Intermittent].map(|v| r.count(v));
        for (t, c) in totals.iter_mut().zip(counts) {
            *t += c;
        }
        let failing: Vec<&str> = r
            .findings
            .iter()
            .filter(|f| matches!(f.verdict, Verdict::Fail | Verdict::Intermittent))
            .map(|f| f.check.as_str())
            .collect();
        let _ = writeln!(
            out,
            "{:<width$}  {:>4} {:>4} {:>4} {:>4} {:>5}  {}",
            r.fmu.display().to_string(),
            counts[0],
            counts[1],
            counts[2],
            counts[3],
            counts[4],
            if failing.is_empty() { "-".to_owned() } else { failing.join(", ") }
        );
    }
    let _ = writeln!(
        out,
        "{:<width$}  {:>4} {:>4} {:>4} {:>4} {:>5}  {} FMUs",
        "total",
        totals[0],
        totals[1],
        totals[2],
        totals[3],
        totals[4],
        reports.len()
    );
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::super::{Finding, Report, Runs, Verdict};
    use super::*;

    fn finding(check: &str, verdict: Verdict, evidence: &str) -> Finding {
        Finding {
            check: check.into(),
            family: "life cycle".into(),
            title: String::new(),
            section: "FMI 2.0 §2.1.5".into(),
            verdict,
            evidence: evidence.into(),
            seconds: 0.5,
            runs: (verdict == Verdict::Intermittent).then_some(Runs { of: 5, failed: 2 }),
        }
    }

    fn report() -> Report {
        Report {
            fmu: "a<b>.fmu".into(),
            model_name: "m".into(),
            fmi_version: "2.0".into(),
            plan: None,
            findings: vec![
                finding("run", Verdict::Pass, "ok"),
                finding("load", Verdict::Warn, "odd & \"quoted\""),
                finding("state", Verdict::Skip, "canGetAndSetFMUstate = false"),
                finding("threads", Verdict::Intermittent, "intermittent: failed in 2 of 5 runs"),
                finding("illegal", Verdict::Fail, "died\u{1}"),
            ],
        }
    }

    #[test]
    fn junit_has_one_testcase_per_check_with_failures_and_skips_escaped() {
        let x = junit(&[report()]);
        assert!(x.contains("tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"1\""), "{x}");
        assert_eq!(x.matches("<testcase ").count(), 5);
        assert!(x.contains("<failure type=\"FAIL\" message=\"died\">"), "{x}");
        assert!(x.contains("<failure type=\"INTERMITTENT\""), "{x}");
        assert!(x.contains("<skipped message=\"canGetAndSetFMUstate = false\"/>"), "{x}");
        assert!(x.contains("WARN: odd &amp; &quot;quoted&quot;"), "{x}");
        assert!(x.contains("name=\"a&lt;b&gt;.fmu\""), "{x}");
        assert!(x.contains("classname=\"cosim.check.life-cycle\""), "{x}");
    }

    #[test]
    fn the_summary_counts_each_verdict_and_names_the_failing_checks() {
        let s = summary(&[report(), report()]);
        let rows: Vec<&str> = s.lines().collect();
        assert_eq!(rows.len(), 4, "{s}");
        assert!(rows[1].ends_with("1    1    1    1     1  threads, illegal"), "{s}");
        assert!(rows[3].starts_with("total") && rows[3].ends_with("2 FMUs"), "{s}");
        let j: serde_json::Value = serde_json::from_str(&json_of(&[report()])).unwrap();
        assert_eq!(j["exit_code"], 1);
        assert_eq!(j["reports"][0]["findings"][3]["verdict"], "INTERMITTENT");
        assert_eq!(j["reports"][0]["findings"][3]["runs"]["failed"], 2);
    }
}
