//! The system file's schema: [`SystemFile`], one serde type for the whole file (`[simulation]`,
//! `[instances]`, `[[connections]]`, `[[inputs]]`, `[[bonds]]`, `[outputs]`, `[live]`, `[tune]`),
//! unknown keys refused everywhere (`deny_unknown_fields`). Every front end reads into it or
//! writes from it:
//!
//! - the TOML reader ([`super::SystemBuilder::parse`]) deserializes the file into it;
//! - the SSP annotation (`ssp::annotation`) is written by serializing the part SSP 1.0 cannot
//!   carry and read back by deserialization;
//! - Python (`cosim.System`, a plain dict) is deserialized into it (`python/src/lib.rs`);
//! - `cosim tune` edits the typed value ([`super::SystemBuilder`]) and writes recommended.toml
//!   from it.
//!
//! The entries of its lists and tables are the builder's drafts ([`InstanceDraft`],
//! [`ConnectionDraft`], [`InputDraft`], [`BondDraft`], [`PortDraft`]): a system built in code
//! fills the same types. Every value is checked when the system is built (`system::resolve`).
//!
//! **Adding a key**: a field with its doc here (or in [`super::Settings`] for `[simulation]`),
//! and its use in `resolve`.

use super::settings::Settings;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A whole system file (field = table).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemFile {
    /// `[simulation]`: the settings of a run.
    #[serde(default, skip_serializing_if = "Settings::is_empty")]
    pub simulation: Settings,
    /// `[instances.NAME]`: the FMU instances by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub instances: BTreeMap<String, InstanceDraft>,
    /// `[[connections]]`: output → input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ConnectionDraft>,
    /// `[[inputs]]`: inputs driven by time tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputDraft>,
    /// `[[bonds]]`: power bonds between two ports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bonds: Vec<BondDraft>,
    /// `[outputs]`: the recorded variables (default: every output of every instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Outputs>,
    /// `[live]`: inputs and outputs served while the run goes ([`crate::live`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<crate::live::LiveSpec>,
    /// `[tune]`: read by `cosim tune`, ignored by `cosim run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneTable>,
}

impl SystemFile {
    /// Reads TOML text; `Err`: (key, message) — the key where the error is (`simulation.exchange`,
    /// `connections[1].gian`), the message with line and column of the text.
    pub fn from_toml(text: &str) -> Result<Self, (String, String)> {
        Self::from_toml_at(text).map_err(|e| {
            let at = e.at.map_or_else(String::new, |(line, column)| format!(" (line {line}, column {column})"));
            (e.key, e.message + &at)
        })
    }

    /// From TOML text; `Err`: the key where the error is, the message (an unknown key with the
    /// nearest known key instead of the list of them, when one is close) and the line and column
    /// (1-based) where the error is in `text`.
    pub fn from_toml_at(text: &str) -> Result<Self, TomlError> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| s.start);
            let key = at
                .and_then(|at| key_at(text, at))
                .or_else(|| e.span().map(|s| format!("bytes {}..{}", s.start, s.end)))
                .unwrap_or_default();
            TomlError { key, message: suggest_field(e.message()), at: at.map(|at| line_column(text, at)) }
        })
    }

    /// The TOML text of this value (keys not given left out).
    pub fn to_toml(&self) -> Result<String, String> {
        toml::to_string(self).map_err(|e| e.to_string())
    }

    /// A value with every field given, from the type itself (see [`Settings::every_field_set`]):
    /// tests check that each front end carries every key.
    #[doc(hidden)]
    pub fn every_field_set() -> Result<Self, String> {
        super::settings::fill::every_field_set()
    }

    /// From any TOML value (a table, e.g. converted from Python); `Err`: `key: message`, the
    /// key where the error is (an unknown key, a value of the wrong type).
    pub fn from_value(v: toml::Value) -> Result<Self, String> {
        let text = toml::to_string(&v).map_err(|e| e.to_string())?;
        Self::from_toml(&text).map_err(|(key, message)| {
            // The line and column are those of the text made here, not the user's: left out.
            let message = message.split(" (line ").next().unwrap_or_default().trim();
            if key.is_empty() {
                message.to_owned()
            } else {
                format!("{key}: {message}")
            }
        })
    }
}

