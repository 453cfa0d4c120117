//! The process-wide safety net of `cosim run`, for what the run loop cannot handle at a
//! communication point: a signal while an FMU call blocks, an FMU that calls `exit()`, and the
//! temporary folders and worker processes that must not outlive the run.
//!
//! - SIGINT/SIGTERM/SIGHUP set [`INTERRUPTED`]: the run stops at the next communication point and
//!   `summary.json` says "interrupted". An in-process FMU call cannot be interrupted, so a
//!   watchdog thread gives the run [`GRACE`] to reach a communication point (a second signal
//!   cuts it short); after that it writes `summary.json` ("interrupted", the time reached and
//!   which kind of call did not return), kills the worker process groups, removes the
//!   temporary folders and ends the process with 128 + the signal number. The CSV writer
//!   threads write every row within [`master::observer::FLUSH_INTERVAL`], so the rows of the
//!   completed steps are on disk by then.
//!   A stop signal the process was started with ignored stays ignored
//!   ([`cosim_os::signal::on_stop`]): `nohup cosim run …` runs on when the terminal closes. The
//!   isolated workers (`--isolate`) and `cosim check`'s workers inherit that (an ignored signal
//!   stays ignored across `exec`; they install no stop handler of their own) and run in process
//!   groups of their own, which a terminal's hangup or Ctrl-C does not reach.
//! - An FMU that calls `exit()` inside a call: the `atexit` handler sees a run in progress,
//!   lets the writer threads write the pending rows, writes `summary.json` ("failed", "an FMU
//!   ended the process with exit() …"), cleans up and ends the process with status 1.
//! - A crash in process (SIGSEGV, SIGABRT, … in an FMU): the same, best effort under an alarm,
//!   then the process dies of the signal as it would have.
//! - [`track_dir`] / [`track_group`]: extraction folders and worker process groups that the
//!   paths above (and [`master::fmu::IsolatedInstance`] on an interrupt) clean up. Nothing runs after
//!   SIGKILL: the next `cosim run` removes the extraction folders of processes that no longer
//!   exist ([`master::fmu::archive::remove_stale_extractions`]), and workers die with the master
//!   (`PR_SET_PDEATHSIG`).
//!
//! The state is global because signals, `exit()` and the process are; nothing in it is needed
//! by a library user who does not call [`install`] (the registries are cheap no-ops then).

use master::bonds::BondState;
use master::observer::{Observer, Status, Summary};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Set by SIGINT/SIGTERM/SIGHUP (after [`install`]): the run stops at the next communication point,
/// the observers finish, and `summary.json` says "interrupted".
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How long a run may take to reach a communication point after SIGINT/SIGTERM/SIGHUP before the
/// watchdog ends the process (an FMU call that does not return).
pub const GRACE: Duration = Duration::from_secs(2);

/// The last signal received (0: none) and how many.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static SIGNALS: AtomicU64 = AtomicU64::new(0);
/// Progress for the emergency summary: steps done, time reached (f64 bits).
static STEPS: AtomicU64 = AtomicU64::new(0);
static TIME: AtomicU64 = AtomicU64::new(0);
/// What the process is doing ([`Doing`] as u8), for the watchdog's message.
static DOING: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// What a run is busy with when a signal's grace period ends: the watchdog's message says
/// which (it used to blame "an FMU call" while cosim itself was still reading the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Doing {
    /// Reading and checking the input (system file, SSP, FMU descriptions): cosim's own work.
    Reading = 0,
    /// Loading FMUs and running: a call into an FMU may be what blocks.
    Running = 1,
    /// Master-side work between FMU calls that takes long (a large `cosim tune` sweep's setup).
    Working = 2,
    /// Unloading the FMUs' libraries after the run: `dlclose` runs their destructors (FMU code).
    Unloading = 3,
}

/// Says what the process does from now on (see [`Doing`]).
pub fn doing(d: Doing) {
    DOING.store(d as u8, Ordering::Relaxed);
}

/// Why the watchdog ends the process after the grace period.
fn overdue(d: u8) -> String {
    let g = GRACE.as_secs_f64();
    match d {
        0 => format!("cosim was still reading and checking the input after {g} s"),
        2 => format!("cosim's own work did not reach a point where it can stop within {g} s"),
        3 => format!("unloading the FMUs' libraries (dlclose runs their destructors) did not end within {g} s"),
        _ => format!("an FMU call did not return within {g} s"),
    }
}

