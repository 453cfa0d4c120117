//! The TOML front end: a system file read into a [`SystemBuilder`] through the one schema
//! ([`SystemFile`]: syntax errors, unknown keys and values of the wrong TOML type as
//! `file:line:column: key: message`). Everything else is checked by [`SystemBuilder::build`], the same checks
//! as for a system built in code.

use super::schema::SystemFile;
use super::SystemBuilder;
use crate::error::{MasterError, Result};
use std::path::Path;

impl SystemBuilder {
    /// Reads a system file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = read_text(path)?;
        Self::parse(path, &text)
    }
}

/// The text of a system file; an FMU or an SSP given instead is named as such.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| {
        // An FMU or an SSP where a system file is wanted (`export-ssp`, `tune`, `bench`): say
        // so, instead of "stream did not contain valid UTF-8" (issue 30 item 17).
        let kind = match crate::input_kind::detect(path) {
            Ok(crate::input_kind::Input::Fmu) => Some("an FMU"),
            Ok(crate::input_kind::Input::Ssp) => Some("an SSP"),
            _ => None,
        };
        match kind {
            Some(kind) => MasterError::Unsupported {
                path: path.to_path_buf(),
                message: format!(
                    "this is {kind}, and this command takes a system file (TOML); `cosim run` runs FMUs \
                         and SSPs, and a system file names them in [instances]"
                ),
            },
            None => MasterError::Io { path: path.to_path_buf(), source },
        }
    })
}

impl SystemBuilder {
    /// Parses system text (`path` names it in messages; FMU paths are relative to its folder).
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        // `file:line:column: key: message`, the form editors and terminals jump to.
        let file = SystemFile::from_toml_at(text).map_err(|e| MasterError::System {
            path: match e.at {
                Some((line, column)) => format!("{}:{line}:{column}", path.display()).into(),
                None => path.to_path_buf(),
            },
            key: e.key,
            message: e.message,
        })?;
        let mut b = Self::from_file(path, file)?;
        b.text = Some(text.into());
        Ok(b)
    }
}
