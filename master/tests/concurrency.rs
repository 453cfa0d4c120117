#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Many instances of each of our FMUs, stepped from different threads at once, give bit for bit
//! the results of the same instances stepped one after the other.

use fmu_harness::paths;
use master::{Fmu, FmuInstance};
use model_description::{BaseType, Causality};
use std::sync::Arc;

/// (FMU, input, base value, increment per instance)
const CASES: &[(&str, &str, f64, f64)] = &[
    ("oscillator-fd-m2", "F", 0.0, 10.0),
    ("hydraulics-naya", "kappa", 0.4646, 0.001),
    ("hydraulics-lumped3", "U_ref", 0.0, 1.0),
    ("multibody-crane", "F", 8829.0, 50.0),
    ("multibody-rod-p", "p1", 3.3218e6, 1e3),
    ("testing-faulty", "u", 0.0, 0.5),
];
const PER_FMU: usize = 4;
const STEPS: u64 = 200;

fn trajectory(fmu: &Arc<Fmu>, input: &str, value: f64, name: &str) -> Vec<f64> {
    let md = fmu.model_description();
    let outs: Vec<u32> = md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Output && v.kind.base_type() == BaseType::Real)
        .map(|v| v.value_reference)
        .collect();
    let vr = fmu.variable(input).unwrap().value_reference;
    let mut s = fmu.instantiate(name).unwrap();
    s.setup(0.0, None).unwrap();
    s.enter_initialization().unwrap();
    s.exit_initialization().unwrap();
    s.set_real(&[vr], &[value]).unwrap();
    let mut all = Vec::new();
    let mut y = vec![0.0; outs.len()];
    for n in 0..STEPS {
        s.do_step(n as f64 * 1e-3, 1e-3).unwrap();
        s.get_real(&outs, &mut y).unwrap();
        all.extend_from_slice(&y);
    }
    all
}

#[test]
fn instances_on_many_threads_equal_sequential_runs() {
    let fmus: Vec<Arc<Fmu>> = CASES.iter().map(|(f, ..)| Fmu::load(&paths::fmu(f)).unwrap()).collect();
    let jobs: Vec<(usize, usize)> = (0..CASES.len()).flat_map(|c| (0..PER_FMU).map(move |k| (c, k))).collect();
    let run = |(c, k): (usize, usize)| {
        let (_, input, base, inc) = CASES[c];
        trajectory(&fmus[c], input, base + inc * k as f64, &format!("{}-{k}", CASES[c].0))
    };
    let sequential: Vec<Vec<f64>> = jobs.iter().map(|j| run(*j)).collect();
    let parallel: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs.iter().map(|j| scope.spawn(move || run(*j))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (j, (a, b)) in jobs.iter().zip(sequential.iter().zip(&parallel)) {
        assert_eq!(a.len(), b.len());
        let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{} instance {} differs between threaded and sequential runs", CASES[j.0].0, j.1);
    }
    // The instances really differ from each other (the inputs matter).
    assert_ne!(sequential[0], sequential[1]);
}
