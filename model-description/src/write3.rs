//! The same [`ModelDescription`] written as an FMI 3.0 Co-Simulation `modelDescription.xml`.
//!
//! An exporter that builds its FMI 2.0 description from one variable table gets the 3.0 one from
//! the same data: elements in the order of `fmi3ModelDescription.xsd` (CoSimulation,
//! UnitDefinitions, TypeDefinitions, LogCategories, DefaultExperiment, ModelVariables,
//! ModelStructure), one element per type (`<Float64>`, `<Int32>`/`<Int64>`, `<Boolean>`,
//! `<String>` with `<Start value>`, `<Enumeration>`), enumeration types as `<EnumerationType>`,
//! `ModelStructure` addressed by value reference instead of index, and the independent variable
//! `time` that FMI 3.0 requires, at the value reference after the last one
//! ([`time_value_reference`]).

use crate::model::*;
use crate::write::{join, write_unit, Attrs, Out};

/// How an exporter's FMI 3.0 types map the 2.0 base types: `Real` is always `Float64`,
/// `Enumeration` is `Enumeration` (accessed with `fmi3GetInt64`); an `Integer` is `Int64` where
/// the predicate says so (counters) and `Int32` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type3 {
    /// `<Float64>`.
    Float64,
    /// `<Int32>`.
    Int32,
    /// `<Int64>`.
    Int64,
    /// `<Boolean>`.
    Boolean,
    /// `<String>`.
    String,
    /// `<Enumeration>` (its values go through `fmi3GetInt64`/`fmi3SetInt64`).
    Enumeration,
    /// `<Float32>` (read from 3.0 descriptions only, as are the types below).
    Float32,
    /// `<Int8>`.
    Int8,
    /// `<UInt8>`.
    UInt8,
    /// `<Int16>`.
    Int16,
    /// `<UInt16>`.
    UInt16,
    /// `<UInt32>`.
    UInt32,
    /// `<UInt64>`.
    UInt64,
    /// `<Binary>`.
    Binary,
    /// `<Clock>`.
    Clock,
}

impl Type3 {
    /// `Int8` … `UInt64` (not Enumeration).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Self::Int8
                | Self::UInt8
                | Self::Int16
                | Self::UInt16
                | Self::Int32
                | Self::UInt32
                | Self::Int64
                | Self::UInt64
        )
    }

    /// The element name, also the type name in `fmi3Get<Type>`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Float64 => "Float64",
            Self::Int32 => "Int32",
            Self::Int64 => "Int64",
            Self::Boolean => "Boolean",
            Self::String => "String",
            Self::Enumeration => "Enumeration",
            Self::Float32 => "Float32",
            Self::Int8 => "Int8",
            Self::UInt8 => "UInt8",
            Self::Int16 => "Int16",
            Self::UInt16 => "UInt16",
            Self::UInt32 => "UInt32",
            Self::UInt64 => "UInt64",
            Self::Binary => "Binary",
            Self::Clock => "Clock",
        }
    }

    /// The type of a 3.0 variable element name (`Float64`, `Int8`, …).
    pub fn from_element(name: &str) -> Option<Self> {
        Some(match name {
            "Float64" => Self::Float64,
            "Float32" => Self::Float32,
            "Int8" => Self::Int8,
            "UInt8" => Self::UInt8,
            "Int16" => Self::Int16,
            "UInt16" => Self::UInt16,
            "Int32" => Self::Int32,
            "UInt32" => Self::UInt32,
            "Int64" => Self::Int64,
            "UInt64" => Self::UInt64,
            "Boolean" => Self::Boolean,
            "String" => Self::String,
            "Binary" => Self::Binary,
            "Enumeration" => Self::Enumeration,
            "Clock" => Self::Clock,
            _ => return None,
        })
    }

    /// The FMI 3.0 type of `v` given which `Integer`s are `Int64`.
    pub fn of(v: &ScalarVariable, int64: impl Fn(&ScalarVariable) -> bool) -> Self {
        match &v.kind {
            VariableKind::Real { .. } => Self::Float64,
            VariableKind::Integer { .. } if int64(v) => Self::Int64,
            VariableKind::Integer { .. } => Self::Int32,
            VariableKind::Boolean { .. } => Self::Boolean,
            VariableKind::String { .. } => Self::String,
            VariableKind::Enumeration { .. } => Self::Enumeration,
            VariableKind::Binary { .. } => Self::Binary,
        }
    }
}

