//! `cosim info FMU`: a human-readable report of an FMU's metadata, capabilities and variables.

use super::archive::Archive;
use crate::error::Result;
pub use crate::suggest::number;
use model_description::{ModelDescription, ScalarVariable, Severity, SimpleTypeKind, VariableKind};
use std::fmt::Write;
use std::path::Path;

/// The report for `cosim info FMU`: model name, FMI version, GUID, generation tool, interfaces
/// and binaries, Co-Simulation capability flags, default experiment, log categories, a table of
/// the variables (name, value reference, type, causality, variability, initial, start, unit,
/// description), the items of every enumeration type (value, name, description) and the problems `model_description::validate` finds (errors and warnings).
///
/// Only `modelDescription.xml` is read (nothing is extracted or loaded), so FMUs without a
/// Linux binary or with Model Exchange only can be inspected too. Archive problems and
/// unreadable descriptions (including FMI 1.0 / 3.0) are errors.
pub fn info(path: &Path) -> Result<String> {
    let listing = Archive::read_model_description(path)?;
    let (md, fmi3) = super::load::parse_description(path, &listing.model_description)?;
    let mut text = report(path, &md, fmi3.as_ref(), &listing.entries);
    if let Some(x) = &fmi3 {
        skipped3(&mut text, x);
    }
    Ok(text)
}

/// The variables of a 3.0 description the master reads but cannot address (arrays of String or
/// Binary or sized by a structural parameter), each with its line.
fn skipped3(out: &mut String, x: &model_description::Fmi3) {
    if x.skipped.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "
Variables cosim does not address ({}; not settable, connectable or recorded):",
        x.skipped.len()
    );
    for s in &x.skipped {
        let _ = writeln!(out, "  {s}");
    }
}

/// The `<Clock>` variables and what `cosim run` does with each (docs/fmi3.md "Clocks"):
/// `  tick (input, constant, interval 0.25 s, shift 0 s): activated by cosim at its ticks`.
fn clocks3(out: &mut String, x: &model_description::Fmi3) {
    if x.clocks.is_empty() {
        return;
    }
    let scheduled = !x.has_co_simulation && x.scheduled_execution.is_some();
    let cs = x.has_co_simulation && x.has_event_mode;
    let _ = writeln!(out, "\nClocks ({}):", x.clocks.len());
    for c in &x.clocks {
        let v = c.interval_variability.as_str();
        let time_based = matches!(v, "constant" | "fixed" | "tunable");
        let mut what = format!("{} ({}, {v}", clean(&c.name), if c.input { "input" } else { "output or local" });
        if let Some(i) = c.interval_decimal {
            let _ = write!(what, ", interval {i} s");
        }
        if time_based && c.input {
            let _ = write!(what, ", shift {} s", c.shift_decimal);
        }
        if let Some(p) = c.priority {
            let _ = write!(what, ", priority {p}");
        }
        let does = match (scheduled, cs, c.input, v) {
            (true, ..) => "its model partition activated by cosim at its ticks (fmi3ActivateModelPartition)",
            (_, false, ..) => "refused: clocks in Co-Simulation need hasEventMode=\"true\"",
            (_, true, false, _) => "read after every event (fmi3GetClock); its ticks go to connected input clocks",
            (_, true, true, "triggered") => "activated from a connected output clock (fmi3SetClock)",
            (_, true, true, "countdown" | "changing") => {
                "activated by cosim when the interval the FMU gives (fmi3GetIntervalDecimal) has passed"
            }
            (_, true, true, _) => "activated by cosim at its ticks (the step cut there, fmi3SetClock in event mode)",
        };
        let _ = writeln!(out, "  {what}): {does}");
    }
}

