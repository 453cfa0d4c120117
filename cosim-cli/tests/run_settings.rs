#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Settings that act on a run are resolved into the `System`, so every way of making an
//! execution honours them: `Execution::new(system)` of a system with `real_time` is paced (the
//! wall clock cannot run behind the simulated time at factor 1), and of a system with
//! `isolate` runs each instance in a worker process (children of this process).

use master::fmu::FmuCache;
use master::{Execution, SystemBuilder};
use std::path::Path;
use std::time::Instant;

fn system(settings: &str) -> SystemBuilder {
    let fmus = fmu_harness::paths::fmu_dir();
    let text = format!(
        "[simulation]\nstop = 0.3\nstep = 1e-3\n{settings}\n\
         [instances.m1]\nfmu = \"{0}/oscillator-fd-m1.fmu\"\n\
         [instances.m2]\nfmu = \"{0}/oscillator-fd-m2.fmu\"\n\
         [[connections]]\nfrom = \"m2.x\"\nto = \"m1.xi\"\n\
         [[connections]]\nfrom = \"m2.v\"\nto = \"m1.xi_dot\"\n\
         [[connections]]\nfrom = \"m1.F\"\nto = \"m2.F\"\n",
        fmus.display()
    );
    SystemBuilder::parse(Path::new("run-settings.toml"), &text).unwrap()
}

/// The processes whose parent is this process (every thread's children).
fn children() -> usize {
    let mut n = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let text = std::fs::read_to_string(task.unwrap().path().join("children")).unwrap_or_default();
        n += text.split_whitespace().count();
    }
    n
}

#[test]
fn execution_new_paces_a_real_time_system_and_isolates_an_isolated_one() {
    // Real time, factor 1: 0.3 s simulated take at least 0.3 s of wall time (a correctness
    // bound, not a speed test: unpaced this run takes a few milliseconds).
    let mut fmus = FmuCache::default();
    let sys = system("real_time = 1.0").load(&mut fmus).unwrap();
    assert_eq!(sys.real_time().map(|r| r.factor), Some(1.0));
    let mut run = Execution::new(sys, &fmus).unwrap();
    let t0 = Instant::now();
    run.run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let summary = run.finish().unwrap();
    assert!(wall >= 0.3 * (1.0 - 1e-3), "a paced run of 0.3 s took {wall} s of wall time");
    assert!(summary.real_time.is_some(), "the summary reports the pacing");

    // Isolated: one worker process per instance, started by Execution::new, gone at the end.
    std::env::set_var("COSIM_WORKER_EXE", env!("CARGO_BIN_EXE_cosim"));
    let mut fmus = FmuCache::default();
    let sys = system("isolate = true").load(&mut fmus).unwrap();
    assert!(sys.isolate() && sys.real_time().is_none());
    let before = children();
    let mut run = Execution::new(sys, &fmus).unwrap();
    assert_eq!(children(), before + 2, "one worker process per instance");
    run.run().unwrap();
    let isolated = run.finish().unwrap();
    // The same numbers in process (isolation moves the FMU, not the arithmetic).
    let sys = system("").load(&mut fmus).unwrap();
    let mut run = Execution::new(sys, &fmus).unwrap();
    run.run().unwrap();
    let in_process = run.finish().unwrap();
    assert_eq!(isolated.steps, in_process.steps);
    assert_eq!(isolated.status, in_process.status);
}
