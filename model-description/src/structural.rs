//! FMI 3.0 structural parameters (`causality="structuralParameter"`) and the arrays they size
//! (`<Dimension valueReference>`, FMI 3.0 §2.4.7.5).
//!
//! A description is read twice when an array's size follows a variable: the first reading finds
//! the structural parameters and integer constants (they may come after the arrays), the second
//! reads every array with the sizes of their values ([`sizes`]). The values are the start values
//! ([`super::from_str3`]) or those an importer sets ([`from_str3_configured`]), checked against
//! the type's range and `min`/`max` — and against [`MAX_ARRAY_ELEMENTS`] — before the second
//! reading, so that an absurd size is refused before any element is allocated. A dimension that
//! names no variable, or one that is neither a structural parameter nor an integer constant,
//! makes the FMU unusable ([`Fmi3::unsupported`]).

use super::{Fmi3, MAX_ARRAY_ELEMENTS};
use crate::read::xml::{Elem, ReadError, INT};
use crate::Variability;
use std::collections::HashMap;

/// The largest value a structural parameter may be set to: the values travel as `i128` and an
/// FMU's UInt64 holds at most 2^64 - 1.
pub const MAX_STRUCTURAL_VALUE: i128 = u64::MAX as i128;

/// A structural parameter of an integer type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structural {
    /// Its name.
    pub name: String,
    /// Its value reference.
    pub vr: u32,
    /// Its type (an integer type).
    pub ty: crate::Type3,
    /// `start`, when given.
    pub start: Option<i128>,
    /// `min`, when given.
    pub min: Option<i128>,
    /// `max`, when given.
    pub max: Option<i128>,
    /// `fixed` or `tunable` (tunable ones are configured once, like fixed ones).
    pub variability: Variability,
    /// The value the description was read with: the start value or the one set.
    pub value: Option<i128>,
    /// Its line in `modelDescription.xml`.
    pub line: u32,
}

impl Structural {
    pub(super) fn read(e: &Elem, name: &str, vr: u32, ty: crate::Type3, line: u32) -> Result<Self, ReadError> {
        let int = |key: &str| e.parse(key, INT, |s| s.trim().parse::<i128>().ok());
        let start = int("start")?;
        Ok(Self {
            name: name.to_owned(),
            vr,
            ty,
            start,
            min: int("min")?,
            max: int("max")?,
            variability: e
                .parse("variability", crate::read::xml::VARIABILITY, Variability::parse)?
                .unwrap_or(Variability::Fixed),
            value: start,
            line,
        })
    }

    /// The type's own range.
    fn range(&self) -> (i128, i128) {
        use crate::Type3 as T;
        match self.ty {
            T::Int8 => (i8::MIN.into(), i8::MAX.into()),
            T::UInt8 => (0, u8::MAX.into()),
            T::Int16 => (i16::MIN.into(), i16::MAX.into()),
            T::UInt16 => (0, u16::MAX.into()),
            T::Int32 => (i32::MIN.into(), i32::MAX.into()),
            T::UInt32 => (0, u32::MAX.into()),
            T::UInt64 => (0, MAX_STRUCTURAL_VALUE),
            _ => (i64::MIN.into(), i64::MAX.into()),
        }
    }

    /// Why `v` cannot be this parameter's value (outside its type or its `min`/`max`), naming
    /// the variable, the value and the bounds.
    pub fn check(&self, v: i128) -> Result<(), String> {
        let (lo, hi) = self.range();
        if v < lo || v > hi {
            return Err(format!(
                "structural parameter {} = {v} is outside the range of its type {} ({lo} to {hi})",
                self.name,
                self.ty.as_str()
            ));
        }
        let below = self.min.is_some_and(|m| v < m);
        let above = self.max.is_some_and(|m| v > m);
        if below || above {
            let bound = |b: Option<i128>| b.map_or_else(|| "-".to_owned(), |b| b.to_string());
            return Err(format!(
                "structural parameter {} = {v} is {} its bounds: min {}, max {} (modelDescription.xml line {})",
                self.name,
                if below { "below" } else { "above" },
                bound(self.min),
                bound(self.max),
                self.line
            ));
        }
        Ok(())
    }

    /// The array size this parameter gives, or why none.
    fn size(&self) -> Result<usize, String> {
        let Some(v) = self.value else {
            return Err(format!(
                "structural parameter {} has no start value: set one (e.g. --start-value {}=…)",
                self.name, self.name
            ));
        };
        self.check(v)?;
        size_of(&self.name, v)
    }
}

/// `v` as an array size: a whole number up to [`MAX_ARRAY_ELEMENTS`].
fn size_of(name: &str, v: i128) -> Result<usize, String> {
    if v < 0 {
        return Err(format!("{name} = {v} is not a size (a whole number >= 0)"));
    }
    match usize::try_from(v) {
        Ok(n) if n <= MAX_ARRAY_ELEMENTS => Ok(n),
        _ => Err(format!(
            "{name} = {v} is larger than cosim's limit of {MAX_ARRAY_ELEMENTS} elements per array (MAX_ARRAY_ELEMENTS)"
        )),
    }
}

