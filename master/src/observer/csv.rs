//! The CSV observers: `results.csv`, `bonds.csv` and `steps.csv`.

use super::binary_rows::BinaryRows;
use super::files::{create_replacing, io};
use super::rows::Rows;
use super::{Observer, Summary};
use crate::bonds::BondState;
use crate::error::{MasterError, Result};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    rows: Sink,
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
        Ok(Self {
            rows: Sink::Numbers(Rows::new(path, out, labels.len() + 1)?),
            every: every.max(1),
            steps: u64::MAX,
            last: f64::NAN,
        })
    }

    /// As [`ResultsCsv::create`], the columns `exact` (0-based among `labels`, ascending: every
    /// non-Real column) written from their exact values ([`Observer::exact`]): integers in full
    /// (as the other numbers up to 2^53, where a float is exact; their digits beyond), Binary as
    /// lower-case hexadecimal (two digits per byte; an empty value is an empty field). Such a
    /// file is written on the run's thread; without such columns this is [`ResultsCsv::create`].
    pub fn with_exact(path: &Path, labels: &[String], every: u64, exact: &[usize]) -> Result<Self> {
        let binary = exact;
        if binary.is_empty() {
            return Self::create(path, labels, every);
        }
        let file = create_replacing(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "time,{}", csv_header(labels.iter().map(String::as_str))).map_err(io(path))?;
        Ok(Self {
            rows: Sink::WithBinary(BinaryRows::new(path, out, binary)),
            every: every.max(1),
            steps: u64::MAX,
            last: f64::NAN,
        })
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

/// Where the rows go: the writer thread ([`Rows`]), or, with Binary columns, [`BinaryRows`].
impl ResultsCsv {
    /// Tells `writers` of this file's writer thread (see [`crate::host::Writers`]).
    pub fn drained_by(self, writers: &crate::host::Writers) -> Self {
        if let Sink::Numbers(rows) = &self.rows {
            rows.drained_by(writers);
        }
        self
    }
}

enum Sink {
    Numbers(Rows),
    WithBinary(BinaryRows),
}

impl Sink {
    fn push(&mut self, t: f64, values: &[f64]) -> Result<()> {
        match self {
            Self::Numbers(r) => r.push(t, values.iter().copied()),
            Self::WithBinary(r) => r.push(t, values),
        }
    }
    fn close(&mut self) -> Result<()> {
        match self {
            Self::Numbers(r) => r.close(),
            Self::WithBinary(r) => r.close(),
        }
    }
}

impl Observer for ResultsCsv {
    fn exact(&mut self, values: &[crate::fmu::Value]) {
        if let Sink::WithBinary(r) = &mut self.rows {
            r.set(values);
        }
    }
    fn start(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        self.last = t;
        self.rows.push(t, values)
    }
    fn step(&mut self, n: u64, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        if (n + 1).is_multiple_of(self.every) || n + 1 == self.steps {
            self.last = t;
            self.rows.push(t, values)?;
        }
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        if t == self.last {
            return Ok(());
        }
        self.last = t;
        self.rows.push(t, values)
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
    /// Tells `writers` of this file's writer thread (see [`crate::host::Writers`]).
    pub fn drained_by(self, writers: &crate::host::Writers) -> Self {
        self.rows.drained_by(writers);
        self
    }
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

/// `steps.csv` of an ECCO run: `time,H`, one row per communication step (t_{n+1} and the step
/// H_n that ended there).
pub struct StepsCsv {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    last: f64,
}

impl StepsCsv {
    /// Creates the file (steps start at `start`).
    pub fn create(path: &Path, start: f64) -> Result<Self> {
        let io = |source| MasterError::Io { path: path.to_path_buf(), source };
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
        writeln!(out, "time,H").map_err(io)?;
        Ok(Self { path: path.to_path_buf(), out, last: start })
    }
}

impl Observer for StepsCsv {
    fn step(&mut self, _n: u64, t: f64, _v: &[f64], _b: &[BondState]) -> Result<()> {
        let h = t - self.last;
        self.last = t;
        writeln!(self.out, "{t},{h}").map_err(|source| MasterError::Io { path: self.path.clone(), source })
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.out.flush().map_err(|source| MasterError::Io { path: self.path.clone(), source })
    }
}