/// The structural parameters and the arrays each sizes (with the start values):
/// `  n (UInt64, start 3, min 1, max 5): sizes x [n] = [3], A [n, n] = [3, 3]`.
fn structural3(out: &mut String, x: &model_description::Fmi3) {
    if x.structural.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nStructural parameters ({}; set in configuration mode from start values, e.g. --start-value {}=…):",
        x.structural.len(),
        x.structural[0].name
    );
    let shape = |d: &[String]| format!("[{}]", d.join(", "));
    for s in &x.structural {
        let bound = |what: &str, b: Option<i128>| b.map(|b| format!(", {what} {b}")).unwrap_or_default();
        let sized: Vec<String> = x
            .resized
            .iter()
            .filter(|a| a.dims.contains(&s.name))
            .map(|a| {
                let sizes: Vec<String> = a.shape.iter().map(ToString::to_string).collect();
                format!("{} {} = {}", a.name, shape(&a.dims), shape(&sizes))
            })
            .collect();
        let _ = writeln!(
            out,
            "  {} ({}{}{}{}){}",
            clean(&s.name),
            s.ty.as_str(),
            bound("start", s.start),
            bound("min", s.min),
            bound("max", s.max),
            if sized.is_empty() { String::new() } else { format!(": sizes {}", clean(&sized.join(", "))) }
        );
    }
}

