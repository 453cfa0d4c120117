//! A request to stop a run, handed to the library by the program that embeds it: the library
//! keeps no process globals of its own. `cosim` hands its SIGINT/SIGTERM flag
//! (`guard::Signals`); a flag of your own (`Arc<AtomicBool>`) works the same; without one a run
//! is never interrupted.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the user asked the run to stop, checked at every communication point (and between
/// the passes of iterative coupling).
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
