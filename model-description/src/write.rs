//! Deterministic writer: [`ModelDescription`] → `modelDescription.xml`.
//!
//! Elements appear in the order of `fmi2ModelDescription.xsd`, attributes only when they are
//! present (`Some`) or differ from the schema's default, empty container elements are left out,
//! and every `f64` is written so that reading it back gives the same bits (`INF`, `-INF` and
//! `NaN` in the spelling of `xs:double`). The same input always gives the same bytes.

use crate::model::*;

/// Writes `md` as an FMI 2.0 `modelDescription.xml` (UTF-8, two-space indentation).
///
/// Tool annotations ([`ToolAnnotation::content`]) are inserted verbatim, so they must be
/// well-formed XML themselves; everything else is escaped.
pub fn to_xml(md: &ModelDescription) -> String {
    let mut w = Out::default();
    w.buf.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");

    let root = Attrs::new()
        .s("fmiVersion", &md.fmi_version)
        .s("modelName", &md.model_name)
        .s("guid", &md.guid)
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
        )
        .u("numberOfEventIndicators", md.number_of_event_indicators);
    w.open("fmiModelDescription", &root);

    if let Some(me) = &md.model_exchange {
        let attrs = Attrs::new()
            .s("modelIdentifier", &me.model_identifier)
            .t("canGetAndSetFMUstate", me.can_get_and_set_fmu_state)
            .t("canSerializeFMUstate", me.can_serialize_fmu_state);
        w.empty("ModelExchange", &attrs);
    }
    if let Some(cs) = &md.co_simulation {
        write_co_simulation(&mut w, cs);
    }
    if !md.unit_definitions.is_empty() {
        w.open("UnitDefinitions", &Attrs::new());
        for unit in &md.unit_definitions {
            write_unit(&mut w, unit);
        }
        w.close("UnitDefinitions");
    }
    if !md.type_definitions.is_empty() {
        w.open("TypeDefinitions", &Attrs::new());
        for ty in &md.type_definitions {
            write_simple_type(&mut w, ty);
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
    if !md.vendor_annotations.is_empty() {
        write_tools(&mut w, "VendorAnnotations", &md.vendor_annotations);
    }

    if md.model_variables.is_empty() {
        w.empty("ModelVariables", &Attrs::new());
    } else {
        w.open("ModelVariables", &Attrs::new());
        for (i, v) in md.model_variables.iter().enumerate() {
            w.comment(&format!("Index of variable = \"{}\"", i + 1));
            write_variable(&mut w, v);
        }
        w.close("ModelVariables");
    }

    let ms = &md.model_structure;
    if ms.outputs.is_empty() && ms.derivatives.is_empty() && ms.initial_unknowns.is_empty() {
        w.empty("ModelStructure", &Attrs::new());
    } else {
        w.open("ModelStructure", &Attrs::new());
        write_unknowns(&mut w, "Outputs", &ms.outputs);
        write_unknowns(&mut w, "Derivatives", &ms.derivatives);
        write_unknowns(&mut w, "InitialUnknowns", &ms.initial_unknowns);
        w.close("ModelStructure");
    }

    w.close("fmiModelDescription");
    w.buf
}

fn write_co_simulation(w: &mut Out, cs: &CoSimulation) {
    let attrs = Attrs::new()
        .s("modelIdentifier", &cs.model_identifier)
        .t("needsExecutionTool", cs.needs_execution_tool)
        .t("canHandleVariableCommunicationStepSize", cs.can_handle_variable_communication_step_size)
        .t("canInterpolateInputs", cs.can_interpolate_inputs)
        .u("maxOutputDerivativeOrder", (cs.max_output_derivative_order > 0).then_some(cs.max_output_derivative_order))
        .t("canRunAsynchronuously", cs.can_run_asynchronuously)
        .t("canBeInstantiatedOnlyOncePerProcess", cs.can_be_instantiated_only_once_per_process)
        .t("canNotUseMemoryManagementFunctions", cs.can_not_use_memory_management_functions)
        .t("canGetAndSetFMUstate", cs.can_get_and_set_fmu_state)
        .t("canSerializeFMUstate", cs.can_serialize_fmu_state)
        .t("providesDirectionalDerivative", cs.provides_directional_derivative);
    if cs.source_files.is_empty() {
        w.empty("CoSimulation", &attrs);
        return;
    }
    w.open("CoSimulation", &attrs);
    w.open("SourceFiles", &Attrs::new());
    for file in &cs.source_files {
        w.empty("File", &Attrs::new().s("name", file));
    }
    w.close("SourceFiles");
    w.close("CoSimulation");
}

pub(crate) fn write_unit(w: &mut Out, unit: &Unit) {
    let attrs = Attrs::new().s("name", &unit.name);
    if unit.base_unit.is_none() && unit.display_units.is_empty() {
        w.empty("Unit", &attrs);
        return;
    }
    w.open("Unit", &attrs);
    if let Some(b) = &unit.base_unit {
        let nz = |x: i32| (x != 0).then_some(x);
        w.empty(
            "BaseUnit",
            &Attrs::new()
                .i("kg", nz(b.kg))
                .i("m", nz(b.m))
                .i("s", nz(b.s))
                .i("A", nz(b.a))
                .i("K", nz(b.k))
                .i("mol", nz(b.mol))
                .i("cd", nz(b.cd))
                .i("rad", nz(b.rad))
                .f("factor", non_default(b.factor, 1.0))
                .f("offset", non_default(b.offset, 0.0)),
        );
    }
    for d in &unit.display_units {
        w.empty(
            "DisplayUnit",
            &Attrs::new()
                .s("name", &d.name)
                .f("factor", non_default(d.factor, 1.0))
                .f("offset", non_default(d.offset, 0.0)),
        );
    }
    w.close("Unit");
}

/// `Some(x)` unless `x` is bit-for-bit the schema default.
fn non_default(x: f64, default: f64) -> Option<f64> {
    (x.to_bits() != default.to_bits()).then_some(x)
}

fn real_attrs(a: Attrs, r: &RealAttributes) -> Attrs {
    a.o("quantity", r.quantity.as_deref())
        .o("unit", r.unit.as_deref())
        .o("displayUnit", r.display_unit.as_deref())
        .b("relativeQuantity", r.relative_quantity)
        .f("min", r.min)
        .f("max", r.max)
        .f("nominal", r.nominal)
        .b("unbounded", r.unbounded)
}

fn integer_attrs(a: Attrs, r: &IntegerAttributes) -> Attrs {
    a.o("quantity", r.quantity.as_deref()).i("min", r.min).i("max", r.max)
}

fn write_simple_type(w: &mut Out, ty: &SimpleType) {
    w.open("SimpleType", &Attrs::new().s("name", &ty.name).o("description", ty.description.as_deref()));
    match &ty.kind {
        SimpleTypeKind::Real(r) => w.empty("Real", &real_attrs(Attrs::new(), r)),
        SimpleTypeKind::Integer(r) => w.empty("Integer", &integer_attrs(Attrs::new(), r)),
        SimpleTypeKind::Boolean => w.empty("Boolean", &Attrs::new()),
        SimpleTypeKind::String => w.empty("String", &Attrs::new()),
        SimpleTypeKind::Enumeration { quantity, items } => {
            let attrs = Attrs::new().o("quantity", quantity.as_deref());
            if items.is_empty() {
                w.empty("Enumeration", &attrs);
            } else {
                w.open("Enumeration", &attrs);
                for item in items {
                    w.empty(
                        "Item",
                        &Attrs::new()
                            .s("name", &item.name)
                            .i("value", Some(item.value))
                            .o("description", item.description.as_deref()),
                    );
                }
                w.close("Enumeration");
            }
        }
    }
    w.close("SimpleType");
}

fn write_variable(w: &mut Out, v: &ScalarVariable) {
    let attrs = Attrs::new()
        .s("name", &v.name)
        .u("valueReference", Some(v.value_reference))
        .o("description", v.description.as_deref())
        .o("causality", (v.causality != Causality::Local).then_some(v.causality.as_str()))
        .o("variability", (v.variability != Variability::Continuous).then_some(v.variability.as_str()))
        .o("initial", v.initial.map(Initial::as_str))
        .b("canHandleMultipleSetPerTimeInstant", v.can_handle_multiple_set_per_time_instant);
    w.open("ScalarVariable", &attrs);
    match &v.kind {
        VariableKind::Real { declared_type, attrs, start, derivative, reinit } => {
            let a = Attrs::new().o("declaredType", declared_type.as_deref());
            let a = real_attrs(a, attrs).f("start", *start).u("derivative", *derivative).b("reinit", *reinit);
            w.empty("Real", &a);
        }
        VariableKind::Integer { declared_type, attrs, start } => {
            let a = Attrs::new().o("declaredType", declared_type.as_deref());
            w.empty("Integer", &integer_attrs(a, attrs).i("start", *start));
        }
        VariableKind::Boolean { declared_type, start } => {
            w.empty("Boolean", &Attrs::new().o("declaredType", declared_type.as_deref()).b("start", *start))
        }
        VariableKind::String { declared_type, start } => {
            w.empty("String", &Attrs::new().o("declaredType", declared_type.as_deref()).o("start", start.as_deref()))
        }
        VariableKind::Enumeration { declared_type, quantity, min, max, start } => w.empty(
            "Enumeration",
            &Attrs::new()
                .s("declaredType", declared_type)
                .o("quantity", quantity.as_deref())
                .i("min", *min)
                .i("max", *max)
                .i("start", *start),
        ),
        // FMI 2.0 has no Binary: written as 3.0's element (mimeType, maxSize and a hex start
        // attribute), which a 2.0 reader refuses by name rather than misreading it.
        VariableKind::Binary { declared_type, mime_type, max_size, start } => w.empty(
            "Binary",
            &Attrs::new()
                .o("declaredType", declared_type.as_deref())
                .o("mimeType", mime_type.as_deref())
                .u("maxSize", *max_size)
                .o("start", start.as_deref().map(crate::to_hex).as_deref()),
        ),
    }
    if !v.annotations.is_empty() {
        write_tools(w, "Annotations", &v.annotations);
    }
    w.close("ScalarVariable");
}

fn write_tools(w: &mut Out, element: &str, tools: &[ToolAnnotation]) {
    w.open(element, &Attrs::new());
    for tool in tools {
        w.verbatim("Tool", &Attrs::new().s("name", &tool.name), &tool.content);
    }
    w.close(element);
}

fn write_unknowns(w: &mut Out, element: &str, unknowns: &[Unknown]) {
    if unknowns.is_empty() {
        return;
    }
    w.open(element, &Attrs::new());
    for u in unknowns {
        let deps = u.dependencies.as_ref().map(|d| join(d.iter().map(u32::to_string)));
        let kinds = u.dependencies_kind.as_ref().map(|k| join(k.iter().map(|k| k.as_str().to_owned())));
        w.empty(
            "Unknown",
            &Attrs::new()
                .u("index", Some(u.index))
                .o("dependencies", deps.as_deref())
                .o("dependenciesKind", kinds.as_deref()),
        );
    }
    w.close(element);
}

pub(crate) fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(" ")
}

