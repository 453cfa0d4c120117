#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Random legal and illegal fmi2 call sequences on the two hydraulic circuit FMUs (`fmu_hydraulics::FMUS`); the harness and
//! its properties are in `fuzz_c_api/mod.rs`. `FUZZ_CASES=N` sets the number of sequences.

mod fuzz_c_api;

use fuzz_c_api::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn random_call_sequences(which in 0..8usize, calls in prop::collection::vec(call(), 1..60)) {
        fuzz_sequence(fmu_hydraulics::FMUS, which, &calls);
    }

    #[test]
    fn random_calls_during_a_run(which in 0..8usize, calls in prop::collection::vec(call(), 1..40)) {
        let mut all = running();
        all.extend(calls);
        fuzz_sequence(fmu_hydraulics::FMUS, which, &all);
    }
}

#[test]
fn a_reset_instance_runs_as_a_new_one() {
    standard_runs_repeat(fmu_hydraulics::FMUS);
}

/// Regression (found by this fuzzer): lumped3 with A_t = 2 m², p_P = 1e300 Pa, B_h = 1e-3 Pa hung
/// in the stiffness estimate, nalgebra's Schur decomposition without an iteration cap looping on
/// NaN. The Schur estimate gives up after a bounded number of iterations (λmax = ∞); lumped3's
/// `lambda_max` is now the closed form of its block-triangular Jacobian, which stays exact here:
/// the huge valve entry ∂ṗ3/∂U is off the diagonal blocks, and λmax is the spool's 1/τ.
#[test]
fn regression_huge_parameters_do_not_hang_the_stiffness_estimate() {
    use fmu_export::{Logger, Status};
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let fmu = fmu_hydraulics::FMUS.iter().find(|f| f.info().fmu_name == "hydraulics-lumped3").unwrap();
        let md = &fmu.description().unwrap().model;
        let vr = |n: &str| md.variable(n).unwrap().value_reference;
        let mut i = fmu.instantiate("", Logger::new(None, "regression", false)).unwrap();
        assert_eq!(i.set_real(&[vr("A_t"), vr("p_P"), vr("B_h")], &[2.0, 1e300, 1e-3]), Status::Ok);
        assert_eq!(i.enter_initialization_mode(), Status::Ok);
        let exit = i.exit_initialization_mode();
        let mut lambda = [0.0];
        let get = i.get_real(&[vr("lambda_max")], &mut lambda);
        let _ = done.send((exit, get, lambda[0]));
    });
    let (exit, get, lambda) = finished.recv_timeout(std::time::Duration::from_secs(30)).expect("hangs");
    assert_eq!((exit, get), (Status::Ok, Status::Ok));
    // 1/τ = 2π·35 Hz, the spool eigenvalue (the pressure modes are slow with B_h = 1e-3 Pa).
    assert!((lambda - 2.0 * std::f64::consts::PI * 35.0).abs() < 1e-9, "lambda_max = {lambda}");
}
