//! The run's settings that stand alone: the worker timeout, the divergence bound, iterative
//! coupling, the Gauss-Seidel order, the system-wide energy correction and real-time pacing.

use super::*;

impl Resolver<'_> {
    /// `[simulation] worker_timeout` (s), checked.
    pub(super) fn worker_timeout(&self, sim: &Settings) -> Result<f64> {
        let worker_timeout = sim.worker_timeout.unwrap_or(crate::fmu::isolated::DEFAULT_WORKER_TIMEOUT.as_secs_f64());
        // Up to about 30 years: Duration::from_secs_f64 must not overflow.
        if !(worker_timeout > 0.0 && worker_timeout <= 1e9) {
            return Err(
                self.err("simulation.worker_timeout", format!("{worker_timeout} s must be positive and at most 1e9 s"))
            );
        }
        Ok(worker_timeout)
    }

    /// `[simulation] max_residual_energy` (J), checked.
    pub(super) fn max_residual_energy(&self, sim: &Settings) -> Result<Option<f64>> {
        let max_residual_energy = sim.max_residual_energy;
        if let Some(e) = max_residual_energy {
            if !(e.is_finite() && e > 0.0) {
                return Err(self.err("simulation.max_residual_energy", format!("{e} J must be positive and finite")));
            }
        }
        Ok(max_residual_energy)
    }

    /// `[simulation] iterations` and `iteration_tolerance`, checked against the scheme and the
    /// instances (iterating needs FMU states).
    pub(super) fn iterations(&self, sim: &Settings, algorithm: AlgorithmKind) -> Result<(u32, f64)> {
        // 0 is refused by `Settings::check_values`.
        let iterations = sim.iterations.unwrap_or(1).max(1);
        let iteration_tolerance = sim.iteration_tolerance.unwrap_or(1e-9);
        if !(iteration_tolerance.is_finite() && iteration_tolerance > 0.0) {
            return Err(self
                .err("simulation.iteration_tolerance", format!("{iteration_tolerance} must be positive and finite")));
        }
        if iterations > 1 {
            if algorithm != AlgorithmKind::Jacobi {
                return Err(self.err(
                    "simulation.iterations",
                    format!(
                        "iterations = {iterations}: iterative coupling is a Jacobi scheme, the {} algorithm would \
                         ignore it; use algorithm = \"jacobi\" or iterations = 1",
                        algorithm.name()
                    ),
                ));
            }
            // Each pass restores the states saved before the step: the flag of the interface each
            // instance runs as (a Model Exchange instance's integrator state is cosim's own).
            use crate::host::Interface;
            let asked = sim.interface.map(InterfaceKind::interface);
            let mut stateless = Vec::new();
            let mut elements = Vec::new();
            let mut hint = "";
            for (n, md) in self.names.iter().zip(self.mds) {
                let (cs, me) = (md.co_simulation.as_ref(), md.model_exchange.as_ref());
                let (cs_states, me_states) =
                    (cs.is_some_and(|c| c.can_get_and_set_fmu_state), me.is_some_and(|m| m.can_get_and_set_fmu_state));
                let (states, element, other) = match Interface::used(asked, cs.is_some(), me.is_some()) {
                    Some(Interface::CoSimulation) => (cs_states, "<CoSimulation>", me_states),
                    Some(Interface::ModelExchange) => (me_states, "<ModelExchange>", cs_states),
                    // Loading the FMU refuses it, naming the interface.
                    None => (true, "", false),
                };
                if !states {
                    stateless.push(format!("{n} ({})", md.model_name));
                    if !elements.contains(&element) {
                        elements.push(element);
                    }
                    if other {
                        hint = if element == "<CoSimulation>" {
                            " (or run it as Model Exchange, whose element declares it: [simulation] interface = \"me\")"
                        } else {
                            " (or run it as Co-Simulation, whose element declares it: [simulation] interface = \"cs\")"
                        };
                    }
                }
            }
            if !stateless.is_empty() {
                return Err(self.err(
                    "simulation.iterations",
                    format!(
                        "iterations = {iterations} repeats each step from saved FMU states, but {} cannot get and \
                         set FMU states (canGetAndSetFMUstate is not \"true\" in {} of modelDescription.xml, the \
                         interface it runs as); use iterations = 1{hint}",
                        stateless.join(", "),
                        elements.join(" / ")
                    ),
                ));
            }
        }
        Ok((iterations, iteration_tolerance))
    }

    /// `[simulation] order` (Gauss-Seidel): every instance once, as indices.
    pub(super) fn order(&self, sim: &Settings) -> Result<Option<Vec<usize>>> {
        Ok(match &sim.order {
            None => None,
            Some(names) => {
                let mut idx = Vec::new();
                for n in names {
                    let i = self.instance("simulation.order", n)?;
                    if idx.contains(&i) {
                        return Err(self.err("simulation.order", format!("instance \"{n}\" is listed twice")));
                    }
                    idx.push(i);
                }
                if idx.len() != self.names.len() {
                    let missing: Vec<&str> =
                        (0..self.names.len()).filter(|i| !idx.contains(i)).map(|i| self.names[i].as_str()).collect();
                    return Err(self.err("simulation.order", format!("missing instances: {}", missing.join(", "))));
                }
                Some(idx)
            }
        })
    }

    /// The system-wide energy correction, checked; a per-bond setting must name a bond.
    pub(super) fn energy_correction(&self, sim: &Settings) -> Result<EnergyCorrection> {
        if let Some(key) = self.b.unknown_bonds.first() {
            let name = key.split('.').nth(1).unwrap_or_default();
            return Err(self.err(key, format!("no bond named \"{name}\"")));
        }
        let energy_correction = EnergyCorrection {
            law: sim.energy_correction_law.unwrap_or_default(),
            gain: sim.energy_correction_gain.unwrap_or(1.0),
            flow_floor: sim.energy_correction_flow.unwrap_or(0.0),
        };
        if !(energy_correction.gain.is_finite() && energy_correction.gain >= 0.0) {
            return Err(self.err(
                "simulation.energy_correction_gain",
                format!("{} must be finite and non-negative", energy_correction.gain),
            ));
        }
        if !(energy_correction.flow_floor.is_finite() && energy_correction.flow_floor >= 0.0) {
            return Err(self.err(
                "simulation.energy_correction_flow",
                format!("{} must be finite and non-negative", energy_correction.flow_floor),
            ));
        }
        Ok(energy_correction)
    }

    /// How the run is paced ([`crate::realtime`]): `None` as fast as possible. A lateness limit
    /// or priority without a factor means real time (factor 1).
    pub(super) fn real_time(&self, sim: &Settings) -> Result<Option<crate::realtime::RealTime>> {
        let priority = sim.real_time_priority.unwrap_or(false);
        if sim.real_time.is_none() && sim.max_lateness.is_none() && !priority {
            return Ok(None);
        }
        let rt = crate::realtime::RealTime {
            factor: sim.real_time.unwrap_or(1.0),
            max_lateness: sim.max_lateness,
            priority,
            timing_csv: None,
        };
        rt.check().map_err(|(key, message)| self.err(format!("simulation.{key}"), message))?;
        Ok(Some(rt))
    }
}
