//! FMI 3.0 `modelDescription.xml` → the same [`ModelDescription`] data model, plus what 3.0
//! adds ([`Fmi3`]): the 3.0 type of every variable and the features an importer must know of
//! before it instantiates (clocks, event mode, scheduled execution, arrays).
//!
//! Mapping: `Float64`/`Float32` → `Real`; `Int8`…`UInt64` → `Integer` (values travel through
//! the 3.0 function of the variable's type; bounds outside the 32-bit range are left
//! out); `Boolean`, `String` (`<Start value>`), `Enumeration` as in 2.0; `<…Type>` type
//! definitions likewise; `instantiationToken` → `guid`; `ModelStructure` value references →
//! 1-based indices. Scalar `Binary` variables are [`VariableKind::Binary`] (`mimeType`,
//! `maxSize`, the `<Start value>` xs:hexBinary decoded). `Clock` variables and arrays of String or
//! Binary are not in `model_variables`: they are listed in [`Fmi3::unsupported`] (Clock) or
//! [`Fmi3::skipped`] (those arrays), each with its line. Structural parameters are parameters of
//! `model_variables` (and [`Fmi3::structural`]); the arrays they size have the elements their
//! values give (`structural.rs`). The same line-and-column errors as the 2.0 reader (a malformed
//! hex start value too).

use super::*;
#[path = "structural.rs"]
mod structural;
use structural::Scan;
pub use structural::{from_str3_configured, ResizedArray, Structural, MAX_STRUCTURAL_VALUE};

/// What a 3.0 description adds to the [`ModelDescription`] it is read into.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fmi3 {
    /// The 3.0 type of each variable of `model_variables`, in the same order.
    pub types: Vec<crate::Type3>,
    /// `<CoSimulation hasEventMode>`.
    pub has_event_mode: bool,
    /// `<CoSimulation mightReturnEarlyFromDoStep>`.
    pub might_return_early: bool,
    /// `<CoSimulation providesIntermediateUpdate>`.
    pub provides_intermediate_update: bool,
    /// Features an importer without event mode and clocks cannot run, one line each, naming the
    /// feature and where it is (`clocks: <Clock name="tick"> (line 12)`…).
    pub unsupported: Vec<String>,
    /// Variables read but left out of `model_variables` (arrays of String or Binary or sized by
    /// a structural parameter), one line each.
    pub skipped: Vec<String>,
    /// The elements of fixed-size arrays, each a scalar `name[i]` (`name[i,j]`…, 1-based,
    /// row-major) in `model_variables` with a value reference of its own (from
    /// [`ARRAY_ELEMENT_VR_BASE`] on): which array and which element it is.
    pub elements: Vec<ArrayElement>,
    /// The structural parameters (`causality="structuralParameter"`, integer types) with the
    /// values this description was read with (their start values, or those given to
    /// [`from_str3_configured`]); each is also a parameter in `model_variables`.
    pub structural: Vec<Structural>,
    /// The arrays sized by structural parameters, with the shape they were read with.
    pub resized: Vec<ResizedArray>,
    /// Problems of the structural parameters' values (a size outside its bounds, too many
    /// elements): [`from_str3_configured`] refuses a configuration that has any, naming each.
    pub configuration: Vec<String>,
    /// The `<Clock>` variables (not in `model_variables`), in document order.
    pub clocks: Vec<Clock3>,
    /// The variables with a `clocks` attribute: name, line, the value references it names.
    pub clocked: Vec<(String, u32, Vec<u32>)>,
    /// `<ScheduledExecution modelIdentifier>`.
    pub scheduled_execution: Option<String>,
    /// The description has a `<CoSimulation>` element.
    pub has_co_simulation: bool,
    /// Reading state: the variables by value reference, the integer constants, the sizes.
    scan: Scan,
}

/// One `<Clock>` variable (FMI 3.0 §2.4.7.1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clock3 {
    /// `name`.
    pub name: String,
    /// `valueReference`.
    pub vr: u32,
    /// `causality="input"` (else output or local).
    pub input: bool,
    /// `intervalVariability`: constant, fixed, tunable, changing, countdown or triggered.
    pub interval_variability: String,
    /// `intervalDecimal` (s).
    pub interval_decimal: Option<f64>,
    /// `shiftDecimal` (s, default 0).
    pub shift_decimal: f64,
    /// `priority` (Scheduled Execution: the smaller, the earlier at the same tick).
    pub priority: Option<u32>,
    /// `supportsFraction`: `fmi3GetIntervalFraction`/`fmi3GetShiftFraction` answer for it.
    pub supports_fraction: bool,
    /// `resolution` (ticks per second of `intervalCounter` and `shiftCounter`).
    pub resolution: Option<u64>,
    /// `intervalCounter`: the interval is intervalCounter / resolution s.
    pub interval_counter: Option<u64>,
    /// `shiftCounter` (default 0): the shift is shiftCounter / resolution s.
    pub shift_counter: u64,
    /// The line of its element.
    pub line: u32,
}

/// The value references given to array elements start here (FMUs use small references).
pub const ARRAY_ELEMENT_VR_BASE: u32 = 0x8000_0000;

/// The most elements an array variable may have to be addressed element by element.
pub const MAX_ARRAY_ELEMENTS: usize = 100_000;

