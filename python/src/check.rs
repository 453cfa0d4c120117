//! `cosim.check` with nothing but this package: the checker runs in a process of this
//! interpreter that loads this extension module by its path ([`crate::WORKER_CODE`], serving
//! `check`), and starts every check's worker the same way (serving `check-worker`). No `cosim`
//! executable is needed, and the FMU's code never runs in the user's interpreter: an FMU that
//! crashes or hangs is a FAIL finding (its worker dies), one that kills its parent
//! (`kill(getppid())`) ends the checker's process and Python raises `CosimError`.
//!
//! Why not the `cosim` binary inside the wheel: it would more than double the wheel (2.2 MB with
//! this 5.0 MB module; the stripped binary is 7.7 MB, 3.2 MB compressed: both hold the whole
//! master) and need a second build step; this module already holds the checker and the worker,
//! and isolated runs already start workers this way.
//!
//! The checker's command line is `check OPTIONS FMU REPORT`: OPTIONS the JSON of [`Args`],
//! REPORT the file the report's JSON is written to; an error is one line `error: …` on stderr
//! and exit code 1. SIGINT/SIGTERM/SIGHUP, and the death of the Python process that started it,
//! stop it as they stop `cosim check` (the running worker is killed, the other checks are SKIPs
//! "interrupted", the report is written).

use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// The options of one check run, as `cosim.check` passes them (the flags of `cosim check`).
struct Args {
    start_values: Vec<String>,
    stop_time: Option<f64>,
    step: Option<f64>,
    steps: Option<u64>,
    timeout: f64,
    cycles: u64,
    repeat: Option<u32>,
    only: Vec<String>,
}

impl Args {
    fn parse(text: &str) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("check options: {e}"))?;
        let f = |k: &str| v.get(k).and_then(serde_json::Value::as_f64);
        let u = |k: &str| v.get(k).and_then(serde_json::Value::as_u64);
        let strings = |k: &str| -> Vec<String> {
            v.get(k)
                .and_then(serde_json::Value::as_array)
                .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        Ok(Self {
            start_values: strings("start_values"),
            stop_time: f("stop_time"),
            step: f("step"),
            steps: u("steps"),
            timeout: f("timeout").unwrap_or(60.0),
            cycles: u("cycles").unwrap_or(1000),
            repeat: u("repeat").map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
            only: strings("only"),
        })
    }
}

/// The last stop signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// A stop signal, or the Python process that started the checker is gone.
struct Stop {
    parent: u32,
}

impl master::host::StopRequest for Stop {
    fn requested(&self) -> bool {
        SIGNAL.load(Ordering::Relaxed) != 0 || std::os::unix::process::parent_id() != self.parent
    }
    fn by(&self) -> String {
        match SIGNAL.load(Ordering::Relaxed) {
            0 => "the end of the Python process that started cosim.check".into(),
            s => cosim_os::signal::name(s).unwrap_or("a signal").into(),
        }
    }
}

/// The checker process: `args` are `OPTIONS FMU REPORT` (see the module's documentation);
/// returns the exit code.
pub(crate) fn serve(py: Python<'_>, args: &[String]) -> i32 {
    match run(py, args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn run(py: Python<'_>, args: &[String]) -> Result<(), String> {
    let [options, fmu, report] = args else {
        return Err(format!("the checker takes OPTIONS FMU REPORT, not {args:?}"));
    };
    let a = Args::parse(options)?;
    let timeout = master::check::timeout_from_seconds(a.timeout).map_err(|e| format!("timeout = {e}"))?;
    // Python's own SIGINT handler would raise KeyboardInterrupt after the report is written.
    let signal = py.import("signal").map_err(|e| e.to_string())?;
    let _ = signal.call_method1("signal", (signal.getattr("SIGINT").ok(), signal.getattr("SIG_DFL").ok()));
    if let Err(e) = cosim_os::signal::on_stop(|s| SIGNAL.store(s, Ordering::Relaxed)) {
        eprintln!("warning: SIGINT/SIGTERM/SIGHUP handlers not installed: {e}");
    }
    // Processes an FMU forks (also setsid()ed ones) are adopted and killed after each worker.
    if let Err(e) = master::check::worker::reap_descendants() {
        eprintln!("warning: cosim.check cannot adopt the processes an FMU leaves behind (PR_SET_CHILD_SUBREAPER): {e}");
    }
    // What an earlier checker ended by SIGKILL left behind.
    master::fmu::archive::remove_stale_extractions();
    let sys = py.import("sys").map_err(|e| e.to_string())?;
    let python: PathBuf = sys.getattr("executable").and_then(|p| p.extract()).map_err(|e| e.to_string())?;
    let argv: Vec<String> = sys.getattr("argv").and_then(|a| a.extract()).map_err(|e| e.to_string())?;
    let module = argv.get(1).ok_or("the checker was started without its module's path")?;
    let host = master::host::Host {
        stop: Some(Arc::new(Stop { parent: std::os::unix::process::parent_id() })),
        workers: Some(crate::worker_command(python, module)),
        ..master::host::Host::default()
    };
    let opts = master::check::Options {
        start_values: a.start_values,
        stop_time: a.stop_time,
        step: a.step,
        max_steps: a.steps,
        timeout,
        cycles: a.cycles,
        only: a.only,
        repeat: a.repeat.unwrap_or(master::check::DEFAULT_REPEAT),
        worker_exe: None,
        host,
    };
    let fmu = Path::new(fmu);
    let done = py.allow_threads(|| master::check::check(fmu, &opts)).map_err(|e| e.to_string())?;
    std::fs::write(report, done.json()).map_err(|e| format!("writing the report {report}: {e}"))
}
