#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Paced runs (`cosim run --real-time`): absolute deadlines (no drift), overruns and the
//! lateness limit, the statistics of summary.json and timing.csv. The assertions are on what
//! the pacer recorded (lateness, deadlines) and on the run's wall time against the simulated
//! time, not on how fast any code is.

use fmu_harness::paths;
use std::path::{Path, PathBuf};

mod support;
use support::{cosim, tmp};

/// One trivial FMU, `stop` s at step `step`.
fn trivial(dir: &Path, stop: f64, step: f64, extra: &str) -> PathBuf {
    let p = dir.join("trivial.toml");
    let text = format!(
        "[simulation]\nstop = {stop}\nstep = {step}\n{extra}\n[instances.a]\nfmu = \"{}\"\n[outputs]\nvariables = [\"a.y\"]\n",
        paths::fmu("testing-faulty").display()
    );
    std::fs::write(&p, text).unwrap();
    p
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// timing.csv rows: (step, time, deadline, step time, lateness, release).
fn timing(out: &Path) -> Vec<(u64, f64, f64, f64, f64, f64)> {
    let text = std::fs::read_to_string(out.join("timing.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "step,time,deadline_s,step_time_s,lateness_s,monotonic_s,cpu_s,run_delay_s,minflt,majflt,nvcsw,nivcsw,\
             release_s"
        )
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
                f[12].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_two_second_run_at_factor_one_takes_two_seconds_and_step_10000_meets_its_deadline() {
    let dir = tmp("rt-2s");
    // H = 0.2 ms: 10,000 steps in 2 s. A pacer that slept H after each step (relative
    // deadlines) would drift by the oversleep of every one of them (≥ 50 µs × 10,000 = 0.5 s).
    let sys = trivial(&dir, 2.0, 2e-4, "");
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--real-time", "--timing", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    let wall = s["wall_time_s"].as_f64().unwrap();
    assert!((wall - 2.0).abs() <= 0.1, "2 s at factor 1 took {wall} s (±5 % allowed)");
    let rt = &s["real_time"];
    assert_eq!(rt["factor"], 1.0);
    assert_eq!(rt["steps"], 10_000);
    let q: Vec<f64> = ["step_time_median_s", "step_time_p99_s", "step_time_p999_s", "step_time_max_s"]
        .iter()
        .map(|k| rt[k].as_f64().unwrap())
        .collect();
    assert!(q.windows(2).all(|w| w[0] <= w[1]) && q[0] > 0.0, "quantiles {q:?}");
    let rows = timing(&out);
    assert_eq!(rows.len(), 10_000);
    // The deadline of step n is n·H/factor from the origin, exactly (not a running sum).
    let (n, t, deadline, _, late, _) = rows[9_999];
    assert_eq!((n, t, deadline), (10_000, 2.0, 2.0));
    // Met without drift: the last step is as punctual as a typical one (the machine may be
    // loaded: a stall of a few ms is allowed, drift of the order of 0.5 s is not).
    assert!(late < 0.05, "step 10,000 reached its point {late} s after its deadline");
    // Every deadline is n·H from the origin (to rounding of t), none a sum of step durations.
    for (k, r) in rows.iter().enumerate() {
        assert!((r.2 - (k + 1) as f64 * 2e-4).abs() < 1e-12, "deadline of step {}: {}", k + 1, r.2);
    }
    let mut lateness: Vec<f64> = rows.iter().map(|r| r.4).collect();
    lateness.sort_by(f64::total_cmp);
    let max = rt["max_lateness_s"].as_f64().unwrap();
    assert!((lateness[9_999] - max).abs() < 1e-9, "summary max lateness {max} vs timing.csv {}", lateness[9_999]);
    // Catching up: every overrun is a step ending after its deadline, counted once: the late
    // rows of timing.csv, recounted from when each step began and how long it took (the
    // lateness column cannot tell: a step that waited is a little late too, by its oversleep).
    // Within 2 ns of the deadline the printed seconds cannot decide; such rows are rare.
    let overruns = rt["overruns"].as_u64().unwrap();
    let end_minus_deadline = |r: &(u64, f64, f64, f64, f64, f64)| r.5 + r.3 - r.2;
    let late = rows.iter().filter(|r| end_minus_deadline(r) > 2e-9).count() as u64;
    let undecided = rows.iter().filter(|r| end_minus_deadline(r).abs() <= 2e-9).count() as u64;
    assert!(
        (late..=late + undecided).contains(&overruns),
        "summary.json: {overruns} overruns; timing.csv: {late} steps ended after their deadline ({undecided} within 2 ns)"
    );
    // A step that overran did not wait: it moved on late by at least its overrun.
    for r in rows.iter().filter(|r| end_minus_deadline(r) > 2e-9) {
        assert!(
            r.4 >= end_minus_deadline(r) - 2e-9,
            "step {}: lateness {} < overrun {}",
            r.0,
            r.4,
            end_minus_deadline(r)
        );
    }
}

#[test]
fn a_factor_of_four_runs_four_times_faster_than_real_time() {
    let dir = tmp("rt-4x");
    let sys = trivial(&dir, 2.0, 1e-3, "real_time = 4.0");
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    let wall = s["wall_time_s"].as_f64().unwrap();
    assert!((wall - 0.5).abs() <= 0.025, "2 s at factor 4 took {wall} s");
    assert_eq!(s["real_time"]["factor"], 4.0);
}

#[test]
fn a_run_that_falls_too_far_behind_ends_with_a_message() {
    let dir = tmp("rt-late");
    // Factor 1e6 at H = 1 ms: a deadline every nanosecond, which no step meets; the limit
    // of 1 ms is passed after some thousand steps (each some µs late more).
    let sys = trivial(&dir, 100.0, 1e-3, "");
    let out = dir.join("out");
    let o = cosim(&[
        "run",
        sys.to_str().unwrap(),
        "--real-time",
        "1e6",
        "--max-lateness",
        "1e-3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("max_lateness = 1 ms") && err.contains("after its deadline"), "{err}");
    let s = summary(&out);
    assert_eq!(s["status"], "failed");
    assert!(s["message"].as_str().unwrap().contains("real time"), "{s}");
    let rt = &s["real_time"];
    let steps = rt["steps"].as_u64().unwrap();
    assert!(steps < 100_000 && steps == rt["overruns"].as_u64().unwrap(), "{rt}");
    assert!(rt["max_lateness_s"].as_f64().unwrap() > 1e-3);
    // Everything up to the end is on disk.
    let rows = std::fs::read_to_string(out.join("results.csv")).unwrap().lines().count();
    assert!(rows as u64 >= steps, "{rows} rows for {steps} steps");
}

#[test]
fn bad_real_time_settings_name_the_key_and_value() {
    let dir = tmp("rt-bad");
    let sys = trivial(&dir, 1.0, 1e-3, "real_time = -2.0");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("trivial.toml") && err.contains("simulation.real_time") && err.contains("-2"), "{err}");
    let sys = trivial(&dir, 1.0, 1e-3, "max_lateness = 0.0");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("simulation.max_lateness") && !err.contains("panicked"), "{err}");
    let sys = trivial(&dir, 1.0, 1e-3, "");
    let o = cosim(&["run", sys.to_str().unwrap(), "--timing", "--out", dir.join("o").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--timing") && err.contains("--real-time"), "{err}");
}

#[test]
fn priority_is_raised_or_a_note_says_why_not() {
    let dir = tmp("rt-prio");
    let sys = trivial(&dir, 0.2, 1e-3, "real_time_priority = true");
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rt = &summary(&out)["real_time"];
    assert_eq!(rt["factor"], 1.0);
    // What the OS permits, read independently of the pacer: without CAP_SYS_NICE and with
    // RLIMIT_RTPRIO below 50, SCHED_FIFO must be refused and the note must say so; without
    // CAP_IPC_LOCK and with a locked-memory limit below the process's size, mlockall too.
    let notes: Vec<String> =
        rt["notes"].as_array().map_or(Vec::new(), |n| n.iter().map(|n| n.as_str().unwrap().to_owned()).collect());
    let refusals: Vec<&String> =
        notes.iter().filter(|n| n.contains("priority not raised") || n.contains("memory not locked")).collect();
    let (caps, rtprio, memlock) = permissions();
    let has = |bit: u32| caps >> bit & 1 == 1;
    let fifo_note = notes.iter().any(|n| n.contains("scheduling priority not raised (SCHED_FIFO"));
    if !has(CAP_SYS_NICE) && rtprio < 50 {
        assert!(
            fifo_note,
            "SCHED_FIFO cannot be permitted (no CAP_SYS_NICE, RLIMIT_RTPRIO {rtprio}) yet no note: {notes:?}"
        );
    }
    if !has(CAP_IPC_LOCK) && memlock < 1 << 20 {
        assert!(
            notes.iter().any(|n| n.contains("memory not locked (mlockall")),
            "mlockall under {memlock} B: {notes:?}"
        );
    }
    if has(CAP_SYS_NICE) && has(CAP_IPC_LOCK) {
        // Permitted by capability: a refusal can only come from elsewhere (a container's
        // real-time budget) and must then name the OS's reason.
        assert!(refusals.iter().all(|n| n.contains(": ") && n.contains('(')), "{notes:?}");
    }
    // Every note is one of the two refusals or the timer-slack one, each with the OS's error.
    for n in &notes {
        assert!(
            n.starts_with("memory not locked (mlockall: ")
                || n.starts_with("scheduling priority not raised (SCHED_FIFO: ")
                || n.starts_with("timer slack not lowered (prctl: "),
            "unexpected note {n:?}"
        );
    }
}

const CAP_IPC_LOCK: u32 = 14;
const CAP_SYS_NICE: u32 = 23;

/// This process's effective capabilities (/proc/self/status `CapEff`), RLIMIT_RTPRIO and
/// RLIMIT_MEMLOCK (bytes; u64::MAX when unlimited) from /proc/self/limits: the test's process
/// has the permissions of the `cosim` it starts.
fn permissions() -> (u64, u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:")).unwrap().trim();
    let caps = u64::from_str_radix(caps, 16).unwrap();
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let soft = |name: &str| {
        let line = limits.lines().find(|l| l.starts_with(name)).unwrap();
        let v = line[name.len()..].split_whitespace().next().unwrap();
        if v == "unlimited" {
            u64::MAX
        } else {
            v.parse().unwrap()
        }
    };
    (caps, soft("Max realtime priority"), soft("Max locked memory"))
}

#[test]
fn the_real_time_settings_travel_in_the_ssp_annotation() {
    let dir = tmp("rt-ssp");
    let sys = trivial(&dir, 0.5, 1e-3, "real_time = 2.0\nmax_lateness = 0.25");
    let ssp = dir.join("trivial.ssp");
    let o = cosim(&["export-ssp", sys.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out");
    let o = cosim(&["run", ssp.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["real_time"]["factor"], 2.0, "{s}");
    // Paced (an unpaced run takes ~10 ms): never faster than 0.5 s / 2 − 5 %; the upper bound
    // leaves room for start-up on a loaded machine (0.27 s was seen at load 11).
    let wall = s["wall_time_s"].as_f64().unwrap();
    assert!((0.2375..=0.35).contains(&wall), "0.5 s at factor 2 took {wall} s");
}

#[test]
fn a_paced_run_touches_no_new_memory_page_after_its_first_step() {
    // Without --rt-priority (no mlockall): the timing table, the histogram, the CSV writers'
    // chunks and the stack are written once before the first step, so the stepping thread
    // takes no page fault while it runs (the timing table alone used to take one every 64
    // steps: 313 in 20,000). timing.csv's minflt counts the stepping thread's minor faults.
    let dir = tmp("rt-faults");
    let sys = paths::root().join("scenarios/crane-pub3.toml");
    let text = std::fs::read_to_string(&sys).unwrap().replace("../target/fmu", &paths::fmu_dir().display().to_string());
    let sys = dir.join("crane.toml");
    std::fs::write(&sys, text).unwrap();
    let out = dir.join("out");
    let o = cosim(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "3",
        "--real-time",
        "10",
        "--timing",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("timing.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == "minflt").unwrap();
    let rows: Vec<(u64, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[k].parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 3000);
    let faults: Vec<(u64, u64)> = rows.into_iter().filter(|(step, n)| *step > 1 && *n > 0).collect();
    assert!(
        faults.iter().map(|f| f.1).sum::<u64>() <= 3,
        "page faults after the first step (step, faults): {faults:?}"
    );
}

/// A terminal that takes nothing until released (a stopped terminal: Ctrl-S), then records.
struct StoppedTerminal {
    gate: std::sync::mpsc::Receiver<()>,
    open: bool,
    seen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl std::io::Write for StoppedTerminal {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.open {
            let _ = self.gate.recv();
            self.open = true;
        }
        self.seen.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stopped_terminal_does_not_hold_up_the_steps() {
    use cosim_cli::progress::Progress;
    use master::observer::Observer;
    let (release, gate) = std::sync::mpsc::channel();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let term = StoppedTerminal { gate, open: false, seen: std::sync::Arc::clone(&seen) };
    let mut bar = Progress::to(Box::new(term), 20_000);
    // Every step returns while the terminal takes nothing (the progress bar's first line is
    // stuck in it): the stepping thread never writes to the terminal itself.
    for n in 0..20_000u64 {
        bar.step(n, (n + 1) as f64 * 1e-3, &[], &[]).unwrap();
    }
    assert!(seen.lock().unwrap().is_empty(), "nothing reached the stopped terminal");
    release.send(()).unwrap();
    drop(bar);
    let text = String::from_utf8(seen.lock().unwrap().clone()).unwrap();
    assert!(text.ends_with("100%  t = 20.0000\n"), "the last line: {text:?}");
}

/// A factor so small that the first deadline lies beyond what a `Duration` holds (1e-300:
/// 1e297 s; it panicked, exit 101) or centuries away (1e-9) is a run that waits until it is
/// stopped: SIGINT ends the wait at once, the run stops at its communication point with
/// exit 130 and says so, and the guard's watchdog (which would blame "an FMU call" after 2 s)
/// is not needed.
#[test]
fn a_paced_wait_of_centuries_ends_on_sigint_without_a_panic() {
    let dir = tmp("rt-centuries");
    let sys = trivial(&dir, 1.0, 1e-3, "");
    for factor in ["1e-300", "1e-9"] {
        let out = dir.join(format!("o{factor}"));
        let child = support::cosim_stoppable()
            .args(["run", sys.to_str().unwrap(), "--real-time", factor, "--out", out.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The first step is done (results.csv begun) and the pacer waits for its deadline.
        let started = std::time::Instant::now();
        while !out.join("results.csv").exists() {
            assert!(started.elapsed().as_secs() < 30, "--real-time {factor}: no results.csv within 30 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let signalled = std::time::Instant::now();
        std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
        let o = child.wait_with_output().unwrap();
        let waited = signalled.elapsed().as_secs_f64();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "--real-time {factor}: {err}");
        assert!(err.contains("interrupted (SIGINT) at t = 0.001"), "--real-time {factor}: {err}");
        assert!(!err.contains("panicked") && !err.contains("an FMU call"), "--real-time {factor}: {err}");
        assert!(waited < 1.5, "--real-time {factor}: {waited} s from SIGINT to the end (the watchdog takes 2 s)");
        assert_eq!(summary(&out)["status"], "interrupted", "--real-time {factor}");
    }
}
