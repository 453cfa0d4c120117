//! What the program embedding the library hands it (the library keeps no process globals of its
//! own): a [`Host`] with a stop request, a cleanup registry, a list of CSV writer threads to
//! drain, a sink for the FMUs' log messages ([`FmuLog`]; the library prints nothing itself) and
//! how to start worker processes. `cosim` hands its signal guard's (`cosim_cli::guard::host`:
//! SIGINT/SIGTERM, removal of extraction folders and worker processes, and the rows written, if
//! the process ends abnormally); `Host::default()` is never stopped and registers nothing (Python,
//! tests, a program of your own; a flag of yours is an `Arc<AtomicBool>` stop request).
//!
//! Handed in through [`crate::fmu::FmuCache::with_host`] (extractions, and the workers of
//! isolated instances, which take it from their FMU's [`crate::fmu::Archive`]), and
//! [`crate::Execution::interrupt_on`] (taken from the cache by `Execution::from_builder`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Whether the user asked the run to stop, checked at every communication point (and between
/// the passes of iterative coupling, and while waiting for a worker process).
pub trait StopRequest: Send + Sync {
    /// A stop was asked for.
    fn requested(&self) -> bool;
    /// How it was asked for, for the run's message (e.g. "SIGINT").
    fn by(&self) -> String {
        "a stop request".into()
    }
}

impl StopRequest for AtomicBool {
    fn requested(&self) -> bool {
        self.load(Ordering::Relaxed)
    }
}

/// What the library creates and removes itself (extraction folders, worker process groups),
/// told to the embedding program so that an abnormal end of the process removes them too.
pub trait Cleanup: Send + Sync {
    /// A temporary folder now exists.
    fn track_dir(&self, dir: &Path);
    /// The folder was removed (or handed on).
    fn untrack_dir(&self, dir: &Path);
    /// A worker process group now runs.
    fn track_group(&self, pgid: u32);
    /// The worker is gone.
    fn untrack_group(&self, pgid: u32);
}

/// Something that writes in the background (a CSV writer thread of results.csv or bonds.csv)
/// and can be asked to write everything it holds now.
pub trait Drain: Send + Sync {
    /// Asks it to write and flush every pending row now, without waiting; `false`: it could not
    /// be asked now (a lock is held), ask again.
    fn request(&self) -> bool;
    /// Whether it has written everything asked for (or has stopped).
    fn drained(&self) -> bool;
}

/// Background writers ([`Drain`]), for a program that must end abnormally while its run loop is
/// stuck in an FMU call: `cosim`'s signal guard holds one list in its [`Host`] and drains it
/// before it ends the process. Cheap to clone (one list shared); the library keeps no such list
/// of its own.
#[derive(Clone, Default)]
pub struct Writers(Arc<Mutex<Vec<Weak<dyn Drain>>>>);

impl std::fmt::Debug for Writers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writers").finish_non_exhaustive()
    }
}

impl Writers {
    /// A writer to drain (held weakly: a finished run's writers drop out).
    pub fn add(&self, writer: Weak<dyn Drain>) {
        let mut writers = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        writers.retain(|w| w.strong_count() > 0);
        writers.push(writer);
    }

