#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Replay of a live run (issue 44): a scripted operator drives the crane's valve reference
//! through the live server (JSON lines: a value before the start, changes while it runs, a
//! release back to the table); `cosim run SYSTEM --replay OUT` reproduces the run from its
//! results.csv alone — results.csv and bonds.csv bit for bit — and refuses what it cannot
//! replay before anything runs.

use live_common::*;
use std::path::Path;
use std::time::Duration;

mod live_common;
mod support;
use support::{cosim, tmp};

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_recorded_operator_session_replays_bit_for_bit() {
    let dir = tmp("replay");
    let sys = operator(&dir);
    let live = dir.join("live");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1.2",
        "--real-time",
        "2",
        "--paused",
        "--out",
        live.to_str().unwrap(),
    ]);
    let mut c = Lines::connect(&run.addr);
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": 6.5}}"#)["ok"], true);
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    for (wait, msg) in [
        (120, r#"{"set": {"hyd.U_ref": -3.25}}"#),
        (60, r#"{"set": {"hyd.U_ref": 9.0}}"#),
        (90, r#"{"release": "hyd.U_ref"}"#),
        (80, r#"{"set": {"hyd.U_ref": 0.1}}"#),
    ] {
        std::thread::sleep(Duration::from_millis(wait));
        assert_eq!(c.ask(msg)["ok"], true, "{msg}");
    }
    drop(c);
    run.wait();
    // The session is in results.csv: several distinct operator values.
    let rows = spool(&live);
    let mut seen: Vec<f64> = rows.iter().map(|r| r.1).collect();
    seen.dedup();
    assert!(seen.len() >= 4, "the operator's values: {seen:?}");

    let again = dir.join("again");
    let o = cosim(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1.2",
        "--replay",
        live.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("live: dashboard"), "a replay is not served: {stderr}");
    for f in ["results.csv", "bonds.csv"] {
        assert!(bytes(&live.join(f)) == bytes(&again.join(f)), "{f} differs between the live run and its replay");
    }

    // What cannot be replayed is refused before the run: another step, a missing column.
    let bad = dir.join("bad");
    let o = cosim(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1.2",
        "--step",
        "2e-3",
        "--replay",
        live.to_str().unwrap(),
        "--out",
        bad.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a replay needs every communication point recorded"), "{stderr}");
    assert!(!bad.join("results.csv").exists());
    let text = std::fs::read_to_string(live.join("results.csv")).unwrap().replace("hyd.U_ref", "hyd.other");
    let edited = dir.join("edited.csv");
    std::fs::write(&edited, text).unwrap();
    let o =
        cosim(&["run", sys.to_str().unwrap(), "--replay", edited.to_str().unwrap(), "--out", bad.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no column \"hyd.U_ref\" (the live input)"), "{stderr}");
}
