//! Our own SSP annotation (`type="org.hydraulic-cosim.settings"`): the settings SSP 1.0 cannot
//! carry, as TOML text in the system-file syntax (a subset of its tables):
//!
//! ```toml
//! [simulation]        # every setting of crate::system::Settings, written from and read into that
//! step = 1e-3         # one type (start/stop are written in ssd:DefaultExperiment instead)
//! [instances.hyd]
//! step = 1e-4         # own step (multirate)
//! [[connections]]     # extrapolation per connection, found by from/to (gain/offset are in the
//! from = "m2.x"       # connection's ssc:LinearTransformation)
//! to = "m1.xi"
//! extrapolation = 2
//! [[inputs]]          # time tables, [[bonds]], [outputs], [tune], [live]: as in the system file
//! ```

use crate::system::toml::{self as system_toml, RawBond, RawSignal};
use crate::system::{ExtrapolationSpec, Settings, SystemBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// The `type` of our annotation.
pub const TYPE: &str = "org.hydraulic-cosim.settings";
/// The namespace of the element inside it.
pub const NS: &str = "https://example.invalid/hydraulic-cosim/ssp/settings/1.0";

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    simulation: Settings,
    #[serde(default)]
    instances: BTreeMap<String, RawInstance>,
    #[serde(default)]
    connections: Vec<RawConnection>,
    #[serde(default)]
    inputs: Vec<RawSignal>,
    #[serde(default)]
    bonds: Vec<RawBond>,
    #[serde(default)]
    outputs: Option<RawOutputs>,
    #[serde(default)]
    tune: Option<Value>,
    #[serde(default)]
    live: Option<crate::live::LiveSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInstance {
    step: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConnection {
    from: String,
    to: String,
    extrapolation: Value,
    derivatives: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputs {
    variables: Vec<String>,
}

fn extrapolation_value(e: &ExtrapolationSpec) -> (Value, Option<Value>) {
    match e {
        ExtrapolationSpec::Order(m) => (Value::Integer(i64::try_from(*m).unwrap_or(i64::MAX)), None),
        ExtrapolationSpec::I2(d) => (
            Value::String("I2".into()),
            d.as_ref().map(|d| Value::Array(d.iter().map(|s| Value::String(s.clone())).collect())),
        ),
    }
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())
}

fn floats(v: &[f64]) -> Value {
    Value::Array(v.iter().map(|x| Value::Float(*x)).collect())
}

/// The settings of `b` that SSP cannot carry, as TOML text (empty tables left out).
pub fn to_toml(b: &SystemBuilder) -> String {
    let mut root = Table::new();
    // start and stop are ssd:DefaultExperiment's.
    let settings = Settings { start: None, stop: None, ..b.settings.clone() };
    let sim = settings.to_table().unwrap_or_default();
    if !sim.is_empty() {
        root.insert("simulation".into(), Value::Table(sim));
    }
    let mut instances = Table::new();
    for (name, i) in &b.instances {
        if let Some(h) = i.step {
            let mut t = Table::new();
            t.insert("step".into(), Value::Float(h));
            instances.insert(name.clone(), Value::Table(t));
        }
    }
    if !instances.is_empty() {
        root.insert("instances".into(), Value::Table(instances));
    }
    let connections: Vec<Value> = b
        .connections
        .iter()
        .filter_map(|c| {
            let (e, d) = extrapolation_value(c.extrapolation.as_ref()?);
            let mut t = Table::new();
            t.insert("from".into(), Value::String(c.from.clone()));
            t.insert("to".into(), Value::String(c.to.clone()));
            t.insert("extrapolation".into(), e);
            if let Some(d) = d {
                t.insert("derivatives".into(), d);
            }
            Some(Value::Table(t))
        })
        .collect();
    if !connections.is_empty() {
        root.insert("connections".into(), Value::Array(connections));
    }
    let inputs: Vec<Value> = b
        .inputs
        .iter()
        .map(|i| {
            let mut t = Table::new();
            t.insert("to".into(), Value::String(i.to.clone()));
            t.insert("times".into(), floats(&i.times));
            t.insert("values".into(), floats(&i.values));
            if i.linear {
                t.insert("interpolation".into(), Value::String("linear".into()));
            }
            Value::Table(t)
        })
        .collect();
    if !inputs.is_empty() {
        root.insert("inputs".into(), Value::Array(inputs));
    }
    let bonds: Vec<Value> = b
        .bonds
        .iter()
        .map(|(name, ports)| {
            let mut t = Table::new();
            t.insert("name".into(), Value::String(name.clone()));
            let ports = ports
                .iter()
                .map(|p| {
                    let mut pt = Table::new();
                    pt.insert("instance".into(), Value::String(p.instance.clone()));
                    pt.insert("effort".into(), Value::String(p.effort.clone()));
                    pt.insert("flow".into(), Value::String(p.flow.clone()));
                    if let Some(s) = p.sign {
                        pt.insert("sign".into(), Value::Float(s));
                    }
                    Value::Table(pt)
                })
                .collect();
            t.insert("ports".into(), Value::Array(ports));
            if let Some(on) = b.bond_corrections.get(name) {
                t.insert("energy_correction".into(), Value::Boolean(*on));
            }
            if let Some(own) = b.bond_laws.get(name) {
                if let Some(l) = own.law {
                    t.insert("energy_correction_law".into(), Value::String(l.name().into()));
                }
                if let Some(g) = own.gain {
                    t.insert("energy_correction_gain".into(), Value::Float(g));
                }
                if let Some(f) = own.flow {
                    t.insert("energy_correction_flow".into(), Value::Float(f));
                }
            }
            Value::Table(t)
        })
        .collect();
    if !bonds.is_empty() {
        root.insert("bonds".into(), Value::Array(bonds));
    }
    if let Some(o) = &b.outputs {
        let mut t = Table::new();
        t.insert("variables".into(), strings(o));
        root.insert("outputs".into(), Value::Table(t));
    }
    if let Some(tune) = &b.tune {
        root.insert("tune".into(), tune.clone());
    }
    if let Some(live) = b.live.as_ref().and_then(|l| Value::try_from(l).ok()) {
        root.insert("live".into(), live);
    }
    toml::to_string(&root).unwrap_or_default()
}

/// Applies the annotation's TOML text to `b`; errors are `(key, message)`.
pub fn apply(b: &mut SystemBuilder, text: &str) -> Result<(), (String, String)> {
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text.get(..s.start).unwrap_or("").matches('\n').count() + 1);
        (line.map_or_else(String::new, |l| format!("line {l} of the settings")), e.message().to_owned())
    })?;
    let extrapolation = |key: &str, v: &Value, derivatives: Option<&Vec<String>>| {
        system_toml::extrapolation_spec(v, derivatives).map_err(|m| (key.to_owned(), m))
    };
    b.settings = b.settings.overridden_by(&raw.simulation).map_err(|m| ("simulation".to_owned(), m))?;
    for (name, ri) in &raw.instances {
        let inst = b
            .instances
            .get_mut(name)
            .ok_or_else(|| (format!("instances.{name}"), format!("no component \"{name}\" in the system")))?;
        inst.step = ri.step.or(inst.step);
    }
    for (k, rc) in raw.connections.iter().enumerate() {
        let key = format!("connections[{k}]");
        let e = extrapolation(&format!("{key}.extrapolation"), &rc.extrapolation, rc.derivatives.as_ref())?;
        let conn =
            b.connections.iter_mut().find(|c| c.from == rc.from && c.to == rc.to).ok_or_else(|| {
                (key.clone(), format!("no ssd:Connection from {} to {} in the system", rc.from, rc.to))
            })?;
        conn.extrapolation = Some(e);
    }
    system_toml::add_inputs_and_bonds(b, &raw.inputs, &raw.bonds)?;
    if let Some(o) = raw.outputs {
        b.outputs = Some(o.variables);
    }
    if raw.tune.is_some() {
        b.tune = raw.tune;
    }
    if raw.live.is_some() {
        b.live = raw.live;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::{CorrectionLaw, EccoParams, PortDraft, StepControlKind};

    #[test]
    fn the_explicit_exchange_survives_the_annotation() {
        let mut b = SystemBuilder::new();
        b.exchange(crate::system::Exchange::Explicit);
        let text = to_toml(&b);
        assert!(text.contains("exchange = \"explicit\""), "{text}");
        let mut c = SystemBuilder::new();
        apply(&mut c, &text).unwrap();
        assert_eq!(c.settings.exchange, Some(crate::system::Exchange::Explicit), "{text}");
        let e = apply(&mut c, "[simulation]\nexchange = \"implicit\"\n").unwrap_err();
        assert!(e.0.contains("line 2") && e.1.contains("implicit"), "{e:?}");
    }

    #[test]
    fn the_live_table_survives_the_annotation() {
        let mut b = SystemBuilder::new();
        let live: crate::live::LiveSpec = toml::from_str(
            r#"
            inputs = ["hyd.U_ref"]
            outputs = ["mech.s", "hyd.p1"]
            addr = "127.0.0.1:8140"
            range = { "hyd.U_ref" = [-10.0, 10.0] }
            keys = { "hyd.U_ref" = ["ArrowUp", "ArrowDown"] }
            "#,
        )
        .unwrap();
        b.live = Some(live.clone());
        let text = to_toml(&b);
        let mut c = SystemBuilder::new();
        apply(&mut c, &text).unwrap();
        assert_eq!(c.live, Some(live), "{text}");
        // Without [live] nothing is written, and nothing is served.
        let text = to_toml(&SystemBuilder::new());
        assert!(!text.contains("live"), "{text}");
        let e = apply(
            &mut c,
            "[live]
inputs = [\"a.x\"]
port = 1
",
        )
        .unwrap_err();
        assert!(e.1.contains("unknown field `port`"), "{e:?}");
    }

    #[test]
    fn energy_based_coupling_control_survives_the_annotation() {
        let mut b = SystemBuilder::new();
        b.step(1e-3).step_control(StepControlKind::Ecco).energy_correction(true).energy_correction_law(0.5, 0.1);
        b.energy_correction_kind(CorrectionLaw::Bond);
        b.ecco(EccoParams { rtol: 1e-4, h_min: 1e-4, h_max: 5e-3, ..EccoParams::default() });
        b.bond("cyl", PortDraft::new("a", "F", "v"), PortDraft::new("b", "F", "v"));
        b.bond_energy_correction("cyl", false);
        b.bond_correction_law("cyl", Some(CorrectionLaw::Input), Some(0.8), None);
        let text = to_toml(&b);
        let mut c = SystemBuilder::new();
        apply(&mut c, &text).unwrap();
        assert_eq!(c.settings.step_control, Some(StepControlKind::Ecco), "{text}");
        assert_eq!(c.settings.ecco, b.settings.ecco, "{text}");
        assert_eq!(c.settings.energy_correction, Some(true));
        assert_eq!((c.settings.energy_correction_gain, c.settings.energy_correction_flow), (Some(0.5), Some(0.1)));
        assert_eq!(c.bond_corrections.get("cyl"), Some(&false), "{text}");
        assert_eq!(c.settings.energy_correction_law, Some(CorrectionLaw::Bond), "{text}");
        assert_eq!(c.bond_laws.get("cyl"), b.bond_laws.get("cyl"), "{text}");
        let e = apply(&mut c, "[simulation.ecco]\nrtl = 1.0\n").unwrap_err();
        assert!(e.1.contains("unknown field `rtl`"), "{e:?}");
    }
}
