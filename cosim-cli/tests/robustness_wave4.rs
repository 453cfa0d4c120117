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

/// The rows of `results.csv` are whole: the file ends with a line end and every row has the
/// header's number of fields, each a number.
fn assert_whole_rows(out: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(text.ends_with('\n'), "the last row is complete: {:?}", &text[text.len().saturating_sub(80)..]);
    let mut lines = text.lines();
    let width = lines.next().unwrap().split(',').count();
    let mut n = 0;
    for l in lines {
        let fields: Vec<&str> = l.split(',').collect();
        assert_eq!(fields.len(), width, "{l}");
        assert!(fields.iter().all(|f| f.parse::<f64>().is_ok()), "{l}");
        n += 1;
    }
    n
}

#[test]
fn a_full_disk_leaves_whole_rows_and_a_final_summary() {
    // Item 10: results.csv ended mid-number, summary.json stayed "running", summary.json.tmp
    // was left.
    let s = Scratch::new("w4-disk-full");
    let fmu = s.fmu("plain", &[]);
    let sys = s.system("plain.toml", &fmu, 20_000);
    // The file size limit (`ulimit -f`, 64 blocks): EFBIG (cosim ignores SIGXFSZ).
    let out = s.path("out-ulimit");
    let script =
        format!("ulimit -f 64 && exec {} run {} --out {}", env!("CARGO_BIN_EXE_cosim"), sys.display(), out.display());
    let o = std::process::Command::new("sh").arg("-c").arg(&script).env("TMPDIR", s.tmpdir()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{:?} {err}", o.status);
    // results.csv or bonds.csv, whichever writer thread reaches the limit first.
    assert!(err.contains(".csv: file too large for the file size limit (ulimit -f)"), "{err}");
    let sum = summary(&out);
    assert_eq!(sum["status"], "failed", "{sum}");
    assert!(sum["message"].as_str().unwrap().contains("the file ends with its last complete row"), "{sum}");
    let rows = assert_whole_rows(&out);
    assert!(rows > 100 && rows < 20_001, "{rows}");
    assert!(!out.join("summary.json.tmp").exists());
    // A real full disk: a 64 KiB tmpfs (needs root; skipped with a note otherwise).
    let mnt = s.path("small-disk");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !mounted {
        eprintln!("note: no tmpfs could be mounted (not root): the ENOSPC half of this test is skipped");
        return;
    }
    let out = mnt.join("out");
    let (status, err) = s.run(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let sum = std::fs::read_to_string(out.join("summary.json"));
    let rows = std::panic::catch_unwind(|| assert_whole_rows(&out));
    let tmp_left = out.join("summary.json.tmp").exists();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    assert_eq!(status.code(), Some(1), "{status:?} {err}");
    assert!(err.contains(".csv: disk full (No space left on device"), "{err}");
    let sum: serde_json::Value = serde_json::from_str(&sum.unwrap()).unwrap();
    assert_eq!(sum["status"], "failed", "{sum}");
    assert!(sum["message"].as_str().unwrap().contains("disk full"), "{sum}");
    assert!(rows.is_ok(), "whole rows on the full disk");
    assert!(!tmp_left, "summary.json.tmp left");
}

/// `cosim check FMU --only IDS --json`, in `s`'s folder with its TMPDIR: (exit code, verdict and
/// evidence per check, stderr).
fn check(s: &Scratch, fmu: &std::path::Path, only: &str) -> (Option<i32>, Vec<(String, String, String)>, String) {
    let json = s.path("check.json");
    let _ = std::fs::remove_file(&json);
    let (status, err) = s.run(&["check", fmu.to_str().unwrap(), "--only", only, "--json", json.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let findings = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let g = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (g("check"), g("verdict"), g("evidence"))
        })
        .collect();
    (status.code(), findings, err)
}

#[test]
fn check_verdicts_cannot_be_forged_or_lost_and_files_stay_in_the_workers_folder() {
    let s = Scratch::new("w4-check");
    // Item 13: a result line written to the inherited protocol pipe and _exit(0) in
    // fmi2Instantiate gave PASS on every dynamic check; _exit(0) alone must not pass either.
    for (name, mode) in [("forge", "MODE=11"), ("exit", "MODE=16")] {
        let fmu = s.fmu(name, &[mode]);
        let (code, findings, err) = check(&s, &fmu, "run,reset");
        assert_eq!(code, Some(1), "{name}: {err}");
        assert_eq!(findings.len(), 2, "{findings:?}");
        for (id, verdict, evidence) in &findings {
            assert_eq!(verdict, "FAIL", "{name} {id}: {evidence}");
            assert!(evidence.contains("exited (exit code 0) without answering"), "{name} {id}: {evidence}");
            if name == "forge" {
                assert!(evidence.contains("without the worker's secret"), "{evidence}");
            }
        }
    }
    // Item 14: evidence quoting a 16 MiB log line was a FAIL "the worker's result cannot be
    // read (EOF while parsing…)" (64 KiB line limit) instead of its verdict, WARN.
    let fmu = s.fmu("huge-log", &["MODE=14"]);
    let (_, findings, err) = check(&s, &fmu, "run");
    let (_, verdict, evidence) = &findings[0];
    assert_eq!(verdict, "WARN", "{evidence:.300} {err:.300}");
    assert!(evidence.contains("wwww") && evidence.contains("[cut: "), "{:.300}", evidence);
    // Item 8 (the folder): files the FMU writes land in the worker's own folder, removed after.
    let fmu = s.fmu("writer", &["MODE=13"]);
    let (code, _, err) = check(&s, &fmu, "run,load");
    assert_eq!(code, Some(0), "{err}");
    assert!(!s.path("fmu-was-here.txt").exists(), "the FMU wrote into the user's working directory");
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

#[test]
fn a_daemon_an_fmu_forks_during_check_is_killed() {
    // Item 8: a child the FMU forks that calls setsid() survived the worker's process group
    // kill (121–244 processes alive after an all-PASS report, one writing a file 90 s later).
    let s = Scratch::new("w4-daemon");
    let pid_file = s.path("daemon.pid");
    let fmu = s.fmu("daemon", &["MODE=12", &format!("PID_FILE=\"{}\"", pid_file.display())]);
    let (code, findings, err) = check(&s, &fmu, "load");
    assert!(code.is_some(), "{err}");
    assert!(!findings.is_empty());
    std::thread::sleep(Duration::from_millis(300));
    let Ok(pid) = std::fs::read_to_string(&pid_file) else {
        return; // killed before it could write its pid
    };
    let pid: u32 = pid.trim().parse().unwrap();
    // Gone (killed and reaped by cosim check), not a zombie nor adopted by init.
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    if let Ok(stat) = &alive {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("the FMU's daemon {pid} outlived cosim check: {stat}");
    }
}

#[test]
fn low_items_settings_with_line_breaks_and_out_onto_a_file_are_refused_clearly() {
    let s = Scratch::new("w4-low");
    let fmu = s.fmu("plain", &[]);
    let sys = s.system("plain.toml", &fmu, 10);
    // `--set $'stop=1\nstep=2'` silently dropped `step`.
    let (status, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out", "--set", "stop=1\nstep=2"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("holds a line break: give one setting per --set"), "{err}");
    // `--out` onto a file said only "File exists (os error 17)".
    std::fs::write(s.path("a-file"), "x").unwrap();
    let (status, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "a-file"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("a-file: --out names a file, not a folder"), "{err}");
}

#[test]
fn low_items_settings_are_checked_alone_named_as_given_and_printed_short() {
    let s = Scratch::new("w4-low-settings");
    let fmu = s.fmu("plain", &[]);
    let sys = s.system("plain.toml", &fmu, 10);
    let sys = sys.to_str().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let (status, err) = s.run(args);
        assert_eq!(status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
        assert!(!s.path("out").join("summary.json").exists(), "{args:?}: nothing written");
    };
    // `record_every=18446744073709551615` was "invalid type: string".
    refused(
        &["run", sys, "--out", "out", "--set", "record_every=18446744073709551615"],
        "--set record_every: 18446744073709551615 is outside the integers a setting takes",
    );
    // `--set start=nan` was blamed on `--start-time`; the flag is named when it gave the value.
    refused(&["run", sys, "--out", "out", "--set", "start=nan"], "plain.toml: --set start: NaN is not a number");
    refused(&["run", sys, "--out", "out", "--start-time", "nan"], "plain.toml: --start-time: NaN is not a number");
    refused(&["run", fmu.to_str().unwrap(), "--out", "out", "--set", "start=nan"], "--set start: NaN is not a number");
    refused(
        &["run", sys, "--out", "out", "--set", "stop=1.0005"],
        "--set stop: stop - start = 1.0005 s is not a whole",
    );
    // `--print-settings` printed `real_time = nan` and `record_every = 0` with exit 0.
    refused(&["run", sys, "--print-settings", "--set", "real_time=nan"], "--set real_time: NaN is not a number");
    refused(&["run", sys, "--print-settings", "--set", "record_every=0"], "--set record_every: must be at least 1");
    refused(&["run", sys, "--print-settings", "--set", "ecco.rtol=nan"], "--set ecco.rtol: NaN is not a number");
    refused(&["run", sys, "--print-settings", "--real-time", "0"], "--real-time: 0 must be a positive number");
    // ... and a file's value with the file's key and line.
    std::fs::write(
        s.path("zero.toml"),
        format!("[simulation]\nrecord_every = 0\n{}", &std::fs::read_to_string(sys).unwrap()["[simulation]\n".len()..]),
    )
    .unwrap();
    refused(&["run", "zero.toml", "--print-settings"], "zero.toml:2: simulation.record_every: must be at least 1");
    // A start list of 1e6 values quoted back made a 7.9 MB message: cut in the middle (2e5 here: a
    // 1 MB message, quick in a debug build).
    let zeros = vec!["0.0"; 200_000].join(", ");
    let text = std::fs::read_to_string(sys).unwrap();
    std::fs::write(s.path("long.toml"), format!("{text}start = {{ u = [{zeros}] }}\n")).unwrap();
    let (status, err) = s.run(&["run", "long.toml", "--out", "out"]);
    assert_eq!(status.code(), Some(1), "{:.300}", err);
    assert!(err.contains("instances.h.start.u") && err.contains(" bytes cut] "), "{:.300}", err);
    assert!(err.len() < 80_000, "{} bytes", err.len());
    // 1e300 was printed as 301 digits.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(["run", sys, "--print-settings", "--set", "max_residual_energy=1e300", "--set", "ecco.rtol=1e-7"])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(printed.contains("max_residual_energy = 1e300\n") && printed.contains("rtol = 1e-7\n"), "{printed}");
    let back: toml::Table = toml::from_str(&printed).unwrap();
    assert_eq!(back["simulation"]["max_residual_energy"].as_float(), Some(1e300), "{printed}");
}

#[test]
fn a_crash_in_a_library_destructor_is_not_blamed_on_fmi2_free_instance() {
    // Low item: the library's destructor (run by dlclose) aborts; `cosim check` said "worker
    // process died (signal 6, SIGABRT) in fmi2FreeInstance", `cosim run` "most likely inside an
    // FMU call".
    let s = Scratch::new("w4-dtor");
    let fmu = s.fmu("dtor", &["MODE=15"]);
    let (_, findings, err) = check(&s, &fmu, "load");
    let (_, verdict, evidence) = &findings[0];
    assert_eq!(verdict, "FAIL", "{evidence} {err}");
    assert!(evidence.contains("SIGABRT) in unloading the binary (dlclose: the library's destructors)"), "{evidence}");
    assert!(!evidence.contains("fmi2FreeInstance"), "{evidence}");
    let sys = s.system("dtor.toml", &fmu, 10);
    let (status, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out"]);
    assert_eq!(signal_of(status), Some(6), "{status:?} {err}");
    assert!(
        err.contains("while unloading the FMUs' libraries after the run (dlclose ran a library's destructors"),
        "{err}"
    );
    // The run itself had ended: its results and summary stay.
    assert_eq!(summary(&s.path("out"))["status"], "ok");
    assert_eq!(times(&s.path("out")).len(), 11);
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

#[test]
fn unaddressed_arrays_are_named_when_asked_for_and_noted_otherwise() {
    // Low items: `--output-variables sarr` for a String array said "no variable sarr", and a
    // run dropped such outputs without a note; a UInt64 start of 5e9 gave the false error "has
    // no start value" (`cosim info`'s validation) and no start in the table.
    let s = Scratch::new("w4-arrays");
    let xml = cfmu3_build::XML.replace(
        "    <Binary name=\"blob_arr\"",
        "    <String name=\"sarr\" valueReference=\"30\" causality=\"output\" variability=\"discrete\"><Dimension start=\"2\"/></String>\n    <Binary name=\"blob_arr\"",
    );
    assert_ne!(xml, cfmu3_build::XML);
    let fmu = cfmu3_build::build_with(&s.dir, "arrays", &[], &xml);
    let fmu = fmu.to_str().unwrap();
    let (status, err) =
        s.run(&["run", fmu, "--out", "out", "--stop-time", "0.1", "--step", "0.1", "--output-variables", "x,sarr"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("--output-variables x,sarr: sarr cannot be recorded: cosim does not address this array variable <String name=\"sarr\"> (line ")
            && err.contains("String and Binary arrays are not supported"),
        "{err}"
    );
    let (status, err) = s.run(&["run", fmu, "--out", "out", "--stop-time", "0.1", "--step", "0.1"]);
    assert!(status.success(), "{err}");
    assert!(err.contains("not in results.csv (cosim does not address them, `cosim info` lists them): array variable <String name=\"sarr\">"), "{err}");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cosim")).args(["info", fmu]).output().unwrap();
    let info = String::from_utf8_lossy(&o.stdout);
    assert!(!info.contains("has no start value"), "{info}");
    let big = info.lines().find(|l| l.trim_start().starts_with("big ")).unwrap();
    assert!(big.trim_end().ends_with("5000000000"), "{big}");
}
