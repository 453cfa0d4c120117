//! The checks: a [`SystemBuilder`] validated against the model descriptions into a [`System`].

use super::builder::{ExtrapolationSpec, SystemBuilder, Value};
use super::*;
use crate::error::{MasterError, Result};
use crate::suggest::did_you_mean;
use model_description::{ModelDescription, SimpleTypeKind, VariableKind};

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
        Resolver { b: self, mds, names: self.instances.keys().cloned().collect() }.resolve(over)
    }

    /// Loads every FMU once into `fmus` and validates the system against their model
    /// descriptions ([`SystemBuilder::build_with`]).
    pub fn load(&self, fmus: &mut crate::fmu::FmuCache) -> Result<System> {
        self.load_with(fmus, &Overrides::default())
    }

    /// [`SystemBuilder::load`] with command-line overrides.
    pub fn load_with(&self, fmus: &mut crate::fmu::FmuCache, over: &Overrides) -> Result<System> {
        let loaded = self
            .fmus()
            .into_iter()
            .map(|(name, p)| fmus.load(&p).map_err(|e| self.fmu_error(&name, e)))
            .collect::<Result<Vec<_>>>()?;
        let mds: Vec<&ModelDescription> = loaded.iter().map(|f| f.model_description()).collect();
        self.build_with(&mds, over)
    }
}

/// The run's time span, checked ([`Resolver::span`]).
#[derive(Clone, Copy)]
struct Span {
    start: f64,
    stop: f64,
    step: f64,
    /// Communication steps from start to stop.
    n: f64,
    /// The key (or flag) blamed for a span that is not a whole number of steps.
    key: &'static str,
}

struct Resolver<'a> {
    b: &'a SystemBuilder,
    mds: &'a [&'a ModelDescription],
    names: Vec<String>,
}