/// One element of an array variable, addressed by the master as a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayElement {
    /// The element's own value reference (in `model_variables`).
    pub vr: u32,
    /// The array's value reference in the FMU.
    pub array_vr: u32,
    /// Position in the serialized (row-major) array.
    pub index: usize,
    /// Number of elements of the array.
    pub len: usize,
}

/// Reads an FMI 3.0 `modelDescription.xml` (`fmiVersion` 3.x); arrays sized by structural
/// parameters have the sizes of the parameters' start values ([`from_str3_configured`] for
/// others).
pub fn from_str3(xml: &str) -> Result<(ModelDescription, Fmi3), ReadError> {
    let first = read3(xml, Scan::default())?;
    if !first.1.scan.pending {
        return Ok(first);
    }
    let sizes = structural::sizes(&first.1, &[]);
    read3(xml, first.1.scan.with_sizes(sizes))
}

/// One reading of the description, with what an earlier one found (`scan`).
fn read3(xml: &str, scan: Scan) -> Result<(ModelDescription, Fmi3), ReadError> {
    let src = xml.strip_prefix('\u{feff}').unwrap_or(xml);
    let mut p = Parser::new(src);
    let root = match p.next()? {
        Ev::Elem(e) => e,
        Ev::End(at) => return Err(p.xml_error_at(at, "end tag without a start tag".into())),
        Ev::Eof => return Err(p.xml_error_at(src.len(), "no root element".into())),
    };
    let out = p.model_description3(root, scan)?;
    match p.next()? {
        Ev::Elem(e) => {
            Err(p.xml_error_at_pos(e.pos, format!("element <{}> after the end of the root element", e.name)))
        }
        Ev::End(at) => Err(p.xml_error_at(at, "end tag without a start tag".into())),
        Ev::Eof => Ok(out),
    }
}

fn parse_kind3(s: &str) -> Option<DependencyKind> {
    // 3.0 adds `independent` (the unknown does not depend on the known): taken as `dependent`,
    // the conservative reading for loop detection.
    if s == "independent" {
        return Some(DependencyKind::Dependent);
    }
    parse_kind(s)
}

fn parse_kind3_list(s: &str) -> Option<Vec<DependencyKind>> {
    s.split_ascii_whitespace().map(parse_kind3).collect()
}

/// An `i32` attribute of a 3.0 integer type, `None` when absent or outside the 32-bit range.
fn i32_in_range(e: &Elem, key: &str) -> Result<Option<i32>, ReadError> {
    let v = e.parse(key, INT, |s| s.trim().parse::<i128>().ok())?;
    Ok(v.and_then(|v| i32::try_from(v).ok()))
}

/// A ModelStructure entry as read: list (0 Output, 1 derivative, 2 InitialUnknown), value
/// reference, dependencies, their kinds, position.
type Unknown3 = (u8, u32, Option<Vec<u32>>, Option<Vec<DependencyKind>>, Pos);

const KIND3_LIST: &str =
    "a space-separated list of dependency kinds (independent, dependent, constant, fixed, tunable, discrete)";