    /// Asks every writer to write and flush all rows recorded so far, and waits until they did
    /// (at most `limit`). Only `try_lock`s: the stuck thread might hold a lock (a crash), then
    /// this gives up after `limit`.
    pub fn drain(&self, limit: Duration) {
        let t0 = Instant::now();
        let Ok(writers) = self.0.try_lock().map(|w| w.iter().filter_map(Weak::upgrade).collect::<Vec<_>>()) else {
            return;
        };
        for w in &writers {
            while t0.elapsed() < limit && !w.request() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        for w in &writers {
            while t0.elapsed() < limit && !w.drained() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

/// Which FMU messages a [`FmuLog`] wants, most verbose first (`cosim run --fmu-log LEVEL`,
/// Python `cosim.fmu_log(LEVEL)`). Messages are counted whatever the level (`summary.json`
/// `instances[].fmu_warnings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    /// Every message; instances are created with `loggingOn = true`.
    All,
    /// Messages of status Warning or worse (the default).
    #[default]
    Warning,
    /// Error or worse.
    Error,
    /// None.
    None,
}

impl LogLevel {
    /// The level names, most verbose first.
    pub const NAMES: [&'static str; 4] = ["all", "warning", "error", "none"];

    /// The level named `name` (any case).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "all" => Some(Self::All),
            "warning" => Some(Self::Warning),
            "error" => Some(Self::Error),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The least severe FMI status (0 OK … 4 Fatal, the same in FMI 2.0 and 3.0) it passes on.
    pub fn lowest_status(self) -> i32 {
        match self {
            Self::All => 0,
            Self::Warning => 1,
            Self::Error => 3,
            Self::None => i32::MAX,
        }
    }
}

/// Where the FMUs' log messages go (and the master's own notes about an FMU call, such as a
/// warning status without a message). Called from the FMU's logger callback, on any thread the
/// FMU calls it on: an implementation must not panic.
pub trait FmuLog: Send + Sync {
    /// Which messages it wants ([`FmuLog::message`] gets only those).
    fn level(&self) -> LogLevel;
    /// A message of instance `instance`, category `category` (`cosim` for the master's notes).
    fn message(&self, instance: &str, category: &str, message: &str);
}

/// The sink of `cosim` and the Python package: each message on stderr as `[instance] category:
/// message`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StderrLog(pub LogLevel);

impl FmuLog for StderrLog {
    fn level(&self) -> LogLevel {
        self.0
    }
    fn message(&self, instance: &str, category: &str, message: &str) {
        use std::io::Write as _;
        // Ignore a failing stderr: logging must never unwind into the FMU.
        let _ = writeln!(std::io::stderr().lock(), "[{instance}] {category}: {message}");
    }
}

/// The handle: a stop request, a cleanup registry, the writers to drain, an FMU log sink and a
/// worker command, each optional; cheap to clone.
#[derive(Clone, Default)]
pub struct Host {
    /// Asked at every communication point; `None`: never.
    pub stop: Option<Arc<dyn StopRequest>>,
    /// Told of every extraction folder and worker process; `None`: nobody.
    pub cleanup: Option<Arc<dyn Cleanup>>,
    /// Told of the CSV writer threads of [`crate::execution::file_observers_for`], which the
    /// program drains before it ends abnormally; `None`: nobody.
    pub writers: Option<Writers>,
    /// Gets the FMUs' messages; `None`: they are counted (and the last one is named in errors)
    /// but go nowhere.
    pub log: Option<Arc<dyn FmuLog>>,
    /// How to start the worker process of an isolated instance (`cosim` names itself, Python its
    /// interpreter); `None`: `$COSIM_WORKER_EXE`, else isolated instances are refused saying so.
    pub workers: Option<WorkerCommand>,
    /// The worker processes of this host's isolated instances busy at the moment (shared by its
    /// clones; the shared-memory channels' waiting policy reads it).
    pub busy_workers: BusyWorkers,
    /// Which interface of an FMU that has both to load (`--interface`); `None`: Co-Simulation,
    /// Model Exchange for an FMU that has only that.
    pub interface: Option<Interface>,
    /// The integrator of Model Exchange instances; `None`: [`crate::ode::Options::default`].
    pub solver: Option<crate::ode::Options>,
}

/// The FMI interface an FMU is loaded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interface {
    /// Co-Simulation: the FMU integrates itself (`fmi2DoStep`).
    CoSimulation,
    /// Model Exchange: the master integrates the FMU ([`crate::fmu::MeInstance`]).
    ModelExchange,
}

impl Interface {
    /// The interface an FMU that declares Co-Simulation (`cs`) and/or Model Exchange (`me`) is
    /// loaded for when `asked` for one (`None`: Co-Simulation, Model Exchange for an FMU that has
    /// only that); `None` when it does not declare the one asked for, or neither.
    pub fn used(asked: Option<Self>, cs: bool, me: bool) -> Option<Self> {
        match (asked, cs, me) {
            (Some(Self::CoSimulation) | None, true, _) => Some(Self::CoSimulation),
            (Some(Self::ModelExchange) | None, _, true) => Some(Self::ModelExchange),
            _ => None,
        }
    }

    /// `me`/`ModelExchange` or `cs`/`CoSimulation` (FMPy's `--interface-type` names), any case.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "me" | "modelexchange" | "model-exchange" | "model_exchange" => Some(Self::ModelExchange),
            "cs" | "cosimulation" | "co-simulation" | "co_simulation" => Some(Self::CoSimulation),
            _ => None,
        }
    }
}

/// How to start the worker process of an isolated instance (the library's
/// `fmu::isolated::worker_command` reads it): `program ARGS… worker --extracted DIR --shm-fd N -- FMU NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// An absolute path (a worker is never looked up in `$PATH` or the working directory).
    pub program: PathBuf,
    /// Arguments before `worker` (e.g. an interpreter's `-c CODE`).
    pub args: Vec<std::ffi::OsString>,
}

impl WorkerCommand {
    /// An executable that serves `worker` itself (the `cosim` binary).
    pub fn exe(program: &Path) -> Self {
        Self { program: program.to_path_buf(), args: Vec::new() }
    }
}

/// A count of busy worker processes, shared by the clones of one [`Host`] (a new count for each
/// `Host::default()`).
#[derive(Clone, Default, Debug)]
pub struct BusyWorkers(pub(crate) Arc<std::sync::atomic::AtomicUsize>);

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("stop", &self.stop.is_some())
            .field("cleanup", &self.cleanup.is_some())
            .field("writers", &self.writers.is_some())
            .field("log", &self.log.as_ref().map(|l| l.level()))
            .field("workers", &self.workers)
            .field("busy_workers", &self.busy_workers.0.load(Ordering::Relaxed))
            .finish()
    }
}

impl Host {
    /// The level of the log sink ([`LogLevel::None`] without one).
    pub fn log_level(&self) -> LogLevel {
        self.log.as_ref().map_or(LogLevel::None, |l| l.level())
    }
    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.requested())
    }
    /// [`Cleanup::track_dir`].
    pub fn track_dir(&self, dir: &Path) {
        if let Some(c) = &self.cleanup {
            c.track_dir(dir);
        }
    }
    /// [`Cleanup::untrack_dir`].
    pub fn untrack_dir(&self, dir: &Path) {
        if let Some(c) = &self.cleanup {
            c.untrack_dir(dir);
        }
    }
    /// [`Cleanup::track_group`].
    pub fn track_group(&self, pgid: u32) {
        if let Some(c) = &self.cleanup {
            c.track_group(pgid);
        }
    }
    /// [`Cleanup::untrack_group`].
    pub fn untrack_group(&self, pgid: u32) {
        if let Some(c) = &self.cleanup {
            c.untrack_group(pgid);
        }
    }
}

/// Kills the process group `pgid` (a worker and whatever it forked) with SIGKILL.
pub fn kill_group(pgid: u32) {
    cosim_os::process::kill_group(pgid);
}
