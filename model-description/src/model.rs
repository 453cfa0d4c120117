//! The typed FMI 2.0 model description (FMI 2.0.4 standard, §2.2).
//!
//! Every element and attribute of `fmi2ModelDescription.xsd` that an exporter or importer of
//! Co-Simulation FMUs needs has a field here. Optional attributes are `Option`s so that the writer
//! emits exactly what was given and the reader keeps "absent" distinct from "default".

use std::fmt;

/// `<fmiModelDescription>`: the root element.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelDescription {
    /// `fmiVersion`, "2.0" for every FMU this crate writes.
    pub fmi_version: String,
    /// `modelName`.
    pub model_name: String,
    /// `guid`: fingerprint of the description, checked by `fmi2Instantiate`.
    pub guid: String,
    /// `description`.
    pub description: Option<String>,
    /// `author`.
    pub author: Option<String>,
    /// `version` of the model.
    pub version: Option<String>,
    /// `copyright`.
    pub copyright: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `generationTool`.
    pub generation_tool: Option<String>,
    /// `generationDateAndTime` (xs:dateTime, kept as text).
    pub generation_date_and_time: Option<String>,
    /// `variableNamingConvention` (default `flat`).
    pub variable_naming_convention: NamingConvention,
    /// `numberOfEventIndicators`.
    pub number_of_event_indicators: Option<u32>,
    /// `<ModelExchange>`: presence and identifier (our Model Exchange FMUs write no other attribute).
    pub model_exchange: Option<ModelExchange>,
    /// `<CoSimulation>`.
    pub co_simulation: Option<CoSimulation>,
    /// `<UnitDefinitions>`.
    pub unit_definitions: Vec<Unit>,
    /// `<TypeDefinitions>`.
    pub type_definitions: Vec<SimpleType>,
    /// `<LogCategories>`.
    pub log_categories: Vec<LogCategory>,
    /// `<DefaultExperiment>`.
    pub default_experiment: Option<DefaultExperiment>,
    /// `<VendorAnnotations>`: each `<Tool>` kept verbatim, not interpreted.
    pub vendor_annotations: Vec<ToolAnnotation>,
    /// `<ModelVariables>`, in document order; the 1-based position is the variable's *index*.
    pub model_variables: Vec<ScalarVariable>,
    /// `<ModelStructure>`.
    pub model_structure: ModelStructure,
}

/// `variableNamingConvention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NamingConvention {
    /// Any name without CR, LF or TAB.
    #[default]
    Flat,
    /// Names follow the EBNF of FMI 2.0 §2.2.9 (`a.b[1]`, `der(x)`, `'quoted name'`).
    Structured,
}

impl NamingConvention {
    /// The XML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Structured => "structured",
        }
    }
}

/// `<ModelExchange>` (read and written: its identifier and the FMU-state flags; the standard's
/// defaults for the rest).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelExchange {
    /// `modelIdentifier`.
    pub model_identifier: String,
    /// `canGetAndSetFMUstate` (FMI 3.0: `canGetAndSetFMUState`).
    pub can_get_and_set_fmu_state: bool,
    /// `canSerializeFMUstate` (FMI 3.0: `canSerializeFMUState`).
    pub can_serialize_fmu_state: bool,
}

/// `<CoSimulation>` capability flags (FMI 2.0 §4.3.1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CoSimulation {
    /// `modelIdentifier`: the binary's file name and symbol prefix.
    pub model_identifier: String,
    /// `needsExecutionTool`.
    pub needs_execution_tool: bool,
    /// `canHandleVariableCommunicationStepSize`.
    pub can_handle_variable_communication_step_size: bool,
    /// `canInterpolateInputs`.
    pub can_interpolate_inputs: bool,
    /// `maxOutputDerivativeOrder`.
    pub max_output_derivative_order: u32,
    /// `canRunAsynchronuously` (sic, the standard's spelling).
    pub can_run_asynchronuously: bool,
    /// `canBeInstantiatedOnlyOncePerProcess`.
    pub can_be_instantiated_only_once_per_process: bool,
    /// `canNotUseMemoryManagementFunctions`.
    pub can_not_use_memory_management_functions: bool,
    /// `canGetAndSetFMUstate`.
    pub can_get_and_set_fmu_state: bool,
    /// `canSerializeFMUstate`.
    pub can_serialize_fmu_state: bool,
    /// `providesDirectionalDerivative`.
    pub provides_directional_derivative: bool,
    /// `<SourceFiles><File name=…>`.
    pub source_files: Vec<String>,
}

