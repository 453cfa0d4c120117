#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Hostile FMUs and hostile conditions around a run (issue 22, part A): an FMU call that never
//! returns while a signal arrives, an FMU calling exit(), crashing, forking or changing the working
//! directory, two runs into one folder, configuration errors next to earlier results. The FMUs
//! are built here from `hostile_runs/hostile.c` with the system's `cc`, one binary per behaviour.
//! Every run gets a private TMPDIR; each test checks that no `cosim-fmu-*` folder is left in it.

mod support;

#[path = "hostile_runs/scratch.rs"]
mod scratch;
use scratch::*;

use fmu_harness::paths;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Item 12: configuration errors leave earlier results untouched

#[test]
fn configuration_and_initialization_errors_leave_earlier_results_untouched() {
    paths::fmu("oscillator-fd-m1");
    let s = Scratch::new("config");
    let good = s.fmu("good", &["MODE=0"]);
    let sys = s.system("good.toml", &good, 10);
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out"]);
    assert!(st.success(), "{err}");
    let before = snapshot(&s.path("out"));
    // An algebraic loop (found while setting up).
    let looped = s.path("loop.toml");
    let osc = paths::fmu_dir().join("oscillator-fd-m1.fmu");
    std::fs::write(
        &looped,
        format!(
            "[simulation]\nstop = 0.1\nstep = 1e-3\n[instances.m1]\nfmu = \"{0}\"\n[instances.m2]\nfmu = \"{0}\"\n\
             [[connections]]\nfrom = \"m1.F\"\nto = \"m2.xi\"\n[[connections]]\nfrom = \"m2.F\"\nto = \"m1.xi\"\n",
            osc.display()
        ),
    )
    .unwrap();
    // An FMU refusing to leave initialization mode (found by initializing).
    let refuses = s.fmu("refuses", &["MODE=5"]);
    let refusing = s.system("refusing.toml", &refuses, 10);
    for (file, isolate, needle) in [
        (&looped, false, "algebraic loop"),
        (&looped, true, "algebraic loop"),
        (&refusing, false, "fmi2ExitInitializationMode"),
        (&refusing, true, "fmi2ExitInitializationMode"),
    ] {
        let mut args = vec!["run", file.to_str().unwrap(), "--out", "out"];
        if isolate {
            args.push("--isolate");
        }
        let (st, err) = s.run(&args);
        assert_eq!(st.code(), Some(1), "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(snapshot(&s.path("out")) == before, "{file:?} (isolate {isolate}) touched the earlier results: {err}");
    }
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 3: an FMU changing the working directory

#[test]
fn an_fmu_changing_the_working_directory_does_not_move_the_results() {
    let s = Scratch::new("chdir");
    let elsewhere = s.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let fmu = s.fmu("chdir", &["MODE=6", &format!("CHDIR_TO=\"{}\"", elsewhere.display())]);
    s.system("chdir.toml", &fmu, 10);
    // Relative paths: the input file and the output folder are resolved against the folder
    // cosim started in, whatever the FMU does to the working directory later.
    let (st, err) = s.run(&["run", "chdir.toml", "--out", "out"]);
    assert!(st.success(), "{err}");
    assert_eq!(times(&s.path("out")).len(), 11, "{err}");
    assert_eq!(summary(&s.path("out"))["status"], "ok");
    assert!(!elsewhere.join("out").exists(), "results written where the FMU moved the working directory");
    assert!(err.contains(&s.path("out").display().to_string()) || err.contains("results in out"), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 4: two runs into the same folder

#[test]
fn a_second_run_into_a_busy_output_folder_is_refused() {
    let s = Scratch::new("lock");
    // 600 steps of ≥ 5 ms: the first run is busy for 3 s at least.
    let slow = s.fmu("slow", &["MODE=0", "SLEEP_US=5000"]);
    let sys = s.system("slow.toml", &slow, 600);
    let mut first = s.spawn(&["run", sys.to_str().unwrap(), "--out", "out"]);
    wait_until("the first run's summary.json", || s.path("out/summary.json").exists());
    let second = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(["run", sys.to_str().unwrap(), "--out", s.path("out").to_str().unwrap()])
        .env("TMPDIR", s.tmpdir())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert!(err.contains("another cosim run") && err.contains(&format!("pid {}", first.id())), "{err}");
    let st = wait(&mut first, Duration::from_secs(60)).unwrap();
    assert!(st.success());
    // The first run's results are whole: 201 rows in time order, its summary.
    let t = times(&s.path("out"));
    assert_eq!(t.len(), 601);
    assert!(t.windows(2).all(|w| w[1] > w[0]));
    assert_eq!(summary(&s.path("out"))["status"], "ok");
    assert_eq!(summary(&s.path("out"))["steps"], 600);
    // Once the first run has ended, the folder is free again.
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out", "--stop-time", "0.01"]);
    assert!(st.success(), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 5: an FMU that ends the process

#[test]
fn an_fmu_calling_exit_fails_the_run_and_keeps_every_completed_row() {
    let s = Scratch::new("exit");
    let good = s.fmu("good", &["MODE=0"]);
    let (st, err) = s.run(&["run", s.system("good.toml", &good, 10).to_str().unwrap(), "--out", "out"]);
    assert!(st.success(), "{err}");
    // 300 steps of ≥ 1 ms, then exit(0) inside fmi2DoStep: fewer rows than one chunk of 512.
    let fmu = s.fmu("exit", &["MODE=7", "AT=300", "EXIT_CODE=0", "SLEEP_US=1000"]);
    let sys = s.system("exit.toml", &fmu, 1000);
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out"]);
    assert_eq!(st.code(), Some(1), "an FMU calling exit(0) must not look like success: {err}");
    assert!(err.contains("an FMU ended the process by calling exit() at t = 0.3"), "{err}");
    let sm = summary(&s.path("out"));
    assert_eq!(sm["status"], "failed", "{sm}");
    assert_eq!(sm["steps"], 300, "{sm}");
    assert!(sm["message"].as_str().unwrap().contains("exit()"), "{sm}");
    let t = times(&s.path("out"));
    assert_eq!(t.len(), 301, "the start and the 300 completed steps");
    assert!((t[300] - 0.3).abs() < 1e-12);
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

#[test]
fn an_fmu_crashing_in_process_keeps_the_rows_and_replaces_the_old_summary() {
    let s = Scratch::new("crash");
    let good = s.fmu("good", &["MODE=0"]);
    let (st, err) = s.run(&["run", s.system("good.toml", &good, 10).to_str().unwrap(), "--out", "out"]);
    assert!(st.success(), "{err}");
    assert_eq!(summary(&s.path("out"))["status"], "ok");
    let fmu = s.fmu("abort", &["MODE=8", "AT=300", "SLEEP_US=2000"]);
    let sys = s.system("abort.toml", &fmu, 1000);
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out"]);
    assert_eq!(signal_of(st), Some(6), "cosim dies of the FMU's SIGABRT: {err}");
    let sm = summary(&s.path("out"));
    assert_eq!(sm["status"], "failed", "not the earlier run's \"ok\": {sm}");
    assert!(sm["message"].as_str().unwrap().contains("SIGABRT"), "{sm}");
    // Rows reach the file within ≈ 0.2 s of wall time (≤ 100 steps of ≥ 2 ms here); the crash
    // handler waits for the writer, so in practice all of them are there.
    let t = times(&s.path("out"));
    assert!(t.len() >= 201 && t.len() <= 301, "{} rows", t.len());
    assert!(err.contains("crashed (SIGABRT)"), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 1: signals while an FMU call blocks (in process)

/// Starts `args`, waits until `ready`, sends `signal`; returns how cosim ended and its stderr.
fn interrupt(s: &Scratch, args: &[&str], ready: impl Fn() -> bool, signal: &str) -> (ExitStatus, String) {
    let mut c = s.spawn(args);
    let t0 = Instant::now();
    while !ready() {
        if t0.elapsed() > Duration::from_secs(60) || c.try_wait().unwrap().is_some() {
            let _ = c.kill();
            let _ = c.wait();
            let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
            panic!("cosim {args:?} did not reach the blocking call: {err}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Give the call time to block (it blocks forever; this only avoids signalling before).
    std::thread::sleep(Duration::from_millis(300));
    kill(&c, signal);
    let st = wait(&mut c, Duration::from_secs(60));
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    let st = st.unwrap_or_else(|| panic!("cosim {args:?} did not end within 60 s of {signal}: {err}"));
    (st, err)
}

#[test]
fn a_signal_ends_a_run_whose_fmu_call_never_returns() {
    let s = Scratch::new("hang");
    let out = s.path("out");
    // fmi2DoStep of the 51st step never returns.
    let fmu = s.fmu("hang-step", &["MODE=1", "AT=50"]);
    let sys = s.system("hang.toml", &fmu, 1000);
    let rows = || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 51);
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out"], rows, "-INT");
    assert_eq!(st.code(), Some(130), "{err}");
    assert!(err.contains("interrupted (SIGINT) at t = 0.05: an FMU call did not return within 2 s"), "{err}");
    let sm = summary(&out);
    assert_eq!((sm["status"].as_str(), sm["steps"].as_u64()), (Some("interrupted"), Some(50)), "{sm}");
    assert_eq!(times(&out).len(), 51);
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // fmi2ExitInitializationMode never returns: nothing was written yet, nothing is.
    let fmu = s.fmu("hang-init", &["MODE=2"]);
    let sys = s.system("init.toml", &fmu, 10);
    let extracted = || !s.leftovers().is_empty();
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out2"], extracted, "-TERM");
    assert_eq!(st.code(), Some(143), "{err}");
    assert!(err.contains("interrupted (SIGTERM)"), "{err}");
    assert!(!s.path("out2/results.csv").exists());
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // The library's constructor never returns (dlopen blocks).
    let fmu = s.fmu("hang-load", &["MODE=4"]);
    let sys = s.system("load.toml", &fmu, 10);
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out3"], extracted, "-INT");
    assert_eq!(st.code(), Some(130), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // fmi2FreeInstance never returns: the run completed; its summary stays.
    let fmu = s.fmu("hang-free", &["MODE=3"]);
    let sys = s.system("free.toml", &fmu, 10);
    let done = || std::fs::read_to_string(s.path("out4/summary.json")).is_ok_and(|t| t.contains("\"ok\""));
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out4"], done, "-INT");
    assert_eq!(st.code(), Some(130), "{err}");
    assert_eq!(summary(&s.path("out4"))["status"], "ok");
    assert_eq!(times(&s.path("out4")).len(), 11);
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // 10^9 sub-steps per communication step (refused unless --force): never reaches a
    // communication point.
    let fmu = s.fmu("good", &["MODE=0"]);
    let sys = s.path("substeps.toml");
    std::fs::write(
        &sys,
        format!("[simulation]\nstop = 1\nstep = 1e-3\n[instances.h]\nfmu = \"{}\"\nstep = 1e-12\n", fmu.display()),
    )
    .unwrap();
    let started = || s.path("out5/summary.json").exists();
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out5", "--force"], started, "-INT");
    assert_eq!(st.code(), Some(130), "{err}");
    assert_eq!(summary(&s.path("out5"))["status"], "interrupted");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

#[test]
fn inputs_that_are_not_regular_files_are_refused() {
    let s = Scratch::new("fifo");
    let fifo = s.path("fifo.toml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (st, err) = s.run(&["run", fifo.to_str().unwrap(), "--out", "out"]);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("fifo.toml") && err.contains("not a regular file"), "{err}");
    let (st, err) = s.run(&["run", "/dev/zero", "--out", "out"]);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("/dev/zero") && err.contains("not a regular file"), "{err}");
    // An input file (read more than once: a pipe without a writer would block the first open).
    let fmu = s.fmu("good", &["MODE=0"]);
    let (st, err) = s.run(&["run", fmu.to_str().unwrap(), "--input-file", fifo.to_str().unwrap(), "--out", "out"]);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("fifo.toml") && err.contains("not a regular file"), "{err}");
    // An FMU path in a system file.
    let sys = s.system("sys.toml", &fifo, 10);
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out"]);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("fifo.toml") && err.contains("not a regular file"), "{err}");
    assert!(!s.path("out/results.csv").exists());
}

// ---------------------------------------------------------------------------------------------
// Items 1, 2, 6: worker processes (--isolate)

#[test]
fn isolated_workers_blocked_in_a_call_are_killed_on_a_signal() {
    let s = Scratch::new("iso-hang");
    let out = s.path("out");
    let fmu = s.fmu("hang-step", &["MODE=1", "AT=50"]);
    let sys = s.system("hang.toml", &fmu, 1000);
    let rows = || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 51);
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out", "--isolate"], rows, "-INT");
    assert_eq!(st.code(), Some(130), "{err}");
    let sm = summary(&out);
    assert_eq!(sm["status"], "interrupted", "{sm}");
    assert_eq!(sm["message"], "interrupted (SIGINT) at t = 0.05", "{sm}");
    assert_eq!(times(&out).len(), 51);
    assert_eq!(s.leftovers(), Vec::<String>::new());
    // The worker's library constructor never returns.
    let fmu = s.fmu("hang-load", &["MODE=4"]);
    let sys = s.system("load.toml", &fmu, 10);
    let extracted = || !s.leftovers().is_empty();
    let (st, err) = interrupt(&s, &["run", sys.to_str().unwrap(), "--out", "out2", "--isolate"], extracted, "-TERM");
    assert_eq!(st.code(), Some(143), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

#[test]
fn a_hung_worker_is_killed_after_the_worker_timeout_and_a_killed_one_is_reported_at_once() {
    let s = Scratch::new("iso-timeout");
    let fmu = s.fmu("hang-step-t", &["MODE=1", "AT=50"]);
    let sys = s.path("timeout.toml");
    let text = format!(
        "[simulation]\nstop = 1.0\nstep = 1e-3\nisolate = true\nworker_timeout = 1.5\n[instances.h]\nfmu = \"{}\"\n",
        fmu.display()
    );
    std::fs::write(&sys, text).unwrap();
    let mut c = s.spawn(&["run", sys.to_str().unwrap(), "--out", "out"]);
    let st = wait(&mut c, Duration::from_secs(30)).expect("a hung worker must end the run after worker_timeout");
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "h: fmi2DoStep at t = 0.05: worker process did not answer within 1.5 s (worker_timeout) and was killed"
        ),
        "{err}"
    );
    assert_eq!(summary(&s.path("out"))["status"], "failed");
    assert_eq!(times(&s.path("out")).len(), 51);
    assert!(processes_with("hang-step-t.fmu").is_empty(), "the hung worker was not killed");
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // The same hang with the default timeout (60 s); the worker is killed from outside.
    let sys = s.system("kill.toml", &fmu, 1000);
    let mut c = s.spawn(&["run", sys.to_str().unwrap(), "--out", "out2", "--isolate"]);
    let rows = || std::fs::read_to_string(s.path("out2/results.csv")).is_ok_and(|t| t.lines().count() > 51);
    wait_until("the run to reach the hang", rows);
    let workers = processes_with("hang-step-t.fmu");
    assert_eq!(workers.len(), 1, "one worker process: {workers:?}");
    let killed = std::time::Instant::now();
    assert!(Command::new("kill").args(["-KILL", &workers[0].to_string()]).status().unwrap().success());
    let st = wait(&mut c, Duration::from_secs(30)).expect("a killed worker must end the run");
    // The watchdog looks every 100 ms; generous bound for a loaded CI machine (the 1 s).
    let reported = killed.elapsed();
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("h: fmi2DoStep at t = 0.05: worker process died (signal 9, SIGKILL)"), "{err}");
    assert!(reported < Duration::from_secs(5), "reported {reported:?} after the kill");
    eprintln!("killed worker reported after {reported:?}");
}

#[test]
fn a_dead_worker_is_reported_even_when_its_forked_child_holds_the_pipe() {
    let s = Scratch::new("iso-fork");
    // The worker forks a child that sleeps 60 s with the worker's pipes, then aborts.
    let fmu = s.fmu("fork", &["MODE=9", "AT=5"]);
    let sys = s.system("fork.toml", &fmu, 100);
    let mut c = s.spawn(&["run", sys.to_str().unwrap(), "--out", "out", "--isolate"]);
    let st = wait(&mut c, Duration::from_secs(30)).expect("cosim must not wait for the forked child's 60 s");
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("h: fmi2DoStep at t = 0.005: worker process died (signal 6, SIGABRT)"), "{err}");
    assert_eq!(summary(&s.path("out"))["status"], "failed");
    assert_eq!(times(&s.path("out")).len(), 6);
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

/// Two instances of one FMU, isolated, 2000 steps of ≥ 5 ms.
fn two_slow_instances(s: &Scratch) -> PathBuf {
    let fmu = s.fmu("slow", &["MODE=0", "SLEEP_US=5000"]);
    let p = s.path("two.toml");
    std::fs::write(
        &p,
        format!(
            "[simulation]\nstop = 2\nstep = 1e-3\nisolate = true\n[instances.a]\nfmu = \"{0}\"\n\
             [instances.b]\nfmu = \"{0}\"\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
            fmu.display()
        ),
    )
    .unwrap();
    p
}

#[test]
fn ctrl_c_on_an_isolated_run_is_an_interrupt_not_a_worker_death() {
    use std::os::unix::process::CommandExt;
    let s = Scratch::new("iso-ctrlc");
    let sys = two_slow_instances(&s);
    let out = s.path("out");
    // As a terminal does: the whole foreground process group gets SIGINT.
    let mut c = crate::support::cosim_stoppable()
        .args(["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("TMPDIR", s.tmpdir())
        .stderr(std::fs::File::create(s.path("stderr.txt")).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let rows = || std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 2);
    wait_until("the first steps", rows);
    // One extraction for both instances of the FMU.
    assert_eq!(s.leftovers().len(), 1, "{:?}", s.leftovers());
    let group = format!("-{}", c.id());
    assert!(Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    let st = wait(&mut c, Duration::from_secs(30)).unwrap();
    let err = std::fs::read_to_string(s.path("stderr.txt")).unwrap();
    assert_eq!(st.code(), Some(130), "{err}");
    let sm = summary(&out);
    assert_eq!(sm["status"], "interrupted", "{sm}");
    assert!(!err.contains("worker process died"), "{err}");
    let steps = sm["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 2000, "{sm}");
    assert_eq!(times(&out).len() as u64, steps + 1);
    assert_eq!(s.leftovers(), Vec::<String>::new());

    // `timeout` signals its child and its own process group.
    let out = s.path("out2");
    let o = Command::new("timeout")
        .args(["-s", "TERM", "3"])
        .arg(env!("CARGO_BIN_EXE_cosim"))
        .args(["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("TMPDIR", s.tmpdir())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(124), "timed out: {err}");
    assert_eq!(summary(&out)["status"], "interrupted", "{err}");
    assert!(err.contains("interrupted (SIGTERM)"), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

#[test]
fn a_worker_that_dies_leaves_no_temporary_files() {
    let s = Scratch::new("iso-abort");
    let fmu = s.fmu("abort", &["MODE=8", "AT=5"]);
    let sys = s.system("abort.toml", &fmu, 100);
    let (st, err) = s.run(&["run", sys.to_str().unwrap(), "--out", "out", "--isolate"]);
    assert_eq!(st.code(), Some(1), "{err}");
    assert!(err.contains("worker process died (signal 6, SIGABRT)"), "{err}");
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 11: one size limit for modelDescription.xml

#[test]
fn one_model_description_size_limit_for_info_run_and_isolated_runs() {
    let s = Scratch::new("big-md");
    let so = {
        s.fmu("good", &["MODE=0"]);
        std::fs::read(s.path("good.so")).unwrap()
    };
    // A valid description padded with a comment to just over 256 MiB, stored (not deflated).
    let fmu = s.path("big.fmu");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(true);
        z.start_file("modelDescription.xml", o).unwrap();
        let xml = description("hostile");
        let (head, tail) = xml.split_at(xml.find("</fmiModelDescription>").unwrap());
        z.write_all(head.as_bytes()).unwrap();
        z.write_all(b"<!--").unwrap();
        let pad = vec![b' '; 1 << 20];
        for _ in 0..257 {
            z.write_all(&pad).unwrap();
        }
        z.write_all(b"-->").unwrap();
        z.write_all(tail.as_bytes()).unwrap();
        z.start_file("binaries/linux64/hostile.so", o).unwrap();
        z.write_all(&so).unwrap();
        z.finish().unwrap();
    }
    let sys = s.system("big.toml", &fmu, 10);
    let limit = "more than cosim's limit of 268435456 bytes (256 MiB) for a model description";
    for args in [
        vec!["info", fmu.to_str().unwrap()],
        vec!["run", fmu.to_str().unwrap(), "--out", "out"],
        vec!["run", sys.to_str().unwrap(), "--out", "out"],
        vec!["run", sys.to_str().unwrap(), "--out", "out", "--isolate"],
    ] {
        let (st, err) = s.run(&args);
        assert_eq!(st.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("big.fmu") && err.contains(limit), "{args:?}: {err}");
    }
    assert_eq!(s.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// SIGKILL: nothing runs after it; the workers die with the master, the next run cleans up

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
fn after_sigkill_workers_die_and_the_next_run_removes_the_leftovers() {
    let s = Scratch::new("sigkill");
    let fmu = s.fmu("hang-step-k", &["MODE=1", "AT=50"]);
    let sys = s.system("hang.toml", &fmu, 1000);
    for (isolate, out) in [(false, "out"), (true, "out-isolated")] {
        let mut args = vec!["run", sys.to_str().unwrap(), "--out", out];
        if isolate {
            args.push("--isolate");
        }
        let out = s.path(out);
        let mut c = s.spawn(&args);
        wait_until("the run to block", || {
            std::fs::read_to_string(out.join("results.csv")).is_ok_and(|t| t.lines().count() > 51)
        });
        kill(&c, "-KILL");
        c.wait().unwrap();
        // The worker, blocked in fmi2DoStep, dies with the master.
        wait_until("the worker to die", || processes_with("hang-step-k.fmu").is_empty());
        assert_eq!(summary(&out)["status"], "running", "nothing could write after SIGKILL");
        assert_eq!(s.leftovers().len(), 1, "the master's extraction stays: {:?}", s.leftovers());
        // The next run removes the folder of the process that no longer exists, and keeps one
        // whose process lives (this test's).
        let alive = s.tmpdir().join(format!("cosim-fmu-{}-0-0", std::process::id()));
        std::fs::create_dir_all(&alive).unwrap();
        let good = s.fmu("good", &["MODE=0"]);
        let (st, err) = s.run(&["run", s.system("good.toml", &good, 10).to_str().unwrap(), "--out", "out2"]);
        assert!(st.success(), "{err}");
        assert_eq!(s.leftovers(), vec![alive.file_name().unwrap().to_string_lossy().into_owned()]);
        std::fs::remove_dir(&alive).unwrap();
    }
}
