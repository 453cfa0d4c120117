//! Our own SSP annotation (`type="org.hydraulic-cosim.settings"`): the settings SSP 1.0 cannot
//! carry, as TOML text of the system file's one schema ([`SystemFile`]): written by serializing
//! [`content`], read back by deserialization and put over the SSD's system ([`apply`]):
//!
//! ```toml
//! [simulation]        # every setting of crate::system::Settings (start/stop are written in
//! step = 1e-3         # ssd:DefaultExperiment instead)
//! [instances.hyd]
//! step = 1e-4         # own step (multirate)
//! [[connections]]     # extrapolation per connection, found by from/to (gain/offset are in the
//! from = "m2.x"       # connection's ssc:LinearTransformation)
//! to = "m1.xi"
//! extrapolation = 2
//! [[inputs]]          # time tables, [[bonds]], [outputs], [tune], [live]: as in the system file
//! ```

use crate::system::{SystemBuilder, SystemFile};

/// The `type` of our annotation.
pub const TYPE: &str = "org.hydraulic-cosim.settings";
/// The namespace of the element inside it.
pub const NS: &str = "https://example.invalid/hydraulic-cosim/ssp/settings/1.0";

/// The part of `b` that SSP cannot carry, as the system file's content: the settings but start
/// and stop (ssd:DefaultExperiment's), each instance's own step (not its FMU, which the SSD
/// names, nor its start values, which go to parameter bindings) and its `me_group`, each connection's
/// extrapolation (not its gain and offset: ssc:LinearTransformation), and the rest whole.
pub fn content(b: &SystemBuilder) -> SystemFile {
    let mut file = b.to_file();
    (file.simulation.start, file.simulation.stop) = (None, None);
    file.instances.retain(|_, i| i.step.is_some() || i.me_group.is_some());
    for i in file.instances.values_mut() {
        i.set_fmu("");
        i.start.clear();
    }
    file.connections.retain(|c| c.extrapolation.is_some());
    for c in &mut file.connections {
        (c.gain, c.offset) = (None, None);
    }
    file
}

/// The settings of `b` that SSP cannot carry, as TOML text (empty tables left out).
pub fn to_toml(b: &SystemBuilder) -> String {
    content(b).to_toml().unwrap_or_default()
}

/// Applies the annotation's TOML text to `b`; errors are `(key, message)`.
pub fn apply(b: &mut SystemBuilder, text: &str) -> Result<(), (String, String)> {
    let file: SystemFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text.get(..s.start).unwrap_or("").matches('\n').count() + 1);
        (line.map_or_else(String::new, |l| format!("line {l} of the settings")), e.message().to_owned())
    })?;
    let SystemFile { simulation, instances, connections, inputs, bonds, outputs, live, tune } = file;
    b.settings = b.settings.overridden_by(&simulation).map_err(|m| ("simulation".to_owned(), m))?;
    for (name, given) in &instances {
        let key = format!("instances.{name}");
        let inst =
            b.instances.get_mut(name).ok_or_else(|| (key.clone(), format!("no component \"{name}\" in the system")))?;
        if !given.fmu().as_os_str().is_empty() {
            return Err((format!("{key}.fmu"), "the SSD names the FMU of a component (ssd:Component source)".into()));
        }
        inst.step = given.step.or(inst.step);
        inst.me_group = given.me_group.clone().or(inst.me_group.take());
        inst.start.extend(given.start.clone());
    }
    for (k, given) in connections.into_iter().enumerate() {
        let key = format!("connections[{k}]");
        let conn = b
            .connections
            .iter_mut()
            .find(|c| c.from == given.from && c.to == given.to)
            .ok_or_else(|| (key, format!("no ssd:Connection from {} to {} in the system", given.from, given.to)))?;
        conn.gain = given.gain.or(conn.gain);
        conn.offset = given.offset.or(conn.offset);
        if given.extrapolation.is_some() {
            conn.set_extrapolation(given.extrapolation_spec());
        }
    }
    b.inputs.extend(inputs);
    b.bonds.extend(bonds);
    if let Some(o) = outputs {
        b.outputs = o.list().map(<[String]>::to_vec);
    }
    if tune.is_some() {
        b.tune = tune;
    }
    if live.is_some() {
        b.live = live;
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
        assert_eq!(c.bonds[0].energy_correction, Some(false), "{text}");
        assert_eq!(c.settings.energy_correction_law, Some(CorrectionLaw::Bond), "{text}");
        assert_eq!(c.bonds[0].bond_settings(), b.bonds[0].bond_settings(), "{text}");
        let e = apply(&mut c, "[simulation.ecco]\nrtl = 1.0\n").unwrap_err();
        assert!(e.1.contains("unknown field `rtl`"), "{e:?}");
    }
}
