//! Paced runs (`cosim run --real-time [FACTOR]`, `[simulation] real_time`): each communication
//! point t_{n+1} waits for its absolute wall-clock deadline origin + (t_{n+1} − t_0)/FACTOR, so
//! that the simulation keeps pace with the clock (FACTOR 1: real time; 2: twice as fast) without
//! drift: deadlines are computed from the origin, never by adding up step durations.
//!
//! The [`Pacer`] is called by [`crate::Execution`] at the start and at the end of every
//! communication step (the one run loop; nothing here copies it). Waiting sleeps until shortly
//! before the deadline and spins the rest (the margin adapts to how late the OS wakes us), and
//! never sleeps past a deadline. A step that ends after its deadline is an *overrun*: the next
//! step starts at once, and the run catches up as far as the following steps are faster than
//! H/FACTOR. With a lateness limit (`--max-lateness`, `[simulation] max_lateness`) a run that
//! falls further behind ends with status `failed` and a message saying so.
//!
//! Per-step wall times go into a fixed histogram (32 bins per octave: quantiles within 3 %)
//! and, on request, a preallocated table for `timing.csv`: nothing is allocated per step.

pub mod os;

use crate::error::{MasterError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a run is paced.
#[derive(Debug, Clone, PartialEq)]
pub struct RealTime {
    /// Simulated seconds per wall-clock second (1: real time).
    pub factor: f64,
    /// End the run when a communication point is reached later than this after its deadline (s).
    pub max_lateness: Option<f64>,
    /// Lock the process's memory (`mlockall`) and run the stepping thread under `SCHED_FIFO`
    /// where the OS permits; a note otherwise, never a failure.
    pub priority: bool,
    /// Write every step's timing here (`timing.csv`).
    pub timing_csv: Option<PathBuf>,
}

impl RealTime {
    /// Real time scaled by `factor`, no limit, no priority, no CSV.
    pub fn new(factor: f64) -> Self {
        Self { factor, max_lateness: None, priority: false, timing_csv: None }
    }

    /// Refuses a factor or a limit that is not a positive finite number; `key` names the setting.
    pub fn check(&self) -> std::result::Result<(), (String, String)> {
        if !(self.factor.is_finite() && self.factor > 0.0) {
            return Err(("real_time".into(), format!("{} must be a positive number (1 = real time)", self.factor)));
        }
        if let Some(l) = self.max_lateness {
            if !(l.is_finite() && l > 0.0) {
                return Err(("max_lateness".into(), format!("{l} s must be a positive number of seconds")));
            }
        }
        Ok(())
    }
}

/// The real-time statistics of `summary.json` (`real_time`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RealTimeSummary {
    /// Simulated seconds per wall-clock second asked for.
    pub factor: f64,
    /// Steps paced.
    pub steps: u64,
    /// Steps that ended after their deadline.
    pub overruns: u64,
    /// Largest delay of a communication point after its deadline (s): when the next step
    /// started (or the run ended) minus origin + (t − t_0)/factor.
    pub max_lateness_s: f64,
    /// Wall time of one communication step (s; the FMUs, the master and the observers, from the
    /// step's release to its end): median, 99th, 99.9th percentile (histogram, within 3 %) and
    /// the largest (exact).
    pub step_time_median_s: f64,
    /// 99th percentile (s).
    pub step_time_p99_s: f64,
    /// 99.9th percentile (s).
    pub step_time_p999_s: f64,
    /// Largest (s).
    pub step_time_max_s: f64,
    /// Wall-clock seconds spent paused (not counted in any deadline).
    pub paused_s: f64,
    /// CPU time the hypervisor took from the machine's CPUs during the run (s, all CPUs
    /// together, /proc/stat `steal`, 10 ms resolution): a VM whose CPUs are not running cannot
    /// keep a deadline, whatever the run does (docs/performance.md, "Real time").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_s: Option<f64>,
    /// What the OS did not permit (memory lock, scheduling priority), or empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Longest wait for a deadline (s, ≈ 32 million years): deadlines further away are this far.
const MAX_WAIT_S: f64 = 1e15;
/// Longest sleep between two looks at the stop request while waiting for a deadline.
const WAIT_SLICE: Duration = Duration::from_millis(20);

/// Sub-bins per octave of the step-time histogram.
const SUB_BITS: u32 = 5;
/// Octaves of nanoseconds covered (2^40 ns ≈ 18 min).
const OCTAVES: usize = 41;
const BINS: usize = OCTAVES << SUB_BITS;

/// A log-linear histogram of durations in nanoseconds (as HdrHistogram with 5 significant
/// bits): fixed size, one increment per value.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        // Written twice so that every page exists now, not at the first step that lands in it
        // (zeroed memory from the OS is mapped on first touch; black_box keeps the first write).
        let mut counts = vec![1u64; BINS];
        std::hint::black_box(&mut counts);
        counts.fill(0);
        Self { counts: counts.into_boxed_slice(), total: 0, max: 0 }
    }
}

