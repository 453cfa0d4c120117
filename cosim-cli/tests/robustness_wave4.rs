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
