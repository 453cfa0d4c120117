//! Semantic rules of FMI 2.0.4 §2.2 that the schema cannot express.
//!
//! [`validate()`] checks a [`ModelDescription`] and returns every [`Problem`] it finds, in a
//! deterministic order. Rules checked:
//!
//! - `fmiVersion` is `2.0`; `<CoSimulation>` or `<ModelExchange>` is present;
//! - `<DefaultExperiment>`: `startTime < stopTime`, `stepSize > 0`, `tolerance > 0`;
//! - per variable: the causality × variability combination is legal and `initial` is one the
//!   table of §2.2.7 allows; only Real variables are continuous; a start value is present when
//!   the (effective) `initial` is exact/approx or the causality is input/parameter, and absent
//!   when it is calculated or the causality is independent; `declaredType` exists and is of the
//!   variable's type; `unit`/`displayUnit` are defined in `<UnitDefinitions>`;
//!   `min ≤ start ≤ max`; an enumeration start is one of the type's item values; `derivative`
//!   refers to another Real variable;
//! - variable names are unique; flat names contain no CR, LF or TAB; with the `structured`
//!   naming convention, names that break the EBNF of §2.2.9 give a *warning* (common in real
//!   FMUs, e.g. OpenModelica's `der(der(x))`);
//! - value references are unique per base type (Enumeration shares the Integer space), except
//!   for aliases: a shared value reference is an error only if both variables are inputs or
//!   parameters or have a start value;
//! - `<ModelStructure>`: every `index` and dependency exists; no unknown depends on itself;
//!   outputs and derivatives do not depend on parameters (fixed/tunable variables);
//!   `dependenciesKind` only with `dependencies`, of the same length; `<Outputs>` has exactly
//!   one `<Unknown>` per output, in ascending order; every `<Derivatives>` entry is a Real with
//!   a `derivative` attribute; `<InitialUnknowns>` is exactly the set of outputs with initial
//!   approx/calculated, calculated parameters, and states and derivatives (of `<Derivatives>`)
//!   with initial approx/calculated, in ascending order.

mod structure;
mod structured_name;

use crate::model::*;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
pub use structured_name::check_structured_name;

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The description breaks the standard; importers may reject it.
    Error,
    /// Suspicious or unconventional, but importers can work with it.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// One finding of [`validate()`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// 1-based line of the element concerned, 0 when unknown (built in memory, or the root).
    pub line: u32,
    /// What is wrong; names the variable or element concerned.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// Checks the semantic rules of FMI 2.0 (see the [module documentation](self)).
pub fn validate(md: &ModelDescription) -> Vec<Problem> {
    let mut v = Validator { md, problems: Vec::new() };
    v.header();
    v.type_definitions();
    for (i, var) in md.model_variables.iter().enumerate() {
        v.variable(i + 1, var);
    }
    v.unique_names();
    v.value_references();
    v.model_structure();
    v.problems
}

/// `variable "x" (line 12)`, or `(index 3)` for a variable built in memory.
fn var_ref(index: usize, v: &ScalarVariable) -> String {
    if v.line > 0 {
        format!("variable \"{}\" (line {})", v.name, v.line)
    } else {
        format!("variable \"{}\" (index {index})", v.name)
    }
}

/// The initial values allowed for a combination, `None` if the combination is illegal
/// (FMI 2.0.4 §2.2.7, cases A–E of the table).
fn allowed_initials(c: Causality, v: Variability) -> Option<&'static [Initial]> {
    use Causality as C;
    use Initial as I;
    use Variability as V;
    match (c, v) {
        (C::Parameter, V::Fixed | V::Tunable) | (C::Output | C::Local, V::Constant) => Some(&[I::Exact]),
        (C::CalculatedParameter | C::Local, V::Fixed | V::Tunable) => Some(&[I::Calculated, I::Approx]),
        (C::Output | C::Local, V::Discrete | V::Continuous) => Some(&[I::Calculated, I::Exact, I::Approx]),
        (C::Input, V::Discrete | V::Continuous) | (C::Independent, V::Continuous) => Some(&[]),
        _ => None,
    }
}

