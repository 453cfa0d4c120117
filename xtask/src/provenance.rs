//! Provenance of the generated benchmark tables (issue 51 item 2): docs/performance.md and
//! README's bench block come from one `cargo xtask bench` run, stamped with its date, machine,
//! load and commit, and with a digest of what it wrote, so a hand edit of a generated table (a
//! verdict above all) is caught by the test below. Hand measurements live in dated sections
//! without verdicts: a table with a `verdict` column outside a stamped region is refused too.

use anyhow::{bail, Result};
use std::process::Command;

/// Opening of a stamp line: `<!-- bench:run REGION | PROVENANCE | digest HEX -->`.
pub const STAMP: &str = "<!-- bench:run ";

/// The regions a stamp covers: the stamp line's region name and the marker that ends it.
const REGIONS: [(&str, &str); 2] = [("tables", "<!-- precision:begin -->"), ("precision", "<!-- precision:end -->")];

/// When, where and from what this run is: UTC date and time, commit, CPU model, logical CPUs,
/// kernel, and the 1-minute load average now (the machine's conditions).
pub fn now() -> String {
    let sh = |cmd: &mut Command| {
        cmd.output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let date = sh(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])).unwrap_or_else(|| "unknown date".into());
    let commit = sh(Command::new("git").args(["-C"]).arg(crate::root()).args(["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    let dirty = sh(Command::new("git").args(["-C"]).arg(crate::root()).args(["status", "--porcelain"]))
        .is_some_and(|s| !s.is_empty());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel =
        std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(|_| "?".into(), |s| s.trim().to_owned());
    format!(
        "{date}, commit {commit}{}, {cpu}, {cpus} logical CPUs, Linux {kernel}, load average {}",
        if dirty { " with uncommitted changes" } else { "" },
        load()
    )
}

/// The 1-minute load average (/proc/loadavg), or `?`.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// FNV-1a (64 bit) of `text`: a digest of what the run wrote, not a secret.
pub fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The stamp line of `region` with `provenance`, over `body` (the region's text after the
/// stamp line, up to its end marker).
pub fn stamp(region: &str, provenance: &str, body: &str) -> String {
    format!("{STAMP}{region} | {provenance} | digest {} -->", digest(body))
}

/// The stamp of `region` in `doc` and the region's text after it (to its end marker), if any.
fn region<'a>(doc: &'a str, name: &str, end: &str) -> Result<Option<(&'a str, &'a str)>> {
    let open = format!("{STAMP}{name} | ");
    let Some(at) = doc.find(&open) else { return Ok(None) };
    let line_end = doc[at..].find('\n').map_or(doc.len(), |n| at + n + 1);
    let Some(stop) = doc[line_end..].find(end).map(|n| line_end + n) else {
        bail!("the {name} stamp has no {end} after it");
    };
    Ok(Some((doc[at..line_end].trim_end(), &doc[line_end..stop])))
}

/// The stamp's provenance and digest.
fn parts(stamp: &str) -> (&str, &str) {
    let inner = stamp.trim_start_matches(STAMP).trim_end_matches("-->").trim();
    let mut it = inner.rsplitn(2, " | digest ");
    let digest = it.next().unwrap_or("");
    let rest = it.next().unwrap_or("");
    (rest.split_once(" | ").map_or(rest, |(_, p)| p), digest)
}

/// Checks docs/performance.md and README.md against the one-run rule: each stamped region's
/// digest matches its text (nothing edited by hand), README's bench block carries the tables'
/// stamp and shows the run's summary table, and no table with a verdict column lies outside a
/// stamped region. Returns what is wrong.
pub fn check(performance: &str, readme: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut stamped: Vec<(usize, usize)> = Vec::new();
    let mut tables: Option<(&str, &str)> = None;
    for (name, end) in REGIONS {
        match region(performance, name, end) {
            Ok(Some((stamp, body))) => {
                let (_, want) = parts(stamp);
                if digest(body) != want {
                    wrong.push(format!(
                        "docs/performance.md: the {name} region was edited after `cargo xtask bench` wrote it \
                         (digest {} ≠ {want}): regenerate it, never edit a generated table",
                        digest(body)
                    ));
                }
                let start = body.as_ptr() as usize - performance.as_ptr() as usize;
                stamped.push((start, start + body.len()));
                if name == "tables" {
                    tables = Some((stamp, body));
                }
            }
            Ok(None) => {}
            Err(e) => wrong.push(format!("docs/performance.md: {e}")),
        }
    }
    // Verdict columns only inside stamped regions.
    let mut offset = 0;
    for line in performance.split_inclusive('\n') {
        let is_header = line.starts_with('|') && line.to_lowercase().contains("| verdict |");
        if is_header && !stamped.iter().any(|(a, b)| (*a..*b).contains(&offset)) {
            let n = performance[..offset].lines().count() + 1;
            wrong.push(format!(
                "docs/performance.md:{n}: a table with verdicts outside a stamped `cargo xtask bench` region \
                 (hand measurements are dated and carry no verdicts)"
            ));
        }
        offset += line.len();
    }
    let block = match (readme.find("<!-- bench:begin -->"), readme.find("<!-- bench:end -->")) {
        (Some(a), Some(b)) if a < b => &readme[a..b],
        _ => {
            wrong.push("README.md: no <!-- bench:begin --> … <!-- bench:end --> block".into());
            return wrong;
        }
    };
    match tables {
        Some((stamp, body)) => {
            if !block.contains(stamp) {
                wrong
                    .push("README.md: the bench block does not carry the stamp of docs/performance.md's tables".into());
            }
            let shown: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
            let summary = body.split("## Summary").nth(1).unwrap_or("");
            if shown.is_empty() || !shown.iter().all(|l| summary.lines().any(|s| s == *l)) {
                wrong.push("README.md: the bench block's table is not the Summary of docs/performance.md's run".into());
            }
        }
        None => {
            if block.lines().any(|l| l.starts_with('|')) {
                wrong.push(
                    "README.md: the bench block shows a table, but docs/performance.md has no stamped run".into(),
                );
            }
        }
    }
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_performance_doc_and_readme_follow_the_one_run_rule() {
        let root = crate::root();
        let performance = std::fs::read_to_string(root.join("docs/performance.md")).unwrap_or_default();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
        assert_eq!(check(&performance, &readme), Vec::<String>::new());
    }

    #[test]
    fn a_hand_edit_of_a_generated_verdict_is_caught() {
        let body = "\n| target | bound | measured | verdict |\n|---|---|---|---|\n| x | ≤ 1 | 2 | FAIL |\n\n## Summary\n\n| a | b |\n";
        let s = stamp("tables", "2026-11-28 06:00 UTC, test machine", body);
        let doc = format!("# cosim bench\n{s}\n{body}<!-- precision:begin -->\n<!-- precision:end -->\n");
        let readme = format!("x\n<!-- bench:begin -->\n{s}\n| a | b |\n<!-- bench:end -->\n");
        assert_eq!(check(&doc, &readme), Vec::<String>::new());
        // The verdict turned by hand.
        let edited = doc.replace("| FAIL |", "| PASS |");
        assert!(check(&edited, &readme)[0].contains("edited after `cargo xtask bench` wrote it"));
        // README with another table than the run's summary.
        let other = readme.replace("| a | b |", "| a | c |");
        assert!(check(&doc, &other).iter().any(|w| w.contains("not the Summary")));
        // A verdict table in a hand-written section.
        let hand = format!("{doc}\n## By hand (27 Nov 2026)\n\n| what | verdict |\n|---|---|\n");
        assert!(check(&hand, &readme).iter().any(|w| w.contains("outside a stamped")));
        // No run at all: README shows no table.
        assert!(!check("# cosim bench\n", &readme).is_empty());
        assert_eq!(
            check("# cosim bench\n", "<!-- bench:begin -->\nnone yet\n<!-- bench:end -->"),
            Vec::<String>::new()
        );
    }
}