/// Formats an `f64` as an `xs:double` literal that parses back to the same value.
///
/// Rust's `Display` gives the shortest digits that round-trip; very large and very small
/// magnitudes use the (also shortest) exponent form to keep the text short.
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "INF" } else { "-INF" }.to_owned()
    } else if x != 0.0 && (x.abs() >= 1e21 || x.abs() < 1e-7) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Escapes text for a double-quoted attribute value. Tabs and line breaks become character
/// references, since XML attribute-value normalisation would turn them into spaces.
fn escape_attr(s: &str) -> String {
    let escaped = quick_xml::escape::escape(s);
    if escaped.contains(['\t', '\n', '\r']) {
        escaped.replace('\t', "&#9;").replace('\n', "&#10;").replace('\r', "&#13;")
    } else {
        escaped.into_owned()
    }
}

/// An ordered attribute list; the builder methods skip absent values.
#[derive(Default)]
pub(crate) struct Attrs(Vec<(&'static str, String)>);

impl Attrs {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A required string.
    pub(crate) fn s(mut self, name: &'static str, value: &str) -> Self {
        self.0.push((name, value.to_owned()));
        self
    }

    /// An optional string.
    pub(crate) fn o(self, name: &'static str, value: Option<&str>) -> Self {
        match value {
            Some(v) => self.s(name, v),
            None => self,
        }
    }

    pub(crate) fn u(self, name: &'static str, value: Option<u32>) -> Self {
        let v = value.map(|v| v.to_string());
        self.o(name, v.as_deref())
    }

    pub(crate) fn i(self, name: &'static str, value: Option<impl std::fmt::Display>) -> Self {
        let v = value.map(|v| v.to_string());
        self.o(name, v.as_deref())
    }

    pub(crate) fn f(self, name: &'static str, value: Option<f64>) -> Self {
        let v = value.map(format_f64);
        self.o(name, v.as_deref())
    }

    pub(crate) fn b(self, name: &'static str, value: Option<bool>) -> Self {
        self.o(name, value.map(|b| if b { "true" } else { "false" }))
    }

    /// A boolean flag written only when true (its schema default is false).
    pub(crate) fn t(self, name: &'static str, value: bool) -> Self {
        self.o(name, value.then_some("true"))
    }
}

/// The output buffer with the current indentation depth.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) buf: String,
    depth: usize,
}

impl Out {
    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.buf.push_str("  ");
        }
    }

    fn tag(&mut self, name: &str, attrs: &Attrs) {
        self.indent();
        self.buf.push('<');
        self.buf.push_str(name);
        for (k, v) in &attrs.0 {
            self.buf.push(' ');
            self.buf.push_str(k);
            self.buf.push_str("=\"");
            self.buf.push_str(&escape_attr(v));
            self.buf.push('"');
        }
    }

    pub(crate) fn open(&mut self, name: &str, attrs: &Attrs) {
        self.tag(name, attrs);
        self.buf.push_str(">\n");
        self.depth += 1;
    }

    pub(crate) fn empty(&mut self, name: &str, attrs: &Attrs) {
        self.tag(name, attrs);
        self.buf.push_str("/>\n");
    }

    pub(crate) fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.indent();
        self.buf.push_str("</");
        self.buf.push_str(name);
        self.buf.push_str(">\n");
    }

    /// `<name …>content</name>` on one line with `content` inserted unescaped.
    fn verbatim(&mut self, name: &str, attrs: &Attrs, content: &str) {
        self.tag(name, attrs);
        self.buf.push('>');
        self.buf.push_str(content);
        self.buf.push_str("</");
        self.buf.push_str(name);
        self.buf.push_str(">\n");
    }

    pub(crate) fn comment(&mut self, text: &str) {
        self.indent();
        self.buf.push_str("<!-- ");
        self.buf.push_str(text);
        self.buf.push_str(" -->\n");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::read::from_str;
    use std::path::PathBuf;
    use std::process::Command;

    fn real(unit: Option<&str>, start: Option<f64>) -> VariableKind {
        VariableKind::Real {
            declared_type: None,
            attrs: RealAttributes { unit: unit.map(Into::into), ..Default::default() },
            start,
            derivative: None,
            reinit: None,
        }
    }

    fn var(
        name: &str,
        vr: u32,
        causality: Causality,
        variability: Variability,
        initial: Option<Initial>,
        kind: VariableKind,
    ) -> ScalarVariable {
        ScalarVariable {
            name: name.into(),
            value_reference: vr,
            description: None,
            causality,
            variability,
            initial,
            can_handle_multiple_set_per_time_instant: None,
            kind,
            annotations: Vec::new(),
            line: 0,
        }
    }

    fn unknown(index: u32, deps: Option<Vec<u32>>, kinds: Option<Vec<DependencyKind>>) -> Unknown {
        Unknown { index, dependencies: deps, dependencies_kind: kinds, line: 0 }
    }

    /// A description that uses every element and all five variable kinds, and breaks no rule.
    ///
    /// Variables (1-based): 1 time, 2 p_in, 3 mode, 4 enabled, 5 'label text', 6 pump[1].n,
    /// 7 k, 8 x, 9 der(x), 10 v, 11 der(v), 12 y, 13 count, 14 c, 15 area, 16 y_alias, 17 temp.
    pub(crate) fn rich() -> ModelDescription {
        use Causality as C;
        use DependencyKind as D;
        use Variability as V;
        let mut p_in = var(
            "p_in",
            1,
            C::Input,
            V::Continuous,
            None,
            VariableKind::Real {
                declared_type: Some("Pressure".into()),
                attrs: RealAttributes::default(),
                start: Some(1e5),
                derivative: None,
                reinit: None,
            },
        );
        p_in.description = Some("inlet pressure".into());
        p_in.can_handle_multiple_set_per_time_instant = Some(false);
        let mut x = var("x", 3, C::Local, V::Continuous, Some(Initial::Exact), real(Some("m"), Some(0.1)));
        x.annotations =
            vec![ToolAnnotation { name: "vendor".into(), content: "<info a=\"1\"><nested/></info>".into() }];
        let der = |name: &str, vr: u32, of: u32| {
            var(
                name,
                vr,
                C::Local,
                V::Continuous,
                None,
                VariableKind::Real {
                    declared_type: None,
                    attrs: RealAttributes::default(),
                    start: None,
                    derivative: Some(of),
                    reinit: Some(true),
                },
            )
        };
        ModelDescription {
            fmi_version: "2.0".into(),
            model_name: "Rich".into(),
            guid: "{8c4e810f-3df3-4a00-8276-176fa3c9f000}".into(),
            description: Some("A <rich> & \"complete\" model,\n\twith 'quotes' and ünïcödé".into()),
            author: Some("me".into()),
            version: Some("1.2".into()),
            copyright: Some("(c) 2024".into()),
            license: Some("MIT".into()),
            generation_tool: Some("unit test".into()),
            generation_date_and_time: Some("2024-01-02T03:04:05Z".into()),
            variable_naming_convention: NamingConvention::Structured,
            number_of_event_indicators: Some(0),
            model_exchange: Some(ModelExchange {
                model_identifier: "Rich".into(),
                can_get_and_set_fmu_state: true,
                can_serialize_fmu_state: false,
            }),
            co_simulation: Some(CoSimulation {
                model_identifier: "Rich".into(),
                needs_execution_tool: false,
                can_handle_variable_communication_step_size: true,
                can_interpolate_inputs: true,
                max_output_derivative_order: 2,
                can_run_asynchronuously: false,
                can_be_instantiated_only_once_per_process: false,
                can_not_use_memory_management_functions: true,
                can_get_and_set_fmu_state: true,
                can_serialize_fmu_state: true,
                provides_directional_derivative: false,
                source_files: vec!["rich.c".into(), "b&c.c".into()],
            }),
            unit_definitions: vec![
                Unit {
                    name: "m".into(),
                    base_unit: Some(BaseUnit::si([0, 1, 0, 0, 0, 0, 0, 0])),
                    display_units: vec![
                        DisplayUnit { name: "mm".into(), factor: 1000.0, offset: 0.0 },
                        DisplayUnit { name: "km".into(), factor: 0.001, offset: 0.0 },
                    ],
                },
                Unit {
                    name: "rad/s".into(),
                    base_unit: Some(BaseUnit::si([0, 0, -1, 0, 0, 0, 0, 1])),
                    display_units: vec![DisplayUnit { name: "rpm".into(), factor: 9.549296585513721, offset: 0.0 }],
                },
                Unit {
                    name: "K".into(),
                    base_unit: Some(BaseUnit::si([0, 0, 0, 0, 1, 0, 0, 0])),
                    display_units: vec![DisplayUnit { name: "degC".into(), factor: 1.0, offset: -273.15 }],
                },
                Unit {
                    name: "bar".into(),
                    base_unit: Some(BaseUnit { factor: 1e5, ..BaseUnit::si([1, -1, -2, 0, 0, 0, 0, 0]) }),
                    display_units: Vec::new(),
                },
                Unit { name: "1".into(), base_unit: None, display_units: Vec::new() },
            ],
            type_definitions: vec![
                SimpleType {
                    name: "Pressure".into(),
                    description: Some("absolute pressure".into()),
                    kind: SimpleTypeKind::Real(RealAttributes {
                        quantity: Some("Pressure".into()),
                        unit: Some("bar".into()),
                        display_unit: None,
                        relative_quantity: Some(false),
                        min: Some(0.0),
                        max: None,
                        nominal: Some(1e300),
                        unbounded: Some(true),
                    }),
                },
                SimpleType {
                    name: "Count".into(),
                    description: None,
                    kind: SimpleTypeKind::Integer(IntegerAttributes {
                        quantity: Some("Count".into()),
                        min: Some(0),
                        max: Some(100),
                    }),
                },
                SimpleType { name: "Flag".into(), description: None, kind: SimpleTypeKind::Boolean },
                SimpleType { name: "Label".into(), description: None, kind: SimpleTypeKind::String },
                SimpleType {
                    name: "Mode".into(),
                    description: Some("operating mode".into()),
                    kind: SimpleTypeKind::Enumeration {
                        quantity: Some("Mode".into()),
                        items: vec![
                            EnumerationItem { name: "off".into(), value: 1, description: None },
                            EnumerationItem { name: "on".into(), value: 2, description: Some("running".into()) },
                            EnumerationItem { name: "auto".into(), value: 3, description: None },
                        ],
                    },
                },
            ],
            log_categories: vec![
                LogCategory { name: "logStatusError".into(), description: Some("errors".into()) },
                LogCategory { name: "logAll".into(), description: None },
            ],
            default_experiment: Some(DefaultExperiment {
                start_time: Some(0.0),
                stop_time: Some(10.0),
                tolerance: Some(1e-6),
                step_size: Some(1e-3),
            }),
            vendor_annotations: vec![ToolAnnotation {
                name: "hydraulic-cosim".into(),
                content: "<settings solver=\"rk4\" n=\"3\">&amp; more</settings>".into(),
            }],
            model_variables: vec![
                var("time", 0, C::Independent, V::Continuous, None, real(None, None)),
                p_in,
                var(
                    "mode",
                    0,
                    C::Input,
                    V::Discrete,
                    None,
                    VariableKind::Enumeration {
                        declared_type: "Mode".into(),
                        quantity: Some("Mode".into()),
                        min: Some(1),
                        max: Some(3),
                        start: Some(2),
                    },
                ),
                var(
                    "enabled",
                    0,
                    C::Parameter,
                    V::Fixed,
                    None,
                    VariableKind::Boolean { declared_type: Some("Flag".into()), start: Some(true) },
                ),
                var(
                    "'label text'",
                    0,
                    C::Parameter,
                    V::Fixed,
                    Some(Initial::Exact),
                    VariableKind::String { declared_type: Some("Label".into()), start: Some("a <b> & \"c\"\n".into()) },
                ),
                var(
                    "pump[1].n",
                    1,
                    C::Parameter,
                    V::Tunable,
                    None,
                    VariableKind::Integer {
                        declared_type: Some("Count".into()),
                        attrs: IntegerAttributes { quantity: None, min: Some(1), max: None },
                        start: Some(3),
                    },
                ),
                var(
                    "k",
                    2,
                    C::Parameter,
                    V::Fixed,
                    None,
                    VariableKind::Real {
                        declared_type: None,
                        attrs: RealAttributes {
                            unit: Some("m".into()),
                            display_unit: Some("mm".into()),
                            min: Some(0.0),
                            max: Some(f64::INFINITY),
                            nominal: Some(1e-10),
                            ..Default::default()
                        },
                        start: Some(1e-10),
                        derivative: None,
                        reinit: None,
                    },
                ),
                x,
                der("der(x)", 4, 8),
                var("v", 5, C::Local, V::Continuous, Some(Initial::Approx), real(None, Some(0.0))),
                der("der(v)", 6, 10),
                var("y", 7, C::Output, V::Continuous, None, real(Some("m"), None)),
                var(
                    "count",
                    2,
                    C::Output,
                    V::Discrete,
                    Some(Initial::Exact),
                    VariableKind::Integer { declared_type: None, attrs: IntegerAttributes::default(), start: Some(-7) },
                ),
                var("c", 8, C::Local, V::Constant, None, real(None, Some(std::f64::consts::PI))),
                var("area", 9, C::CalculatedParameter, V::Fixed, None, real(None, None)),
                var("y_alias", 7, C::Local, V::Continuous, None, real(Some("m"), None)),
                var(
                    "temp",
                    10,
                    C::Output,
                    V::Continuous,
                    Some(Initial::Approx),
                    VariableKind::Real {
                        declared_type: None,
                        attrs: RealAttributes {
                            unit: Some("K".into()),
                            display_unit: Some("degC".into()),
                            ..Default::default()
                        },
                        start: Some(293.15),
                        derivative: None,
                        reinit: None,
                    },
                ),
            ],
            model_structure: ModelStructure {
                outputs: vec![
                    unknown(12, Some(vec![2, 8]), Some(vec![D::Dependent, D::Fixed])),
                    unknown(13, Some(vec![]), Some(vec![])),
                    unknown(17, None, None),
                ],
                derivatives: vec![
                    unknown(9, Some(vec![10]), None),
                    unknown(11, Some(vec![2, 8, 10]), Some(vec![D::Dependent, D::Constant, D::Tunable])),
                ],
                initial_unknowns: vec![
                    unknown(9, Some(vec![10]), Some(vec![D::Dependent])),
                    unknown(10, Some(vec![]), None),
                    unknown(11, Some(vec![2, 8, 10]), Some(vec![D::Dependent, D::Discrete, D::Dependent])),
                    unknown(12, Some(vec![2, 8]), None),
                    unknown(15, Some(vec![7]), Some(vec![D::Fixed])),
                    unknown(17, None, None),
                ],
            },
        }
    }

    /// A description with nothing but the required parts.
    pub(crate) fn minimal() -> ModelDescription {
        ModelDescription {
            fmi_version: "2.0".into(),
            model_name: "m".into(),
            guid: String::new(),
            co_simulation: Some(CoSimulation { model_identifier: "m".into(), ..Default::default() }),
            model_variables: vec![var("p", 0, Causality::Parameter, Variability::Fixed, None, real(None, Some(1.0)))],
            ..Default::default()
        }
    }

    /// The description with every `line` set to 0, to compare what was read with what was built.
    pub(crate) fn without_lines(mut md: ModelDescription) -> ModelDescription {
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
    fn round_trip_rich() {
        let md = rich();
        let xml = to_xml(&md);
        let back = from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        assert_eq!(without_lines(back.clone()), md);
        // Lines were recorded on the way in.
        assert!(back.model_variables.iter().all(|v| v.line > 0));
        assert!(back.model_structure.initial_unknowns.iter().all(|u| u.line > 0));
    }

    #[test]
    fn round_trip_minimal() {
        let md = minimal();
        assert_eq!(without_lines(from_str(&to_xml(&md)).unwrap()), md);
    }

    #[test]
    fn output_is_deterministic_and_a_fixpoint() {
        let xml = to_xml(&rich());
        assert_eq!(xml, to_xml(&rich()));
        assert_eq!(to_xml(&from_str(&xml).unwrap()), xml);
    }

    #[test]
    fn element_order_follows_the_schema() {
        let xml = to_xml(&rich());
        let order = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<fmiModelDescription ",
            "<ModelExchange ",
            "<CoSimulation ",
            "<SourceFiles>",
            "<UnitDefinitions>",
            "<TypeDefinitions>",
            "<LogCategories>",
            "<DefaultExperiment ",
            "<VendorAnnotations>",
            "<ModelVariables>",
            "<ModelStructure>",
            "<Outputs>",
            "<Derivatives>",
            "<InitialUnknowns>",
            "</fmiModelDescription>",
        ];
        let positions: Vec<usize> =
            order.iter().map(|s| xml.find(s).unwrap_or_else(|| panic!("{s} missing"))).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        assert!(xml.starts_with(order[0]));
    }

    #[test]
    fn empty_containers_and_default_attributes_are_omitted() {
        let xml = to_xml(&minimal());
        for absent in [
            "UnitDefinitions",
            "TypeDefinitions",
            "LogCategories",
            "DefaultExperiment",
            "VendorAnnotations",
            "Outputs",
            "Derivatives",
            "InitialUnknowns",
            "SourceFiles",
            "ModelExchange",
            "needsExecutionTool",
            "maxOutputDerivativeOrder",
            "variableNamingConvention",
            "initial=",
            "variability=\"continuous\"",
        ] {
            assert!(!xml.contains(absent), "{absent} in\n{xml}");
        }
        assert!(xml.contains("<ModelStructure/>"), "{xml}");
        assert!(xml.contains("guid=\"\""), "{xml}");
        assert!(xml.contains("<CoSimulation modelIdentifier=\"m\"/>"), "{xml}");
    }

    #[test]
    fn attributes_as_specified() {
        let xml = to_xml(&rich());
        // Booleans of CoSimulation: only the true ones; maxOutputDerivativeOrder when > 0.
        assert!(xml.contains(
            "<CoSimulation modelIdentifier=\"Rich\" canHandleVariableCommunicationStepSize=\"true\" \
             canInterpolateInputs=\"true\" maxOutputDerivativeOrder=\"2\" \
             canNotUseMemoryManagementFunctions=\"true\" canGetAndSetFMUstate=\"true\" \
             canSerializeFMUstate=\"true\">"
        ));
        assert!(xml.contains("<Unknown index=\"13\" dependencies=\"\" dependenciesKind=\"\"/>"));
        assert!(xml.contains("<Unknown index=\"12\" dependencies=\"2 8\" dependenciesKind=\"dependent fixed\"/>"));
        assert!(xml.contains("<Unknown index=\"17\"/>"));
        assert!(xml.contains("<BaseUnit kg=\"1\" m=\"-1\" s=\"-2\" factor=\"100000\"/>"));
        assert!(xml.contains("<DisplayUnit name=\"degC\" offset=\"-273.15\"/>"));
        assert!(xml.contains("max=\"INF\""));
        assert!(xml.contains("start=\"1e-10\""));
        assert!(xml.contains("variableNamingConvention=\"structured\""));
        // Escaping, with line breaks and tabs as character references.
        assert!(xml.contains("description=\"A &lt;rich&gt; &amp; &quot;complete&quot; model,&#10;&#9;with &apos;quotes&apos; and ünïcödé\""));
        assert!(xml.contains("<File name=\"b&amp;c.c\"/>"));
        // Tool content verbatim.
        assert!(xml
            .contains("<Tool name=\"hydraulic-cosim\"><settings solver=\"rk4\" n=\"3\">&amp; more</settings></Tool>"));
        assert!(xml.contains("<Annotations>"));
    }

    #[test]
    fn f64_round_trips_in_xs_double_syntax() {
        assert_eq!(format_f64(f64::NAN), "NaN");
        assert_eq!(format_f64(f64::INFINITY), "INF");
        assert_eq!(format_f64(f64::NEG_INFINITY), "-INF");
        assert_eq!(format_f64(0.1), "0.1");
        assert_eq!(format_f64(1.0), "1");
        assert_eq!(format_f64(-273.15), "-273.15");
        assert_eq!(format_f64(1e-10), "1e-10");
        assert_eq!(format_f64(1e300), "1e300");
        for x in [
            0.0,
            -0.0,
            0.1,
            1.0 / 3.0,
            2.0f64.sqrt(),
            1e-7,
            9.999_999_999_999_998e-8,
            1e21,
            123_456_789_012_345_680_000.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            f64::EPSILON,
        ] {
            let s = format_f64(x);
            // xs:double lexical space: optional sign, digits, optional fraction and exponent.
            assert!(s.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e')), "{s}");
            let back: f64 = s.parse().unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x} -> {s}");
        }
    }

    /// Python with lxml and FMPy (which ships the FMI 2.0 schema): `FMI_PYTHON` or the
    /// repository's `.venv`.
    fn python() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("FMI_PYTHON") {
            return Some(PathBuf::from(p));
        }
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
        venv.exists().then_some(venv)
    }

    const XSD_CHECK: &str = r#"
