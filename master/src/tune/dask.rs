//! `cosim tune --dask SCHEDULER`: the (test, configuration) sequences of the sweep run as tasks
//! on a Dask cluster, through the `cosim` Python package's driver `python -m cosim.tune_dask`
//! (one JSON line per finished sequence on its stdout). Each worker rebuilds the sweep settings
//! from the system file and the same [`TuneArgs`] ([`super::run_sequence`]), so its rows are those
//! a local thread would produce; [`super::sweep`] stores and reports them with the same code.

use super::{results, Limit, Row};
use crate::error::{MasterError, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where to run the sweep's sequences.
#[derive(Debug, Clone)]
pub struct Dask {
    /// Scheduler address (`tcp://host:8786`).
    pub scheduler: String,
    /// The command-line adjustments of the sweep settings, replayed by every worker.
    pub args: super::TuneArgs,
    /// Python with the `cosim` package and `dask.distributed` (`None`: [`python`]).
    pub python: Option<PathBuf>,
}

/// The Python that runs the driver: `COSIM_PYTHON`, else the workspace's `.venv/bin/python`
/// (as `cosim bench`), else `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("COSIM_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// What one finished sequence reports (a line of the driver's stdout).
#[derive(Debug, Serialize, Deserialize)]
pub struct Finished {
    /// Every run of the sequence, in H order.
    pub rows: Vec<Row>,
    /// Its limit.
    pub limit: Limit,
}

#[derive(Deserialize)]
struct ErrorLine {
    job: (usize, usize),
    error: String,
}

/// Runs `jobs` on the cluster; every finished sequence goes to `each` (in completion order).
pub(super) fn run(
    d: &Dask,
    system: &Path,
    jobs: &[(usize, usize)],
    mut each: impl FnMut(Finished) -> Result<()>,
) -> Result<()> {
    let err = |message: String| MasterError::System { path: system.to_path_buf(), key: "tune --dask".into(), message };
    let python = d.python.clone().unwrap_or_else(python);
    let system =
        std::fs::canonicalize(system).map_err(|source| MasterError::Io { path: system.to_path_buf(), source })?;
    let args = serde_json::to_string(&d.args).map_err(|e| err(e.to_string()))?;
    let job_list = serde_json::to_string(jobs).map_err(|e| err(e.to_string()))?;
    let mut child = Command::new(&python)
        .args(["-m", "cosim.tune_dask", "--scheduler", &d.scheduler, "--system"])
        .arg(&system)
        .args(["--args", &args, "--jobs", &job_list])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            err(format!(
                "cannot start {} ({e}); set COSIM_PYTHON to a Python with the cosim package and dask[distributed]",
                python.display()
            ))
        })?;
    let mut stderr = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            text
        })
    });
    let stdout = child.stdout.take().map(BufReader::new);
    let mut outcome = Ok(());
    let mut done = 0;
    for line in stdout.into_iter().flat_map(BufRead::lines) {
        let Ok(line) = line else { break };
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        if let Ok(e) = serde_json::from_str::<ErrorLine>(line) {
            outcome = Err(err(format!("sequence (test {}, configuration {}): {}", e.job.0, e.job.1, e.error)));
            break;
        }
        match serde_json::from_str::<Finished>(line) {
            Ok(f) => {
                done += 1;
                if let Err(e) = each(f) {
                    outcome = Err(e);
                    break;
                }
            }
            Err(e) => {
                outcome = Err(err(format!("bad line from the driver ({e}): {line}")));
                break;
            }
        }
    }
    if outcome.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| err(e.to_string()))?;
    let text = stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
    outcome?;
    if !status.success() || done != jobs.len() {
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let hint = if text.contains("No module named 'cosim'") || text.contains("No module named cosim") {
            "\nInstall the cosim wheel into that Python (maturin build --release -m python/Cargo.toml; pip install target/wheels/cosim-*.whl), or set COSIM_PYTHON."
        } else if text.contains("dask") && text.contains("No module named") {
            "\nInstall Dask into that Python: pip install \"dask[distributed]\", or set COSIM_PYTHON."
        } else {
            ""
        };
        return Err(err(format!(
            "{} -m cosim.tune_dask ({status}) finished {done} of {} sequences:\n{}{hint}",
            python.display(),
            jobs.len(),
            tail.join("\n")
        )));
    }
    Ok(())
}

/// Whether a row came from the cache (then it is not appended again).
pub(super) fn cached(cache: &results::Cache, r: &Row) -> bool {
    cache.contains_key(&results::key(&r.test, &r.config, r.h))
}

/// f64 as a JSON number, or `"inf"`, `"-inf"`, `"NaN"` (JSON has no non-finite numbers).
pub mod float {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Number or text.
    #[derive(Deserialize)]
    #[serde(untagged)]
    pub(super) enum Wire {
        Number(f64),
        Text(String),
    }

    impl Wire {
        pub(super) fn value<E: serde::de::Error>(self) -> Result<f64, E> {
            match self {
                Wire::Number(x) => Ok(x),
                Wire::Text(s) => s.parse().map_err(E::custom),
            }
        }
    }

    /// Serializes `x`.
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else {
            s.serialize_str(&x.to_string())
        }
    }

    /// Deserializes a number or text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Wire::deserialize(d)?.value()
    }
}

/// `Option<f64>` as [`float`] or `null`.
pub mod opt_float {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes `x`.
    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(x) => super::float::serialize(x, s),
            None => s.serialize_none(),
        }
    }

    /// Deserializes `null`, a number or text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Option::<super::float::Wire>::deserialize(d)?.map(|w| w.value()).transpose()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tune::criterion::Verdict;

    #[test]
    fn finished_sequences_round_trip_through_json_exactly() {
        let f = Finished {
            rows: vec![Row {
                test: "sin:35".into(),
                config: "m = 0".into(),
                h: 0.1 + 0.2,
                steps: 3,
                time: 1.0 / 3.0,
                e_abs: f64::INFINITY,
                outcome: "failed".into(),
                message: "blow-up \"x\"".into(),
            }],
            limit: Limit { test: 1, config: 2, h: Some(0.3), verdict: Verdict::Excess(f64::INFINITY), rate: None },
        };
        let text = serde_json::to_string(&f).unwrap();
        assert!(!text.contains('\n'));
        let back: Finished = serde_json::from_str(&text).unwrap();
        assert_eq!(back.rows, f.rows);
        assert_eq!(back.limit, f.limit);
    }
}
