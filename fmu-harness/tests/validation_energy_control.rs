#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The validation report's "Energy-based coupling control" section (issues 18, 37) in its quick
//! form: both energy correction laws on the A.1 oscillator (orders 0–2, H = 1 and 2 ms) with the
//! true energy from the states, ECCO on crane-pub3 J1, the cranes' largest stable H and accuracy
//! per law, determinism. The full sweep is
//! `cargo xtask validate`.

use fmu_harness::paths;
use validation::Verdict;

#[test]
fn energy_based_coupling_control_rows() {
    paths::fmu("oscillator-fd-m1");
    paths::fmu("hydraulics-lumped3");
    paths::fmu("unified-crane-a4");
    let dir = std::env::temp_dir().join(format!("validation-energy-{}", std::process::id()));
    let s = validation::energy_control::section(&paths::fmu_dir(), &dir, true).unwrap();
    let row = |id: &str| s.row(id).unwrap_or_else(|| panic!("no row {id}:\n{}", s.markdown()));
    let show = s.markdown();
    println!("{show}");
    // Energy correction, law `input`: a smaller error and a smaller true energy error (from the
    // states) than without at orders 0–2, at every H of the sweep; the order-0 residual the
    // correction uses matches the true energy change.
    for m in [0, 1, 2] {
        for q in ["error", "true_energy"] {
            assert_eq!(row(&format!("energy.osc.m{m}.{q}")).verdict, Verdict::Pass, "m{m}.{q}\n{show}");
        }
    }
    assert_eq!(row("energy.osc.m1.sweep").verdict, Verdict::Pass, "{show}");
    assert_eq!(row("energy.osc.m0.residual").verdict, Verdict::Pass, "{show}");
    // ECCO on J1: at most half the steps of H = 1 ms at equal or better accuracy; H shrinks at
    // the valve switches and grows in steady motion.
    for id in ["energy.ecco.steps", "energy.ecco.accuracy", "energy.ecco.shrinks", "energy.ecco.dampers"] {
        assert_eq!(row(id).verdict, Verdict::Pass, "{id}\n{show}");
    }
    for id in ["energy.stable.crane-a4", "energy.stable.crane-pub3"] {
        assert_ne!(row(id).verdict, Verdict::Fail, "{id}\n{show}");
    }
    for id in ["energy.accuracy.crane-a4", "energy.accuracy.crane-pub3"] {
        assert_eq!(row(id).verdict, Verdict::Pass, "{id}\n{show}");
    }
    // The cranes' true energy against the unified reference (mechanical + the fluid's stored
    // energy) is measured for every law: finite numbers, no run failed at the accuracy H.
    for id in ["energy.true.crane-a4", "energy.true.crane-pub3"] {
        let ours = &row(id).ours;
        assert!(ours.matches(" J").count() == 3 && !ours.contains("inf") && !ours.contains("NaN"), "{id}: {ours}");
    }
    assert!(s.rows.iter().all(|r| r.verdict != Verdict::Fail), "{show}");
    for id in ["energy.determinism.twice", "energy.determinism.threads"] {
        assert_eq!(row(id).verdict, Verdict::Pass, "{id}\n{show}");
    }
    assert!(s.plots.iter().all(|p| dir.join(p.file_name().unwrap()).exists()));
    let _ = std::fs::remove_dir_all(dir);
}