impl Histogram {
    fn bin(ns: u64) -> usize {
        if ns < (1 << SUB_BITS) {
            return ns as usize;
        }
        let octave = 63 - ns.leading_zeros();
        let sub = (ns >> (octave - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        (((octave - SUB_BITS + 1) as usize) << SUB_BITS | sub as usize).min(BINS - 1)
    }

    /// The smallest value of bin `b` and the first of the next.
    fn range(b: usize) -> (u64, u64) {
        if b < (1 << SUB_BITS) {
            return (b as u64, b as u64 + 1);
        }
        let octave = (b >> SUB_BITS) as u32 + SUB_BITS - 1;
        let sub = (b & ((1 << SUB_BITS) - 1)) as u64;
        let width = 1u64 << (octave - SUB_BITS);
        let lo = (1u64 << octave) + sub * width;
        (lo, lo + width)
    }

    /// Counts one duration.
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::bin(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(ns);
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The q-quantile (0 ≤ q ≤ 1) in nanoseconds: the middle of the bin holding the
    /// ⌈q·n⌉-th smallest value (never above the largest value counted); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::range(b);
                return (lo + (hi - lo) / 2).min(self.max);
            }
        }
        self.max
    }

    /// The largest value counted (ns).
    pub fn max(&self) -> u64 {
        self.max
    }
}

/// Run control shared with a live server: pause, resume, reset. Lock-free.
#[derive(Debug, Default)]
pub struct Control {
    paused: AtomicBool,
    reset: AtomicBool,
}

impl Control {
    /// Pauses (true) or resumes (false) at the next communication point.
    pub fn set_paused(&self, on: bool) {
        self.paused.store(on, Ordering::Relaxed);
    }

    /// Whether the run is (to be) paused.
    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Asks the run to stop at the next communication point and start again from the start.
    pub fn request_reset(&self) {
        self.reset.store(true, Ordering::Relaxed);
    }

    /// Whether a reset was asked for.
    pub fn reset_requested(&self) -> bool {
        self.reset.load(Ordering::Relaxed)
    }

    /// Takes a reset request (true once per request).
    pub fn take_reset(&self) -> bool {
        self.reset.swap(false, Ordering::Relaxed)
    }
}

/// Real-time figures as the run goes, for a live dashboard (plain atomics, written by the
/// stepping thread after each step, read by anyone).
#[derive(Debug, Default)]
pub struct LiveStats {
    /// Steps paced.
    pub steps: AtomicU64,
    /// Overruns so far.
    pub overruns: AtomicU64,
    /// Largest lateness so far (ns).
    pub max_lateness_ns: AtomicU64,
    /// The last step's wall time (ns).
    pub last_step_ns: AtomicU64,
    /// The largest step wall time so far (ns).
    pub max_step_ns: AtomicU64,
}

/// One row of `timing.csv`: the step, and what the stepping thread's counters did from the
/// end of the previous row's wait to the end of this one's ([`os::Counters`]).
#[derive(Debug, Clone, Copy, Default)]
struct Row {
    t: f64,
    /// When the step began, from the origin (with `step_ns` and the deadline it tells whether
    /// the step overran: timing.csv's readers recount the overruns from it).
    release_ns: u64,
    step_ns: u64,
    late_ns: u64,
    mono_ns: u64,
    cpu_ns: u64,
    wait_ns: u64,
    minflt: u32,
    majflt: u32,
    nvcsw: u32,
    nivcsw: u32,
}

/// Paces an execution (see the module documentation). Made by [`Pacer::new`], handed to
/// [`crate::Execution::pace`].
#[derive(Debug)]
pub struct Pacer {
    cfg: RealTime,
    t0: f64,
    origin: Option<Instant>,
    release: Instant,
    /// How long before a deadline sleeping stops and spinning starts (adapts to wake-ups).
    margin: Duration,
    hist: Histogram,
    overruns: u64,
    max_late_ns: u64,
    paused: Duration,
    rows: Vec<Row>,
    notes: Vec<String>,
    control: Arc<Control>,
    stats: Arc<LiveStats>,
    priority_done: bool,
    /// The last deadline (s after the origin) and the span to it from the one before (H/factor).
    last_due: f64,
    step_hint: f64,
    /// Steps expected (the size of the timing table).
    rows_hint: u64,
    /// The stepping thread's counters, for `timing.csv` (opened by the first step).
    counters: Option<(os::ThreadCounters, os::Counters)>,
    /// /proc/stat steal when the first step started (ns).
    steal0: Option<u64>,
}

