//! The checks: a [`SystemBuilder`] validated against the model descriptions into a [`System`].
//! [`Resolver::resolve`] runs them in order, one file per part of the system file: `span` (start,
//! stop, step), `settings` (the other `[simulation]` keys, real-time pacing), `instances` (steps,
//! start values), `connections` (and the `[[inputs]]` time tables), `bonds`, `outputs`,
//! `step_control` (ECCO's grid); `tests` checks their messages.

use super::builder::SystemBuilder;
use super::schema::{ExtrapolationSpec, Value};
use super::*;
use crate::error::{MasterError, Result};
use crate::suggest::did_you_mean;
use model_description::{ModelDescription, SimpleTypeKind, VariableKind};

mod bonds;
mod connections;
mod instances;
mod outputs;
mod settings;
mod span;
mod step_control;
#[cfg(test)]
mod tests;

use span::{check_time_resolution, duration_words, Span};

impl SystemBuilder {
    /// Validates the system against the model descriptions (one per instance, in
    /// [`SystemBuilder::fmus`] order): every reference, type, causality, step and setting.
    pub fn build(&self, mds: &[&ModelDescription]) -> Result<System> {
        self.build_with(mds, &Overrides::default())
    }

    /// [`SystemBuilder::build`] with command-line overrides of the settings.
    pub fn build_with(&self, mds: &[&ModelDescription], over: &Overrides) -> Result<System> {
        if mds.len() != self.instances.len() {
            return Err(MasterError::System {
                path: self.path.clone(),
                key: "instances".into(),
                message: format!("{} instances but {} model descriptions", self.instances.len(), mds.len()),
            });
        }
        Resolver {
            b: self,
            mds,
            names: self.instances.keys().cloned().collect(),
            clocks: &[],
            given_as: &over.given_as,
        }
        .resolve(over)
    }

    /// [`SystemBuilder::build_with`] with the FMI 3.0 `<Clock>` variables of each instance's FMU
    /// (clock connections join them).
    pub(crate) fn build_with_clocks(
        &self,
        mds: &[&ModelDescription],
        clocks: &[&[model_description::Clock3]],
        over: &Overrides,
    ) -> Result<System> {
        if mds.len() != self.instances.len() {
            return self.build_with(mds, over);
        }
        Resolver { b: self, mds, names: self.instances.keys().cloned().collect(), clocks, given_as: &over.given_as }
            .resolve(over)
    }

    /// The settings a run of this system with `over` would use, each value checked alone
    /// ([`Settings::check_values`]: `cosim run --print-settings` prints nothing the run refuses);
    /// the checks against the FMUs are [`SystemBuilder::build_with`]'s.
    pub fn checked_settings(&self, over: &Overrides) -> Result<Settings> {
        Resolver { b: self, mds: &[], names: Vec::new(), clocks: &[], given_as: &over.given_as }.checked_settings(over)
    }

    /// Loads every FMU once into `fmus` and validates the system against their model
    /// descriptions ([`SystemBuilder::build_with`]).
    pub fn load(&self, fmus: &mut crate::fmu::FmuCache) -> Result<System> {
        self.load_with(fmus, &Overrides::default())
    }

    /// [`SystemBuilder::load`] with command-line overrides.
    ///
    /// An FMI 3.0 FMU with structural parameters is configured with the instance's start values
    /// of them ([`crate::fmu::Fmu::configured`]: its arrays sized by them) before the system is
    /// checked against its description.
    pub fn load_with(&self, fmus: &mut crate::fmu::FmuCache, over: &Overrides) -> Result<System> {
        let mut loaded = Vec::new();
        let mut configurations = Vec::new();
        for (name, p) in self.fmus() {
            let base = fmus.load(&p).map_err(|e| self.fmu_error(&name, e))?;
            let configuration = self.configuration(&name, base.structural())?;
            let fmu = fmus.load_configured(&p, &configuration).map_err(|e| {
                let key = format!("instances.{name}.start");
                let message = match e {
                    MasterError::Fmu { message, .. } => message,
                    e => e.to_string(),
                };
                MasterError::System { path: self.at(&key), key, message }
            })?;
            loaded.push(fmu);
            configurations.push(configuration);
        }
        let mds: Vec<&ModelDescription> = loaded.iter().map(|f| f.model_description()).collect();
        let clocks: Vec<&[model_description::Clock3]> = loaded.iter().map(|f| f.clocks()).collect();
        let mut system = self.build_with_clocks(&mds, &clocks, over)?;
        for (spec, c) in system.instances.iter_mut().zip(configurations) {
            spec.configuration = c;
        }
        Ok(system)
    }

    /// The start values of instance `name` that set its FMU's structural parameters, as
    /// integers (a whole number; anything else is an error naming the key).
    fn configuration(
        &self,
        name: &str,
        structural: &[model_description::Structural],
    ) -> Result<crate::fmu::Configuration> {
        let Some(draft) = self.instances.get(name) else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for s in structural {
            let Some(value) = draft.start.get(&s.name) else { continue };
            let v = match value {
                Value::Integer(v) => Some(i128::from(*v)),
                _ => None,
            };
            let Some(v) = v else {
                let key = format!("instances.{name}.start.{}", s.name);
                return Err(MasterError::System {
                    path: self.at(&key),
                    key,
                    message: format!(
                        "structural parameter {} is a {}: {value:?} is not an integer",
                        s.name,
                        s.ty.as_str()
                    ),
                });
            };
            out.push((s.name.clone(), v));
        }
        Ok(out)
    }
}