/// The key at byte `offset` of TOML `text` (`simulation.exchange`, `bonds[0].ports`,
/// `instances.m1.step`): the key of its line within the table header above it (`[[t]]` headers
/// counted for the index); `None` outside a `key = value` line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset.min(text.len()))?;
    let start = before.rfind('\n').map_or(0, |k| k + 1);
    let line = text[start..].lines().next().unwrap_or_default();
    let header = |l: &str| l.trim_start().starts_with('[');
    let key = if header(line) { None } else { Some(line.split_once('=')?.0.trim().trim_matches('"').to_owned()) };
    let mut table: Option<String> = None;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for l in text[..start].lines().map(str::trim).filter(|l| header(l)) {
        let name = l.trim_start_matches('[').split(']').next().unwrap_or_default().trim().to_owned();
        if l.starts_with("[[") {
            let k = counts.entry(name.clone()).or_insert(0);
            table = Some(format!("{name}[{}]", *k));
            *k += 1;
        } else {
            table = Some(name);
        }
    }
    if header(line) {
        let name = line.trim().trim_start_matches('[').split(']').next().unwrap_or_default().trim();
        return Some(name.to_owned());
    }
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, k) => k,
        (Some(t), None) => Some(t),
    }
}

/// The line (1-based) in TOML `text` of `key` (`connections[0].to`, `instances.m1.fmu`): of its
/// `key = value` line or table header, else of the nearest enclosing one that is written
/// (`bonds[0].ports[1].instance`: the line of `bonds[0].ports`); `None` when there is none.
pub(crate) fn key_line(text: &str, key: &str) -> Option<usize> {
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    let mut table: Option<String> = None;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        let k = if l.starts_with('[') {
            let name = l.trim_start_matches('[').split(']').next().unwrap_or_default().trim().to_owned();
            table = Some(if l.starts_with("[[") {
                let n = counts.entry(name.clone()).or_insert(0);
                *n += 1;
                format!("{name}[{}]", *n - 1)
            } else {
                name
            });
            table.clone()
        } else if let Some((k, _)) = l.split_once('=') {
            let k = k.trim().trim_matches('"');
            Some(table.as_ref().map_or_else(|| k.to_owned(), |t| format!("{t}.{k}")))
        } else {
            None
        };
        if let Some(k) = k {
            lines.entry(k).or_insert(i + 1);
        }
    }
    let mut key = key;
    loop {
        if let Some(line) = lines.get(key) {
            return Some(*line);
        }
        key = &key[..key.rfind(['.', '['])?];
    }
}

/// An error reading a system file's TOML text ([`SystemFile::from_toml_at`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TomlError {
    /// The key where the error is (`simulation.stpe`, `connections[0].from`).
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// Line and column (1-based) in the text.
    pub at: Option<(usize, usize)>,
}

/// serde's "unknown field `stpe`, expected one of `start`, `stop`, `step`, …" as "unknown field
/// `stpe`; did you mean \"step\"?" when a known field is close (the same for an unknown variant:
/// a misspelt keyword value); unchanged otherwise.
fn suggest_field(message: &str) -> String {
    let Some((what, rest)) = message.split_once(" `") else { return message.to_owned() };
    if what != "unknown field" && what != "unknown variant" {
        return message.to_owned();
    }
    let Some((name, expected)) = rest.split_once('`') else { return message.to_owned() };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let hint = crate::suggest::did_you_mean(name, known.iter().copied());
    if hint.is_empty() {
        message.to_owned()
    } else {
        format!("{what} `{name}`{hint}")
    }
}

/// Line and column (1-based; the column counted in characters) of byte `offset` of `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(text.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// `[outputs]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outputs {
    /// `["m1.x", "m2.x"]`, or `"all"`: every output of every instance.
    pub variables: Variables,
}

/// `[outputs] variables`: `"all"` or a list of `instance.variable`.
#[derive(Debug, Clone, PartialEq)]
pub enum Variables {
    /// Every output of every instance.
    All,
    /// These variables, in this order.
    List(Vec<String>),
}

impl Outputs {
    /// The recorded variables (`None`: every output).
    pub fn list(&self) -> Option<&[String]> {
        match &self.variables {
            Variables::All => None,
            Variables::List(v) => Some(v),
        }
    }
}

