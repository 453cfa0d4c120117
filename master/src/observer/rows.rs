//! The CSV writer thread: rows of floats formatted and written off the run loop ([`Rows`]).

use super::files::{cut_partial_line, written};
use crate::error::Result;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// One CSV line under construction: floats in shortest round-trip form (Żmij), no allocation
/// once the line has reached its length.
pub(super) struct Row {
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
            number(&mut self.line, &mut self.digits, *x);
        }
        self.line.push(b'\n');
        &self.line
    }
}

/// Appends `x` as a CSV number: shortest round-trip form, non-finite values as NaN/inf/-inf.
pub(super) fn number(line: &mut Vec<u8>, digits: &mut zmij::Buffer, x: f64) {
    if x.is_finite() {
        // Integral values come out as "1.0", small ones as "1e-7": valid CSV numbers.
        line.extend_from_slice(digits.format_finite(x).as_bytes());
    } else if x.is_nan() {
        line.extend_from_slice(b"NaN");
    } else if x > 0.0 {
        line.extend_from_slice(b"inf");
    } else {
        line.extend_from_slice(b"-inf");
    }
}

/// Rows per chunk handed to the formatting thread.
pub(super) const CHUNK_ROWS: usize = 512;

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
pub(super) struct Rows {
    path: PathBuf,
    width: usize,
    sink: Option<(Arc<Handoff>, JoinHandle<std::io::Result<()>>)>,
}

/// Chunks between the run loop and the writer thread: the chunk being filled, the full chunks
/// and the empty ones with preallocated capacity, under one mutex with two condition variables
/// (futex based: no allocation, no system call unless a side has to wait or wake the other).
pub(super) struct Handoff {
    queues: Mutex<Queues>,
    /// A full chunk was queued, or the producer closed.
    filled: Condvar,
    /// An empty chunk came back, or the writer stopped.
    emptied: Condvar,
}

pub(super) struct Queues {
    current: Vec<f64>,
    /// [`crate::host::Writers::drain`] asks for every pending row to be written now.
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
pub(super) enum Job {
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
    pub(super) fn new(path: &Path, out: BufWriter<File>, width: usize) -> Result<Self> {
        let width = width.max(1);
        let sink = Self::spawn(out, width).map_err(written(path))?;
        Ok(Self { path: path.to_path_buf(), width, sink: Some(sink) })
    }

    fn spawn(
        mut out: BufWriter<File>,
        width: usize,
    ) -> std::io::Result<(Arc<Handoff>, JoinHandle<std::io::Result<()>>)> {
        let mut empty = Vec::with_capacity(4);
        for _ in 0..2 {
            empty.push(touched(CHUNK_ROWS * width));
        }
        let handoff = Arc::new(Handoff {
            queues: Mutex::new(Queues {
                current: touched(CHUNK_ROWS * width),
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
            if r.is_err() {
                // No row ends mid-number: the file is cut back to its last complete row.
                cut_partial_line(out);
            }
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
        Ok((handoff, worker))
    }

    /// Tells `writers` of this writer thread ([`crate::host::Writers::drain`]).
    pub(super) fn drained_by(&self, writers: &crate::host::Writers) {
        if let Some((handoff, _)) = &self.sink {
            let weak: std::sync::Weak<dyn crate::host::Drain> = Arc::downgrade(handoff) as _;
            writers.add(weak);
        }
    }

    /// Appends one row: `first` then `rest` (together `width` values).
    pub(super) fn push(&mut self, first: f64, rest: impl IntoIterator<Item = f64>) -> Result<()> {
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
    pub(super) fn close(&mut self) -> Result<()> {
        let Some((handoff, worker)) = self.sink.take() else { return Ok(()) };
        handoff.lock().closed = true;
        handoff.filled.notify_one();
        match worker.join() {
            Ok(r) => r.map_err(written(&self.path)),
            Err(_) => Err(written(&self.path)(std::io::Error::other("the CSV writer thread panicked"))),
        }
    }
}

/// A writer thread answers [`crate::host::Writers::drain`]: only `try_lock`s, since the stuck
/// thread might hold a lock (a crash); the caller gives up after its limit.
impl crate::host::Drain for Handoff {
    fn request(&self) -> bool {
        let Ok(mut q) = self.queues.try_lock() else { return false };
        q.drain = true;
        drop(q);
        self.filled.notify_one();
        true
    }
    fn drained(&self) -> bool {
        self.queues
            .try_lock()
            .is_ok_and(|q| q.stopped || q.closed || (q.current.is_empty() && q.full.is_empty() && !q.busy && !q.drain))
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        // An observer dropped without `finish` (an early return) still leaves complete files.
        let _ = self.close();
    }
}

/// An empty vector whose `capacity` values have been written once: its pages are mapped now,
/// not at the steps that first fill them (a paced run's timing.csv showed a page fault every
/// ~64 steps for the first chunks).
fn touched(capacity: usize) -> Vec<f64> {
    let mut v = vec![1.0; capacity];
    std::hint::black_box(&mut v);
    v.clear();
    v
}
