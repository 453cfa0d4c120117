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
    /// An instance ended the simulation before the stop time (FMI 2.0 `fmi2Terminated`): a
    /// successful run, up to that instance's `fmi2LastSuccessfulTime` (the summary's `time`;
    /// the message says "terminated by <instance> at t = …").
    Terminated,
}

/// Final state of a run, for `summary.json`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// `ok`, `failed`, `interrupted` or `terminated`.
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
    /// Per instance.
    pub instances: Vec<InstanceSummary>,
    /// Per bond.
    pub bonds: Vec<BondSummary>,
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

/// Writes rows of floats as CSV lines. With a second core the rows are formatted and written
/// on a background thread: the run loop only copies each row into a chunk and hands full chunks
/// over ([`Handoff`]; three chunks circulate, so the steady state allocates nothing). A write
/// error surfaces at the next hand-over or at [`Rows::close`]; closing flushes everything.
struct Rows {
    path: PathBuf,
    width: usize,
    chunk: Vec<f64>,
    sink: Sink,
}

enum Sink {
    Inline { out: BufWriter<File>, row: Row },
    Thread { handoff: Arc<Handoff>, worker: JoinHandle<std::io::Result<()>> },
    Closed,
}

/// Chunks between the run loop and the writer thread: two queues with preallocated capacity
/// under one mutex and two condition variables (futex based: no allocation, no system call
/// unless a side has to wait or wake the other, once per chunk).
struct Handoff {
    queues: Mutex<Queues>,
    /// A full chunk was queued, or the producer closed.
    filled: Condvar,
    /// An empty chunk came back, or the writer stopped.
    emptied: Condvar,
}