impl Serialize for Variables {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::All => s.serialize_str("all"),
            Self::List(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Variables {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Variables;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"all\" or a list of \"instance.variable\"")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Variables, E> {
                match s {
                    "all" => Ok(Variables::All),
                    other => Err(E::custom(format!("\"{other}\" must be \"all\" or a list"))),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Variables, A::Error> {
                let mut v = Vec::new();
                while let Some(name) = a.next_element::<String>()? {
                    v.push(name);
                }
                Ok(Variables::List(v))
            }
        }
        // A sequence is asked for; TOML and the filler of `every_field_set` hand a string too.
        d.deserialize_seq(V)
    }
}

/// A start value as given, before the variable's type is known (checked by
/// [`super::SystemBuilder::build`] against the model description: a Real accepts an integer, an
/// enumeration accepts an item name, …).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number with a fraction or exponent.
    Real(f64),
    /// An integer.
    Integer(i64),
    /// A boolean.
    Boolean(bool),
    /// A string (also an enumeration item name).
    String(String),
    /// A TOML array: the start values of a whole array variable's elements, row-major.
    Array(Vec<Value>),
    /// A value of no FMI type (a TOML table or date), shown as written; always refused.
    Other(String),
}

impl Value {
    /// From a TOML value.
    pub fn from_toml(v: &toml::Value) -> Self {
        match v {
            toml::Value::Float(x) => Self::Real(*x),
            toml::Value::Integer(x) => Self::Integer(*x),
            toml::Value::Boolean(b) => Self::Boolean(*b),
            toml::Value::String(s) => Self::String(s.clone()),
            toml::Value::Array(items) => Self::Array(items.iter().map(Self::from_toml).collect()),
            other => Self::Other(other.to_string()),
        }
    }