/// Rows of `timing.csv` kept at most (64 bytes each: 64 MB, locked in memory under
/// `--rt-priority`; longer runs keep the first rows and say so).
const MAX_ROWS: usize = 1_000_000;

/// Stack pre-faulted by the first paced step (the deepest FMU call stack seen is far less).
const STACK_PREFAULT: usize = 512 * 1024;

impl Pacer {
    /// A pacer for a run from `t0` of about `steps` communication steps (the timing table's
    /// size when `cfg.timing_csv` is set).
    pub fn new(cfg: RealTime, t0: f64, steps: u64) -> Self {
        let mut rows = if cfg.timing_csv.is_some() {
            Vec::with_capacity((steps as usize).saturating_add(1).min(MAX_ROWS))
        } else {
            Vec::new()
        };
        touch(&mut rows);
        Self {
            cfg,
            t0,
            origin: None,
            release: Instant::now(),
            margin: Duration::from_micros(200),
            hist: Histogram::default(),
            overruns: 0,
            max_late_ns: 0,
            paused: Duration::ZERO,
            rows,
            notes: Vec::new(),
            control: Arc::new(Control::default()),
            stats: Arc::new(LiveStats::default()),
            priority_done: false,
            last_due: 0.0,
            step_hint: 0.0,
            rows_hint: steps,
            counters: None,
            steal0: None,
        }
    }

    /// Shares pause/resume with someone else (a live server).
    pub fn with_control(mut self, control: Arc<Control>) -> Self {
        self.control = control;
        self
    }

    /// Writes every step's timing to `path` (a table of the run's length is allocated now).
    pub fn set_timing_csv(&mut self, path: PathBuf) {
        self.cfg.timing_csv = Some(path);
        let want = (self.rows_hint as usize).saturating_add(1).min(MAX_ROWS);
        self.rows.reserve_exact(want.saturating_sub(self.rows.len()));
        touch(&mut self.rows);
    }

    /// Shares the running statistics (a live dashboard).
    pub fn with_stats(mut self, stats: Arc<LiveStats>) -> Self {
        self.stats = stats;
        self
    }

    /// Shares pause/resume and the running statistics with a live server.
    pub fn share(&mut self, control: Arc<Control>, stats: Arc<LiveStats>) {
        self.control = control;
        self.stats = stats;
    }

    /// The configuration.
    pub fn config(&self) -> &RealTime {
        &self.cfg
    }

    /// Before a step: on the first, fixes the origin (and raises the priority when asked);
    /// while paused, waits (the pause moves every later deadline).
    pub fn before_step(&mut self, interrupt: Option<&dyn crate::host::StopRequest>) {
        if !self.priority_done {
            self.priority_done = true;
            // On the stepping thread, before the first step: the stack's pages exist before
            // mlockall locks them, sleeps end on time.
            os::prefault_stack(STACK_PREFAULT);
            self.notes.extend(os::min_timer_slack());
            if self.cfg.priority {
                self.notes.extend(raise_priority());
            }
            self.steal0 = os::steal_ns();
            if self.cfg.timing_csv.is_some() {
                let tc = os::ThreadCounters::open();
                let now = tc.read();
                self.counters = Some((tc, now));
            }
        }
        if self.control.paused() {
            let from = Instant::now();
            while self.control.paused() && !self.control.reset_requested() && !interrupt.is_some_and(|f| f.requested())
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            let d = from.elapsed();
            self.paused += d;
            if let Some(o) = &mut self.origin {
                *o += d;
            }
        }
        let now = Instant::now();
        if self.origin.is_none() {
            self.origin = Some(now);
        }
        self.release = now;
    }

