//! `results.csv` rows with exact columns ([`BinaryRows`]): numbers as the writer thread writes
//! them, each non-Real column from its exact [`Value`] ([`Value::write_csv`]: an integer beyond
//! 2^53 in full, a Binary value as lower-case hexadecimal, two digits per byte, an empty value an
//! empty field), formatted and written on the run's thread (the rows of floats of
//! [`super::rows::Rows`] cannot carry them).

use super::files::io;
use super::rows::number;
use crate::error::Result;
use crate::fmu::Value;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Rows of `time` and the recorded values, the exact columns from the last [`BinaryRows::set`].
pub(super) struct BinaryRows {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    /// Exact columns, 0-based among the values, ascending.
    binary: Vec<usize>,
    /// Their current values (buffers reused from row to row).
    bytes: Vec<Value>,
    line: Vec<u8>,
    digits: zmij::Buffer,
}

impl BinaryRows {
    pub(super) fn new(path: &Path, out: BufWriter<File>, binary: &[usize]) -> Self {
        Self {
            path: path.to_path_buf(),
            out: Some(out),
            binary: binary.to_vec(),
            bytes: vec![Value::Float(f64::NAN); binary.len()],
            line: Vec::with_capacity(256),
            digits: zmij::Buffer::new(),
        }
    }

    /// The exact values of the next row.
    pub(super) fn set(&mut self, values: &[Value]) {
        for (b, v) in self.bytes.iter_mut().zip(values) {
            b.assign(v);
        }
    }

    pub(super) fn push(&mut self, t: f64, values: &[f64]) -> Result<()> {
        let Some(out) = &mut self.out else { return Ok(()) };
        self.line.clear();
        number(&mut self.line, &mut self.digits, t);
        let mut next = 0;
        for (k, x) in values.iter().enumerate() {
            self.line.push(b',');
            if self.binary.get(next) == Some(&k) {
                let digits = &mut self.digits;
                match self.bytes.get(next) {
                    Some(v) => v.write_csv(&mut self.line, |line, x| number(line, digits, x)),
                    None => number(&mut self.line, digits, *x),
                }
                next += 1;
            } else {
                number(&mut self.line, &mut self.digits, *x);
            }
        }
        self.line.push(b'\n');
        out.write_all(&self.line).map_err(io(&self.path))
    }

    pub(super) fn close(&mut self) -> Result<()> {
        match self.out.take() {
            Some(mut out) => out.flush().map_err(io(&self.path)),
            None => Ok(()),
        }
    }
}

impl Drop for BinaryRows {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