    /// As a TOML value (`Other` as its text).
    pub fn to_toml(&self) -> toml::Value {
        match self {
            Self::Real(x) => toml::Value::Float(*x),
            Self::Integer(x) => toml::Value::Integer(*x),
            Self::Boolean(b) => toml::Value::Boolean(*b),
            Self::String(s) | Self::Other(s) => toml::Value::String(s.clone()),
            Self::Array(items) => toml::Value::Array(items.iter().map(Self::to_toml).collect()),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_toml().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        toml::Value::deserialize(d).map(|v| Self::from_toml(&v))
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Real(x) => write!(f, "{}", toml::Value::Float(*x)),
            Self::Integer(x) => write!(f, "{x}"),
            Self::Boolean(b) => write!(f, "{b}"),
            Self::String(s) => write!(f, "{}", toml::Value::String(s.clone())),
            Self::Array(items) => {
                f.write_str("[")?;
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Self::Other(s) => f.write_str(s),
        }
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Self::Real(x)
    }
}
impl From<i64> for Value {
    fn from(x: i64) -> Self {
        Self::Integer(x)
    }
}
impl From<i32> for Value {
    fn from(x: i32) -> Self {
        Self::Integer(i64::from(x))
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Boolean(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

/// Extrapolation of a connection as given: an order (checked to be 0..=4) or I2 with the
/// source's derivative outputs (`inst.var`). In a file: `extrapolation = 2` or
/// `extrapolation = "I2"` with the connection's `derivatives = [...]`.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtrapolationSpec {
    /// Lagrange polynomial of this order.
    Order(usize),
    /// Taylor polynomial from these derivative outputs (`None`: the connection's `derivatives`;
    /// none there: an error).
    I2(Option<Vec<String>>),
}

/// `[instances.NAME]`: an instance as given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceDraft {
    /// The FMU file (relative: to the system file's folder). Required in a system file; the SSP
    /// annotation leaves it out (the SSD names the FMU).
    #[serde(default, skip_serializing_if = "is_empty_path")]
    pub(crate) fmu: PathBuf,
    /// Own step h = H/k (s): the master sub-steps the instance (multirate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<f64>,
    /// Start values by variable name: Real, Integer, Boolean, String, an enumeration item name,
    /// a list for a whole array, a hexadecimal string for a Binary.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) start: BTreeMap<String, Value>,
    /// A Model Exchange instance's group: the instances of one group are integrated as one ODE
    /// (strong coupling, docs/model-exchange.md), whatever `[simulation] me_coupling` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) me_group: Option<String>,
}

fn is_empty_path(p: &std::path::Path) -> bool {
    p.as_os_str().is_empty()
}

impl InstanceDraft {
    /// Own step h = H / k of an instance that cannot interpolate inputs (multirate).
    pub fn step(&mut self, h: f64) -> &mut Self {
        self.step = Some(h);
        self
    }
    /// A start value (parameter or input) set before initialization.
    pub fn start(&mut self, variable: &str, value: impl Into<Value>) -> &mut Self {
        self.start.insert(variable.to_owned(), value.into());
        self
    }
    /// Puts a Model Exchange instance in group `group` (integrated as one ODE with the group's
    /// other members).
    pub fn me_group(&mut self, group: &str) -> &mut Self {
        self.me_group = Some(group.to_owned());
        self
    }
    /// The FMU file (as resolved against the source's folder).
    pub fn fmu(&self) -> &std::path::Path {
        &self.fmu
    }
    /// Points the instance at another FMU file (taken as given).
    pub fn set_fmu(&mut self, fmu: impl Into<PathBuf>) -> &mut Self {
        self.fmu = fmu.into();
        self
    }
}

/// `[[connections]]`: a connection as given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionDraft {
    /// Source output `instance.variable`.
    pub(crate) from: String,
    /// Destination input `instance.variable`.
    pub(crate) to: String,
    /// to = gain · from + offset (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gain: Option<f64>,
    /// to = gain · from + offset (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) offset: Option<f64>,
    /// An order 0..4 or `"I2"` (default: `[simulation] extrapolation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) extrapolation: Option<ExtrapolationSpec>,
    /// I2: the source's derivative outputs ds/dt, d²s/dt², … (`instance.variable`, 1 to 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) derivatives: Option<Vec<String>>,
}

impl ConnectionDraft {
    /// to = gain · from + offset.
    pub fn gain(&mut self, gain: f64) -> &mut Self {
        self.gain = Some(gain);
        self
    }
    /// to = gain · from + offset.
    pub fn offset(&mut self, offset: f64) -> &mut Self {
        self.offset = Some(offset);
        self
    }
    /// Lagrange extrapolation of order m (0..=4) over past communication points.
    pub fn extrapolation(&mut self, m: usize) -> &mut Self {
        self.set_extrapolation(Some(ExtrapolationSpec::Order(m)))
    }
    /// I2: Taylor polynomial from the source's derivative outputs (`inst.var`, 1 to 4).
    pub fn i2<S: Into<String>>(&mut self, derivatives: impl IntoIterator<Item = S>) -> &mut Self {
        self.set_extrapolation(Some(ExtrapolationSpec::I2(Some(derivatives.into_iter().map(Into::into).collect()))))
    }
    /// The extrapolation as given (`None`: the system's default), I2 with its derivatives.
    pub fn extrapolation_spec(&self) -> Option<ExtrapolationSpec> {
        match &self.extrapolation {
            Some(ExtrapolationSpec::I2(None)) => Some(ExtrapolationSpec::I2(self.derivatives.clone())),
            other => other.clone(),
        }
    }
    /// Replaces the extrapolation (`None`: the system's default); I2's derivatives go to the
    /// connection's `derivatives`.
    pub fn set_extrapolation(&mut self, e: Option<ExtrapolationSpec>) -> &mut Self {
        match e {
            Some(ExtrapolationSpec::I2(Some(d))) => {
                self.extrapolation = Some(ExtrapolationSpec::I2(None));
                self.derivatives = Some(d);
            }
            Some(ExtrapolationSpec::I2(None)) => self.extrapolation = Some(ExtrapolationSpec::I2(None)),
            other => {
                self.extrapolation = other;
                self.derivatives = None;
            }
        }
        self
    }
    /// `inst.var` of the source.
    pub fn from(&self) -> &str {
        &self.from
    }
    /// `inst.var` of the destination.
    pub fn to(&self) -> &str {
        &self.to
    }
}

/// How a time table is read between its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    /// Right-continuous steps: each value held until the next time (`"hold"` too).
    #[default]
    #[serde(alias = "hold")]
    Step,
    /// Linear between the points.
    Linear,
}