impl Parser<'_> {
    fn model_description3(&mut self, e: Elem, scan: Scan) -> Result<(ModelDescription, Fmi3), ReadError> {
        if e.name != "fmiModelDescription" {
            return Err(ReadError::WrongRoot { line: e.pos.line, column: e.pos.column, found: e.name });
        }
        let version = e.req("fmiVersion")?;
        let version = version.trim().to_owned();
        if !version.starts_with("3.") {
            let pos = e.get("fmiVersion").map_or(e.pos, |(_, _, p)| *p);
            return Err(ReadError::UnsupportedVersion { line: pos.line, column: pos.column, version });
        }
        let mut md = ModelDescription {
            fmi_version: version,
            model_name: e.req("modelName")?,
            guid: e.req("instantiationToken")?,
            description: e.opt("description"),
            author: e.opt("author"),
            version: e.opt("version"),
            copyright: e.opt("copyright"),
            license: e.opt("license"),
            generation_tool: e.opt("generationTool"),
            generation_date_and_time: e.opt("generationDateAndTime"),
            variable_naming_convention: e
                .parse("variableNamingConvention", CONVENTION, NamingConvention::parse)?
                .unwrap_or_default(),
            ..ModelDescription::default()
        };
        let mut x = Fmi3 { scan, ..Fmi3::default() };
        // ModelStructure by value reference, resolved to indices once the variables are known.
        let mut structure: Vec<Unknown3> = Vec::new();
        // `<BinaryType name mimeType maxSize>`: what a Binary variable of that declaredType
        // inherits when it does not say itself.
        let mut binary_types: std::collections::HashMap<String, (Option<String>, Option<u32>)> =
            std::collections::HashMap::new();
        self.children(&e, |p, c| {
            match c.name.as_str() {
                "ModelExchange" => {
                    md.model_exchange = Some(ModelExchange {
                        model_identifier: c.req("modelIdentifier")?,
                        can_get_and_set_fmu_state: c.flag("canGetAndSetFMUState")?,
                        can_serialize_fmu_state: c.flag("canSerializeFMUState")?,
                    });
                    p.ignore(c)?;
                }
                "ScheduledExecution" => {
                    x.scheduled_execution = Some(c.req("modelIdentifier")?);
                    x.unsupported.push(format!(
                        "scheduled execution: <ScheduledExecution> (line {}) — cosim runs Co-Simulation",
                        c.pos.line
                    ));
                    p.ignore(c)?;
                }
                "CoSimulation" => {
                    md.co_simulation = Some(CoSimulation {
                        model_identifier: c.req("modelIdentifier")?,
                        needs_execution_tool: c.flag("needsExecutionTool")?,
                        can_handle_variable_communication_step_size: c
                            .flag("canHandleVariableCommunicationStepSize")?,
                        // FMI 3.0 has no fmi3SetInputDerivatives.
                        can_interpolate_inputs: false,
                        max_output_derivative_order: c.u32("maxOutputDerivativeOrder")?.unwrap_or(0),
                        can_run_asynchronuously: false,
                        can_be_instantiated_only_once_per_process: c.flag("canBeInstantiatedOnlyOncePerProcess")?,
                        can_not_use_memory_management_functions: true,
                        can_get_and_set_fmu_state: c.flag("canGetAndSetFMUState")?,
                        can_serialize_fmu_state: c.flag("canSerializeFMUState")?,
                        provides_directional_derivative: c.flag("providesDirectionalDerivatives")?,
                        source_files: Vec::new(),
                    });
                    x.has_event_mode = c.flag("hasEventMode")?;
                    x.has_co_simulation = true;
                    x.might_return_early = c.flag("mightReturnEarlyFromDoStep")?;
                    x.provides_intermediate_update = c.flag("providesIntermediateUpdate")?;
                    p.ignore(c)?;
                }
                "UnitDefinitions" => p.children(&c, |p, u| {
                    if u.name == "Unit" {
                        md.unit_definitions.push(p.unit(u)?);
                        Ok(())
                    } else {
                        p.ignore(u)
                    }
                })?,
                "TypeDefinitions" => p.children(&c, |p, t| {
                    if t.name == "BinaryType" {
                        binary_types.insert(t.req("name")?, (t.opt("mimeType"), t.u32("maxSize")?));
                    }
                    if let Some(ty) = p.type_definition3(t)? {
                        md.type_definitions.push(ty);
                    }
                    Ok(())
                })?,
                "LogCategories" => p.children(&c, |p, cat| {
                    if cat.name == "Category" {
                        md.log_categories
                            .push(LogCategory { name: cat.req("name")?, description: cat.opt("description") });
                    }
                    p.ignore(cat)
                })?,
                "DefaultExperiment" => {
                    md.default_experiment = Some(DefaultExperiment {
                        start_time: c.f64("startTime")?,
                        stop_time: c.f64("stopTime")?,
                        tolerance: c.f64("tolerance")?,
                        step_size: c.f64("stepSize")?,
                    });
                    p.ignore(c)?;
                }
                "ModelVariables" => p.children(&c, |p, v| {
                    let Some(ty) = crate::Type3::from_element(&v.name) else { return p.ignore(v) };
                    p.variable3(v, ty, &mut md, &mut x)
                })?,
                "ModelStructure" => p.children(&c, |p, u| {
                    let which = match u.name.as_str() {
                        "Output" => 0,
                        "ContinuousStateDerivative" => 1,
                        "InitialUnknown" => 2,
                        "EventIndicator" => {
                            // FMI 3.0 counts the event indicators by these elements (2.0's
                            // numberOfEventIndicators attribute).
                            let n = md.number_of_event_indicators.unwrap_or(0);
                            md.number_of_event_indicators = Some(n.saturating_add(1));
                            return p.ignore(u);
                        }
                        _ => return p.ignore(u),
                    };
                    structure.push((
                        which,
                        u.req_parse("valueReference", UINT, parse_u32)?,
                        u.parse("dependencies", UINT_LIST, parse_u32_list)?,
                        u.parse("dependenciesKind", KIND3_LIST, parse_kind3_list)?,
                        u.pos,
                    ));
                    p.ignore(u)
                })?,
                _ => p.ignore(c)?,
            }
            Ok(())
        })?;
        // Value references → 1-based indices (an array's reference → its elements' indices;
        // references of left-out variables are dropped).
        let mut index: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
        for (i, v) in md.model_variables.iter().enumerate() {
            let i = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let vr =
                x.elements.iter().find(|el| el.vr == v.value_reference).map_or(v.value_reference, |el| el.array_vr);
            index.entry(vr).or_default().push(i);
        }
        for (which, vr, deps, kinds, pos) in structure {
            let Some(unknowns) = index.get(&vr) else { continue };
            let (deps, kinds) = match (deps, kinds) {
                (Some(d), Some(k)) if d.len() == k.len() => {
                    let kept: Vec<(u32, DependencyKind)> = d
                        .iter()
                        .zip(k)
                        .flat_map(|(v, k)| index.get(v).into_iter().flatten().map(move |i| (*i, k)))
                        .collect();
                    (Some(kept.iter().map(|p| p.0).collect()), Some(kept.into_iter().map(|p| p.1).collect()))
                }
                (d, k) => (d.map(|d| d.iter().flat_map(|v| index.get(v).into_iter().flatten().copied()).collect()), k),
            };
            for i in unknowns {
                let u =
                    Unknown { index: *i, dependencies: deps.clone(), dependencies_kind: kinds.clone(), line: pos.line };
                match which {
                    0 => md.model_structure.outputs.push(u),
                    1 => md.model_structure.derivatives.push(u),
                    _ => md.model_structure.initial_unknowns.push(u),
                }
            }
        }
        for v in &mut md.model_variables {
            if let VariableKind::Binary { declared_type: Some(t), mime_type, max_size, .. } = &mut v.kind {
                if let Some((m, s)) = binary_types.get(t.as_str()) {
                    *mime_type = mime_type.take().or_else(|| m.clone());
                    *max_size = max_size.or(*s);
                }
            }
        }
        // `derivative` of a Float variable is a value reference in 3.0, an index in 2.0.
        for v in &mut md.model_variables {
            if let VariableKind::Real { derivative: Some(d), .. } = &mut v.kind {
                *d = index.get(d).and_then(|i| i.first()).copied().unwrap_or(0);
            }
        }
        Ok((md, x))
    }

    /// A `<Float64Type>`, `<Int32Type>`, `<EnumerationType>`… as a [`SimpleType`] (the element
    /// is consumed).
    fn type_definition3(&mut self, t: Elem) -> Result<Option<SimpleType>, ReadError> {
        let ty = t.name.strip_suffix("Type").and_then(crate::Type3::from_element);
        if ty != Some(crate::Type3::Enumeration) {
            let simple = ty.map(|ty| simple_type3(&t, ty)).transpose()?.flatten();
            self.ignore(t)?;
            return Ok(simple);
        }
        let quantity = t.opt("quantity");
        let mut items = Vec::new();
        self.children(&t, |p, item| {
            if item.name == "Item" {
                items.push(EnumerationItem {
                    name: item.req("name")?,
                    value: item.req_parse("value", INT, parse_i32)?,
                    description: item.opt("description"),
                });
            }
            p.ignore(item)
        })?;
        Ok(Some(SimpleType {
            name: t.req("name")?,
            description: t.opt("description"),
            kind: SimpleTypeKind::Enumeration { quantity, items },
        }))
    }
}

