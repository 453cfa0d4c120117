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
use crate::system::{Overrides, Parallel, Settings, Signal, SystemBuilder, Value, VarRef};
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

/// The system file, its FMUs (loaded once) and the system every configuration is made from.
pub struct Base {
    path: PathBuf,
    system: SystemBuilder,
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
        let system = SystemBuilder::parse(path, &text)?;
        let mut fmus = FmuCache::with_host(host);
        let (names, paths): (Vec<String>, Vec<PathBuf>) = system.fmus().into_iter().unzip();
        for p in &paths {
            fmus.load(p)?;
        }
        Ok(Self { path: path.to_path_buf(), system, fmus, paths, names, counter: AtomicU64::new(0) })
    }

    /// The `[tune]` table.
    pub fn tune_table(&self) -> Option<&crate::system::TuneTable> {
        self.system.tune_table()
    }

    /// The `[[inputs]]` of the system file.
    pub fn inputs(&self) -> &[crate::system::InputDraft] {
        self.system.inputs()
    }

    /// The `[simulation]` settings.
    pub fn settings(&self) -> &Settings {
        self.system.settings()
    }

    /// The system file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Model descriptions, one per instance (sorted by instance name).
    pub fn mds(&self) -> Vec<&ModelDescription> {
        self.paths.iter().filter_map(|p| self.fmus.get(p)).map(|f| f.model_description()).collect()
    }

    /// The system with `config` applied: start values and `[simulation]` settings set (by
    /// [`Settings::set`]), the swept connections' extrapolation replaced, and the `[[inputs]]`
    /// of the replaced inputs removed when `drop_inputs` (else kept, as in the recommended
    /// system file). FMU paths stay relative to the system file.
    pub fn document(&self, spec: &TuneSpec, config: &Config, drop_inputs: bool) -> Result<SystemBuilder> {
        let err =
            |key: &str, message: String| MasterError::System { path: self.path.clone(), key: key.to_owned(), message };
        let mut b = self.system.clone();
        for (key, value) in &config.params {
            for dotted in key.split(',') {
                // `simulation.energy_correction`, `simulation.step_control`, `simulation.ecco.rtol`,
                // …: a setting of `[simulation]` (energy-based coupling control as a dimension).
                if let Some(setting) = dotted.trim().strip_prefix("simulation.") {
                    b.settings_mut()
                        .set(setting, value.clone())
                        .map_err(|m| err("tune.space", format!("simulation.{m}")))?;
                    continue;
                }
                let (inst, var) = dotted
                    .trim()
                    .split_once('.')
                    .ok_or_else(|| err("tune.space", format!("\"{dotted}\" is not instance.variable")))?;
                b.instance_mut(inst)
                    .ok_or_else(|| err("tune.space", format!("unknown instance \"{inst}\" in \"{dotted}\"")))?
                    .start(var, Value::from_toml(value));
            }
        }
        let swept = |to: &str| spec.extrapolate.as_ref().is_none_or(|l| l.iter().any(|x| x == to));
        for c in b.connections_mut() {
            let to = c.to().to_owned();
            if !swept(&to) {
                continue;
            }
            match &config.extrapolation {
                Extrap::Order(m) => {
                    c.extrapolation(*m);
                }
                Extrap::I2 => {
                    let d = spec.i2.get(&to).ok_or_else(|| {
                        err("tune.i2", format!("extrapolation I2 needs [tune.i2].\"{to}\" = [derivative outputs]"))
                    })?;
                    c.i2(d.iter().cloned());
                }
            }
        }
        if drop_inputs {
            b.retain_inputs(|i| !spec.inputs.iter().any(|x| x == i.to()));
        }
        Ok(b)
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
        // The sweep's runs go as fast as they can: a paced system file is not paced here.
        let s = b.settings_mut();
        (s.real_time, s.max_lateness, s.real_time_priority) = (None, None, None);
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
