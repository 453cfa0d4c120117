//! The `[instances]`: sub-steps, the size guard, start values (typed against the model
//! description, whole arrays element by element) and each instance's fixed internal step.

use super::*;

impl Resolver<'_> {
    /// The `[instances.NAME]` tables: sub-steps, the size guard (`--force`), start values.
    pub(super) fn instances(&self, span: &Span, iterations: u32, force: bool) -> Result<Vec<InstanceSpec>> {
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
                                crate::suggest::short(step / h),
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
            for (whole, value) in &ri.start {
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
                configuration: Vec::new(),
                me_group: ri.me_group.clone(),
            });
        }
        Ok(instances)
    }

    /// The (variable, value) pairs a start value sets: itself, or every element of a whole
    /// array from a TOML array of as many values (row-major).
    pub(super) fn start_elements(&self, key: &str, i: usize, var: &str, value: &Value) -> Result<Vec<(String, Value)>> {
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

    pub(super) fn start_value(&self, key: &str, var: &VarRef, value: &Value) -> Result<StartValue> {
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
            (BaseType::Integer, Value::Integer(x)) if md.fmi_version.starts_with("3.") => {
                Ok(StartValue::Integer((*x).into()))
            }
            // A UInt64 above 2^63 − 1 (TOML's integers end there): given as its digits in a string.
            (BaseType::Integer, Value::String(digits)) if md.fmi_version.starts_with("3.") => digits
                .trim()
                .parse::<u64>()
                .map(|u| StartValue::Integer(u.into()))
                .map_err(|_| bad("64-bit integer (a UInt64 above 2^63 − 1 is written as its digits in a string)")),
            (BaseType::Integer, Value::Integer(x)) => {
                i32::try_from(*x).map(|_| StartValue::Integer((*x).into())).map_err(|_| bad("32-bit integer"))
            }
            (BaseType::Enumeration, Value::Integer(x)) if md.fmi_version.starts_with("3.") => {
                Ok(StartValue::Integer((*x).into()))
            }
            (BaseType::Enumeration, Value::Integer(x)) => {
                i32::try_from(*x).map(|_| StartValue::Integer((*x).into())).map_err(|_| bad("enumeration value"))
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

    /// The fixed internal step of instance i from its FMU: the Real parameter `h` with unit
    /// "s" (this project's FMUs name their step so), at its start value in the system or else in
    /// the model description; `None` when absent or not positive (0: "h = H").
    pub(super) fn internal_step(&self, i: usize, starts: &[(VarRef, StartValue)]) -> Option<f64> {
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
}