/// A non-enumeration type definition.
fn simple_type3(t: &Elem, ty: crate::Type3) -> Result<Option<SimpleType>, ReadError> {
    {
        let kind = match ty {
            crate::Type3::Float64 | crate::Type3::Float32 => SimpleTypeKind::Real(real_attributes(t)?),
            crate::Type3::Boolean => SimpleTypeKind::Boolean,
            crate::Type3::String => SimpleTypeKind::String,
            crate::Type3::Binary | crate::Type3::Clock | crate::Type3::Enumeration => return Ok(None),
            _ => SimpleTypeKind::Integer(IntegerAttributes {
                quantity: t.opt("quantity"),
                min: i32_in_range(t, "min")?,
                max: i32_in_range(t, "max")?,
            }),
        };
        Ok(Some(SimpleType { name: t.req("name")?, description: t.opt("description"), kind }))
    }
}

impl Parser<'_> {
    /// One `<Float64>`, `<Int8>`, … variable.
    fn variable3(
        &mut self,
        e: Elem,
        ty: crate::Type3,
        md: &mut ModelDescription,
        x: &mut Fmi3,
    ) -> Result<(), ReadError> {
        use crate::Type3 as T;
        let name = e.req("name")?;
        let value_reference = e.req_parse("valueReference", UINT, parse_u32)?;
        let mut causality = e.parse("causality", CAUSALITY_3, parse_causality3)?.unwrap_or(Some(Causality::Local));
        let mut variability = e.parse("variability", VARIABILITY, Variability::parse)?;
        let initial = e.parse("initial", INITIAL, Initial::parse)?;
        // Each <Dimension>: its fixed size, or why it has none.
        let mut dims: Vec<Result<usize, String>> = Vec::new();
        // A dimension that names no usable variable: the FMU is refused (`unsupported`).
        let mut refuse: Option<String> = None;
        // Whether a dimension follows a structural parameter.
        let mut resized = false;
        // Each dimension as written: its size, or the name of the variable it follows.
        let mut dim_names: Vec<String> = Vec::new();
        let mut string_start: Option<String> = None;
        // `<Start value>` of a Binary: the value and where it is (for the hex error).
        let mut binary_start: Option<(String, Pos)> = None;
        let mut annotations = Vec::new();
        self.children(&e, |p, c| {
            match c.name.as_str() {
                "Dimension" => dims.push({
                    dim_names.push(match (c.opt("start"), c.opt("valueReference")) {
                        (Some(v), _) => v.trim().to_owned(),
                        (None, Some(r)) => parse_u32(&r).and_then(|vr| x.scan.names.get(&vr).cloned()).unwrap_or(r),
                        (None, None) => String::new(),
                    });
                    match (c.opt("start"), c.opt("valueReference")) {
                        (Some(v), _) => v.trim().parse::<usize>().map_err(|_| {
                            format!(
                                "its <Dimension start=\"{v}\"> (line {}) is not a size (a whole number >= 0)",
                                c.pos.line
                            )
                        }),
                        (None, Some(r)) => {
                            resized = true;
                            match x.scan.size(&r, c.pos.line) {
                                Ok(size) => size,
                                Err(refused) => {
                                    refuse.get_or_insert(refused);
                                    Err(String::new())
                                }
                            }
                        }
                        (None, None) => {
                            Err(format!("its <Dimension> (line {}) has neither start nor valueReference", c.pos.line))
                        }
                    }
                }),
                "Start" => {
                    string_start = c.opt("value");
                    binary_start = c.get("value").map(|(_, v, pos)| (v.clone(), *pos));
                }
                "Annotations" => {
                    annotations.extend(p.tools(c)?);
                    return Ok(());
                }
                _ => {}
            }
            p.ignore(c)
        })?;
        let line = e.pos.line;
        if ty == T::Clock {
            x.unsupported.push(format!("clocks: <Clock name=\"{name}\"> (line {line})"));
            x.clocks.push(Clock3 {
                name,
                vr: value_reference,
                input: e.opt("causality").as_deref() == Some("input"),
                interval_variability: e.opt("intervalVariability").unwrap_or_else(|| "constant".into()),
                interval_decimal: e.f64("intervalDecimal")?,
                shift_decimal: e.f64("shiftDecimal")?.unwrap_or(0.0),
                priority: e.u32("priority")?,
                supports_fraction: e.flag("supportsFraction")?,
                resolution: e.parse("resolution", "an unsigned 64-bit integer", |v| v.trim().parse().ok())?,
                interval_counter: e
                    .parse("intervalCounter", "an unsigned 64-bit integer", |v| v.trim().parse().ok())?,
                shift_counter: e
                    .parse("shiftCounter", "an unsigned 64-bit integer", |v| v.trim().parse().ok())?
                    .unwrap_or(0),
                line,
            });
            return Ok(());
        }
        if let Some((_, clocks, _)) = e.get("clocks") {
            x.unsupported.push(format!("clocked variables: <{} name=\"{name}\" clocks=…> (line {line})", e.name));
            let refs = clocks.split_ascii_whitespace().map(|r| r.parse::<u32>().unwrap_or(u32::MAX)).collect();
            x.clocked.push((name.clone(), line, refs));
        }
        x.scan.names.entry(value_reference).or_insert_with(|| name.clone());
        if variability == Some(Variability::Constant) && ty.is_integer() {
            if let Some(v) = e.opt("start").and_then(|s| s.trim().parse::<i128>().ok()) {
                x.scan.constants.insert(value_reference, v);
            }
        }
        if causality.is_none() {
            if !ty.is_integer() || !dims.is_empty() {
                x.unsupported.push(format!(
                    "structural parameters of type {}{}: <{} name=\"{name}\" causality=\"structuralParameter\"> \
                     (line {line}) — cosim configures scalar integer structural parameters",
                    e.name,
                    if dims.is_empty() { "" } else { " arrays" },
                    e.name
                ));
                return Ok(());
            }
            x.structural.push(structural::Structural::read(&e, &name, value_reference, ty, line)?);
            // In the data model a parameter (set by the importer in configuration mode).
            causality = Some(Causality::Parameter);
            variability = variability.or(Some(Variability::Fixed));
        }
        if let Some(why) = refuse {
            x.unsupported.push(format!("array variable <{} name=\"{name}\"> (line {line}): {why}", e.name));
            return Ok(());
        }
        if resized && x.scan.sizes.is_none() {
            // First reading: the sizes are known once every structural parameter is.
            return Ok(());
        }
        if !dims.is_empty() {
            // The element count in checked arithmetic: the product of huge sizes must not wrap
            // around to a small number (issue 48 #6: 2^64-1 x (2^64-3) read as 3 elements).
            let sizes: Result<Vec<usize>, String> = dims.iter().cloned().collect();
            let len = sizes.as_ref().ok().map(|d| d.iter().try_fold(1usize, |a, &n| a.checked_mul(n)));
            let why = match (&sizes, len) {
                (Err(why), _) => Some(why.clone()),
                (_, Some(None)) => Some(format!(
                    "its dimensions {:?} give more elements than a usize holds (more than {MAX_ARRAY_ELEMENTS})",
                    sizes.as_ref().map(Vec::as_slice).unwrap_or_default()
                )),
                (_, Some(Some(0))) => Some("it has no elements".to_owned()),
                (_, Some(Some(n))) if n > MAX_ARRAY_ELEMENTS => {
                    Some(format!("it has {n} elements (more than {MAX_ARRAY_ELEMENTS})"))
                }
                _ if matches!(ty, T::String | T::Binary) => {
                    Some("String and Binary arrays are not supported".to_owned())
                }
                _ => None,
            };
            if let Some(why) = why {
                // A size that follows the structural parameters' values is a problem of this
                // configuration (refused when configured), not of the FMU.
                if resized && !matches!(ty, T::String | T::Binary) && len != Some(Some(0)) {
                    x.configuration.push(format!("array variable <{} name=\"{name}\"> (line {line}): {why}", e.name));
                    return Ok(());
                }
                x.skipped.push(format!("array variable <{} name=\"{name}\"> (line {line}): {why}", e.name));
                return Ok(());
            }
            let (sizes, len) = (sizes.unwrap_or_default(), len.flatten().unwrap_or(0));
            if resized {
                x.resized.push(ResizedArray {
                    name: name.clone(),
                    dims: dim_names.clone(),
                    shape: sizes.clone(),
                    line,
                });
            }
            let starts: Vec<String> =
                e.opt("start").map(|s| s.split_ascii_whitespace().map(str::to_owned).collect()).unwrap_or_default();
            for k in 0..len {
                // Row-major, 1-based indices.
                let mut rest = k;
                let mut idx = vec![0usize; sizes.len()];
                for (d, n) in sizes.iter().enumerate().rev() {
                    idx[d] = rest % n + 1;
                    rest /= n;
                }
                let idx: Vec<String> = idx.iter().map(ToString::to_string).collect();
                let start = starts.get(k).or(if starts.len() == 1 { starts.first() } else { None }).cloned();
                let vr = ARRAY_ELEMENT_VR_BASE.saturating_add(u32::try_from(x.elements.len()).unwrap_or(u32::MAX));
                x.elements.push(ArrayElement { vr, array_vr: value_reference, index: k, len });
                let kind = kind3(&e, ty, start.as_deref())?;
                md.model_variables.push(ScalarVariable {
                    name: format!("{name}[{}]", idx.join(",")),
                    value_reference: vr,
                    description: e.opt("description"),
                    causality: causality.unwrap_or_default(),
                    variability: variability.unwrap_or(default_variability(ty)),
                    initial,
                    can_handle_multiple_set_per_time_instant: None,
                    kind,
                    annotations: Vec::new(),
                    line,
                });
                x.types.push(ty);
            }
            return Ok(());
        }
        let start = if ty == T::String { string_start.or_else(|| e.opt("start")) } else { e.opt("start") };
        let kind = if ty == T::Binary { binary_kind(&e, binary_start)? } else { kind3(&e, ty, start.as_deref())? };
        let causality = causality.unwrap_or_default();
        // 3.0's default variability is continuous for Float variables, discrete for the others.
        let variability = variability.unwrap_or(default_variability(ty));
        md.model_variables.push(ScalarVariable {
            name,
            value_reference,
            description: e.opt("description"),
            causality,
            variability,
            initial,
            can_handle_multiple_set_per_time_instant: e.bool("canHandleMultipleSetPerTimeInstant")?,
            kind,
            annotations,
            line,
        });
        x.types.push(ty);
        Ok(())
    }
}

