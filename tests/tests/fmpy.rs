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
        _ => None,
    }
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
        "hydraulics-lumped3" => {
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
        other => panic!("{other}: no expectation for its default run in tests/tests/fmpy.rs: add one"),
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
