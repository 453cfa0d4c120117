//! `cosim run`: an FMU, an SSP or a system file run to the stop time into an output directory —
//! a thin front end over [`Execution`]. What the input is, is decided by its content
//! ([`detect`]), not by its name.

use master::error::{MasterError, Result};
use master::execution::{file_observers_for, Execution};
use master::fmu::FmuCache;
use master::observer::Summary;
use master::single::{self, FmuOptions};
use master::system::{Overrides, SystemBuilder};
use std::path::{Path, PathBuf};

pub use crate::guard::INTERRUPTED;
pub use master::input_kind::{detect, Input};

/// What `cosim run` takes besides the input file.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides of the settings (stop, step, algorithm, …; start and stop/step apply to every
    /// input).
    pub over: Overrides,
    /// `name=value` start values (an FMU's variables, typed by its model description).
    pub start_values: Vec<String>,
    /// `--input-file`: a CSV file driving inputs by column name.
    pub input_file: Option<std::path::PathBuf>,
    /// Time between rows of results.csv (s): a whole multiple of the communication step.
    pub output_interval: Option<f64>,
    /// Recorded variables: an FMU's variable names, or a system's `instance.variable`.
    pub output_variables: Option<Vec<String>>,
    /// Write `timing.csv` (every step's wall time and lateness) of a paced run.
    pub timing_csv: bool,
    /// Serve the run live (`--serve`, `--paused`; a `[live]` table serves it too).
    pub serve: master::live::ServeOptions,
    /// `--replay`: a live run's results.csv (or its folder) replayed into the `[live]` inputs.
    pub replay: Option<std::path::PathBuf>,
}

/// An input ready to run: its kind, the system and what was chosen for it.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// What the input is.
    pub input: Input,
    /// The system.
    pub builder: SystemBuilder,
    /// The overrides to build it with.
    pub over: Overrides,
    /// Lines for the user (e.g. the experiment of an FMU and where its values came from).
    pub notes: Vec<String>,
    /// An SSP package's extracted files (its FMUs), kept while the input is.
    pub package: Option<std::sync::Arc<master::ssp::Ssp>>,
    /// `timing.csv` and live serving ([`RunOptions`]).
    pub timing_csv: bool,
    /// Live serving.
    pub serve: master::live::ServeOptions,
    /// A live run replayed instead of served ([`RunOptions::replay`]).
    pub replay: Option<std::path::PathBuf>,
}

/// The system of an SSP ([`master::ssp::read`]); the package stays extracted while the returned
/// [`master::ssp::Ssp`] lives.
pub fn ssp_builder(path: &Path, over: &Overrides) -> Result<master::ssp::Ssp> {
    let ssp = master::ssp::read_in(path, &crate::guard::host())?;
    ssp.check_overrides(over)?;
    Ok(ssp)
}

/// `--start-value`, `--output-interval` and `--output-variables` applied to a system (TOML or
/// SSP), whose start values live in the file.
fn system_options(
    path: &Path,
    mut b: SystemBuilder,
    over: &Overrides,
    opts: &RunOptions,
) -> Result<(SystemBuilder, Vec<String>)> {
    let err = |key: &str, message: String| MasterError::System { path: path.to_path_buf(), key: key.into(), message };
    if let Some(arg) = opts.start_values.first() {
        return Err(err(
            &format!("--start-value {arg}"),
            "start values on the command line apply to an FMU; in a system file give them as \
             [instances.<name>].start = { variable = value }"
                .into(),
        ));
    }
    let mut notes = Vec::new();
    if let Some(interval) = opts.output_interval {
        let step = over.settings.step.or(b.settings().step).ok_or_else(|| {
            err("--output-interval", "the system gives no communication step ([simulation].step)".into())
        })?;
        let k = (interval / step).round();
        if !(interval.is_finite() && k >= 1.0 && (k * step - interval).abs() <= 1e-9 * interval) {
            return Err(err(
                "--output-interval",
                format!("{interval} s is not a whole multiple of the communication step {step} s"),
            ));
        }
        b.record_every(k as u64);
        notes.push(format!("output interval {interval} s: every {k} steps"));
    }
    if let Some(names) = &opts.output_variables {
        b.outputs(names.iter().cloned());
    }
    if let Some(file) = &opts.input_file {
        // One more `[[inputs]] file`: its columns named instance.variable drive those inputs.
        b.input_file(std::path::absolute(file).unwrap_or_else(|_| file.clone()));
    }
    // Live inputs and outputs are recorded (results.csv shows what the operator did).
    if let Some(spec) = b.live.clone() {
        for name in master::live::recorded_names(&spec) {
            if b.recorded().is_some_and(|list| !list.contains(name)) {
                b.record(name);
            }
        }
    }
    Ok((b, notes))
}

