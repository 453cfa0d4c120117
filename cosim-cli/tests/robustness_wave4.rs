#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 48 (robustness, wave 4): hostile FMUs built here from `hostile_runs/hostile.c` with the
//! system's `cc` (the logger's format, forged check verdicts, escaping daemons, files in the
//! working directory, huge log lines), SIGHUP, a full disk, and the low items. Each test failed on
//! the code before its fix.

mod support;

#[path = "hostile_runs/scratch.rs"]
mod scratch;
use scratch::*;

use std::time::Duration;

#[test]
fn an_fmu_logging_percent_n_and_s_without_arguments_does_not_corrupt_cosim() {
    // Item 15: the message went to vsnprintf as the format: "%n" wrote through garbage, SIGSEGV
    // (exit 139) while summary.json said "ok".
    let s = Scratch::new("w4-log-format");
    let fmu = s.fmu("logfmt", &["MODE=10"]);
    let sys = s.system("logfmt.toml", &fmu, 10);
    for isolate in [false, true] {
        let mut args = vec!["run", sys.to_str().unwrap(), "--out", "out", "--fmu-log", "all"];
        if isolate {
            args.push("--isolate");
        }
        let (status, err) = s.run(&args);
        assert!(status.success(), "isolate {isolate}: {status:?} {err}");
        assert!(err.contains("step %n%n%n"), "the message as written: {err}");
        assert_eq!(summary(&s.path("out"))["status"], "ok");
        assert_eq!(times(&s.path("out")).len(), 11);
    }
    assert!(s.leftovers().is_empty());
}

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;

#[test]
fn binary_sizes_an_fmu_reports_are_checked_before_copying() {
    // Item 7: fmi3GetBinary reporting 10^12 bytes aborted cosim ("memory allocation of
    // 1000000000000 bytes failed", SIGABRT, no output folder); a NULL pointer with size 5 was
    // recorded silently as an empty value.
    let s = Scratch::new("w4-binary");
    for (name, flag, needle) in [
        (
            "huge",
            "-DBIN_OUT_SIZE=1000000000000ull",
            "bin_out (value reference 17): the FMU reported a value of 1000000000000 bytes, more than cosim's limit of 268435456 bytes",
        ),
        ("null", "-DBIN_OUT_NULL", "bin_out (value reference 17): the FMU reported a value of 3 bytes at a NULL pointer"),
    ] {
        let fmu = cfmu3_build::build(&s.dir, name, &[flag]);
        for isolate in [false, true] {
            let out = format!("out-{name}-{isolate}");
            let mut args =
                vec!["run", fmu.to_str().unwrap(), "--out", &out, "--stop-time", "0.1", "--step", "0.01", "--output-variables", "bin_out,x"];
            if isolate {
                args.push("--isolate");
            }
            let (status, err) = s.run(&args);
            assert_eq!(status.code(), Some(1), "{name} isolate {isolate}: {status:?} {err}");
            assert!(err.contains(needle) && err.contains("fmi3GetBinary"), "{name}: {err}");
            let sum = summary(&s.path(&out));
            assert_eq!(sum["status"], "failed", "{sum}");
            assert!(sum["message"].as_str().unwrap().contains(needle), "{sum}");
        }
    }
}

/// Waits until `out/results.csv` has more than `rows` lines.
fn wait_rows(out: &std::path::Path, rows: usize) {
    wait_until("rows", || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > rows));
}

#[test]
fn sighup_stops_run_serve_and_check_like_sigterm() {
    // Item 3: SIGHUP (the terminal or SSH session closed) killed a run at once (exit 129):
    // summary.json stayed "running" and ~90 buffered rows were lost; `cosim check` wrote no
    // --json report and left its extraction folder.
    let s = Scratch::new("w4-sighup");
    // 1 ms per step of 1 ms: 10 s; stopped after a few rows.
    let fmu = s.fmu("slow", &["SLEEP_US=1000"]);
    let sys = s.system("slow.toml", &fmu, 10_000);
    for (cmd, out) in [("run", "out-run"), ("serve", "out-serve")] {
        let mut args = vec![cmd, sys.to_str().unwrap(), "--out", out];
        if cmd == "serve" {
            args.extend(["--addr", "127.0.0.1:0", "--start", "--real-time", "0.5"]);
        }
        let mut c = s.spawn(&args);
        let out = s.path(out);
        wait_rows(&out, 20);
        kill(&c, "-HUP");
        let status = wait(&mut c, Duration::from_secs(20)).expect("ended");
        let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
        assert_eq!(status.code(), Some(129), "{cmd}: {status:?} {err}");
        let sum = summary(&out);
        assert_eq!(sum["status"], "interrupted", "{cmd}: {sum}");
        assert!(sum["message"].as_str().unwrap().contains("interrupted (SIGHUP)"), "{cmd}: {sum}");
        let steps = sum["steps"].as_u64().unwrap();
        assert_eq!(times(&out).len() as u64, steps + 1, "{cmd}: every completed step's row");
    }
    // check: the report so far in --json, no extraction folder left.
    let json = s.path("report.json");
    let mut c = s.spawn(&["check", fmu.to_str().unwrap(), "--stop-time", "10", "--json", json.to_str().unwrap()]);
    wait_until("the check's extraction", || !s.leftovers().is_empty());
    std::thread::sleep(Duration::from_millis(300));
    kill(&c, "-HUP");
    let status = wait(&mut c, Duration::from_secs(20)).expect("ended");
    assert_eq!(status.code(), Some(129), "{status:?}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(report.to_string().contains("SIGHUP"), "{report}");
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}
