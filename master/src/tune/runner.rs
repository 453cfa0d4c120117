//! One co-simulation run in memory: a system file with a configuration applied, test signals on
//! the replaced inputs, H and a stop time; returns Σ|δE| of all bonds and the outcome. Each run
//! instantiates its own FMU instances from FMUs loaded once (thread-safe per instance), so runs
//! execute in parallel on worker threads.

use super::space::{Config, Extrap, TuneSpec};
use crate::error::{MasterError, Result};
use crate::execution::Execution;
use crate::fmu::FmuCache;
use crate::observer::SharedRecorder;
use crate::suggest::did_you_mean;
use crate::system::{Overrides, Parallel, Settings, Signal, SystemBuilder, VarRef};
use model_description::ModelDescription;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What one run gave.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Communication steps done.
    pub steps: u64,
    /// Simulated time covered (s).
    pub time: f64,
    /// Σ|δE| summed over all bonds (J).
    pub e_abs: f64,
    /// `None` if the run completed, else why it stopped.
    pub failure: Option<String>,
    /// Recorded variables at every communication point (only when asked for).
    pub trace: Vec<Vec<f64>>,
}

/// The system file, its FMUs (loaded once) and the document every configuration is made from.
pub struct Base {
    path: PathBuf,
    doc: toml::Table,
    fmus: FmuCache,
    /// Each instance's FMU file, in instance order.
    paths: Vec<PathBuf>,
    names: Vec<String>,
    counter: AtomicU64,
}

impl Base {
    /// Reads the system file and loads each FMU once; `host`: the embedding program's (its
    /// stop request stops the runs, its cleanup registry learns of the extraction folders).
    pub fn load(path: &Path, host: crate::host::Host) -> Result<Self> {
        let text = crate::system::read_text(path)?;
        let draft = SystemBuilder::parse(path, &text)?;
        let doc: toml::Table = toml::from_str(&text).map_err(|e| MasterError::System {
            path: path.to_path_buf(),
            key: String::new(),
            message: e.message().to_owned(),
        })?;
        let mut fmus = FmuCache::with_host(host);
        let (names, paths): (Vec<String>, Vec<PathBuf>) = draft.fmus().into_iter().unzip();
        for p in &paths {
            fmus.load(p)?;
        }
        Ok(Self { path: path.to_path_buf(), doc, fmus, paths, names, counter: AtomicU64::new(0) })
    }

    /// The `[tune]` table.
    pub fn tune_table(&self) -> Option<&toml::Value> {
        self.doc.get("tune")
    }

    /// The `[simulation]` table.
    pub fn simulation_table(&self) -> Option<&toml::Value> {
        self.doc.get("simulation")
    }

    /// The system file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Model descriptions, one per instance (sorted by instance name).
    pub fn mds(&self) -> Vec<&ModelDescription> {
        self.paths.iter().filter_map(|p| self.fmus.get(p)).map(|f| f.model_description()).collect()
    }

    /// The system document with `config` applied: start values set, the swept connections'
    /// extrapolation replaced, and the `[[inputs]]` of the replaced inputs removed when
    /// `drop_inputs` (else kept, as in the recommended system file).
    pub fn document(&self, spec: &TuneSpec, config: &Config, drop_inputs: bool) -> Result<toml::Table> {
        let err =
            |key: &str, message: String| MasterError::System { path: self.path.clone(), key: key.to_owned(), message };
        let mut doc = self.doc.clone();
        for (key, value) in &config.params {
            for dotted in key.split(',') {
                // `simulation.energy_correction`, `simulation.step_control`, `simulation.ecco.rtol`,
                // …: a setting of `[simulation]` (energy-based coupling control as a dimension).
                if let Some(setting) = dotted.trim().strip_prefix("simulation.") {
                    let mut table = doc
                        .entry("simulation")
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                        .as_table_mut()
                        .ok_or_else(|| err("simulation", "is not a table".into()))?;
                    let mut parts: Vec<&str> = setting.split('.').collect();
                    let last = parts.pop().unwrap_or_default();
                    for part in parts {
                        table = table
                            .entry(part)
                            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                            .as_table_mut()
                            .ok_or_else(|| err("tune.space", format!("simulation.{part} is not a table")))?;
                    }
                    table.insert(last.to_owned(), value.clone());
                    continue;
                }
                let (inst, var) = dotted
                    .trim()
                    .split_once('.')
                    .ok_or_else(|| err("tune.space", format!("\"{dotted}\" is not instance.variable")))?;
                let start = doc
                    .get_mut("instances")
                    .and_then(|i| i.get_mut(inst))
                    .and_then(toml::Value::as_table_mut)
                    .ok_or_else(|| err("tune.space", format!("unknown instance \"{inst}\" in \"{dotted}\"")))?
                    .entry("start")
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let Some(t) = start.as_table_mut() {
                    t.insert(var.to_owned(), value.clone());
                }
            }
        }
        let swept = |to: &str| spec.extrapolate.as_ref().is_none_or(|l| l.iter().any(|x| x == to));
        if let Some(conns) = doc.get_mut("connections").and_then(toml::Value::as_array_mut) {
            for c in conns.iter_mut().filter_map(toml::Value::as_table_mut) {
                let to = c.get("to").and_then(toml::Value::as_str).unwrap_or_default().to_owned();
                if !swept(&to) {
                    continue;
                }
                match &config.extrapolation {
                    Extrap::Order(m) => {
                        c.insert("extrapolation".into(), toml::Value::Integer(*m as i64));
                        c.remove("derivatives");
                    }
                    Extrap::I2 => {
                        let d = spec.i2.get(&to).ok_or_else(|| {
                            err("tune.i2", format!("extrapolation I2 needs [tune.i2].\"{to}\" = [derivative outputs]"))
                        })?;
                        c.insert("extrapolation".into(), toml::Value::String("I2".into()));
                        c.insert(
                            "derivatives".into(),
                            toml::Value::Array(d.iter().map(|s| toml::Value::String(s.clone())).collect()),
                        );
                    }
                }
            }
        }
        if drop_inputs {
            if let Some(inputs) = doc.get_mut("inputs").and_then(toml::Value::as_array_mut) {
                inputs.retain(|i| {
                    let to = i.get("to").and_then(toml::Value::as_str).unwrap_or_default();
                    !spec.inputs.iter().any(|x| x == to)
                });
            }
        }
        Ok(doc)
    }

