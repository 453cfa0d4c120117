#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Every committed scenario runs with `cosim run` as written, to its stop time; and the explicit
//! exchange (`--exchange explicit`) changes a run only where an output feeds through.

use fmu_harness::paths;
use std::path::{Path, PathBuf};

mod support;
use support::{cosim, tmp};

/// A copy of `scenarios/<name>` in `dir` with the FMU paths pointing at the FMUs under test.
fn localized(name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(paths::root().join("scenarios").join(name)).unwrap();
    let text = text
        .replace("../target/fmu", &paths::fmu_dir().display().to_string())
        .replace("../target/thirdparty", &paths::root().join("target/thirdparty").display().to_string())
        // Served scenarios (operator in the loop): a free port, not the one a user may have open.
        .replace("addr = \"127.0.0.1:8033\"", "addr = \"127.0.0.1:0\"")
        // Files a scenario names next to it (the operator's schematic), where they are.
        .replace("schematic = \"", &format!("schematic = \"{}/", paths::root().join("scenarios").display()));
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn every_scenario_runs_to_its_stop_time() {
    paths::fmu("multibody-crane2");
    let mut names: Vec<String> = std::fs::read_dir(paths::root().join("scenarios"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 30, "{names:?}");
    let dir = tmp("scenarios");
    let mut failed = Vec::new();
    for name in &names {
        let system = localized(name, &dir);
        let out = dir.join(name.trim_end_matches(".toml"));
        let mut args = vec!["run", system.to_str().unwrap(), "--out", out.to_str().unwrap()];
        // A real-time operator scenario runs for minutes: its first 0.2 s (paced) here.
        if std::fs::read_to_string(&system).unwrap().contains("real_time =") {
            args.extend(["--stop-time", "0.2"]);
        }
        let o = cosim(&args);
        let ok = o.status.success() && summary(&out)["status"] == "ok";
        if !ok {
            failed.push(format!("{name}: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")));
        }
    }
    assert!(failed.is_empty(), "scenarios that do not run to their stop time:\n{}", failed.join("\n"));
}

/// results.csv of `scenario` run with `extra` flags.
fn results(scenario: &str, extra: &[&str]) -> String {
    let dir = tmp("exchange");
    let system = localized(scenario, &dir);
    let out = dir.join("out");
    let mut args = vec!["run", system.to_str().unwrap(), "--out", out.to_str().unwrap(), "--stop-time", "3"];
    args.extend_from_slice(extra);
    let o = cosim(&args);
    assert!(o.status.success(), "{scenario} {extra:?}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out.join("results.csv")).unwrap()
}

#[test]
fn the_explicit_exchange_changes_only_runs_with_feedthrough_outputs() {
    paths::fmu("multibody-crane-p");
    // Pressure coupling: no connected output feeds through, so reading every output once at t_n
    // is what the default does anyway — the same numbers to the last digit, except the recorded
    // mechanism force mech.F, which feeds through from the pressure inputs but feeds nothing: the
    // default shows it for the row's pressures, the explicit exchange as read after the step.
    let without_force = |csv: String| {
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let k = header.iter().position(|h| *h == "mech.F").unwrap();
        let drop =
            |l: &str| l.split(',').enumerate().filter(|(j, _)| *j != k).map(|(_, x)| x).collect::<Vec<_>>().join(",");
        std::iter::once(drop(&header.join(","))).chain(lines.map(drop)).collect::<Vec<_>>().join("\n")
    };
    let ordered = results("crane-a4-pressure.toml", &[]);
    let explicit = results("crane-a4-pressure.toml", &["--exchange", "explicit"]);
    assert_ne!(ordered, explicit, "mech.F feeds through");
    assert_eq!(without_force(ordered), without_force(explicit));
    // Force coupling: F(s, ṡ) of the hydraulics feeds through; the explicit exchange hands the
    // mechanism the F read at t_n (with the previous ṡ), the default the F re-read with ṡ(t_n).
    let ordered = results("crane-a4.toml", &[]);
    let explicit = results("crane-a4.toml", &["--exchange", "explicit"]);
    let dir = tmp("summary");
    let o = cosim(&[
        "run",
        localized("crane-a4.toml", &dir).to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
        "--stop-time",
        "0.1",
        "--exchange",
        "explicit",
    ]);
    assert!(o.status.success());
    assert_eq!(summary(&dir.join("o"))["exchange"], "explicit");
    assert_ne!(ordered, explicit);
    assert_eq!(ordered.lines().count(), explicit.lines().count());
    let o =
        cosim(&["run", &paths::root().join("scenarios/crane-a4.toml").display().to_string(), "--exchange", "implicit"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("ordered"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_linear_valve_ramp_reaches_the_hydraulics_exactly_at_every_communication_point() {
    // One real FMU that interpolates its inputs (hydraulics-naya), H = 17 ms across the 2 ms valve
    // ramp of Publication IV's M1: the κ it applied at each communication point (its input after
    // fmi2DoStep) is the table's value there, with no overshoot past the ramp's end.
    let fmu = paths::fmu("hydraulics-naya");
    let dir = tmp("ramp");
    let (k0, k1) = (0.4443455895980512, 0.4743455895980512);
    let system = dir.join("ramp.toml");
    std::fs::write(
        &system,
        format!(
            "[simulation]\nstart = 5.95\nstop = 6.052\nstep = 0.017\n\n[instances.hyd]\nfmu = \"{}\"\n\
             start = {{ F_static = 8829.0, h = 1e-4 }}\n\n[[inputs]]\nto = \"hyd.kappa\"\ntimes = [0.0, 6.0, 6.002]\n\
             values = [{k0}, {k0}, {k1}]\ninterpolation = \"linear\"\n\n[outputs]\nvariables = [\"hyd.kappa\"]\n",
            fmu.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", system.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let table = |t: f64| k0 + (k1 - k0) * ((t - 6.0) / 0.002).clamp(0.0, 1.0);
    let mut inside = false;
    for line in text.lines().skip(1) {
        let v: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        inside |= v[0] > 6.0 && v[0] < 6.002;
        assert!((v[1] - table(v[0])).abs() <= 1e-12, "at t = {}: κ = {}, table {}", v[0], v[1], table(v[0]));
    }
    assert!(inside, "a communication point inside the ramp: {text}");
}
