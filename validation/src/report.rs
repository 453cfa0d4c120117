//! Report building blocks: a row (paper vs ours vs target), a section (markdown + rows + plots).

use std::fmt::Write as _;
use std::path::PathBuf;

/// PASS/FAIL against a target, or INFO for a measured row without a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The target holds.
    Pass,
    /// The target does not hold.
    Fail,
    /// Reported, no target.
    Info,
    /// Our value misses the paper's target, but the paper's own method, re-implemented on the
    /// same models, misses it too, by at least as much: the claim is not reproducible.
    Disputed,
}

impl Verdict {
    /// PASS when `ok`, else FAIL.
    pub fn of(ok: bool) -> Self {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Info => "info",
            Verdict::Disputed => "DISPUTED",
        })
    }
}

/// One checked quantity: what, the paper's number, ours, the target, the verdict.
#[derive(Clone, Debug)]
pub struct Row {
    /// Stable identifier used by the tests (e.g. `naya.unified.energy`).
    pub id: String,
    /// What is measured, in words.
    pub what: String,
    /// The paper's number or claim (empty when the paper has none).
    pub paper: String,
    /// Our measured value, formatted.
    pub ours: String,
    /// The target it is judged against.
    pub target: String,
    /// PASS/FAIL/info.
    pub verdict: Verdict,
}

impl Row {
    /// A row.
    pub fn new(id: &str, what: &str, paper: &str, ours: String, target: &str, verdict: Verdict) -> Self {
        Row { id: id.into(), what: what.into(), paper: paper.into(), ours, target: target.into(), verdict }
    }
}

/// A report section: a title, free markdown (tables, text), checked rows and plot files.
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Section heading.
    pub title: String,
    /// Markdown printed before the rows table (method, measured tables).
    pub body: String,
    /// Checked rows.
    pub rows: Vec<Row>,
    /// PNG plots (paths relative to `docs/`).
    pub plots: Vec<PathBuf>,
}

impl Section {
    /// The rows as a markdown table.
    pub fn rows_table(&self) -> String {
        let mut s = String::from("| check | paper | ours | target | verdict |\n|---|---|---|---|---|\n");
        for r in &self.rows {
            let cell = |x: &str| x.replace('|', "\\|");
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                cell(&r.what),
                cell(&r.paper),
                cell(&r.ours),
                cell(&r.target),
                r.verdict
            );
        }
        s
    }

    /// The whole section as markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("## {}\n\n{}\n", self.title, self.body.trim_end());
        if !self.rows.is_empty() {
            s.push('\n');
            s.push_str(&self.rows_table());
        }
        for p in &self.plots {
            let name = p.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let _ = write!(s, "\n![{name}]({})\n", p.display());
        }
        s
    }

    /// The row with this id.
    pub fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.id == id)
    }
}
