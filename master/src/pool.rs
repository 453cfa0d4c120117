//! Persistent worker threads for Jacobi steps: started once, synchronised per step through
//! atomics (spin first, park only when idle for long), so a step costs no allocation and, while
//! the run is busy, no system call.

use crate::coupling::{Coupling, InstanceId};
use crate::error::{MasterError, Result};
use crate::fmu::FmuInstance;
use crate::system::Parallel;
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
    instance: InstancePtr,
    t: f64,
    h: f64,
    result: Result<()>,
    seconds: f64,
}

/// A raw pointer to an instance lent to a worker for one step.
#[derive(Clone, Copy)]
struct InstancePtr(*mut Box<dyn FmuInstance>);

// SAFETY: `FmuInstance: Send`; the pointer is only dereferenced by the worker between the main
// thread's POSTED store (Release) and the worker's DONE store (Release), while the main thread
// does not touch that instance and waits for DONE (Acquire) before using it again.
unsafe impl Send for InstancePtr {}

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
                        // SAFETY: see `InstancePtr`: the main thread lent this instance exclusively
                        // for this step and waits for DONE before touching it again.
                        let instance = unsafe { &mut *job.instance.0 };
                        let (t, h) = (job.t, job.h);
                        job.result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| instance.do_step(t, h)))
                            .unwrap_or_else(|_| {
                                Err(MasterError::Thread {
                                    instance: instance.name().to_owned(),
                                    time: t,
                                    message: "fmi2DoStep panicked in the worker thread".into(),
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

    /// Steps the instances `indices` (distinct) of `instances` over [t, t + h]: the first on the
    /// calling thread, the next ones on the workers (one each), any further ones here too.
    /// Appends (index, seconds inside doStep, result) to `out` (cleared first).
    pub fn step(
        &self,
        instances: &mut [Box<dyn FmuInstance>],
        indices: &[usize],
        t: f64,
        h: f64,
        out: &mut Vec<(usize, f64, Result<()>)>,
    ) {
        out.clear();
        let Some((&first, rest)) = indices.split_first() else { return };
        let base = instances.as_mut_ptr();
        let n = instances.len();
        let mut posted = 0;
        for (w, &i) in self.workers.iter().zip(rest) {
            if i >= n || i == first {
                continue;
            }
            // SAFETY: i < n, so the pointer is inside `instances`; indices are distinct, so no two
            // threads get the same instance, and `instances` stays mutably borrowed by this call
            // until every worker reported DONE below.
            let ptr = InstancePtr(unsafe { base.add(i) });
            if let Ok(mut slot) = w.shared.job.lock() {
                *slot = Some(Job { instance: ptr, t, h, result: Ok(()), seconds: 0.0 });
            }
            w.shared.state.store(POSTED, Ordering::Release);
            w.thread.unpark();
            posted += 1;
        }
        let run_here = |i: usize, out: &mut Vec<(usize, f64, Result<()>)>| {
            if i < n {
                let t0 = Instant::now();
                // SAFETY: i < n and no worker holds instance i (it was not posted).
                let instance = unsafe { &mut *base.add(i) };
                let r = instance.do_step(t, h);
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
                    Err(MasterError::Thread {
                        instance: String::new(),
                        time: t,
                        message: "its worker thread stopped (the FMU panicked or the thread died)".into(),
                    }),
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

/// Jacobi's use of worker threads: `parallel = "on"` always, `"off"` never, `"auto"` after 20
/// sequential steps when at least two instances each cost more than a thread hand-over.
pub struct Threads {
    parallel: Parallel,
    active: bool,
    pool: Option<Pool>,
    results: Vec<(usize, f64, Result<()>)>,
    /// Instances stepped by the workers (one doStep per macro step) and those sub-stepped here.
    parallel_jobs: Vec<usize>,
    sequential_jobs: Vec<InstanceId>,
}

impl Threads {
    /// Jobs from the coupling: instances that step in one call go to the workers.
    pub fn new(parallel: Parallel, c: &Coupling) -> Self {
        let n = c.len();
        Self {
            parallel,
            active: parallel == Parallel::On,
            pool: None,
            results: Vec::with_capacity(n),
            parallel_jobs: (0..n).filter(|i| c.steps_in_one_call(InstanceId::new(*i))).collect(),
            sequential_jobs: c.instances().filter(|i| !c.steps_in_one_call(*i)).collect(),
        }
    }

    /// Whether steps run on the workers now.
    pub fn active(&self) -> bool {
        self.active
    }

    /// Steps every instance over [t, t + H]: those that step in one call on the workers (their
    /// inputs were set already, so the workers only call fmi2DoStep), the others here.
    pub fn step(&mut self, c: &mut Coupling, instances: &mut [Box<dyn FmuInstance>], t: f64) -> Result<()> {
        let h = c.step_size();
        if self.pool.is_none() {
            let workers = self
                .parallel_jobs
                .len()
                .saturating_sub(1)
                .min(std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1).max(1));
            self.pool = Some(Pool::new(workers).map_err(|e| MasterError::Thread {
                instance: c.names().join(", "),
                time: t,
                message: format!("cannot start worker threads: {e}"),
            })?);
        }
        let mut results = std::mem::take(&mut self.results);
        if let Some(pool) = &self.pool {
            pool.step(instances, &self.parallel_jobs, t, h, &mut results);
        }
        for (i, dt, r) in results.drain(..) {
            r.map_err(|e| match e {
                MasterError::Thread { time, message, .. } => {
                    MasterError::Thread { instance: c.names().get(i).cloned().unwrap_or_default(), time, message }
                }
                other => other,
            })?;
            c.book_step(InstanceId::new(i), Some(dt));
        }
        self.results = results;
        for k in 0..self.sequential_jobs.len() {
            c.step_instance(self.sequential_jobs[k], instances, t)?;
        }
        Ok(())
    }

    /// `auto` decides after step 20: threads pay when at least two instances each cost more
    /// than the ~50 µs a hand-over to a worker costs.
    pub fn after_step(&mut self, n: u64, c: &Coupling) {
        if self.parallel == Parallel::Auto && n == 20 {
            let mut costs = c.mean_step_seconds();
            costs.sort_by(|a, b| b.total_cmp(a));
            self.active = costs.len() >= 2 && costs[1] > 50e-6;
        }
    }
}
