#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim bench --precision` (work–precision): its errors against an independent comparison of
//! two recorded runs, convergence in H, the Pareto front, and bad grids.

use cosim_cli::precision::{self, Dimension, Spec};
use master::fmu::FmuCache;
use master::observer::SharedRecorder;
use master::system::{Overrides, Settings, SystemBuilder};
use master::Execution;
use std::path::Path;

mod support;
use support::{cosim, scenario, tmp};

/// (times, values of the one recorded variable) of a run.
fn recorded(b: &SystemBuilder, over: &Overrides, var: &str) -> (Vec<f64>, Vec<f64>) {
    let mut b = b.clone();
    b.outputs([var]);
    let mut fmus = FmuCache::default();
    let mut run = Execution::from_builder(&b, over, &mut fmus).unwrap();
    let rec = SharedRecorder::default();
    run.observe(Box::new(rec.clone()));
    run.run().unwrap();
    run.finish().unwrap();
    let r = rec.lock().unwrap();
    (r.times.clone(), r.values.iter().map(|v| v[0]).collect())
}

fn spec(grid: &[&str]) -> Spec {
    Spec {
        grids: vec![grid.iter().map(|g| Dimension::parse(g).unwrap()).collect()],
        compare: vec![("mech.s".into(), "unified.s".into())],
        repeat: 1,
    }
}

#[test]
fn errors_are_those_of_the_two_recorded_runs_and_shrink_with_h() {
    let dir = tmp("precision");
    let sys = scenario("crane-pub3.toml", &dir);
    let reference = scenario("crane-pub3-unified.toml", &dir);
    let points =
        precision::measure(&sys, &reference, &spec(&["step=1e-3,2e-3,5e-3", "extrapolation=1", "hyd.h=5e-4"]), |_| {})
            .unwrap();
    assert_eq!(points.len(), 3);
    // Independently: both runs recorded, compared where their time points coincide.
    let (rt, rs) = recorded(&SystemBuilder::read(&reference).unwrap(), &Overrides::default(), "unified.s");
    let mut b = SystemBuilder::read(&sys).unwrap();
    b.instance_mut("hyd").unwrap().start("h", 5e-4);
    let over = Overrides {
        settings: Settings { step: Some(2e-3), ..Default::default() },
        extrapolation: Some(1),
        ..Default::default()
    };
    let (t, s) = recorded(&b, &over, "mech.s");
    let mut max = 0.0_f64;
    let mut common = 0;
    for (ti, si) in t.iter().zip(&s) {
        if let Some(k) = rt.iter().position(|r| (r - ti).abs() <= 1e-12) {
            max = max.max((si - rs[k]).abs());
            common += 1;
        }
    }
    assert_eq!(common, t.len(), "every 2 ms point is a 1 ms reference point");
    let p = &points[1];
    assert!(p.ok(), "{:?}", p.failure);
    assert_eq!(p.errors[0], max, "{}", p.label());
    assert_eq!(p.steps, 10_000);
    assert!((p.simulated - 20.0).abs() < 1e-12);
    // First-order extrapolation: the error grows with H (≈ H² for Lagrange order 1).
    assert!(points[0].errors[0] < points[1].errors[0] && points[1].errors[0] < points[2].errors[0], "{points:?}");
    assert!(points[0].errors[0] < 1e-5, "H = 1 ms, order 1 stays within 0.01 mm: {}", points[0].errors[0]);
    // The front: sorted by wall time, each point more accurate than every faster one.
    let front = precision::front(&points, 0);
    assert!(!front.is_empty());
    for w in front.windows(2) {
        assert!(points[w[0]].seconds <= points[w[1]].seconds);
        assert!(points[w[0]].errors[0] > points[w[1]].errors[0]);
    }
    let most_accurate = (0..3).min_by(|&a, &b| points[a].errors[0].total_cmp(&points[b].errors[0])).unwrap();
    assert_eq!(front.last(), Some(&most_accurate));
}

#[test]
fn a_failing_configuration_is_a_row_not_an_error() {
    let dir = tmp("precision-fail");
    let sys = scenario("crane-pub3.toml", &dir);
    let reference = scenario("crane-pub3-unified.toml", &dir);
    // Held inputs at H = 5 ms: the hydraulics stop with a negative pressure (docs/validation.md).
    // H = 3 ms does not divide the 20 s run: that configuration cannot be built, a row too.
    let points = precision::measure(&sys, &reference, &spec(&["step=5e-3,3e-3", "extrapolation=0,1"]), |_| {}).unwrap();
    assert_eq!(points.len(), 4);
    let failed: Vec<_> = points[..2].iter().filter(|p| !p.ok()).collect();
    for p in &failed {
        assert!(p.failure.as_deref().unwrap_or("").contains("hyd"), "{:?}", p.failure);
    }
    for p in &points[2..] {
        assert!(!p.ok() && p.failure.as_deref().unwrap_or("").contains("whole number"), "{:?}", p.failure);
    }
    assert!(precision::front(&points, 0).iter().all(|&i| points[i].ok()));
}