fn kind_of_type(kind: &SimpleTypeKind) -> BaseType {
    match kind {
        SimpleTypeKind::Real(_) => BaseType::Real,
        SimpleTypeKind::Integer(_) => BaseType::Integer,
        SimpleTypeKind::Boolean => BaseType::Boolean,
        SimpleTypeKind::String => BaseType::String,
        SimpleTypeKind::Enumeration { .. } => BaseType::Enumeration,
    }
}

/// "a Real", "an Integer", …
fn a(t: BaseType) -> String {
    match t {
        BaseType::Integer | BaseType::Enumeration => format!("an {t}"),
        _ => format!("a {t}"),
    }
}

/// Value-reference space of a base type: Enumerations are accessed with fmi2Get/SetInteger.
fn vr_space(t: BaseType) -> BaseType {
    match t {
        BaseType::Enumeration => BaseType::Integer,
        t => t,
    }
}

struct Validator<'a> {
    md: &'a ModelDescription,
    problems: Vec<Problem>,
}

impl<'a> Validator<'a> {
    fn error(&mut self, line: u32, message: String) {
        self.problems.push(Problem { severity: Severity::Error, line, message });
    }

    fn warning(&mut self, line: u32, message: String) {
        self.problems.push(Problem { severity: Severity::Warning, line, message });
    }

    /// Error about a variable, prefixed with its name and line.
    fn var_error(&mut self, index: usize, v: &ScalarVariable, what: String) {
        self.error(v.line, format!("{}: {what}", var_ref(index, v)));
    }

    fn header(&mut self) {
        let md = self.md;
        // A 3.0 description read by `from_str3` is checked by the same rules (its 3.0 specifics
        // were mapped onto the data model on reading).
        if md.fmi_version != "2.0" && !md.fmi_version.starts_with("3.") {
            self.error(0, format!("fmiVersion is \"{}\", expected \"2.0\" or \"3.0\"", md.fmi_version));
        }
        if md.co_simulation.is_none() && md.model_exchange.is_none() {
            self.error(
                0,
                "neither <CoSimulation> nor <ModelExchange> is present: the FMU implements no \
                 interface"
                    .into(),
            );
        }
        if let Some(de) = &md.default_experiment {
            if let (Some(start), Some(stop)) = (de.start_time, de.stop_time) {
                if start.partial_cmp(&stop) != Some(std::cmp::Ordering::Less) {
                    self.error(
                        0,
                        format!(
                            "<DefaultExperiment>: startTime ({start}) must be less than stopTime \
                             ({stop})"
                        ),
                    );
                }
            }
            if let Some(step) = de.step_size {
                if step.is_nan() || step <= 0.0 {
                    self.error(0, format!("<DefaultExperiment>: stepSize ({step}) must be positive"));
                }
            }
            if let Some(tol) = de.tolerance {
                if tol.is_nan() || tol <= 0.0 {
                    self.error(0, format!("<DefaultExperiment>: tolerance ({tol}) must be positive"));
                }
            }
        }
    }

    fn unit(&self, name: &str) -> Option<&Unit> {
        self.md.unit_definitions.iter().find(|u| u.name == name)
    }

    /// Problems with a unit and display unit, as sentences without a subject.
    fn unit_problems(&self, unit: Option<&str>, display_unit: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        match (unit, display_unit) {
            (None, Some(d)) => {
                out.push(format!("displayUnit=\"{d}\" is given without a unit"));
            }
            (Some(u), d) => match self.unit(u) {
                None => out.push(format!("unit \"{u}\" is not defined in <UnitDefinitions>")),
                Some(def) => {
                    if let Some(d) = d {
                        if !def.display_units.iter().any(|x| x.name == d) {
                            out.push(format!("displayUnit \"{d}\" is not a <DisplayUnit> of unit \"{u}\""));
                        }
                    }
                }
            },
            (None, None) => {}
        }
        out
    }

