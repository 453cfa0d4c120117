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
    /// The parsed description (FMI 2.0, or the FMI 2.0 view of an FMI 3.0 one), or the error text.
    pub md: Result<ModelDescription, String>,
    /// What cosim cannot run yet of an FMI 3.0 FMU (clocks, scheduled execution, …), one line
    /// each: its dynamic checks are then SKIP.
    pub unsupported: Vec<String>,
}

impl<'a> Static<'a> {
    /// Reads `modelDescription.xml` of `fmu` (FMI 2.0 or 3.0) without extracting the archive.
    pub fn read(fmu: &'a Path) -> Self {
        let mut unsupported = Vec::new();
        let md = Archive::read_model_description(fmu).map_err(|e| e.to_string()).and_then(|l| {
            let xml = &l.model_description;
            match model_description::from_str(xml) {
                Err(model_description::ReadError::UnsupportedVersion { version, .. }) if version.starts_with("3.") => {
                    // Read as `cosim run` reads it (clocks in event mode, Scheduled Execution), and
                    // what it refuses of it (the one capability list, fmu/capabilities.rs).
                    let (md, x) = crate::fmu::load::parse_description(fmu, xml).map_err(|e| e.to_string())?;
                    let Some(x) = x else { return Ok(md) };
                    let plan = crate::fmu::capabilities::Plan::of(&md, Some(&x));
                    unsupported = plan.refusals.iter().map(ToString::to_string).collect();
                    Ok(md)
                }
                r => r.map_err(|e| format!("modelDescription.xml: {e}")),
            }
        });
        Self { fmu, md, unsupported }
    }

