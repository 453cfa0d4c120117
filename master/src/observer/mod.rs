//! *What is recorded*: `results.csv`, `bonds.csv`, `summary.json`, and a progress bar on a
//! terminal. Each observer has default no-op methods; the run loop calls `start` once, `step`
//! after every communication step, `finish` once (also after a failure, so everything computed
//! up to the failure is on disk).

use crate::bonds::BondState;
use crate::error::{MasterError, Result};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Reached the stop time (or the time asked for).
    Ok,
    /// Stopped by an error (the summary's message says which).
    Failed,
    /// Stopped by SIGINT/SIGTERM.
    Interrupted,
    /// Still running: written into `summary.json` before the first step, so that a run that
    /// never finishes (the process killed, an FMU crashing it) is not mistaken for a
    /// completed one.
    Running,
    /// An instance ended the simulation before the stop time (FMI 2.0 `fmi2Terminated`): a
    /// successful run, up to that instance's `fmi2LastSuccessfulTime` (the summary's `time`;
    /// the message says "terminated by <instance> at t = …").
    Terminated,
}

/// Final state of a run, for `summary.json`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// `ok`, `failed`, `interrupted`, `terminated`, or `running` while the run is in progress.
    pub status: Status,
    /// Empty on success, else what happened (instance, time, variable).
    pub message: String,
    /// Communication steps completed.
    pub steps: u64,
    /// Simulated time reached (s).
    pub time: f64,
    /// Wall-clock time (s).
    pub wall_time_s: f64,
    /// Algorithm.
    pub algorithm: String,
    /// Communication step (s; the initial one with step control).
    pub step_size: f64,
    /// `fixed` or `ecco` (`[simulation] step_control`).
    #[serde(default)]
    pub step_control: String,
    /// With step control: the smallest and largest communication step taken (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_size_range: Option<[f64; 2]>,
    /// Whether Jacobi used worker threads.
    pub parallel: bool,
    /// `ordered` or `explicit` (`[simulation] exchange`).
    #[serde(default)]
    pub exchange: String,
    /// Per instance.
    pub instances: Vec<InstanceSummary>,
    /// Per bond.
    pub bonds: Vec<BondSummary>,
    /// Iterative coupling (`iterations > 1`): passes, and steps that ended unconverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<IterationSummary>,
    /// Unit of each results.csv column that has one (`time`: s), from the model descriptions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub units: std::collections::BTreeMap<String, String>,
    /// What the scheme reports of itself ([`crate::algorithm::Algorithm::stats`]; a scheme
    /// from outside the crate too).
    #[serde(default)]
    pub algorithm_stats: AlgorithmStats,
    /// Paced runs (`--real-time`): overruns, lateness and step wall times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_time: Option<crate::realtime::RealTimeSummary>,
}

/// A scheme's own counts (`summary.json` `algorithm_stats`): zero where the scheme has no such
/// thing (Jacobi and Gauss-Seidel pass once and never reject a step).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AlgorithmStats {
    /// Passes over the instances in all (iterative coupling: every repetition of a step).
    pub iterations: u64,
    /// Steps that ended without converging (their values are the last pass's).
    pub unconverged_steps: u64,
    /// Steps rejected and repeated with a smaller communication step.
    pub rejected_steps: u64,
}

/// How iterative coupling went (`summary.json` `iterations`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IterationSummary {
    /// Passes allowed per step (`[simulation] iterations`).
    pub limit: u32,
    /// Convergence tolerance (`[simulation] iteration_tolerance`).
    pub tolerance: f64,
    /// Passes done in all.
    pub passes: u64,
    /// Steps that reached the pass limit without converging (their values are the last pass's).
    pub unconverged_steps: u64,
}

impl Summary {
    /// A warning when iterative coupling left steps unconverged (issue 30 item 12: said nothing).
    pub fn iteration_warning(&self) -> Option<String> {
        let it = self.iterations.as_ref().filter(|i| i.unconverged_steps > 0)?;
        Some(format!(
            "{} of {} communication steps did not converge within iterations = {} (iteration_tolerance = {:e}); \
             their values are those of the last pass",
            it.unconverged_steps, self.steps, it.limit, it.tolerance
        ))
    }
}