/// `[[inputs]]`: a time table driving an input, as given: inline (`to`, `times`, `values`) or
/// from a CSV file (`file`, with `columns`, `time`, `scale`, `offset`; docs/system-description.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputDraft {
    /// The driven input `instance.variable` (an inline table).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) to: String,
    /// Times (s), strictly increasing (an inline table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) times: Vec<f64>,
    /// Values at those times (held before the first and after the last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) values: Vec<f64>,
    /// `"step"` (or `"hold"`; the default of an inline table) or `"linear"` (the default of a
    /// file's Real inputs, as FMPy; non-Real inputs are always held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) interpolation: Option<Interpolation>,
    /// A CSV file (relative: to the system file's folder): a time column and one column per
    /// input; a repeated time is a discontinuity; values held before the first and after the
    /// last row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<PathBuf>,
    /// The file's column of each driven input, `{ "hyd.U_ref" = "U" }` (default: every column
    /// named `instance.variable` of an input).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) columns: BTreeMap<String, String>,
    /// The file's time column (default: the first column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) time: Option<String>,
    /// input = scale · column + offset (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scale: Option<f64>,
    /// input = scale · column + offset (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) offset: Option<f64>,
}

impl InputDraft {
    /// Linear interpolation between the points (default: right-continuous steps).
    pub fn linear(&mut self) -> &mut Self {
        self.interpolation = Some(Interpolation::Linear);
        self
    }
    /// Whether the table is interpolated linearly (a file's by default).
    pub fn is_linear(&self) -> bool {
        self.interpolation.unwrap_or(if self.file.is_some() { Interpolation::Linear } else { Interpolation::Step })
            == Interpolation::Linear
    }
    /// A table read from the CSV file at `path` (`columns` as [`Self::column`] gives them).
    pub fn from_file(path: impl Into<PathBuf>) -> Self {
        Self { file: Some(path.into()), ..Self::default() }
    }
    /// Drives input `to` (`instance.variable`) from the file's column `column`.
    pub fn column(&mut self, to: &str, column: &str) -> &mut Self {
        self.columns.insert(to.to_owned(), column.to_owned());
        self
    }
    /// The file's time column (default: the first).
    pub fn time_column(&mut self, name: &str) -> &mut Self {
        self.time = Some(name.to_owned());
        self
    }
    /// input = scale · column + offset.
    pub fn scale_offset(&mut self, scale: f64, offset: f64) -> &mut Self {
        (self.scale, self.offset) = (Some(scale), Some(offset));
        self
    }
    /// Held values (steps), not linear interpolation.
    pub fn hold(&mut self) -> &mut Self {
        self.interpolation = Some(Interpolation::Step);
        self
    }
    /// The CSV file, if the table is read from one.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }
    /// Points the table at another file (taken as given).
    pub fn set_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.file = Some(path.into());
        self
    }
    /// `inst.var` of the driven input.
    pub fn to(&self) -> &str {
        &self.to
    }
    /// The times (s).
    pub fn times(&self) -> &[f64] {
        &self.times
    }
    /// The values at those times.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
}

/// One port of a bond as given: power into `instance` = sign · effort · flow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortDraft {
    /// The instance.
    pub(crate) instance: String,
    /// Effort variable (force, pressure): a Real input or output.
    pub(crate) effort: String,
    /// Flow variable (velocity, volume flow): a Real input or output.
    pub(crate) flow: String,
    /// +1 (default) or −1: power flowing into the instance is positive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sign: Option<f64>,
}

impl PortDraft {
    /// A port with sign +1.
    pub fn new(instance: &str, effort: &str, flow: &str) -> Self {
        Self { instance: instance.into(), effort: effort.into(), flow: flow.into(), sign: None }
    }
    /// +1 or −1 (power flowing into the instance is positive).
    pub fn sign(mut self, sign: f64) -> Self {
        self.sign = Some(sign);
        self
    }
}

super::settings::with_bond_settings! {
    /// `[[bonds]]`: a power bond as given, with its own energy correction settings (the same
    /// keys as `[simulation]`'s, [`super::BondSettings`]; `None`: `[simulation]`'s).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct BondDraft {
        /// Name (column prefix in bonds.csv; unique).
        pub(crate) name: String,
        /// The two ports.
        pub(crate) ports: Vec<PortDraft>,
        ;
    }
}

impl BondDraft {
    /// A bond between ports `a` and `b`, no own settings.
    pub fn new(name: &str, a: PortDraft, b: PortDraft) -> Self {
        Self { name: name.to_owned(), ports: vec![a, b], ..Self::default() }
    }
}