/// What a Binary's `<Start value>` must be.
const HEX: &str = "xs:hexBinary (an even number of hexadecimal digits, two per byte)";

/// A scalar `<Binary>`: `mimeType`, `maxSize` and the `<Start value>` (xs:hexBinary) decoded; a
/// malformed start value is an error at the `value` attribute's line and column.
fn binary_kind(e: &Elem, start: Option<(String, Pos)>) -> Result<VariableKind, ReadError> {
    let start = match start {
        None => None,
        Some((text, pos)) => Some(crate::from_hex(&text).map_err(|_| ReadError::InvalidAttribute {
            line: pos.line,
            column: pos.column,
            element: "Start".into(),
            name: None,
            attribute: "value".into(),
            value: text.clone(),
            expected: HEX,
        })?),
    };
    Ok(VariableKind::Binary {
        declared_type: e.opt("declaredType"),
        mime_type: e.opt("mimeType"),
        max_size: e.u32("maxSize")?,
        start,
    })
}

/// 3.0's default variability: continuous for Float variables, discrete for the others.
fn default_variability(ty: crate::Type3) -> Variability {
    if matches!(ty, crate::Type3::Float64 | crate::Type3::Float32) {
        Variability::Continuous
    } else {
        Variability::Discrete
    }
}

/// The type element of a scalar (or array element) of 3.0 type `ty` with start value `start`.
fn kind3(e: &Elem, ty: crate::Type3, start: Option<&str>) -> Result<VariableKind, ReadError> {
    use crate::Type3 as T;
    let bad = |expected: &'static str| {
        let (line, column) = e.get("start").map_or((e.pos.line, e.pos.column), |(_, _, p)| (p.line, p.column));
        ReadError::InvalidAttribute {
            line,
            column,
            element: e.name.clone(),
            name: e.name_attr(),
            attribute: "start".into(),
            value: start.unwrap_or_default().to_owned(),
            expected,
        }
    };
    let int = |s: Option<&str>| -> Result<Option<i32>, ReadError> {
        match s {
            None => Ok(None),
            Some(s) => s.trim().parse::<i128>().map(|v| i32::try_from(v).ok()).map_err(|_| bad(INT)),
        }
    };
    let declared_type = e.opt("declaredType");
    Ok(match ty {
        T::Float64 | T::Float32 => VariableKind::Real {
            declared_type,
            attrs: real_attributes(e)?,
            start: start.map(|s| parse_f64(s).ok_or_else(|| bad(DOUBLE))).transpose()?,
            derivative: e.u32("derivative")?,
            reinit: e.bool("reinit")?,
        },
        T::Boolean => VariableKind::Boolean {
            declared_type,
            start: start.map(|s| parse_bool(s).ok_or_else(|| bad(BOOL))).transpose()?,
        },
        T::String => VariableKind::String { declared_type, start: start.map(str::to_owned) },
        T::Enumeration => VariableKind::Enumeration {
            declared_type: e.req("declaredType")?,
            quantity: e.opt("quantity"),
            min: i32_in_range(e, "min")?,
            max: i32_in_range(e, "max")?,
            start: int(start)?,
        },
        _ => VariableKind::Integer {
            declared_type,
            attrs: IntegerAttributes {
                quantity: e.opt("quantity"),
                min: i32_in_range(e, "min")?,
                max: i32_in_range(e, "max")?,
            },
            // Exact: a UInt64 start of 5e9 is a start value, not none (issue 48).
            start: start.map(|s| s.trim().parse::<i128>().map_err(|_| bad(INT))).transpose()?,
        },
    })
}