fn report(path: &Path, md: &ModelDescription, fmi3: Option<&model_description::Fmi3>, entries: &[String]) -> String {
    let plan = super::capabilities::Plan::of(md, fmi3);
    let mut out = String::new();
    let mut field = |name: &str, value: &str| {
        let _ = writeln!(out, "{:<18}{}", format!("{name}:"), clean(value));
    };
    field("FMU", &path.display().to_string());
    field("Model name", &md.model_name);
    if let Some(d) = md.description.as_deref().filter(|d| !d.is_empty()) {
        field("Description", d);
    }
    field("FMI version", &md.fmi_version);
    field("GUID", &md.guid);
    field("Generation tool", md.generation_tool.as_deref().unwrap_or("-"));
    for (name, value) in [
        ("Generated", &md.generation_date_and_time),
        ("Author", &md.author),
        ("Version", &md.version),
        ("Copyright", &md.copyright),
        ("License", &md.license),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            field(name, v);
        }
    }
    field("Naming", md.variable_naming_convention.as_str());
    let interfaces: Vec<String> =
        plan.declared.iter().map(|(i, id)| format!("{} (modelIdentifier {id})", i.name())).collect();
    field("Interfaces", &if interfaces.is_empty() { "none".to_owned() } else { interfaces.join(", ") });
    field("cosim uses", plan.used.map_or("none of them", |i| i.name()));
    let binaries: Vec<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|e| e.starts_with("binaries/") && !e.ends_with('/') && !e.ends_with(".libs"))
        .collect();
    field("Binaries", &if binaries.is_empty() { "none".to_owned() } else { binaries.join(", ") });
    match &md.co_simulation {
        Some(cs) => {
            let platform = if md.fmi_version.starts_with("3.") { "x86_64-linux" } else { "linux64" };
            let so = format!("binaries/{platform}/{}.so", cs.model_identifier);
            // What `cosim run` refuses: the description's capability checks first (the
            // loader's own list), then the archive and the binary.
            let runnable = match (plan.refusals.first(), Archive::check_runnable(path, &so)) {
                (Some(r), _) => format!("no: {r}"),
                (None, Ok(())) => format!("yes ({so})"),
                (None, Err(why)) => format!("no: {why}"),
            };
            field("Runs with cosim", &runnable);
            out.push_str("\nCo-Simulation capabilities:\n");
            let flags = [
                ("needsExecutionTool", cs.needs_execution_tool),
                ("canHandleVariableCommunicationStepSize", cs.can_handle_variable_communication_step_size),
                ("canInterpolateInputs", cs.can_interpolate_inputs),
                ("canRunAsynchronuously", cs.can_run_asynchronuously),
                ("canBeInstantiatedOnlyOncePerProcess", cs.can_be_instantiated_only_once_per_process),
                ("canNotUseMemoryManagementFunctions", cs.can_not_use_memory_management_functions),
                ("canGetAndSetFMUstate", cs.can_get_and_set_fmu_state),
                ("canSerializeFMUstate", cs.can_serialize_fmu_state),
                ("providesDirectionalDerivative", cs.provides_directional_derivative),
            ];
            for (name, value) in flags {
                let _ = writeln!(out, "  {name:<40}{value}");
            }
            let _ = writeln!(out, "  {:<40}{}", "maxOutputDerivativeOrder", cs.max_output_derivative_order);
            if md.model_exchange.is_some() {
                // Both interfaces: `--interface me` integrates the Model Exchange one.
                model_exchange_section(&mut out, md, " (with --interface me)");
            }
        }
        None => match (plan.refusals.first(), &md.model_exchange) {
            (Some(r), _) => {
                let _ = writeln!(out, "{:<18}no: {r}", "Runs with cosim:");
            }
            (None, Some(me)) => {
                // Model Exchange only: integrated by cosim's solver (fmu/me.rs, ode/).
                let platform = if md.fmi_version.starts_with("3.") { "x86_64-linux" } else { "linux64" };
                let so = format!("binaries/{platform}/{}.so", me.model_identifier);
                let runnable = match Archive::check_runnable_as(path, &so, true) {
                    Ok(()) => format!("yes ({so}, Model Exchange)"),
                    Err(why) => format!("no: {why}"),
                };
                field("Runs with cosim", &runnable);
                model_exchange_section(&mut out, md, "");
            }
            (None, None) => {
                let _ = writeln!(out, "{:<18}no: the FMU declares no interface", "Runs with cosim:");
            }
        },
    }
    if !plan.refusals.is_empty() {
        let _ = writeln!(out, "\nRefused by cosim ({}):", plan.refusals.len());
        for r in &plan.refusals {
            let when = match r.stage {
                super::capabilities::Stage::Load => "",
                super::capabilities::Stage::Configure => " [with these start values]",
            };
            let _ = writeln!(out, "  {}{when}: {}", r.check, clean(&r.to_string()));
        }
    }
    if let Some(x) = fmi3 {
        structural3(&mut out, x);
        clocks3(&mut out, x);
    }

    out.push_str("\nDefault experiment: ");
    match &md.default_experiment {
        Some(d) => {
            let f = |v: Option<f64>, unit: &str| v.map_or_else(|| "-".to_owned(), |v| format!("{}{unit}", number(v)));
            let _ = writeln!(
                out,
                "start {}, stop {}, step {}, tolerance {}",
                f(d.start_time, " s"),
                f(d.stop_time, " s"),
                f(d.step_size, " s"),
                f(d.tolerance, "")
            );
        }
        None => out.push_str("none\n"),
    }

    out.push_str("\nLog categories:");
    if md.log_categories.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        for c in &md.log_categories {
            match c.description.as_deref().filter(|d| !d.is_empty()) {
                Some(d) => {
                    let _ = writeln!(out, "  {} - {}", clean(&c.name), clean(d));
                }
                None => {
                    let _ = writeln!(out, "  {}", clean(&c.name));
                }
            }
        }
    }

    let _ = writeln!(out, "\nVariables ({}):", md.model_variables.len());
    let header = ["name", "vr", "type", "causality", "variability", "initial", "start", "unit", "description"];
    let structural = |v: &ScalarVariable| fmi3.is_some_and(|x| x.structural.iter().any(|s| s.name == v.name));
    let rows: Vec<[String; 9]> = md
        .model_variables
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut r = row(md, v);
            if structural(v) {
                r[3] = "structuralParameter".into();
            }
            // FMI 3.0: the variable's own type (UInt64, Float32…: what run sets and gets it as).
            if let Some(t) =
                fmi3.and_then(|x| x.types.get(i)).filter(|t| t.is_integer() || t.as_str().starts_with("Float"))
            {
                r[2] = t.as_str().to_owned();
            }
            r.map(|c| shortened(&c))
        })
        .collect();
    let mut width = header.map(str::len);
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &[&str]| {
        let mut s = String::from(" ");
        for (i, (cell, w)) in cells.iter().zip(width.iter()).enumerate() {
            // Padded by hand: a format width is limited to u16 (a longer one panics).
            let pad = " ".repeat(w.saturating_sub(cell.chars().count()));
            s.push(' ');
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else if i == 1 {
                s.push_str(&pad);
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&pad);
            }
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(&header);
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&cells);
    }

    enumerations(&mut out, md);

    let problems = model_description::validate(md);
    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
    let warnings = problems.len() - errors;
    if problems.is_empty() {
        out.push_str("\nValidation: no problems\n");
    } else {
        let _ = writeln!(out, "\nValidation: {errors} error(s), {warnings} warning(s)");
        for p in &problems {
            if p.line > 0 {
                let _ = writeln!(out, "  {} (line {}): {}", p.severity, p.line, clean(&p.message));
            } else {
                let _ = writeln!(out, "  {}: {}", p.severity, clean(&p.message));
            }
        }
    }
    out
}