struct Queues {
    full: VecDeque<Vec<f64>>,
    empty: Vec<Vec<f64>>,
    /// The writer thread runs (its start-up allocations are done).
    started: bool,
    closed: bool,
    stopped: bool,
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The writer thread: formats every row of every full chunk until the producer closes.
    fn write_all(&self, out: &mut BufWriter<File>, row: &mut Row, width: usize) -> std::io::Result<()> {
        loop {
            let mut chunk = {
                let mut q = self.lock();
                loop {
                    if let Some(c) = q.full.pop_front() {
                        break c;
                    }
                    if q.closed {
                        drop(q);
                        return out.flush();
                    }
                    q = self.filled.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            for r in chunk.chunks(width) {
                out.write_all(row.format(r))?;
            }
            chunk.clear();
            self.lock().empty.push(chunk);
            self.emptied.notify_one();
        }
    }

    /// Queues `full`, returns an empty chunk; `None` once the writer has stopped.
    fn exchange(&self, full: Vec<f64>) -> Option<Vec<f64>> {
        let mut q = self.lock();
        if q.stopped {
            return None;
        }
        q.full.push_back(full);
        self.filled.notify_one();
        loop {
            if let Some(c) = q.empty.pop() {
                return Some(c);
            }
            if q.stopped {
                return None;
            }
            q = self.emptied.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

impl Rows {
    /// `out` (header already written) for rows of `width` values.
    fn new(path: &Path, out: BufWriter<File>, width: usize) -> Result<Self> {
        let width = width.max(1);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let sink = if threads >= 2 {
            Self::spawn(out, width).map_err(io(path))?
        } else {
            Sink::Inline { out, row: Row::new() }
        };
        Ok(Self { path: path.to_path_buf(), width, chunk: Vec::with_capacity(CHUNK_ROWS * width), sink })
    }

    fn spawn(mut out: BufWriter<File>, width: usize) -> std::io::Result<Sink> {
        let mut empty = Vec::with_capacity(4);
        for _ in 0..2 {
            empty.push(Vec::with_capacity(CHUNK_ROWS * width));
        }
        let handoff = Arc::new(Handoff {
            queues: Mutex::new(Queues {
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
        Ok(Sink::Thread { handoff, worker })
    }

    /// Appends one row: `first` then `rest` (together `width` values).
    fn push(&mut self, first: f64, rest: impl IntoIterator<Item = f64>) -> Result<()> {
        if let Sink::Inline { out, row } = &mut self.sink {
            self.chunk.clear();
            self.chunk.push(first);
            self.chunk.extend(rest);
            return out.write_all(row.format(&self.chunk)).map_err(io(&self.path));
        }
        self.chunk.push(first);
        self.chunk.extend(rest);
        if self.chunk.len() >= CHUNK_ROWS * self.width {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Sends the current chunk to the thread and takes an empty one back.
    fn hand_over(&mut self) -> Result<()> {
        let Sink::Thread { handoff, .. } = &self.sink else { return Ok(()) };
        let full = std::mem::take(&mut self.chunk);
        match handoff.exchange(full) {
            Some(next) => {
                self.chunk = next;
                Ok(())
            }
            // The thread stopped on a write error: report it.
            None => self.close(),
        }
    }

    /// Writes what is pending, stops the thread and flushes the file.
    fn close(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.sink, Sink::Closed) {
            Sink::Inline { mut out, .. } => out.flush().map_err(io(&self.path)),
            Sink::Thread { handoff, worker } => {
                {
                    let mut q = handoff.lock();
                    if !self.chunk.is_empty() {
                        q.full.push_back(std::mem::take(&mut self.chunk));
                    }
                    q.closed = true;
                }
                handoff.filled.notify_one();
                match worker.join() {
                    Ok(r) => r.map_err(io(&self.path)),
                    Err(_) => Err(io(&self.path)(std::io::Error::other("the CSV writer thread panicked"))),
                }
            }
            Sink::Closed => Ok(()),
        }
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        // An observer dropped without `finish` (an early return) still leaves complete files.
        let _ = self.close();
    }
}

/// `results.csv`: `time,inst.var,…`, every k-th communication point (and the end of a run an
/// instance terminated).
pub struct ResultsCsv {
    rows: Rows,
    every: u64,
    /// Time of the last row written.
    last: f64,
}

impl ResultsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, labels: &[String], every: u64) -> Result<Self> {
        let file = File::create(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "time,{}", labels.join(",")).map_err(io(path))?;
        Ok(Self { rows: Rows::new(path, out, labels.len() + 1)?, every: every.max(1), last: f64::NAN })
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
        if (n + 1).is_multiple_of(self.every) {
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

/// `bonds.csv`: `time,bond.dP,bond.dE,bond.E,bond.E_abs` per bond, and for a bond with energy
/// correction also `bond.dE_uncorrected,bond.E_uncorrected,bond.E_abs_uncorrected`.
pub struct BondsCsv {
    rows: Rows,
    every: u64,
    corrected: Vec<bool>,
}

impl BondsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, names: &[String], every: u64) -> Result<Self> {
        Self::with_corrections(path, names, &vec![false; names.len()], every)
    }

    /// [`BondsCsv::create`] with the uncorrected columns of the bonds whose `corrected` is true.
    pub fn with_corrections(path: &Path, names: &[String], corrected: &[bool], every: u64) -> Result<Self> {
        let file = File::create(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let corrected: Vec<bool> = (0..names.len()).map(|b| corrected.get(b).copied().unwrap_or(false)).collect();
        let cols: Vec<String> = names
            .iter()
            .zip(&corrected)
            .map(|(n, c)| {
                let extra = if *c {
                    format!(",{n}.dE_uncorrected,{n}.E_uncorrected,{n}.E_abs_uncorrected")
                } else {
                    String::new()
                };
                format!("{n}.dP,{n}.dE,{n}.E,{n}.E_abs{extra}")
            })
            .collect();
        writeln!(out, "time{}{}", if cols.is_empty() { "" } else { "," }, cols.join(",")).map_err(io(path))?;
        let width = 4 * names.len() + 3 * corrected.iter().filter(|c| **c).count() + 1;
        Ok(Self { rows: Rows::new(path, out, width)?, every: every.max(1), corrected })
    }
}

impl Observer for BondsCsv {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], bonds: &[BondState]) -> Result<()> {
        if !(n + 1).is_multiple_of(self.every) {
            return Ok(());
        }
        let corrected = &self.corrected;
        self.rows.push(
            t,
            bonds.iter().zip(corrected).flat_map(|(b, c)| {
                let base = [b.dp, b.de, b.e, b.e_abs].into_iter();
                let extra = if *c { vec![b.de_uncorrected, b.e_uncorrected, b.e_abs_uncorrected] } else { Vec::new() };
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
        let text = serde_json::to_string_pretty(s)
            .map_err(|e| MasterError::Io { path: self.path.clone(), source: std::io::Error::other(e) })?;
        std::fs::write(&self.path, text + "\n").map_err(io(&self.path))
    }
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