const CAUSALITY_3: &str =
    "a causality (parameter, calculatedParameter, structuralParameter, input, output, local or independent)";

/// 3.0 causalities: `Some(None)` for `structuralParameter` (refused by the importer).
fn parse_causality3(s: &str) -> Option<Option<Causality>> {
    if s.trim() == "structuralParameter" {
        return Some(None);
    }
    Causality::parse(s).map(Some)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{tok}">
  <CoSimulation modelIdentifier="m" canGetAndSetFMUState="true" mightReturnEarlyFromDoStep="true"/>
  <TypeDefinitions>
    <Float64Type name="Pressure" unit="Pa"/>
    <EnumerationType name="Mode"><Item name="a" value="1"/><Item name="b" value="2"/></EnumerationType>
    <BinaryType name="Frame" mimeType="application/x-frame" maxSize="64"/>
  </TypeDefinitions>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="p" valueReference="5" causality="output" declaredType="Pressure"/>
    <Float32 name="u" valueReference="6" causality="input" start="1.5"/>
    <Int64 name="n" valueReference="7" causality="output" variability="discrete"/>
    <UInt64 name="big" valueReference="8" causality="parameter" variability="fixed" start="18446744073709551615"/>
    <String name="s" valueReference="9" causality="parameter" variability="fixed"><Start value="hi"/></String>
    <Enumeration name="mode" valueReference="10" causality="parameter" variability="fixed" declaredType="Mode" start="2"/>
    <Float64 name="arr" valueReference="11" causality="output" start="1 2 3"><Dimension start="3"/></Float64>
    <Binary name="blob" valueReference="12" causality="output"/>
    <Binary name="frame" valueReference="14" causality="output" declaredType="Frame"/>
    <Binary name="small_frame" valueReference="15" causality="output" declaredType="Frame" maxSize="8"/>
    <Binary name="key" valueReference="13" causality="parameter" variability="fixed" mimeType="application/x-key" maxSize="4"><Start value="00Ff7a"/></Binary>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="5" dependencies="6" dependenciesKind="dependent"/>
    <Output valueReference="7"/>
    <Output valueReference="11"/>
    <InitialUnknown valueReference="5" dependencies="6"/>
  </ModelStructure>
</fmiModelDescription>"#;

    #[test]
    fn a_3_0_description_reads_into_the_data_model_with_its_types() {
        let (md, x) = from_str3(XML).unwrap();
        assert_eq!(md.fmi_version, "3.0");
        assert_eq!(md.guid, "{tok}");
        let names: Vec<&str> = md.model_variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "time",
                "p",
                "u",
                "n",
                "big",
                "s",
                "mode",
                "arr[1]",
                "arr[2]",
                "arr[3]",
                "blob",
                "frame",
                "small_frame",
                "key"
            ]
        );
        use crate::Type3 as T;
        assert_eq!(
            x.types,
            [
                T::Float64,
                T::Float64,
                T::Float32,
                T::Int64,
                T::UInt64,
                T::String,
                T::Enumeration,
                T::Float64,
                T::Float64,
                T::Float64,
                T::Binary,
                T::Binary,
                T::Binary,
                T::Binary
            ]
        );
        assert_eq!(x.elements[2], ArrayElement { vr: ARRAY_ELEMENT_VR_BASE + 2, array_vr: 11, index: 2, len: 3 });
        assert_eq!(md.variable("arr[3]").unwrap().value_reference, ARRAY_ELEMENT_VR_BASE + 2);
        // An output array lists each element in ModelStructure.
        assert_eq!(md.model_structure.outputs.iter().map(|u| u.index).collect::<Vec<_>>(), [2, 4, 8, 9, 10]);
        assert!(x.might_return_early && !x.has_event_mode);
        assert!(md.co_simulation.as_ref().unwrap().can_get_and_set_fmu_state);
        assert_eq!(
            md.variable("s").unwrap().kind,
            VariableKind::String { declared_type: None, start: Some("hi".into()) }
        );
        // A start outside the 32-bit range is exact (issue 48: 5e9 was "no start value").
        assert!(matches!(
            md.variable("big").unwrap().kind,
            VariableKind::Integer { start: Some(18_446_744_073_709_551_615), .. }
        ));
        assert_eq!(md.variable("n").unwrap().variability, Variability::Discrete);
        // ModelStructure by value reference → indices.
        let out = &md.model_structure.outputs[0];
        assert_eq!((out.index, out.dependencies.clone()), (2, Some(vec![3])));
        assert!(x.skipped.is_empty(), "{:?}", x.skipped);
        // Binary: mimeType, maxSize and the hex start decoded (either case).
        assert_eq!(
            md.variable("key").unwrap().kind,
            VariableKind::Binary {
                declared_type: None,
                mime_type: Some("application/x-key".into()),
                max_size: Some(4),
                start: Some(vec![0x00, 0xff, 0x7a])
            }
        );
        assert_eq!(md.variable("key").unwrap().variability, Variability::Fixed);
        // mimeType and maxSize from the <BinaryType>, unless the variable gives its own.
        let binary = |name: &str| match &md.variable(name).unwrap().kind {
            VariableKind::Binary { mime_type, max_size, .. } => (mime_type.clone(), *max_size),
            k => panic!("{k:?}"),
        };
        assert_eq!(binary("frame"), (Some("application/x-frame".into()), Some(64)));
        assert_eq!(binary("small_frame"), (Some("application/x-frame".into()), Some(8)));
        assert_eq!(
            md.variable("blob").unwrap().kind,
            VariableKind::Binary { declared_type: None, mime_type: None, max_size: None, start: None }
        );
        assert_eq!(md.variable("blob").unwrap().variability, Variability::Discrete, "3.0's default for non-Float");
        assert!(matches!(md.variable("arr[2]").unwrap().kind, VariableKind::Real { start: Some(2.0), .. }));
        assert!(x.unsupported.is_empty());
        assert_eq!(md.simple_type("Pressure").map(|t| t.name.as_str()), Some("Pressure"));
    }

    #[test]
    fn binary_variables_survive_writing_as_3_0_and_reading_back() {
        let (md, x) = from_str3(XML).unwrap();
        let _ = x;
        let again = from_str3(&crate::to_xml3(&md, |_| false)).unwrap().0;
        for name in ["blob", "key"] {
            assert_eq!(again.variable(name).unwrap().kind, md.variable(name).unwrap().kind, "{name}");
        }
    }

    #[test]
    fn a_malformed_binary_start_gives_the_line_and_column_of_its_value() {
        let line = XML.lines().position(|l| l.contains("name=\"key\"")).unwrap() + 1;
        let column = XML.lines().nth(line - 1).unwrap().find("value=\"00Ff7a\"").unwrap() + 1;
        for (bad, why) in [("00Fg7a", "'g'"), ("0ff", "odd")] {
            let xml = XML.replace("00Ff7a", bad);
            let e = from_str3(&xml).unwrap_err();
            assert_eq!((e.line() as usize, e.column() as usize), (line, column), "{e}");
            let m = e.to_string();
            assert!(m.contains(&format!("<Start>: attribute value=\"{bad}\" is not xs:hexBinary")), "{m} ({why})");
        }
    }

    #[test]
    fn clocks_and_scheduled_execution_are_listed_as_unsupported() {
        let xml = XML
            .replace(
                "<Binary name",
                "<Clock name=\"tick\" valueReference=\"20\" causality=\"input\"/>\n    <Binary name",
            )
            .replace(
                "<ModelVariables>",
                "<ModelVariables>\n    <Float64 name=\"q\" valueReference=\"21\" clocks=\"20\"/>",
            )
            .replace("<TypeDefinitions>", "<ScheduledExecution modelIdentifier=\"m\"/>\n  <TypeDefinitions>");
        let (_, x) = from_str3(&xml).unwrap();
        let all = x.unsupported.join("\n");
        assert!(all.contains("clocks: <Clock name=\"tick\">"), "{all}");
        assert!(all.contains("clocked variables: <Float64 name=\"q\""), "{all}");
        assert!(all.contains("scheduled execution"), "{all}");
    }

    /// issue 48 #6: the element count of an array is the product of its dimensions in checked
    /// arithmetic; sizes whose product wraps around to a few elements (2^64-1 x (2^64-3) = 3 and
    /// 6148914691236517206 x 3 = 2 in wrapping arithmetic) are refused, not read as small arrays.
    #[test]
    fn array_sizes_that_overflow_are_refused_not_wrapped() {
        let with = |dims: &str| {
            let xml = XML.replace("<Dimension start=\"3\"/>", dims).replace("start=\"1 2 3\"", "");
            from_str3(&xml).unwrap()
        };
        for dims in [
            "<Dimension start=\"18446744073709551615\"/><Dimension start=\"18446744073709551613\"/>",
            "<Dimension start=\"6148914691236517206\"/><Dimension start=\"3\"/>",
        ] {
            let (md, x) = with(dims);
            assert!(!md.model_variables.iter().any(|v| v.name.starts_with("arr[")), "{dims}");
            let all = x.skipped.join("\n");
            assert!(all.contains("name=\"arr\"") && all.contains("more elements than a usize holds"), "{all}");
        }
        let (_, x) = with("<Dimension start=\"1000\"/><Dimension start=\"1000\"/>");
        assert!(x.skipped.join("\n").contains("it has 1000000 elements (more than 100000)"), "{:?}", x.skipped);
        // a negative size is named as such, not taken for a structural parameter
        let (_, x) = with("<Dimension start=\"-1\"/>");
        let all = x.skipped.join("\n");
        assert!(all.contains("<Dimension start=\"-1\">") && all.contains("is not a size"), "{all}");
        // a size that follows an output (not a structural parameter): the FMU is refused
        let (_, x) = with("<Dimension valueReference=\"7\"/>");
        assert!(x.unsupported.join("\n").contains("names n, which is neither a structural parameter"), "{x:?}");
        // a fixed 2 x 2 array still reads element by element
        let (md, _) = with("<Dimension start=\"2\"/><Dimension start=\"2\"/>");
        let names: Vec<&str> =
            md.model_variables.iter().map(|v| v.name.as_str()).filter(|n| n.starts_with("arr[")).collect();
        assert_eq!(names, ["arr[1,1]", "arr[1,2]", "arr[2,1]", "arr[2,2]"]);
    }

    #[test]
    fn malformed_3_0_descriptions_give_line_and_column() {
        let bad = XML.replace("valueReference=\"7\"", "valueReference=\"seven\"");
        let e = from_str3(&bad).unwrap_err();
        assert_eq!((e.line(), e.column()), (13, 21), "{e}");
        assert!(e.to_string().contains("valueReference=\"seven\" is not an unsigned integer"), "{e}");
        let unclosed = XML.replace("</ModelVariables>", "");
        let e = from_str3(&unclosed).unwrap_err();
        assert!(e.line() > 1 && e.to_string().contains("malformed XML"), "{e}");
        let missing = XML.replace(" instantiationToken=\"{tok}\"", "");
        let e = from_str3(&missing).unwrap_err();
        assert_eq!((e.line(), e.column()), (2, 1), "{e}");
        assert!(e.to_string().contains("missing required attribute instantiationToken"), "{e}");
    }
}