impl Resolver<'_> {
    fn err(&self, key: impl Into<String>, message: impl Into<String>) -> MasterError {
        MasterError::System { path: self.b.path.clone(), key: key.into(), message: message.into() }
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

    fn extrapolation(&self, key: &str, v: Option<&ExtrapolationSpec>) -> Result<Extrapolation> {
        match v {
            None => Ok(Extrapolation::Order(0)),
            Some(ExtrapolationSpec::Order(m)) if *m <= 4 => Ok(Extrapolation::Order(*m)),
            Some(ExtrapolationSpec::Order(m)) => {
                Err(self.err(key, format!("extrapolation = {m} must be an integer 0..4 or \"I2\"")))
            }
            Some(ExtrapolationSpec::I2(derivatives)) => {
                let names = derivatives.as_ref().ok_or_else(|| {
                    self.err(key, "extrapolation \"I2\" needs derivatives = [\"inst.ds_dt\", \"inst.d2s_dt2\"]")
                })?;
                if names.is_empty() || names.len() > 4 {
                    return Err(self.err(key, format!("I2 needs 1 to 4 derivative outputs, got {}", names.len())));
                }
                let derivatives =
                    names.iter().map(|n| self.var(&format!("{key}.derivatives"), n)).collect::<Result<Vec<_>>>()?;
                // The Taylor polynomial reads them as Real outputs after each step.
                for (k, (d, n)) in derivatives.iter().zip(names).enumerate() {
                    if d.ty != BaseType::Real || d.causality != Causality::Output {
                        return Err(self.err(
                            format!("{key}.derivatives[{k}]"),
                            format!("{n} is a {:?} {}: I2 derivatives must be Real outputs", d.ty, d.causality),
                        ));
                    }
                }
                Ok(Extrapolation::I2 { derivatives })
            }
        }
    }

    fn start_value(&self, key: &str, var: &VarRef, value: &Value) -> Result<StartValue> {
        let md = self.mds[var.instance];
        let bad = |want: &str| self.err(key, format!("{value} is not a valid {want} for {} ({})", var.name, var.ty));
        match (var.ty, value) {
            // Refused here, not by the FMU after the output files were replaced (issue 30 item 11).
            (BaseType::Real, Value::Real(x)) if !x.is_finite() => {
                Err(self
                    .err(key, format!("{x} is not a finite number: the start value of {} must be finite", var.name)))
            }
            (BaseType::Real, Value::Real(x)) => Ok(StartValue::Real(*x)),
            (BaseType::Real, Value::Integer(x)) => Ok(StartValue::Real(*x as f64)),
            // FMI 3.0 integers are up to 64 bits: the instance checks the value against the
            // variable's own type (Int8 … UInt64) when it sets it, naming both.
            (BaseType::Integer, Value::Integer(x)) if md.fmi_version.starts_with("3.") => Ok(StartValue::Integer(*x)),
            (BaseType::Integer, Value::Integer(x)) => {
                i32::try_from(*x).map(|_| StartValue::Integer(*x)).map_err(|_| bad("32-bit integer"))
            }
            (BaseType::Enumeration, Value::Integer(x)) if md.fmi_version.starts_with("3.") => {
                Ok(StartValue::Integer(*x))
            }
            (BaseType::Enumeration, Value::Integer(x)) => {
                i32::try_from(*x).map(|_| StartValue::Integer(*x)).map_err(|_| bad("enumeration value"))
            }
            (BaseType::Enumeration, Value::String(item)) => {
                let sv = md.variable(&var.name);
                let ty = sv.and_then(|v| v.kind.declared_type()).and_then(|t| md.simple_type(t));
                match ty.map(|t| &t.kind) {
                    Some(SimpleTypeKind::Enumeration { items, .. }) => items
                        .iter()
                        .find(|i| &i.name == item)
                        .map(|i| StartValue::Integer(i.value.into()))
                        .ok_or_else(|| {
                            let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
                            self.err(key, format!("\"{item}\" is not an item of {} ({})", var.name, names.join(", ")))
                        }),
                    _ => Err(bad("enumeration item")),
                }
            }
            (BaseType::Boolean, Value::Boolean(b)) => Ok(StartValue::Boolean(*b)),
            (BaseType::String, Value::String(s)) => Ok(StartValue::String(s.clone())),
            (BaseType::Real, _) => Err(bad("number")),
            (BaseType::Integer, _) => Err(bad("integer")),
            (BaseType::Enumeration, _) => Err(bad("enumeration value or item name")),
            (BaseType::Boolean, _) => Err(bad("boolean")),
            (BaseType::String, _) => Err(bad("string")),
            // Binary: a string of hexadecimal digits, two per byte (xs:hexBinary, either case).
            (BaseType::Binary, Value::String(hex)) => {
                let bytes = model_description::from_hex(hex).map_err(|why| {
                    self.err(
                        key,
                        format!(
                            "\"{hex}\" is not a Binary value for {}: {why}; give the bytes as hexadecimal digits, two \
                             per byte (e.g. \"00ff7a\")",
                            var.name
                        ),
                    )
                })?;
                let max = md.variable(&var.name).and_then(|v| match v.kind {
                    VariableKind::Binary { max_size, .. } => max_size,
                    _ => None,
                });
                match max {
                    Some(m) if bytes.len() as u64 > u64::from(m) => Err(self.err(
                        key,
                        format!(
                            "the value of {} has {} bytes, more than its maxSize of {m} bytes",
                            var.name,
                            bytes.len()
                        ),
                    )),
                    _ => Ok(StartValue::Binary(bytes)),
                }
            }
            (BaseType::Binary, _) => Err(bad("Binary value (a string of hexadecimal digits, two per byte)")),
        }
    }

    fn compatible(from: BaseType, to: BaseType) -> bool {
        use BaseType as B;
        matches!(
            (from, to),
            (B::Real, B::Real)
                | (B::Integer | B::Enumeration, B::Integer | B::Enumeration)
                | (B::Boolean, B::Boolean)
                | (B::String, B::String)
                | (B::Binary, B::Binary)
        )
    }

    /// The whole check, step by step in this order (the first failing step names its key).
    fn resolve(&self, over: &Overrides) -> Result<System> {
        let sim = &self.b.settings.overridden_by(&over.settings).map_err(|m| self.err("simulation", m))?;
        let span = self.span(sim, &over.settings)?;
        let Span { start, stop, step, .. } = span;
        let algorithm = sim.algorithm.unwrap_or(AlgorithmKind::Jacobi);
        let parallel = sim.parallel.unwrap_or(Parallel::Auto);
        let exchange = sim.exchange.unwrap_or(super::Exchange::Ordered);
        let isolate = sim.isolate.unwrap_or(false);
        let worker_timeout = self.worker_timeout(sim)?;
        let max_residual_energy = self.max_residual_energy(sim)?;
        let (iterations, iteration_tolerance) = self.iterations(sim, algorithm)?;
        let record_every = sim.record_every.unwrap_or(1);
        if record_every == 0 {
            return Err(self.err("simulation.record_every", "must be at least 1"));
        }
        let order = self.order(sim)?;
        let default_extrapolation = self.extrapolation("simulation.extrapolation", sim.extrapolation.as_ref())?;
        let instances = self.instances(&span, iterations, over.force)?;
        let connections = self.connections(over.extrapolation, &default_extrapolation)?;
        let signals = self.signals(&connections)?;
        let bonds = self.bonds(sim, &over.settings)?;
        let outputs = self.outputs()?;
        let variables = (0..self.mds.len()).map(|i| self.variables(i)).collect();
        let energy_correction = self.energy_correction(sim, &bonds)?;
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
            worker_timeout,
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

    /// Start, stop and communication step, checked: finite, in order, representable, and a whole
    /// number of steps between start and stop. A value the command line gave (`given`) is blamed
    /// on its flag, else on the file's key.
    fn span(&self, sim: &Settings, given: &Settings) -> Result<Span> {
        let start = sim.start.unwrap_or(0.0);
        let stop = sim.stop.ok_or_else(|| self.err("simulation.stop", "no stop time given"))?;
        let step = sim.step.ok_or_else(|| self.err("simulation.step", "no communication step given"))?;
        // Blame the command-line flag when it gave the value, else the file's key.
        let start_key = if given.start.is_some() { "--start-time" } else { "simulation.start" };
        let stop_key = if given.stop.is_some() { "--stop-time" } else { "simulation.stop" };
        let step_key = if given.step.is_some() { "--step" } else { "simulation.step" };
        if !start.is_finite() {
            return Err(self.err(start_key, format!("{start} is not finite")));
        }
        if !(stop.is_finite() && stop > start) {
            return Err(self.err(stop_key, format!("stop time {stop} must be after the start time {start}")));
        }
        if !(step.is_finite() && step > 0.0) {
            return Err(self.err(step_key, format!("communication step {step} must be positive")));
        }
        let span = stop - start;
        if !span.is_finite() {
            return Err(self.err(
                stop_key,
                format!(
                    "stop - start = {stop:e} - ({start:e}) s overflows a double: the time points are not representable"
                ),
            ));
        }
        check_time_resolution(start, stop, step).map_err(|m| self.err(step_key, m))?;
        // At most 4.5e12 steps after that check: n and n·H are exact in a double.
        let n = (span / step).round();
        // A span that is not a whole number of steps: blame the flag that was given.
        let span_key = if given.stop.is_some() && given.step.is_none() { stop_key } else { step_key };
        if (n * step - span).abs() > 1e-9 * span.abs().max(step) {
            return Err(self.err(
                span_key,
                format!(
                    "stop - start = {span} s is not a whole number of communication steps H = {step} s: {}",
                    crate::suggest::fitting_span(start, stop, step)
                ),
            ));
        }
        Ok(Span { start, stop, step, n, key: span_key })
    }

    /// `[simulation] worker_timeout` (s), checked.
    fn worker_timeout(&self, sim: &Settings) -> Result<f64> {
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
    fn max_residual_energy(&self, sim: &Settings) -> Result<Option<f64>> {
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
    fn iterations(&self, sim: &Settings, algorithm: AlgorithmKind) -> Result<(u32, f64)> {
        let iterations = sim.iterations.unwrap_or(1);
        if iterations == 0 {
            return Err(self.err("simulation.iterations", "must be at least 1 (1 = non-iterative coupling)"));
        }
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
            // Each pass restores the states saved before the step.
            let stateless: Vec<String> = self
                .names
                .iter()
                .zip(self.mds)
                .filter(|(_, md)| !md.co_simulation.as_ref().is_some_and(|cs| cs.can_get_and_set_fmu_state))
                .map(|(n, md)| format!("{n} ({})", md.model_name))
                .collect();
            if !stateless.is_empty() {
                return Err(self.err(
                    "simulation.iterations",
                    format!(
                        "iterations = {iterations} repeats each step from saved FMU states, but {} cannot get and \
                         set FMU states (canGetAndSetFMUstate is not \"true\"); use iterations = 1",
                        stateless.join(", ")
                    ),
                ));
            }
        }
        Ok((iterations, iteration_tolerance))
    }

    /// `[simulation] order` (Gauss-Seidel): every instance once, as indices.
    fn order(&self, sim: &Settings) -> Result<Option<Vec<usize>>> {
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

    /// The `[instances.NAME]` tables: sub-steps, the size guard (`--force`), start values.
    fn instances(&self, span: &Span, iterations: u32, force: bool) -> Result<Vec<InstanceSpec>> {
        let Span { start, stop, step, n, key: span_key } = *span;
        if self.b.instances.is_empty() {
            return Err(self.err("instances", "no instances: a system needs at least one [instances.NAME] table"));
        }
        let mut instances = Vec::new();
        for (i, (name, ri)) in self.b.instances.iter().enumerate() {
            let key = format!("instances.{name}");
            if name.is_empty() || name.contains('.') {
                return Err(self.err(&key, format!("instance name \"{name}\" must be non-empty without '.'")));
            }
            let substeps = match ri.step {
                None => 1,
                Some(h) => {
                    let k = (step / h).round();
                    if h.is_nan() || h <= 0.0 || k < 1.0 || (k * h - step).abs() > 1e-9 * step {
                        return Err(self.err(
                            format!("{key}.step"),
                            format!(
                                "step {h} s does not divide the communication step H = {step} s (H/h = {}): {}",
                                step / h,
                                crate::suggest::fitting_multiples(step, h)
                            ),
                        ));
                    }
                    check_time_resolution(start, stop, h).map_err(|m| self.err(format!("{key}.step"), m))?;
                    k as u64
                }
            };
            // Iterative coupling repeats every step up to `iterations` times (issue 30 item 12:
            // `iterations = 4e9` passed this guard).
            let fmu_steps = n * substeps as f64 * f64::from(iterations);
            if fmu_steps > LARGE_STEPS && !force {
                let mut what = if substeps == 1 {
                    format!("{n:e} communication steps")
                } else {
                    format!("{n:e} communication steps of {substeps} sub-steps each")
                };
                if iterations > 1 {
                    what += &format!(" × up to {iterations} iterations");
                }
                let key = if iterations > 1 && n * (substeps as f64) <= LARGE_STEPS {
                    "simulation.iterations".to_owned()
                } else if substeps == 1 {
                    span_key.to_owned()
                } else {
                    format!("{key}.step")
                };
                return Err(self.err(
                    key,
                    format!(
                        "instance {name} would take {what} = {fmu_steps:e} fmi2DoStep calls (more than \
                         {LARGE_STEPS:e}; at 1 µs each {}): check stop, step and the instance steps \
                         (`cosim run --force` runs it anyway; tune, bench and Python do not)",
                        duration_words(fmu_steps * 1e-6)
                    ),
                ));
            }
            let mut starts = Vec::new();
            for (whole, value) in &ri.starts {
                let k = format!("{key}.start.{whole}");
                for (var, value) in self.start_elements(&k, i, whole, value)? {
                    let v = self.variable_of(&k, i, &var)?;
                    if matches!(
                        v.causality,
                        Causality::Output | Causality::CalculatedParameter | Causality::Independent
                    ) {
                        return Err(self.err(
                            &k,
                            format!("{var} has causality {} and cannot be given a start value", v.causality),
                        ));
                    }
                    let value = self.start_value(&k, &v, &value)?;
                    starts.push((v, value));
                }
            }
            let fixed_step = ri.step.or_else(|| self.internal_step(i, &starts));
            instances.push(InstanceSpec {
                name: name.clone(),
                fmu: ri.fmu.clone(),
                substeps,
                step: ri.step,
                fixed_step,
                starts,
            });
        }
        Ok(instances)
    }

    /// The `[[connections]]`: an output to an input of a compatible type, each input once; the
    /// command line's `--extrapolation` (`forced`) over each connection's own.
    fn connections(&self, forced: Option<usize>, default_extrapolation: &Extrapolation) -> Result<Vec<Connection>> {
        let mut connections: Vec<Connection> = Vec::new();
        for (c, rc) in self.b.connections.iter().enumerate() {
            let key = format!("connections[{c}]");
            for (from_name, to_name) in self.connected_pairs(&key, &rc.from, &rc.to)? {
                self.connection(&key, rc, &from_name, &to_name, forced, default_extrapolation, &mut connections)?;
            }
        }
        Ok(connections)
    }

    /// One connection `from_name` → `to_name` of `[[connections]]` `key` (an element of it when
    /// it joins whole arrays), checked and appended to `connections`.
    #[allow(clippy::too_many_arguments)] // the connection, its names and the run's extrapolation
    fn connection(
        &self,
        key: &str,
        rc: &super::builder::ConnectionDraft,
        from_name: &str,
        to_name: &str,
        forced: Option<usize>,
        default_extrapolation: &Extrapolation,
        connections: &mut Vec<Connection>,
    ) -> Result<()> {
        let from = self.var(&format!("{key}.from"), from_name)?;
        let to = self.var(&format!("{key}.to"), to_name)?;
        if from.causality != Causality::Output {
            return Err(self.err(
                format!("{key}.from"),
                format!("{} has causality {}, a connection starts at an output", from_name, from.causality),
            ));
        }
        if to.causality != Causality::Input {
            return Err(self.err(
                format!("{key}.to"),
                format!("{} has causality {}, a connection ends at an input", to_name, to.causality),
            ));
        }
        if !Self::compatible(from.ty, to.ty) {
            return Err(self.err(key, format!("type mismatch: {} is {}, {} is {}", from_name, from.ty, to_name, to.ty)));
        }
        if let Some(prev) = connections.iter().position(|p| p.to == to) {
            return Err(
                self.err(format!("{key}.to"), format!("{} is already connected by connections[{prev}]", to_name))
            );
        }
        let mut extrapolation = match (&rc.extrapolation, forced) {
            (_, Some(m)) if m <= 4 => Extrapolation::Order(m),
            (_, Some(m)) => return Err(self.err("--extrapolation", format!("{m} is not in 0..4"))),
            (None, None) => default_extrapolation.clone(),
            (Some(v), None) => self.extrapolation(&format!("{key}.extrapolation"), Some(v))?,
        };
        if from.ty != BaseType::Real {
            extrapolation = Extrapolation::Order(0);
        }
        let gain = rc.gain.unwrap_or(1.0);
        let offset = rc.offset.unwrap_or(0.0);
        for (k, x) in [("gain", gain), ("offset", offset)] {
            if !x.is_finite() {
                return Err(self.err(format!("{key}.{k}"), format!("{k} = {x}: must be a finite number")));
            }
        }
        if from.ty != BaseType::Real && (gain != 1.0 || offset != 0.0) {
            return Err(self.err(key, "gain and offset apply to Real connections only"));
        }
        connections.push(Connection { from, to, gain, offset, extrapolation });
        Ok(())
    }

    /// The array `name` of instance `inst.name` (`None`: a scalar, an unknown name or instance,
    /// which [`Resolver::var`] reports).
    fn array_named(&self, dotted: &str) -> Option<(String, super::arrays::Array)> {
        let (inst, var) = dotted.split_once('.')?;
        let i = self.names.iter().position(|n| n == inst)?;
        super::arrays::array(self.mds[i], var).map(|a| (inst.to_owned(), a))
    }

    /// The (from, to) pairs a connection joins: itself, or element by element when both ends
    /// name whole arrays of equal shape.
    fn connected_pairs(&self, key: &str, from: &str, to: &str) -> Result<Vec<(String, String)>> {
        match (self.array_named(from), self.array_named(to)) {
            (None, None) => Ok(vec![(from.to_owned(), to.to_owned())]),
            (Some((fi, fa)), Some((ti, ta))) if fa.shape == ta.shape => Ok(fa
                .elements
                .iter()
                .zip(&ta.elements)
                .map(|(f, t)| (format!("{fi}.{f}"), format!("{ti}.{t}")))
                .collect()),
            (Some((_, fa)), Some((_, ta))) => Err(self.err(
                key,
                format!(
                    "{from} has shape {} but {to} has shape {}: a connection of whole arrays joins arrays of \
                     equal shape (or connect elements, e.g. {from}[1])",
                    fa.shape_text(),
                    ta.shape_text()
                ),
            )),
            (Some((_, a)), None) => Err(self.err(
                format!("{key}.from"),
                format!(
                    "{from} is an array of shape {} but {to} is not: connect an element (e.g. {}) or two whole arrays",
                    a.shape_text(),
                    a.elements[0]
                ),
            )),
            (None, Some((_, a))) => Err(self.err(
                format!("{key}.to"),
                format!(
                    "{to} is an array of shape {} but {from} is not: connect an element (e.g. {}) or two whole arrays",
                    a.shape_text(),
                    a.elements[0]
                ),
            )),
        }
    }

    /// The (variable, value) pairs a start value sets: itself, or every element of a whole
    /// array from a TOML array of as many values (row-major).
    fn start_elements(&self, key: &str, i: usize, var: &str, value: &Value) -> Result<Vec<(String, Value)>> {
        match (super::arrays::array(self.mds[i], var), value) {
            (None, Value::Array(_)) if self.mds[i].variable(var).is_some() => Err(self.err(
                key,
                format!("{var} is a scalar: a TOML array {value} is the start value of a whole array variable"),
            )),
            (None, _) => Ok(vec![(var.to_owned(), value.clone())]),
            (Some(a), Value::Array(_)) => {
                let values = super::arrays::flatten(value);
                if values.len() != a.elements.len() {
                    return Err(self.err(
                        key,
                        format!(
                            "{var} has shape {} ({} elements) but {} start values were given: {value}",
                            a.shape_text(),
                            a.elements.len(),
                            values.len()
                        ),
                    ));
                }
                Ok(a.elements.into_iter().zip(values).collect())
            }
            (Some(a), _) => Err(self.err(
                key,
                format!(
                    "{var} is an array of shape {}: give a TOML array of {} values (row-major) or name an element, \
                     e.g. {}",
                    a.shape_text(),
                    a.elements.len(),
                    a.elements[0]
                ),
            )),
        }
    }

    /// The `[[inputs]]` (time tables) on Real inputs without a connection or another table.
    fn signals(&self, connections: &[Connection]) -> Result<Vec<Signal>> {
        let mut signals: Vec<Signal> = Vec::new();
        for (k, rs) in self.b.inputs.iter().enumerate() {
            let key = format!("inputs[{k}]");
            let to = self.var(&format!("{key}.to"), &rs.to)?;
            if to.causality != Causality::Input || to.ty != BaseType::Real {
                return Err(self.err(format!("{key}.to"), format!("{} must be a Real input", rs.to)));
            }
            if connections.iter().any(|c| c.to == to) || signals.iter().any(|s| s.to == to) {
                return Err(self.err(format!("{key}.to"), format!("{} already has a connection or a signal", rs.to)));
            }
            if rs.times.is_empty() || rs.times.len() != rs.values.len() {
                return Err(self.err(
                    &key,
                    format!(
                        "times ({}) and values ({}) must be non-empty and of equal length",
                        rs.times.len(),
                        rs.values.len()
                    ),
                ));
            }
            if rs.times.windows(2).any(|w| w[1] <= w[0]) || rs.times.iter().chain(&rs.values).any(|x| !x.is_finite()) {
                return Err(
                    self.err(format!("{key}.times"), "times must be finite and strictly increasing, values finite")
                );
            }
            signals.push(Signal { to, times: rs.times.clone(), values: rs.values.clone(), linear: rs.linear });
        }
        Ok(signals)
    }

    /// The `[[bonds]]`: two ports each, unique names, and each bond's energy correction (the
    /// command line's, the bond's own, then `[simulation]`'s).
    fn bonds(&self, sim: &Settings, given: &Settings) -> Result<Vec<Bond>> {
        let mut bonds = Vec::new();
        let mut bond_names = std::collections::HashMap::new();
        for (b, (bond_name, ports_given)) in self.b.bonds.iter().enumerate() {
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
            let energy_correction = given
                .energy_correction
                .or_else(|| self.b.bond_corrections.get(bond_name).copied())
                .or(sim.energy_correction)
                .unwrap_or(false);
            let own = self.b.bond_laws.get(bond_name).copied().unwrap_or_default();
            let correction = EnergyCorrection {
                law: given.energy_correction_law.or(own.law).or(sim.energy_correction_law).unwrap_or_default(),
                gain: own.gain.or(sim.energy_correction_gain).unwrap_or(1.0),
                flow_floor: own.flow.or(sim.energy_correction_flow).unwrap_or(0.0),
            };
            let (gain_key, flow_key) = if own.gain.is_some() || own.flow.is_some() {
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

    /// The recorded variables: `[outputs] variables`, or every output.
    fn outputs(&self) -> Result<Vec<VarRef>> {
        Ok(match &self.b.outputs {
            None => self.all_outputs(),
            Some(names) => {
                let mut v = Vec::new();
                let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
                for (k, name) in names.iter().enumerate() {
                    let key = format!("outputs.variables[{k}]");
                    let r = self.var(&key, name)?;
                    if r.ty == BaseType::String {
                        return Err(self.err(&key, format!("{name} is a String and cannot be recorded in CSV")));
                    }
                    // Two columns of one name: refused here, not after the run (issue 30 item 17).
                    if let Some(first) = seen.insert(name.as_str(), k) {
                        return Err(self.err(
                            &key,
                            format!("{name} is listed twice (also outputs.variables[{first}]): each output once"),
                        ));
                    }
                    v.push(r);
                }
                v
            }
        })
    }

    /// The system-wide energy correction, checked; a per-bond setting must name a bond.
    fn energy_correction(&self, sim: &Settings, bonds: &[Bond]) -> Result<EnergyCorrection> {
        if let Some(name) = self.b.bond_corrections.keys().find(|n| !bonds.iter().any(|b| &b.name == *n)) {
            return Err(self.err(format!("bonds.{name}.energy_correction"), format!("no bond named \"{name}\"")));
        }
        if let Some(name) = self.b.bond_laws.keys().find(|n| !bonds.iter().any(|b| &b.name == *n)) {
            return Err(self.err(format!("bonds.{name}.energy_correction_law"), format!("no bond named \"{name}\"")));
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

    /// The fixed internal step of instance i from its FMU: the Real parameter `h` with unit
    /// "s" (this project's FMUs name their step so), at its start value in the system or else in
    /// the model description; `None` when absent or not positive (0: "h = H").
    fn internal_step(&self, i: usize, starts: &[(VarRef, StartValue)]) -> Option<f64> {
        let sv = self.mds[i].model_variables.iter().find(|v| {
            v.name == "h"
                && v.causality == Causality::Parameter
                && matches!(&v.kind, VariableKind::Real { attrs, .. } if attrs.unit.as_deref() == Some("s"))
        })?;
        let given = starts.iter().find(|(v, _)| v.name == "h").and_then(|(_, value)| match value {
            StartValue::Real(x) => Some(*x),
            StartValue::Integer(k) => Some(*k as f64),
            _ => None,
        });
        let start = match &sv.kind {
            VariableKind::Real { start, .. } => *start,
            _ => None,
        };
        given.or(start).filter(|h| h.is_finite() && *h > 0.0)
    }

    /// `[simulation] step_control` with `[simulation.ecco]`: the grid quantum Δ (the least
    /// common multiple of the instances' fixed steps), H_min, H_max, H_0 on it, the time-table
    /// breakpoints, and every FMU able to take variable steps.
    fn step_control(
        &self,
        sim: &super::Settings,
        (start, stop, step): (f64, f64, f64),
        instances: &[InstanceSpec],
        signals: &[Signal],
        bonds: usize,
    ) -> Result<StepControl> {
        if sim.step_control.unwrap_or(StepControlKind::Fixed) == StepControlKind::Fixed {
            return Ok(StepControl::Fixed);
        }
        for (i, inst) in instances.iter().enumerate() {
            let variable =
                self.mds[i].co_simulation.as_ref().is_some_and(|cs| cs.can_handle_variable_communication_step_size);
            if !variable {
                return Err(self.err(
                    format!("instances.{}", inst.name),
                    format!(
                        "step_control = \"ecco\" changes the communication step, but {} ({}) does not declare \
                         canHandleVariableCommunicationStepSize; use step_control = \"fixed\"",
                        inst.name,
                        inst.fmu.display()
                    ),
                ));
            }
        }
        if bonds == 0 {
            return Err(self.err(
                "simulation.step_control",
                "step_control = \"ecco\" sizes the step from the residual energy of the [[bonds]], and this system has none",
            ));
        }
        let d = &sim.ecco;
        let p = EccoParams {
            rtol: d.rtol.unwrap_or(EccoParams::default().rtol),
            atol: d.atol.unwrap_or(EccoParams::default().atol),
            safety: d.safety.unwrap_or(EccoParams::default().safety),
            p_gain: d.p_gain.unwrap_or(EccoParams::default().p_gain),
            i_gain: d.i_gain.unwrap_or(EccoParams::default().i_gain),
            h_min: d.h_min.unwrap_or(0.0),
            h_max: d.h_max.unwrap_or(10.0 * step),
            min_rate: d.min_rate.unwrap_or(EccoParams::default().min_rate),
            max_rate: d.max_rate.unwrap_or(EccoParams::default().max_rate),
        };
        let positive = [("rtol", p.rtol), ("safety", p.safety), ("max_rate", p.max_rate), ("h_max", p.h_max)];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(self.err(format!("simulation.ecco.{key}"), format!("{v} must be positive and finite")));
            }
        }
        let non_negative = [("atol", p.atol), ("p_gain", p.p_gain), ("i_gain", p.i_gain), ("h_min", p.h_min)];
        for (key, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(self.err(format!("simulation.ecco.{key}"), format!("{v} must be finite and non-negative")));
            }
        }
        if !(p.min_rate > 0.0 && p.min_rate <= 1.0 && p.max_rate >= 1.0) {
            return Err(self.err(
                "simulation.ecco.min_rate",
                format!(
                    "the change factors must satisfy 0 < min_rate = {} ≤ 1 ≤ max_rate = {}",
                    p.min_rate, p.max_rate
                ),
            ));
        }
        if p.h_min > p.h_max {
            return Err(
                self.err("simulation.ecco.h_min", format!("h_min = {} s exceeds h_max = {} s", p.h_min, p.h_max))
            );
        }
        let steps: Vec<f64> = instances.iter().filter_map(|i| i.fixed_step).collect();
        let quantum = crate::step_control::quantum(&steps).ok_or_else(|| {
            self.err(
                "instances",
                format!(
                    "the instances' fixed steps {:?} s have no common multiple on a 1 ps grid; step_control = \"ecco\" \
                     keeps H a whole multiple of each",
                    steps
                ),
            )
        })?;
        // Without fixed internal steps the grid is H_min (given), else H_0 / 100.
        let q = quantum.unwrap_or(if p.h_min > 0.0 { p.h_min } else { step / 100.0 });
        let units = |x: f64| x / q;
        let h0 = units(step).round();
        if h0 < 1.0 || (h0 * q - step).abs() > 1e-9 * step {
            return Err(self.err(
                "simulation.step",
                format!(
                    "the initial step H_0 = {step} s is not a whole multiple of the instances' common step Δ = {q} s"
                ),
            ));
        }
        let span = units(stop - start).round();
        if (span * q - (stop - start)).abs() > 1e-9 * (stop - start) {
            return Err(self.err(
                "simulation.stop",
                format!("stop - start = {} s is not a whole multiple of the grid Δ = {q} s", stop - start),
            ));
        }
        let min_units = (units(p.h_min) - 1e-9).ceil().max(1.0);
        let max_units = (units(p.h_max) + 1e-9).floor();
        if max_units < min_units {
            return Err(self.err(
                "simulation.ecco.h_max",
                format!("h_max = {} s is below the smallest step the grid allows ({} s)", p.h_max, min_units * q),
            ));
        }
        let mut breakpoints: Vec<u64> = signals
            .iter()
            .flat_map(|s| s.times.iter())
            .map(|t| units(t - start).round())
            .filter(|k| *k > 0.0 && *k < span)
            .map(|k| k as u64)
            .collect();
        breakpoints.sort_unstable();
        breakpoints.dedup();
        Ok(StepControl::Ecco {
            params: p,
            quantum: q,
            units: (min_units as u64, max_units as u64, (h0 as u64).clamp(min_units as u64, max_units as u64)),
            breakpoints,
        })
    }

    /// Every variable of instance i.
    fn variables(&self, i: usize) -> Vec<VarRef> {
        self.mds[i]
            .model_variables
            .iter()
            .map(|sv| VarRef {
                instance: i,
                name: sv.name.clone(),
                vr: sv.value_reference,
                ty: sv.kind.base_type(),
                causality: sv.causality,
            })
            .collect()
    }

    fn all_outputs(&self) -> Vec<VarRef> {
        let mut v = Vec::new();
        for (i, md) in self.mds.iter().enumerate() {
            for sv in &md.model_variables {
                if sv.causality == Causality::Output
                    && !matches!(sv.kind, VariableKind::String { .. } | VariableKind::Binary { .. })
                {
                    v.push(VarRef {
                        instance: i,
                        name: sv.name.clone(),
                        vr: sv.value_reference,
                        ty: sv.kind.base_type(),
                        causality: sv.causality,
                    });
                }
            }
        }
        v
    }
}

/// More fmi2DoStep calls per instance than this is refused unless forced (`cosim run --force`):
/// such a run takes hours at best and is nearly always a typo in stop or step.
pub const LARGE_STEPS: f64 = 1e9;

/// Every time point start + n·h in [start, stop] must be distinct and each step t_{n+1} − t_n
/// equal to h within 0.1 %: the spacing of doubles near the larger of |start| and |stop| must be
/// at most h / 1000 (e.g. start = 1e17 s has a spacing of 16 s: no step of 1 ms exists there).
/// This also bounds the number of steps (stop − start)/h by ≈ 4.5e12, so that step numbers and
/// n·h are exact in a double and no count overflows.
fn check_time_resolution(start: f64, stop: f64, h: f64) -> std::result::Result<(), String> {
    let t = start.abs().max(stop.abs());
    // The distance from t to the next double: the resolution of time near t.
    let spacing = f64::from_bits(t.to_bits() + 1) - t;
    if spacing > h * 1e-3 {
        return Err(format!(
            "step {h:e} s is not representable at t = {t:e} s (doubles there are {spacing:e} s apart; the step must be \
             at least 1000 times that spacing): shift start and stop towards 0"
        ));
    }
    Ok(())
}

/// How long `seconds` is, roughly: "17 min", "12 days", "3.2e10 years".
fn duration_words(seconds: f64) -> String {
    const UNITS: [(&str, f64); 4] = [("years", 365.25 * 86400.0), ("days", 86400.0), ("h", 3600.0), ("min", 60.0)];
    match UNITS.iter().find(|(_, size)| seconds >= *size) {
        Some((unit, size)) if seconds / size >= 1e4 => format!("{:.1e} {unit}", seconds / size),
        Some((unit, size)) => format!("{:.0} {unit}", seconds / size),
        None => format!("{seconds:.0} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model_description::{Initial, ScalarVariable, Variability};

    fn var(name: &str, vr: u32, causality: Causality, kind: VariableKind) -> ScalarVariable {
        ScalarVariable {
            name: name.into(),
            value_reference: vr,
            description: None,
            causality,
            variability: if matches!(kind, VariableKind::Real { .. }) {
                Variability::Continuous
            } else {
                Variability::Discrete
            },
            initial: None::<Initial>,
            can_handle_multiple_set_per_time_instant: None,
            kind,
            annotations: Vec::new(),
            line: 0,
        }
    }

    fn real() -> VariableKind {
        VariableKind::Real {
            declared_type: None,
            attrs: Default::default(),
            start: Some(0.0),
            derivative: None,
            reinit: None,
        }
    }

    fn md() -> ModelDescription {
        ModelDescription {
            fmi_version: "2.0".into(),
            model_name: "m".into(),
            model_variables: vec![
                var("y", 0, Causality::Output, real()),
                var("u", 1, Causality::Input, real()),
                var(
                    "k",
                    2,
                    Causality::Input,
                    VariableKind::Integer { declared_type: None, attrs: Default::default(), start: Some(0) },
                ),
                var("b", 3, Causality::Output, VariableKind::Boolean { declared_type: None, start: None }),
            ],
            ..Default::default()
        }
    }

    fn resolve(text: &str) -> Result<System> {
        let base =
            "[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
        let m = md();
        SystemBuilder::parse(Path::new("sys.toml"), &format!("{base}{text}"))?.build(&[&m, &m])
    }

    fn message(r: Result<System>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn type_mismatch_and_double_connections_are_reported() {
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.k\"\n"));
        assert!(e.contains("sys.toml") && e.contains("connections[0]") && e.contains("type mismatch"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.b\"\nto = \"b.u\"\n"));
        assert!(e.contains("Boolean") && e.contains("Real"), "{e}");
        let e = message(resolve(
            "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.y\"\nto = \"b.u\"\n",
        ));
        assert!(e.contains("connections[1].to") && e.contains("already connected by connections[0]"), "{e}");
    }

    #[test]
    fn gauss_seidel_order_bonds_and_i2_are_checked() {
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n").and_then(|_| {
            let m = md();
            let text = "[simulation]\nstop = 1.0\nstep = 0.1\norder = [\"a\"]\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
            SystemBuilder::parse(Path::new("sys.toml"), text)?.build(&[&m, &m])
        }));
        assert!(e.contains("simulation.order") && e.contains("missing instances: b"), "{e}");
        let e = message(resolve(
            "[[bonds]]\nname = \"p\"\nports = [ { instance = \"a\", effort = \"y\", flow = \"k\" }, { instance = \"b\", effort = \"y\", flow = \"u\" } ]\n",
        ));
        assert!(e.contains("bonds[0].ports[0]") && e.contains("k must be a Real"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = \"I2\"\n"));
        assert!(e.contains("I2") && e.contains("derivatives"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = 7\n"));
        assert!(e.contains("extrapolation = 7"), "{e}");
        let e = message(resolve("[outputs]\nvariables = [\"a.zz\"]\n"));
        assert!(e.contains("outputs.variables[0]") && e.contains("no variable \"zz\""), "{e}");
        assert!(!e.contains("did you mean"), "zz is far from y, u, k: {e}");
        let e = message(resolve("[outputs]\nvariables = [\"a.yy\"]\n"));
        assert!(e.contains("no variable \"yy\"; did you mean \"y\"?"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"aa.y\"\nto = \"b.u\"\n"));
        assert!(e.contains("unknown instance \"aa\" (instances: a, b); did you mean \"a\"?"), "{e}");
    }

    #[test]
    fn stop_must_be_a_whole_number_of_steps_and_overrides_apply() {
        let m = md();
        let text = "[simulation]\nstop = 1.05\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n";
        let e = message(SystemBuilder::parse(Path::new("sys.toml"), text).and_then(|d| d.build(&[&m])));
        assert!(e.contains("simulation.step") && e.contains("whole number"), "{e}");
        let over = Overrides::settings(Settings { stop: Some(2.0), step: Some(0.5), ..Default::default() });
        let sys = SystemBuilder::parse(Path::new("sys.toml"), text).and_then(|d| d.build_with(&[&m], &over)).unwrap();
        assert_eq!((sys.stop, sys.step, sys.steps()), (2.0, 0.5, 4));
        // Default outputs: every output of every instance.
        assert_eq!(sys.outputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["y", "b"]);
    }

    #[test]
    fn ecco_refuses_fixed_step_fmus_and_puts_h_on_the_instances_grid() {
        let m = md();
        let over = Overrides::settings(Settings { step_control: Some(StepControlKind::Ecco), ..Default::default() });
        let b = SystemBuilder::parse(
            Path::new("sys.toml"),
            "[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n",
        )
        .unwrap();
        let e = message(b.build_with(&[&m, &m], &over));
        assert!(e.contains("instances.a") && e.contains("canHandleVariableCommunicationStepSize"), "{e}");

        let mut variable = md();
        variable.co_simulation = Some(model_description::CoSimulation {
            can_handle_variable_communication_step_size: true,
            ..Default::default()
        });
        let mut b = SystemBuilder::new();
        b.stop(1.0).step(0.1).step_control(StepControlKind::Ecco);
        b.instance("a", "a.fmu").step(0.025);
        b.instance("b", "b.fmu").step(0.02);
        b.input("a.u", vec![0.0, 0.3, 0.5], vec![0.0, 1.0, 0.0]);
        let e = message(b.build(&[&variable, &variable]));
        assert!(e.contains("simulation.step_control") && e.contains("[[bonds]]"), "{e}");
        b.bond("p", super::super::PortDraft::new("a", "y", "u"), super::super::PortDraft::new("b", "y", "u"));
        let sys = b.build(&[&variable, &variable]).unwrap();
        let StepControl::Ecco { quantum, units, breakpoints, .. } = sys.step_control() else { panic!("not ECCO") };
        // Δ = lcm(25 ms, 20 ms) = 100 ms; H_min = Δ, H_max = 10·H_0 = 1 s, H_0 = 100 ms.
        assert!((quantum - 0.1).abs() < 1e-15, "{quantum}");
        assert_eq!(*units, (1, 10, 1));
        assert_eq!(breakpoints, &[3, 5]);
        // H_0 must lie on the grid.
        let e = message(b.step(0.05).stop(1.0).build(&[&variable, &variable]));
        assert!(e.contains("simulation.step") || e.contains("does not divide"), "{e}");
    }

    #[test]
    fn energy_correction_needs_a_port_with_a_connected_effort_input() {
        let mut m = md();
        // y does not feed through (no algebraic loop a -> b -> a).
        m.model_structure.outputs = vec![model_description::Unknown {
            index: 1,
            dependencies: Some(Vec::new()),
            dependencies_kind: None,
            line: 0,
        }];
        let text = "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.y\"\nto = \"a.u\"\n\
                    [[bonds]]\nname = \"p\"\nenergy_correction = true\nports = [ { instance = \"a\", effort = \"y\", flow = \"u\" }, \
                    { instance = \"b\", effort = \"u\", flow = \"y\", sign = -1.0 } ]\n";
        let sys = resolve(text).unwrap();
        assert!(sys.bonds()[0].energy_correction);
        assert!(crate::bonds::couple(&sys, &[&m, &m], &[false, false]).is_ok());
        let coupling_error =
            |text: &str| match crate::bonds::couple(&resolve(text).unwrap(), &[&m, &m], &[false, false]) {
                Ok(_) => panic!("expected an error"),
                Err(e) => e.to_string(),
            };
        // Both efforts are outputs: the bond law has no effort to correct; the input law
        // corrects the flow inputs (their conjugates are outputs).
        let text = text.replace("effort = \"u\", flow = \"y\"", "effort = \"y\", flow = \"u\"");
        assert_eq!(resolve(&text).unwrap().bonds()[0].correction.law, CorrectionLaw::Input);
        assert!(crate::bonds::couple(&resolve(&text).unwrap(), &[&m, &m], &[false, false]).is_ok());
        let bond_law =
            text.replace("energy_correction = true\n", "energy_correction = true\nenergy_correction_law = \"bond\"\n");
        let e = coupling_error(&bond_law);
        assert!(e.contains("bonds.p.energy_correction") && e.contains("connected input"), "{e}");
        // Only outputs at both ports: nothing for the input law either.
        let e = coupling_error(&text.replace("flow = \"u\"", "flow = \"y\""));
        assert!(e.contains("bonds.p.energy_correction") && e.contains("connected input"), "{e}");
        // A bond's own gain is checked under its own key.
        let e = message(resolve(
            &bond_law
                .replace("energy_correction = true\n", "energy_correction = true\nenergy_correction_gain = -1.0\n"),
        ));
        assert!(e.contains("bonds[0].energy_correction_gain") && e.contains("-1"), "{e}");
        // An override switches it off everywhere; an unknown bond name is refused.
        let over = Overrides::settings(Settings { energy_correction: Some(false), ..Default::default() });
        let b = SystemBuilder::parse(
            Path::new("sys.toml"),
            &format!("[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n{text}"),
        )
        .unwrap();
        assert!(!b.build_with(&[&m, &m], &over).unwrap().bonds()[0].energy_correction);
        let mut b = b;
        b.bond_energy_correction("nope", true);
        let e = message(b.build(&[&m, &m]));
        assert!(e.contains("bonds.nope.energy_correction"), "{e}");
    }
}
