#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `nohup cosim run …`: a process started with SIGHUP ignored keeps it ignored (POSIX; what shells,
//! `make` and daemons do), so closing the terminal or SSH session does not stop the run. cosim
//! installed its stop handler for SIGHUP whatever it inherited: the run stopped (exit 129,
//! summary "interrupted"). The default disposition is `robustness_wave4.rs`'s
//! `sighup_stops_run_serve_and_check_like_sigterm` (a hangup stops the run in order).

mod support;

#[path = "hostile_runs/scratch.rs"]
mod scratch;
use scratch::*;

use cosim_os::signal::{SIGHUP, SIGINT, SIGTERM};
use std::time::Duration;

/// The processes whose parent is `pid` (from `/proc/*/stat`).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            // pid (comm) state ppid …: comm may hold spaces and parentheses.
            std::fs::read_to_string(format!("/proc/{p}/stat")).ok().is_some_and(|s| {
                s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// The signals `pid` ignores (the `SigIgn` mask of `/proc/PID/status`).
fn ignored(pid: u32) -> Vec<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).unwrap().trim();
    let mask = u64::from_str_radix(mask, 16).unwrap();
    (1..=64).filter(|s| mask & (1 << (s - 1)) != 0).collect()
}

#[test]
fn a_run_started_with_sighup_ignored_runs_on_through_a_hangup() {
    let s = Scratch::new("nohup-run");
    // 1 ms per step of 1 ms: about 1 s, hung up after 20 rows.
    let fmu = s.fmu("slow", &["SLEEP_US=1000"]);
    let sys = s.system("slow.toml", &fmu, 1000);
    for isolate in [false, true] {
        let out = format!("out-{isolate}");
        let mut args = vec!["run", sys.to_str().unwrap(), "--out", &out];
        if isolate {
            args.push("--isolate");
        }
        let mut c = s.spawn_ignoring(&args, &[SIGHUP]);
        let out = s.path(&out);
        wait_until("rows", || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 20));
        assert!(ignored(c.id()).contains(&SIGHUP), "cosim keeps SIGHUP ignored: {:?}", ignored(c.id()));
        for s in [SIGINT, SIGTERM] {
            assert!(!ignored(c.id()).contains(&s), "{s}: only what was ignored is");
        }
        kill(&c, "-HUP");
        if isolate {
            // The worker inherits the ignored SIGHUP; a hangup sent to its process group too (as
            // `kill -HUP -- -PGID` or a session's end would) does not end it either.
            let workers = children(c.id());
            assert_eq!(workers.len(), 1, "one worker: {workers:?}");
            assert!(ignored(workers[0]).contains(&SIGHUP), "the worker ignores SIGHUP: {:?}", ignored(workers[0]));
            let group = format!("-{}", workers[0]);
            assert!(std::process::Command::new("kill").args(["-HUP", "--", &group]).status().unwrap().success());
        }
        std::thread::sleep(Duration::from_millis(100));
        kill(&c, "-HUP");
        let status = wait(&mut c, Duration::from_secs(60)).expect("ended");
        let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
        assert_eq!(status.code(), Some(0), "isolate {isolate}: {status:?} {err}");
        assert!(!err.contains("SIGHUP"), "{err}");
        let sum = summary(&out);
        assert_eq!(sum["status"], "ok", "isolate {isolate}: {sum}");
        assert_eq!(sum["steps"], 1000, "{sum}");
        let t = times(&out);
        assert_eq!(t.len(), 1001, "isolate {isolate}: every row");
        assert!((t[1000] - 1.0).abs() < 1e-9, "{}", t[1000]);
    }
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

#[test]
fn sigterm_still_stops_a_run_started_with_sighup_ignored() {
    // Only the ignored signal is left alone: SIGTERM stops the run in order (exit 143).
    let s = Scratch::new("nohup-term");
    let fmu = s.fmu("slow", &["SLEEP_US=1000"]);
    let sys = s.system("slow.toml", &fmu, 10_000);
    let mut c = s.spawn_ignoring(&["run", sys.to_str().unwrap(), "--out", "out"], &[SIGHUP]);
    let out = s.path("out");
    wait_until("rows", || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 20));
    kill(&c, "-HUP");
    std::thread::sleep(Duration::from_millis(100));
    kill(&c, "-TERM");
    let status = wait(&mut c, Duration::from_secs(20)).expect("ended");
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    assert_eq!(status.code(), Some(143), "{status:?} {err}");
    let sum = summary(&out);
    assert_eq!(sum["status"], "interrupted", "{sum}");
    assert!(sum["message"].as_str().unwrap().contains("interrupted (SIGTERM)"), "{sum}");
    assert_eq!(times(&out).len() as u64, sum["steps"].as_u64().unwrap() + 1, "every completed step's row");
}

#[test]
fn a_check_started_with_sighup_ignored_runs_on_through_a_hangup() {
    // `nohup cosim check …`: the checker and its workers (own process groups) go on; the report
    // is the full one.
    let s = Scratch::new("nohup-check");
    let fmu = s.fmu("slow", &["SLEEP_US=1000"]);
    let json = s.path("report.json");
    let args = ["check", fmu.to_str().unwrap(), "--stop-time", "0.3", "--json", json.to_str().unwrap()];
    let mut c = s.spawn_ignoring(&args, &[SIGHUP]);
    wait_until("the check's extraction", || !s.leftovers().is_empty());
    std::thread::sleep(Duration::from_millis(300));
    for w in children(c.id()) {
        let _ = std::process::Command::new("kill").args(["-HUP", "--", &format!("-{w}")]).status();
    }
    kill(&c, "-HUP");
    let status = wait(&mut c, Duration::from_secs(120)).expect("ended");
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    // 1: the hostile FMU's description fails its check (as without the hangup).
    assert_eq!(status.code(), Some(1), "{status:?} {err}");
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(!report.contains("SIGHUP") && !report.contains("interrupted"), "{report}");
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let verdict = |id: &str| {
        report["findings"].as_array().unwrap().iter().find(|f| f["check"] == id).map(|f| f["verdict"].clone())
    };
    for id in ["run", "threads", "cost"] {
        assert_eq!(verdict(id), Some("PASS".into()), "{id}: {report}");
    }
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}
