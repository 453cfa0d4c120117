//! Report building blocks: a row (paper vs ours vs target), a section (markdown + rows + plots).

use std::fmt::Write as _;
use std::path::PathBuf;

/// The verdict of a row. The rules, written once here and applied by every section (issue 51):
///
/// - a row **without a target** is [`Verdict::Info`] ([`Row::info`]);
/// - a row with a **target of our own** is PASS or FAIL ([`Verdict::of`]), never DISPUTED;
/// - **DISPUTED** only on a row with the paper's number as its target and the paper's own method
///   re-implemented beside ours ([`Row::against_paper`], which names the re-implementation in the
///   row): ours misses the target and so does the paper's method.
///
/// [`Row::rule_violation`] checks a row against these rules; `cargo xtask validate` refuses to
/// write a report that breaks them and the report tests assert them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The target holds.
    Pass,
    /// The target does not hold.
    Fail,
    /// Reported, no target.
    Info,
    /// Our value misses the paper's target, but the paper's own method, re-implemented on the
    /// same models, misses it too: the claim is not reproducible.
    Disputed,
}

impl Verdict {
    /// PASS when `ok`, else FAIL: a target of our own.
    pub fn of(ok: bool) -> Self {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    /// On the paper's target: PASS when ours meets it; DISPUTED when ours misses it and the
    /// paper's method, re-implemented, misses it too; FAIL when only ours misses it.
    pub fn against_paper(ours_meets: bool, papers_method_meets: bool) -> Self {
        match (ours_meets, papers_method_meets) {
            (true, _) => Verdict::Pass,
            (false, false) => Verdict::Disputed,
            (false, true) => Verdict::Fail,
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

/// The paper's own method as re-implemented here, measured against the paper's target beside
/// ours ([`Row::against_paper`]).
#[derive(Clone, Copy, Debug)]
pub struct PapersMethod<'a> {
    /// What was re-implemented and where (shown in the row when it is DISPUTED).
    pub name: &'a str,
    /// Whether it meets the paper's target.
    pub meets: bool,
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
    /// The target it is judged against (empty for an info row).
    pub target: String,
    /// PASS/FAIL/info/DISPUTED, by the rules of [`Verdict`].
    pub verdict: Verdict,
    /// The paper's method re-implemented beside ours, on rows judged against the paper.
    pub papers_method: Option<String>,
}

impl Row {
    /// A row judged against a target of our own (`verdict` from [`Verdict::of`]).
    pub fn new(id: &str, what: &str, paper: &str, ours: String, target: &str, verdict: Verdict) -> Self {
        Row {
            id: id.into(),
            what: what.into(),
            paper: paper.into(),
            ours,
            target: target.into(),
            verdict,
            papers_method: None,
        }
    }

    /// A row without a target: `info`.
    pub fn info(id: &str, what: &str, paper: &str, ours: String) -> Self {
        Row::new(id, what, paper, ours, "", Verdict::Info)
    }

    /// A row judged against the paper's number (`paper`, as the `target`) with the paper's
    /// method re-implemented beside ours: [`Verdict::against_paper`].
    pub fn against_paper(
        id: &str,
        what: &str,
        paper: &str,
        ours: String,
        target: &str,
        ours_meets: bool,
        method: PapersMethod<'_>,
    ) -> Self {
        let mut row = Row::new(id, what, paper, ours, target, Verdict::against_paper(ours_meets, method.meets));
        row.papers_method = Some(method.name.to_owned());
        row
    }

    /// The verdict rule this row breaks, if any (see [`Verdict`]).
    pub fn rule_violation(&self) -> Option<String> {
        let id = &self.id;
        let has_target = !self.target.trim().is_empty();
        match self.verdict {
            Verdict::Info if has_target => Some(format!("{id}: info with a target ({}): PASS or FAIL", self.target)),
            Verdict::Pass | Verdict::Fail if !has_target => Some(format!("{id}: {} without a target", self.verdict)),
            Verdict::Disputed if self.paper.trim().is_empty() => {
                Some(format!("{id}: DISPUTED without the paper's number (a target of our own is PASS or FAIL)"))
            }
            Verdict::Disputed if self.papers_method.as_deref().is_none_or(|m| m.trim().is_empty()) => {
                Some(format!("{id}: DISPUTED without the paper's method re-implemented beside ours"))
            }
            Verdict::Disputed if !has_target => Some(format!("{id}: DISPUTED without a target")),
            _ => None,
        }
    }

    /// The verdict cell: a DISPUTED row names the paper's re-implemented method.
    pub fn verdict_cell(&self) -> String {
        match (&self.verdict, &self.papers_method) {
            (Verdict::Disputed, Some(m)) => format!("DISPUTED (the paper's method re-implemented: {m})"),
            (v, _) => v.to_string(),
        }
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
                cell(&r.verdict_cell())
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

    /// Every verdict rule a row of this section breaks (see [`Verdict`]), and duplicate ids.
    pub fn rule_violations(&self) -> Vec<String> {
        let mut v: Vec<String> = self.rows.iter().filter_map(Row::rule_violation).collect();
        for (i, r) in self.rows.iter().enumerate() {
            if self.rows[..i].iter().any(|q| q.id == r.id) {
                v.push(format!("{}: duplicate row id", r.id));
            }
        }
        v
    }

    /// For a section whose every target is met: each row that is not PASS with a target or
    /// info without one, and every rule violation (empty when the section is as expected).
    pub fn not_all_met(&self) -> Vec<String> {
        let mut v = self.rule_violations();
        for r in &self.rows {
            let expected = if r.target.trim().is_empty() { Verdict::Info } else { Verdict::Pass };
            if r.verdict != expected {
                v.push(format!(
                    "{}: {} — {} (target {}): {}, expected {expected}",
                    r.id, r.what, r.ours, r.target, r.verdict
                ));
            }
        }
        v
    }

    /// The verdict of every row, by id (for tests asserting them all).
    pub fn verdicts(&self) -> Vec<(&str, Verdict)> {
        self.rows.iter().map(|r| (r.id.as_str(), r.verdict)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(paper: &str, target: &str, verdict: Verdict) -> Row {
        Row::new("x", "what", paper, "1".into(), target, verdict)
    }

    #[test]
    fn the_rules() {
        assert_eq!(Verdict::of(true), Verdict::Pass);
        assert_eq!(Verdict::of(false), Verdict::Fail);
        assert_eq!(Verdict::against_paper(true, false), Verdict::Pass);
        assert_eq!(Verdict::against_paper(false, false), Verdict::Disputed);
        assert_eq!(Verdict::against_paper(false, true), Verdict::Fail);
        assert!(row("", "≥ 1", Verdict::Pass).rule_violation().is_none());
        assert!(row("", "", Verdict::Pass).rule_violation().is_some());
        assert!(row("", "≥ 1", Verdict::Info).rule_violation().is_some());
        assert!(Row::info("x", "w", "", "1".into()).rule_violation().is_none());
        // DISPUTED needs the paper's number and its method re-implemented beside ours.
        assert!(row("", "≥ 1.5", Verdict::Disputed).rule_violation().is_some());
        assert!(row("2 ms", "≥ 1.5", Verdict::Disputed).rule_violation().is_some());
        let method = PapersMethod { name: "LF of eq. 7 (validation/src/x.rs)", meets: false };
        let d = Row::against_paper("x", "w", "2 ms", "3 ms".into(), "≤ 2 ms", false, method);
        assert_eq!(d.verdict, Verdict::Disputed);
        assert!(d.rule_violation().is_none());
        assert!(d.verdict_cell().contains("LF of eq. 7"));
        let s = Section { rows: vec![d.clone(), d], ..Default::default() };
        assert_eq!(s.rule_violations(), ["x: duplicate row id"]);
    }
}
