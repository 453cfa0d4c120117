#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The Publication I and seed 002 rows of `docs/validation.md` (semi-recursive formulations),
//! recomputed: every row must pass (the co-simulation rows use the packaged FMUs, so
//! `cargo xtask fmus` must have run).

use fmu_harness::paths::fmu_dir;
use validation::Section;

fn check(s: &Section) {
    for row in &s.rows {
        println!("{} | {} | {} | {} | {}", row.id, row.paper, row.ours, row.target, row.verdict);
    }
    // The exact verdict of every row: PASS where it has a target, info where it has none.
    assert_eq!(s.not_all_met(), Vec::<String>::new(), "{}", s.markdown());
}

#[test]
fn publication_1_rows_pass() {
    let img = std::env::temp_dir().join(format!("validation-img-sr1-{}", std::process::id()));
    let s = validation::semirecursive::pub1_section(&fmu_dir(), &img, true).unwrap();
    assert_eq!(s.rows.len(), 20);
    check(&s);
    for p in &s.plots {
        assert!(img.join(p.file_name().unwrap()).exists(), "{} not written", p.display());
    }
}

#[test]
fn seed_002_rows_pass() {
    let img = std::env::temp_dir().join(format!("validation-img-sr2-{}", std::process::id()));
    let s = validation::semirecursive::seed002_section(&fmu_dir(), &img, true).unwrap();
    assert_eq!(s.rows.len(), 18);
    check(&s);
}
