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
fn free_vibration(name: &str) -> (f64, f64) {
    match name {
        "oscillator-fd-m1" | "oscillator-dd-m1" => ((10.0f64 + 100.0).sqrt(), 100.0),
        "oscillator-fd-m2" => (1000.0f64.sqrt(), -100.0),
        "oscillator-dd-m2" => ((1000.0f64 + 100.0).sqrt(), -100.0),
        other => panic!("no analytical solution known for {other}: add one"),
    }
}

#[test]
fn fmpy_simulate_cosimulation_matches_analytical_solution() {
    let out_dir = std::env::temp_dir().join(format!("fmpy-sim-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    for fmu in paths::all_fmus() {
        let name = fmu.file_stem().unwrap().to_str().unwrap().to_owned();
        let csv = out_dir.join(format!("{name}.csv"));
        let out = fmpy(
            &["simulate", "--interface-type", "CoSimulation", "--stop-time", "1", "--output-file", csv.to_str().unwrap()],
            &fmu,
        );
        assert!(out.status.success(), "{name}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let (header, rows) = read_csv(&csv);
        assert!(rows.len() > 100, "{name}: only {} rows", rows.len());
        assert!(rows.iter().flatten().all(|x| x.is_finite()), "{name}: non-finite output");
        let (omega, v0) = free_vibration(&name);
        let (ix, iv) = (header.iter().position(|h| h == "x").unwrap(), header.iter().position(|h| h == "v").unwrap());
        let mut max_err: f64 = 0.0;
        for r in &rows {
            let t = r[0];
            max_err = max_err.max((r[ix] - v0 / omega * (omega * t).sin()).abs());
            max_err = max_err.max((r[iv] - v0 * (omega * t).cos()).abs() / omega);
        }
        assert!(max_err < 1e-6, "{name}: FMPy result deviates from the free vibration by {max_err}");
    }
    let _ = std::fs::remove_dir_all(out_dir);
}
