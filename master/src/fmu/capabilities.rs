//! What cosim does with an FMU, decided from its description alone: the interfaces it declares,
//! the one cosim uses, and every feature it uses that cosim refuses today, with the reason. One
//! list ([`CHECKS`]) read by both the loader ([`super::Fmu::load`] refuses with it) and `cosim
//! info` (which prints it), so that the two cannot disagree.
//!
//! Adding a capability (Model Exchange, event mode, clocks…) is one entry in [`CHECKS`] (or the
//! removal of one), and, for an interface, one arm in [`Plan::of`].

use model_description::{Fmi3, ModelDescription};

/// An FMI interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    /// Co-Simulation.
    CoSimulation,
    /// Model Exchange.
    ModelExchange,
    /// Scheduled Execution (FMI 3.0).
    ScheduledExecution,
}

impl Interface {
    /// The standard's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::CoSimulation => "Co-Simulation",
            Self::ModelExchange => "Model Exchange",
            Self::ScheduledExecution => "Scheduled Execution",
        }
    }
}

/// When a refusal stops the FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Loading it ([`super::Fmu::load`]).
    Load,
    /// Instantiating it with the structural parameters' start values: other values set by the
    /// user ([`super::Fmu::configured`]) may pass.
    Configure,
}

/// A feature of the FMU that cosim refuses today.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The capability check's name (`interface`, `FMI 3.0 features`, …).
    pub check: &'static str,
    /// When it stops the FMU.
    pub stage: Stage,
    /// What the FMU uses, where (`clocks: <Clock name="tick"> (line 12)`).
    pub what: String,
    /// Why cosim refuses it.
    pub why: &'static str,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.what, self.why)
    }
}

/// What an FMU offers, for the checks.
pub struct Facts<'a> {
    /// The description.
    pub md: &'a ModelDescription,
    /// What an FMI 3.0 description adds.
    pub fmi3: Option<&'a Fmi3>,
}

/// One capability check: its name and the refusals it finds.
pub struct Check {
    /// Its name.
    pub name: &'static str,
    /// When it stops the FMU.
    pub stage: Stage,
    /// The FMU's uses of what this check refuses (none: the FMU passes).
    pub refusals: fn(&Facts) -> Vec<Refusal>,
}

/// Every capability check, in the order the loader applies them.
pub const CHECKS: &[Check] = &[
    Check { name: "FMI version", stage: Stage::Load, refusals: fmi_version },
    Check { name: "interface", stage: Stage::Load, refusals: interface },
    Check { name: "modelIdentifier", stage: Stage::Load, refusals: model_identifier },
    Check { name: "clocks", stage: Stage::Load, refusals: clocks },
    Check { name: "scheduled execution", stage: Stage::Load, refusals: scheduled_execution },
    Check { name: "array dimensions", stage: Stage::Load, refusals: array_dimensions },
    Check { name: "structural parameters", stage: Stage::Load, refusals: structural_types },
    Check { name: "FMI 3.0 features", stage: Stage::Load, refusals: other_fmi3 },
    Check { name: "structural parameters", stage: Stage::Configure, refusals: structural_start_values },
];

fn fmi_version(f: &Facts) -> Vec<Refusal> {
    let v = &f.md.fmi_version;
    if v == "2.0" || (v.starts_with("3.") && f.fmi3.is_some()) {
        return Vec::new();
    }
    vec![Refusal {
        check: "FMI version",
        stage: Stage::Load,
        what: format!("modelDescription.xml: fmiVersion=\"{v}\""),
        why: "this is not an FMI 2.0 or 3.0 FMU, only FMI 2.0 and 3.0 are supported",
    }]
}

fn interface(f: &Facts) -> Vec<Refusal> {
    if f.md.co_simulation.is_some() {
        return Vec::new();
    }
    let (what, why) = match &f.md.model_exchange {
        // FMI 2.0 and 3.0 Model Exchange run on the master's integrators (fmu/me.rs).
        Some(_) => return Vec::new(),
        None => (
            "modelDescription.xml has neither <CoSimulation> nor <ModelExchange>".to_owned(),
            "cosim runs Co-Simulation and Model Exchange FMUs",
        ),
    };
    vec![Refusal { check: "interface", stage: Stage::Load, what, why }]
}

