#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Every packaged FMU through FMPy, a third-party importer: `fmpy validate` finds no problem,
//! `fmpy simulate --interface-type CoSimulation` runs the default experiment, and its results
//! match the analytical solution of the uncoupled subsystem (inputs held at their start values).

use fmu_harness::paths;
use std::path::Path;
use std::process::Command;

fn fmpy(args: &[&str], fmu: &Path) -> std::process::Output {
    let out = Command::new(paths::python())
        .args(["-c", "import sys; from fmpy.cli import main; sys.argv[0] = 'fmpy'; sys.exit(main())"])
        .args(args.iter().take(1))
        .arg(fmu)
        .args(args.iter().skip(1))
        .output()
        .expect("running fmpy");
    out
}

#[test]
fn fmpy_validate_reports_no_problems() {
    for fmu in paths::all_fmus() {
        let out = fmpy(&["validate"], &fmu);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("No problems found"),
            "{}: {text}{}",
            fmu.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Reads FMPy's CSV: header names (quoted) and rows.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).expect("reading FMPy output");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(|s| s.trim_matches('"').to_owned()).collect();
    let rows = lines.map(|l| l.split(',').map(|x| x.parse::<f64>().expect("number")).collect()).collect();
    (header, rows)
}

/// Free vibration of the mass when the coupling inputs stay at 0: x(t) = v0/ω sin(ωt) with
/// ω² = k/m (+ kc/m where the coupling spring is in this subsystem), v0 = ±100 m/s.
fn free_vibration(name: &str) -> Option<(f64, f64)> {
    match name {
        "oscillator-fd-m1" | "oscillator-dd-m1" => Some(((10.0f64 + 100.0).sqrt(), 100.0)),
        "oscillator-fd-m2" => Some((1000.0f64.sqrt(), -100.0)),
        "oscillator-dd-m2" => Some(((1000.0f64 + 100.0).sqrt(), -100.0)),
        // Triple oscillator (seed 001 A.2): ω² = (k + kc)/m, or k3/m3 for fd-m3 with F1 = F2 = 0.
        "oscillator-triple-fd-m1" | "oscillator-triple-dd-m1" => Some((((10.0f64 + 100.0) / 10.0).sqrt(), 10.0)),
        "oscillator-triple-fd-m2" | "oscillator-triple-dd-m2" => Some((((5.0f64 + 100.0) / 25.0).sqrt(), 5.0)),
        "oscillator-triple-fd-m3" => Some((1.0, -10.0)),
        "oscillator-triple-dd-m3" => Some((((100.0f64 + 200.0) / 100.0).sqrt(), -10.0)),
        _ => None,
    }
}

/// Nonlinear oscillator FMUs (seed 001 A.3, project defaults) with the coupling inputs at 0:
/// m ẍ = −k x − c ẋ³ with (k, c, ẋ0) = (k_ground + kc, c_ground + cc) where the coupling is in
/// the subsystem; m = 1 kg, c = 1e-4 N·s/m per damper.
fn cubic_free_vibration(name: &str) -> Option<(f64, f64, f64)> {
    match name {
        "oscillator-nonlinear-fd-m1" | "oscillator-nonlinear-dd-m1" => Some((110.0, 2e-4, 100.0)),
        "oscillator-nonlinear-fd-m2" => Some((1000.0, 1e-4, -100.0)),
        "oscillator-nonlinear-dd-m2" => Some((1100.0, 2e-4, -100.0)),
        _ => None,
    }
}

/// x(t) of ẍ = −k x − c ẋ³ by RK4 at 1 µs, sampled at `times`.
fn cubic_reference(k: f64, c: f64, v0: f64, times: &[f64]) -> Vec<f64> {
    let f = |x: f64, v: f64| (v, -k * x - c * v * v * v);
    let (mut x, mut v, mut t, h) = (0.0, v0, 0.0, 1e-6);
    let mut out = Vec::new();
    for &target in times {
        while t < target - 0.5 * h {
            let k1 = f(x, v);
            let k2 = f(x + 0.5 * h * k1.0, v + 0.5 * h * k1.1);
            let k3 = f(x + 0.5 * h * k2.0, v + 0.5 * h * k2.1);
            let k4 = f(x + h * k3.0, v + h * k3.1);
            x += h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            v += h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
            t += h;
        }
        out.push(x);
    }
    out
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// What the default run of each FMU must produce, checked on FMPy's results.
fn check_default_run(name: &str, header: &[String], rows: &[Vec<f64>]) {
    if let Some((omega, v0)) = free_vibration(name) {
        let (ix, iv) = (column(header, "x"), column(header, "v"));
        let mut max_err: f64 = 0.0;
        for r in rows {
            let t = r[0];
            max_err = max_err.max((r[ix] - v0 / omega * (omega * t).sin()).abs());
            max_err = max_err.max((r[iv] - v0 * (omega * t).cos()).abs() / omega);
        }
        assert!(max_err < 1e-6, "{name}: FMPy result deviates from the free vibration by {max_err}");
        return;
    }
    if let Some((k, c, v0)) = cubic_free_vibration(name) {
        let ix = column(header, "x");
        let times: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        let reference = cubic_reference(k, c, v0, &times);
        let max_err = rows.iter().zip(&reference).map(|(r, x)| (r[ix] - x).abs()).fold(0.0, f64::max);
        assert!(max_err < 1e-6, "{name}: FMPy result deviates from the damped free vibration by {max_err}");
        return;
    }
    match name {
        "hydraulics-naya" => {
            // Defaults rest at the static equilibrium of seed 004 eq. 32.
            let (i1, i2, i_f) = (column(header, "p1"), column(header, "p2"), column(header, "F"));
            for r in rows {
                assert!((r[i1] / 3.3218e6 - 1.0).abs() < 1e-3, "{name}: p1 = {} at t = {}", r[i1], r[0]);
                assert!((r[i2] / 4.3782e6 - 1.0).abs() < 1e-3, "{name}: p2 = {} at t = {}", r[i2], r[0]);
                assert!((r[i_f] / 6867.0 - 1.0).abs() < 1e-3, "{name}: F = {} at t = {}", r[i_f], r[0]);
            }
        }
        "hydraulics-lumped3" | "hydraulics-lumped3-me" => {
            // Closed valve, piston at rest: pressures stay at their initial values.
            for p in ["p1", "p2", "p3"] {
                let i = column(header, p);
                let p0 = rows[0][i];
                assert!(p0 > 1e5, "{name}: {p} = {p0}");
                for r in rows {
                    assert!((r[i] - p0).abs() < 1e-6 * p0, "{name}: {p} drifts to {} at t = {}", r[i], r[0]);
                }
            }
        }
        "multibody-rod" | "multibody-crane" | "multibody-rod-p" | "multibody-crane-p" | "multibody-crane-me" => {
            // Default inputs hold the static equilibrium (rod 6867 N, crane 8829 N): s stays at 0.5 m.
            let i = column(header, "s");
            for r in rows {
                assert!((r[i] - 0.5).abs() < 1e-6, "{name}: s = {} at t = {}", r[i], r[0]);
            }
            if name.ends_with("-p") {
                let (i_f, f0) = (column(header, "F"), if name.contains("rod") { 6867.0 } else { 8829.0 });
                for r in rows {
                    assert!((r[i_f] - f0).abs() < 1e-6, "{name}: F = {} at t = {}", r[i_f], r[0]);
                }
            }
        }
        "multibody-crane2" | "multibody-crane2-p" => {
            // F1 = 8829 N, F2 = 0 hold the crane: s1 = 0.5 m, s2 = |R|/2 = sqrt(3)/4 m.
            let (i1, i2) = (column(header, "s1"), column(header, "s2"));
            for r in rows {
                assert!((r[i1] - 0.5).abs() < 1e-6, "{name}: s1 = {} at t = {}", r[i1], r[0]);
                assert!((r[i2] - 3f64.sqrt() / 4.0).abs() < 1e-6, "{name}: s2 = {} at t = {}", r[i2], r[0]);
            }
        }
        "unified-naya" | "unified-crane-a4" | "unified-crane" | "unified-crane2" => {
            // Inputs at their declared starts hold the state at rest: s stays at the initial
            // length and the cylinder force at the static force (rod 6867 N, crane 8829 N).
            let (s, f, s0, f0) = match name {
                "unified-naya" => ("s", "F", 0.5, 6867.0),
                "unified-crane2" => ("s1", "F1", 0.5, 8829.0),
                _ => ("s", "F", 0.5, 8829.0),
            };
            let (is, i_f) = (column(header, s), column(header, f));
            for r in rows {
                assert!((r[is] - s0).abs() < 1e-9, "{name}: {s} = {} at t = {}", r[is], r[0]);
                assert!((r[i_f] - f0).abs() < 1e-6 * f0, "{name}: {f} = {} at t = {}", r[i_f], r[0]);
            }
        }
        "semirecursive-a" | "semirecursive-d" | "semirecursive-e" => {
            // The built-in work cycle: the same trajectory as the library's monolithic penalty run.
            let m = match name {
                "semirecursive-a" => fmu_semirecursive::models::model_a(),
                "semirecursive-d" => fmu_semirecursive::models::model_d(),
                _ => fmu_semirecursive::models::model_e(),
            }
            .unwrap();
            let f = fmu_semirecursive::run::Formulation::Penalty(fmu_semirecursive::penalty::Tangent::Analytic);
            // FMPy's communication step (its output interval) is the internal step (h = 0).
            let dt = rows[1][0] - rows[0][0];
            let run = fmu_semirecursive::run::Run::simulate(&m, f, dt, 2.0).unwrap();
            let (is, ip) = (column(header, "s"), column(header, "p1"));
            for r in rows {
                let k = (r[0] / dt).round() as usize;
                let x = &run.samples[k];
                assert!((r[is] - x.s[0]).abs() < 1e-9, "{name}: s = {} vs {} at t = {}", r[is], x.s[0], r[0]);
                assert!((r[ip] - x.p[0]).abs() < 1e-3, "{name}: p1 = {} vs {} at t = {}", r[ip], x.p[0], r[0]);
            }
        }
        "semirecursive-a-mechanism" | "semirecursive-d-mechanism" | "semirecursive-e-mechanism" => {
            // Input F at its start value, the static force: the mechanism rests at s0.
            let is = column(header, "s");
            let s0 = rows[0][is];
            for r in rows {
                assert!((r[is] - s0).abs() < 1e-9, "{name}: s = {} at t = {}", r[is], r[0]);
            }
        }
        "testing-faulty" => {
            // fault = none by default and the input u = 0: y stays at x0 = 1.
            let iy = column(header, "y");
            for r in rows {
                assert_eq!(r[iy], 1.0, "{name}: y = {} at t = {}", r[iy], r[0]);
            }
        }
        other => panic!("{other}: no expectation for its default run in fmu-harness/tests/fmpy.rs: add one"),
    }
}

#[test]
fn fmpy_simulate_cosimulation_default_runs_give_the_expected_results() {
    let out_dir = std::env::temp_dir().join(format!("fmpy-sim-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    for fmu in paths::all_fmus() {
        let name = fmu.file_stem().unwrap().to_str().unwrap().to_owned();
        let csv = out_dir.join(format!("{name}.csv"));
        let stop = if name.starts_with("oscillator") { "1" } else { "2" };
        let out = fmpy(
            &[
                "simulate",
                "--interface-type",
                "CoSimulation",
                "--stop-time",
                stop,
                "--output-file",
                csv.to_str().unwrap(),
            ],
            &fmu,
        );
        assert!(
            out.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let (header, rows) = read_csv(&csv);
        assert!(rows.len() > 100, "{name}: only {} rows", rows.len());
        assert!(rows.iter().flatten().all(|x| x.is_finite()), "{name}: non-finite output");
        check_default_run(&name, &header, &rows);
    }
    let _ = std::fs::remove_dir_all(out_dir);
}

/// FMPy's Python API drives `hydraulics-naya.fmu` with an input table (s, s_dot sampled every
/// 1 ms): at each communication point FMPy sets the sample (held over the step). The same
/// sequence through the Rust library gives the same pressures, bit for bit.
///
/// (FMPy 0.3.32's `set_input_derivatives=True` cannot be used here: `Input.__init__` allocates
/// the derivative buffer with a fixed size of 9, so `apply` fails with "ValueError: Can only
/// assign sequence of same size" for any FMU with another number of continuous inputs.)
#[test]
fn fmpy_and_the_rust_library_give_identical_results_on_a_prescribed_trajectory() {
    use fmu_export::{CoSimModel, Context};
    let dir = std::env::temp_dir().join(format!("fmpy-naya-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (h, n) = (1e-3, 500usize);
    let t: Vec<f64> = (0..=n).map(|k| k as f64 * h).collect();
    let s: Vec<f64> = t.iter().map(|t| 0.5 + 0.002 * (2.0 * std::f64::consts::PI * 2.0 * t).sin()).collect();
    let sd: Vec<f64> =
        t.iter().map(|t| 0.008 * std::f64::consts::PI * (2.0 * std::f64::consts::PI * 2.0 * t).cos()).collect();
    let input = dir.join("input.csv");
    let rows: Vec<String> = (0..=n).map(|k| format!("{:?},{:?},{:?}", t[k], s[k], sd[k])).collect();
    std::fs::write(&input, format!("time,s,s_dot\n{}\n", rows.join("\n"))).unwrap();
    let output = dir.join("output.csv");
    let script = r#"
import sys, numpy as np
from fmpy import simulate_fmu
inp = np.genfromtxt(sys.argv[2], delimiter=',', names=True)
r = simulate_fmu(sys.argv[1], fmi_type='CoSimulation', stop_time=0.5, step_size=1e-3, output_interval=1e-3,
                 input=inp, output=['p1', 'p2'])
with open(sys.argv[3], 'w') as f:
    for row in r:
        f.write('%r,%r,%r\n' % (float(row['time']), float(row['p1']), float(row['p2'])))
"#;
    let out = Command::new(paths::python())
        .args(["-c", script])
        .arg(paths::fmu("hydraulics-naya"))
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fmpy_rows: Vec<Vec<f64>> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(fmpy_rows.len(), n + 1);

    let mut m = fmu_hydraulics::NayaFmu::default();
    m.initialize(0.0, &mut Context::default()).unwrap();
    let mut ours = vec![[0.0, m.p[0], m.p[1]]];
    for k in 0..n {
        m.s.value = s[k];
        m.s_dot.value = sd[k];
        m.do_step(t[k], h, &mut Context::default()).unwrap();
        m.s.end_step(h);
        m.s_dot.end_step(h);
        ours.push([t[k + 1], m.p[0], m.p[1]]);
    }
    let mut max_rel: f64 = 0.0;
    for (a, b) in fmpy_rows.iter().zip(&ours) {
        assert!((a[0] - b[0]).abs() < 1e-12, "time grid differs: {} vs {}", a[0], b[0]);
        for i in 1..3 {
            max_rel = max_rel.max((a[i] - b[i]).abs() / b[i].abs());
        }
    }
    // The pressures moved (the trajectory is not trivial) and both runs agree exactly.
    let swing = ours.iter().map(|r| r[1]).fold(f64::MIN, f64::max) - ours.iter().map(|r| r[1]).fold(f64::MAX, f64::min);
    assert!(swing > 1e4, "p1 swing {swing} Pa");
    assert_eq!(max_rel, 0.0, "FMPy and the library differ by {max_rel:e} (relative)");
    let _ = std::fs::remove_dir_all(dir);
}