fn row(md: &ModelDescription, v: &ScalarVariable) -> [String; 9] {
    let declared = v.kind.declared_type().and_then(|t| md.simple_type(t));
    let (ty, start, unit) = match &v.kind {
        VariableKind::Real { attrs, start, .. } => {
            let unit = attrs.unit.clone().or_else(|| match declared.map(|t| &t.kind) {
                Some(SimpleTypeKind::Real(a)) => a.unit.clone(),
                _ => None,
            });
            ("Real".to_owned(), start.map(number), unit)
        }
        VariableKind::Integer { start, .. } => ("Integer".to_owned(), start.map(|s| s.to_string()), None),
        VariableKind::Boolean { start, .. } => ("Boolean".to_owned(), start.map(|s| s.to_string()), None),
        VariableKind::String { start, .. } => ("String".to_owned(), start.as_ref().map(|s| format!("{s:?}")), None),
        VariableKind::Enumeration { declared_type, start, .. } => {
            let item = |value: i32| match declared.map(|t| &t.kind) {
                Some(SimpleTypeKind::Enumeration { items, .. }) => {
                    items.iter().find(|i| i.value == value).map(|i| format!("{value} ({})", i.name))
                }
                _ => None,
            };
            (format!("Enumeration {declared_type}"), start.map(|s| item(s).unwrap_or_else(|| s.to_string())), None)
        }
        // The type with its mimeType (the standard's default when absent) and maxSize; the
        // start value in hexadecimal, as `--start-value` takes it.
        VariableKind::Binary { mime_type, max_size, start, .. } => {
            let mime = mime_type.as_deref().unwrap_or(model_description::BINARY_MIME_TYPE);
            let max = max_size.map(|m| format!(", maxSize {m}")).unwrap_or_default();
            (format!("Binary ({mime}{max})"), start.as_deref().map(model_description::to_hex), None)
        }
    };
    [
        clean(&v.name),
        v.value_reference.to_string(),
        clean(&ty),
        v.causality.to_string(),
        v.variability.to_string(),
        v.effective_initial().map(|i| i.to_string()).unwrap_or_default(),
        clean(&start.unwrap_or_default()),
        clean(&unit.unwrap_or_default()),
        clean(v.description.as_deref().unwrap_or("")),
    ]
}

/// The items of every enumeration type, with the variables declared of it:
/// `  DampingCase (damping): 1 case1 - description`.
fn enumerations(out: &mut String, md: &ModelDescription) {
    let types: Vec<_> = md
        .type_definitions
        .iter()
        .filter_map(|t| match &t.kind {
            SimpleTypeKind::Enumeration { items, .. } => Some((t, items)),
            _ => None,
        })
        .collect();
    if types.is_empty() {
        return;
    }
    out.push_str("\nEnumerations:\n");
    for (t, items) in types {
        let users: Vec<&str> = md
            .model_variables
            .iter()
            .filter(|v| matches!(&v.kind, VariableKind::Enumeration { declared_type, .. } if *declared_type == t.name))
            .map(|v| v.name.as_str())
            .collect();
        let used = if users.is_empty() { "no variable".to_owned() } else { users.join(", ") };
        let _ = write!(out, "  {} ({})", clean(&t.name), clean(&used));
        match t.description.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => {
                let _ = writeln!(out, " - {}", clean(d));
            }
            None => out.push('\n'),
        }
        for i in items {
            match i.description.as_deref().filter(|d| !d.is_empty()) {
                Some(d) => {
                    let _ = writeln!(out, "    {:>3} {} - {}", i.value, clean(&i.name), clean(d));
                }
                None => {
                    let _ = writeln!(out, "    {:>3} {}", i.value, clean(&i.name));
                }
            }
        }
    }
}

