#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Model Exchange import against hostile ME FMUs (issue 52: "ME import survives every hostile
//! FMU the CS path does"): the bouncing ball of tests/mefmu built with `-DHOSTILE=n` (see
//! `me.c`) or with a lying description. Each ends the run with an error naming the instance, the
//! function or the time, never a crash of cosim, a hang or an allocation of what the FMU declares.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod mefmu;
mod support;
use mefmu::{Build, Model};
use support::tmp;

/// The ball built into folder `tag` with `defines` and description replacements `xml`.
fn ball(tag: &str, fmi3: bool, defines: &[&str], xml: &[(&str, &str)]) -> PathBuf {
    let how = Build {
        fmi3,
        defines: defines.iter().map(|d| (*d).to_owned()).collect(),
        xml: xml.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect(),
    };
    Model::Ball.build_with(&tmp(tag), &how)
}

/// `cosim run FMU --out <its folder>/out FLAGS`: (exit code, stderr, output folder).
fn run(fmu: &Path, flags: &[&str]) -> (Option<i32>, String, PathBuf) {
    let out = fmu.parent().unwrap().join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap(), "--step", "0.01"];
    args.extend_from_slice(flags);
    let t0 = Instant::now();
    let o = support::cosim(&args);
    assert!(t0.elapsed() < Duration::from_secs(60), "{args:?} took {:?}", t0.elapsed());
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The times of results.csv's rows.
fn times(out: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    text.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect()
}

/// The run failed with `needles` in its message (stderr and summary.json), the rows before it
/// kept. A run that fails at initialization writes no output (as for Co-Simulation FMUs).
fn failed(code: Option<i32>, stderr: &str, out: &Path, needles: &[&str]) {
    assert_eq!(code, Some(1), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not in: {stderr}");
    }
    if !out.join("summary.json").exists() {
        assert!(!out.join("results.csv").exists(), "results.csv without summary.json");
        return;
    }
    let s = summary(out);
    assert_eq!(s["status"], "failed", "{s}");
    let message = s["message"].as_str().unwrap();
    for n in needles {
        assert!(message.contains(n), "{n:?} not in summary.json: {message}");
    }
}

const RK4: [&str; 4] = ["--solver", "rk4", "--set", "solver_step=1e-3"];

#[test]
fn a_crash_in_get_derivatives_kills_only_the_isolated_worker() {
    let fmu = ball("me-hostile-segv", false, &["HOSTILE=1"], &[]);
    let mut flags = RK4.to_vec();
    flags.push("--isolate");
    let (code, stderr, out) = run(&fmu, &flags);
    failed(code, &stderr, &out, &["ball: fmi2DoStep at t = 0.19", "worker process died (signal 11, SIGSEGV)"]);
    // Every communication point before the crash, none after.
    let t = times(&out);
    assert_eq!(t.len(), 20, "{t:?}");
    assert!((t[19] - 0.19).abs() < 1e-12, "{t:?}");
    assert_eq!(summary(&out)["steps"], 19);
}

#[test]
fn a_derivative_that_is_not_a_number_is_a_named_error_not_a_hang() {
    let fmu = ball("me-hostile-nan", false, &["HOSTILE=2"], &[]);
    for (solver, isolate) in [(&RK4[..], false), (&RK4[..], true), (&[][..], false), (&[][..], true)] {
        let mut flags = solver.to_vec();
        if isolate {
            flags.push("--isolate");
        }
        let (code, stderr, out) = run(&fmu, &flags);
        failed(code, &stderr, &out, &["ball: DoStep at t = 0.", "not finite", "derivative of state 1 is NaN"]);
        // RK4 evaluates at t = 0.2 in the step from 0.19; the BDF may land on 0.2 first.
        let rows = times(&out).len();
        assert!(rows == 20 || rows == 21, "{flags:?}: {rows} rows");
    }
}