/// The value reference of the independent variable `time` in the 3.0 description: one after
/// the largest value reference of `md`.
pub fn time_value_reference(md: &ModelDescription) -> u32 {
    md.model_variables.iter().map(|v| v.value_reference.saturating_add(1)).max().unwrap_or(0)
}

/// Writes `md` (an FMI 2.0 Co-Simulation description) as FMI 3.0: `instantiationToken` is
/// `md.guid`; an `Integer` is an `<Int64>` where `int64` is true, else an `<Int32>`.
pub fn to_xml3(md: &ModelDescription, int64: impl Fn(&ScalarVariable) -> bool) -> String {
    let mut w = Out::default();
    w.buf.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let root = Attrs::new()
        .s("fmiVersion", "3.0")
        .s("modelName", &md.model_name)
        .s("instantiationToken", &md.guid)
        .o("description", md.description.as_deref())
        .o("author", md.author.as_deref())
        .o("version", md.version.as_deref())
        .o("copyright", md.copyright.as_deref())
        .o("license", md.license.as_deref())
        .o("generationTool", md.generation_tool.as_deref())
        .o("generationDateAndTime", md.generation_date_and_time.as_deref())
        .o(
            "variableNamingConvention",
            (md.variable_naming_convention != NamingConvention::Flat).then_some(md.variable_naming_convention.as_str()),
        );
    w.open("fmiModelDescription", &root);
    if let Some(me) = &md.model_exchange {
        let attrs = Attrs::new()
            .s("modelIdentifier", &me.model_identifier)
            .t("canGetAndSetFMUState", me.can_get_and_set_fmu_state)
            .t("canSerializeFMUState", me.can_serialize_fmu_state);
        w.empty("ModelExchange", &attrs);
    }
    if let Some(cs) = &md.co_simulation {
        w.empty(
            "CoSimulation",
            &Attrs::new()
                .s("modelIdentifier", &cs.model_identifier)
                .t("needsExecutionTool", cs.needs_execution_tool)
                .t("canBeInstantiatedOnlyOncePerProcess", cs.can_be_instantiated_only_once_per_process)
                .t("canGetAndSetFMUState", cs.can_get_and_set_fmu_state)
                .t("canSerializeFMUState", cs.can_serialize_fmu_state)
                .t("providesDirectionalDerivatives", cs.provides_directional_derivative)
                .t("canHandleVariableCommunicationStepSize", cs.can_handle_variable_communication_step_size)
                .u(
                    "maxOutputDerivativeOrder",
                    (cs.max_output_derivative_order > 0).then_some(cs.max_output_derivative_order),
                )
                .s("providesIntermediateUpdate", "false")
                .s("mightReturnEarlyFromDoStep", "false")
                .s("hasEventMode", "false"),
        );
    }
    if !md.unit_definitions.is_empty() {
        w.open("UnitDefinitions", &Attrs::new());
        for unit in &md.unit_definitions {
            write_unit(&mut w, unit);
        }
        w.close("UnitDefinitions");
    }
    let enums: Vec<&SimpleType> =
        md.type_definitions.iter().filter(|t| matches!(t.kind, SimpleTypeKind::Enumeration { .. })).collect();
    if !enums.is_empty() {
        w.open("TypeDefinitions", &Attrs::new());
        for ty in enums {
            let SimpleTypeKind::Enumeration { quantity, items } = &ty.kind else { continue };
            w.open(
                "EnumerationType",
                &Attrs::new()
                    .s("name", &ty.name)
                    .o("description", ty.description.as_deref())
                    .o("quantity", quantity.as_deref()),
            );
            for item in items {
                let value = item.value.to_string();
                w.empty(
                    "Item",
                    &Attrs::new()
                        .s("name", &item.name)
                        .s("value", &value)
                        .o("description", item.description.as_deref()),
                );
            }
            w.close("EnumerationType");
        }
        w.close("TypeDefinitions");
    }
    if !md.log_categories.is_empty() {
        w.open("LogCategories", &Attrs::new());
        for c in &md.log_categories {
            w.empty("Category", &Attrs::new().s("name", &c.name).o("description", c.description.as_deref()));
        }
        w.close("LogCategories");
    }
    if let Some(de) = &md.default_experiment {
        w.empty(
            "DefaultExperiment",
            &Attrs::new()
                .f("startTime", de.start_time)
                .f("stopTime", de.stop_time)
                .f("tolerance", de.tolerance)
                .f("stepSize", de.step_size),
        );
    }

    w.open("ModelVariables", &Attrs::new());
    w.empty(
        "Float64",
        &Attrs::new()
            .s("name", "time")
            .u("valueReference", Some(time_value_reference(md)))
            .s("description", "Simulation time")
            .s("causality", "independent")
            .s("variability", "continuous")
            .s("unit", "s"),
    );
    for v in &md.model_variables {
        write_variable3(&mut w, v, Type3::of(v, &int64));
    }
    w.close("ModelVariables");

    // ModelStructure: 3.0 addresses unknowns and their dependencies by value reference.
    let vr_of = |index: u32| md.variable_by_index(index).map_or(index.saturating_sub(1), |v| v.value_reference);
    let ms = &md.model_structure;
    w.open("ModelStructure", &Attrs::new());
    for (element, unknowns) in [
        ("Output", &ms.outputs),
        ("ContinuousStateDerivative", &ms.derivatives),
        ("InitialUnknown", &ms.initial_unknowns),
    ] {
        for u in unknowns {
            let deps = u.dependencies.as_ref().map(|d| join(d.iter().map(|i| vr_of(*i).to_string())));
            let kinds = u.dependencies_kind.as_ref().map(|k| join(k.iter().map(|k| k.as_str().to_owned())));
            w.empty(
                element,
                &Attrs::new()
                    .u("valueReference", Some(vr_of(u.index)))
                    .o("dependencies", deps.as_deref())
                    .o("dependenciesKind", kinds.as_deref()),
            );
        }
    }
    w.close("ModelStructure");
    w.close("fmiModelDescription");
    w.buf
}