/// An array whose size follows structural parameters, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResizedArray {
    /// The array's name (its elements are `name[i]`, …).
    pub name: String,
    /// Its dimensions as written: a size, or the name of the variable it follows (`["n", "2"]`).
    pub dims: Vec<String>,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its line in `modelDescription.xml`.
    pub line: u32,
}

/// What one reading hands the next.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Scan {
    /// Every variable's name by value reference (the first of each).
    pub names: HashMap<u32, String>,
    /// The integer constants with a start value.
    pub constants: HashMap<u32, i128>,
    /// The second reading: the size each structural parameter or constant gives, or why none.
    pub sizes: Option<HashMap<u32, Result<usize, String>>>,
    /// The first reading met a dimension that follows a variable.
    pub pending: bool,
}

impl Scan {
    /// `self` for the second reading with `sizes`.
    pub fn with_sizes(&self, sizes: HashMap<u32, Result<usize, String>>) -> Self {
        Self { names: self.names.clone(), constants: self.constants.clone(), sizes: Some(sizes), pending: false }
    }

    /// The size given by `<Dimension valueReference="r">` at `line`: `Ok(Ok(n))`, `Ok(Err(why))`
    /// when the value does not give a size (a problem of the configuration), `Err(why)` when the
    /// reference is wrong (the FMU is refused).
    pub fn size(&mut self, r: &str, line: u32) -> Result<Result<usize, String>, String> {
        let Some(vr) = crate::read::xml::parse_u32(r) else {
            return Err(format!("its <Dimension valueReference=\"{r}\"> (line {line}) is not a value reference"));
        };
        let Some(sizes) = &self.sizes else {
            self.pending = true;
            return Ok(Err(String::new()));
        };
        if let Some(size) = sizes.get(&vr) {
            return Ok(size.clone());
        }
        Err(match self.names.get(&vr) {
            Some(name) => format!(
                "its <Dimension valueReference=\"{vr}\"> (line {line}) names {name}, which is neither a \
                 structural parameter nor a constant of an integer type"
            ),
            None => format!("its <Dimension valueReference=\"{vr}\"> (line {line}) names no variable"),
        })
    }
}

/// The sizes of the first reading's structural parameters (with `values` set over their start
/// values) and integer constants, by value reference.
pub(super) fn sizes(first: &Fmi3, values: &[(&str, i128)]) -> HashMap<u32, Result<usize, String>> {
    let mut sizes: HashMap<u32, Result<usize, String>> =
        first.scan.constants.iter().map(|(vr, v)| (*vr, size_of(&first.scan.names[vr], *v))).collect();
    for s in &first.structural {
        let mut s = s.clone();
        if let Some((_, v)) = values.iter().find(|(n, _)| *n == s.name) {
            s.value = Some(*v);
        }
        sizes.insert(s.vr, s.size());
    }
    sizes
}

