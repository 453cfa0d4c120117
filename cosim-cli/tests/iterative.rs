#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Iterative (implicit) Jacobi coupling on the packaged double-oscillator FMUs: each step is
//! repeated from the saved FMU states until the exchanged values converge. Converged, the held
//! (order-0) coupling loses its O(H) delay; the error against e^{At} z0 drops accordingly.

use fmu_harness::oscillator::analytic;
use fmu_harness::paths::fmu;
use master::system::Overrides;

fn run(iterations: u32, extrapolation: usize) -> (f64, String) {
    let dir = std::env::temp_dir().join(format!("cosim-iterative-{}-{iterations}-{extrapolation}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        r#"
[simulation]
stop = 2.0
step = 2e-3
extrapolation = {extrapolation}
iterations = {iterations}
iteration_tolerance = 1e-12
[instances.m1]
fmu = "{}"
[instances.m2]
fmu = "{}"
[[connections]]
from = "m2.x"
to = "m1.xi"
[[connections]]
from = "m2.v"
to = "m1.xi_dot"
[[connections]]
from = "m1.F"
to = "m2.F"
[outputs]
variables = ["m1.x", "m2.x"]
"#,
        fmu("oscillator-fd-m1").display(),
        fmu("oscillator-fd-m2").display()
    );
    let path = dir.join("system.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.join("out");
    let summary = cosim_cli::run::run_file(&path, &Overrides::default(), &out).unwrap();
    assert_eq!(summary.status, master::observer::Status::Ok, "{}", summary.message);
    // The scheme names itself in summary.json.
    assert_eq!(summary.algorithm, if iterations > 1 { "iterative-jacobi" } else { "jacobi" });
    // Its counts: at least one pass per step, the same as the iterations table says.
    if let Some(it) = &summary.iterations {
        assert_eq!(summary.algorithm_stats.iterations, it.passes);
        assert_eq!(summary.algorithm_stats.unconverged_steps, it.unconverged_steps);
        assert!(it.passes >= summary.steps);
    }
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut err: f64 = 0.0;
    for line in csv.lines().skip(1) {
        let v: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let z = analytic(1, v[0]);
        err = err.max((v[1] - z[0]).abs()).max((v[2] - z[1]).abs());
    }
    let calls = summary.instances[0].do_step_calls;
    (err, format!("{calls} doStep calls"))
}

#[test]
fn converged_iterations_remove_the_coupling_delay() {
    let (explicit, _) = run(1, 0);
    let (iterative, calls) = run(50, 0);
    assert!(iterative < explicit / 20.0, "held inputs: explicit {explicit:e} m, iterative {iterative:e} m ({calls})");
    // Extrapolation order 1 gives the first pass a better start, not a different limit.
    let (iterative1, _) = run(50, 1);
    assert!((iterative1 - iterative).abs() <= 1e-6 * iterative.max(1e-12) + 1e-9, "{iterative1:e} vs {iterative:e}");
}

#[test]
fn iterations_must_be_positive() {
    let dir = std::env::temp_dir().join(format!("cosim-iterative-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("system.toml");
    std::fs::write(
        &path,
        format!(
            "[simulation]\nstop = 1.0\nstep = 1e-3\niterations = 0\n[instances.m1]\nfmu = \"{}\"\n",
            fmu("oscillator-fd-m1").display()
        ),
    )
    .unwrap();
    let e = cosim_cli::run::run_file(&path, &Overrides::default(), &dir.join("out")).unwrap_err().to_string();
    assert!(e.contains("simulation.iterations") && e.contains("at least 1"), "{e}");
}

/// Iterative coupling with `--isolate`: the worker keeps the saved fmi2FMUstate, so the
/// Publication III crane (crane-pub3, shortened to 0.8 s: the valve opens at 0.5 s; 3 passes per
/// step unless a pass changes nothing) gives the same results out of process as in process.
#[test]
fn iterations_work_with_isolated_instances() {
    use fmu_harness::paths;
    paths::fmu("multibody-crane");
    paths::fmu("hydraulics-lumped3");
    let text = std::fs::read_to_string(paths::root().join("scenarios/crane-pub3.toml"))
        .unwrap()
        .replace("../target/fmu", &paths::fmu_dir().display().to_string())
        .replace("[simulation]\n", "[simulation]\niterations = 3\niteration_tolerance = 1e-300\n");
    assert!(text.contains("iterations = 3"), "crane-pub3.toml has a [simulation] table");
    let dir = std::env::temp_dir().join(format!("cosim-iterative-isolate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("crane.toml");
    std::fs::write(&path, text).unwrap();
    let read = |out: &std::path::Path| -> Vec<Vec<f64>> {
        let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
        csv.lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect()
    };
    let mut results = Vec::new();
    let mut steps = Vec::new();
    for flag in [None, Some("--isolate")] {
        let out = dir.join(if flag.is_some() { "isolated" } else { "in-process" });
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cosim"));
        cmd.args(["run", path.to_str().unwrap(), "--out", out.to_str().unwrap(), "--stop-time", "0.8"]);
        cmd.args(flag);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{flag:?}: {}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["status"], "ok", "{flag:?}: {summary}");
        steps.push(summary["instances"][0]["do_step_calls"].as_u64().unwrap());
        results.push(read(&out));
    }
    // 800 steps, those after the valve opened done 3 times (restored twice).
    assert_eq!(steps[0], steps[1], "doStep calls (in process, isolated)");
    assert!(steps[0] >= 800 + 2 * 200, "{} doStep calls: the steps were not repeated", steps[0]);
    let (a, b) = (&results[0], &results[1]);
    assert_eq!(a.len(), 801);
    assert_eq!(a.len(), b.len());
    let mut worst: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len());
        for (p, q) in x.iter().zip(y) {
            assert!(p.is_finite() && q.is_finite(), "{x:?} vs {y:?}");
            worst = worst.max((p - q).abs() / p.abs().max(q.abs()).max(1e-300));
        }
    }
    assert!(worst <= 1e-12, "largest relative difference between in-process and isolated: {worst:e}");
}