/// Set by [`install`], cleared by [`disarm`]: whether the `atexit` handler and the watchdog act.
static ARMED: AtomicBool = AtomicBool::new(false);

struct State {
    /// Temporary folders to remove ([`track_dir`]).
    dirs: Vec<PathBuf>,
    /// Worker process groups to kill ([`track_group`]).
    groups: Vec<u32>,
    /// summary.json and the run's summary so far ([`running`]); `None` before the output files
    /// exist and after the final summary was written ([`finished`]).
    summary: Option<(PathBuf, Summary, Instant)>,
}

static STATE: Mutex<State> = Mutex::new(State { dirs: Vec::new(), groups: Vec::new(), summary: None });

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn on_signal(signal: i32) {
    // Async-signal-safe: atomic stores only.
    SIGNAL.store(signal, Ordering::Relaxed);
    SIGNALS.fetch_add(1, Ordering::Relaxed);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// For `cosim run`: SIGINT/SIGTERM/SIGHUP handlers, the `atexit` handler and the watchdog thread.
pub fn install() {
    ARMED.store(true, Ordering::SeqCst);
    // The stop handler only performs atomic stores (async-signal-safe).
    if let Err(e) = cosim_os::signal::on_stop(on_signal) {
        eprintln!("warning: SIGINT/SIGTERM/SIGHUP handlers not installed: {e}");
    }
    cosim_os::signal::on_crash(on_crash);
    // Beyond `ulimit -f` a write fails (the writers keep whole rows and report it) instead of
    // the process dying of SIGXFSZ with summary.json "running".
    cosim_os::signal::ignore_file_size_limit_signal();
    if let Err(e) = cosim_os::signal::at_exit(at_exit) {
        eprintln!("warning: {e}");
    }
    // A panic on the main thread ends the process through exit(): not an FMU calling exit().
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            disarm();
        }
        previous(info);
    }));
    // The watchdog must be running before an FMU library is loaded: a thread's start registers
    // thread-local destructors under the dynamic loader's lock, which a library constructor
    // that never returns (inside dlopen) holds forever. install() waits until it runs.
    let (started, running) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("cosim-watchdog".into()).spawn(move || {
        let _ = started.send(());
        watchdog()
    });
    if spawned.is_ok() {
        let _ = running.recv_timeout(Duration::from_secs(5));
    }
    // What an earlier cosim ended by SIGKILL left behind.
    master::fmu::archive::remove_stale_extractions();
}

/// Before the process exits normally: the `atexit` handler and the watchdog do nothing any more.
pub fn disarm() {
    ARMED.store(false, Ordering::SeqCst);
}

/// The signal that interrupted the run, if any (SIGINT, SIGTERM or SIGHUP).
pub fn signal() -> Option<i32> {
    Some(SIGNAL.load(Ordering::Relaxed)).filter(|s| *s != 0)
}

/// The exit status for a run ended by signal `s`: 128 + s (130 for SIGINT, 143 for SIGTERM, 129
/// for SIGHUP).
pub fn exit_code(s: i32) -> i32 {
    128 + s
}

/// The signal's name (`"SIGHUP"`), or "signal".
pub fn signal_name(s: i32) -> &'static str {
    cosim_os::signal::name(s).unwrap_or("signal")
}

/// The process crashed (in process, that is inside an FMU or the master itself). Best effort,
/// under an alarm of 2 s in case the crash left a lock held (e.g. inside malloc): let the CSV
/// writers write, record the crash in summary.json, remove the temporary folders, kill the
/// workers; then die of the same signal.
extern "C" fn on_crash(signal: i32) {
    // alarm and die_of are async-signal-safe. What `emergency` does is not (it allocates and
    // writes files); the alarm ends the process with SIGALRM if that deadlocks.
    cosim_os::signal::alarm(2);
    if ARMED.swap(false, Ordering::SeqCst) {
        if let Ok(mut st) = STATE.try_lock() {
            emergency(
                &mut st,
                Status::Failed,
                &crash_message(signal, DOING.load(Ordering::Relaxed), f64::from_bits(TIME.load(Ordering::Relaxed))),
            );
        }
    }
    cosim_os::signal::die_of(signal);
}

/// What the crash handler says of a crash by `signal` while doing `doing` at time `t`.
fn crash_message(signal: i32, doing: u8, t: f64) -> String {
    if doing == Doing::Unloading as u8 {
        return format!(
            "cosim crashed ({}) while unloading the FMUs' libraries after the run (dlclose ran a library's \
             destructors: FMU code, not an FMI call); the run had ended at t = {t}",
            signal_name(signal)
        );
    }
    format!(
        "cosim crashed ({}) at t = {t}, most likely inside an FMU call (run with --isolate to keep the master alive)",
        signal_name(signal)
    )
}