/// `<Unit>` with its optional `<BaseUnit>` and `<DisplayUnit>`s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unit {
    /// `name`, e.g. `"N.s/m"`.
    pub name: String,
    /// `<BaseUnit>`.
    pub base_unit: Option<BaseUnit>,
    /// `<DisplayUnit>`s.
    pub display_units: Vec<DisplayUnit>,
}

/// `<BaseUnit>`: exponents of the SI base units, value = factor·base + offset.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BaseUnit {
    /// Exponent of kilogram.
    pub kg: i32,
    /// Exponent of metre.
    pub m: i32,
    /// Exponent of second.
    pub s: i32,
    /// Exponent of ampere.
    pub a: i32,
    /// Exponent of kelvin.
    pub k: i32,
    /// Exponent of mole.
    pub mol: i32,
    /// Exponent of candela.
    pub cd: i32,
    /// Exponent of radian.
    pub rad: i32,
    /// `factor` (default 1).
    pub factor: f64,
    /// `offset` (default 0).
    pub offset: f64,
}

impl BaseUnit {
    /// A base unit with the given SI exponents `[kg, m, s, A, K, mol, cd, rad]`, factor 1, offset 0.
    pub fn si(exp: [i32; 8]) -> Self {
        let [kg, m, s, a, k, mol, cd, rad] = exp;
        Self { kg, m, s, a, k, mol, cd, rad, factor: 1.0, offset: 0.0 }
    }
}

/// `<DisplayUnit>`.
#[derive(Debug, Clone, PartialEq)]
pub struct DisplayUnit {
    /// `name`.
    pub name: String,
    /// `factor` (default 1).
    pub factor: f64,
    /// `offset` (default 0).
    pub offset: f64,
}

/// `<SimpleType>` in `<TypeDefinitions>`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleType {
    /// `name`, referenced by `declaredType`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// The type and its attributes.
    pub kind: SimpleTypeKind,
}

/// The element inside `<SimpleType>`.
#[derive(Debug, Clone, PartialEq)]
pub enum SimpleTypeKind {
    /// `<Real>`.
    Real(RealAttributes),
    /// `<Integer>`.
    Integer(IntegerAttributes),
    /// `<Boolean>`.
    Boolean,
    /// `<String>`.
    String,
    /// `<Enumeration>` with its items.
    Enumeration {
        /// `quantity`.
        quantity: Option<String>,
        /// `<Item>`s.
        items: Vec<EnumerationItem>,
    },
}

/// `<Item>` of an enumeration type.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumerationItem {
    /// `name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// `description`.
    pub description: Option<String>,
}

/// Attributes shared by Real type definitions and Real variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RealAttributes {
    /// `quantity`.
    pub quantity: Option<String>,
    /// `unit`.
    pub unit: Option<String>,
    /// `displayUnit`.
    pub display_unit: Option<String>,
    /// `relativeQuantity`.
    pub relative_quantity: Option<bool>,
    /// `min`.
    pub min: Option<f64>,
    /// `max`.
    pub max: Option<f64>,
    /// `nominal`.
    pub nominal: Option<f64>,
    /// `unbounded`.
    pub unbounded: Option<bool>,
}

/// Attributes shared by Integer type definitions and Integer variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IntegerAttributes {
    /// `quantity`.
    pub quantity: Option<String>,
    /// `min`.
    pub min: Option<i32>,
    /// `max`.
    pub max: Option<i32>,
}

/// `<Category>` of `<LogCategories>`.
#[derive(Debug, Clone, PartialEq)]
pub struct LogCategory {
    /// `name`, e.g. `logStatusError`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
}

/// `<DefaultExperiment>`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DefaultExperiment {
    /// `startTime` in s.
    pub start_time: Option<f64>,
    /// `stopTime` in s.
    pub stop_time: Option<f64>,
    /// `tolerance`.
    pub tolerance: Option<f64>,
    /// `stepSize` in s.
    pub step_size: Option<f64>,
}

/// `<Tool name=…>` inside `<VendorAnnotations>` (or a variable's `<Annotations>`), kept verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnnotation {
    /// `name` of the tool.
    pub name: String,
    /// The inner XML of the `<Tool>` element, uninterpreted.
    pub content: String,
}