    fn type_definitions(&mut self) {
        for ty in &self.md.type_definitions {
            if let SimpleTypeKind::Real(r) = &ty.kind {
                for p in self.unit_problems(r.unit.as_deref(), r.display_unit.as_deref()) {
                    self.error(0, format!("type \"{}\": {p}", ty.name));
                }
                if let (Some(min), Some(max)) = (r.min, r.max) {
                    if min > max {
                        self.error(0, format!("type \"{}\": min ({min}) > max ({max})", ty.name));
                    }
                }
            }
            if let SimpleTypeKind::Integer(r) = &ty.kind {
                if let (Some(min), Some(max)) = (r.min, r.max) {
                    if min > max {
                        self.error(0, format!("type \"{}\": min ({min}) > max ({max})", ty.name));
                    }
                }
            }
        }
    }

    fn variable(&mut self, index: usize, v: &ScalarVariable) {
        self.combination(index, v);
        self.start_presence(index, v);
        let declared = self.declared_type(index, v);
        self.units_and_bounds(index, v, declared);
        if let VariableKind::Real { derivative: Some(d), .. } = &v.kind {
            self.derivative(index, v, *d);
        }
        self.name(index, v);
    }

    fn combination(&mut self, index: usize, v: &ScalarVariable) {
        match allowed_initials(v.causality, v.variability) {
            None => self.var_error(
                index,
                v,
                format!("causality=\"{}\" is not allowed with variability=\"{}\"", v.causality, v.variability),
            ),
            Some(allowed) => {
                if let Some(initial) = v.initial {
                    if !allowed.contains(&initial) {
                        let allowed = if allowed.is_empty() {
                            "no initial attribute is allowed".to_owned()
                        } else {
                            let list: Vec<_> = allowed.iter().map(|i| i.as_str()).collect();
                            format!("allowed: {}", list.join(", "))
                        };
                        self.var_error(
                            index,
                            v,
                            format!(
                                "initial=\"{initial}\" is not allowed with causality=\"{}\" and \
                                 variability=\"{}\" ({allowed})",
                                v.causality, v.variability
                            ),
                        );
                    }
                }
            }
        }
        let base = v.kind.base_type();
        if base != BaseType::Real && v.variability == Variability::Continuous {
            self.var_error(
                index,
                v,
                format!(
                    "variability=\"continuous\" (the default) is only allowed for Real \
                     variables, this is {}",
                    a(base)
                ),
            );
        }
    }

    fn start_presence(&mut self, index: usize, v: &ScalarVariable) {
        let initial = v.effective_initial();
        let has_start = v.kind.has_start();
        if !has_start {
            let why = match (v.causality, initial) {
                (Causality::Input, _) => Some("causality=\"input\"".to_owned()),
                (Causality::Parameter, _) => Some("causality=\"parameter\"".to_owned()),
                (_, Some(i @ (Initial::Exact | Initial::Approx))) => Some(format!("initial=\"{i}\"")),
                _ => None,
            };
            if let Some(why) = why {
                self.var_error(index, v, format!("has no start value, which {why} requires"));
            }
        } else if v.causality == Causality::Independent {
            self.var_error(index, v, "has a start value, which causality=\"independent\" forbids".into());
        } else if initial == Some(Initial::Calculated) {
            let how = if v.initial.is_some() { "" } else { " (the default for its causality)" };
            self.var_error(index, v, format!("has a start value, which initial=\"calculated\"{how} forbids"));
        }
    }

