//! *What is recorded*: `results.csv`, `bonds.csv`, `summary.json`, and a progress bar on a
//! terminal. Each observer has default no-op methods; the run loop calls `start` once, `step`
//! after every communication step, `finish` once (also after a failure, so everything computed
//! up to the failure is on disk).

use crate::algorithm::BondState;
use crate::error::{MasterError, Result};
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Final state of a run, for `summary.json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// `ok`, `failed` or `interrupted`.
    pub status: String,
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
    /// Communication step (s).
    pub step_size: f64,
    /// Whether Jacobi used worker threads.
    pub parallel: bool,
    /// Per instance.
    pub instances: Vec<InstanceSummary>,
    /// Per bond.
    pub bonds: Vec<BondSummary>,
}

/// Per-instance statistics.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InstanceSummary {
    /// Name.
    pub name: String,
    /// FMU file.
    pub fmu: String,
    /// Macro-step doStep calls (sub-steps count once).
    pub do_step_calls: u64,
    /// Seconds inside doStep.
    pub do_step_seconds: f64,
}

/// Per-bond totals.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BondSummary {
    /// Name.
    pub name: String,
    /// Σ δE (J).
    pub energy: f64,
    /// Σ |δE| (J).
    pub energy_abs: f64,
}

/// Receives the run's events.
pub trait Observer {
    /// Before the first step, with the values at the start time.
    fn start(&mut self, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
        Ok(())
    }
    /// After step n, at time t.
    fn step(&mut self, _n: u64, _t: f64, _values: &[f64], _bonds: &[BondState]) -> Result<()> {
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

/// `results.csv`: `time,inst.var,…`, every k-th communication point.
pub struct ResultsCsv {
    path: PathBuf,
    out: BufWriter<File>,
    every: u64,
    line: Vec<u8>,
    ryu: ryu::Buffer,
}

impl ResultsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, labels: &[String], every: u64) -> Result<Self> {
        let file = File::create(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "time,{}", labels.join(",")).map_err(io(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            out,
            every: every.max(1),
            line: Vec::with_capacity(256),
            ryu: ryu::Buffer::new(),
        })
    }

    /// One row; floats in shortest round-trip form (ryu), non-finite as NaN/inf.
    fn write(&mut self, t: f64, values: &[f64]) -> Result<()> {
        self.line.clear();
        push_float(&mut self.line, &mut self.ryu, t);
        for v in values {
            self.line.push(b',');
            push_float(&mut self.line, &mut self.ryu, *v);
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line).map_err(io(&self.path))
    }
}

impl Observer for ResultsCsv {
    fn start(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        self.write(t, values)
    }
    fn step(&mut self, n: u64, t: f64, values: &[f64], _b: &[BondState]) -> Result<()> {
        if (n + 1).is_multiple_of(self.every) {
            self.write(t, values)?;
        }
        Ok(())
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.out.flush().map_err(io(&self.path))
    }
}

fn push_float(line: &mut Vec<u8>, buf: &mut ryu::Buffer, x: f64) {
    if x.is_finite() {
        let s = buf.format_finite(x);
        // ryu writes integral values as "1.0" and small ones as "1e-7": both are valid CSV numbers.
        line.extend_from_slice(s.as_bytes());
    } else if x.is_nan() {
        line.extend_from_slice(b"NaN");
    } else if x > 0.0 {
        line.extend_from_slice(b"inf");
    } else {
        line.extend_from_slice(b"-inf");
    }
}

/// `bonds.csv`: `time,bond.dP,bond.dE,bond.E,bond.E_abs` per bond.
pub struct BondsCsv {
    path: PathBuf,
    out: BufWriter<File>,
    every: u64,
}

impl BondsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, names: &[String], every: u64) -> Result<Self> {
        let file = File::create(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let cols: Vec<String> = names.iter().map(|n| format!("{n}.dP,{n}.dE,{n}.E,{n}.E_abs")).collect();
        writeln!(out, "time{}{}", if cols.is_empty() { "" } else { "," }, cols.join(",")).map_err(io(path))?;
        Ok(Self { path: path.to_path_buf(), out, every: every.max(1) })
    }
}

impl Observer for BondsCsv {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], bonds: &[BondState]) -> Result<()> {
        if !(n + 1).is_multiple_of(self.every) {
            return Ok(());
        }
        let mut line = format!("{t}");
        for b in bonds {
            line.push_str(&format!(",{},{},{},{}", b.dp, b.de, b.e, b.e_abs));
        }
        writeln!(self.out, "{line}").map_err(io(&self.path))
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        self.out.flush().map_err(io(&self.path))
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
