#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The validation report's "Energy-based coupling control" section (issues 18, 37) in its quick
//! form: both energy correction laws on the A.1 oscillator (orders 0–2, H = 1 and 2 ms) with the
//! true energy from the states, ECCO on crane-pub3 J1, the cranes' largest stable H and accuracy
//! per law, determinism: the exact verdict of every row. The full sweep is `cargo xtask validate`.

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
    assert_eq!(s.rule_violations(), Vec::<String>::new(), "{show}");
    // The exact verdict of every row, in the report's order.
    // Energy correction, law `input`: a smaller error and a smaller true energy error (from the
    // states) than without at orders 0–2, at every H of the sweep; the order-0 residual the
    // correction uses matches the true energy change. ECCO on J1: at most half the steps of
    // H = 1 ms at equal or better accuracy; H shrinks at the valve switches and grows in steady
    // motion. The cranes' largest stable H: our target (1.5× the uncorrected H) is missed on both
    // (crane-a4: the input law narrows the range, 10 ms against 25 ms; crane-pub3: 2.5 ms against
    // 2 ms), FAIL, while the quick grids reach 1.5× the uncorrected limit (40 ms, 3.2 ms), so a
    // law that met it would PASS. Accuracy at the crane's usual H: the input law is better.
    let expected = [
        ("energy.osc.m0.error", Verdict::Pass),
        ("energy.osc.m0.true_energy", Verdict::Pass),
        ("energy.osc.m1.error", Verdict::Pass),
        ("energy.osc.m1.true_energy", Verdict::Pass),
        ("energy.osc.m2.error", Verdict::Pass),
        ("energy.osc.m2.true_energy", Verdict::Pass),
        ("energy.osc.m1.sweep", Verdict::Pass),
        ("energy.osc.m0.residual", Verdict::Pass),
        ("energy.ecco.steps", Verdict::Pass),
        ("energy.ecco.accuracy", Verdict::Pass),
        ("energy.ecco.shrinks", Verdict::Pass),
        ("energy.ecco.dampers", Verdict::Pass),
        ("energy.stable.crane-a4", Verdict::Fail),
        ("energy.accuracy.crane-a4", Verdict::Pass),
        ("energy.true.crane-a4", Verdict::Info),
        ("energy.stable.crane-pub3", Verdict::Fail),
        ("energy.accuracy.crane-pub3", Verdict::Pass),
        ("energy.true.crane-pub3", Verdict::Info),
        ("energy.determinism.twice", Verdict::Pass),
        ("energy.determinism.threads", Verdict::Pass),
    ];
    assert_eq!(s.verdicts(), expected, "{show}");
    // The stability rows' numbers (the full report's, on the quick grids).
    assert_eq!(row("energy.stable.crane-a4").ours, "10 ms / 25 ms (25 ms): ratio 0.40", "{show}");
    assert_eq!(row("energy.stable.crane-pub3").ours, "2.5 ms / 2 ms (1 ms): ratio 1.25", "{show}");
    // The cranes' true energy against the unified reference (mechanical + the fluid's stored
    // energy) is measured for every law: finite numbers, no run failed at the accuracy H.
    for id in ["energy.true.crane-a4", "energy.true.crane-pub3"] {
        let ours = &row(id).ours;
        assert!(ours.matches(" J").count() == 3 && !ours.contains("inf") && !ours.contains("NaN"), "{id}: {ours}");
    }
    assert!(s.plots.iter().all(|p| dir.join(p.file_name().unwrap()).exists()));
    let _ = std::fs::remove_dir_all(dir);
}
