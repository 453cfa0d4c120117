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
    let summary = master::run::run_file(&path, &Overrides::default(), &out).unwrap();
    assert_eq!(summary.status, master::observer::Status::Ok, "{}", summary.message);
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
    let e = master::run::run_file(&path, &Overrides::default(), &dir.join("out")).unwrap_err().to_string();
    assert!(e.contains("simulation.iterations") && e.contains("at least 1"), "{e}");
}
