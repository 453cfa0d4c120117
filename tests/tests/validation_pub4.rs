#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The Publication IV stability table (`validation::pub4`): the largest stable H of a cell is a
//! boundary of the documented criterion — stable there, unstable 1 ms above — recomputed from the
//! packaged FMUs. Cheap cells by default; `PUB4_FULL_SCAN=1` recomputes the whole section and
//! checks every cell and the findings' rows.

use fmu_harness::paths::fmu_dir;
use validation::pub4::{Case, Coupling, Scanner, CASES, COUPLINGS, H_MAX_MS};
use validation::Verdict;

fn check_cell(sc: &mut Scanner, case: Case, coupling: Coupling, strict: bool) -> u32 {
    let (h, first) = sc.largest_stable(case, coupling, strict).unwrap();
    eprintln!(
        "{} {} strict={strict}: H_max = {h} ms ({:?})",
        case.name(),
        coupling.name(),
        first.as_ref().map(|o| &o.why)
    );
    if h > 0 {
        assert!(sc.run(case, coupling, strict, h).unwrap().stable, "{case:?} {coupling:?}: stable at {h} ms");
    }
    if h < H_MAX_MS {
        let above = sc.run(case, coupling, strict, h + 1).unwrap();
        assert!(!above.stable, "{case:?} {coupling:?}: unstable at {} ms", h + 1);
    }
    h
}

#[test]
fn largest_stable_h_is_a_boundary_of_the_criterion() {
    let mut sc = Scanner::new(&fmu_dir()).unwrap();
    // crane-a4 M1 (10 s, naya circuit): both couplings, cavitation law on.
    let f = check_cell(&mut sc, Case::A4M1, Coupling::Force, false);
    let p = check_cell(&mut sc, Case::A4M1, Coupling::Pressure, false);
    assert!(f >= 1 && p >= 1, "stable at 1 ms: force {f}, pressure {p}");
    // crane-pub3 J1: Publication IV's ordering of the couplings holds for the interface model.
    let p = check_cell(&mut sc, Case::Pub3, Coupling::Pressure, false);
    let im = check_cell(&mut sc, Case::Pub3, Coupling::Im, false);
    assert!(im > p, "crane-pub3: IM {im} ms vs pressure {p} ms");
}

#[test]
fn full_scan_rows() {
    if std::env::var_os("PUB4_FULL_SCAN").is_none() {
        eprintln!("set PUB4_FULL_SCAN=1 to recompute the whole Publication IV table");
        return;
    }
    let mut sc = Scanner::new(&fmu_dir()).unwrap();
    for case in CASES {
        for coupling in COUPLINGS {
            for strict in [true, false] {
                check_cell(&mut sc, case, coupling, strict);
            }
        }
    }
    let img = std::env::temp_dir().join(format!("validation-img-pub4-{}", std::process::id()));
    let section = validation::pub4::section(&fmu_dir(), &img).unwrap();
    eprintln!("{}", section.markdown());
    for row in &section.rows {
        assert!(matches!(row.verdict, Verdict::Pass | Verdict::Disputed | Verdict::Info), "{}: {}", row.id, row.ours);
    }
}
