//! `modelDescription.xml` from the variable table, and the GUID as a hash of it.

use crate::model::CoSimModel;
use crate::units;
use crate::variable::{Access, Variable};
use model_description as md;
use model_description::{Causality, Initial, ScalarVariable, Unknown, VariableKind};

/// The generation tool written into every description.
pub const GENERATION_TOOL: &str = concat!("hydraulic-cosim fmu-export ", env!("CARGO_PKG_VERSION"));

/// Log categories every FMU offers (`fmi2SetDebugLogging`).
pub const LOG_CATEGORIES: &[(&str, &str)] = &[
    ("logStatusWarning", "Messages of calls that return fmi2Warning"),
    ("logStatusError", "Messages of calls that return fmi2Error (always logged)"),
    ("logAll", "Everything, including informational messages of every call"),
];

/// A model's description, its XML and GUID.
#[derive(Debug, Clone)]
pub struct Description {
    /// The typed description.
    pub model: md::ModelDescription,
    /// `modelDescription.xml`.
    pub xml: String,
    /// `guid`, a hash of the description.
    pub guid: String,
}

/// Why a variable table does not make a valid description.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DescribeError {
    /// A unit that [`crate::units`] does not define.
    #[error("model {model}: variable \"{variable}\" uses unit \"{unit}\", which is not in fmu_export::units")]
    UnknownUnit {
        /// Model name.
        model: &'static str,
        /// Variable name.
        variable: &'static str,
        /// Unit.
        unit: &'static str,
    },
    /// A feedthrough entry that names no input.
    #[error("model {model}: output \"{variable}\" depends on \"{input}\", which is not an input of the model")]
    BadDependency {
        /// Model name.
        model: &'static str,
        /// Output name.
        variable: &'static str,
        /// Dependency name.
        input: &'static str,
    },
    /// The description breaks a rule of the standard.
    #[error("model {model}: the generated modelDescription.xml is invalid: {problems}")]
    Invalid {
        /// Model name.
        model: &'static str,
        /// The problems, one per line.
        problems: String,
    },
}

fn start_of<M>(v: &Variable<M>, m: &M) -> VariableKind {
    let with = v.has_start();
    match &v.access {
        Access::Real { unit, min, max, nominal, get, .. } => VariableKind::Real {
            declared_type: None,
            attrs: md::RealAttributes {
                unit: (!unit.is_empty()).then(|| (*unit).to_owned()),
                min: *min,
                max: *max,
                nominal: *nominal,
                ..Default::default()
            },
            start: with.then(|| get(m)),
            derivative: None,
            reinit: None,
        },
        Access::Integer { min, max, get, .. } => VariableKind::Integer {
            declared_type: None,
            attrs: md::IntegerAttributes { quantity: None, min: *min, max: *max },
            start: with.then(|| i128::from(get(m))),
        },
        Access::Boolean { get, .. } => VariableKind::Boolean { declared_type: None, start: with.then(|| get(m)) },
        Access::String { get, .. } => {
            VariableKind::String { declared_type: None, start: with.then(|| get(m).to_owned()) }
        }
        Access::Enumeration { ty, get, .. } => VariableKind::Enumeration {
            declared_type: ty.name.to_owned(),
            quantity: None,
            min: None,
            max: None,
            start: with.then(|| get(m)),
        },
    }
}

