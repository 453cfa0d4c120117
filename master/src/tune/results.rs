//! `tune.csv`, the resumable results file: one row per run, appended and flushed as soon as the
//! run ends. `tune.key` beside it holds a fingerprint of the system file and the sweep settings;
//! a restarted sweep with the same fingerprint reuses the rows (a killed sweep continues where it
//! stopped), a different one starts a new file (the old one is kept as `tune.csv.old`).

use super::runner::Base;
use super::space::TuneSpec;
use super::Row;
use crate::error::{MasterError, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER: &str = "test,config,H,steps,time,sum_abs_dE,sum_abs_dE_per_s,outcome,message";

/// Rows of earlier runs by [`key`].
pub type Cache = HashMap<String, Row>;

/// Cache key of a run: test, configuration and H in nanoseconds.
pub fn key(test: &str, config: &str, h: f64) -> String {
    format!("{test}|{config}|{}", (h * 1e9).round() as i64)
}

/// The open results file.
pub struct Store {
    path: PathBuf,
    file: File,
    cache: Cache,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MasterError + '_ {
    move |source| MasterError::Io { path: path.to_path_buf(), source }
}

impl Store {
    /// Opens `dir/tune.csv`, reusing its rows when `dir/tune.key` matches this sweep.
    pub fn open(dir: &Path, base: &Base, spec: &TuneSpec) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("tune.csv");
        let key_path = dir.join("tune.key");
        let system = std::fs::read_to_string(base.path()).map_err(io(base.path()))?;
        let fingerprint = format!("{system}\n{spec:?}");
        let same = std::fs::read_to_string(&key_path).is_ok_and(|k| k == fingerprint);
        let mut cache = Cache::new();
        if same && path.exists() {
            for row in read(&path)? {
                cache.insert(key(&row.test, &row.config, row.h), row);
            }
        } else if path.exists() {
            std::fs::rename(&path, dir.join("tune.csv.old")).map_err(io(&path))?;
        }
        std::fs::write(&key_path, fingerprint).map_err(io(&key_path))?;
        let fresh = cache.is_empty();
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io(&path))?;
        if fresh {
            file.set_len(0).map_err(io(&path))?;
            writeln!(file, "{HEADER}").map_err(io(&path))?;
        } else if !std::fs::read(&path).map_err(io(&path))?.ends_with(b"\n") {
            // A killed write left half a line: end it, so the next row starts on its own line.
            writeln!(file).map_err(io(&path))?;
        }
        Ok(Self { path, file, cache })
    }

    /// Rows reused from the earlier sweep.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether nothing was reused.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// The reused rows (taken out of the store).
    pub fn cache(&mut self) -> Cache {
        std::mem::take(&mut self.cache)
    }

    /// Appends one row and flushes it.
    pub fn append(&mut self, r: &Row) -> Result<()> {
        let line = format!(
            "{},{},{:e},{},{:e},{:e},{},{},{}\n",
            quote(&r.test),
            quote(&r.config),
            r.h,
            r.steps,
            r.time,
            r.e_abs,
            r.rate().map_or(String::new(), |x| format!("{x:e}")),
            r.outcome,
            quote(&r.message)
        );
        self.file.write_all(line.as_bytes()).map_err(io(&self.path))?;
        self.file.flush().map_err(io(&self.path))
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\"").replace('\n', " "))
    } else {
        s.to_owned()
    }
}

/// Splits one CSV line (double-quoted fields with "" escapes).
pub fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    out.push(cur);
    out
}

/// One row of `tune.csv` (`None` for a truncated or malformed line, e.g. from a killed write).
pub fn parse_row(line: &str) -> Option<Row> {
    let f = split_csv(line);
    if f.len() != 9 {
        return None;
    }
    Some(Row {
        test: f[0].clone(),
        config: f[1].clone(),
        h: f[2].parse().ok()?,
        steps: f[3].parse().ok()?,
        time: f[4].parse().ok()?,
        e_abs: f[5].parse().ok()?,
        outcome: match f[7].as_str() {
            "ok" | "failed" => f[7].clone(),
            _ => return None,
        },
        message: f[8].clone(),
    })
}

/// The rows of a `tune.csv` written by [`Store`], in file order; truncated or malformed lines
/// (e.g. from a killed write) are skipped.
pub fn read(path: &Path) -> Result<Vec<Row>> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    Ok(text.lines().skip(1).filter_map(parse_row).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rows_round_trip_through_csv() {
        let r = Row {
            test: "sin:17.5".into(),
            config: "m = 2; mech.solver = I1AL".into(),
            h: 1.2e-3,
            steps: 834,
            time: 1.0008,
            e_abs: 3.5,
            outcome: "failed".into(),
            message: "hyd: \"x\", at t = 1".into(),
        };
        let line = format!(
            "{},{},{:e},{},{:e},{:e},,{},{}",
            quote(&r.test),
            quote(&r.config),
            r.h,
            r.steps,
            r.time,
            r.e_abs,
            r.outcome,
            quote(&r.message)
        );
        assert_eq!(parse_row(&line), Some(r.clone()));
        assert_eq!(parse_row("step,m = 0,1e-3,10"), None);
        // read: the header is skipped, and so is a line cut short by a killed write.
        let path = std::env::temp_dir().join(format!("tune-csv-{}.csv", std::process::id()));
        std::fs::write(&path, format!("{HEADER}\n{line}\nstep,m = 0,1e-3,10")).unwrap();
        let rows = read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(rows, vec![r]);
    }
}