struct Resolver<'a> {
    b: &'a SystemBuilder,
    mds: &'a [&'a ModelDescription],
    names: Vec<String>,
    /// The `<Clock>` variables of each instance (empty without loaded FMUs).
    clocks: &'a [&'a [model_description::Clock3]],
    /// [`Overrides::given_as`].
    given_as: &'a std::collections::BTreeMap<String, String>,
}

impl Resolver<'_> {
    /// The error about `key`: a `simulation.KEY` the front end gave is named as it was given
    /// (`--set start`), without a line of the file; else the key with its line in the file.
    fn err(&self, key: impl Into<String>, message: impl Into<String>) -> MasterError {
        let key = key.into();
        if let Some(name) = key.strip_prefix("simulation.").and_then(|k| self.given_as.get(k)) {
            return MasterError::System { path: self.b.path.clone(), key: name.clone(), message: message.into() };
        }
        MasterError::System { path: self.b.at(&key), key, message: message.into() }
    }

    /// The settings with the front end's over the file's, each value checked alone.
    fn checked_settings(&self, over: &Overrides) -> Result<Settings> {
        let sim = self.b.settings.overridden_by(&over.settings).map_err(|m| self.err("simulation", m))?;
        sim.check_values().map_err(|(key, message)| self.err(format!("simulation.{key}"), message))?;
        Ok(sim)
    }

    fn instance(&self, key: &str, name: &str) -> Result<usize> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            let hint = did_you_mean(name, self.names.iter().map(String::as_str));
            self.err(key, format!("unknown instance \"{name}\" (instances: {}){hint}", self.names.join(", ")))
        })
    }

    fn variable_of(&self, key: &str, instance: usize, name: &str) -> Result<VarRef> {
        let md = self.mds[instance];
        let v = md.variable(name).ok_or_else(|| {
            self.err(
                key,
                format!(
                    "instance \"{}\" ({}) has no variable \"{name}\"{}",
                    self.names[instance],
                    md.model_name,
                    did_you_mean(name, md.model_variables.iter().map(|v| v.name.as_str()))
                ),
            )
        })?;
        Ok(VarRef {
            instance,
            name: name.to_owned(),
            vr: v.value_reference,
            ty: v.kind.base_type(),
            causality: v.causality,
        })
    }

    /// `inst.var` (the variable name may itself contain dots).
    fn var(&self, key: &str, dotted: &str) -> Result<VarRef> {
        let (inst, var) = dotted
            .split_once('.')
            .ok_or_else(|| self.err(key, format!("\"{dotted}\" is not of the form instance.variable")))?;
        let i = self.instance(key, inst)?;
        self.variable_of(key, i, var)
    }

    /// The whole check, step by step in this order (the first failing step names its key).
    fn resolve(&self, over: &Overrides) -> Result<System> {
        let sim = &self.checked_settings(over)?;
        let span = self.span(sim, &over.settings)?;
        let Span { start, stop, step, .. } = span;
        let algorithm = sim.algorithm.unwrap_or(AlgorithmKind::Jacobi);
        let parallel = sim.parallel.unwrap_or(Parallel::Auto);
        let exchange = sim.exchange.unwrap_or(super::Exchange::Ordered);
        let isolate = sim.isolate.unwrap_or(false);
        let me_coupling = sim.me_coupling.unwrap_or_default();
        let worker_timeout = self.worker_timeout(sim)?;
        let max_residual_energy = self.max_residual_energy(sim)?;
        let (iterations, iteration_tolerance) = self.iterations(sim, algorithm)?;
        let record_every = sim.record_every.unwrap_or(1);
        let order = self.order(sim)?;
        let default_extrapolation = self.extrapolation("simulation.extrapolation", sim.extrapolation.as_ref())?;
        let instances = self.instances(&span, iterations, over.force)?;
        let connections = self.connections(over.extrapolation, &default_extrapolation)?;
        let signals = self.signals(&connections)?;
        let bonds = self.bonds(sim, &over.settings)?;
        let outputs = self.outputs()?;
        let variables = (0..self.mds.len()).map(|i| self.variables(i)).collect();
        let energy_correction = self.energy_correction(sim)?;
        let real_time = self.real_time(sim)?;
        let step_control = self.step_control(sim, (start, stop, step), &instances, &signals, bonds.len())?;

        Ok(System {
            path: self.b.path.clone(),
            start,
            stop,
            step,
            algorithm,
            order,
            parallel,
            exchange,
            record_every,
            isolate,
            me_coupling,
            worker_timeout,
            real_time,
            live: self.b.live.clone(),
            max_residual_energy,
            iterations,
            iteration_tolerance,
            step_control,
            energy_correction,
            instances,
            connections,
            signals,
            bonds,
            outputs,
            variables,
        })
    }
}

/// More fmi2DoStep calls per instance than this is refused unless forced (`cosim run --force`):
/// such a run takes hours at best and is nearly always a typo in stop or step.
pub const LARGE_STEPS: f64 = 1e9;
