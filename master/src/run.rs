//! The run loop: initialize the instances, step the algorithm, notify the observers — as small
//! as libcosim's `execution::step()`. A failure stops the run; the observers still finish, so
//! everything up to the failure is on disk and `summary.json` says what happened.

use crate::algorithm::Engine;
use crate::error::{MasterError, Result};
use crate::fmu::Slave;
use crate::observer::{BondSummary, BondsCsv, InstanceSummary, Observer, Progress, ResultsCsv, Summary, SummaryJson};
use crate::system::{AlgorithmKind, StartValue, System};
use model_description::ModelDescription;
use std::path::Path;
use std::time::Instant;

/// Set by the `cosim` binary's SIGINT/SIGTERM handler: the run loop stops at the next
/// communication point, the observers finish, and `summary.json` says "interrupted".
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets the start values, initializes every instance and returns the engine ready to step.
pub fn initialize(sys: &System, slaves: &mut [Box<dyn Slave>], mds: &[&ModelDescription]) -> Result<Engine> {
    for (spec, slave) in sys.instances.iter().zip(slaves.iter_mut()) {
        slave.setup(sys.start, Some(sys.stop))?;
        for (v, value) in &spec.starts {
            match value {
                StartValue::Real(x) => slave.set_real(&[v.vr], &[*x])?,
                StartValue::Integer(x) => slave.set_integer(&[v.vr], &[*x])?,
                StartValue::Boolean(x) => slave.set_boolean(&[v.vr], &[*x])?,
                StartValue::String(x) => slave.set_string(&[v.vr], &[x.as_str()])?,
            }
        }
        for sig in sys.signals.iter().filter(|s| std::ptr::eq(&sys.instances[s.to.instance], spec)) {
            slave.set_real(&[sig.to.vr], &[sig.at(sys.start).0])?;
        }
        slave.enter_initialization()?;
        slave.exit_initialization()?;
    }
    let interpolates: Vec<bool> = slaves.iter().map(|s| s.can_interpolate_inputs()).collect();
    let mut engine = Engine::new(sys, mds, &interpolates)?;
    engine.initialize(slaves)?;
    Ok(engine)
}

/// Runs `sys` with already instantiated `slaves` (one per instance, in order) and writes
/// `results.csv`, `bonds.csv` and `summary.json` into `out_dir`. Returns the summary; its
/// status says whether the run succeeded (errors during the run are reported there, not as
/// `Err`; `Err` means the output files could not be written).
pub fn run(sys: &System, slaves: &mut [Box<dyn Slave>], mds: &[&ModelDescription], out_dir: &Path) -> Result<Summary> {
    std::fs::create_dir_all(out_dir).map_err(|source| MasterError::Io { path: out_dir.to_path_buf(), source })?;
    let labels: Vec<String> = sys.outputs.iter().map(|v| sys.label(v)).collect();
    let bond_names: Vec<String> = sys.bonds.iter().map(|b| b.name.clone()).collect();
    let mut observers: Vec<Box<dyn Observer>> = vec![
        Box::new(ResultsCsv::create(&out_dir.join("results.csv"), &labels, sys.record_every)?),
        Box::new(BondsCsv::create(&out_dir.join("bonds.csv"), &bond_names, sys.record_every)?),
        Box::new(SummaryJson::new(&out_dir.join("summary.json"))),
        Box::new(Progress::new(sys.steps())),
    ];
    let wall = Instant::now();
    let mut steps = 0;
    let mut values = Vec::with_capacity(labels.len());
    let mut engine = None;
    let mut interrupted = false;
    let outcome = (|| -> Result<()> {
        let e = engine.insert(initialize(sys, slaves, mds)?);
        e.recorded(slaves, &mut values)?;
        for o in observers.iter_mut() {
            o.start(sys.start, &values, e.bonds())?;
        }
        for n in 0..sys.steps() {
            if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            e.step(n, slaves)?;
            steps = n + 1;
            let t = sys.start + steps as f64 * sys.step;
            e.recorded(slaves, &mut values)?;
            for o in observers.iter_mut() {
                o.step(n, t, &values, e.bonds())?;
            }
        }
        for s in slaves.iter_mut() {
            s.terminate()?;
        }
        Ok(())
    })();
    let (status, message) = match &outcome {
        Ok(()) if interrupted => (
            "interrupted".to_owned(),
            format!("interrupted (SIGINT/SIGTERM) at t = {}", sys.start + steps as f64 * sys.step),
        ),
        Ok(()) => ("ok".to_owned(), String::new()),
        Err(e) => ("failed".to_owned(), e.to_string()),
    };
    let stats = engine.as_ref().map(Engine::step_stats).unwrap_or_default();
    let summary = Summary {
        status,
        message,
        steps,
        time: sys.start + steps as f64 * sys.step,
        wall_time_s: wall.elapsed().as_secs_f64(),
        algorithm: match sys.algorithm {
            AlgorithmKind::Jacobi => "jacobi".into(),
            AlgorithmKind::GaussSeidel => "gauss-seidel".into(),
        },
        step_size: sys.step,
        parallel: engine.as_ref().is_some_and(Engine::uses_threads),
        instances: sys
            .instances
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let (secs, calls) = stats.get(i).copied().unwrap_or((0.0, 0));
                InstanceSummary {
                    name: spec.name.clone(),
                    fmu: spec.fmu.display().to_string(),
                    do_step_calls: calls,
                    do_step_seconds: secs,
                }
            })
            .collect(),
        bonds: sys
            .bonds
            .iter()
            .enumerate()
            .map(|(b, bond)| {
                let s = engine.as_ref().and_then(|e| e.bonds().get(b).copied()).unwrap_or_default();
                BondSummary { name: bond.name.clone(), energy: s.e, energy_abs: s.e_abs }
            })
            .collect(),
    };
    for o in observers.iter_mut() {
        o.finish(&summary)?;
    }
    Ok(summary)
}

