//! The `[[connections]]` (whole arrays element by element, extrapolation, linear transform) and
//! the `[[inputs]]` time tables driving unconnected inputs.

use super::*;

impl Resolver<'_> {
    /// The `[[connections]]`: an output to an input of a compatible type, each input once; the
    /// command line's `--extrapolation` (`forced`) over each connection's own.
    pub(super) fn connections(
        &self,
        forced: Option<usize>,
        default_extrapolation: &Extrapolation,
    ) -> Result<Vec<Connection>> {
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
    pub(super) fn connection(
        &self,
        key: &str,
        rc: &super::schema::ConnectionDraft,
        from_name: &str,
        to_name: &str,
        forced: Option<usize>,
        default_extrapolation: &Extrapolation,
        connections: &mut Vec<Connection>,
    ) -> Result<()> {
        if self.clock_of(from_name).is_some() || self.clock_of(to_name).is_some() {
            return self.clock_connection(key, rc, from_name, to_name, connections);
        }
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
        let mut extrapolation = match (rc.extrapolation_spec(), forced) {
            (_, Some(m)) if m <= 4 => Extrapolation::Order(m),
            (_, Some(m)) => return Err(self.err("--extrapolation", format!("{m} is not in 0..4"))),
            (None, None) => default_extrapolation.clone(),
            (Some(v), None) => self.extrapolation(&format!("{key}.extrapolation"), Some(&v))?,
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

    /// The FMI 3.0 `<Clock>` `inst.name` (instance index and clock).
    fn clock_of(&self, dotted: &str) -> Option<(usize, &model_description::Clock3)> {
        let (inst, name) = dotted.split_once('.')?;
        let i = self.names.iter().position(|n| n == inst)?;
        self.clocks.get(i)?.iter().find(|c| c.name == name).map(|c| (i, c))
    }

    /// A clock connection (docs/fmi3.md "Clocks"): an output clock to a triggered input clock,
    /// each input clock once; a kind that does not match is an error naming both ends.
    fn clock_connection(
        &self,
        key: &str,
        rc: &super::schema::ConnectionDraft,
        from_name: &str,
        to_name: &str,
        connections: &mut Vec<Connection>,
    ) -> Result<()> {
        let end = |side: &str, name: &str| -> Result<VarRef> {
            let k = format!("{key}.{side}");
            match self.clock_of(name) {
                Some((instance, c)) => Ok(VarRef {
                    instance,
                    name: c.name.clone(),
                    vr: c.vr,
                    // Carried as a tick (the instance's value type of a clock is Clock).
                    ty: BaseType::Boolean,
                    causality: if c.input { Causality::Input } else { Causality::Output },
                }),
                None => {
                    let v = self.var(&k, name)?;
                    Err(self.err(
                        k,
                        format!(
                            "{name} is a {} {} variable, not a clock: a clock connection joins an output clock \
                             to an input clock",
                            v.ty, v.causality
                        ),
                    ))
                }
            }
        };
        let (from, to) = (end("from", from_name)?, end("to", to_name)?);
        if from.causality != Causality::Output {
            return Err(self.err(
                format!("{key}.from"),
                format!("{from_name} is an input clock: a clock connection starts at an output clock"),
            ));
        }
        if to.causality != Causality::Input {
            return Err(self.err(
                format!("{key}.to"),
                format!("{to_name} is an output clock: a clock connection ends at an input clock"),
            ));
        }
        let variability = self.clock_of(to_name).map_or("", |(_, c)| c.interval_variability.as_str());
        if variability != "triggered" {
            return Err(self.err(
                format!("{key}.to"),
                format!(
                    "{to_name} is an input clock with intervalVariability=\"{variability}\": cosim activates it \
                     at its own ticks; an input clock fed by a connection must be triggered"
                ),
            ));
        }
        if rc.gain.is_some() || rc.offset.is_some() || rc.extrapolation_spec().is_some() {
            return Err(self.err(key, "gain, offset and extrapolation do not apply to a clock connection"));
        }
        if let Some(prev) = connections.iter().position(|p| p.to == to) {
            return Err(self.err(format!("{key}.to"), format!("{to_name} is already connected by connections[{prev}]")));
        }
        connections.push(Connection { from, to, gain: 1.0, offset: 0.0, extrapolation: Extrapolation::Order(0) });
        Ok(())
    }

    pub(super) fn extrapolation(&self, key: &str, v: Option<&ExtrapolationSpec>) -> Result<Extrapolation> {
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

    pub(super) fn compatible(from: BaseType, to: BaseType) -> bool {
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

    /// The array `name` of instance `inst.name` (`None`: a scalar, an unknown name or instance,
    /// which [`Resolver::var`] reports).
    pub(super) fn array_named(&self, dotted: &str) -> Option<(String, super::arrays::Array)> {
        let (inst, var) = dotted.split_once('.')?;
        let i = self.names.iter().position(|n| n == inst)?;
        super::arrays::array(self.mds[i], var).map(|a| (inst.to_owned(), a))
    }

    /// The (from, to) pairs a connection joins: itself, or element by element when both ends
    /// name whole arrays of equal shape.
    pub(super) fn connected_pairs(&self, key: &str, from: &str, to: &str) -> Result<Vec<(String, String)>> {
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

    /// The `[[inputs]]` (time tables) on Real inputs without a connection or another table.
    pub(super) fn signals(&self, connections: &[Connection]) -> Result<Vec<Signal>> {
        let mut signals: Vec<Signal> = Vec::new();
        for (k, rs) in self.b.inputs.iter().enumerate() {
            let key = format!("inputs[{k}]");
            if rs.file.is_some() {
                self.file_signals(&key, rs, connections, &mut signals)?;
                continue;
            }
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
            signals.push(Signal::new(to, rs.times.clone(), rs.values.clone(), rs.is_linear()));
        }
        Ok(signals)
    }

    /// The signals of a `[[inputs]] file`: the file checked in one validating pass that keeps
    /// nothing ([`crate::system::input_file::check`]), one signal per driven input, whose
    /// points the run streams ([`crate::system::input_stream`]).
    fn file_signals(
        &self,
        key: &str,
        rs: &crate::system::InputDraft,
        connections: &[Connection],
        signals: &mut Vec<Signal>,
    ) -> Result<()> {
        let file = rs.file.as_deref().unwrap_or(std::path::Path::new(""));
        if !rs.to.is_empty() || !rs.times.is_empty() || !rs.values.is_empty() {
            return Err(self.err(
                format!("{key}.file"),
                "a table from a file takes its inputs from `columns` (or the columns named instance.variable), \
                 not `to`, `times` or `values`",
            ));
        }
        // Which input each used column drives: `columns`, else every column naming a free input.
        let driven = |v: &VarRef| {
            v.causality == Causality::Input
                && !connections.iter().any(|c| c.to == *v)
                && !signals.iter().any(|s| s.to == *v)
        };
        let explicit = !rs.columns.is_empty();
        let mut pairs: Vec<(VarRef, String)> = Vec::new();
        for (to, column) in &rs.columns {
            let ckey = format!("{key}.columns.\"{to}\"");
            let v = self.var(&ckey, to)?;
            if v.causality != Causality::Input {
                return Err(self.err(ckey, format!("{to} is not an input")));
            }
            if !driven(&v) {
                return Err(self.err(ckey, format!("{to} already has a connection or a signal")));
            }
            pairs.push((v, column.clone()));
        }
        let wanted: Vec<String> = pairs.iter().map(|(_, c)| c.clone()).collect();
        let mut by_name: Vec<(VarRef, String)> = Vec::new();
        let (scale, offset) = (rs.scale.unwrap_or(1.0), rs.offset.unwrap_or(0.0));
        if !(scale.is_finite() && offset.is_finite()) {
            return Err(self.err(format!("{key}.scale"), "scale and offset must be finite"));
        }
        let transform = (rs.scale.is_some() || rs.offset.is_some()).then_some((scale, offset));
        let value = |x: f64| transform.map_or(x, |(s, o)| s * x + o);
        // The validating pass keeps nothing but, per column, the first value (as the signal
        // sees it) that is not an integer, for the inputs that must be.
        // A scaled value beyond the doubles is refused with its line and column.
        let mut fraction: Vec<Option<(u64, f64)>> = Vec::new();
        let kept = std::cell::RefCell::new(Vec::<String>::new());
        let checked = crate::system::input_file::check(
            file,
            rs.time.as_deref(),
            |name| {
                let keep = if explicit {
                    wanted.iter().any(|w| w == name)
                } else {
                    let var = name
                        .split_once('.')
                        .and_then(|(i, v)| Some((self.names.iter().position(|n| n == i)?, v)))
                        .and_then(|(inst, v)| self.variable_of("", inst, v).ok())
                        .filter(|var| driven(var));
                    var.map(|var| by_name.push((var, name.to_owned()))).is_some()
                };
                if keep {
                    kept.borrow_mut().push(name.to_owned());
                }
                keep
            },
            |row, _, values| {
                if fraction.len() != values.len() {
                    fraction.resize(values.len(), None);
                }
                for (c, (f, x)) in fraction.iter_mut().zip(values).enumerate() {
                    let y = value(*x);
                    if transform.is_some() && !y.is_finite() {
                        let name = kept.borrow().get(c).cloned().unwrap_or_default();
                        let n = crate::suggest::number;
                        return Err(format!(
                            "column {name:?}: {} × scale {} + offset {} = {y}, not a finite number",
                            n(*x),
                            n(scale),
                            n(offset)
                        ));
                    }
                    // Not an integer (every double of magnitude 2^52 or more is one; below, the
                    // cast truncates exactly: no call to `trunc` for each value).
                    if f.is_none() && y.abs() < 4_503_599_627_370_496.0 && (y as i64) as f64 != y {
                        *f = Some((row, y));
                    }
                }
                Ok(())
            },
        )
        .map_err(|e| self.err(format!("{key}.file"), format!("{}: {e}", file.display())))?;
        if !explicit {
            pairs = by_name;
        }
        if pairs.is_empty() {
            return Err(self.err(
                format!("{key}.file"),
                format!(
                    "{}: no column drives an input: name columns instance.variable or map them with \
                     columns = {{ \"instance.variable\" = \"column\" }}",
                    file.display()
                ),
            ));
        }
        let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        let path = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let source = std::sync::Arc::new(crate::system::input_stream::FileSource {
            path,
            time: rs.time.clone(),
            columns: checked.names.clone(),
            transform,
            rows: checked.rows,
            len,
        });
        for (to, column) in pairs {
            let Some(c) = checked.names.iter().position(|n| *n == column) else {
                let message = format!(
                    "{}: no column {column:?} (for {}.{}) in the header",
                    file.display(),
                    self.names[to.instance],
                    to.name
                );
                return Err(self.err(format!("{key}.columns"), message));
            };
            let integral = matches!(to.ty, BaseType::Integer | BaseType::Enumeration | BaseType::Boolean);
            if to.ty != BaseType::Real && !integral {
                return Err(self.err(
                    format!("{key}.columns"),
                    format!(
                        "{}.{} is a {:?} input: a file drives Real, Integer, Enumeration and Boolean inputs",
                        self.names[to.instance], to.name, to.ty
                    ),
                ));
            }
            if let (true, Some(Some((r, x)))) = (integral, fraction.get(c)) {
                let message = format!(
                    "{}: row {r} of column {column:?}: {x} is not an integer ({}.{} is {:?})",
                    file.display(),
                    self.names[to.instance],
                    to.name,
                    to.ty
                );
                return Err(self.err(format!("{key}.file"), message));
            }
            // Non-Real inputs are held (as FMPy does), whatever `interpolation` says.
            let linear = rs.is_linear() && !integral;
            let file = Some(crate::system::FileColumn { source: source.clone(), column: c });
            signals.push(Signal { to, times: Vec::new(), values: Vec::new(), linear, file });
        }
        Ok(())
    }
}
