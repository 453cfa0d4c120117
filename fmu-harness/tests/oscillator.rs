#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Co-simulation of the packaged double-oscillator FMUs against the analytical solution
//! (seed 001 §A.1): the coupling error dominates and shrinks with the communication step at the
//! order theory gives (1 with held inputs, 2 with linear extrapolation through
//! fmi2SetRealInputDerivatives).

use fmu_harness::oscillator::{run_displacement_displacement, run_force_displacement, Scheme};
use fmu_harness::{paths, Fmu};

fn load(name: &str) -> Fmu {
    Fmu::load(&paths::fmu(name)).unwrap()
}

fn order(e_coarse: f64, e_fine: f64, ratio: f64) -> f64 {
    (e_coarse / e_fine).ln() / ratio.ln()
}

#[test]
fn force_displacement_converges_at_the_expected_order() {
    let (m1, m2) = (load("oscillator-fd-m1"), load("oscillator-fd-m2"));
    for scheme in [Scheme::Jacobi, Scheme::GaussSeidel] {
        for (extrapolation, expected) in [(0, 1.0), (1, 2.0)] {
            let coarse = run_force_displacement(&m1, &m2, 3, 2e-3, 2.0, extrapolation, scheme).unwrap();
            let fine = run_force_displacement(&m1, &m2, 3, 1e-3, 2.0, extrapolation, scheme).unwrap();
            let p = order(coarse.x1.max(coarse.x2), fine.x1.max(fine.x2), 2.0);
            assert!(
                (p - expected).abs() < 0.35,
                "{scheme:?}, extrapolation {extrapolation}: observed order {p:.2} (errors {coarse:?} → {fine:?})"
            );
        }
    }
}

#[test]
fn displacement_displacement_converges_at_the_expected_order() {
    let (m1, m2) = (load("oscillator-dd-m1"), load("oscillator-dd-m2"));
    for (extrapolation, expected) in [(0, 1.0), (1, 2.0)] {
        let coarse = run_displacement_displacement(&m1, &m2, 3, 2e-3, 2.0, extrapolation).unwrap();
        let fine = run_displacement_displacement(&m1, &m2, 3, 1e-3, 2.0, extrapolation).unwrap();
        let p = order(coarse.x1.max(coarse.x2), fine.x1.max(fine.x2), 2.0);
        assert!((p - expected).abs() < 0.35, "extrapolation {extrapolation}: order {p:.2} ({coarse:?} → {fine:?})");
    }
}

#[test]
fn small_steps_approach_the_monolithic_solution() {
    // With H = 0.1 ms and linear extrapolation the co-simulation error is far below the motion
    // amplitude (≈ 3 m): the subsystems integrate accurately and exchange consistently.
    let (m1, m2) = (load("oscillator-fd-m1"), load("oscillator-fd-m2"));
    let e = run_force_displacement(&m1, &m2, 2, 1e-4, 1.0, 1, Scheme::GaussSeidel).unwrap();
    assert!(e.x1 < 1e-4 && e.x2 < 1e-4, "{e:?}");
}
