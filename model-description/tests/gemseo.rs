#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Real OpenModelica-exported FMUs: the ones shipped in the PyPI package `gemseo-fmu` (3.1.1).
//!
//! The wheel is found through `GEMSEO_FMU_WHEEL` (path to the `.whl`) or as
//! `target/thirdparty/gemseo_fmu-*.whl` in the workspace (the CI script runs
//! `pip download --no-deps gemseo-fmu -d target/thirdparty`). Without it the tests fail under CI
//! (`CI=true`) and are skipped visibly elsewhere (`missing_tool::skip_or_fail`).

use model_description::*;
use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::PathBuf;

const FMU_DIR: &str = "gemseo_fmu/problems/fmu_files/linux/";

fn wheel() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GEMSEO_FMU_WHEEL") {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "GEMSEO_FMU_WHEEL={} does not exist", path.display());
        return Some(path);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/thirdparty");
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("gemseo_fmu-") && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    wheels.pop()
}

/// `modelDescription.xml` of every Linux FMU in the wheel, by FMU file name; `None` (after a
/// loud message) when the wheel is not available.
fn descriptions() -> Option<BTreeMap<String, String>> {
    let Some(path) = wheel() else {
        missing_tool::skip_or_fail(
            "the gemseo-fmu wheel (GEMSEO_FMU_WHEEL or target/thirdparty/gemseo_fmu-*.whl)",
            "`cargo xtask test` downloads it, or `pip download --no-deps gemseo-fmu -d target/thirdparty`",
        );
        return None;
    };
    let file = std::fs::File::open(&path).unwrap();
    let mut whl = zip::ZipArchive::new(file).unwrap();
    let names: Vec<String> =
        whl.file_names().filter(|n| n.starts_with(FMU_DIR) && n.ends_with(".fmu")).map(str::to_owned).collect();
    let mut out = BTreeMap::new();
    for name in names {
        let mut bytes = Vec::new();
        whl.by_name(&name).unwrap().read_to_end(&mut bytes).unwrap();
        let mut fmu = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        let mut xml = String::new();
        fmu.by_name("modelDescription.xml").unwrap().read_to_string(&mut xml).unwrap();
        out.insert(name.trim_start_matches(FMU_DIR).to_owned(), xml);
    }
    Some(out)
}

fn errors(problems: &[Problem]) -> Vec<&Problem> {
    problems.iter().filter(|p| p.severity == Severity::Error).collect()
}

fn without_lines(mut md: ModelDescription) -> ModelDescription {
    for v in &mut md.model_variables {
        v.line = 0;
    }
    let ms = &mut md.model_structure;
    for u in ms.outputs.iter_mut().chain(&mut ms.derivatives).chain(&mut ms.initial_unknowns) {
        u.line = 0;
    }
    md
}

#[test]
fn the_wheel_has_the_expected_fmus() {
    let Some(all) = descriptions() else { return };
    // gemseo-fmu 3.1.1 has exactly these; a later release may add more.
    for name in [
        "FMU3Model.fmu",
        "MassSpringSubSystem1.fmu",
        "MassSpringSubSystem2.fmu",
        "MassSpringSystem.fmu",
        "Mass_Damper.fmu",
        "add.fmu",
        "ramp.fmu",
    ] {
        assert!(all.contains_key(name), "{name} missing from the wheel: {:?}", all.keys());
    }
}

#[test]
fn every_fmi2_description_parses_without_errors_and_round_trips() {
    let Some(all) = descriptions() else { return };
    let mut fmi2 = 0;
    for (name, xml) in &all {
        let md = match from_str(xml) {
            Ok(md) => md,
            // FMU3Model.fmu, see fmu3_model_is_reported_as_fmi_3
            Err(ReadError::UnsupportedVersion { version, .. }) if version == "3.0" => continue,
            Err(e) => panic!("{name}: {e}"),
        };
        fmi2 += 1;
        assert_eq!(md.fmi_version, "2.0", "{name}");
        let problems = validate(&md);
        assert!(errors(&problems).is_empty(), "{name}: {problems:#?}");
        // Our writer keeps everything our model holds.
        let again = from_str(&to_xml(&md)).unwrap_or_else(|e| panic!("{name} rewritten: {e}"));
        assert_eq!(without_lines(again.clone()), without_lines(md), "{name}");
        assert_eq!(errors(&validate(&again)), Vec::<&Problem>::new(), "{name} rewritten");
    }
    assert!(fmi2 >= 6, "only {fmi2} FMI 2.0 descriptions");
}