/// Reads an FMI 3.0 `modelDescription.xml` with the structural parameters `values` (by name) set
/// over their start values: every value is checked against its parameter's type and bounds
/// first, then the arrays are read with the sizes they give. An error names the variable, the
/// value and the bounds (a name that is no structural parameter, a value outside them, an array
/// larger than [`MAX_ARRAY_ELEMENTS`]); no array is allocated before the values are checked.
pub fn from_str3_configured(xml: &str, values: &[(&str, i128)]) -> Result<(crate::ModelDescription, Fmi3), String> {
    let first = super::read3(xml, Scan::default()).map_err(|e| e.to_string())?;
    for (name, v) in values {
        let s = first.1.structural.iter().find(|s| s.name == *name).ok_or_else(|| {
            let known: Vec<&str> = first.1.structural.iter().map(|s| s.name.as_str()).collect();
            format!(
                "{name} is not a structural parameter of this FMU (its structural parameters: {})",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            )
        })?;
        s.check(*v)?;
    }
    let (md, mut x) = if first.1.scan.pending {
        let sizes = sizes(&first.1, values);
        super::read3(xml, first.1.scan.with_sizes(sizes)).map_err(|e| e.to_string())?
    } else {
        first
    };
    for s in &mut x.structural {
        if let Some((_, v)) = values.iter().find(|(n, _)| *n == s.name) {
            s.value = Some(*v);
        }
    }
    if !x.configuration.is_empty() {
        return Err(x.configuration.join("; "));
    }
    Ok((md, x))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="ss" instantiationToken="{ss}">
  <CoSimulation modelIdentifier="ss"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="2" causality="output"><Dimension valueReference="1"/></Float64>
    <Float64 name="A" valueReference="3" causality="parameter" variability="tunable" start="1"><Dimension valueReference="1"/><Dimension valueReference="4"/></Float64>
    <UInt64 name="n" valueReference="1" causality="structuralParameter" variability="fixed" start="3" min="1" max="5"/>
    <UInt64 name="two" valueReference="4" variability="constant" start="2"/>
  </ModelVariables>
  <ModelStructure><Output valueReference="2"/></ModelStructure>
</fmiModelDescription>"#;

    fn names(md: &crate::ModelDescription) -> Vec<&str> {
        md.model_variables.iter().map(|v| v.name.as_str()).collect()
    }

    #[test]
    fn arrays_follow_the_structural_parameters_declared_after_them() {
        let (md, x) = super::super::from_str3(XML).unwrap();
        assert_eq!(
            names(&md),
            ["time", "x[1]", "x[2]", "x[3]", "A[1,1]", "A[1,2]", "A[2,1]", "A[2,2]", "A[3,1]", "A[3,2]", "n", "two"]
        );
        assert_eq!(md.variable("n").unwrap().causality, crate::Causality::Parameter);
        assert_eq!(x.structural.len(), 1);
        assert_eq!((x.structural[0].value, x.structural[0].min, x.structural[0].max), (Some(3), Some(1), Some(5)));
        assert_eq!(
            x.resized.iter().map(|a| (a.name.as_str(), a.shape.clone())).collect::<Vec<_>>(),
            [("x", vec![3]), ("A", vec![3, 2])]
        );
        assert!(x.unsupported.is_empty() && x.configuration.is_empty() && x.skipped.is_empty(), "{x:?}");
        // Output x → its three elements.
        assert_eq!(md.model_structure.outputs.len(), 3);
        for n in 1..=5 {
            let (md, x) = from_str3_configured(XML, &[("n", n)]).unwrap();
            assert_eq!(md.model_variables.iter().filter(|v| v.name.starts_with("x[")).count(), n as usize);
            assert_eq!(x.structural[0].value, Some(n));
            assert_eq!(md.variable(&format!("x[{n}]")).map(|v| v.causality), Some(crate::Causality::Output));
        }
    }

    #[test]
    fn values_outside_the_bounds_or_the_limit_are_refused_naming_the_variable() {
        let e = from_str3_configured(XML, &[("n", 0)]).unwrap_err();
        assert_eq!(e, "structural parameter n = 0 is below its bounds: min 1, max 5 (modelDescription.xml line 8)");
        let e = from_str3_configured(XML, &[("n", 6)]).unwrap_err();
        assert!(e.contains("n = 6 is above its bounds: min 1, max 5"), "{e}");
        let e = from_str3_configured(XML, &[("n", 1 << 63)]).unwrap_err();
        assert!(e.contains("n = 9223372036854775808 is above its bounds"), "{e}");
        let e = from_str3_configured(XML, &[("n", -1)]).unwrap_err();
        assert!(e.contains("n = -1 is outside the range of its type UInt64 (0 to 18446744073709551615)"), "{e}");
        let e = from_str3_configured(XML, &[("m", 2)]).unwrap_err();
        assert_eq!(e, "m is not a structural parameter of this FMU (its structural parameters: n)");
        // Without max: the limit of elements, named.
        let open = XML.replace(" max=\"5\"", "");
        let e = from_str3_configured(&open, &[("n", 1 << 63)]).unwrap_err();
        assert!(
            e.contains("x = ") || e.contains("n = 9223372036854775808 is larger than cosim's limit of 100000"),
            "{e}"
        );
        assert!(e.contains("array variable <Float64 name=\"x\">"), "{e}");
        // 2^40 x 2: each size within usize, their product above the limit — checked arithmetic.
        let wide = open.replace("start=\"2\"", "start=\"99999\"");
        let e = from_str3_configured(&wide, &[("n", 99_999)]).unwrap_err();
        assert!(e.contains("array variable <Float64 name=\"A\">") && e.contains("elements (more than 100000)"), "{e}");
        let huge = open.replace("start=\"2\"", "start=\"18446744073709551615\"");
        let e = super::super::from_str3(&huge).unwrap().1.configuration.join("\n");
        assert!(e.contains("two = 18446744073709551615 is larger than cosim's limit"), "{e}");
    }

    #[test]
    fn a_dimension_naming_a_missing_or_ordinary_variable_makes_the_fmu_unsupported() {
        let missing =
            XML.replace("<Dimension valueReference=\"1\"/></Float64>", "<Dimension valueReference=\"99\"/></Float64>");
        let x = super::super::from_str3(&missing).unwrap().1;
        let all = x.unsupported.join("\n");
        assert!(
            all.contains("<Float64 name=\"x\">") && all.contains("valueReference=\"99\"> (line 6) names no variable"),
            "{all}"
        );
        let ordinary =
            XML.replace("<Dimension valueReference=\"1\"/></Float64>", "<Dimension valueReference=\"0\"/></Float64>");
        let all = super::super::from_str3(&ordinary).unwrap().1.unsupported.join("\n");
        assert!(all.contains("names time, which is neither a structural parameter nor a constant"), "{all}");
        let float = XML.replace("<UInt64 name=\"n\"", "<Float64 name=\"n\"");
        let all = super::super::from_str3(&float).unwrap().1.unsupported.join("\n");
        assert!(all.contains("structural parameters of type Float64"), "{all}");
    }
}