fn write_variable3(w: &mut Out, v: &ScalarVariable, ty: Type3) {
    let a = Attrs::new()
        .s("name", &v.name)
        .u("valueReference", Some(v.value_reference))
        .o("description", v.description.as_deref())
        .o("causality", (v.causality != Causality::Local).then_some(v.causality.as_str()))
        .o(
            "variability",
            (v.variability != Variability::Continuous || ty != Type3::Float64).then_some(v.variability.as_str()),
        )
        .o("initial", v.initial.map(Initial::as_str))
        .b("canHandleMultipleSetPerTimeInstant", v.can_handle_multiple_set_per_time_instant);
    match &v.kind {
        VariableKind::Real { declared_type, attrs, start, derivative, reinit } => {
            let a = a
                .o("declaredType", declared_type.as_deref())
                .o("quantity", attrs.quantity.as_deref())
                .o("unit", attrs.unit.as_deref())
                .o("displayUnit", attrs.display_unit.as_deref())
                .b("relativeQuantity", attrs.relative_quantity)
                .b("unbounded", attrs.unbounded)
                .f("min", attrs.min)
                .f("max", attrs.max)
                .f("nominal", attrs.nominal)
                .f("start", *start)
                .b("reinit", *reinit);
            // 2.0's derivative is a 1-based index; with value reference = index − 1 in our
            // exports it becomes that reference.
            let a = a.u("derivative", derivative.map(|i| i.saturating_sub(1)));
            w.empty("Float64", &a);
        }
        VariableKind::Integer { declared_type, attrs, start } => {
            let a = a
                .o("declaredType", declared_type.as_deref())
                .o("quantity", attrs.quantity.as_deref())
                .i("min", attrs.min)
                .i("max", attrs.max)
                .i("start", *start);
            w.empty(ty.as_str(), &a);
        }
        VariableKind::Boolean { declared_type, start } => {
            w.empty("Boolean", &a.o("declaredType", declared_type.as_deref()).b("start", *start))
        }
        VariableKind::String { declared_type, start } => {
            let a = a.o("declaredType", declared_type.as_deref());
            match start {
                Some(s) => {
                    w.open("String", &a);
                    w.empty("Start", &Attrs::new().s("value", s));
                    w.close("String");
                }
                None => w.empty("String", &a),
            }
        }
        VariableKind::Enumeration { declared_type, quantity, min, max, start } => w.empty(
            "Enumeration",
            &a.s("declaredType", declared_type)
                .o("quantity", quantity.as_deref())
                .i("min", *min)
                .i("max", *max)
                .i("start", *start),
        ),
        VariableKind::Binary { declared_type, mime_type, max_size, start } => {
            let a = a
                .o("declaredType", declared_type.as_deref())
                .o("mimeType", mime_type.as_deref())
                .u("maxSize", *max_size);
            match start {
                Some(bytes) => {
                    w.open("Binary", &a);
                    w.empty("Start", &Attrs::new().s("value", &crate::to_hex(bytes)));
                    w.close("Binary");
                }
                None => w.empty("Binary", &a),
            }
        }
    }
}
