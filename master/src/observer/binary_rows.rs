//! `results.csv` rows with exact columns ([`BinaryRows`]): numbers as the writer thread writes
//! them, each non-Real column from its exact [`Value`] ([`write_csv`]: an integer beyond
//! 2^53 in full, a Binary value as lower-case hexadecimal, two digits per byte, an empty value an
//! empty field), formatted and written on the run's thread (the rows of floats of
//! [`super::rows::Rows`] cannot carry them).

use super::files::{cut_partial_line, written};
use super::rows::number;
use crate::error::Result;
use crate::fmu::Value;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `value` as `results.csv` writes it: through `float` (the writer's number format) where
/// a float is exact (Floats, Booleans, integers up to 2^53 in magnitude), an integer beyond in full
/// (its decimal digits), Binary as lower-case hexadecimal, a String as a CSV field.
pub(super) fn write_csv(value: &Value, line: &mut Vec<u8>, float: impl FnOnce(&mut Vec<u8>, f64)) {
    const EXACT: u64 = 1 << 53;
    match value {
        Value::Float(_) | Value::Boolean(_) | Value::Clock(_) => float(line, value.as_f64()),
        Value::Int(k) if k.unsigned_abs() <= EXACT => float(line, *k as f64),
        Value::UInt(k) if *k <= EXACT => float(line, *k as f64),
        Value::Int(k) => {
            let _ = write!(line, "{k}");
        }
        Value::UInt(k) => {
            let _ = write!(line, "{k}");
        }
        Value::String(s) => line.extend_from_slice(super::csv_field(s).as_bytes()),
        Value::Binary(b) => model_description::push_hex(line, b),
    }
}

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
                    Some(v) => write_csv(v, &mut self.line, |line, x| number(line, digits, x)),
                    None => number(&mut self.line, digits, *x),
                }
                next += 1;
            } else {
                number(&mut self.line, &mut self.digits, *x);
            }
        }
        self.line.push(b'\n');
        let r = out.write_all(&self.line);
        self.failed(r)
    }

    /// After a write error, the file cut back to its last complete row and no more rows.
    fn failed(&mut self, r: std::io::Result<()>) -> Result<()> {
        if r.is_err() {
            if let Some(out) = self.out.take() {
                cut_partial_line(out);
            }
        }
        r.map_err(written(&self.path))
    }

    pub(super) fn close(&mut self) -> Result<()> {
        match self.out.as_mut() {
            Some(out) => {
                let r = out.flush();
                self.failed(r)?;
                self.out = None;
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Drop for BinaryRows {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    #[test]
    fn exact_values_are_written_exactly() {
        let mut line = Vec::new();
        super::write_csv(&crate::fmu::Value::UInt((1 << 63) + 1), &mut line, |_, _| unreachable!());
        assert_eq!(line, b"9223372036854775809");
        line.clear();
        super::write_csv(&crate::fmu::Value::Binary(vec![0xc0, 0xff, 0xee]), &mut line, |_, _| unreachable!());
        assert_eq!(line, b"c0ffee");
        line.clear();
        super::write_csv(&crate::fmu::Value::String("a,\"b\"".into()), &mut line, |_, _| unreachable!());
        assert_eq!(line, b"\"a,\"\"b\"\"\"");
    }
}
