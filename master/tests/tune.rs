#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim tune` on packaged FMUs: the stopping rule against a brute-force stability sweep of the
//! double oscillator, resuming a killed sweep, the crane's magnitude, and bad input.

use master::tune::runner::Base;
use master::tune::space::{Config, Extrap, TuneSpec};
use master::tune::{tune_file, TuneOptions};
use std::path::{Path, PathBuf};

mod support;
use support::scenario;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cosim-tune-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(out: &Path) -> TuneOptions {
    TuneOptions { out_dir: out.to_path_buf(), ..Default::default() }
}

/// Brute force: the largest H of the tune grid up to which every co-simulation of the free
/// oscillator decays (max |x2| over the last second below that over the first second).
fn brute_force_stable_limit(system: &Path, spec: &TuneSpec) -> f64 {
    let base = Base::load(system, master::host::Host::default()).unwrap();
    let config = Config { extrapolation: Extrap::Order(0), params: vec![] };
    let draft = base.document(spec, &config, true).unwrap();
    let x2 = [base.var("m2.x").unwrap()];
    let mut last_stable = None;
    for h in spec.steps() {
        let steps = master::tune::signals::steps_covering(spec.duration, h);
        let o = base.run(&draft, h, steps, &[], None, Some(&x2)).unwrap();
        let amplitude = |from: f64, to: f64| {
            o.trace
                .iter()
                .enumerate()
                .filter(|(n, _)| (from..to).contains(&(*n as f64 * h)))
                .map(|(_, r)| r[0].abs())
                .fold(0.0, f64::max)
        };
        let decays = o.failure.is_none() && amplitude(spec.duration - 1.0, f64::INFINITY) < amplitude(0.0, 1.0);
        if !decays {
            break;
        }
        last_stable = Some(h);
    }
    last_stable.expect("H_ini is stable")
}

#[test]
fn oscillator_limit_is_found_within_one_increment_of_the_brute_force_limit() {
    let dir = tmp("osc");
    let system = scenario("oscillator-tune.toml", &dir);
    let tuned = tune_file(&system, |_| {}, &opts(&dir.join("out"))).unwrap();
    let spec = &tuned.sweep.spec;
    let h_bf = brute_force_stable_limit(&system, spec);
    let h_tune = tuned.report.paper.as_ref().expect("a recommendation").h;
    // The brute-force sweep of the scenario file's comment: stable up to 75 ms, 80 ms grows.
    assert!((h_bf - 0.075).abs() < 1e-9, "brute-force limit {h_bf}");
    assert!(
        h_tune <= h_bf + 1e-9 && h_bf - h_tune <= spec.h_inc + 1e-9,
        "cosim tune: {h_tune} s, brute force: {h_bf} s, H_inc = {} s",
        spec.h_inc
    );
    // tune.json carries the answer in seconds.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/tune.json")).unwrap()).unwrap();
    assert_eq!(json["recommended"]["H"].as_f64(), Some(h_tune));
    assert_eq!(json["recommended"]["config"].as_str(), Some("m = 0"));
}

#[test]
fn a_killed_sweep_continues_from_its_results_file() {
    let dir = tmp("resume");
    let system = scenario("oscillator-tune.toml", &dir);
    let out = dir.join("out");
    let first = tune_file(&system, |_| {}, &opts(&out)).unwrap();
    assert_eq!(first.sweep.reused, 0);
    // Kill simulation: keep the header, half of the rows and a torn last line.
    let csv = std::fs::read_to_string(out.join("tune.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let keep = 1 + (lines.len() - 1) / 2;
    let mut torn = lines[..keep].join("\n");
    torn += "\n";
    torn += &lines[keep][..lines[keep].len() / 2];
    std::fs::write(out.join("tune.csv"), torn).unwrap();
    let second = tune_file(&system, |_| {}, &opts(&out)).unwrap();
    assert_eq!(second.sweep.reused, keep - 1);
    assert_eq!(second.report.paper.as_ref().unwrap().h, first.report.paper.as_ref().unwrap().h);
    // The resumed file holds every run once, each on its own line.
    let csv = std::fs::read_to_string(out.join("tune.csv")).unwrap();
    let rows = csv.lines().skip(1).filter_map(master::tune::results::parse_row).count();
    assert_eq!(rows, first.sweep.rows.len());
    // Other settings: a fresh file, the old one kept aside.
    let third = tune_file(&system, |s| s.h_max = 0.05, &opts(&out)).unwrap();
    assert_eq!(third.sweep.reused, 0);
    assert!(out.join("tune.csv.old").exists());
}

#[test]
fn crane_step_test_limit_is_of_the_papers_magnitude() {
    // One test, m = 2, both solvers and TR hydraulics: a quick check of the wiring on the real
    // crane (the full reproduction is `cargo xtask tune`).
    let dir = tmp("crane");
    let system = scenario("crane-pub3-tune.toml", &dir);
    let tuned = tune_file(
        &system,
        |s| {
            s.tests = vec![master::tune::signals::TestFn::Step];
            s.extrapolations = vec![Extrap::Order(2)];
            s.params.retain(|(k, _)| k != "hyd.integrator");
        },
        &opts(&dir.join("out")),
    )
    .unwrap();
    let h = tuned.report.paper.as_ref().unwrap().h;
    assert!((1e-3..=10e-3).contains(&h), "step test limit {h} s");
    assert!(tuned.text.contains("| Step | m = 2 |"), "{}", tuned.text);
}

#[test]
fn bad_tune_input_is_reported_with_the_name() {
    let dir = tmp("bad");
    let system = scenario("crane-pub3-tune.toml", &dir);
    let e = tune_file(&system, |s| s.inputs = vec!["hyd.U_reff".into()], &opts(&dir.join("out"))).unwrap_err();
    assert!(e.to_string().contains("has no variable \"U_reff\"; did you mean \"U_ref\"?"), "{e}");
    let e = tune_file(&system, |s| s.inputs = vec!["hyd.s".into()], &opts(&dir.join("out"))).unwrap_err();
    assert!(e.to_string().contains("fed by a connection"), "{e}");
}