/// Builds the description of model `M` from its variable table.
pub fn describe<M: CoSimModel>(vars: &[Variable<M>]) -> Result<Description, DescribeError> {
    let info = M::info();
    let defaults = M::default();
    let mut model_variables = Vec::with_capacity(vars.len());
    let mut unit_definitions: Vec<md::Unit> = Vec::new();
    let mut type_definitions: Vec<md::SimpleType> = Vec::new();
    let mut outputs = Vec::new();
    let mut initial_unknowns = Vec::new();
    let mut max_derivative_order = 0;

    for (i, v) in vars.iter().enumerate() {
        let index = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let unit = v.unit();
        if !unit.is_empty() && !unit_definitions.iter().any(|u| u.name == unit) {
            let def = units::definition(unit).ok_or(DescribeError::UnknownUnit {
                model: info.model_name,
                variable: v.name,
                unit,
            })?;
            unit_definitions.push(def);
        }
        if let Access::Enumeration { ty, .. } = &v.access {
            if !type_definitions.iter().any(|t| t.name == ty.name) {
                type_definitions.push(md::SimpleType {
                    name: ty.name.to_owned(),
                    description: Some(ty.description.to_owned()),
                    kind: md::SimpleTypeKind::Enumeration {
                        quantity: None,
                        items: ty
                            .items
                            .iter()
                            .map(|(n, value, d)| md::EnumerationItem {
                                name: (*n).to_owned(),
                                value: *value,
                                description: Some((*d).to_owned()),
                            })
                            .collect(),
                    },
                });
            }
        }
        if let Access::Real { derivative: Some((order, _)), .. } = &v.access {
            max_derivative_order = max_derivative_order.max(*order);
        }
        if v.causality == Causality::Output {
            let mut deps = Vec::new();
            let mut kinds = Vec::new();
            for (name, kind) in v.feedthrough {
                let j = vars
                    .iter()
                    .position(|w| w.name == *name && w.causality == Causality::Input)
                    .ok_or(DescribeError::BadDependency { model: info.model_name, variable: v.name, input: name })?;
                deps.push(u32::try_from(j + 1).unwrap_or(u32::MAX));
                kinds.push(*kind);
            }
            outputs.push(Unknown {
                index,
                dependencies: Some(deps),
                dependencies_kind: (!kinds.is_empty()).then_some(kinds),
                line: 0,
            });
        }
        let sv = ScalarVariable {
            name: v.name.to_owned(),
            value_reference: index - 1,
            description: Some(v.description.to_owned()),
            causality: v.causality,
            variability: v.variability,
            initial: v.initial,
            can_handle_multiple_set_per_time_instant: None,
            kind: start_of(v, &defaults),
            annotations: Vec::new(),
            line: 0,
        };
        let initial = sv.effective_initial();
        if (v.causality == Causality::Output && matches!(initial, Some(Initial::Approx | Initial::Calculated)))
            || v.causality == Causality::CalculatedParameter
        {
            // Knowns in Initialization Mode: the direct-feedthrough inputs and the parameters
            // (initial = exact). Without the attribute an importer must assume every input, and
            // a coupled pair then looks like an algebraic loop (OMSimulator reports one).
            let mut deps: Vec<u32> = outputs
                .last()
                .filter(|u| u.index == index)
                .map_or_else(Vec::new, |u| u.dependencies.clone().unwrap_or_default());
            // (An output computed from the inputs when Initialization Mode ends also lists
            // every input: `Variable::initially_from_inputs`.)
            deps.extend(
                vars.iter()
                    .enumerate()
                    .filter(|(_, w)| {
                        w.causality == Causality::Parameter
                            || (v.initially_from_inputs && w.causality == Causality::Input)
                    })
                    .map(|(j, _)| u32::try_from(j + 1).unwrap_or(u32::MAX)),
            );
            deps.sort_unstable();
            deps.dedup();
            initial_unknowns.push(Unknown { index, dependencies: Some(deps), dependencies_kind: None, line: 0 });
        }
        model_variables.push(sv);
    }

    // The FMI 3.0 description's independent variable `time` has unit "s" (`to_xml3`).
    if !unit_definitions.iter().any(|u| u.name == "s") {
        unit_definitions.extend(units::definition("s"));
    }
    // Model Exchange: `<Derivatives>` in the order of the states (it defines the state vector).
    let (model_exchange, derivative_unknowns) = match M::model_exchange() {
        Some(ode) => (
            // The same instance code saves and serializes either interface's state (the machine
            // state included: event or continuous-time mode).
            Some(md::ModelExchange {
                model_identifier: info.model_identifier.into(),
                can_get_and_set_fmu_state: true,
                can_serialize_fmu_state: true,
            }),
            derivatives(info.model_name, vars, ode.states, &mut model_variables, &mut initial_unknowns)?,
        ),
        None => (None, Vec::new()),
    };

    let (start, stop, step) = info.default_experiment;
    let mut model = md::ModelDescription {
        fmi_version: "2.0".into(),
        model_name: info.model_name.into(),
        guid: String::new(),
        description: Some(info.description.into()),
        author: Some("hydraulic-cosim developers".into()),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        copyright: None,
        license: Some("MIT OR Apache-2.0".into()),
        generation_tool: Some(GENERATION_TOOL.into()),
        generation_date_and_time: None,
        variable_naming_convention: md::NamingConvention::Structured,
        number_of_event_indicators: None,
        model_exchange,
        co_simulation: Some(md::CoSimulation {
            model_identifier: info.model_identifier.into(),
            needs_execution_tool: false,
            can_handle_variable_communication_step_size: true,
            can_interpolate_inputs: info.interpolates_inputs,
            max_output_derivative_order: max_derivative_order,
            can_run_asynchronuously: false,
            can_be_instantiated_only_once_per_process: false,
            can_not_use_memory_management_functions: true,
            can_get_and_set_fmu_state: true,
            can_serialize_fmu_state: true,
            provides_directional_derivative: false,
            source_files: Vec::new(),
        }),
        unit_definitions,
        type_definitions,
        log_categories: LOG_CATEGORIES
            .iter()
            .map(|(n, d)| md::LogCategory { name: (*n).into(), description: Some((*d).into()) })
            .collect(),
        default_experiment: Some(md::DefaultExperiment {
            start_time: Some(start),
            stop_time: Some(stop),
            tolerance: None,
            step_size: Some(step),
        }),
        vendor_annotations: Vec::new(),
        model_variables,
        model_structure: md::ModelStructure { outputs, derivatives: derivative_unknowns, initial_unknowns },
    };
    let guid = guid_of(&md::to_xml(&model));
    model.guid = guid.clone();
    let problems: Vec<String> = md::validate(&model).iter().map(ToString::to_string).collect();
    if !problems.is_empty() {
        return Err(DescribeError::Invalid { model: info.model_name, problems: problems.join("\n") });
    }
    let xml = md::to_xml(&model);
    Ok(Description { model, xml, guid })
}