fn watchdog() {
    let mut since: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        if SIGNALS.load(Ordering::Relaxed) == 0 || !ARMED.load(Ordering::SeqCst) {
            continue;
        }
        let first = *since.get_or_insert_with(Instant::now);
        if SIGNALS.load(Ordering::Relaxed) >= 2 || first.elapsed() >= GRACE {
            let s = SIGNAL.load(Ordering::Relaxed);
            let why = if SIGNALS.load(Ordering::Relaxed) >= 2 {
                "a second signal arrived".to_owned()
            } else {
                overdue(DOING.load(Ordering::Relaxed))
            };
            emergency_exit(
                Status::Interrupted,
                &format!(
                    "interrupted ({}) at t = {}: {why}; cosim ended the process without waiting for it",
                    signal_name(s),
                    f64::from_bits(TIME.load(Ordering::Relaxed))
                ),
                exit_code(s),
            );
        }
    }
}

extern "C" fn at_exit() {
    if !ARMED.load(Ordering::SeqCst) {
        return;
    }
    // The process is exiting while cosim's run is not over: something inside an FMU call
    // called exit().
    let running = state().summary.is_some();
    let at = if running {
        format!(" at t = {}", f64::from_bits(TIME.load(Ordering::Relaxed)))
    } else {
        " while the FMUs were loaded or set up".to_owned()
    };
    emergency_exit(
        Status::Failed,
        &format!("an FMU ended the process by calling exit(){at}; the run did not complete"),
        1,
    );
}

/// [`emergency`], then ends the process with `code`.
fn emergency_exit(status: Status, message: &str, code: i32) -> ! {
    ARMED.store(false, Ordering::SeqCst);
    emergency(&mut state(), status, message);
    // Without running atexit handlers again (this may be one).
    cosim_os::signal::exit_now(code)
}

/// Writes the summary (when the output files exist), kills the worker process groups, removes
/// the temporary folders and tells the user.
fn emergency(st: &mut State, status: Status, message: &str) {
    // Every row recorded so far goes to the files first.
    writers().drain(Duration::from_secs(1));
    let mut note = String::new();
    if let Some((path, mut s, started)) = st.summary.take() {
        s.status = status;
        s.message = message.to_owned();
        s.steps = STEPS.load(Ordering::Relaxed);
        s.time = f64::from_bits(TIME.load(Ordering::Relaxed));
        s.wall_time_s = started.elapsed().as_secs_f64();
        if let Ok(text) = serde_json::to_string_pretty(&s) {
            let _ = std::fs::write(&path, text + "\n");
        }
        if let Some(dir) = path.parent() {
            note = format!(" (results up to t = {} in {})", s.time, dir.display());
        }
    }
    kill_groups(st);
    for d in st.dirs.drain(..) {
        let _ = std::fs::remove_dir_all(d);
    }
    eprintln!("error: {message}{note}");
}

fn kill_groups(st: &mut State) {
    for g in st.groups.drain(..) {
        cosim_os::process::kill_group(g);
    }
}

/// Kills the process group `pgid` (a worker and whatever it forked) with SIGKILL.
pub fn kill_group(pgid: u32) {
    master::host::kill_group(pgid);
}

/// The guard's registry of folders and worker process groups, as the library's
/// [`master::host::Cleanup`].
pub struct Registry;

impl master::host::Cleanup for Registry {
    fn track_dir(&self, dir: &Path) {
        track_dir(dir);
    }
    fn untrack_dir(&self, dir: &Path) {
        untrack_dir(dir);
    }
    fn track_group(&self, pgid: u32) {
        track_group(pgid);
    }
    fn untrack_group(&self, pgid: u32) {
        untrack_group(pgid);
    }
}

/// The level of the FMU messages `cosim` prints (`cosim run --fmu-log`; unset: `$COSIM_LOG`,
/// else warning).
static FMU_LOG: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(u8::MAX);