    /// After the step that reached `t`: records its wall time, waits for its deadline (or
    /// counts an overrun), `Err` when it is later than the lateness limit. A stop request
    /// (`interrupt`: SIGINT, SIGTERM) ends the wait early: the caller stops at this point.
    pub fn after_step(&mut self, t: f64, interrupt: Option<&dyn crate::host::StopRequest>) -> Result<()> {
        let end = Instant::now();
        let origin = *self.origin.get_or_insert(self.release);
        let step_ns = end.duration_since(self.release).as_nanos() as u64;
        self.hist.record(step_ns);
        let due = (t - self.t0) / self.cfg.factor;
        self.step_hint = due - self.last_due;
        self.last_due = due;
        // A tiny factor puts a deadline centuries away (1e-300: beyond what a Duration holds,
        // which panicked): such a run waits until it is stopped.
        let deadline = origin + Duration::from_secs_f64(due.clamp(0.0, MAX_WAIT_S));
        if end > deadline {
            self.overruns += 1;
        } else {
            self.wait_until(deadline, interrupt);
        }
        let moved_on = Instant::now();
        let late_ns = moved_on.saturating_duration_since(deadline).as_nanos() as u64;
        self.max_late_ns = self.max_late_ns.max(late_ns);
        if self.rows.len() < self.rows.capacity() {
            let release_ns = self.release.saturating_duration_since(origin).as_nanos() as u64;
            let mut row = Row { t, release_ns, step_ns, late_ns, ..Row::default() };
            if let Some((tc, last)) = &mut self.counters {
                let c = tc.read();
                let d = |a: u64, b: u64| a.saturating_sub(b);
                let n = |a: u64, b: u64| a.saturating_sub(b).min(u64::from(u32::MAX)) as u32;
                row.mono_ns = c.mono_ns;
                row.cpu_ns = d(c.cpu_ns, last.cpu_ns);
                row.wait_ns = d(c.wait_ns, last.wait_ns);
                row.minflt = n(c.minflt, last.minflt);
                row.majflt = n(c.majflt, last.majflt);
                row.nvcsw = n(c.nvcsw, last.nvcsw);
                row.nivcsw = n(c.nivcsw, last.nivcsw);
                *last = c;
            }
            self.rows.push(row);
        }
        let s = &self.stats;
        s.steps.fetch_add(1, Ordering::Relaxed);
        s.overruns.store(self.overruns, Ordering::Relaxed);
        s.max_lateness_ns.store(self.max_late_ns, Ordering::Relaxed);
        s.last_step_ns.store(step_ns, Ordering::Relaxed);
        s.max_step_ns.store(self.hist.max(), Ordering::Relaxed);
        if self.control.reset_requested() {
            return Err(MasterError::RealTime { message: format!("reset by a live client at t = {t} s") });
        }
        if let Some(limit) = self.cfg.max_lateness {
            let late = late_ns as f64 * 1e-9;
            if late > limit {
                return Err(MasterError::RealTime {
                    message: format!(
                        "real time: t = {t} s was reached {:.3} ms after its deadline, more than max_lateness = {} ms \
                         ({} overruns in {} steps; the slowest step took {:.3} ms for H/factor = {:.3} ms)",
                        late * 1e3,
                        limit * 1e3,
                        self.overruns,
                        self.hist.len(),
                        self.hist.max() as f64 * 1e-6,
                        self.step_hint * 1e3,
                    ),
                });
            }
        }
        Ok(())
    }

    /// Sleeps until `margin` before `deadline`, then spins to it; the margin grows when the OS
    /// wakes us late (never sleeping past a deadline) and shrinks slowly otherwise. It is at
    /// most a quarter of the step's period H/factor: a thread that spins most of the time is
    /// stopped by the kernel's real-time throttling under SCHED_FIFO (by default for 50 ms in
    /// every second) and takes a core from everything else.
    /// The sleep is cut into slices of at most [`WAIT_SLICE`]; a stop request between them ends
    /// the wait (a paced step of H/factor = hours is still stopped by Ctrl-C within a slice).
    fn wait_until(&mut self, deadline: Instant, interrupt: Option<&dyn crate::host::StopRequest>) {
        let cap = Duration::from_secs_f64((self.step_hint / 4.0).clamp(50e-6, 2e-3));
        let floor = Duration::from_micros(50).min(cap);
        self.margin = self.margin.min(cap);
        let now = Instant::now();
        if deadline > now + self.margin {
            let target = deadline - self.margin;
            let mut now = now;
            while now < target {
                if interrupt.is_some_and(|f| f.requested()) {
                    return;
                }
                std::thread::sleep((target - now).min(WAIT_SLICE));
                now = Instant::now();
            }
            let woke = now;
            let over = woke.saturating_duration_since(target);
            let wanted = over + Duration::from_micros(50);
            self.margin =
                if wanted > self.margin { wanted } else { (self.margin * 63 + wanted) / 64 }.clamp(floor, cap);
        }
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
    }