/// Per-instance statistics.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct InstanceSummary {
    /// Name.
    pub name: String,
    /// FMU file.
    pub fmu: String,
    /// Macro-step doStep calls (sub-steps count once).
    pub do_step_calls: u64,
    /// Seconds inside doStep (timed on the first 64 steps and every 16th after, scaled to all).
    pub do_step_seconds: f64,
    /// Warnings the FMU gave (fmi2Warning messages and calls), printed or not (`COSIM_LOG`,
    /// `--fmu-log`); not counted for isolated instances.
    #[serde(default)]
    pub fmu_warnings: u64,
}

/// Per-bond totals.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BondSummary {
    /// Name.
    pub name: String,
    /// Σ δE (J).
    pub energy: f64,
    /// Whether the bond corrected its residual energy.
    #[serde(default)]
    pub energy_correction: bool,
    /// Σ δE without the correction (J; = `energy` without correction).
    #[serde(default)]
    pub energy_uncorrected: f64,
    /// Σ |δE| without the correction (J).
    #[serde(default)]
    pub energy_abs_uncorrected: f64,
    /// Σ |δE| (J).
    pub energy_abs: f64,
}

/// Receives the run's events. `Send`, so that an [`crate::Execution`] can move between threads
/// (e.g. stepped by a Python binding with the GIL released).
pub trait Observer: Send {
    /// Before the first step, with the values at the start time.
    fn start(&mut self, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// After step n, at time t.
    fn step(&mut self, _n: u64, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// The run ended early at `t` because an instance terminated the simulation (FMI 2.0
    /// `fmi2Terminated`, see [`crate::Execution`]): the recorded values there (`t` may lie
    /// between communication points, or be the last one again). Called once, after the last
    /// `step` and before `finish`. Default: nothing; recorders write it as their last row
    /// unless their last row is at `t` already.
    fn end_early(&mut self, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// At the end, successful or not.
    fn finish(&mut self, _summary: &Summary) -> Result<()> {
        Ok(())
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> MasterError + '_ {
    move |source| MasterError::Io { path: path.to_path_buf(), source }
}

/// One CSV line under construction: floats in shortest round-trip form (Żmij), no allocation
/// once the line has reached its length.
struct Row {
    line: Vec<u8>,
    digits: zmij::Buffer,
}

impl Row {
    fn new() -> Self {
        Self { line: Vec::with_capacity(256), digits: zmij::Buffer::new() }
    }

    /// One line of `values` (comma-separated, newline-terminated); non-finite values as
    /// NaN/inf/-inf.
    fn format(&mut self, values: &[f64]) -> &[u8] {
        self.line.clear();
        for (k, x) in values.iter().enumerate() {
            if k > 0 {
                self.line.push(b',');
            }
            if x.is_finite() {
                // Integral values come out as "1.0", small ones as "1e-7": valid CSV numbers.
                let s = self.digits.format_finite(*x);
                self.line.extend_from_slice(s.as_bytes());
            } else if x.is_nan() {
                self.line.extend_from_slice(b"NaN");
            } else if *x > 0.0 {
                self.line.extend_from_slice(b"inf");
            } else {
                self.line.extend_from_slice(b"-inf");
            }
        }
        self.line.push(b'\n');
        &self.line
    }
}

/// Rows per chunk handed to the formatting thread.
const CHUNK_ROWS: usize = 512;

/// Rows reach the file at most this long (plus one interval) after they were recorded, even
/// when the run stops in an FMU call that never returns or the process ends abruptly: the
/// writer thread takes the rows of a partly filled chunk when it has waited this long.
pub const FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Writes rows of floats as CSV lines, formatted and written on a background thread: the run
/// loop only copies each row into the current chunk (under an uncontended mutex) and hands full
/// chunks over ([`Handoff`]; three chunks circulate, so the steady state allocates nothing). The
/// thread also takes the rows of the current chunk after [`FLUSH_INTERVAL`] without a full
/// one, and flushes the file whenever it has nothing queued: a crash or an FMU call that never
/// returns loses at most the last ≈ 0.2 s of rows. A write error surfaces at the next row or at
/// [`Rows::close`]; closing writes everything.
struct Rows {
    path: PathBuf,
    width: usize,
    sink: Option<(Arc<Handoff>, JoinHandle<std::io::Result<()>>)>,
}

/// Chunks between the run loop and the writer thread: the chunk being filled, the full chunks
/// and the empty ones with preallocated capacity, under one mutex with two condition variables
/// (futex based: no allocation, no system call unless a side has to wait or wake the other).
struct Handoff {
    queues: Mutex<Queues>,
    /// A full chunk was queued, or the producer closed.
    filled: Condvar,
    /// An empty chunk came back, or the writer stopped.
    emptied: Condvar,
}

struct Queues {
    current: Vec<f64>,
    /// [`drain_writers`] asks for every pending row to be written now.
    drain: bool,
    /// The writer has rows in hand that are not flushed yet.
    busy: bool,
    full: VecDeque<Vec<f64>>,
    empty: Vec<Vec<f64>>,
    /// The writer thread runs (its start-up allocations are done).
    started: bool,
    closed: bool,
    stopped: bool,
}

/// What the writer thread does next.
enum Job {
    /// Write a full chunk and hand it back.
    Chunk(Vec<f64>),
    /// Write the rows taken from the current chunk (in the thread's spare buffer) and flush.
    Partial,
    /// Write the rows taken, flush and stop.
    Close,
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next job: a full chunk, else (after waiting [`FLUSH_INTERVAL`], or at the close) the
    /// rows of the current chunk copied into `spare`.
    fn next_job(&self, spare: &mut Vec<f64>) -> Job {
        let mut q = self.lock();
        q.busy = false;
        let mut timed_out = false;
        loop {
            if let Some(c) = q.full.pop_front() {
                q.busy = true;
                return Job::Chunk(c);
            }
            if q.closed || timed_out || q.drain {
                q.drain = false;
                spare.clear();
                spare.extend_from_slice(&q.current);
                q.current.clear();
                if q.closed {
                    return Job::Close;
                }
                if !spare.is_empty() {
                    q.busy = true;
                    return Job::Partial;
                }
            }
            let (g, r) = self.filled.wait_timeout(q, FLUSH_INTERVAL).unwrap_or_else(std::sync::PoisonError::into_inner);
            q = g;
            timed_out = r.timed_out();
        }
    }

    /// The writer thread: formats every row until the producer closes.
    fn write_all(&self, out: &mut BufWriter<File>, row: &mut Row, width: usize) -> std::io::Result<()> {
        let mut spare = Vec::with_capacity(CHUNK_ROWS * width);
        loop {
            match self.next_job(&mut spare) {
                Job::Chunk(mut chunk) => {
                    for r in chunk.chunks(width) {
                        out.write_all(row.format(r))?;
                    }
                    chunk.clear();
                    let idle = {
                        let mut q = self.lock();
                        q.empty.push(chunk);
                        q.full.is_empty()
                    };
                    self.emptied.notify_one();
                    if idle {
                        out.flush()?;
                    }
                    // Not idle: `busy` stays until the next job is taken after the flush.
                }
                job @ (Job::Partial | Job::Close) => {
                    for r in spare.chunks(width) {
                        out.write_all(row.format(r))?;
                    }
                    out.flush()?;
                    if matches!(job, Job::Close) {
                        return Ok(());
                    }
                }
            }
        }
    }
}

impl Rows {
    /// `out` (header already written) for rows of `width` values.
    fn new(path: &Path, out: BufWriter<File>, width: usize) -> Result<Self> {
        let width = width.max(1);
        let sink = Self::spawn(out, width).map_err(io(path))?;
        Ok(Self { path: path.to_path_buf(), width, sink: Some(sink) })
    }

    fn spawn(
        mut out: BufWriter<File>,
        width: usize,
    ) -> std::io::Result<(Arc<Handoff>, JoinHandle<std::io::Result<()>>)> {
        let mut empty = Vec::with_capacity(4);
        for _ in 0..2 {
            empty.push(Vec::with_capacity(CHUNK_ROWS * width));
        }
        let handoff = Arc::new(Handoff {
            queues: Mutex::new(Queues {
                current: Vec::with_capacity(CHUNK_ROWS * width),
                drain: false,
                busy: false,
                full: VecDeque::with_capacity(4),
                empty,
                started: false,
                closed: false,
                stopped: false,
            }),
            filled: Condvar::new(),
            emptied: Condvar::new(),
        });
        let h = Arc::clone(&handoff);
        let worker = std::thread::Builder::new().name("cosim-csv".into()).spawn(move || {
            let mut row = Row::new();
            h.lock().started = true;
            h.emptied.notify_one();
            let r = h.write_all(&mut out, &mut row, width);
            h.lock().stopped = true;
            h.emptied.notify_one();
            r
        })?;
        // Wait until the thread runs, so that its start-up is not part of the first steps.
        let mut q = handoff.lock();
        while !q.started {
            q = handoff.emptied.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        drop(q);
        let mut writers = WRITERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        writers.retain(|w| w.strong_count() > 0);
        writers.push(Arc::downgrade(&handoff));
        Ok((handoff, worker))
    }

    /// Appends one row: `first` then `rest` (together `width` values).
    fn push(&mut self, first: f64, rest: impl IntoIterator<Item = f64>) -> Result<()> {
        let Some((handoff, _)) = &self.sink else { return Ok(()) };
        let mut q = handoff.lock();
        if q.stopped {
            drop(q);
            // The thread stopped on a write error: report it.
            return self.close();
        }
        q.current.push(first);
        q.current.extend(rest);
        if q.current.len() >= CHUNK_ROWS * self.width {
            loop {
                if let Some(next) = q.empty.pop() {
                    let full = std::mem::replace(&mut q.current, next);
                    q.full.push_back(full);
                    handoff.filled.notify_one();
                    break;
                }
                if q.stopped {
                    drop(q);
                    return self.close();
                }
                q = handoff.emptied.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
        Ok(())
    }

    /// Writes what is pending, stops the thread and flushes the file.
    fn close(&mut self) -> Result<()> {
        let Some((handoff, worker)) = self.sink.take() else { return Ok(()) };
        handoff.lock().closed = true;
        handoff.filled.notify_one();
        match worker.join() {
            Ok(r) => r.map_err(io(&self.path)),
            Err(_) => Err(io(&self.path)(std::io::Error::other("the CSV writer thread panicked"))),
        }
    }
}

/// The writer threads' hand-offs, for [`drain_writers`].
static WRITERS: Mutex<Vec<std::sync::Weak<Handoff>>> = Mutex::new(Vec::new());

/// Asks every CSV writer thread to write and flush all rows recorded so far, and waits until
/// they did (at most `limit`). For the run guard ([`crate::guard`]) when the process is about
/// to end abnormally while the run loop is stuck in an FMU call. Only `try_lock`s: the stuck
/// thread might hold a lock (a crash), then this gives up after `limit`.
pub(crate) fn drain_writers(limit: std::time::Duration) {
    let t0 = std::time::Instant::now();
    let Ok(writers) = WRITERS.try_lock().map(|w| w.iter().filter_map(std::sync::Weak::upgrade).collect::<Vec<_>>())
    else {
        return;
    };
    for h in &writers {
        while t0.elapsed() < limit {
            if let Ok(mut q) = h.queues.try_lock() {
                q.drain = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        h.filled.notify_one();
    }
    for h in &writers {
        while t0.elapsed() < limit {
            let done = h.queues.try_lock().is_ok_and(|q| {
                q.stopped || q.closed || (q.current.is_empty() && q.full.is_empty() && !q.busy && !q.drain)
            });
            if done {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        // An observer dropped without `finish` (an early return) still leaves complete files.
        let _ = self.close();
    }
}

/// One CSV field per RFC 4180: a name holding a comma, a double quote, a CR or LF is written in
/// double quotes, its quotes doubled (`a,b` → `"a,b"`, `say "hi"` → `"say ""hi"""`); any other
/// name as it is. FMU variable names may hold all of these (e.g. Modelica's `x[1,2]`).
pub fn csv_field(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains([',', '"', '\n', '\r']) {
        std::borrow::Cow::Owned(format!("\"{}\"", name.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// The names as one CSV header line (without `time` and the line end), each quoted by [`csv_field`].
pub fn csv_header<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names.into_iter().map(csv_field).collect::<Vec<_>>().join(",")
}

/// `results.csv`: `time,inst.var,…`, every k-th communication point (and the end of a run an
/// instance terminated).
pub struct ResultsCsv {
    rows: Rows,
    every: u64,
    /// Number of the run's last step (its row is written whatever `every` says), if known.
    steps: u64,
    /// Time of the last row written.
    last: f64,
}

impl ResultsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, labels: &[String], every: u64) -> Result<Self> {
        let file = create_replacing(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        // No recorded variable: the header is `time` alone (was `time,`, an empty column name).
        let sep = if labels.is_empty() { "" } else { "," };
        writeln!(out, "time{sep}{}", csv_header(labels.iter().map(String::as_str))).map_err(io(path))?;
        Ok(Self { rows: Rows::new(path, out, labels.len() + 1)?, every: every.max(1), steps: u64::MAX, last: f64::NAN })
    }

    /// The run has `steps` communication steps: the last one is recorded even when `every`
    /// does not divide `steps`.
    pub fn ending_at(mut self, steps: u64) -> Self {
        self.steps = steps;
        self
    }

    /// Writes everything pending and flushes the file (also done by `finish` and on drop).
    pub fn close(&mut self) -> Result<()> {
        self.rows.close()
    }
}

impl Observer for ResultsCsv {
    fn start(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        self.last = t;
        self.rows.push(t, values.iter().copied())
    }
    fn step(&mut self, n: u64, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        if (n + 1).is_multiple_of(self.every) || n + 1 == self.steps {
            self.last = t;
            self.rows.push(t, values.iter().copied())?;
        }
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        if t == self.last {
            return Ok(());
        }
        self.last = t;
        self.rows.push(t, values.iter().copied())
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.close()
    }
}

/// `bonds.csv`: `time,bond.dP,bond.dE,bond.E,bond.E_abs` per bond (Publication III's
/// bookkeeping, [`crate::bonds`]), and for a bond with energy correction also
/// `bond.dE_uncorrected,bond.E_uncorrected,bond.E_abs_uncorrected` (the same without the
/// correction) and `bond.dE_correction,bond.E_correction` (the consistent residual energy the
/// correction returns over the step, and its sum).
pub struct BondsCsv {
    rows: Rows,
    every: u64,
    /// Number of the run's last step (always recorded), if known.
    steps: u64,
    corrected: Vec<bool>,
}

impl BondsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, names: &[String], every: u64) -> Result<Self> {
        Self::with_corrections(path, names, &vec![false; names.len()], every)
    }

    /// [`BondsCsv::create`] with the uncorrected columns of the bonds whose `corrected` is true.
    pub fn with_corrections(path: &Path, names: &[String], corrected: &[bool], every: u64) -> Result<Self> {
        let file = create_replacing(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let corrected: Vec<bool> = (0..names.len()).map(|b| corrected.get(b).copied().unwrap_or(false)).collect();
        let mut cols: Vec<String> = Vec::new();
        for (n, c) in names.iter().zip(&corrected) {
            cols.extend(["dP", "dE", "E", "E_abs"].map(|q| format!("{n}.{q}")));
            if *c {
                cols.extend(
                    ["dE_uncorrected", "E_uncorrected", "E_abs_uncorrected", "dE_correction", "E_correction"]
                        .map(|q| format!("{n}.{q}")),
                );
            }
        }
        let sep = if cols.is_empty() { "" } else { "," };
        writeln!(out, "time{sep}{}", csv_header(cols.iter().map(String::as_str))).map_err(io(path))?;
        let width = 4 * names.len() + 5 * corrected.iter().filter(|c| **c).count() + 1;
        Ok(Self { rows: Rows::new(path, out, width)?, every: every.max(1), steps: u64::MAX, corrected })
    }

    /// The run has `steps` communication steps: the last one is recorded even when `every`
    /// does not divide `steps`.
    pub fn ending_at(mut self, steps: u64) -> Self {
        self.steps = steps;
        self
    }
}

impl Observer for BondsCsv {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], bonds: &[BondState]) -> Result<()> {
        if !(n + 1).is_multiple_of(self.every) && n + 1 != self.steps {
            return Ok(());
        }
        let corrected = &self.corrected;
        self.rows.push(
            t,
            bonds.iter().zip(corrected).flat_map(|(b, c)| {
                let base = [b.dp, b.de, b.e, b.e_abs].into_iter();
                // No allocation per step: the uncorrected columns only for corrected bonds.
                let extra = [b.de_uncorrected, b.e_uncorrected, b.e_abs_uncorrected, b.de_correction, b.e_correction]
                    .into_iter()
                    .take(if *c { 5 } else { 0 });
                base.chain(extra)
            }),
        )
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.rows.close()
    }
}

/// `summary.json`, written at the end (also after a failure).
pub struct SummaryJson {
    path: PathBuf,
}

impl SummaryJson {
    /// Will write to `path`.
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf() }
    }
}

impl Observer for SummaryJson {
    fn finish(&mut self, s: &Summary) -> Result<()> {
        // The run's outcome is on disk then: `cosim`'s guard (an observer after this one) leaves
        // it as it is if the process ends abnormally from now on.
        write_summary(&self.path, s)
    }
}

/// Writes `s` to `path` as pretty JSON ([`write_replacing`]).
pub fn write_summary(path: &Path, s: &Summary) -> Result<()> {
    let text = serde_json::to_string_pretty(s)
        .map_err(|e| MasterError::Io { path: path.to_path_buf(), source: std::io::Error::other(e) })?;
    write_replacing(path, (text + "\n").as_bytes()).map_err(io(path))
}

/// Creates `path` afresh: a symbolic link placed there is replaced by the file, never followed
/// (a link from out/results.csv to ~/.bashrc must not overwrite ~/.bashrc).
fn create_replacing(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path)?;
    }
    File::create(path)
}

/// Writes `bytes` to a new file next to `path` and renames it to `path`: a symbolic link at
/// `path` is replaced, not followed, and a reader never sees half a file.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    f.write_all(bytes)?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// A progress bar on stderr, only when stderr is a terminal.
pub struct Progress {
    total: u64,
    shown: u64,
    enabled: bool,
}

impl Progress {
    /// For `total` steps.
    pub fn new(total: u64) -> Self {
        Self { total: total.max(1), shown: u64::MAX, enabled: std::io::stderr().is_terminal() }
    }
}

impl Observer for Progress {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], _b: &[BondState]) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let pct = (n + 1) * 100 / self.total;
        if pct != self.shown {
            self.shown = pct;
            let bar = "#".repeat((pct / 4) as usize);
            eprint!("\r[{bar:<25}] {pct:>3}%  t = {t:.4}");
        }
        Ok(())
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        if self.enabled {
            eprintln!();
        }
        Ok(())
    }
}

/// Every recorded value and bond state in memory: `times[k]`, `values[k]` (the recorded
/// variables, [`crate::System::outputs`]), `bonds[k]`, at the start and after every step.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// Communication point times (s).
    pub times: Vec<f64>,
    /// Recorded values at each time.
    pub values: Vec<Vec<f64>>,
    /// Bond states at each time.
    pub bonds: Vec<Vec<BondState>>,
}

/// A [`Recorder`] shared with the caller (the execution owns its observers).
pub type SharedRecorder = std::sync::Arc<Mutex<Recorder>>;

impl Observer for SharedRecorder {
    fn start(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.step(0, t, values, bonds)
    }
    fn step(&mut self, _n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        if let Ok(mut r) = self.lock() {
            r.times.push(t);
            r.values.push(values.to_vec());
            r.bonds.push(bonds.to_vec());
        }
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        // The last point again when the run ended at a communication point.
        if self.lock().is_ok_and(|r| r.times.last() == Some(&t)) {
            return Ok(());
        }
        self.step(0, t, values, bonds)
    }
}

/// A user's function called after every step with (n, t, recorded values, bonds); an `Err`
/// stops the run.
pub struct Callback<F>(pub F);

impl<F: FnMut(u64, f64, &[f64], &[BondState]) -> Result<()> + Send> Observer for Callback<F> {
    fn step(&mut self, n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        (self.0)(n, t, values, bonds)
    }
}
