#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The Publication IV table (`validation::pub4`): each limit of a cell is a boundary of its
//! documented criterion — met there, missed 1 ms above — recomputed from the packaged FMUs, and
//! the papers' finding (pressure coupling allows a larger H than force coupling in their explicit
//! Jacobi) holds where it is cheap to check, and the findings' verdicts from the committed table
//! of limits. The whole section (every cell, every verdict) is recomputed by `cargo xtask
//! validate --check`, which CI runs and which fails when it differs from docs/validation.md (the
//! env-gated full scan this file had, which CI never ran, is gone).

use fmu_harness::paths::fmu_dir;
use std::collections::HashMap;
use validation::pub4::{findings, Case, Coupling, Limits, Scanner, Setting, H_MAX_MS, SETTINGS};
use validation::Verdict;

/// Both limits of a cell, each checked against the runs at it and 1 ms above.
fn check_cell(sc: &mut Scanner, case: Case, coupling: Coupling, setting: Setting) -> (u32, u32) {
    let l = sc.limits(case, coupling, setting).unwrap();
    eprintln!(
        "{} {} {}: stable {} ms ({:?}), accurate {} ms",
        case.name(),
        coupling.name(),
        setting.name(),
        l.stable,
        l.above_stable.as_ref().map(|o| o.describe()),
        l.accurate
    );
    let run = |sc: &mut Scanner, h| sc.run(case, coupling, setting, false, h).unwrap();
    assert!(l.accurate <= l.stable);
    if l.stable > 0 {
        assert!(run(sc, l.stable).stable(), "{case:?} {coupling:?} {setting:?}: stable at {} ms", l.stable);
    }
    if l.stable < H_MAX_MS {
        assert!(!run(sc, l.stable + 1).stable(), "{case:?} {coupling:?} {setting:?}: unstable 1 ms above");
    }
    if l.accurate > 0 {
        assert!(run(sc, l.accurate).accurate());
    }
    if l.accurate < H_MAX_MS {
        assert!(!run(sc, l.accurate + 1).accurate());
    }
    (l.stable, l.accurate)
}

#[test]
fn pressure_coupling_tolerates_a_larger_h_in_the_papers_explicit_jacobi() {
    let mut sc = Scanner::new(&fmu_dir()).unwrap();
    // The J1 cranes: small limits, so both cells are cheap.
    for case in [Case::Pub3, Case::Pub3Double] {
        let (force, _) = check_cell(&mut sc, case, Coupling::Force, Setting::Papers);
        let (pressure, _) = check_cell(&mut sc, case, Coupling::Pressure, Setting::Papers);
        assert!(force >= 1 && pressure > force, "{}: pressure {pressure} ms vs force {force} ms", case.name());
    }
    // crane-a4 M1: force coupling's limit, and pressure coupling stable (and accurate) 1 ms above
    // it, where force coupling is not.
    let (force, _) = check_cell(&mut sc, Case::A4M1, Coupling::Force, Setting::Papers);
    assert!((1..H_MAX_MS).contains(&force));
    let pressure = sc.run(Case::A4M1, Coupling::Pressure, Setting::Papers, false, force + 1).unwrap();
    assert!(pressure.accurate(), "crane-a4 M1 pressure at {} ms: {}", force + 1, pressure.describe());
    // Without feedthrough the two settings are the same run.
    let ours = sc.run(Case::A4M1, Coupling::Pressure, Setting::Ours, false, force + 1).unwrap();
    assert_eq!(ours.errors, pressure.errors);
}

/// The findings' verdicts from a table of limits: `(pressure, force, IM)` stable and accurate
/// limits of each benchmark in the papers' setting (ours: the same but force's stable limit).
fn table(cells: [(Case, [(u32, u32); 3]); 4]) -> HashMap<(Case, Coupling, Setting), Limits> {
    let mut t = HashMap::new();
    for (case, limits) in cells {
        for (coupling, (stable, accurate)) in
            [Coupling::Pressure, Coupling::Force, Coupling::Im].into_iter().zip(limits)
        {
            for setting in SETTINGS {
                let l = Limits { stable, accurate, above_stable: None, above_accurate: None };
                t.insert((case, coupling, setting), l);
            }
        }
    }
    t
}

/// The committed report's table (docs/validation.md, papers' setting): (pressure, force, IM).
const REPORTED: [(Case, [(u32, u32); 3]); 4] = [
    (Case::A4M1, [(41, 41), (15, 14), (43, 43)]),
    (Case::A4M2, [(56, 56), (18, 18), (57, 57)]),
    (Case::Pub3, [(3, 2), (2, 2), (22, 7)]),
    (Case::Pub3Double, [(2, 1), (1, 1), (23, 6)]),
];

fn verdicts(rows: &[validation::Row]) -> Vec<(&str, Verdict)> {
    rows.iter().map(|r| (r.id.as_str(), r.verdict)).collect()
}

#[test]
fn findings_give_pass_or_fail_under_both_stability_bounds() {
    let rows = findings(&table(REPORTED));
    for r in &rows {
        assert_eq!(r.rule_violation(), None);
    }
    // Within 100 mm pressure coupling's H is larger on every J1 crane; within 10 mm it is not on
    // crane2-pub3 (1 vs 1 ms): the papers' finding holds under the loose bound only.
    assert_eq!(
        verdicts(&rows),
        [
            ("pub4.pressure_vs_force", Verdict::Pass),
            ("pub4.pressure_vs_force.10mm", Verdict::Fail),
            ("pub4.pressure_vs_force.ours", Verdict::Info),
            ("pub4.im", Verdict::Pass),
            ("pub4.im.10mm", Verdict::Pass),
        ]
    );
    // A regression of our pressure coupling (its limits down to force coupling's) is FAIL, not
    // DISPUTED: the target is the papers' claim, and no second method disputes it.
    let mut regressed = REPORTED;
    for (_, cells) in &mut regressed {
        cells[0] = cells[1];
    }
    let rows = findings(&table(regressed));
    assert_eq!(rows[0].verdict, Verdict::Fail);
    assert_eq!(rows[1].verdict, Verdict::Fail);
}
