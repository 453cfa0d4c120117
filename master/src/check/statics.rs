//! Family 1, the static checks that read files only (nothing of the FMU runs here): the model
//! description against the standard ([`model_description::validate`]) and the Linux binary
//! (an x86-64 shared library exporting every FMI 2.0 Co-Simulation function,
//! [`Archive::check_runnable`]). Loading the binary runs its initialisers, so that part (and the
//! capability flags against what the functions do) is the worker check `load`.

use super::Outcome;
use crate::fmu::Archive;
use model_description::{ModelDescription, Severity};
use std::path::Path;

/// What the static checks read: the description (or why it cannot be read).
pub struct Static<'a> {
    /// The FMU file.
    pub fmu: &'a Path,
    /// The parsed description, or the error text.
    pub md: Result<ModelDescription, String>,
}

impl<'a> Static<'a> {
    /// Reads `modelDescription.xml` of `fmu` without extracting the archive.
    pub fn read(fmu: &'a Path) -> Self {
        let md = Archive::read_model_description(fmu).map_err(|e| e.to_string()).and_then(|l| {
            model_description::from_str(&l.model_description).map_err(|e| format!("modelDescription.xml: {e}"))
        });
        Self { fmu, md }
    }
}

/// Why `cosim check` does not check `fmu`: it is an FMI 3.0 FMU (its description says so).
/// The checks are FMI 2.0's (calling sequences, `fmi2*` status functions, input derivatives,
/// the 2.0 schema); run on a 3.0 FMU through the master's 2.0 view of it they would judge the
/// translation, not the FMU, so it is refused (check `description` FAILs with this text, the
/// others are not run) rather than half-checked.
pub fn fmi3_refusal(fmu: &Path) -> Option<String> {
    let xml = Archive::read_model_description(fmu).ok()?.model_description;
    match model_description::from_str(&xml) {
        Err(model_description::ReadError::UnsupportedVersion { version, .. }) if version.starts_with("3.") => {
            Some(format!(
                "fmiVersion=\"{version}\": an FMI 3.0 FMU. `cosim check` checks FMI 2.0 FMUs only (its checks are \
                 FMI 2.0's calling sequences, fmi2 status functions and schema); `cosim run`, `cosim info`, systems and \
                 SSP take FMI 3.0 FMUs. To validate a 3.0 FMU against the standard: `fmpy validate`"
            ))
        }
        _ => None,
    }
}

/// Lists at most `n` items, then "… and k more".
pub(crate) fn some<T: std::fmt::Display>(items: &[T], n: usize) -> String {
    let mut s: Vec<String> = items.iter().take(n).map(ToString::to_string).collect();
    if items.len() > n {
        s.push(format!("… and {} more", items.len() - n));
    }
    s.join("; ")
}

/// The description reads and passes the standard's rules: errors FAIL, warnings WARN.
pub fn description(st: &Static<'_>) -> Outcome {
    let md = match &st.md {
        Ok(md) => md,
        Err(e) => return Outcome::fail(e.clone()),
    };
    if md.fmi_version != "2.0" {
        return Outcome::fail(format!("fmiVersion=\"{}\": not an FMI 2.0 FMU", md.fmi_version));
    }
    if md.co_simulation.is_none() {
        return Outcome::fail("no <CoSimulation> element: not a Co-Simulation FMU");
    }
    let problems = model_description::validate(md);
    let line = |p: &model_description::Problem| {
        if p.line > 0 {
            format!("line {}: {}", p.line, p.message)
        } else {
            p.message.clone()
        }
    };
    let errors: Vec<String> = problems.iter().filter(|p| p.severity == Severity::Error).map(line).collect();
    let warnings: Vec<String> = problems.iter().filter(|p| p.severity == Severity::Warning).map(line).collect();
    let counts =
        format!("{} variables, {} errors, {} warnings", md.model_variables.len(), errors.len(), warnings.len());
    if !errors.is_empty() {
        Outcome::fail(format!("{counts}: {}", some(&errors, 3)))
    } else if !warnings.is_empty() {
        Outcome::warn(format!("{counts}: {}", some(&warnings, 3)))
    } else {
        Outcome::pass(counts)
    }
}

/// `binaries/linux64/<modelIdentifier>.so` is there, an x86-64 ELF shared library that exports
/// every FMI 2.0 common and Co-Simulation function (read from its symbol table, not loaded).
pub fn binary(st: &Static<'_>) -> Outcome {
    let Ok(md) = &st.md else { return Outcome::skip("modelDescription.xml cannot be read") };
    let Some(cs) = &md.co_simulation else { return Outcome::skip("no <CoSimulation> interface") };
    let so = format!("binaries/linux64/{}.so", cs.model_identifier);
    match Archive::check_runnable(st.fmu, &so) {
        Ok(()) => {
            Outcome::pass(format!("{so} exports the {} required functions", crate::fmu::ffi::REQUIRED_SYMBOLS.len()))
        }
        Err(why) => Outcome::fail(why),
    }
}