/// `causality` (FMI 2.0 §2.2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Causality {
    /// `parameter`.
    Parameter,
    /// `calculatedParameter`.
    CalculatedParameter,
    /// `input`.
    Input,
    /// `output`.
    Output,
    /// `local` (the default).
    #[default]
    Local,
    /// `independent`.
    Independent,
}

impl Causality {
    /// The XML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Parameter => "parameter",
            Self::CalculatedParameter => "calculatedParameter",
            Self::Input => "input",
            Self::Output => "output",
            Self::Local => "local",
            Self::Independent => "independent",
        }
    }
}

/// `variability` (FMI 2.0 §2.2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Variability {
    /// `constant`.
    Constant,
    /// `fixed`.
    Fixed,
    /// `tunable`.
    Tunable,
    /// `discrete`.
    Discrete,
    /// `continuous` (the default).
    #[default]
    Continuous,
}

impl Variability {
    /// The XML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::Fixed => "fixed",
            Self::Tunable => "tunable",
            Self::Discrete => "discrete",
            Self::Continuous => "continuous",
        }
    }
}

/// `initial` (FMI 2.0 §2.2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Initial {
    /// `exact`: the start value is the initial value.
    Exact,
    /// `approx`: the start value is an iteration guess.
    Approx,
    /// `calculated`: computed from other variables during initialization.
    Calculated,
}

impl Initial {
    /// The XML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Approx => "approx",
            Self::Calculated => "calculated",
        }
    }
}

macro_rules! spelled {
    ($($t:ident: [$($v:ident),+]),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
        impl $t {
            /// Every value, in the standard's order.
            pub const ALL: &'static [Self] = &[$(Self::$v),+];
            /// Parses the XML spelling (surrounding whitespace ignored).
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s.trim())
            }
        }
    )*};
}
spelled!(
    Causality: [Parameter, CalculatedParameter, Input, Output, Local, Independent],
    Variability: [Constant, Fixed, Tunable, Discrete, Continuous],
    Initial: [Exact, Approx, Calculated],
    NamingConvention: [Flat, Structured]
);

/// `<ScalarVariable>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarVariable {
    /// `name`.
    pub name: String,
    /// `valueReference`.
    pub value_reference: u32,
    /// `description`.
    pub description: Option<String>,
    /// `causality` (default local).
    pub causality: Causality,
    /// `variability` (default continuous).
    pub variability: Variability,
    /// `initial`, `None` when the attribute is absent (the default of the table then applies).
    pub initial: Option<Initial>,
    /// `canHandleMultipleSetPerTimeInstant`.
    pub can_handle_multiple_set_per_time_instant: Option<bool>,
    /// The type element and its attributes.
    pub kind: VariableKind,
    /// Tool annotations of this variable, kept verbatim.
    pub annotations: Vec<ToolAnnotation>,
    /// 1-based line of the element in the file it was read from (0 when built in memory).
    pub line: u32,
}

/// Type element of a `<ScalarVariable>` with its `start` value.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableKind {
    /// `<Real>`.
    Real {
        /// `declaredType`.
        declared_type: Option<String>,
        /// Unit, bounds and nominal.
        attrs: RealAttributes,
        /// `start`.
        start: Option<f64>,
        /// `derivative`: 1-based index of the variable this one is the derivative of.
        derivative: Option<u32>,
        /// `reinit`.
        reinit: Option<bool>,
    },
    /// `<Integer>`.
    Integer {
        /// `declaredType`.
        declared_type: Option<String>,
        /// Bounds.
        attrs: IntegerAttributes,
        /// `start`: exact for every FMI integer type (an FMI 3.0 UInt64 of 5e9 or above 2^63 − 1
        /// too; 2.0's `Integer` is 32-bit).
        start: Option<i128>,
    },
    /// `<Boolean>`.
    Boolean {
        /// `declaredType`.
        declared_type: Option<String>,
        /// `start`.
        start: Option<bool>,
    },
    /// `<String>`.
    String {
        /// `declaredType`.
        declared_type: Option<String>,
        /// `start`.
        start: Option<String>,
    },
    /// `<Enumeration>`.
    Enumeration {
        /// `declaredType` (required by the standard).
        declared_type: String,
        /// `quantity`.
        quantity: Option<String>,
        /// `min`.
        min: Option<i32>,
        /// `max`.
        max: Option<i32>,
        /// `start`.
        start: Option<i32>,
    },
    /// FMI 3.0 `<Binary>` (no FMI 2.0 equivalent; read from 3.0 descriptions only).
    Binary {
        /// `declaredType`.
        declared_type: Option<String>,
        /// `mimeType` (the standard's default `application/octet-stream` when absent).
        mime_type: Option<String>,
        /// `maxSize`: the most bytes a value may have.
        max_size: Option<u32>,
        /// `<Start value="…"/>` (xs:hexBinary), decoded.
        start: Option<Vec<u8>>,
    },
}