/// Sets which FMU messages [`host`]'s log sink prints (`--fmu-log LEVEL`).
pub fn set_fmu_log(level: master::host::LogLevel) {
    FMU_LOG.store(level as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The level set by [`set_fmu_log`], else the one `$COSIM_LOG` names (the command line's
/// environment variable: `COSIM_LOG=all cosim run …`), else warning.
pub fn fmu_log() -> master::host::LogLevel {
    use master::host::LogLevel;
    match [LogLevel::All, LogLevel::Warning, LogLevel::Error, LogLevel::None]
        .get(usize::from(FMU_LOG.load(std::sync::atomic::Ordering::Relaxed)))
    {
        Some(level) => *level,
        None => std::env::var("COSIM_LOG").ok().and_then(|v| LogLevel::parse(&v)).unwrap_or_default(),
    }
}

/// What `cosim` hands the library: SIGINT/SIGTERM/SIGHUP as the stop request ([`Signals`]), this
/// guard's cleanup registry ([`Registry`]), the CSV writers it drains, FMU messages printed on stderr at the level of
/// `--fmu-log` ([`master::host::StderrLog`]) and this executable as the worker of isolated
/// instances (it serves `cosim worker`).
pub fn host() -> master::host::Host {
    master::host::Host {
        stop: Some(std::sync::Arc::new(Signals)),
        cleanup: Some(std::sync::Arc::new(Registry)),
        writers: Some(writers().clone()),
        log: Some(std::sync::Arc::new(master::host::StderrLog(fmu_log()))),
        workers: std::env::current_exe().ok().map(|exe| master::fmu::isolated::WorkerCommand::exe(&exe)),
        busy_workers: master::host::BusyWorkers::default(),
        interface: None,
        solver: None,
    }
}

/// The CSV writer threads of this process's runs, drained before an abnormal end.
fn writers() -> &'static master::host::Writers {
    static WRITERS: std::sync::OnceLock<master::host::Writers> = std::sync::OnceLock::new();
    WRITERS.get_or_init(master::host::Writers::default)
}

/// A temporary folder to remove if the process ends abnormally.
pub fn track_dir(dir: &Path) {
    state().dirs.push(dir.to_path_buf());
}

/// The folder was removed (or handed on).
pub fn untrack_dir(dir: &Path) {
    state().dirs.retain(|d| d != dir);
}

/// A worker process group to kill if the process ends abnormally.
pub fn track_group(pgid: u32) {
    state().groups.push(pgid);
}

/// The worker is gone.
pub fn untrack_group(pgid: u32) {
    state().groups.retain(|g| *g != pgid);
}

/// The output files exist: an abnormal end writes `summary` (status and progress replaced) to
/// `path`.
pub fn running(path: &Path, summary: Summary) {
    STEPS.store(summary.steps, Ordering::Relaxed);
    TIME.store(summary.time.to_bits(), Ordering::Relaxed);
    state().summary = Some((path.to_path_buf(), summary, Instant::now()));
}

/// The final summary was written: an abnormal end from now on leaves it as it is.
pub fn finished() {
    state().summary = None;
}

/// SIGINT/SIGTERM/SIGHUP as the library's stop request ([`master::Execution::interrupt_on`]).
pub struct Signals;

impl master::host::StopRequest for Signals {
    fn requested(&self) -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }
    fn by(&self) -> String {
        signal().map_or("SIGINT/SIGTERM/SIGHUP", signal_name).into()
    }
}

/// Keeps the progress (steps, time) for an emergency summary: two atomic stores per step; once
/// the observers before it (summary.json) finished, an abnormal end leaves the files as they are.
pub struct Beacon;

impl Observer for Beacon {
    fn start(&mut self, t: f64, _v: &[f64], _b: &[BondState]) -> master::Result<()> {
        TIME.store(t.to_bits(), Ordering::Relaxed);
        Ok(())
    }
    fn step(&mut self, n: u64, t: f64, _v: &[f64], _b: &[BondState]) -> master::Result<()> {
        STEPS.store(n + 1, Ordering::Relaxed);
        TIME.store(t.to_bits(), Ordering::Relaxed);
        Ok(())
    }
    fn end_early(&mut self, t: f64, _v: &[f64], _b: &[BondState]) -> master::Result<()> {
        TIME.store(t.to_bits(), Ordering::Relaxed);
        Ok(())
    }
    fn finish(&mut self, _s: &Summary) -> master::Result<()> {
        finished();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdog_blames_an_fmu_only_while_fmus_run() {
        // Issue 30 items 4 and 17: "an FMU call did not return" while cosim parsed an SSD.
        assert!(overdue(Doing::Reading as u8).contains("reading"));
        assert!(!overdue(Doing::Reading as u8).contains("FMU"));
        assert!(overdue(Doing::Running as u8).contains("an FMU call"));
        assert!(!overdue(Doing::Working as u8).contains("FMU"));
    }
}