/// The system `cosim run` runs for the file at `path` of kind `input` ([`detect`]): an FMU as
/// one instance ([`single::builder`]), an SSP ([`ssp_builder`]), or a system file.
pub fn prepare(path: &Path, input: Input, opts: &RunOptions) -> Result<Prepared> {
    let mut over = opts.over.clone();
    // What the command line gave, alone (an FMU's start, stop and step leave the overrides
    // below): `--set start=nan` is named as given, before any file is read.
    if let Err((key, message)) = over.settings.check_values() {
        let key = over.given_as.get(&key).cloned().unwrap_or(key);
        return Err(MasterError::System { path: path.to_path_buf(), key, message });
    }
    let mut package = None;
    let (builder, notes) = match input {
        Input::Fmu => {
            let fmu_opts = FmuOptions {
                start: over.settings.start,
                stop: over.settings.stop,
                step: over.settings.step,
                start_values: opts.start_values.clone(),
                output_interval: opts.output_interval,
                output_variables: opts.output_variables.clone(),
                input_file: opts.input_file.clone(),
            };
            let s = single::builder(path, &fmu_opts)?;
            // Start, stop and step are in the builder now (with the DefaultExperiment's).
            (over.settings.start, over.settings.stop, over.settings.step) = (None, None, None);
            (s.builder, s.notes)
        }
        Input::Ssp => {
            let ssp = ssp_builder(path, &over)?;
            let (b, mut notes) = system_options(path, ssp.builder.clone(), &over, opts)?;
            notes.insert(0, format!("read as {}", ssp.kind));
            notes.splice(1..1, ssp.notes.iter().cloned());
            package = Some(std::sync::Arc::new(ssp));
            (b, notes)
        }
        Input::Toml => system_options(path, SystemBuilder::read(path)?, &over, opts)?,
    };
    let mut builder = builder;
    if opts.replay.is_some() {
        // A replay runs as fast as possible unless the command line paces it.
        let s = builder.settings_mut();
        (s.real_time, s.max_lateness) = (None, None);
    }
    Ok(Prepared {
        input,
        builder,
        over,
        notes,
        package,
        timing_csv: opts.timing_csv,
        serve: opts.serve.clone(),
        replay: opts.replay.clone(),
    })
}

/// Runs a prepared input into `out_dir` ([`run_builder`]; paced, timed and served as asked).
pub fn run_prepared(p: &Prepared, out_dir: &Path) -> Result<Summary> {
    let out = OutDir::lock(out_dir)?;
    crate::guard::doing(crate::guard::Doing::Running);
    let mut fmus = FmuCache::with_host(crate::guard::host());
    let mut execution = Execution::from_builder(&p.builder, &p.over, &mut fmus)?;
    // `[live]` as resolved into the system (the builder's, checked).
    let live = execution.system().live().cloned();
    let served = match &p.replay {
        None => master::live::attach(&mut execution, live.as_ref(), &p.serve)?,
        Some(recorded) => {
            let spec = live.as_ref().ok_or_else(|| MasterError::System {
                path: p.builder.path().to_path_buf(),
                key: "--replay".into(),
                message: "the system has no [live] table: nothing to replay".into(),
            })?;
            master::live::replay(&mut execution, spec, recorded)?;
            None
        }
    };
    let mut resets = Vec::new();
    loop {
        if p.timing_csv {
            match execution.pacer_mut() {
                Some(pacer) => pacer.set_timing_csv(out.path().join("timing.csv")),
                None => {
                    return Err(MasterError::System {
                        path: p.builder.path().to_path_buf(),
                        key: "--timing".into(),
                        message: "step timing is recorded in paced runs: add --real-time [FACTOR]".into(),
                    })
                }
            }
        }
        run_into(&mut execution, out.path())?;
        let mut summary = execution.finish()?;
        // A live client's reset: the same system again from its start, into the same files.
        let Some(s) = served.as_ref().filter(|s| s.hub.control.take_reset()) else {
            if !resets.is_empty() {
                // summary.json says the results are those of the run after the last reset.
                summary.live_resets = resets;
                master::observer::write_summary(&out.path().join("summary.json"), &summary)?;
            }
            drop(served);
            unload(fmus);
            return Ok(summary);
        };
        eprintln!("live: reset at t = {}: the run starts again", summary.time);
        resets.push(summary.time);
        execution = Execution::from_builder(&p.builder, &p.over, &mut fmus)?;
        s.reattach(&mut execution, live.as_ref())?;
    }
}

