#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! A scheme from outside the crate (master/examples/own_scheme.rs, public API only) runs
//! crane-pub3 and gives the built-in Jacobi's results bit for bit.

#[allow(dead_code)]
#[path = "../examples/own_scheme.rs"]
mod own_scheme;

mod support;

#[test]
fn a_scheme_written_outside_the_crate_runs_crane_pub3_like_the_built_in_jacobi() {
    fmu_harness::paths::fmu("hydraulics-lumped3");
    let dir = support::tmp("own-scheme");
    let path = support::scenario("crane-pub3.toml", &dir);
    let scheme = Box::<own_scheme::SequentialJacobi>::default();
    let (times, values, summary) = own_scheme::run(&path, Some(scheme)).unwrap();
    let (built_in_times, built_in, built_in_summary) = own_scheme::run(&path, None).unwrap();
    assert_eq!((summary.algorithm.as_str(), built_in_summary.algorithm.as_str()), ("sequential-jacobi", "jacobi"));
    // Its own counts reach the summary (one pass per step); the built-in Jacobi has none.
    assert_eq!(summary.algorithm_stats.iterations, 20_000);
    assert_eq!(built_in_summary.algorithm_stats, Default::default());
    assert_eq!(times.len(), 20_001, "crane-pub3: 20 s at H = 1 ms");
    assert_eq!(times, built_in_times);
    let bits = |v: &[Vec<f64>]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert!(bits(&values) == bits(&built_in), "the same doubles as the built-in Jacobi");
}