/// Text from the description on one line: control characters become spaces.
/// Longest table cell (characters): a String parameter may hold a whole JSON configuration.
const CELL_MAX: usize = 80;

/// `s` for a table cell: at most [`CELL_MAX`] characters, a longer one cut with its length said.
fn shortened(s: &str) -> String {
    let n = s.chars().count();
    if n <= CELL_MAX {
        return s.to_owned();
    }
    let head: String = s.chars().take(CELL_MAX - 20).collect();
    format!("{head}… ({n} characters)")
}

fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// The Model Exchange section of [`info`]: states, event indicators and the solver that would
/// integrate them (`how`: when it is used).
fn model_exchange_section(out: &mut String, md: &ModelDescription, how: &str) {
    let solver = crate::ode::Options::default();
    let _ = writeln!(
        out,
        "\nModel Exchange{how}:\n  {:<40}{}\n  {:<40}{}\n  {:<40}{:?}, rtol {}, atol {} (settings solver, \
         relative_tolerance, absolute_tolerance)",
        "continuous states",
        md.model_structure.derivatives.len(),
        "event indicators",
        md.number_of_event_indicators.unwrap_or(0),
        "solver (default)",
        solver.method,
        solver.rtol,
        solver.atol,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 48 #5: a String start of 70,000 characters made `cosim info` panic ("Formatting
    /// argument out of range"): the cell is shortened and the table padded by hand.
    #[test]
    fn a_huge_string_start_is_shortened_in_the_table() {
        let big = "x".repeat(70_000);
        let cell = shortened(&big);
        assert!(cell.ends_with("… (70000 characters)") && cell.chars().count() < 100, "{cell}");
        assert_eq!(shortened("short"), "short");
        // the whole report of a description with such a start: no panic, the cell shortened
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="{{1}}" variableNamingConvention="flat">
  <CoSimulation modelIdentifier="m"/>
  <ModelVariables>
    <ScalarVariable name="config" valueReference="0" causality="parameter" variability="fixed" initial="exact"><String start="{big}"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure/>
</fmiModelDescription>"#
        );
        let md = model_description::from_str_any(&xml).unwrap();
        let text = report(Path::new("m.fmu"), &md, None, &[]);
        assert!(text.contains("… (70002 characters)") && text.len() < 10_000, "{}", &text[..text.len().min(2000)]);
    }

    #[test]
    fn numbers_are_short_and_round_trip() {
        for (x, text) in [
            (-1.19e-18, "-1.19e-18"),
            (6.53e-10, "6.53e-10"),
            (1e-4, "0.0001"),
            (9.9e-5, "9.9e-5"),
            (0.0, "0"),
            (100.0, "100"),
            (1.5e16, "1.5e16"),
            (123456789.0, "123456789"),
        ] {
            assert_eq!(number(x), text);
            assert_eq!(number(x).parse::<f64>(), Ok(x), "{text} parses back");
        }
    }

    #[test]
    fn the_report_lists_enumeration_items_and_readable_numbers() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="{g}">
  <CoSimulation modelIdentifier="m"/>
  <TypeDefinitions>
    <SimpleType name="Mode" description="how it runs">
      <Enumeration><Item name="slow" value="1" description="the slow one"/><Item name="fast" value="2"/></Enumeration>
    </SimpleType>
  </TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="mode" valueReference="0" causality="parameter" variability="fixed"><Enumeration declaredType="Mode" start="2"/></ScalarVariable>
    <ScalarVariable name="b" valueReference="1" causality="parameter" variability="fixed"><Real start="-1.19e-18"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure/>
</fmiModelDescription>"#;
        let md = model_description::from_str(xml).unwrap();
        let text = report(Path::new("m.fmu"), &md, None, &[]);
        assert!(
            text.contains("\nEnumerations:\n  Mode (mode) - how it runs\n      1 slow - the slow one\n      2 fast\n"),
            "{text}"
        );
        assert!(text.contains(" -1.19e-18\n"), "{text}");
        assert!(!text.contains("0.0000"), "{text}");
        assert!(text.contains("2 (fast)"), "{text}");
    }
}