/// Loads the system file and its FMUs, instantiates every instance and runs it (the `cosim run`
/// command). Each FMU file is loaded once, however many instances it has. With isolation
/// (`--isolate` or `[simulation].isolate`) every instance runs in its own worker process
/// ([`crate::fmu::isolated`]) and the master loads no FMU binary itself.
pub fn run_file(path: &Path, over: &crate::system::Overrides, out_dir: &Path) -> Result<Summary> {
    use crate::fmu::instance::Fmu2;
    use std::sync::Arc;
    let draft = crate::system::Draft::read(path)?;
    if draft.isolate(over) {
        let exe = crate::fmu::isolated::worker_exe()?;
        let mut slaves: Vec<Box<dyn Slave>> = Vec::new();
        let mut descriptions = Vec::new();
        for (name, fmu_path) in draft.fmus() {
            let (slave, md) = crate::fmu::IsolatedSlave::spawn(&exe, &fmu_path, &name)?;
            slaves.push(Box::new(slave));
            descriptions.push(md);
        }
        let mds: Vec<&ModelDescription> = descriptions.iter().collect();
        let sys = draft.resolve(&mds, over)?;
        return run(&sys, &mut slaves, &mds, out_dir);
    }
    let mut loaded: Vec<(std::path::PathBuf, Arc<Fmu2>)> = Vec::new();
    let mut per_instance = Vec::new();
    for (_, fmu_path) in draft.fmus() {
        let fmu = match loaded.iter().find(|(p, _)| *p == fmu_path) {
            Some((_, f)) => Arc::clone(f),
            None => {
                let f = Fmu2::load(&fmu_path)?;
                loaded.push((fmu_path.clone(), Arc::clone(&f)));
                f
            }
        };
        per_instance.push(fmu);
    }
    let mds: Vec<&ModelDescription> = per_instance.iter().map(|f| f.model_description()).collect();
    let sys = draft.resolve(&mds, over)?;
    let mut slaves: Vec<Box<dyn Slave>> = Vec::with_capacity(sys.instances.len());
    for (spec, fmu) in sys.instances.iter().zip(&per_instance) {
        slaves.push(Box::new(fmu.instantiate(&spec.name)?));
    }
    run(&sys, &mut slaves, &mds, out_dir)
}
