//! SSP 1.0 (System Structure and Parameterization): a front end like the TOML system file, and
//! an exporter.
//!
//! - [`read`]: an `.ssp` (zip with `SystemStructure.ssd`, FMUs under `resources/`, `.ssv`
//!   parameter sets, `.ssm` mappings) or an unpacked `.ssd` into a [`SystemBuilder`], so every
//!   check of [`SystemBuilder::build`] applies. Settings SSP cannot carry (step, algorithm,
//!   extrapolation, bonds, time tables, outputs, tune, …) come from our annotation
//!   (`type="org.hydraulic-cosim.settings"`, see `annotation`).
//! - [`export`]: a system (TOML) with its FMUs embedded, start values as an `.ssv`, gain/offset as
//!   `ssc:LinearTransformation`, `ssd:DefaultExperiment`, input files as OMSimulator's CSV table
//!   components (`tables`), and the rest in our annotation.
//!
//! Refused with the element and its line: nested systems, signal dictionaries, components that
//! are neither FMUs nor CSV tables (`application/table`, `text/csv`: read as input files), SSDs
//! that import themselves, Model Exchange, connections to the system's own connectors, mapping
//! transformations other than linear, connected connectors with different units (unless
//! `suppressUnitConversion="true"`).

pub mod annotation;
mod ident;
mod read;
mod tables;
mod units;
mod write;
mod xml;

pub use write::{export, export_with, EnumerationForm, ExportOptions, Exported};

use crate::error::{MasterError, Result};
use crate::fmu::archive::Archive;
use crate::system::{Overrides, SystemBuilder};
use std::io::Read;
use std::path::Path;

/// Which SSP file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A zip package with `SystemStructure.ssd`.
    Package,
    /// An unpacked `.ssd` (XML with root `SystemStructureDescription`).
    Description,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Package => "SSP 1.0 package (.ssp)",
            Self::Description => "SSP 1.0 system structure description (.ssd)",
        })
    }
}

/// A system read from SSP. Keeps the extracted package (the FMUs the builder points at) until
/// dropped, so keep it alive for the whole run.
#[derive(Debug)]
pub struct Ssp {
    /// The system, as from a TOML file.
    pub builder: SystemBuilder,
    /// What was read.
    pub kind: Kind,
    /// Lines for the user: what was read leniently (e.g. OMSimulator's version="2.0") or taken
    /// from another tool's annotation (OMSimulator's step).
    pub notes: Vec<String>,
    _package: Option<Archive>,
}

impl Ssp {
    /// SSP 1.0 has no communication step and may have no stop time: an error naming the missing
    /// one and the flag to give, unless our annotation or `over` supplies it.
    pub fn check_overrides(&self, over: &Overrides) -> Result<()> {
        let s = &self.builder.settings;
        let missing = |what: &str, flag: &str| MasterError::System {
            path: self.builder.path().to_path_buf(),
            key: "ssd:DefaultExperiment".into(),
            message: format!(
                "no {what} (SSP 1.0 has none; our org.hydraulic-cosim.settings annotation is absent): pass {flag}"
            ),
        };
        if over.settings.step.is_none() && s.step.is_none() {
            return Err(missing("communication step", "--step H"));
        }
        if over.settings.stop.is_none() && s.stop.is_none() {
            return Err(missing("stopTime", "--stop-time T"));
        }
        Ok(())
    }
}

/// Whether `path` is an SSP: a zip with `SystemStructure.ssd`, or XML whose root element is
/// `SystemStructureDescription`. Decided by content, not by extension.
pub fn detect(path: &Path) -> Option<Kind> {
    let mut head = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    file.take(64 * 1024).read_to_end(&mut head).ok()?;
    if head.starts_with(b"PK\x03\x04") {
        let zip = zip::ZipArchive::new(std::fs::File::open(path).ok()?).ok()?;
        return zip.index_for_name("SystemStructure.ssd").map(|_| Kind::Package);
    }
    let text = String::from_utf8_lossy(&head);
    let mut reader = quick_xml::Reader::from_str(&text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                return (e.local_name().as_ref() == b"SystemStructureDescription").then_some(Kind::Description);
            }
            Ok(quick_xml::events::Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Reads an `.ssp` package or an unpacked `.ssd` (see the module documentation).
pub fn read(path: &Path) -> Result<Ssp> {
    read_in(path, &crate::host::Host::default())
}

/// [`read`], a package's extraction registered with `host`'s cleanup while it exists.
pub fn read_in(path: &Path, host: &crate::host::Host) -> Result<Ssp> {
    let io = |source| MasterError::Io { path: path.to_path_buf(), source };
    match detect(path) {
        Some(Kind::Package) => {
            let package = Archive::extract_package(path, "SystemStructure.ssd", host)?;
            let real = package.dir().join("SystemStructure.ssd");
            let shown = path.join("SystemStructure.ssd");
            let text = std::fs::read_to_string(&real).map_err(|e| MasterError::System {
                path: shown.clone(),
                key: "SystemStructure.ssd".into(),
                message: format!("cannot be read as UTF-8 text: {e}"),
            })?;
            let src = read::Source {
                shown,
                real,
                base: package.dir().to_path_buf(),
                shown_base: path.to_path_buf(),
                package: true,
            };
            let (builder, notes) = read::read_ssd(&text, &src)?;
            Ok(Ssp { builder, kind: Kind::Package, notes, _package: Some(package) })
        }
        Some(Kind::Description) => {
            let text = std::fs::read_to_string(path).map_err(io)?;
            // A bare file name's parent is "", which has no absolute form: the working folder.
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let base = std::path::absolute(parent).map_err(io)?;
            let src = read::Source {
                shown: path.to_path_buf(),
                real: path.to_path_buf(),
                base,
                shown_base: parent.to_path_buf(),
                package: false,
            };
            let (builder, notes) = read::read_ssd(&text, &src)?;
            Ok(Ssp { builder, kind: Kind::Description, notes, _package: None })
        }
        None => {
            std::fs::metadata(path).map_err(io)?;
            Err(MasterError::System {
                path: path.to_path_buf(),
                key: "SSP".into(),
                message: "neither a zip with SystemStructure.ssd nor XML with root SystemStructureDescription".into(),
            })
        }
    }
}