#[test]
fn an_event_iteration_that_never_ends_is_bounded() {
    let fmu = ball("me-hostile-iterate", false, &["HOSTILE=3"], &[]);
    for isolate in [false, true] {
        let mut flags = RK4.to_vec();
        if isolate {
            flags.push("--isolate");
        }
        let (code, stderr, out) = run(&fmu, &flags);
        // The first bounce, t1 = √(2/g) = 0.4515 s.
        failed(
            code,
            &stderr,
            &out,
            &["ball: fmi2NewDiscreteStates at t = 0.4515", "newDiscreteStatesNeeded is still true after 1000 calls"],
        );
    }
}

#[test]
fn a_time_event_in_the_past_is_refused() {
    let fmu = ball("me-hostile-past", false, &["HOSTILE=4"], &[]);
    let (code, stderr, out) = run(&fmu, &RK4);
    failed(
        code,
        &stderr,
        &out,
        &["ball: fmi2NewDiscreteStates at t = 0.4515", "nextEventTime = -0.048", "before the current time"],
    );
}

#[test]
fn a_binary_whose_number_of_states_differs_from_its_description_is_named() {
    // FMI 3.0: fmi3GetNumberOfContinuousStates says 3, the description 2.
    let fmu = ball("me-hostile-nx3", true, &["HOSTILE=1"], &[]);
    let (code, stderr, out) = run(&fmu, &RK4);
    failed(
        code,
        &stderr,
        &out,
        &["fmi3GetNumberOfContinuousStates", "the FMU has 3 continuous states, its modelDescription.xml declares 2"],
    );
    // FMI 2.0 has no such function: the description declares one state (v's derivative
    // dropped), the binary refuses the vector of one (fmi2Error, named with its function).
    let one_state =
        [("<Real derivative=\"2\"/>", "<Real/>"), ("<Unknown index=\"4\"/>\n</Derivatives>", "</Derivatives>")];
    let fmu = ball("me-hostile-nx2", false, &[], &one_state);
    let (code, stderr, out) = run(&fmu, &RK4);
    failed(code, &stderr, &out, &["ball: fmi2GetContinuousStates", "fmi2Error"]);
}

#[test]
fn huge_declared_numbers_of_states_and_event_indicators_are_refused_before_allocation() {
    let fmu = ball(
        "me-hostile-nz",
        false,
        &[],
        &[("numberOfEventIndicators=\"1\"", "numberOfEventIndicators=\"2000000000\"")],
    );
    for isolate in [false, true] {
        let mut flags = RK4.to_vec();
        if isolate {
            flags.push("--isolate");
        }
        let (code, stderr, out) = run(&fmu, &flags);
        failed(
            code,
            &stderr,
            &out,
            &["ball: fmi2ExitInitializationMode", "2000000000 event indicators, more than cosim's limit of 1000000"],
        );
    }
}

/// Pids of processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn sigterm_stops_a_run_whose_derivatives_never_return() {
    let fmu = ball("me-hostile-hang", false, &["HOSTILE=5"], &[]);
    for isolate in [false, true] {
        let out = fmu.parent().unwrap().join(if isolate { "out-isolated" } else { "out" });
        let mut args = vec!["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap(), "--step", "0.01"];
        args.extend_from_slice(&RK4);
        if isolate {
            args.push("--isolate");
        }
        let mut c = Command::new(env!("CARGO_BIN_EXE_cosim"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rows up to the hang (t = 0.19) reach results.csv; then the call blocks.
        let t0 = Instant::now();
        while !std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 20) {
            assert!(t0.elapsed() < Duration::from_secs(60), "the run did not reach the hang");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let ok = Command::new("kill").args(["-TERM", &c.id().to_string()]).status().unwrap();
        assert!(ok.success());
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = c.try_wait().unwrap() {
                break s;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "cosim did not end within 30 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(c.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(143), "isolate {isolate}: {stderr}");
        assert!(stderr.contains("interrupted (SIGTERM)"), "{stderr}");
        let s = summary(&out);
        assert_eq!(s["status"], "interrupted", "{s}");
        assert_eq!(times(&out).len(), 20);
        if isolate {
            // The worker blocked in fmi2GetDerivatives was killed.
            let t0 = Instant::now();
            while !processes_with(fmu.to_str().unwrap()).is_empty() {
                assert!(t0.elapsed() < Duration::from_secs(10), "the worker outlived the run");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}