fn stderr(args: &[&str]) -> String {
    let out = cosim(args);
    // 1: cosim's own errors; 2: clap's usage errors.
    assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_grids_and_comparisons_are_named() {
    let dir = tmp("precision-bad");
    let sys = scenario("crane-pub3.toml", &dir);
    let reference = scenario("crane-pub3-unified.toml", &dir);
    let (s, r) = (sys.to_str().unwrap(), reference.to_str().unwrap());
    let base = ["bench", "--precision", s, "--reference", r];
    let e = stderr(&[&base[..], &["--grid", "step=0"]].concat());
    assert!(e.contains("step: 0 is not a positive number"), "{e}");
    let e = stderr(&[&base[..], &["--grid", "ctrl.gain=1", "--compare", "mech.s=unified.s"]].concat());
    assert!(e.contains("ctrl.gain") && e.contains("no instance \"ctrl\""), "{e}");
    let e = stderr(&[&base[..], &["--grid", "step=1e-3", "--compare", "mech.nope=unified.s"]].concat());
    assert!(e.contains("has no variable \"nope\""), "{e}");
    let e = stderr(&[&base[..], &["--grid", "mecj.m=1", "--compare", "mech.s=unified.s"]].concat());
    assert!(e.contains("no instance \"mecj\" in this system; did you mean \"mech\"?"), "{e}");
    let e = stderr(&["bench", "--precision", s]);
    assert!(e.contains("--reference"), "{e}");
    assert!(!Path::new(&dir.join("precision.csv")).exists());
}

#[test]
fn settings_other_systems_and_multirate_are_grid_dimensions() {
    let dir = tmp("precision-kinds");
    let sys = scenario("crane-pub3.toml", &dir);
    let pressure = scenario("crane-pub3-pressure.toml", &dir);
    let reference = scenario("crane-pub3-unified.toml", &dir);
    let file = dir.join("grid.toml");
    std::fs::write(
        &file,
        format!(
            "[[grid]]\nstep = 2e-3\n\n[[grid]]\nstep = 2e-3\nstep_control = \"ecco\"\n\"ecco.rtol\" = [1e-3]\n\n\
             [[grid]]\nstep = 4e-3\n\"instances.mech.step\" = 2e-3\n\n[[grid]]\nstep = 2e-3\nsystem = [{:?}]\n",
            pressure.to_str().unwrap()
        ),
    )
    .unwrap();
    let grids = precision::grids_from_toml(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let spec = Spec { grids, compare: vec![("mech.s".into(), "unified.s".into())], repeat: 1 };
    let points = precision::measure(&sys, &reference, &spec, |_| {}).unwrap();
    assert_eq!(points.len(), 4);
    for p in &points {
        assert!(p.ok(), "{}: {:?}", p.label(), p.failure);
        assert!(p.errors[0] < 1e-2, "{}: {}", p.label(), p.errors[0]);
    }
    // Fixed H = 2 ms: 10 000 steps; ECCO chooses its own steps; the other system is another run.
    assert_eq!(points[0].steps, 10_000);
    assert_ne!(points[1].steps, 10_000, "ECCO varies H");
    assert_ne!(points[1].errors[0], points[0].errors[0]);
    assert_eq!(points[2].steps, 5_000);
    assert_ne!(points[3].errors[0], points[0].errors[0], "pressure coupling is another co-simulation");
    // A bad key in a grid file is named with the file.
    std::fs::write(&file, "[[grid]]\n\"ecco.rtl\" = [1e-3]\n").unwrap();
    let (s, r) = (sys.to_str().unwrap(), reference.to_str().unwrap());
    let e = stderr(&["bench", "--precision", s, "--reference", r, "--grid-file", file.to_str().unwrap()]);
    assert!(e.contains("grid.toml") && e.contains("ecco.rtl"), "{e}");
}

/// `cosim bench`'s report of one scenario: (steps measured, simulated span) from its "N
/// instances, H = …, N steps (T s simulated)" line, and the µs/step of its `--isolate` row.
/// Panics (with the report) where a row has no figure.
fn bench_figures(text: &str) -> (u64, f64, f64) {
    assert!(!text.contains("failed"), "every row has a figure:\n{text}");
    let line = text.lines().find(|l| l.starts_with("2 instances, H = ")).unwrap();
    let rest = line.split(" s, ").nth(1).unwrap();
    let n: u64 = rest.split(' ').next().unwrap().parse().unwrap();
    let span: f64 = rest.split('(').nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let isolated = text.lines().find(|l| l.starts_with("| instances in worker processes (`--isolate`) | ")).unwrap();
    let us: f64 = isolated.split(" | ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(us > 0.0, "{isolated}");
    assert!(text.lines().any(|l| l.starts_with("| worker processes stepped one after the other")), "{text}");
    (n, span, us)
}

/// Issue 35: the overhead bench on a step-controlled (ECCO) scenario measures the steps ECCO
/// takes up to the stop. It counted H0 steps before and stepped past the stop, and the FMU
/// refused ("goes beyond stopTime"). The warm-up is a tenth of `--steps` × H0 of simulated time,
/// ended there, and the measured steps go on to (warm-up + `--steps`) × H0: the steps of a run
/// stepped to those two times, here through the library.
#[test]
fn the_overhead_bench_measures_a_step_controlled_run_up_to_its_stop() {
    let dir = tmp("bench-ecco");
    let sys = scenario("crane-pub3-fast.toml", &dir);
    let s = sys.to_str().unwrap();
    let out = cosim(&["bench", s, "--no-peers", "--repeat", "1", "--steps", "400"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}{text}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("2 instances, H = 0.001 s, "), "the scenario's H0 is 1 ms: {text}");
    let (n, span, _) = bench_figures(&text);
    let (warm_end, stop) = (40.0 * 0.001, 440.0 * 0.001);
    // ECCO's steps grow from H0 up to h_max: fewer than 400 over 400 × H0.
    assert!(n < 400, "{text}");
    let over = Overrides { settings: Settings { stop: Some(stop), ..Default::default() }, ..Default::default() };
    let mut fmus = FmuCache::default();
    let mut run = Execution::from_builder(&SystemBuilder::read(&sys).unwrap(), &over, &mut fmus).unwrap();
    run.run_until(warm_end).unwrap();
    let (warm_steps, t_warm) = (run.steps(), run.time());
    run.run_until(stop).unwrap();
    assert_eq!(n, run.steps() - warm_steps, "{text}");
    assert!((t_warm - warm_end).abs() < 1e-12 && (run.time() - stop).abs() < 1e-12);
    assert!((span - (stop - warm_end)).abs() < 1e-9, "{text}");
}

/// Issue 35: every row of the overhead bench has a figure on a step-controlled scenario, whatever
/// its step count. The `--isolate` rows warmed up for as many H0 steps as they measured; ECCO's
/// larger steps reached the stop in the warm-up ("failed: the run reached its stop time in the
/// warm-up") — on crane-pub3-fast with its own step count (20 s / H0 = 20,000, ECCO takes 5,207),
/// here on its first second (1,000 / ~250). Also ECCO without an upper bound on H, few steps.
#[test]
fn every_row_of_the_overhead_bench_has_a_figure_with_step_control() {
    let dir = tmp("bench-ecco-rows");
    let sys = scenario("crane-pub3-fast.toml", &dir);
    let text = std::fs::read_to_string(&sys).unwrap();
    let short = dir.join("short.toml");
    assert!(text.contains("stop = 20.0\n"));
    std::fs::write(&short, text.replace("stop = 20.0\n", "stop = 1.0\n")).unwrap();
    let unbounded = dir.join("unbounded.toml");
    assert!(text.contains("h_max = 7.5e-3\n"));
    std::fs::write(&unbounded, text.replace("h_max = 7.5e-3\n", "")).unwrap();
    for (file, steps) in [(&short, None), (&unbounded, Some("10")), (&unbounded, Some("1000"))] {
        let mut args = vec!["bench", file.to_str().unwrap(), "--no-peers", "--repeat", "1"];
        args.extend(steps.map(|n| ["--steps", n]).into_iter().flatten());
        let out = cosim(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {}{text}", String::from_utf8_lossy(&out.stderr));
        let (n, span, _) = bench_figures(&text);
        // The measured part: up to `steps` × H0 after a tenth of it (at least one step).
        let steps: f64 = steps.map_or(1000.0, |s| s.parse().unwrap());
        assert!(n >= 1 && n < steps as u64, "{args:?}: {text}");
        assert!((span - steps * 0.001).abs() < 1e-9, "{args:?}: {text}");
    }
}
