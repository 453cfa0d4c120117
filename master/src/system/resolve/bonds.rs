//! The `[[bonds]]`: two Real ports each, unique names, and each bond's energy correction.

use super::*;

impl Resolver<'_> {
    /// The `[[bonds]]`: two ports each, unique names, and each bond's energy correction (the
    /// command line's, the bond's own, then `[simulation]`'s).
    pub(super) fn bonds(&self, sim: &Settings, given: &Settings) -> Result<Vec<Bond>> {
        let mut bonds = Vec::new();
        let mut bond_names = std::collections::HashMap::new();
        for (b, given_bond) in self.b.bonds.iter().enumerate() {
            let (bond_name, ports_given) = (&given_bond.name, &given_bond.ports);
            let key = format!("bonds[{b}]");
            // bonds.csv has one column group per name, summary.json one entry.
            if let Some(first) = bond_names.insert(bond_name.as_str(), b) {
                return Err(self.err(
                    format!("{key}.name"),
                    format!("bond name \"{bond_name}\" is already used by bonds[{first}]: bond names must be unique"),
                ));
            }
            if ports_given.len() != 2 {
                return Err(self.err(format!("{key}.ports"), format!("a bond has 2 ports, got {}", ports_given.len())));
            }
            let mut ports = Vec::new();
            for (p, rp) in ports_given.iter().enumerate() {
                let k = format!("{key}.ports[{p}]");
                let i = self.instance(&format!("{k}.instance"), &rp.instance)?;
                let effort = self.variable_of(&format!("{k}.effort"), i, &rp.effort)?;
                let flow = self.variable_of(&format!("{k}.flow"), i, &rp.flow)?;
                for v in [&effort, &flow] {
                    if v.ty != BaseType::Real || !matches!(v.causality, Causality::Input | Causality::Output) {
                        return Err(self.err(&k, format!("{} must be a Real input or output", v.name)));
                    }
                }
                let sign = rp.sign.unwrap_or(1.0);
                if sign != 1.0 && sign != -1.0 {
                    return Err(self.err(format!("{k}.sign"), format!("{sign} must be 1 or -1")));
                }
                ports.push(Port { effort, flow, sign });
            }
            let [a, b2]: [Port; 2] = ports.try_into().map_err(|_| self.err(&key, "a bond has 2 ports"))?;
            // The command line's energy correction and law win over the bond's own, which wins
            // over `[simulation]`'s (gain and floor: the bond's own over the settings').
            let own = given_bond.bond_settings();
            let forced = BondSettings {
                energy_correction: given.energy_correction,
                energy_correction_law: given.energy_correction_law,
                ..BondSettings::default()
            };
            let s = forced.over(own).over(sim.bond_settings());
            let energy_correction = s.energy_correction.unwrap_or(false);
            let correction = EnergyCorrection {
                law: s.energy_correction_law.unwrap_or_default(),
                gain: s.energy_correction_gain.unwrap_or(1.0),
                flow_floor: s.energy_correction_flow.unwrap_or(0.0),
            };
            let (gain_key, flow_key) = if own.energy_correction_gain.is_some() || own.energy_correction_flow.is_some() {
                (format!("{key}.energy_correction_gain"), format!("{key}.energy_correction_flow"))
            } else {
                ("simulation.energy_correction_gain".into(), "simulation.energy_correction_flow".into())
            };
            if !(correction.gain.is_finite() && correction.gain >= 0.0) {
                return Err(self.err(gain_key, format!("{} must be finite and non-negative", correction.gain)));
            }
            if !(correction.flow_floor.is_finite() && correction.flow_floor >= 0.0) {
                return Err(self.err(flow_key, format!("{} must be finite and non-negative", correction.flow_floor)));
            }
            bonds.push(Bond { name: bond_name.clone(), ports: [a, b2], energy_correction, correction });
        }
        Ok(bonds)
    }
}
