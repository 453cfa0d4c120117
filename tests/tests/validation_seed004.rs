#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The seed 004 and crane rows of `docs/validation.md`, recomputed from the packaged FMUs: every
//! row that passes in the report must pass here, so a regression fails CI. The one DISPUTED row
//! (the multi-rate co-simulation against the unified solution: 0.13 mm against the paper's
//! 0.1 mm, while the paper's own scheme re-implemented gives 0.16 mm) is also held to its value.

use fmu_harness::paths::fmu_dir;
use validation::{Section, Verdict};

/// Rows that fail against the paper's target, with the bound our current value must keep.
const KNOWN: [(&str, f64); 1] = [("naya.multirate", 0.14)];

fn check(section: &Section) {
    for row in &section.rows {
        if let Some((_, bound)) = KNOWN.iter().find(|(id, _)| *id == row.id) {
            let mm: f64 = row.ours.split_whitespace().next().unwrap().parse().unwrap();
            assert!(mm <= *bound, "{}: {} (regressed beyond {bound} mm)", row.id, row.ours);
            continue;
        }
        assert!(
            matches!(row.verdict, Verdict::Pass | Verdict::Info),
            "{}: {} — {} (target {})",
            row.id,
            row.what,
            row.ours,
            row.target
        );
    }
}

#[test]
fn seed_004_rows_pass() {
    let img = std::env::temp_dir().join(format!("validation-img-{}", std::process::id()));
    let s = validation::naya::section(&fmu_dir(), &img).unwrap();
    assert!(s.rows.len() >= 9, "{} rows", s.rows.len());
    check(&s);
    for p in &s.plots {
        assert!(img.join(p.file_name().unwrap()).exists(), "{} not written", p.display());
    }
}

#[test]
fn crane_rows_pass() {
    let img = std::env::temp_dir().join(format!("validation-img-crane-{}", std::process::id()));
    let s = validation::crane::section(&fmu_dir(), &img, true).unwrap();
    assert_eq!(s.rows.len(), 3);
    check(&s);
}
