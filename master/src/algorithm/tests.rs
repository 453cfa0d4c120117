//! Each scheme on mock instances built in code: the order of the FMU calls in a step and the
//! input values each instance sees.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::system::{AlgorithmKind, SystemBuilder};
use crate::Execution;
use model_description::ModelDescription;
use std::sync::{Arc, Mutex};

type Mock = crate::fmu::mock::MockInstance;

fn description() -> ModelDescription {
    Mock::description()
}

/// a.y → b.u and b.y → a.u at H = 0.5 s, order-0 extrapolation; a starts at x = 1, b at 10.
fn execution(configure: impl FnOnce(&mut SystemBuilder)) -> (Execution, Arc<Mutex<Vec<String>>>) {
    let mut b = SystemBuilder::new();
    b.stop(2.0).step(0.5);
    b.instance("a", "a.fmu");
    b.instance("b", "b.fmu");
    b.connect("a.y", "b.u");
    b.connect("b.y", "a.u");
    b.outputs(["a.y", "b.y"]);
    configure(&mut b);
    let md = description();
    let sys = b.build(&[&md, &md]).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let instances = vec![Mock::boxed("a", 1.0, &log), Mock::boxed("b", 10.0, &log)];
    (Execution::with_instances(sys, instances, &[&md, &md]).unwrap(), log)
}

/// The calls that end the initialization (the exchange of the start point) and one step's.
fn first_step(run: &mut Execution, log: &Arc<Mutex<Vec<String>>>) -> (Vec<String>, Vec<String>) {
    log.lock().unwrap().clear();
    run.initialize().unwrap();
    let init = std::mem::take(&mut *log.lock().unwrap());
    (init, one_step(run, log))
}

/// The calls made by one step (after initialization): the steps and reads, then the exchange of
/// the point reached (before its row).
fn one_step(run: &mut Execution, log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    run.initialize().unwrap();
    log.lock().unwrap().clear();
    run.step().unwrap();
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn jacobi_sets_every_input_from_t_n_then_steps_every_instance_then_reads() {
    let (mut run, log) = execution(|_| {});
    let (init, step) = first_step(&mut run, &log);
    assert!(init.ends_with(&["a.u = 10", "b.u = 1"].map(String::from)), "inputs from the values at t = 0: {init:?}");
    assert_eq!(
        step,
        ["a.step 0", "b.step 0", "a.get [0]", "b.get [0]", "a.u = 11", "b.u = 6.5"],
        "both steps, both outputs, then the inputs at t = 0.5 from them"
    );
    // x_a(0.5) = 1 + 0.5 (10 + 1), x_b(0.5) = 10 + 0.5 (1 + 1).
    assert_eq!(run.recorded().unwrap(), [6.5, 11.0]);
    let calls = one_step(&mut run, &log);
    assert_eq!(calls[..2], ["a.step 0.5", "b.step 0.5"], "the inputs set at 0.5 s stand");
}

#[test]
fn gauss_seidel_gives_later_instances_the_new_outputs() {
    let (mut run, log) = execution(|b| {
        b.algorithm(AlgorithmKind::GaussSeidel).order(["b", "a"]);
    });
    let (init, step) = first_step(&mut run, &log);
    assert!(init.ends_with(&["a.u = 10", "b.u = 1"].map(String::from)), "{init:?}");
    assert_eq!(
        step,
        ["b.step 0", "b.get [0]", "a.u = 11", "a.u = 11", "a.step 0", "a.get [0]", "a.u = 11", "b.u = 7"],
        "b steps first on a's x(0); a then sees b's x(0.5) = 10 + 0.5·2 (set with the interpolation's \
         value at τ = 0 and its right end, held by an instance that cannot interpolate); then the \
         exchange at 0.5 s"
    );
    assert_eq!(run.recorded().unwrap(), [1.0 + 0.5 * 12.0, 11.0]);
}

#[test]
fn gauss_seidel_order_follows_the_connection_graph_without_cycles() {
    // Only a → b: a has no inputs from unplaced instances, so it goes first.
    let mut b = SystemBuilder::new();
    b.stop(1.0).step(0.5).algorithm(AlgorithmKind::GaussSeidel);
    b.instance("a", "a.fmu");
    b.instance("b", "b.fmu");
    b.connect("b.y", "a.u");
    let md = description();
    let sys = b.build(&[&md, &md]).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let instances = vec![Mock::boxed("a", 1.0, &log), Mock::boxed("b", 10.0, &log)];
    let mut run = Execution::with_instances(sys, instances, &[&md, &md]).unwrap();
    let calls = one_step(&mut run, &log);
    let first_step = calls.iter().find(|c| c.contains("step")).unwrap();
    assert_eq!(first_step, "b.step 0", "{calls:?}");
}

#[test]
fn iterative_jacobi_repeats_the_step_from_saved_states_until_the_links_converge() {
    let (mut run, log) = execution(|b| {
        b.iterations(50).iteration_tolerance(1e-12);
    });
    let (init, calls) = first_step(&mut run, &log);
    assert!(init.ends_with(&["a.u = 10", "b.u = 1"].map(String::from)), "{init:?}");
    assert_eq!(calls[..2], ["a.save", "b.save"]);
    let restores = calls.iter().filter(|c| *c == "a.restore").count();
    let (passes, unconverged) = run.iteration_stats();
    assert_eq!((passes, unconverged), (restores as u64 + 1, 0), "{calls:?}");
    assert!(passes > 2);
    // An instance that cannot interpolate holds an interpolated link at its right end, so the
    // converged step solves x_a = 1 + H (x_b + 1), x_b = 10 + H (x_a + 1) with H = 0.5:
    // x_a = 9, x_b = 15.
    let [xa, xb] = [run.recorded().unwrap()[0], run.recorded().unwrap()[1]];
    assert!((xa - 9.0).abs() < 1e-9 && (xb - 15.0).abs() < 1e-9, "{xa} {xb}");
}