/// The five FMI 2.0 base types and FMI 3.0's Binary, for type checks in importers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseType {
    /// fmi2Real.
    Real,
    /// fmi2Integer.
    Integer,
    /// fmi2Boolean.
    Boolean,
    /// fmi2String.
    String,
    /// Enumeration (accessed as fmi2Integer).
    Enumeration,
    /// FMI 3.0 Binary (accessed as fmi3Binary: a byte string).
    Binary,
}

impl fmt::Display for BaseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Real => "Real",
            Self::Integer => "Integer",
            Self::Boolean => "Boolean",
            Self::String => "String",
            Self::Enumeration => "Enumeration",
            Self::Binary => "Binary",
        })
    }
}

impl VariableKind {
    /// The base type of this variable.
    pub fn base_type(&self) -> BaseType {
        match self {
            Self::Real { .. } => BaseType::Real,
            Self::Integer { .. } => BaseType::Integer,
            Self::Boolean { .. } => BaseType::Boolean,
            Self::String { .. } => BaseType::String,
            Self::Enumeration { .. } => BaseType::Enumeration,
            Self::Binary { .. } => BaseType::Binary,
        }
    }

    /// Whether a `start` attribute is present.
    pub fn has_start(&self) -> bool {
        match self {
            Self::Real { start, .. } => start.is_some(),
            Self::Integer { start, .. } => start.is_some(),
            Self::Enumeration { start, .. } => start.is_some(),
            Self::Boolean { start, .. } => start.is_some(),
            Self::String { start, .. } => start.is_some(),
            Self::Binary { start, .. } => start.is_some(),
        }
    }

    /// The `declaredType`, if any.
    pub fn declared_type(&self) -> Option<&str> {
        match self {
            Self::Real { declared_type, .. }
            | Self::Integer { declared_type, .. }
            | Self::Boolean { declared_type, .. }
            | Self::String { declared_type, .. }
            | Self::Binary { declared_type, .. } => declared_type.as_deref(),
            Self::Enumeration { declared_type, .. } => Some(declared_type),
        }
    }
}

impl ScalarVariable {
    /// A continuous Real variable built in memory (inputs start at 0): for descriptions made in
    /// code, e.g. of test doubles.
    pub fn real(name: &str, value_reference: u32, causality: Causality) -> Self {
        Self {
            name: name.into(),
            value_reference,
            description: None,
            causality,
            variability: Variability::Continuous,
            initial: None,
            can_handle_multiple_set_per_time_instant: None,
            kind: VariableKind::Real {
                declared_type: None,
                attrs: Default::default(),
                start: (causality == Causality::Input).then_some(0.0),
                derivative: None,
                reinit: None,
            },
            annotations: Vec::new(),
            line: 0,
        }
    }

    /// The `initial` in force: the attribute if present, else the default of FMI 2.0 Table 2.2.7
    /// for this causality and variability (`None` where no `initial` is allowed).
    pub fn effective_initial(&self) -> Option<Initial> {
        self.initial.or_else(|| default_initial(self.causality, self.variability))
    }
}

/// Default `initial` for a causality/variability pair (FMI 2.0 §2.2.7, the table below the
/// combinations table). `None` means `initial` is not allowed (inputs, independent) or the
/// combination itself is illegal.
pub fn default_initial(c: Causality, v: Variability) -> Option<Initial> {
    use Causality as C;
    use Variability as V;
    match (c, v) {
        (C::Parameter, V::Fixed | V::Tunable) => Some(Initial::Exact),
        (C::CalculatedParameter, V::Fixed | V::Tunable) => Some(Initial::Calculated),
        (C::Local, V::Fixed | V::Tunable) => Some(Initial::Calculated),
        (C::Output | C::Local, V::Constant) => Some(Initial::Exact),
        (C::Output | C::Local, V::Discrete | V::Continuous) => Some(Initial::Calculated),
        _ => None,
    }
}

/// `<ModelStructure>` (FMI 2.0 §2.2.8).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelStructure {
    /// `<Outputs>`: one `<Unknown>` per output, ordered by variable index.
    pub outputs: Vec<Unknown>,
    /// `<Derivatives>`.
    pub derivatives: Vec<Unknown>,
    /// `<InitialUnknowns>`.
    pub initial_unknowns: Vec<Unknown>,
}