    /// Checks `declaredType`; returns the type if it exists and matches.
    fn declared_type(&mut self, index: usize, v: &ScalarVariable) -> Option<&'a SimpleType> {
        let name = v.kind.declared_type()?;
        let md = self.md;
        let Some(ty) = md.simple_type(name) else {
            self.var_error(index, v, format!("declaredType \"{name}\" is not defined in <TypeDefinitions>"));
            return None;
        };
        let (want, got) = (v.kind.base_type(), kind_of_type(&ty.kind));
        if want != got {
            self.var_error(
                index,
                v,
                format!("declaredType \"{name}\" is {} type, but the variable is {}", a(got), a(want)),
            );
            return None;
        }
        Some(ty)
    }

    fn units_and_bounds(&mut self, index: usize, v: &ScalarVariable, ty: Option<&SimpleType>) {
        match &v.kind {
            VariableKind::Real { attrs, start, .. } => {
                let t = match ty.map(|t| &t.kind) {
                    Some(SimpleTypeKind::Real(t)) => Some(t),
                    _ => None,
                };
                let unit = attrs.unit.as_deref().or(t.and_then(|t| t.unit.as_deref()));
                let display = attrs.display_unit.as_deref().or(t.and_then(|t| t.display_unit.as_deref()));
                for p in self.unit_problems(unit, display) {
                    self.var_error(index, v, p);
                }
                let min = attrs.min.or(t.and_then(|t| t.min));
                let max = attrs.max.or(t.and_then(|t| t.max));
                self.bounds(index, v, min, max, *start);
            }
            VariableKind::Integer { attrs, start, .. } => {
                let t = match ty.map(|t| &t.kind) {
                    Some(SimpleTypeKind::Integer(t)) => Some(t),
                    _ => None,
                };
                let min = attrs.min.or(t.and_then(|t| t.min)).map(i128::from);
                let max = attrs.max.or(t.and_then(|t| t.max)).map(i128::from);
                self.bounds(index, v, min, max, *start);
            }
            VariableKind::Enumeration { min, max, start, .. } => {
                self.bounds(index, v, *min, *max, *start);
                if let (Some(start), Some(SimpleTypeKind::Enumeration { items, .. })) = (start, ty.map(|t| &t.kind)) {
                    if !items.iter().any(|i| i.value == *start) {
                        let values: Vec<_> = items.iter().map(|i| i.value.to_string()).collect();
                        self.var_error(
                            index,
                            v,
                            format!(
                                "start={start} is not a value of enumeration \"{}\" (values: {})",
                                v.kind.declared_type().unwrap_or_default(),
                                values.join(", ")
                            ),
                        );
                    }
                }
            }
            VariableKind::Boolean { .. } | VariableKind::String { .. } => {}
            VariableKind::Binary { max_size, start, .. } => {
                if let (Some(max), Some(start)) = (max_size, start) {
                    if start.len() as u64 > u64::from(*max) {
                        let n = start.len();
                        self.var_error(index, v, format!("the start value has {n} bytes, more than maxSize={max}"));
                    }
                }
            }
        }
    }

    fn bounds<T: PartialOrd + fmt::Display + Copy>(
        &mut self,
        index: usize,
        v: &ScalarVariable,
        min: Option<T>,
        max: Option<T>,
        start: Option<T>,
    ) {
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                self.var_error(index, v, format!("min ({min}) > max ({max})"));
            }
        }
        if let Some(start) = start {
            if let Some(min) = min.filter(|m| start < *m) {
                self.var_error(index, v, format!("start ({start}) < min ({min})"));
            }
            if let Some(max) = max.filter(|m| start > *m) {
                self.var_error(index, v, format!("start ({start}) > max ({max})"));
            }
        }
    }

    fn derivative(&mut self, index: usize, v: &ScalarVariable, d: u32) {
        let md = self.md;
        match md.variable_by_index(d) {
            None => self.var_error(
                index,
                v,
                format!("derivative=\"{d}\" refers to no variable (there are {})", md.model_variables.len()),
            ),
            Some(_) if usize::try_from(d).ok() == Some(index) => {
                self.var_error(index, v, format!("derivative=\"{d}\" refers to the variable itself"))
            }
            Some(state) if state.kind.base_type() != BaseType::Real => self.var_error(
                index,
                v,
                format!(
                    "derivative=\"{d}\" refers to {}, which is {}, not a Real",
                    var_ref(d as usize, state),
                    a(state.kind.base_type())
                ),
            ),
            Some(_) => {}
        }
    }

    fn name(&mut self, index: usize, v: &ScalarVariable) {
        match self.md.variable_naming_convention {
            NamingConvention::Flat => {
                for (c, what) in [('\r', "carriage return"), ('\n', "line feed"), ('\t', "tab")] {
                    if v.name.contains(c) {
                        self.var_error(index, v, format!("the name contains a {what}, which flat names must not"));
                    }
                }
            }
            NamingConvention::Structured => {
                if let Err(at) = check_structured_name(&v.name) {
                    let found = v.name.chars().nth(at).map_or("the end of the name".to_owned(), |c| format!("{c:?}"));
                    self.warning(
                        v.line,
                        format!(
                            "{}: the name does not follow variableNamingConvention=\"structured\" \
                             (FMI 2.0 §2.2.9): unexpected {found} at character {}",
                            var_ref(index, v),
                            at + 1
                        ),
                    );
                }
            }
        }
    }

    fn unique_names(&mut self) {
        let md = self.md;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, v) in md.model_variables.iter().enumerate() {
            if let Some(&first) = seen.get(v.name.as_str()) {
                let other = var_ref(first + 1, &md.model_variables[first]);
                self.var_error(i + 1, v, format!("the name is not unique, {other} has it too"));
            } else {
                seen.insert(&v.name, i);
            }
        }
    }

    fn value_references(&mut self) {
        let md = self.md;
        // (space, vr) → indices (0-based) of variables that define a value of their own.
        let mut setters: BTreeMap<(u8, u32), Vec<usize>> = BTreeMap::new();
        for (i, v) in md.model_variables.iter().enumerate() {
            let defines_value = matches!(v.causality, Causality::Parameter | Causality::Input) || v.kind.has_start();
            if !defines_value {
                continue;
            }
            let space = match vr_space(v.kind.base_type()) {
                BaseType::Real => 0,
                BaseType::Integer | BaseType::Enumeration => 1,
                BaseType::Boolean => 2,
                BaseType::String => 3,
                BaseType::Binary => 4,
            };
            let list = setters.entry((space, v.value_reference)).or_default();
            if let Some(&first) = list.iter().find(|&&j| md.model_variables[j].name != v.name) {
                let other = &md.model_variables[first];
                let space = vr_space(v.kind.base_type());
                self.var_error(
                    i + 1,
                    v,
                    format!(
                        "valueReference {} ({space}) is also used by {}; variables sharing a \
                         value reference are aliases, and at most one of them may be an input, \
                         a parameter or have a start value",
                        v.value_reference,
                        var_ref(first + 1, other)
                    ),
                );
            }
            list.push(i);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::write::tests::{minimal, rich};
    use Causality as C;
    use Variability as V;

    pub(crate) fn errors(md: &ModelDescription) -> Vec<String> {
        validate(md).into_iter().filter(|p| p.severity == Severity::Error).map(|p| p.message).collect()
    }

    /// Asserts that an error containing every fragment is reported.
    #[track_caller]
    pub(crate) fn assert_error(md: &ModelDescription, fragments: &[&str]) {
        let errs = errors(md);
        assert!(
            errs.iter().any(|m| fragments.iter().all(|f| m.contains(f))),
            "no error with {fragments:?} in {errs:#?}"
        );
    }

    pub(crate) fn real(start: Option<f64>) -> VariableKind {
        VariableKind::Real {
            declared_type: None,
            attrs: RealAttributes::default(),
            start,
            derivative: None,
            reinit: None,
        }
    }

    /// `rich()` with variable `index` (1-based) changed by `f`.
    pub(crate) fn with_var(index: usize, f: impl FnOnce(&mut ScalarVariable)) -> ModelDescription {
        let mut md = rich();
        f(&mut md.model_variables[index - 1]);
        md
    }

    pub(crate) fn set_start(kind: &mut VariableKind, value: f64) {
        match kind {
            VariableKind::Real { start, .. } => *start = Some(value),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn clean_descriptions_have_no_problems() {
        assert_eq!(validate(&rich()), vec![]);
        assert_eq!(validate(&minimal()), vec![]);
        let again = crate::from_str(&crate::to_xml(&rich())).unwrap();
        assert_eq!(validate(&again), vec![]);
    }

    #[test]
    fn problem_display() {
        let p = Problem { severity: Severity::Warning, line: 3, message: "m".into() };
        assert_eq!(p.to_string(), "warning: m");
        let md = with_var(7, |v| v.kind = real(None));
        let p = validate(&md);
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(
            p[0].to_string(),
            "error: variable \"k\" (index 7): has no start value, which causality=\"parameter\" requires"
        );
        // With a line from the file, the line is named.
        let md = with_var(7, |v| {
            v.kind = real(None);
            v.line = 42;
        });
        assert_eq!(validate(&md)[0].line, 42);
        assert!(validate(&md)[0].message.starts_with("variable \"k\" (line 42): "));
    }

    #[test]
    fn fmi_version() {
        let mut md = rich();
        md.fmi_version = "1.0".into();
        assert_error(&md, &["fmiVersion is \"1.0\", expected \"2.0\" or \"3.0\""]);
    }

    #[test]
    fn an_interface_is_required() {
        let mut md = rich();
        md.co_simulation = None;
        assert_eq!(validate(&md), vec![]);
        md.model_exchange = None;
        assert_error(&md, &["neither <CoSimulation> nor <ModelExchange>"]);
    }

    #[test]
    fn default_experiment() {
        let mut md = rich();
        md.default_experiment = Some(DefaultExperiment {
            start_time: Some(5.0),
            stop_time: Some(5.0),
            tolerance: Some(0.0),
            step_size: Some(-1e-3),
        });
        assert_error(&md, &["startTime (5) must be less than stopTime (5)"]);
        assert_error(&md, &["stepSize (-0.001) must be positive"]);
        assert_error(&md, &["tolerance (0) must be positive"]);
        assert_eq!(errors(&md).len(), 3);
    }

    #[test]
    fn illegal_causality_variability_combinations() {
        let cases = [
            (C::Parameter, V::Continuous),
            (C::Parameter, V::Constant),
            (C::CalculatedParameter, V::Discrete),
            (C::Input, V::Constant),
            (C::Input, V::Fixed),
            (C::Independent, V::Discrete),
            (C::Independent, V::Fixed),
            (C::Output, V::Tunable),
        ];
        for (c, v) in cases {
            let md = with_var(14, |x| {
                x.causality = c;
                x.variability = v;
                x.initial = None;
            });
            assert_error(
                &md,
                &["variable \"c\"", &format!("causality=\"{c}\" is not allowed with variability=\"{v}\"")],
            );
        }
    }

    #[test]
    fn illegal_initial_values() {
        let cases = [
            (7, Initial::Approx, "allowed: exact"),                      // parameter
            (15, Initial::Exact, "allowed: calculated, approx"),         // calculatedParameter
            (2, Initial::Exact, "no initial attribute is allowed"),      // input
            (1, Initial::Calculated, "no initial attribute is allowed"), // independent
            (14, Initial::Approx, "allowed: exact"),                     // constant
        ];
        for (index, initial, allowed) in cases {
            let md = with_var(index, |v| v.initial = Some(initial));
            assert_error(&md, &[&format!("initial=\"{initial}\" is not allowed"), allowed]);
        }
    }

    #[test]
    fn only_real_variables_are_continuous() {
        let md = with_var(13, |v| v.variability = V::Continuous);
        assert_error(&md, &["variable \"count\"", "variability=\"continuous\"", "this is an Integer"]);
        let md = with_var(4, |v| {
            v.causality = C::Local;
            v.variability = V::Continuous;
            v.initial = Some(Initial::Exact);
        });
        assert_error(&md, &["variable \"enabled\"", "this is a Boolean"]);
    }

    #[test]
    fn start_value_required() {
        // input
        let md = with_var(2, |v| v.kind = real(None));
        assert_error(&md, &["variable \"p_in\"", "has no start value, which causality=\"input\""]);
        // parameter
        let md = with_var(4, |v| v.kind = VariableKind::Boolean { declared_type: None, start: None });
        assert_error(&md, &["variable \"enabled\"", "which causality=\"parameter\" requires"]);
        // initial exact (explicit) and approx
        let md = with_var(8, |v| v.kind = real(None));
        assert_error(&md, &["variable \"x\"", "which initial=\"exact\" requires"]);
        let md = with_var(10, |v| v.kind = real(None));
        assert_error(&md, &["variable \"v\"", "which initial=\"approx\" requires"]);
        // constant: exact by default
        let md = with_var(14, |v| v.kind = real(None));
        assert_error(&md, &["variable \"c\"", "which initial=\"exact\" requires"]);
    }

    #[test]
    fn start_value_forbidden() {
        // explicit initial="calculated"
        let md = with_var(12, |v| {
            v.initial = Some(Initial::Calculated);
            set_start(&mut v.kind, 1.0);
        });
        assert_error(&md, &["variable \"y\"", "has a start value, which initial=\"calculated\" forbids"]);
        // calculated by default (calculatedParameter)
        let md = with_var(15, |v| set_start(&mut v.kind, 1.0));
        assert_error(&md, &["variable \"area\"", "initial=\"calculated\" (the default"]);
        // independent
        let md = with_var(1, |v| set_start(&mut v.kind, 0.0));
        assert_error(&md, &["variable \"time\"", "which causality=\"independent\" forbids"]);
    }

    #[test]
    fn declared_type_must_exist_and_match() {
        let md = with_var(2, |v| {
            if let VariableKind::Real { declared_type, .. } = &mut v.kind {
                *declared_type = Some("Nope".into());
            }
        });
        assert_error(&md, &["variable \"p_in\"", "declaredType \"Nope\" is not defined"]);
        let md = with_var(6, |v| {
            if let VariableKind::Integer { declared_type, .. } = &mut v.kind {
                *declared_type = Some("Pressure".into());
            }
        });
        assert_error(
            &md,
            &["variable \"pump[1].n\"", "declaredType \"Pressure\" is a Real type, but the variable is an Integer"],
        );
        let md = with_var(3, |v| {
            if let VariableKind::Enumeration { declared_type, .. } = &mut v.kind {
                *declared_type = "Count".into();
            }
        });
        assert_error(&md, &["is an Integer type, but the variable is an Enumeration"]);
    }

    #[test]
    fn units_must_be_defined() {
        let md = with_var(12, |v| {
            if let VariableKind::Real { attrs, .. } = &mut v.kind {
                attrs.unit = Some("furlong".into());
            }
        });
        assert_error(&md, &["variable \"y\"", "unit \"furlong\" is not defined in <UnitDefinitions>"]);
        let md = with_var(7, |v| {
            if let VariableKind::Real { attrs, .. } = &mut v.kind {
                attrs.display_unit = Some("rpm".into());
            }
        });
        assert_error(&md, &["variable \"k\"", "displayUnit \"rpm\" is not a <DisplayUnit> of unit \"m\""]);
        let md = with_var(10, |v| {
            if let VariableKind::Real { attrs, .. } = &mut v.kind {
                attrs.display_unit = Some("mm".into());
            }
        });
        assert_error(&md, &["variable \"v\"", "displayUnit=\"mm\" is given without a unit"]);
        // The unit of a declared type counts, and the type itself is checked.
        let mut md = rich();
        md.unit_definitions.retain(|u| u.name != "bar");
        assert_error(&md, &["type \"Pressure\": unit \"bar\" is not defined"]);
        assert_error(&md, &["variable \"p_in\"", "unit \"bar\" is not defined"]);
    }

    #[test]
    fn start_within_min_and_max() {
        let md = with_var(7, |v| set_start(&mut v.kind, -1.0));
        assert_error(&md, &["variable \"k\"", "start (-1) < min (0)"]);
        // The declared type's bounds apply: Count has max 100.
        let md = with_var(6, |v| {
            if let VariableKind::Integer { start, .. } = &mut v.kind {
                *start = Some(101);
            }
        });
        assert_error(&md, &["variable \"pump[1].n\"", "start (101) > max (100)"]);
        let md = with_var(7, |v| {
            if let VariableKind::Real { attrs, .. } = &mut v.kind {
                attrs.max = Some(-1.0);
            }
        });
        assert_error(&md, &["variable \"k\"", "min (0) > max (-1)"]);
        let md = with_var(3, |v| {
            if let VariableKind::Enumeration { max, .. } = &mut v.kind {
                *max = Some(1);
            }
        });
        assert_error(&md, &["variable \"mode\"", "start (2) > max (1)"]);
    }

    #[test]
    fn enumeration_start_must_be_an_item() {
        let md = with_var(3, |v| {
            if let VariableKind::Enumeration { start, min, .. } = &mut v.kind {
                *start = Some(0);
                *min = None;
            }
        });
        assert_error(&md, &["variable \"mode\"", "start=0 is not a value of enumeration \"Mode\" (values: 1, 2, 3)"]);
    }

    #[test]
    fn derivative_must_point_to_another_real() {
        for (target, message) in [
            (99, "derivative=\"99\" refers to no variable (there are 17)"),
            (0, "derivative=\"0\" refers to no variable"),
            (9, "derivative=\"9\" refers to the variable itself"),
            (13, "derivative=\"13\" refers to variable \"count\" (index 13), which is an Integer, not a Real"),
        ] {
            let md = with_var(9, |v| {
                if let VariableKind::Real { derivative, .. } = &mut v.kind {
                    *derivative = Some(target);
                }
            });
            assert_error(&md, &["variable \"der(x)\"", message]);
        }
    }

    #[test]
    fn structured_names_follow_the_grammar_with_warnings() {
        let md = with_var(14, |v| v.name = "der(der(c))".into());
        let problems = validate(&md);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].severity, Severity::Warning);
        assert!(problems[0].message.contains("variable \"der(der(c))\""));
        assert!(problems[0].message.contains("unexpected '(' at character 8"), "{}", problems[0].message);

        for good in [
            "x",
            "_x1",
            "a.b.c",
            "a[1].b[2,3]",
            "der(x)",
            "der(a.b[1],2)",
            "'quoted name'",
            "'a\\'b'",
            "'with.dots[and]brackets'",
            "a.'q'[1].b",
            "der",
            "der.x",
        ] {
            assert_eq!(check_structured_name(good), Ok(()), "{good}");
        }
        for (bad, at) in [
            ("", 0),
            ("1x", 0),
            ("a..b", 2),
            ("a[]", 2),
            ("a[1", 3),
            ("a[ 1]", 2),
            ("a b", 1),
            ("der(x", 5),
            ("der(x,)", 6),
            ("der(der(x))", 7),
            ("''", 1),
            ("'a", 2),
            ("'a\\x'", 3),
            ("a-b", 1),
            ("x.", 2),
            ("ä", 0),
        ] {
            assert_eq!(check_structured_name(bad), Err(at), "{bad}");
        }
    }

    #[test]
    fn flat_names_have_no_line_breaks_or_tabs() {
        let mut md = rich();
        md.variable_naming_convention = NamingConvention::Flat;
        md.model_variables[13].name = "any name: der(der(c)) ok".into();
        assert_eq!(validate(&md), vec![]);
        for (c, what) in [('\r', "carriage return"), ('\n', "line feed"), ('\t', "tab")] {
            md.model_variables[13].name = format!("a{c}b");
            assert_error(&md, &[&format!("the name contains a {what}")]);
        }
    }

    #[test]
    fn names_are_unique() {
        let md = with_var(16, |v| v.name = "y".into());
        assert_error(
            &md,
            &["variable \"y\" (index 16)", "the name is not unique, variable \"y\" (index 12) has it too"],
        );
    }

    #[test]
    fn value_references_unique_per_type_except_aliases() {
        // y_alias (16) shares y's value reference without a start: a legal alias (rich() is clean).
        // Two parameters with the same Real value reference: an error.
        let md = with_var(14, |v| v.value_reference = 2);
        assert_error(&md, &["variable \"c\"", "valueReference 2 (Real) is also used by variable \"k\" (index 7)"]);
        // An alias with a start value of an input: an error.
        let md = with_var(16, |v| {
            v.value_reference = 1;
            v.initial = Some(Initial::Exact);
            set_start(&mut v.kind, 1.0);
        });
        assert_error(&md, &["variable \"y_alias\"", "also used by variable \"p_in\""]);
        // Enumerations share the Integer space: mode (0) vs. an Integer parameter with VR 0.
        let md = with_var(6, |v| v.value_reference = 0);
        assert_error(&md, &["variable \"pump[1].n\"", "valueReference 0 (Integer) is also used by variable \"mode\""]);
        // Different base types never clash: count (Integer VR 2) and k (Real VR 2) in rich().
        // Same VR and type but only one defines a value: an alias, no problem.
        let md = with_var(16, |v| v.value_reference = 2);
        assert_eq!(validate(&md), vec![]);
    }
}
