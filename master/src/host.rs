//! What the program embedding the library hands it (the library keeps no process globals of its
//! own): a [`Host`] with a stop request, a cleanup registry and a list of CSV writer threads to
//! drain. `cosim` hands its signal guard's (`cosim_cli::guard::host`: SIGINT/SIGTERM, removal of
//! extraction folders and worker processes, and the rows written, if the
//! process ends abnormally); `Host::default()` is never stopped and registers nothing (Python,
//! tests, a program of your own; a flag of yours is an `Arc<AtomicBool>` stop request).
//!
//! Handed in through [`crate::fmu::FmuCache::with_host`] (extractions, and the workers of
//! isolated instances, which take it from their FMU's [`crate::fmu::Archive`]), and
//! [`crate::Execution::interrupt_on`] (taken from the cache by `Execution::from_builder`).

use std::path::Path;
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

/// The handle: a stop request, a cleanup registry and the writers to drain, each optional;
/// cheap to clone.
#[derive(Clone, Default)]
pub struct Host {
    /// Asked at every communication point; `None`: never.
    pub stop: Option<Arc<dyn StopRequest>>,
    /// Told of every extraction folder and worker process; `None`: nobody.
    pub cleanup: Option<Arc<dyn Cleanup>>,
    /// Told of the CSV writer threads of [`crate::execution::file_observers_for`], which the
    /// program drains before it ends abnormally; `None`: nobody.
    pub writers: Option<Writers>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("stop", &self.stop.is_some())
            .field("cleanup", &self.cleanup.is_some())
            .field("writers", &self.writers.is_some())
            .finish()
    }
}

impl Host {
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