fn model_identifier(f: &Facts) -> Vec<Refusal> {
    let Some(cs) = &f.md.co_simulation else { return Vec::new() };
    let id = &cs.model_identifier;
    if id.is_empty() || id.contains(['/', '\\', '\0']) || id == "." || id == ".." {
        return vec![Refusal {
            check: "modelIdentifier",
            stage: Stage::Load,
            what: format!("modelDescription.xml: modelIdentifier \"{}\" is not a valid file name", id.escape_debug()),
            why: "the binary is named after it",
        }];
    }
    Vec::new()
}

/// The lines of the FMI 3.0 reader's `unsupported` list that start with one of `prefixes`, as
/// refusals of `check` for reason `why`.
fn unsupported(f: &Facts, prefixes: &[&str], check: &'static str, why: &'static str) -> Vec<Refusal> {
    let Some(x) = f.fmi3 else { return Vec::new() };
    x.unsupported
        .iter()
        .filter(|u| prefixes.iter().any(|p| u.starts_with(p)))
        .map(|u| Refusal { check, stage: Stage::Load, what: u.clone(), why })
        .collect()
}

/// The prefixes of the reader's `unsupported` lines the checks above name.
const NAMED: &[&str] =
    &["clocks:", "clocked variables:", "scheduled execution:", "array variable", "structural parameters of type"];

/// Any other line of the FMI 3.0 reader's `unsupported` list (none is let through unnamed).
fn other_fmi3(f: &Facts) -> Vec<Refusal> {
    let Some(x) = f.fmi3 else { return Vec::new() };
    x.unsupported
        .iter()
        .filter(|u| !NAMED.iter().any(|p| u.starts_with(p)))
        .map(|u| Refusal {
            check: "FMI 3.0 features",
            stage: Stage::Load,
            what: u.clone(),
            why: "cosim runs FMI 3.0 Co-Simulation (with event mode and clocks) and Scheduled Execution",
        })
        .collect()
}

/// FMI 3.0 clocks and clocked variables.
fn clocks(f: &Facts) -> Vec<Refusal> {
    unsupported(
        f,
        &["clocks:", "clocked variables:"],
        "clocks",
        "cosim runs FMI 3.0 clocks in Co-Simulation FMUs with event mode (hasEventMode=\"true\") and in \
         Scheduled Execution FMUs (time-based input clocks)",
    )
}

/// FMI 3.0 `<ScheduledExecution>`.
fn scheduled_execution(f: &Facts) -> Vec<Refusal> {
    unsupported(
        f,
        &["scheduled execution:"],
        "scheduled execution",
        "cosim runs Co-Simulation, not Scheduled Execution",
    )
}

/// FMI 3.0 arrays whose `<Dimension valueReference>` names no structural parameter.
fn array_dimensions(f: &Facts) -> Vec<Refusal> {
    unsupported(f, &["array variable"], "array dimensions", "the array's size cannot be known")
}

/// FMI 3.0 structural parameters of other types than integers, or arrays of them.
fn structural_types(f: &Facts) -> Vec<Refusal> {
    unsupported(
        f,
        &["structural parameters of type"],
        "structural parameters",
        "cosim configures scalar integer structural parameters",
    )
}

/// FMI 3.0: the arrays the structural parameters' start values would size (too many elements,
/// a value outside its bounds). Set other values to run it (`--start-value n=…`).
fn structural_start_values(f: &Facts) -> Vec<Refusal> {
    let Some(x) = f.fmi3 else { return Vec::new() };
    x.configuration
        .iter()
        .map(|c| Refusal {
            check: "structural parameters",
            stage: Stage::Configure,
            what: c.clone(),
            why: "with these structural parameter values; set others with start values",
        })
        .collect()
}

