#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The validation report's Publication II section (issue 16): Model A′, monolithic semi-recursive,
//! lumped-fluid vs singular-perturbation p3 (in process, a few seconds, and one run of the packaged semirecursive-a FMU). Asserts the rows the
//! report prints, including the two DISPUTED claims.

use fmu_harness::paths;
use validation::Verdict;

#[test]
fn publication_ii_rows() {
    let dir = std::env::temp_dir().join(format!("validation-pub2-{}", std::process::id()));
    // Fails with the command to run when the FMUs are not packaged.
    paths::fmu("semirecursive-a");
    let s = validation::pub2::section(&paths::fmu_dir(), &dir, true).unwrap();
    let verdict = |id: &str| s.row(id).unwrap_or_else(|| panic!("no row {id}\n{}", s.markdown())).verdict;
    for id in [
        "pub2.lf.converges",
        "pub2.sp.converges",
        "pub2.sp.iterations_avg",
        "pub2.s_8ms",
        "pub2.p1_8ms",
        "pub2.energy_8ms",
    ] {
        assert_eq!(verdict(id), Verdict::Pass, "{id}\n{}", s.markdown());
    }
    // Pub II's LF failure above 2 ms is not reproduced; its γ± bias s and p1 instead of correcting them.
    for id in ["pub2.lf.fails", "pub2.s_8ms_gamma", "pub2.p1_8ms_gamma", "pub2.gamma"] {
        assert_eq!(verdict(id), Verdict::Disputed, "{id}\n{}", s.markdown());
    }
    assert!(s.rows.iter().all(|r| r.verdict != Verdict::Fail), "{}", s.markdown());
    assert_eq!(s.plots.len(), 5);
    assert!(s.plots.iter().all(|p| dir.join(p.file_name().unwrap()).exists()));
    let _ = std::fs::remove_dir_all(dir);
}
