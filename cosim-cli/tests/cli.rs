#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim` end to end on packaged FMUs: the scenarios, the vendor FMUs, and every error path of
//! the system description with its message.

use fmu_harness::oscillator::analytic;
use fmu_harness::paths;
use std::path::{Path, PathBuf};

mod support;
use support::{cosim, tmp};

fn scenario(name: &str) -> String {
    paths::root().join("scenarios").join(name).display().to_string()
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn max_error(results: &Path) -> f64 {
    let (h, rows) = read_csv(results);
    let (i1, i2) = (h.iter().position(|c| c == "m1.x").unwrap(), h.iter().position(|c| c == "m2.x").unwrap());
    rows.iter()
        .map(|r| {
            let z = analytic(1, r[0]);
            (r[i1] - z[0]).abs().max((r[i2] - z[1]).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn oscillator_scenarios_write_three_files_and_meet_the_error_target() {
    paths::fmu("oscillator-fd-m1");
    let out = tmp("fd");
    let o = cosim(&["run", &scenario("oscillator-fd.toml"), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["results.csv", "bonds.csv", "summary.json"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let (header, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(header[..3], ["time", "m1.x", "m1.v"]);
    assert_eq!(rows.len(), 10_001);
    let fd = max_error(&out.join("results.csv"));
    assert!(fd <= 0.05, "force-displacement, order 1, H = 1 ms: max error {fd} m");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "ok");
    assert_eq!(summary["steps"], 10_000);
    assert_eq!(summary["instances"][0]["do_step_calls"], 10_000);
    let (bh, brows) = read_csv(&out.join("bonds.csv"));
    assert_eq!(bh, ["time", "coupling.dP", "coupling.dE", "coupling.E", "coupling.E_abs"]);
    assert!(brows.last().unwrap()[4] > 0.0);

    let out_dd = tmp("dd");
    let o = cosim(&["run", &scenario("oscillator-dd.toml"), "--out", out_dd.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dd = max_error(&out_dd.join("results.csv"));
    assert!(dd < fd, "displacement coupling {dd} should beat force coupling {fd}");

    // Flags override the file.
    let out_gs = tmp("gs");
    let o = cosim(&[
        "run",
        &scenario("oscillator-fd.toml"),
        "--out",
        out_gs.to_str().unwrap(),
        "--algorithm",
        "gauss-seidel",
        "--step",
        "0.002",
        "--stop-time",
        "1",
        "--extrapolation",
        "0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, rows) = read_csv(&out_gs.join("results.csv"));
    assert_eq!(rows.len(), 501);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_gs.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["algorithm"], "gauss-seidel");
}

#[test]
fn vendor_fmus_coupled_agree_with_the_monolithic_fmu() {
    let gemseo = paths::root().join("target/thirdparty/gemseo/MassSpringSystem.fmu");
    assert!(gemseo.exists(), "{} missing: run `cargo xtask test` (it extracts gemseo-fmu's FMUs)", gemseo.display());
    let (a, b) = (tmp("ms-co"), tmp("ms-mono"));
    let o = cosim(&["run", &scenario("mass-spring-openmodelica.toml"), "--out", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cosim(&["run", &scenario("mass-spring-monolithic.toml"), "--out", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, co) = read_csv(&a.join("results.csv"));
    let (_, mono) = read_csv(&b.join("results.csv"));
    assert_eq!(co.len(), mono.len());
    // OpenModelica's Co-Simulation FMUs integrate with explicit Euler at the communication step,
    // which only evaluates the inputs at t_n, the exchanged sample: the coupled solution equals
    // the monolithic one up to rounding.
    let mut max_diff: f64 = 0.0;
    for (c, m) in co.iter().zip(&mono) {
        max_diff = max_diff.max((c[1] - m[1]).abs()).max((c[2] - m[2]).abs());
    }
    assert!(max_diff < 1e-9, "coupled vs monolithic: {max_diff}");
    assert!((mono.last().unwrap()[1] - mono[0][1]).abs() > 0.5, "the masses must move");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text.replace("FMUDIR", &paths::fmu_dir().display().to_string())).unwrap();
    p
}

const BASE: &str = r#"
[simulation]
stop = 0.1
step = 1e-3
[instances.m1]
fmu = "FMUDIR/oscillator-fd-m1.fmu"
[instances.m2]
fmu = "FMUDIR/oscillator-fd-m2.fmu"
"#;

fn fails_with(text: &str, needles: &[&str]) {
    let dir = tmp("bad");
    let p = write(&dir, "bad.toml", text);
    let o = cosim(&["run", p.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "expected {n:?} in: {err}");
    }
}

#[test]
fn system_file_errors_name_the_file_key_and_value() {
    paths::fmu("oscillator-fd-m1");
    fails_with(
        &format!("{BASE}[[connections]]\nfrom = \"m3.x\"\nto = \"m1.xi\"\n"),
        &["bad.toml", "connections[0].from", "unknown instance \"m3\""],
    );
    fails_with(
        &format!("{BASE}[[connections]]\nfrom = \"m2.nope\"\nto = \"m1.xi\"\n"),
        &["connections[0].from", "no variable \"nope\""],
    );
    fails_with(
        &format!("{BASE}[[connections]]\nfrom = \"m2.x\"\nto = \"m1.F\"\n"),
        &["connections[0].to", "causality output"],
    );
    fails_with(
        &format!("{BASE}[[connections]]\nfrom = \"m1.xi\"\nto = \"m2.F\"\n"),
        &["connections[0].from", "causality input"],
    );
    fails_with(
        &format!("{BASE}[[connections]]\nfrom = \"m2.x\"\nto = \"m1.damping\"\n"),
        &["connections[0].to", "causality parameter"],
    );
    fails_with(
        &BASE.replace("fmu = \"FMUDIR/oscillator-fd-m2.fmu\"", "fmu = \"FMUDIR/oscillator-fd-m2.fmu\"\nstep = 3e-4"),
        &["instances.m2.step", "does not divide", ": H = 0.0009 s or 0.0012 s (multiples of h = 0.0003 s) would fit"],
    );
    fails_with(&BASE.replace("stop = 0.1", "stop = -1.0"), &["simulation.stop", "after the start time"]);
    fails_with(
        &BASE.replace("stop = 0.1", "stop = 0.1\nalgoritm = \"jacobi\""),
        &["bad.toml:4:1: simulation.algoritm: unknown field `algoritm`; did you mean \"algorithm\"?"],
    );
    fails_with(
        &BASE.replace("[instances.m1]", "[instances.m1]\nstart = { damping = \"case7\" }"),
        &["instances.m1.start.damping", "case7", "case1"],
    );
    fails_with(
        &BASE.replace("[instances.m1]", "[instances.m1]\nstart = { m1 = true }"),
        &["instances.m1.start.m1", "not a valid number"],
    );
    fails_with(&BASE.replace("oscillator-fd-m2.fmu", "missing.fmu"), &["missing.fmu"]);
    fails_with(&format!("{BASE}[simulation2]\n"), &["unknown field `simulation2`"]);
    // Two outputs with direct feedthrough feeding each other: an algebraic loop, refused under
    // both schemes, with the instances named.
    let looped = BASE.replace("oscillator-fd-m2.fmu", "oscillator-fd-m1.fmu")
        + "[[connections]]\nfrom = \"m1.F\"\nto = \"m2.xi\"\n[[connections]]\nfrom = \"m2.F\"\nto = \"m1.xi\"\n";
    fails_with(&looped, &["algebraic loop", "m1", "m2"]);
    fails_with(&looped.replace("stop = 0.1", "stop = 0.1\nalgorithm = \"gauss-seidel\""), &["algebraic loop"]);
}

#[test]
fn a_failing_fmu_stops_the_run_and_keeps_the_results_so_far() {
    paths::fmu("hydraulics-naya");
    let dir = tmp("fail");
    // An oscillator drives the cylinder length (s = 0.5 + 0.1 x, |x| up to 3.2 m): the piston
    // reaches the end of its stroke (|s - s0| = l/2 = 0.221 m) after about 25 steps.
    let p = write(
        &dir,
        "fail.toml",
        r#"
[simulation]
stop = 1.0
step = 1e-3
[instances.osc]
fmu = "FMUDIR/oscillator-fd-m2.fmu"
[instances.hyd]
fmu = "FMUDIR/hydraulics-naya.fmu"
[[connections]]
from = "osc.x"
to = "hyd.s"
gain = 0.1
offset = 0.5
[outputs]
variables = ["osc.x", "hyd.p1", "hyd.p2"]
"#,
    );
    let out = dir.join("out");
    let o = cosim(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("hyd: fmi2DoStep at t = ") && err.contains("at t = "), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    let steps = summary["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 1000, "{steps}");
    let (_, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len() as u64, steps + 1, "every completed step is on disk");
}

#[test]
fn info_lists_capabilities_and_variables() {
    let o = cosim(&["info", paths::fmu("hydraulics-naya").to_str().unwrap()]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in ["HydraulicsNaya", "canInterpolateInputs", "kappa0", "calculatedParameter", "Pa"] {
        assert!(text.contains(needle), "{needle} missing in:\n{text}");
    }
    // Seed 004's b = -1.19e-18 1/Pa² as written in the paper, not as 0.000…0119.
    assert!(text.contains(" -1.19e-18 ") && !text.contains("0.0000000"), "{text}");
    // The enumeration items, not only the start value's.
    let o = cosim(&["info", paths::fmu("oscillator-fd-m1").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\nEnumerations:\n  DampingCase (damping)"), "{text}");
    for item in ["1 case1", "2 case2", "custom"] {
        assert!(text.contains(item), "{item} missing in:\n{text}");
    }
}

#[test]
fn naya_and_crane_scenarios_with_time_table_inputs() {
    paths::fmu("multibody-rod");
    let out = tmp("naya");
    let o = cosim(&["run", &scenario("naya.toml"), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = read_csv(&out.join("results.csv"));
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (is, isd) = (col("mech.s"), col("mech.s_dot"));
    // At rest until the spool moves at t = 2 s (kappa0 is given to 6 digits: drift < 1e-5 m).
    for r in rows.iter().filter(|r| r[0] <= 2.0) {
        assert!((r[is] - 0.5).abs() < 1e-5, "t = {}: s = {}", r[0], r[is]);
    }
    // Seed 004 Fig. 3: s_dot stays within the -0.01 … 0.03 m/s axis; the spool steps move it.
    let (lo, hi) = rows.iter().fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(r[isd]), b.max(r[isd])));
    assert!(lo >= -0.01 && hi <= 0.03 && hi > 0.01 && lo < -0.002, "s_dot in [{lo}, {hi}]");

    let out = tmp("crane");
    let o = cosim(&["run", &scenario("crane-pub3.toml"), "--out", out.to_str().unwrap(), "--stop-time", "20"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = read_csv(&out.join("results.csv"));
    let is = h.iter().position(|c| c == "mech.s").unwrap();
    let (lo, hi) = rows.iter().fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(r[is]), b.max(r[is])));
    // J1 drives the piston into the upper damper (l2 <= l_d: s >= s0 + l20 - l_d = 0.742 m) and
    // into the lower one (l1 <= l_d: s <= s0 - l10 + l_d = 0.458 m).
    assert!(hi > 0.742 && hi < 0.75, "s max {hi}");
    assert!(lo < 0.458 && lo > 0.45, "s min {lo}");
}

#[test]
fn time_table_errors_are_reported() {
    paths::fmu("hydraulics-naya");
    let text = r#"
[simulation]
stop = 0.1
step = 1e-3
[instances.hyd]
fmu = "FMUDIR/hydraulics-naya.fmu"
[[inputs]]
to = "hyd.kappa"
times = [0.0, 0.0]
values = [0.4, 0.5]
"#;
    fails_with(text, &["inputs[0].times", "strictly increasing"]);
    fails_with(&text.replace("hyd.kappa", "hyd.F"), &["inputs[0].to", "must be a Real input"]);
    fails_with(&text.replace("values = [0.4, 0.5]", "values = [0.4]"), &["inputs[0]", "equal length"]);
}
