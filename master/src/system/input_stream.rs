//! Input files streamed during the run: after the validating pass ([`super::input_file::check`],
//! before anything of the run starts) the run reads a file's rows as time goes, keeping a
//! small window of them per file ([`Window`]): the last row before the current communication
//! point t_n, the rows up to the first one after the latest time asked for (the end of the
//! (sub-)step, for the chord that never runs past a breakpoint), and no others. Memory is
//! O(used columns × rows per step), whatever the file's length; a row is parsed once, into
//! buffers reused for the whole run (no allocation per row once the window has its size).
//!
//! The window evaluates with the very formula of in-memory tables
//! (`table_at`, `table_before` of [`super::Signal`]) on the rows it holds, which are the rows the
//! formula uses (the last at or before t and the next one, the first at t for a jump), so a file
//! and the same points held in memory give bit-identical results. Time only goes forward in a
//! run; a query before the window's first row (which nothing in a run does) reopens the file.

use super::input_file::{CsvError, Rows};
use super::{table_at, table_before};
use std::path::PathBuf;
use std::sync::Arc;

/// An `[[inputs]] file` as checked before the run: what the run reads again.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSource {
    /// The file.
    pub path: PathBuf,
    /// Its time column (`None`: the first).
    pub time: Option<String>,
    /// The used columns, in the file's order.
    pub columns: Vec<String>,
    /// `(scale, offset)` applied to every used value (`scale * x + offset`), if given.
    pub transform: Option<(f64, f64)>,
    /// Data rows, as counted by the validating pass.
    pub rows: u64,
    /// The file's length in bytes when checked (a file changed since is refused).
    pub len: u64,
}

impl FileSource {
    /// A used value as the signal sees it.
    pub fn value(&self, x: f64) -> f64 {
        match self.transform {
            Some((scale, offset)) => scale * x + offset,
            None => x,
        }
    }
}

/// Rows dropped from the front before the buffers are shifted down (amortized O(1) per row).
const COMPACT: usize = 256;

/// The rows of one input file around the current time (see the module documentation).
#[derive(Debug)]
pub struct Window {
    source: Arc<FileSource>,
    rows: Option<Rows<std::fs::File>>,
    /// Times of the rows held (from `start` on).
    times: Vec<f64>,
    /// Values (transformed) of the rows held, one vector per used column.
    values: Vec<Vec<f64>>,
    /// First row held in `times`/`values` (those before are dropped, shifted out in bulk).
    start: usize,
    /// The last row of the file is held.
    eof: bool,
    /// Rows were dropped from the front since the file was opened.
    dropped: bool,
}

impl Window {
    /// A window over `source`'s file, opened at the first query.
    pub fn new(source: Arc<FileSource>) -> Self {
        let values = vec![Vec::new(); source.columns.len()];
        Self { source, rows: None, times: Vec::new(), values, start: 0, eof: false, dropped: false }
    }

    /// The file this window reads.
    pub fn source(&self) -> &FileSource {
        &self.source
    }

    /// Value at t and slope there of used column `column` ([`super::Signal::at`]).
    pub fn at(&mut self, column: usize, linear: bool, t: f64) -> Result<(f64, f64), CsvError> {
        self.hold(t)?;
        Ok(table_at(&self.times[self.start..], &self.values[column][self.start..], linear, t))
    }

    /// The value just before t ([`super::Signal::before`]).
    pub fn before(&mut self, column: usize, linear: bool, t: f64) -> Result<f64, CsvError> {
        self.hold(t)?;
        Ok(table_before(&self.times[self.start..], &self.values[column][self.start..], linear, t))
    }

    /// No query will come before `t` any more (the start of the communication step): the rows
    /// before the last one earlier than `t` are dropped.
    pub fn advance(&mut self, t: f64) {
        while self.times.len() - self.start >= 2 && self.times[self.start + 1] < t {
            self.start += 1;
            self.dropped = true;
        }
    }

    /// Makes the window hold the rows a query at `t` uses: a first row before t (or the file's
    /// first row) and rows up to one after t (or the file's last).
    fn hold(&mut self, t: f64) -> Result<(), CsvError> {
        if self.dropped && self.times.get(self.start).is_some_and(|t0| *t0 >= t) {
            // Back in time (nothing in a run does this): read the file again from the start.
            self.rows = None;
            self.times.clear();
            self.values.iter_mut().for_each(Vec::clear);
            (self.start, self.eof, self.dropped) = (0, false, false);
        }
        while !self.eof && self.times.last().is_none_or(|last| *last <= t) {
            self.read_row()?;
        }
        Ok(())
    }

    fn read_row(&mut self) -> Result<(), CsvError> {
        let source = &self.source;
        let changed = |message: String| CsvError {
            line: 0,
            column: None,
            message: format!("{message}: the file changed since it was checked before the run"),
        };
        if self.rows.is_none() {
            let len = std::fs::metadata(&source.path).map(|m| m.len()).unwrap_or(u64::MAX);
            if len != source.len {
                return Err(changed(format!("{len} bytes, {} when checked", source.len)));
            }
            let columns = &source.columns;
            self.rows = Some(Rows::open(&source.path, source.time.as_deref(), |n| columns.iter().any(|c| c == n))?);
        }
        let Some(rows) = self.rows.as_mut() else { return Ok(()) };
        if !rows.next_row()? {
            if rows.rows() != source.rows {
                return Err(changed(format!("{} rows, {} when checked", rows.rows(), source.rows)));
            }
            self.eof = true;
            return Ok(());
        }
        if rows.rows() > source.rows {
            return Err(changed(format!("more than the {} rows checked", source.rows)));
        }
        if self.start >= COMPACT && 2 * self.start >= self.times.len() {
            self.times.drain(..self.start);
            for v in &mut self.values {
                v.drain(..self.start);
            }
            self.start = 0;
        }
        self.times.push(rows.time());
        for (v, x) in self.values.iter_mut().zip(rows.values()) {
            v.push(source.value(*x));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "input_stream_tests.rs"]
mod tests;
