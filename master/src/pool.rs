//! Persistent worker threads for Jacobi steps: started once, synchronised per step through
//! atomics (spin first, park only when idle for long), so a step costs no allocation and, while
//! the run is busy, no system call.

use crate::error::{MasterError, Result};
use crate::fmu::Slave;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

const IDLE: u32 = 0;
const POSTED: u32 = 1;
const DONE: u32 = 2;
const QUIT: u32 = 3;

/// How long a waiting side spins before it yields or parks.
const SPIN: Duration = Duration::from_micros(200);

/// A job: one doStep of one instance.
struct Job {
    slave: SlavePtr,
    t: f64,
    h: f64,
    result: Result<()>,
    seconds: f64,
}

/// A raw pointer to an instance lent to a worker for one step.
#[derive(Clone, Copy)]
struct SlavePtr(*mut Box<dyn Slave>);

// SAFETY: `Slave: Send`; the pointer is only dereferenced by the worker between the main
// thread's POSTED store (Release) and the worker's DONE store (Release), while the main thread
// does not touch that instance and waits for DONE (Acquire) before using it again.
unsafe impl Send for SlavePtr {}

struct Shared {
    state: AtomicU32,
    job: Mutex<Option<Job>>,
}

struct Worker {
    shared: Arc<Shared>,
    thread: Thread,
    handle: Option<JoinHandle<()>>,
}

/// Worker threads that each step one instance per macro step.
pub struct Pool {
    workers: Vec<Worker>,
}

fn wait_for(state: &AtomicU32, want: u32, park: bool) -> u32 {
    let start = Instant::now();
    loop {
        let s = state.load(Ordering::Acquire);
        if s == want || s == QUIT {
            return s;
        }
        if start.elapsed() < SPIN {
            std::hint::spin_loop();
        } else if park {
            thread::park_timeout(Duration::from_millis(1));
        } else {
            thread::yield_now();
        }
    }
}

impl Pool {
    /// A pool with `n` workers.
    pub fn new(n: usize) -> std::io::Result<Self> {
        let main = thread::current();
        let mut workers = Vec::with_capacity(n);
        for k in 0..n {
            let shared = Arc::new(Shared { state: AtomicU32::new(IDLE), job: Mutex::new(None) });
            let s = Arc::clone(&shared);
            let main_thread = main.clone();
            let handle = thread::Builder::new().name(format!("cosim-worker-{k}")).spawn(move || loop {
                if wait_for(&s.state, POSTED, true) == QUIT {
                    return;
                }
                if let Ok(mut slot) = s.job.lock() {
                    if let Some(job) = slot.as_mut() {
                        let t0 = Instant::now();
                        // SAFETY: see `SlavePtr`: the main thread lent this instance exclusively
                        // for this step and waits for DONE before touching it again.
                        let slave = unsafe { &mut *job.slave.0 };
                        let (t, h) = (job.t, job.h);
                        job.result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slave.do_step(t, h)))
                            .unwrap_or_else(|_| {
                                Err(MasterError::Diverged {
                                    time: t,
                                    message: "fmi2DoStep panicked in a worker thread".into(),
                                })
                            });
                        job.seconds = t0.elapsed().as_secs_f64();
                    }
                }
                s.state.store(DONE, Ordering::Release);
                main_thread.unpark();
            })?;
            let thread = handle.thread().clone();
            workers.push(Worker { shared, thread, handle: Some(handle) });
        }
        Ok(Self { workers })
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Whether the pool has no workers.
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// Steps the instances `indices` (distinct) of `slaves` over [t, t + h]: the first on the
    /// calling thread, the next ones on the workers (one each), any further ones here too.
    /// Appends (index, seconds inside doStep, result) to `out` (cleared first).
    pub fn step(
        &self,
        slaves: &mut [Box<dyn Slave>],
        indices: &[usize],
        t: f64,
        h: f64,
        out: &mut Vec<(usize, f64, Result<()>)>,
    ) {
        out.clear();
        let Some((&first, rest)) = indices.split_first() else { return };
        let base = slaves.as_mut_ptr();
        let n = slaves.len();
        let mut posted = 0;
        for (w, &i) in self.workers.iter().zip(rest) {
            if i >= n || i == first {
                continue;
            }
            // SAFETY: i < n, so the pointer is inside `slaves`; indices are distinct, so no two
            // threads get the same instance, and `slaves` stays mutably borrowed by this call
            // until every worker reported DONE below.
            let ptr = SlavePtr(unsafe { base.add(i) });
            if let Ok(mut slot) = w.shared.job.lock() {
                *slot = Some(Job { slave: ptr, t, h, result: Ok(()), seconds: 0.0 });
            }
            w.shared.state.store(POSTED, Ordering::Release);
            w.thread.unpark();
            posted += 1;
        }
        let run_here = |i: usize, out: &mut Vec<(usize, f64, Result<()>)>| {
            if i < n {
                let t0 = Instant::now();
                // SAFETY: i < n and no worker holds instance i (it was not posted).
                let slave = unsafe { &mut *base.add(i) };
                let r = slave.do_step(t, h);
                out.push((i, t0.elapsed().as_secs_f64(), r));
            }
        };
        run_here(first, out);
        for (w, &i) in self.workers.iter().zip(rest).take(posted) {
            let s = wait_for(&w.shared.state, DONE, true);
            let job = w.shared.job.lock().ok().and_then(|mut slot| slot.take());
            w.shared.state.store(IDLE, Ordering::Release);
            match (s, job) {
                (DONE, Some(job)) => out.push((i, job.seconds, job.result)),
                _ => out.push((
                    i,
                    0.0,
                    Err(MasterError::Diverged { time: t, message: "a worker thread stopped".into() }),
                )),
            }
        }
        for &i in rest.iter().skip(posted) {
            run_here(i, out);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for w in &self.workers {
            w.shared.state.store(QUIT, Ordering::Release);
            w.thread.unpark();
        }
        for w in &mut self.workers {
            if let Some(h) = w.handle.take() {
                let _ = h.join();
            }
        }
    }
}
