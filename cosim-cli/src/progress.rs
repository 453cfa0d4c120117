//! A progress bar on a terminal: an observer of `cosim run`'s (a front end; the library core
//! does not attach it, see `master/tests/layers.rs`).

use master::bonds::BondState;
use master::error::Result;
use master::observer::{Observer, Summary};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A progress bar on stderr, only when stderr is a terminal. A thread of its own draws it (at
/// most every 100 ms); the stepping thread only stores the step and time in two atomics: a
/// terminal that is slow or stopped (Ctrl-S) never holds up a step, which a paced run would
/// count as an overrun.
pub struct Progress {
    bar: Option<(Arc<ProgressState>, JoinHandle<()>)>,
}

/// What the stepping thread shares with the drawing thread.
#[derive(Default)]
struct ProgressState {
    /// Steps done.
    steps: std::sync::atomic::AtomicU64,
    /// Time reached (f64 bits).
    t: std::sync::atomic::AtomicU64,
    done: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// For `total` steps, drawn on stderr when it is a terminal.
    pub fn new(total: u64) -> Self {
        if std::io::stderr().is_terminal() {
            Self::to(Box::new(std::io::stderr()), total)
        } else {
            Self { bar: None }
        }
    }

    /// For `total` steps, drawn on `out`.
    pub fn to(mut out: Box<dyn Write + Send>, total: u64) -> Self {
        use std::sync::atomic::Ordering::Relaxed;
        let total = total.max(1);
        let state = Arc::new(ProgressState::default());
        let shared = Arc::clone(&state);
        let drawn = std::thread::Builder::new().name("cosim-progress".into()).spawn(move || {
            let mut shown = u64::MAX;
            loop {
                let done = shared.done.load(Relaxed);
                let pct = shared.steps.load(Relaxed).min(total) * 100 / total;
                if pct != shown {
                    shown = pct;
                    let bar = "#".repeat((pct / 4) as usize);
                    let t = f64::from_bits(shared.t.load(Relaxed));
                    let _ = write!(out, "\r[{bar:<25}] {pct:>3}%  t = {t:.4}");
                    let _ = out.flush();
                }
                if done {
                    let _ = writeln!(out);
                    return;
                }
                std::thread::park_timeout(std::time::Duration::from_millis(100));
            }
        });
        Self { bar: drawn.ok().map(|h| (state, h)) }
    }

    fn stop(&mut self) {
        if let Some((state, h)) = self.bar.take() {
            state.done.store(true, std::sync::atomic::Ordering::Relaxed);
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Observer for Progress {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], _b: &[BondState]) -> Result<()> {
        if let Some((state, _)) = &self.bar {
            state.t.store(t.to_bits(), std::sync::atomic::Ordering::Relaxed);
            state.steps.store(n + 1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.stop();
        Ok(())
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}