/// `<Unknown>`: a variable index and what it depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    /// `index`: 1-based index into `ModelVariables`.
    pub index: u32,
    /// `dependencies`: `None` = absent (depends on all knowns); `Some(vec![])` = depends on none.
    pub dependencies: Option<Vec<u32>>,
    /// `dependenciesKind`, one per dependency when present.
    pub dependencies_kind: Option<Vec<DependencyKind>>,
    /// 1-based line in the file it was read from (0 when built in memory).
    pub line: u32,
}

impl Unknown {
    /// An unknown with explicit dependencies and no kinds.
    pub fn new(index: u32, dependencies: Vec<u32>) -> Self {
        Self { index, dependencies: Some(dependencies), dependencies_kind: None, line: 0 }
    }
}

/// Values of `dependenciesKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DependencyKind {
    /// `dependent`: nonlinear dependency.
    Dependent,
    /// `constant`: constant factor.
    Constant,
    /// `fixed`: factor depends on fixed parameters only.
    Fixed,
    /// `tunable`: factor depends on tunable parameters.
    Tunable,
    /// `discrete`: factor changes only at events.
    Discrete,
}

impl DependencyKind {
    /// The XML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dependent => "dependent",
            Self::Constant => "constant",
            Self::Fixed => "fixed",
            Self::Tunable => "tunable",
            Self::Discrete => "discrete",
        }
    }
}

impl ModelDescription {
    /// The variable with this 1-based index, if it exists.
    pub fn variable_by_index(&self, index: u32) -> Option<&ScalarVariable> {
        let i = usize::try_from(index).ok()?.checked_sub(1)?;
        self.model_variables.get(i)
    }

    /// The first variable with this name.
    pub fn variable(&self, name: &str) -> Option<&ScalarVariable> {
        self.model_variables.iter().find(|v| v.name == name)
    }

    /// The `<SimpleType>` with this name.
    pub fn simple_type(&self, name: &str) -> Option<&SimpleType> {
        self.type_definitions.iter().find(|t| t.name == name)
    }
}

/// The default `mimeType` of an FMI 3.0 Binary variable.
pub const BINARY_MIME_TYPE: &str = "application/octet-stream";

/// Bytes as lower-case hexadecimal, two digits per byte (xs:hexBinary; how Binary values are
/// written in `results.csv`, `cosim info` and descriptions).
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = Vec::with_capacity(2 * bytes.len());
    push_hex(&mut s, bytes);
    String::from_utf8(s).unwrap_or_default()
}

/// Appends `bytes` as lower-case hexadecimal to `out` ([`to_hex`] without allocating).
pub fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}

/// Decodes xs:hexBinary: an even number of hexadecimal digits, either case, surrounding
/// whitespace ignored. `Err` says what is wrong (the position is 0-based in the trimmed text).
pub fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    let t = text.trim().as_bytes();
    if let Some(k) = t.iter().position(|c| !c.is_ascii_hexdigit()) {
        let c = text.trim()[k..].chars().next().unwrap_or('?');
        return Err(format!("{c:?} at position {k} is not a hexadecimal digit"));
    }
    if !t.len().is_multiple_of(2) {
        return Err(format!("{} hexadecimal digits: an odd count (two digits per byte)", t.len()));
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    };
    Ok(t.chunks_exact(2).map(|p| (digit(p[0]) << 4) | digit(p[1])).collect())
}

#[cfg(test)]
mod hex_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hex_round_trips_every_byte_and_names_what_is_wrong() {
        let all: Vec<u8> = (0..=255).collect();
        let text = to_hex(&all);
        assert_eq!(&text[..8], "00010203");
        assert_eq!(&text[text.len() - 4..], "feff");
        assert_eq!(from_hex(&text).unwrap(), all);
        assert_eq!(from_hex(" DEADbeef \n").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(from_hex("").unwrap(), Vec::<u8>::new());
        assert_eq!(from_hex("abc").unwrap_err(), "3 hexadecimal digits: an odd count (two digits per byte)");
        assert_eq!(from_hex("0x12").unwrap_err(), "'x' at position 1 is not a hexadecimal digit");
        assert_eq!(from_hex("12 34").unwrap_err(), "' ' at position 2 is not a hexadecimal digit");
    }
}