    /// Whether the description is an FMI 3.0 one.
    pub fn fmi3(&self) -> bool {
        self.md.as_ref().is_ok_and(|m| m.fmi_version.starts_with("3."))
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

/// A rule of the standard whose breach no conforming importer turns into a wrong result, a crash
/// or a hang: the description breaks its letter, the check WARNs quoting it (FAIL is kept for what
/// does harm, [the verdict scale](../../../docs/check.md)).
pub struct LetterRule {
    /// Part of the validator's message that identifies the rule.
    pub says: &'static str,
    /// The rule and its section.
    pub rule: &'static str,
    /// Why no importer computes wrong results because of it.
    pub harmless: &'static str,
    /// What FMPy (`fmpy validate`) and fmuCheck do with it.
    pub tools: &'static str,
}

/// The letter-only rules (one list; docs/check.md "Verdict scale" describes them).
pub const LETTER_RULES: &[LetterRule] = &[
    LetterRule {
        says: "depends on the parameter",
        rule: "FMI 2.0 §2.2.8: Outputs and Derivatives depend only on inputs, continuous states and the independent variable",
        harmless: "a parameter does not change while stepping, so the extra dependency orders nothing differently",
        tools: "fmpy validate and fmuCheck accept it (the modelica Reference FMU BouncingBall 2.0 declares der(v) on the parameter g)",
    },
    LetterRule {
        says: "does not belong in InitialUnknowns",
        rule: "FMI 2.0 §2.2.8: InitialUnknowns lists exactly the outputs, calculated parameters, states and derivatives with initial approx or calculated",
        harmless: "an extra entry makes an importer read one more value after initialization, never a wrong one",
        tools: "fmpy validate reports it too (\"InitialUnknowns does not contain the expected set\")",
    },
    LetterRule {
        says: "is not in ascending index order",
        rule: "FMI 2.0 §2.2.8: the Unknowns are listed in ascending index order",
        harmless: "importers look unknowns up by index",
        tools: "fmpy validate does not check the order",
    },
    LetterRule {
        says: "is listed twice",
        rule: "FMI 2.0 §2.2.8: each Unknown is listed once",
        harmless: "both entries carry the same variable; importers look unknowns up by index",
        tools: "fmpy validate does not check it",
    },
    LetterRule {
        says: "is not defined in <UnitDefinitions>",
        rule: "FMI 2.0 §2.2.2: a unit is defined in UnitDefinitions",
        harmless: "units are metadata for display and connection checks, the FMU computes without them",
        tools: "fmpy validate reports it too",
    },
    LetterRule {
        says: "is not a <DisplayUnit> of unit",
        rule: "FMI 2.0 §2.2.2: a displayUnit is one of its unit's DisplayUnits",
        harmless: "display units only change how values are shown",
        tools: "fmpy validate reports it too",
    },
    LetterRule {
        says: "is given without a unit",
        rule: "FMI 2.0 §2.2.2: displayUnit only with a unit",
        harmless: "display units only change how values are shown",
        tools: "fmpy validate does not check it",
    },
    LetterRule {
        says: "causality=\"parameter\" is not allowed with variability=\"continuous\"",
        rule: "FMI 2.0 §2.2.7 (FMI 3.0 the same): a parameter is fixed or tunable",
        harmless: "an importer sets a parameter before initialization, or between steps, which a continuous one allows too",
        tools: "fmpy validate reports it for FMI 2.0 FMUs and not for FMI 3.0 ones (pythonfmu3 writes it)",
    },
    LetterRule {
        says: "which initial=\"calculated\"",
        rule: "FMI 2.0 §2.2.7: a variable with initial=\"calculated\" has no start value",
        harmless: "a conforming importer does not set it; the FMU computes the value",
        tools: "fmpy validate reports it too",
    },
];

/// The letter-only rule a validator message breaks, if any.
pub fn letter_rule(message: &str) -> Option<&'static LetterRule> {
    LETTER_RULES.iter().find(|r| message.contains(r.says))
}

/// The description reads and passes the standard's rules: errors that can make an importer
/// compute wrong results FAIL; errors against the letter only ([`LETTER_RULES`]) and warnings
/// WARN, each quoting its rule.
pub fn description(st: &Static<'_>) -> Outcome {
    let md = match &st.md {
        Ok(md) => md,
        Err(e) => return Outcome::fail(e.clone()),
    };
    if md.fmi_version != "2.0" && !md.fmi_version.starts_with("3.") {
        return Outcome::fail(format!("fmiVersion=\"{}\": not an FMI 2.0 or 3.0 FMU", md.fmi_version));
    }
    if md.co_simulation.is_none() && md.model_exchange.is_none() {
        return Outcome::fail("neither <CoSimulation> nor <ModelExchange>: no interface to run");
    }
    let problems = model_description::validate(md);
    let line = |p: &model_description::Problem| {
        if p.line > 0 {
            format!("line {}: {}", p.line, p.message)
        } else {
            p.message.clone()
        }
    };
    let mut errors = Vec::new();
    let mut letter = Vec::new();
    let mut warnings = Vec::new();
    for p in &problems {
        match (p.severity, letter_rule(&p.message)) {
            (Severity::Error, None) => errors.push(line(p)),
            (Severity::Error, Some(r)) => {
                letter.push(format!("{} (the letter of {}; {}; {})", line(p), r.rule, r.harmless, r.tools))
            }
            (Severity::Warning, _) => warnings.push(line(p)),
        }
    }
    let counts = format!(
        "{} variables, {} errors, {} breaches of the letter only, {} warnings",
        md.model_variables.len(),
        errors.len(),
        letter.len(),
        warnings.len()
    );
    if !errors.is_empty() {
        Outcome::fail(format!("{counts}: {}", some(&errors, 3)))
    } else if !letter.is_empty() || !warnings.is_empty() {
        let all: Vec<String> = letter.into_iter().chain(warnings).collect();
        Outcome::warn(format!("{counts}: {}", some(&all, 3)))
    } else {
        Outcome::pass(counts)
    }
}

/// `binaries/linux64/<modelIdentifier>.so` is there, an x86-64 ELF shared library that exports
/// every FMI 2.0 common and Co-Simulation function (read from its symbol table, not loaded).
pub fn binary(st: &Static<'_>) -> Outcome {
    let Ok(md) = &st.md else { return Outcome::skip("modelDescription.xml cannot be read") };
    let Some(cs) = &md.co_simulation else {
        return Outcome::skip(
            "no <CoSimulation> interface (the Model Exchange functions are required when the me-* checks load the binary: a missing one FAILs them)",
        );
    };
    let platform = if st.fmi3() { "x86_64-linux" } else { "linux64" };
    let so = format!("binaries/{platform}/{}.so", cs.model_identifier);
    match Archive::check_runnable(st.fmu, &so) {
        Ok(()) => {
            let n = if st.fmi3() {
                crate::fmu::ffi3::REQUIRED_SYMBOLS3.len()
            } else {
                crate::fmu::ffi::REQUIRED_SYMBOLS.len()
            };
            Outcome::pass(format!("{so} exports the {n} required functions"))
        }
        Err(why) => Outcome::fail(why),
    }
}
