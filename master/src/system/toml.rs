//! The TOML front end: a system file read into a [`SystemBuilder`] (syntax errors and unknown
//! keys with line and column; values of the wrong TOML type with their key). Everything else is
//! checked by [`SystemBuilder::build`], the same checks as for a system built in code.

use super::builder::{ExtrapolationSpec, PortDraft, SystemBuilder, Value};
use super::{CorrectionLaw, Settings};
use crate::error::{MasterError, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSystem {
    simulation: Settings,
    instances: BTreeMap<String, RawInstance>,
    #[serde(default)]
    connections: Vec<RawConnection>,
    #[serde(default)]
    inputs: Vec<RawSignal>,
    #[serde(default)]
    bonds: Vec<RawBond>,
    #[serde(default)]
    outputs: Option<RawOutputs>,
    /// `[tune]`: read by `cosim tune` ([`crate::tune`]), ignored by `cosim run`.
    #[serde(default)]
    tune: Option<toml::Value>,
    /// `[live]`: inputs and outputs served while the run goes ([`crate::live`]).
    #[serde(default)]
    live: Option<crate::live::LiveSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInstance {
    fmu: PathBuf,
    #[serde(default)]
    step: Option<f64>,
    #[serde(default)]
    start: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSignal {
    pub(crate) to: String,
    pub(crate) times: Vec<f64>,
    pub(crate) values: Vec<f64>,
    #[serde(default)]
    pub(crate) interpolation: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConnection {
    from: String,
    to: String,
    #[serde(default)]
    gain: Option<f64>,
    #[serde(default)]
    offset: Option<f64>,
    #[serde(default)]
    extrapolation: Option<toml::Value>,
    #[serde(default)]
    derivatives: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBond {
    pub(crate) name: String,
    pub(crate) ports: Vec<RawPort>,
    #[serde(default)]
    pub(crate) energy_correction: Option<bool>,
    #[serde(default)]
    pub(crate) energy_correction_law: Option<String>,
    #[serde(default)]
    pub(crate) energy_correction_gain: Option<f64>,
    #[serde(default)]
    pub(crate) energy_correction_flow: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPort {
    pub(crate) instance: String,
    pub(crate) effort: String,
    pub(crate) flow: String,
    #[serde(default)]
    pub(crate) sign: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputs {
    variables: toml::Value,
}

fn line_col(text: &str, offset: Option<usize>) -> String {
    let Some(off) = offset else { return String::new() };
    let before = &text[..off.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(" (line {line}, column {col})")
}

fn start_value(v: &toml::Value) -> Value {
    match v {
        toml::Value::Float(x) => Value::Real(*x),
        toml::Value::Integer(x) => Value::Integer(*x),
        toml::Value::Boolean(b) => Value::Boolean(*b),
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Array(items) => Value::Array(items.iter().map(start_value).collect()),
        other => Value::Other(other.to_string()),
    }
}

/// `extrapolation = m | "I2"` of a system file (with the connection's `derivatives`); `Err`:
/// the message.
pub(crate) fn extrapolation_spec(
    v: &toml::Value,
    derivatives: Option<&Vec<String>>,
) -> Result<ExtrapolationSpec, String> {
    match v {
        toml::Value::Integer(m) if *m >= 0 => Ok(ExtrapolationSpec::Order(usize::try_from(*m).unwrap_or(usize::MAX))),
        toml::Value::String(s) if s == "I2" => Ok(ExtrapolationSpec::I2(derivatives.cloned())),
        other => Err(format!("extrapolation = {other} must be an integer 0..4 or \"I2\"")),
    }
}

/// `[[inputs]]` and `[[bonds]]` into the builder; `Err`: (key, message).
pub(crate) fn add_inputs_and_bonds(
    b: &mut SystemBuilder,
    inputs: &[RawSignal],
    bonds: &[RawBond],
) -> std::result::Result<(), (String, String)> {
    for (k, rs) in inputs.iter().enumerate() {
        let linear = match rs.interpolation.as_deref() {
            None | Some("step") => false,
            Some("linear") => true,
            Some(other) => {
                return Err((
                    format!("inputs[{k}].interpolation"),
                    format!("\"{other}\" is not \"step\" or \"linear\""),
                ))
            }
        };
        b.input(&rs.to, rs.times.clone(), rs.values.clone()).linear = linear;
    }
    for (k, rb) in bonds.iter().enumerate() {
        let ports = rb
            .ports
            .iter()
            .map(|p| PortDraft {
                instance: p.instance.clone(),
                effort: p.effort.clone(),
                flow: p.flow.clone(),
                sign: p.sign,
            })
            .collect();
        b.bonds.push((rb.name.clone(), ports));
        if let Some(on) = rb.energy_correction {
            b.bond_energy_correction(&rb.name, on);
        }
        let law = match &rb.energy_correction_law {
            Some(l) => Some(CorrectionLaw::parse(l).map_err(|m| (format!("bonds[{k}].energy_correction_law"), m))?),
            None => None,
        };
        if law.is_some() || rb.energy_correction_gain.is_some() || rb.energy_correction_flow.is_some() {
            b.bond_correction_law(&rb.name, law, rb.energy_correction_gain, rb.energy_correction_flow);
        }
    }
    Ok(())
}

impl SystemBuilder {
    /// Reads a system file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = read_text(path)?;
        Self::parse(path, &text)
    }
}

/// The text of a system file; an FMU or an SSP given instead is named as such.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| {
        // An FMU or an SSP where a system file is wanted (`export-ssp`, `tune`, `bench`): say
        // so, instead of "stream did not contain valid UTF-8" (issue 30 item 17).
        let kind = match crate::input_kind::detect(path) {
            Ok(crate::input_kind::Input::Fmu) => Some("an FMU"),
            Ok(crate::input_kind::Input::Ssp) => Some("an SSP"),
            _ => None,
        };
        match kind {
            Some(kind) => MasterError::Unsupported {
                path: path.to_path_buf(),
                message: format!(
                    "this is {kind}, and this command takes a system file (TOML); `cosim run` runs FMUs \
                         and SSPs, and a system file names them in [instances]"
                ),
            },
            None => MasterError::Io { path: path.to_path_buf(), source },
        }
    })
}

impl SystemBuilder {
    /// Parses system text (`path` names it in messages; FMU paths are relative to its folder).
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let raw: RawSystem = toml::from_str(text).map_err(|e| MasterError::System {
            path: path.to_path_buf(),
            key: e.span().map(|s| format!("bytes {}..{}", s.start, s.end)).unwrap_or_default(),
            message: e.message().to_owned() + &line_col(text, e.span().map(|s| s.start)),
        })?;
        let err =
            |key: &str, message: String| MasterError::System { path: path.to_path_buf(), key: key.into(), message };
        let extrapolation = |key: &str, v: &toml::Value, derivatives: Option<&Vec<String>>| {
            extrapolation_spec(v, derivatives).map_err(|m| err(key, m))
        };
        let mut b = SystemBuilder::new();
        b.source(path);
        b.settings = raw.simulation;
        for (name, ri) in &raw.instances {
            if ri.fmu.to_string_lossy().contains('\0') {
                return Err(err(&format!("instances.{name}.fmu"), "the path contains a NUL character".into()));
            }
            let inst = b.instance(name, &ri.fmu);
            inst.step = ri.step;
            inst.starts = ri.start.iter().map(|(k, v)| (k.clone(), start_value(v))).collect();
        }
        for (c, rc) in raw.connections.iter().enumerate() {
            let e = rc
                .extrapolation
                .as_ref()
                .map(|v| extrapolation(&format!("connections[{c}].extrapolation"), v, rc.derivatives.as_ref()))
                .transpose()?;
            let conn = b.connect(&rc.from, &rc.to);
            conn.gain = rc.gain;
            conn.offset = rc.offset;
            conn.extrapolation = e;
        }
        add_inputs_and_bonds(&mut b, &raw.inputs, &raw.bonds).map_err(|(key, m)| err(&key, m))?;
        b.outputs = match raw.outputs.as_ref().map(|o| &o.variables) {
            None => None,
            Some(toml::Value::String(s)) if s == "all" => None,
            Some(toml::Value::Array(items)) => {
                let mut v = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let name = item
                        .as_str()
                        .ok_or_else(|| err(&format!("outputs.variables[{k}]"), format!("{item} is not a string")))?;
                    v.push(name.to_owned());
                }
                Some(v)
            }
            Some(other) => return Err(err("outputs.variables", format!("{other} must be \"all\" or a list"))),
        };
        b.tune = raw.tune;
        b.live = raw.live;
        Ok(b)
    }
}