/// Marks each derivative variable of `states` (state name, derivative name) with
/// `derivative="<index of the state>"` and lists it among the initial unknowns (a local,
/// calculated from the initial state); a name that is not a Real variable is an error. Returns
/// the `<Derivatives>` unknowns, in state order.
fn derivatives<M>(
    model: &'static str,
    vars: &[Variable<M>],
    states: &[(&'static str, &'static str)],
    model_variables: &mut [ScalarVariable],
    initial_unknowns: &mut Vec<Unknown>,
) -> Result<Vec<Unknown>, DescribeError> {
    let mut out = Vec::with_capacity(states.len());
    let real = |name: &'static str| {
        vars.iter().position(|v| v.name == name && matches!(v.access, Access::Real { .. })).ok_or_else(|| {
            DescribeError::Invalid {
                model,
                problems: format!("continuous state or derivative \"{name}\" is not a Real variable"),
            }
        })
    };
    for (state, der) in states {
        let (i, j) = (real(state)?, real(der)?);
        if let VariableKind::Real { derivative, .. } = &mut model_variables[j].kind {
            *derivative = Some(u32::try_from(i + 1).unwrap_or(u32::MAX));
        }
        let index = u32::try_from(j + 1).unwrap_or(u32::MAX);
        out.push(Unknown { index, dependencies: None, dependencies_kind: None, line: 0 });
        if !initial_unknowns.iter().any(|u| u.index == index) {
            initial_unknowns.push(Unknown { index, dependencies: None, dependencies_kind: None, line: 0 });
        }
    }
    initial_unknowns.sort_by_key(|u| u.index);
    Ok(out)
}

/// A GUID in registry format from the hash of a description written with an empty `guid`.
/// Two FNV-1a 64 passes with different offsets give 128 bits: stable across builds and
/// platforms, and any change to a variable, unit or flag changes it.
pub fn guid_of(xml: &str) -> String {
    fn fnv(bytes: &[u8], offset: u64) -> u64 {
        bytes.iter().fold(offset, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
    }
    let a = fnv(xml.as_bytes(), 0xcbf2_9ce4_8422_2325);
    let b = fnv(xml.as_bytes(), 0x6c62_272e_07bb_0142);
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}