/// What cosim does with an FMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The interfaces the FMU declares, with their modelIdentifier.
    pub declared: Vec<(Interface, String)>,
    /// The interface cosim uses (`None` when it uses none of them).
    pub used: Option<Interface>,
    /// Every refusal of [`CHECKS`] (empty: cosim runs it, as far as the description tells).
    pub refusals: Vec<Refusal>,
}

impl Plan {
    /// The plan for the description `md` (with `fmi3` for an FMI 3.0 one).
    pub fn of(md: &ModelDescription, fmi3: Option<&Fmi3>) -> Self {
        let mut declared = Vec::new();
        // A Scheduled Execution FMU without <CoSimulation> runs as one participant (the loader
        // gives it a Co-Simulation description of its own): it does not declare Co-Simulation.
        let se_only = fmi3.is_some_and(|x| !x.has_co_simulation && x.scheduled_execution.is_some());
        if let Some(cs) = md.co_simulation.as_ref().filter(|_| !se_only) {
            declared.push((Interface::CoSimulation, cs.model_identifier.clone()));
        }
        if let Some(me) = &md.model_exchange {
            declared.push((Interface::ModelExchange, me.model_identifier.clone()));
        }
        if let Some(se) = fmi3.and_then(|x| x.scheduled_execution.as_ref()) {
            declared.push((Interface::ScheduledExecution, se.clone()));
        }
        let facts = Facts { md, fmi3 };
        let refusals: Vec<Refusal> = CHECKS.iter().flat_map(|c| (c.refusals)(&facts)).collect();
        // Without `--interface`: Co-Simulation where declared, else Model Exchange.
        let used = if se_only {
            Some(Interface::ScheduledExecution)
        } else if md.co_simulation.is_some() {
            Some(Interface::CoSimulation)
        } else {
            md.model_exchange.as_ref().map(|_| Interface::ModelExchange)
        };
        Self { declared, used, refusals }
    }

    /// The refusals of `stage` as one error: a single one as `what: why`, several one per line.
    pub fn refusal_text(&self, stage: Stage) -> Option<String> {
        let of: Vec<&Refusal> = self.refusals.iter().filter(|r| r.stage == stage).collect();
        match of.as_slice() {
            [] => None,
            [one] => Some(format!("{}: {}", one.what, one.why)),
            all => Some(format!(
                "this FMU uses what cosim does not support:\n  {}",
                all.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{t}">
  <ModelExchange modelIdentifier="m_me"/>
  <CoSimulation modelIdentifier="m"/>
  <ModelVariables>
    <Float64 name="x" valueReference="1" causality="output"/>
  </ModelVariables>
  <ModelStructure/>
</fmiModelDescription>"#;

    #[test]
    fn the_plan_names_the_interfaces_the_one_used_and_every_refusal() {
        let (md, x) = model_description::from_str3(XML).unwrap();
        let plan = Plan::of(&md, Some(&x));
        assert_eq!(
            plan.declared,
            [(Interface::CoSimulation, "m".to_owned()), (Interface::ModelExchange, "m_me".to_owned())]
        );
        assert_eq!(plan.used, Some(Interface::CoSimulation));
        assert!(plan.refusals.is_empty() && plan.refusal_text(Stage::Load).is_none());
        let clocked = XML.replace(
            "<Float64 name=\"x\"",
            "<Clock name=\"tick\" valueReference=\"2\" causality=\"input\"/>\n    <Float64 name=\"x\"",
        );
        let me_only = clocked.replace("  <CoSimulation modelIdentifier=\"m\"/>\n", "");
        let (md, x) = model_description::from_str3(&me_only).unwrap();
        let plan = Plan::of(&md, Some(&x));
        // FMI 3.0 Model Exchange runs (the master integrates it); its clocks do not.
        assert_eq!(plan.used, Some(Interface::ModelExchange));
        let checks: Vec<&str> = plan.refusals.iter().map(|r| r.check).collect();
        assert_eq!(checks, ["clocks"]);
        let text = plan.refusal_text(Stage::Load).unwrap();
        assert!(text.contains("clocks: <Clock name=\"tick\"> (line 5)"), "{text}");
    }
}