#[test]
fn mass_damper_breaks_the_structured_naming_convention_with_a_warning_only() {
    let Some(all) = descriptions() else { return };
    let md = from_str(&all["Mass_Damper.fmu"]).unwrap();
    assert_eq!(md.variable_naming_convention, NamingConvention::Structured);
    // OpenModelica writes the second derivative as `der(der(x))`, which the EBNF of FMI 2.0
    // §2.2.9 does not allow (only `der(identifier[,order])`): a warning, not an error.
    let problems = validate(&md);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let p = &problems[0];
    assert_eq!(p.severity, Severity::Warning);
    assert_eq!(p.line, 252);
    assert!(p.message.contains("variable \"der(der(mass.flange_b.s))\" (line 252)"), "{p}");
    assert!(p.message.contains("structured"), "{p}");
}

#[test]
fn fmu3_model_is_reported_as_fmi_3() {
    let Some(all) = descriptions() else { return };
    let e = from_str(&all["FMU3Model.fmu"]).unwrap_err();
    assert!(matches!(&e, ReadError::UnsupportedVersion { version, .. } if version == "3.0"), "{e}");
    assert_eq!((e.line(), e.column()), (2, 22));
    assert!(e.to_string().contains("FMI 3.0"), "{e}");
}

#[test]
fn concrete_facts() {
    let Some(all) = descriptions() else { return };
    let md = |name: &str| from_str(&all[name]).unwrap();

    let damper = md("Mass_Damper.fmu");
    assert_eq!(damper.model_name, "Mass_Damper");
    assert_eq!(damper.guid, "{98cf8448-d86d-4ecd-bdec-ce2b9a664fbd}");
    assert_eq!(damper.model_variables.len(), 47);
    assert_eq!(damper.model_exchange.as_ref().unwrap().model_identifier, "Mass_Damper");
    let cs = damper.co_simulation.as_ref().unwrap();
    assert_eq!(cs.model_identifier, "Mass_Damper");
    assert!(cs.can_handle_variable_communication_step_size && cs.can_interpolate_inputs);
    assert!(!cs.can_get_and_set_fmu_state);
    assert_eq!(cs.max_output_derivative_order, 1);
    assert_eq!(cs.source_files.len(), 65);
    assert_eq!(damper.unit_definitions.len(), 10);
    let n_per_m = &damper.unit_definitions[0];
    assert_eq!(n_per_m.name, "N/m");
    assert_eq!(n_per_m.base_unit, Some(BaseUnit::si([1, 0, -2, 0, 0, 0, 0, 0])));
    match &damper.simple_type("StateSelect").unwrap().kind {
        SimpleTypeKind::Enumeration { items, .. } => {
            let names: Vec<_> = items.iter().map(|i| (i.name.as_str(), i.value)).collect();
            assert_eq!(names, [("never", 1), ("avoid", 2), ("default", 3), ("prefer", 4), ("always", 5)]);
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(damper.log_categories.len(), 11);
    let de = damper.default_experiment.as_ref().unwrap();
    assert_eq!((de.start_time, de.stop_time, de.tolerance, de.step_size), (Some(0.0), Some(1.0), Some(1e-6), None));
    let count = |c: Causality| damper.model_variables.iter().filter(|v| v.causality == c).count();
    assert_eq!(count(Causality::Parameter), 7);
    assert_eq!(count(Causality::CalculatedParameter), 7);
    assert_eq!(count(Causality::Input), 1);
    assert_eq!(count(Causality::Output), 1);
    let y = damper.variable("y").unwrap();
    assert_eq!((y.causality, y.initial, y.value_reference), (Causality::Output, Some(Initial::Exact), 21));
    assert!(matches!(y.kind, VariableKind::Real { start: Some(s), .. } if s == -0.5));
    let spring_c = damper.variable("spring.c").unwrap();
    assert_eq!((spring_c.causality, spring_c.variability), (Causality::Parameter, Variability::Fixed));
    match &spring_c.kind {
        VariableKind::Real { start, attrs, .. } => {
            assert_eq!(*start, Some(10000.0));
            assert_eq!(attrs.min, Some(0.0));
            assert_eq!(attrs.unit.as_deref(), Some("N/m"));
        }
        k => panic!("{k:?}"),
    }
    let state_select = damper.variable("damper.stateSelect").unwrap();
    assert_eq!(state_select.kind.base_type(), BaseType::Enumeration);
    assert_eq!(state_select.kind.declared_type(), Some("StateSelect"));
    assert!(matches!(
        damper.variable("der(damper.v_rel)").unwrap().kind,
        VariableKind::Real { derivative: Some(2), .. }
    ));
    let ms = &damper.model_structure;
    assert_eq!(ms.outputs.len(), 1);
    assert_eq!(ms.outputs[0].index, 22);
    assert_eq!(ms.derivatives.iter().map(|u| u.index).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(ms.derivatives[1].dependencies, Some(vec![1, 2, 11]));
    assert_eq!(ms.initial_unknowns.len(), 10);
    assert_eq!(ms.initial_unknowns[6].index, 44);
    assert_eq!(ms.initial_unknowns[6].dependencies, Some(vec![]));
    assert_eq!(ms.initial_unknowns[6].dependencies_kind, Some(vec![]));

    let add = md("add.fmu");
    assert_eq!(add.model_name, "foo");
    assert_eq!(add.model_variables.len(), 8);
    assert_eq!(add.variable("u1").unwrap().causality, Causality::Input);
    assert_eq!(add.variable("add.k1").unwrap().causality, Causality::Parameter);
    let out = &add.model_structure.outputs[0];
    assert_eq!(out.index, 3);
    assert_eq!(add.variable_by_index(out.index).unwrap().name, "y");
    assert_eq!(out.dependencies, Some(vec![1, 2]));
    assert_eq!(out.dependencies_kind, Some(vec![DependencyKind::Dependent; 2]));
    // "add.u1" is an alias of the input "u1" (same value reference, no start of its own).
    assert_eq!(add.variable("add.u1").unwrap().value_reference, add.variable("u1").unwrap().value_reference);

    let ramp = md("ramp.fmu");
    assert_eq!(ramp.model_variables.len(), 6);
    assert_eq!(ramp.number_of_event_indicators, Some(2));
    assert_eq!(ramp.variable("out").unwrap().causality, Causality::Output);
    assert_eq!(ramp.model_structure.outputs[0].dependencies, Some(vec![]));

    let system = md("MassSpringSystem.fmu");
    assert_eq!(system.model_variables.len(), 17);
    let outputs: Vec<&str> =
        system.model_variables.iter().filter(|v| v.causality == Causality::Output).map(|v| v.name.as_str()).collect();
    assert_eq!(outputs, ["v1", "v2", "x1", "x2"]);
    assert_eq!(system.model_structure.derivatives.len(), 4);

    for name in ["MassSpringSubSystem1.fmu", "MassSpringSubSystem2.fmu"] {
        let sub = md(name);
        assert_eq!(sub.model_variables.len(), 10, "{name}");
        assert_eq!(sub.model_structure.outputs.len(), 2, "{name}");
    }
    let sub1 = md("MassSpringSubSystem1.fmu");
    assert_eq!(sub1.variable("x2").unwrap().causality, Causality::Input);
    assert_eq!(sub1.variable("x1").unwrap().causality, Causality::Output);
}
