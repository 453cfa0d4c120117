//! `summary.json`: the [`Summary`] written at the end of a run.

use super::files::{io, write_replacing};
use super::{Observer, Summary};
use crate::error::{MasterError, Result};
use std::path::{Path, PathBuf};

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