/// `[tune]`: the sweep of `cosim tune` (docs/system-description.md; its values are checked by
/// `cosim tune`, which interprets them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneTable {
    /// External inputs replaced by the test functions (`instance.variable`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// v_min, v_max of an input (default: the variable's min/max).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub range: BTreeMap<String, [f64; 2]>,
    /// Smallest communication step of the sweep (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h_ini: Option<f64>,
    /// Increment of the step (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h_inc: Option<f64>,
    /// Largest step: the sweep stops there (s; default 10 h_ini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h_max: Option<f64>,
    /// Nominal test length T (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Sinusoids over this many periods (default: ⌈f·T⌉).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sine_periods: Option<u32>,
    /// Test functions: `"step"`, `"ramp"`, `"impulse:0.4"`, `"sin:17.5"`, `"free"`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
    /// Connections (by destination) whose extrapolation is swept (default: every Real one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extrapolate: Option<Vec<String>>,
    /// Variables the verification compares (default: `[outputs]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<Vec<String>>,
    /// Verification: largest error relative to the reference's range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Verification reference: another system file (its `[[inputs]]` drive the same cycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The reference's variables, one per `compare` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_compare: Option<Vec<String>>,
    /// `[tune.space]`: the axes of the configuration space (`extrapolation`, `inst.var`,
    /// `"a.x,b.x"`, `simulation.<key>`) with their values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub space: BTreeMap<String, toml::Value>,
    /// `[tune.i2]`: derivative outputs for I2, per swept connection (by destination).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub i2: BTreeMap<String, Vec<String>>,
    /// Stability criterion: κ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
    /// Stability criterion: largest residual power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_max: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_key_it_is_at() {
        let text = "[simulation]\nexchange = \"implicit\"\n[[bonds]]\nname = \"a\"\nports = []\n[[bonds]]\nname = \"b\"\nenergy_corection = true\n";
        let (key, message) = SystemFile::from_toml(text).unwrap_err();
        assert_eq!(key, "simulation.exchange", "{message}");
        assert!(message.contains("implicit") && message.contains("line 2"), "{message}");
        let (key, message) = SystemFile::from_toml(&text.replace("implicit", "explicit")).unwrap_err();
        assert_eq!(key, "bonds[1].energy_corection", "{message}");
        let v: toml::Value = toml::from_str(&text.replace("implicit", "explicit")).unwrap();
        let e = SystemFile::from_value(v).unwrap_err();
        assert!(e.starts_with("bonds[1].energy_corection: unknown field `energy_corection`"), "{e}");
        assert!(!e.contains("line"), "no line of a text the user did not write: {e}");
    }

    #[test]
    fn an_unknown_key_gets_the_nearest_key_instead_of_the_list() {
        let e = SystemFile::from_toml_at("[simulation]\nstop = 1.0\n  stpe = 0.1\n").unwrap_err();
        assert_eq!(e.key, "simulation.stpe");
        assert_eq!(e.message, "unknown field `stpe`; did you mean \"step\"?");
        assert_eq!(e.at, Some((3, 3)));
        // Nothing close: the list stays.
        let e = SystemFile::from_toml_at("[simulation]\nzzzqqq = 1\n").unwrap_err();
        assert!(e.message.starts_with("unknown field `zzzqqq`, expected one of `start`"), "{}", e.message);
        // A misspelt keyword value.
        let e = SystemFile::from_toml_at("[simulation]\nalgorithm = \"jacobbi\"\n").unwrap_err();
        assert_eq!((e.message.as_str(), e.at), ("unknown variant `jacobbi`; did you mean \"jacobi\"?", Some((2, 13))));
        // The line of a key checked later (resolve): its own, else its table's.
        let text = "[simulation]\nstop = 1.0\n[instances.m1]\nfmu = \"a.fmu\"\n[[connections]]\nfrom = \"a.x\"\n\
                    [[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n";
        assert_eq!(key_line(text, "connections[1].to"), Some(9));
        assert_eq!(key_line(text, "connections[0].to"), Some(5), "not given: the table's header");
        assert_eq!(key_line(text, "instances.m1.fmu"), Some(4));
        assert_eq!(key_line(text, "simulation.step"), Some(1));
        assert_eq!((key_line(text, "--step"), key_line(text, "connections")), (None, None));
        // Columns count characters, not bytes.
        assert_eq!(line_column("ä = 1\nöö = 2", 11), (2, 3));
    }
}