    /// The statistics so far.
    pub fn summary(&self) -> RealTimeSummary {
        let s = |ns: u64| ns as f64 * 1e-9;
        let mut notes = self.notes.clone();
        if self.cfg.timing_csv.is_some() && self.hist.len() > self.rows.len() as u64 {
            notes.push(format!("timing.csv holds the first {} of {} steps", self.rows.len(), self.hist.len()));
        }
        RealTimeSummary {
            factor: self.cfg.factor,
            steps: self.hist.len(),
            overruns: self.overruns,
            max_lateness_s: s(self.max_late_ns),
            step_time_median_s: s(self.hist.quantile(0.5)),
            step_time_p99_s: s(self.hist.quantile(0.99)),
            step_time_p999_s: s(self.hist.quantile(0.999)),
            step_time_max_s: s(self.hist.max()),
            paused_s: self.paused.as_secs_f64(),
            host_steal_s: self.steal0.zip(os::steal_ns()).map(|(a, b)| b.saturating_sub(a) as f64 * 1e-9),
            notes,
        }
    }

    /// Writes `timing.csv` (when asked for): step, t, deadline, step time, lateness.
    pub fn write_csv(&self) -> Result<()> {
        let Some(path) = &self.cfg.timing_csv else { return Ok(()) };
        write_rows(path, &self.rows, self.t0, self.cfg.factor)
            .map_err(|source| MasterError::Io { path: path.clone(), source })
    }
}

/// Writes the whole capacity of the (empty) timing table once, so that its pages are mapped
/// before the run instead of one page fault every 64 steps (measured: 313 minor faults in a
/// 20,000-step run without `mlockall`).
fn touch(rows: &mut Vec<Row>) {
    let n = rows.len();
    rows.resize(rows.capacity(), Row::default());
    std::hint::black_box(&mut *rows);
    rows.truncate(n);
}

fn write_rows(path: &Path, rows: &[Row], t0: f64, factor: f64) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "step,time,deadline_s,step_time_s,lateness_s,monotonic_s,cpu_s,run_delay_s,minflt,majflt,nvcsw,nivcsw,release_s"
    )?;
    for (n, r) in rows.iter().enumerate() {
        writeln!(
            f,
            "{},{},{},{:e},{:e},{:.9},{:e},{:e},{},{},{},{},{:.9}",
            n + 1,
            r.t,
            (r.t - t0) / factor,
            r.step_ns as f64 * 1e-9,
            r.late_ns as f64 * 1e-9,
            r.mono_ns as f64 * 1e-9,
            r.cpu_ns as f64 * 1e-9,
            r.wait_ns as f64 * 1e-9,
            r.minflt,
            r.majflt,
            r.nvcsw,
            r.nivcsw,
            r.release_ns as f64 * 1e-9,
        )?;
    }
    f.flush()
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)` and `SCHED_FIFO` (priority 50) for the calling thread;
/// returns a note for each the OS refused (e.g. without CAP_IPC_LOCK / CAP_SYS_NICE).
pub fn raise_priority() -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = cosim_os::thread::lock_memory() {
        notes.push(format!("memory not locked (mlockall: {e})"));
    }
    if let Err(e) = cosim_os::thread::fifo_priority(50) {
        notes.push(format!("scheduling priority not raised (SCHED_FIFO: {e})"));
    }
    notes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_their_bin_of_the_exact_ones() {
        // An independent reference: the exact order statistics of the same values.
        let mut h = Histogram::default();
        let mut exact: Vec<u64> = (0..100_000u64).map(|k| (k * 7919 % 100_003) * 37 + 500).collect();
        for v in &exact {
            h.record(*v);
        }
        exact.sort_unstable();
        for q in [0.5, 0.9, 0.99, 0.999] {
            let want = exact[((q * exact.len() as f64).ceil() as usize).max(1) - 1] as f64;
            let got = h.quantile(q) as f64;
            assert!((got - want).abs() <= want / 32.0, "q = {q}: {got} vs {want}");
        }
        assert_eq!(h.max(), *exact.last().unwrap());
        assert_eq!(h.len(), 100_000);
    }

    #[test]
    fn every_bin_range_holds_its_values() {
        for v in [0u64, 1, 31, 32, 33, 63, 64, 1000, 123_456, 1 << 39, u64::MAX >> 20] {
            let (lo, hi) = Histogram::range(Histogram::bin(v));
            assert!(lo <= v && v < hi, "{v}: [{lo}, {hi})");
        }
    }

    #[test]
    fn bad_factors_and_limits_are_refused() {
        assert!(RealTime::new(0.0).check().is_err());
        assert!(RealTime::new(f64::NAN).check().is_err());
        assert!(RealTime { max_lateness: Some(-1.0), ..RealTime::new(1.0) }.check().is_err());
        assert!(RealTime::new(2.0).check().is_ok());
    }
}
