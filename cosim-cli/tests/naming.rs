#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 49 item 3, the one naming rule on the command line: a variable is named bare where one
//! instance only has it, or instance-qualified (the results.csv column), in `--output-variables`,
//! `--start-value` and `cosim plot`; an unknown name gets the nearest one. (Python's front ends:
//! python/tests/test_naming.py.)

use fmu_harness::paths;

mod support;
use support::{cosim, tmp};

fn ok(args: &[&str]) -> std::process::Output {
    let o = cosim(args);
    assert!(o.status.success(), "cosim {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn refused(args: &[&str]) -> String {
    let o = cosim(args);
    assert!(!o.status.success(), "cosim {args:?} should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn one_fmu_takes_bare_and_qualified_names_alike() {
    let fmu = paths::fmu("oscillator-fd-m1");
    let fmu = fmu.to_str().unwrap();
    let dir = tmp("naming-fmu");
    let (bare, qual) = (dir.join("bare"), dir.join("qualified"));
    let run = |out: &std::path::Path, x0: &str, vars: &str| {
        ok(&[
            "run",
            fmu,
            "--stop-time",
            "0.05",
            "--start-value",
            x0,
            "--output-variables",
            vars,
            "--out",
            out.to_str().unwrap(),
        ]);
        std::fs::read_to_string(out.join("results.csv")).unwrap()
    };
    let a = run(&bare, "x0=0.1", "x,v");
    let b = run(&qual, "oscillator_fd_m1.x0=0.1", "oscillator_fd_m1.x,oscillator_fd_m1.v");
    assert_eq!(a, b, "bare and qualified names give the same results.csv");
    assert!(a.starts_with("time,oscillator_fd_m1.x,oscillator_fd_m1.v\n0.0,0.1,"), "{a:.80}");
    // Unknown names, bare or qualified: the nearest one.
    let out = dir.join("bad");
    let out = out.to_str().unwrap();
    let e = refused(&["run", fmu, "--stop-time", "0.05", "--output-variables", "oscillator_fd_m1.xx", "--out", out]);
    assert!(e.contains("did you mean"), "{e}");
    let e = refused(&["run", fmu, "--stop-time", "0.05", "--start-value", "x00=1", "--out", out]);
    assert!(e.contains("no variable \"x00\"") && e.contains("did you mean \"x0\"?"), "{e}");
}

#[test]
fn cosim_plot_takes_bare_and_qualified_columns_and_suggests_the_nearest() {
    paths::fmu("multibody-crane");
    paths::fmu("hydraulics-lumped3");
    let dir = tmp("naming-plot");
    let system = paths::root().join("scenarios/crane-pub3.toml");
    let out = dir.join("crane");
    let o = out.to_str().unwrap();
    ok(&["run", system.to_str().unwrap(), "--stop-time", "0.05", "--out", o]);
    // p1 is hyd's only; s is mech's only among the recorded columns (hyd.s is an input, not recorded).
    let bare = cosim_cli::plot::results_figure(&out, &["p1".into(), "s".into()]).unwrap();
    let qual = cosim_cli::plot::results_figure(&out, &["hyd.p1".into(), "mech.s".into()]).unwrap();
    let labels = |f: &cosim_cli::plot::Figure| -> Vec<String> {
        f.panels.iter().flat_map(|p| p.series.iter().map(|s| s.label.clone())).collect()
    };
    assert_eq!(labels(&bare), labels(&qual));
    assert_eq!(labels(&bare), ["hyd.p1", "mech.s"]);
    ok(&["plot", o, "p1", "s"]);
    assert!(out.join("results.png").exists());
    let e = refused(&["plot", o, "p11"]);
    assert!(e.contains("no column \"p11\"") && e.contains("did you mean \"p1\"?"), "{e}");
}

#[test]
fn cosim_help_names_what_it_runs() {
    let help = String::from_utf8(ok(&["--help"]).stdout).unwrap();
    let first = help.lines().next().unwrap();
    assert!(first.contains("FMI 2.0 and FMI 3.0") && first.contains("Model Exchange"), "{first}");
    assert!(!help.contains("any FMI 2.0 Co-Simulation FMU"), "{help}");
}