import os, sys
try:
    import fmpy
    from lxml import etree
except ImportError as e:
    print("missing python module:", e)
    sys.exit(3)
xsd = os.path.join(os.path.dirname(fmpy.__file__), "schema", "fmi2", "fmi2ModelDescription.xsd")
schema = etree.XMLSchema(etree.parse(xsd))
ok = True
for path in sys.argv[1:]:
    if not schema.validate(etree.parse(path)):
        ok = False
        print(path, schema.error_log)
sys.exit(0 if ok else 1)
"#;

    #[test]
    fn output_validates_against_the_official_schema() {
        let Some(python) = python() else {
            eprintln!(
                "SKIPPED: no Python for the XSD check (set FMI_PYTHON or create .venv with \
                 lxml and fmpy)"
            );
            return;
        };
        let dir = std::env::temp_dir().join(format!("md-xsd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = Vec::new();
        for (name, md) in [("rich", rich()), ("minimal", minimal())] {
            let path = dir.join(format!("{name}.xml"));
            std::fs::write(&path, to_xml(&md)).unwrap();
            files.push(path);
        }
        let out = Command::new(&python).arg("-c").arg(XSD_CHECK).args(&files).output();
        let _ = std::fs::remove_dir_all(&dir);
        let out = out.unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
        let text = String::from_utf8_lossy(&out.stdout);
        if out.status.code() == Some(3) {
            eprintln!("SKIPPED: {} cannot do the XSD check: {text}", python.display());
            return;
        }
        assert!(out.status.success(), "XSD validation failed:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    }
}