    /// Parses a document made by [`Base::document`] (FMU paths stay relative to the system file).
    pub fn draft(&self, doc: &toml::Table) -> Result<SystemBuilder> {
        let text = toml::to_string(doc).map_err(|e| MasterError::System {
            path: self.path.clone(),
            key: String::new(),
            message: format!("cannot write the configured system: {e}"),
        })?;
        SystemBuilder::parse(&self.path, &text)
    }

    /// Resolves `inst.var` to a variable reference.
    pub fn var(&self, dotted: &str) -> Result<VarRef> {
        let bad = |message: String| MasterError::System { path: self.path.clone(), key: "tune".into(), message };
        let (inst, var) =
            dotted.split_once('.').ok_or_else(|| bad(format!("\"{dotted}\" is not of the form instance.variable")))?;
        let i = self.names.iter().position(|n| n == inst).ok_or_else(|| {
            let hint = did_you_mean(inst, self.names.iter().map(String::as_str));
            bad(format!("unknown instance \"{inst}\" in \"{dotted}\"{hint}"))
        })?;
        let mds = self.mds();
        let md = mds[i];
        let v = md.variable(var).ok_or_else(|| {
            let hint = did_you_mean(var, md.model_variables.iter().map(|v| v.name.as_str()));
            bad(format!("instance \"{inst}\" ({}) has no variable \"{var}\"{hint}", md.model_name))
        })?;
        Ok(VarRef {
            instance: i,
            name: var.to_owned(),
            vr: v.value_reference,
            ty: v.kind.base_type(),
            causality: v.causality,
        })
    }

    /// Runs `draft` at step `h` for `steps` steps with `signals` added (replacing nothing: the
    /// draft must not drive those inputs). `max_e_abs` stops a run whose Σ|δE| blows up;
    /// `record` names variables whose values are returned at every communication point.
    pub fn run(
        &self,
        draft: &SystemBuilder,
        h: f64,
        steps: u64,
        signals: &[Signal],
        max_e_abs: Option<f64>,
        record: Option<&[VarRef]>,
    ) -> Result<RunOutcome> {
        let over = Overrides::settings(Settings {
            step: Some(h),
            stop: Some(steps as f64 * h),
            parallel: Some(Parallel::Off),
            isolate: Some(false),
            ..Default::default()
        });
        let mut b = draft.clone();
        let label = |v: &VarRef| format!("{}.{}", self.names[v.instance], v.name);
        for sig in signals {
            let input = b.input(&label(&sig.to), sig.times.clone(), sig.values.clone());
            if sig.linear {
                input.linear();
            }
        }
        b.max_residual_energy(max_e_abs);
        if let Some(r) = record {
            b.outputs(r.iter().map(label));
        }
        let sys = b.build_with(&self.mds(), &over)?;
        let id = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut run = Execution::new_named(sys, &self.fmus, &format!("#{id}"))?;
        run.set_timing(false);
        // The cache hands this run the host of `Base::load` (`cosim tune`: its signal guard's):
        // a stop request stops it at its next step and the sweep after it (the runs done stay in
        // tune.csv; the same command resumes).
        let trace = SharedRecorder::default();
        if record.is_some() {
            run.observe(Box::new(trace.clone()));
        }
        let result = run.run();
        if let Err(MasterError::Interrupted { time }) = result {
            let _ = run.finish();
            return Err(MasterError::Interrupted { time });
        }
        let mut out = RunOutcome {
            steps: run.steps(),
            // Step control (ECCO) takes steps of its own size: the time reached.
            time: if run.step_history().is_empty() {
                run.steps() as f64 * h
            } else {
                run.time() - run.system().start()
            },
            e_abs: run.bonds().iter().map(|b| b.e_abs).sum(),
            failure: None,
            trace: Vec::new(),
        };
        match (result, run.finish()) {
            (Err(e), _) | (Ok(()), Err(e)) => out.failure = Some(e.to_string()),
            (Ok(()), Ok(s)) if s.status != crate::observer::Status::Ok => out.failure = Some(s.message),
            _ => {}
        }
        if out.failure.is_none() && !out.e_abs.is_finite() {
            out.failure = Some(format!("Σ|δE| = {} is not finite", out.e_abs));
        }
        if let Ok(mut r) = trace.lock() {
            out.trace = std::mem::take(&mut r.values);
        }
        Ok(out)
    }
}