/// Loads the system's FMUs (each FMU file once, or one worker process per instance with
/// `--isolate` / `[simulation].isolate`), runs it and writes `results.csv`, `bonds.csv` and
/// `summary.json` into `out_dir`. Returns the summary; its status says whether the run
/// succeeded (errors during the run are reported there, not as `Err`; `Err` means the system
/// could not be set up or the output files could not be written).
///
/// The output folder is made absolute and locked ([`OutDir`]) before any FMU is loaded, so an
/// FMU that changes the working directory cannot move the results and a second run cannot write
/// into the same folder; nothing in it is touched before the system is set up and initialized
/// ([`run_into`]).
pub fn run_builder(builder: &SystemBuilder, over: &Overrides, out_dir: &Path) -> Result<Summary> {
    let out = OutDir::lock(out_dir)?;
    crate::guard::doing(crate::guard::Doing::Running);
    let mut fmus = FmuCache::with_host(crate::guard::host());
    let mut execution = Execution::from_builder(builder, over, &mut fmus)?;
    run_into(&mut execution, out.path())?;
    let summary = execution.finish();
    unload(fmus);
    summary
}

/// Drops the FMUs (the last instance is gone): their libraries are unloaded, and a crash in a
/// library's destructors is named as such by the guard, not blamed on an FMI call.
fn unload(fmus: FmuCache) {
    crate::guard::doing(crate::guard::Doing::Unloading);
    drop(fmus);
}

/// Runs a TOML system file, an FMU or an SSP (recognized by content) with `over`.
pub fn run_file(path: &Path, over: &Overrides, out_dir: &Path) -> Result<Summary> {
    let opts = RunOptions { over: over.clone(), ..RunOptions::default() };
    run_prepared(&prepare(path, detect(path)?, &opts)?, out_dir)
}

/// An output folder: created, made absolute, and locked (an exclusive `flock` on
/// `.cosim.lock` in it, released when this is dropped or the process ends however it ends)
/// against other runs writing into it at the same time.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    _lock: std::fs::File,
}

impl OutDir {
    /// Creates `dir` if needed and locks it; refuses a folder another run holds, naming its pid.
    pub fn lock(dir: &Path) -> Result<Self> {
        use std::io::{Seek, Write};
        let io = |source| MasterError::Io { path: dir.to_path_buf(), source };
        if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            // Was "File exists (os error 17)" alone.
            return Err(io(std::io::Error::other(
                "--out names a file, not a folder: cosim writes results.csv, bonds.csv and summary.json into a \
                 folder; choose another --out",
            )));
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.canonicalize().map_err(io)?;
        let lock_path = path.join(".cosim.lock");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|source| MasterError::Io { path: lock_path.clone(), source })?;
        if !cosim_os::fd::try_lock_exclusive(&file)
            .map_err(|source| MasterError::Io { path: lock_path.clone(), source })?
        {
            let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
            let holder = holder.trim();
            let who = if holder.is_empty() { String::new() } else { format!(" (pid {holder})") };
            return Err(io(std::io::Error::other(format!(
                "another cosim run{who} is writing into this output folder; wait for it to end or choose \
                 another --out"
            ))));
        }
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| write!(file, "{}", std::process::id()));
        Ok(Self { path, _lock: file })
    }

    /// The absolute path of the folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Initializes the execution, then attaches the file observers ([`file_observers_for`]) and, with
/// fixed steps, a progress bar on a terminal ([`crate::progress::Progress`]), writes
/// `summary.json` with status `running`, and runs to the stop time, stopping early on
/// SIGINT/SIGTERM ([`INTERRUPTED`]); the outcome is in the summary of [`Execution::finish`].
///
/// `Err` when the execution cannot be initialized (start values refused, an FMU failing in
/// initialization mode, …) or the files cannot be created: then no file in `out_dir` was
/// touched, the results of an earlier run stay as they were.
pub fn run_into(execution: &mut Execution, out_dir: &Path) -> Result<()> {
    execution.interrupt_on(std::sync::Arc::new(crate::guard::Signals));
    execution.initialize()?;
    let start = execution.system().start();
    let values = execution.recorded()?.to_vec();
    let exact = execution.recorded_exact().to_vec();
    let mut observers = file_observers_for(execution.system(), out_dir, &crate::guard::host())?;
    if let master::system::StepControl::Fixed = execution.system().step_control() {
        observers.push(Box::new(crate::progress::Progress::new(execution.system().steps())));
    }
    observers.push(Box::new(crate::guard::Beacon));
    for mut o in observers {
        if !exact.is_empty() {
            o.exact(&exact);
        }
        o.start(start, &values, execution.bonds())?;
        execution.observe(o);
    }
    let summary_path = out_dir.join("summary.json");
    let running = execution.summary();
    master::observer::write_summary(&summary_path, &running)?;
    crate::guard::running(&summary_path, running);
    // A failure is kept by the execution and reported by its summary.
    let _ = execution.run();
    Ok(())
}
