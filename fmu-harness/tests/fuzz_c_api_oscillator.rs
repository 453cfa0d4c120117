#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Random legal and illegal fmi2 call sequences on the four oscillator FMUs (`fmu_oscillator::FMUS`); the harness and
//! its properties are in `fuzz_c_api/mod.rs`. `FUZZ_CASES=N` sets the number of sequences.

mod fuzz_c_api;

use fuzz_c_api::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn random_call_sequences(which in 0..8usize, calls in prop::collection::vec(call(), 1..60)) {
        fuzz_sequence(fmu_oscillator::FMUS, which, &calls);
    }

    #[test]
    fn random_calls_during_a_run(which in 0..8usize, calls in prop::collection::vec(call(), 1..40)) {
        let mut all = running();
        all.extend(calls);
        fuzz_sequence(fmu_oscillator::FMUS, which, &all);
    }
}

#[test]
fn a_reset_instance_runs_as_a_new_one() {
    standard_runs_repeat(fmu_oscillator::FMUS);
}
