//! `cosim._cosim`: the native half of the `cosim` Python package (PyO3). The Python half
//! (`python/cosim/`) wraps it: `simulate` → NumPy structured array, `System` (a system built in
//! Python), `sweep` (process pool or Dask), `tune`.
//!
//! Every run goes through the master's own front-end path: a [`SystemBuilder`] (read from a TOML
//! file, an SSP, one FMU, or a Python `System` spec) → [`Execution::from_builder`] → steps. The
//! GIL is released while stepping, in slices of at most ~50 ms after which pending signals are
//! checked (Ctrl-C stops the run cleanly and raises `KeyboardInterrupt`).

use master::bonds::BondState;
use master::fmu::FmuCache;
use master::observer::{Observer, Status, Summary};
use master::system::{Overrides, Settings, SystemBuilder, SystemFile, Value};
use master::MasterError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

mod check;
mod fmu_cache;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

mod single_fmu;

create_exception!(_cosim, CosimError, PyException, "An error of the co-simulation master (the Rust message).");

fn err(e: MasterError) -> PyErr {
    CosimError::new_err(master::error::bounded(e.to_string()))
}

/// The recorded columns, each (name, NumPy type), and the row-major bytes of the rows.
pub(crate) type Rows<'py> = (Vec<(String, &'static str)>, Bound<'py, PyBytes>);

/// [`Rows`] and the summary (JSON).
pub(crate) type RowsAndSummary<'py> = (Vec<(String, &'static str)>, Bound<'py, PyBytes>, String);

fn bad(message: impl Into<String>) -> PyErr {
    CosimError::new_err(message.into())
}

/// The recorded values as one flat row-major buffer of 8-byte fields: `time, v1, …, vn` at the
/// start and after every `every`-th step and the last (the rows of `cosim run`'s results.csv). A
/// column of 64-bit integers holds them exactly, as `i64` or `u64` (its NumPy type in `kinds`);
/// every other column is an `f64`.
#[derive(Clone)]
struct Flat {
    rows: Arc<Mutex<Vec<f64>>>,
    every: u64,
    /// The run's number of steps: the last one is recorded too.
    steps: u64,
    /// The non-Real columns (0-based among the values) and their exact values of the next row.
    exact: Arc<Vec<usize>>,
    pending: Vec<master::fmu::Value>,
    /// The NumPy type of each value column ("<f8", "<i8", "<u8"), set by the first exact values.
    kinds: Arc<Mutex<Vec<&'static str>>>,
}

impl Flat {
    fn push(&self, t: f64, values: &[f64]) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        rows.push(t);
        if self.pending.is_empty() {
            rows.extend_from_slice(values);
            return;
        }
        let start = rows.len();
        rows.extend_from_slice(values);
        for (k, v) in self.exact.iter().zip(&self.pending) {
            let bits = match v {
                master::fmu::Value::Int(i) => f64::from_bits(*i as u64),
                master::fmu::Value::UInt(u) => f64::from_bits(*u),
                _ => continue,
            };
            if let Some(x) = rows.get_mut(start + k) {
                *x = bits;
            }
        }
    }
}

impl Observer for Flat {
    fn exact(&mut self, values: &[master::fmu::Value]) {
        if self.pending.len() != values.len() {
            let mut kinds = self.kinds.lock().unwrap_or_else(PoisonError::into_inner);
            for (k, v) in self.exact.iter().zip(values) {
                if let Some(slot) = kinds.get_mut(*k) {
                    *slot = match v {
                        master::fmu::Value::Int(_) => "<i8",
                        master::fmu::Value::UInt(_) => "<u8",
                        _ => "<f8",
                    };
                }
            }
            self.pending = values.to_vec();
        } else {
            for (p, v) in self.pending.iter_mut().zip(values) {
                p.assign(v);
            }
        }
    }
    fn start(&mut self, t: f64, values: &[f64], _b: &[BondState]) -> master::Result<()> {
        self.push(t, values);
        Ok(())
    }
    fn step(&mut self, n: u64, t: f64, values: &[f64], _b: &[BondState]) -> master::Result<()> {
        // every = 1 (the common case) without the integer division of is_multiple_of.
        if self.every == 1 || (n + 1).is_multiple_of(self.every) || n + 1 == self.steps {
            self.push(t, values);
        }
        Ok(())
    }
}

/// A Python start value → a builder value, as the schema reads it from the same value in a
/// `cosim.System` ([`toml_value`]: bool before int, a list, tuple or NumPy array for a whole
/// array).
fn value(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "start value {v}: not a bool, int, float, str or a list of them (a whole array, row-major)"
        )));
    }
    toml_value(v)?
        .map(|t| Value::from_toml(&t))
        .ok_or_else(|| PyTypeError::new_err("start value None: give a bool, int, float, str or a list of them"))
}

/// A Python value → TOML (`None`: not given).
fn toml_value(v: &Bound<'_, PyAny>) -> PyResult<Option<toml::Value>> {
    use toml::Value as T;
    if v.is_none() {
        return Ok(None);
    }
    // NumPy arrays and scalars as Python values (an int64 stays an integer, not a float).
    let plain = v.is_instance_of::<pyo3::types::PyBool>()
        || v.is_instance_of::<pyo3::types::PyInt>()
        || v.is_instance_of::<pyo3::types::PyFloat>()
        || v.is_instance_of::<pyo3::types::PyString>();
    if !plain && v.hasattr("tolist")? {
        return toml_value(&v.call_method0("tolist")?);
    }
    if let Ok(b) = v.downcast::<pyo3::types::PyBool>() {
        return Ok(Some(T::Boolean(b.is_true())));
    }
    if v.is_instance_of::<pyo3::types::PyInt>() {
        // A UInt64 above 2^63 − 1 (TOML's integers end there) travels as its digits, as a
        // system file writes it; the resolver reads them for an FMI 3.0 integer.
        if let (Err(_), Ok(u)) = (v.extract::<i64>(), v.extract::<u64>()) {
            return Ok(Some(T::String(u.to_string())));
        }
        return Ok(Some(T::Integer(v.extract()?)));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Some(T::Float(x)));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(Some(T::String(s)));
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            if let Some(x) = toml_value(&x)? {
                t.insert(k.extract()?, x);
            }
        }
        return Ok(Some(T::Table(t)));
    }
    if let Ok(items) = v.try_iter() {
        let items = items.map(|x| toml_value(&x?)).collect::<PyResult<Vec<_>>>()?;
        return Ok(Some(T::Array(items.into_iter().flatten().collect())));
    }
    Err(PyTypeError::new_err(format!("{v}: not a bool, int, float, str, list or dict")))
}

/// Settings given as a dict (`cosim.System(**settings)`, `simulate(**settings)`): set key by key
/// into the one settings type; an unknown key is a `TypeError` naming it, a bad value a
/// `CosimError` naming the key.
fn settings(d: Option<&Bound<'_, PyDict>>) -> PyResult<Settings> {
    let mut s = Settings::default();
    for (k, v) in d.into_iter().flat_map(|d| d.iter()) {
        let key: String = k.extract()?;
        if !Settings::keys().contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "unknown setting {key:?} (one of {}){}",
                Settings::keys().join(", "),
                master::suggest::did_you_mean(&key, Settings::keys().iter().copied())
            )));
        }
        if let Some(value) = toml_value(&v)? {
            s.set(&key, value).map_err(bad)?;
        }
    }
    Ok(s)
}

/// The settings a dict gives, as TOML text (checks a `cosim.System`'s settings).
#[pyfunction]
fn _settings(d: &Bound<'_, PyDict>) -> PyResult<String> {
    let t = settings(Some(d))?.to_table().map_err(bad)?;
    toml::to_string(&t).map_err(|e| bad(e.to_string()))
}

/// The names of the settings, and every setting given a value as TOML text (for tests).
#[pyfunction]
fn _setting_keys() -> (Vec<&'static str>, String) {
    let every = Settings::every_field_set().and_then(|s| s.to_table()).unwrap_or_default();
    (Settings::keys().to_vec(), toml::to_string(&every).unwrap_or_default())
}

/// A system built in Python (`cosim.System.spec()`, or a dict of the same shape: the system
/// file's tables as dicts and lists, the TOML keys) → the one system schema
/// ([`SystemFile`], deserialized: an unknown key is refused with its name) → the builder.
fn builder_from_spec(spec: &Bound<'_, PyDict>) -> PyResult<SystemBuilder> {
    let table = toml_value(spec.as_any())?.unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
    let file = SystemFile::from_value(table).map_err(|m| bad(format!("<builder>: {m}")))?;
    SystemBuilder::from_file(std::path::Path::new("<builder>"), file).map_err(err)
}

/// The keys of a `[[bonds]]` table's own settings (`cosim.System.bond(**settings)`).
#[pyfunction]
fn _bond_setting_keys() -> Vec<&'static str> {
    master::system::BondSettings::keys().to_vec()
}

/// A system (a path or a `cosim.System` spec): its content in the one schema as TOML, then
/// the resolved system described without its source's paths; equal for the same system however
/// it was given (for tests).
#[pyfunction]
fn _describe(system: &Bound<'_, PyAny>) -> PyResult<String> {
    let Source { builder, mut fmus, ssp: _ssp } = source(system)?;
    let file = builder.to_file().to_toml().map_err(bad)?;
    let sys = builder.load(&mut fmus).map_err(err)?;
    Ok(format!("{file}\n{}", sys.describe()))
}

/// Isolated instances (`isolate=True`, `isolate = true` in a system file or an SSP annotation)
/// and `cosim.check` (its checker and every check, [`check`]) run in worker processes: this
/// interpreter, isolated (`-I -S`: no working directory, no site-packages, no `PYTHON*`
/// variables), loading this extension module by its path and serving the instance, the checker
/// or the check (`_worker`; its return value is the exit code). Registered before every run;
/// never the cwd's `worker`.
const WORKER_CODE: &str = "import sys\n\
from importlib.machinery import ExtensionFileLoader\n\
from importlib.util import module_from_spec, spec_from_loader\n\
loader = ExtensionFileLoader('cosim._cosim', sys.argv[1])\n\
module = module_from_spec(spec_from_loader('cosim._cosim', loader))\n\
loader.exec_module(module)\n\
sys.exit(module._worker(sys.argv[2:]))\n";

/// `python -I -S -c WORKER_CODE MODULE`: the worker command of the interpreter `python` with
/// this extension module at `module`.
pub(crate) fn worker_command(python: PathBuf, module: &str) -> master::fmu::isolated::WorkerCommand {
    master::fmu::isolated::WorkerCommand {
        program: python,
        args: ["-I", "-S", "-c", WORKER_CODE, module].map(Into::into).to_vec(),
    }
}

/// This interpreter (`sys.executable`, when it is an absolute path) and this module's file.
fn this_interpreter(py: Python<'_>) -> PyResult<Option<master::fmu::isolated::WorkerCommand>> {
    let python: Option<String> = py.import("sys")?.getattr("executable")?.extract().ok();
    let module: String = py.import("cosim._cosim")?.getattr("__file__")?.extract()?;
    Ok(python.filter(|p| std::path::Path::new(p).is_absolute()).map(|p| worker_command(PathBuf::from(p), &module)))
}

fn register_worker(py: Python<'_>) -> PyResult<()> {
    // An embedded interpreter without sys.executable: worker_command() says what to set.
    if let Some(command) = this_interpreter(py)? {
        *WORKERS.lock().unwrap_or_else(PoisonError::into_inner) = Some(command);
    }
    Ok(())
}

/// The command line of `cosim.check`'s checker process without its arguments (see [`check`]):
/// this interpreter with this module, serving `check`.
#[pyfunction]
fn _checker_command(py: Python<'_>) -> PyResult<Vec<std::ffi::OsString>> {
    let Some(command) = this_interpreter(py)? else {
        return Err(bad(
            "cosim.check starts its checker with this interpreter, and sys.executable is not an absolute path \
             (an embedded interpreter?): pass cosim=\"path/to/cosim\"",
        ));
    };
    let mut line = vec![command.program.into_os_string()];
    line.extend(command.args);
    line.push("check".into());
    Ok(line)
}

/// How this interpreter starts the worker of an isolated instance (set by [`register_worker`]).
static WORKERS: Mutex<Option<master::fmu::isolated::WorkerCommand>> = Mutex::new(None);

/// The level of `cosim.fmu_log(LEVEL)` (default warning).
static FMU_LOG: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);

fn fmu_log_level() -> master::host::LogLevel {
    master::host::LogLevel::NAMES
        .get(usize::from(FMU_LOG.load(std::sync::atomic::Ordering::Relaxed)))
        .and_then(|n| master::host::LogLevel::parse(n))
        .unwrap_or_default()
}

/// The FMU log sink of this process: stderr at the level of `cosim.fmu_log` when an instance is
/// created.
struct PyLog;

impl master::host::FmuLog for PyLog {
    fn level(&self) -> master::host::LogLevel {
        fmu_log_level()
    }
    fn message(&self, instance: &str, category: &str, message: &str) {
        master::host::StderrLog(self.level()).message(instance, category, message);
    }
}

/// What this process hands the library: FMU messages on stderr ([`PyLog`]) and this interpreter
/// as the worker of isolated instances.
pub(crate) fn host() -> master::host::Host {
    master::host::Host {
        log: Some(Arc::new(PyLog)),
        workers: WORKERS.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        ..master::host::Host::default()
    }
}

/// Sets which FMU messages are printed (`cosim.fmu_log`); returns the previous level's name.
#[pyfunction]
fn _set_fmu_log(level: &str) -> PyResult<String> {
    let previous = fmu_log_level().name().to_owned();
    let l = master::host::LogLevel::parse(level).ok_or_else(|| bad(format!("fmu_log: {level:?} is not a level")))?;
    FMU_LOG.store(l as u8, std::sync::atomic::Ordering::Relaxed);
    Ok(previous)
}

/// Unloads the FMUs this process keeps loaded between runs (see `fmu_cache`).
#[pyfunction]
fn _fmu_cache_clear() {
    fmu_cache::clear();
}

/// The number of FMUs this process keeps loaded between runs.
#[pyfunction]
fn _fmu_cache_len() -> usize {
    fmu_cache::len()
}

/// A worker process (see [`WORKER_CODE`]); `args` are those of `cosim worker` (an isolated
/// instance: `worker --extracted DIR --shm-fd N -- FMU NAME`, returns when the master closes
/// the channel), of `cosim check-worker` (one check: `check-worker --extracted DIR --check ID
/// --plan JSON -- FMU`), or `check OPTIONS FMU REPORT` (`cosim.check`'s checker, [`check`]).
/// Returns the exit code.
#[pyfunction]
fn _worker(py: Python<'_>, args: Vec<String>) -> PyResult<i32> {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["check", rest @ ..] => Ok(check::serve(py, &rest.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())),
        ["check-worker", "--extracted", dir, "--check", id, "--plan", plan, "--", fmu] => {
            master::check::worker::serve(fmu.as_ref(), dir.as_ref(), id, plan)
                .map_err(|e| bad(format!("check worker {id} for {fmu}: {e}")))?;
            Ok(0)
        }
        ["check-worker", ..] => Err(bad(format!("check-worker: unexpected arguments {args:?}"))),
        _ => {
            master::fmu::isolated::serve_args(&args, |level| {
                Some(Arc::new(master::host::StderrLog(level)) as Arc<dyn master::host::FmuLog>)
            })
            .map_err(|e| bad(e.to_string()))?;
            Ok(0)
        }
    }
}

/// What a run is made from: the builder and what must outlive the execution.
struct Source {
    builder: SystemBuilder,
    fmus: FmuCache,
    /// An SSP package's extracted FMUs.
    ssp: Option<master::ssp::Ssp>,
}

fn source(system: &Bound<'_, PyAny>) -> PyResult<Source> {
    register_worker(system.py())?;
    let fmus = FmuCache::with_host(host());
    if let Ok(d) = system.downcast::<PyDict>() {
        return Ok(Source { builder: builder_from_spec(d)?, fmus, ssp: None });
    }
    let path: PathBuf = system
        .extract()
        .map_err(|_| PyTypeError::new_err("system: a path (TOML, .ssp, .ssd, .fmu) or a cosim.System"))?;
    // Decided by content, as `cosim run` does.
    match master::input_kind::detect(&path).map_err(err)? {
        master::input_kind::Input::Fmu => {
            // One instance named after the model identifier, the FMU's DefaultExperiment.
            let single = master::single::builder(&path, &master::single::FmuOptions::default()).map_err(err)?;
            Ok(Source { builder: single.builder, fmus, ssp: None })
        }
        master::input_kind::Input::Ssp => {
            let ssp = master::ssp::read(&path).map_err(err)?;
            Ok(Source { builder: ssp.builder.clone(), fmus, ssp: Some(ssp) })
        }
        master::input_kind::Input::Toml => {
            Ok(Source { builder: SystemBuilder::read(&path).map_err(err)?, fmus, ssp: None })
        }
    }
}

/// Options shared by `simulate` and `Execution`.
struct Options<'a, 'py> {
    stop_time: Option<f64>,
    step: Option<f64>,
    start_values: Option<&'a Bound<'py, PyDict>>,
    output: Option<Vec<String>>,
    fmus: Option<&'a Bound<'py, PyDict>>,
    extrapolation: Option<usize>,
    settings: Option<&'a Bound<'py, PyDict>>,
}

/// The native execution behind `cosim.Execution` and `cosim.simulate` (in a mutex: a Python
/// object may be shared between threads; the methods take `&mut self`, so it is never contended).
#[pyclass(subclass, module = "cosim._cosim")]
struct Execution {
    inner: Mutex<Inner>,
}

/// Python's signal handlers as the execution's stop request: while the GIL is released, the run
/// (its communication points, a paced run's waits, iterative passes) asks at most every 20 ms
/// whether a signal is pending, running the handlers (`PyErr_CheckSignals`) under the GIL; the
/// handler's error (KeyboardInterrupt) stops the run and is raised. Before, a paced step
/// (`real_time=0.0002`) was only interrupted between 50 ms slices of whole steps: 20–40 s.
struct PySignals {
    last: Mutex<Instant>,
    raised: Mutex<Option<PyErr>>,
}

/// How often a running execution looks for a pending Python signal.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

impl PySignals {
    fn new() -> Self {
        Self { last: Mutex::new(Instant::now()), raised: Mutex::new(None) }
    }
    /// The handler's error that stopped the run, once.
    fn take(&self) -> Option<PyErr> {
        self.raised.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl master::host::StopRequest for PySignals {
    fn requested(&self) -> bool {
        if self.raised.lock().unwrap_or_else(PoisonError::into_inner).is_some() {
            return true;
        }
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if last.elapsed() < SIGNAL_POLL {
                return false;
            }
            *last = Instant::now();
        }
        Python::with_gil(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *self.raised.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                true
            }
        })
    }
    fn by(&self) -> String {
        "a Python signal handler: KeyboardInterrupt".into()
    }
}

struct Inner {
    // Field order = drop order: the instances go before the FMU libraries.
    exec: Option<master::Execution>,
    stop: Arc<PySignals>,
    recorder: Option<Flat>,
    labels: Vec<String>,
    summary: Option<Summary>,
    _fmus: FmuCache,
    _ssp: Option<master::ssp::Ssp>,
}

impl Inner {
    fn create(system: &Bound<'_, PyAny>, o: Options<'_, '_>, record: bool) -> PyResult<Self> {
        Self::from_source(source(system)?, o, record)
    }

    fn from_source(src: Source, o: Options<'_, '_>, record: bool) -> PyResult<Self> {
        let Source { mut builder, mut fmus, ssp } = src;
        if let Some(map) = o.fmus {
            for (k, v) in map.iter() {
                let name: String = k.extract()?;
                let path: PathBuf = v.extract()?;
                builder.instance_mut(&name).ok_or_else(|| bad(format!("fmus: no instance {name:?}")))?.set_fmu(path);
            }
        }
        if let Some(sv) = o.start_values {
            for (k, v) in sv.iter() {
                let dotted: String = k.extract()?;
                let (inst, var) = dotted
                    .split_once('.')
                    .ok_or_else(|| bad(format!("start_values: {dotted:?} is not instance.variable")))?;
                builder
                    .instance_mut(inst)
                    .ok_or_else(|| bad(format!("start_values: {dotted}: no instance {inst:?} in this system")))?
                    .start(var, value(&v)?);
            }
        }
        if let Some(out) = o.output {
            builder.outputs(out);
        }
        let mut given = settings(o.settings)?;
        given.stop = o.stop_time.or(given.stop);
        given.step = o.step.or(given.step);
        // A message about a value given here names the keyword argument, not the file's key.
        let mut given_as = std::collections::BTreeMap::new();
        for (k, v) in given.to_table().map_err(bad)? {
            match v {
                toml::Value::Table(t) => given_as.extend(t.keys().map(|i| (format!("{k}.{i}"), format!("{k}.{i}")))),
                _ => {
                    given_as.insert(k.clone(), k);
                }
            }
        }
        if o.stop_time.is_some() {
            given_as.insert("stop".into(), "stop_time".into());
        }
        let over = Overrides { settings: given, extrapolation: o.extrapolation, force: false, given_as };
        fmu_cache::prepare(&builder, &over, &mut fmus);
        let mut exec = master::Execution::from_builder(&builder, &over, &mut fmus).map_err(err)?;
        let sys = exec.system();
        // Results here are numbers; an FMI 3.0 Binary is refused as a String is (cosim run
        // records it in results.csv as hexadecimal).
        if let Some(v) = sys.outputs().iter().find(|v| v.ty == model_description::BaseType::Binary) {
            return Err(bad(format!(
                "{} is a Binary: Python results hold numbers, so a Binary cannot be recorded here (as a \
                 String cannot); `cosim run` records it in results.csv as hexadecimal",
                sys.label(v)
            )));
        }
        let labels: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
        let every = sys.record_every().max(1);
        // Room for every row up front (at most 128 MiB; beyond that the Vec grows).
        let values = ((sys.steps() / every) as usize + 2).saturating_mul(labels.len() + 1);
        // With ECCO the step count is not known in advance: every step goes to the recorder,
        // through the output grid when record_every > 1 (rows at the output times and the end).
        let ecco = sys.step_control().kind() == master::system::StepControlKind::Ecco;
        let exact: Vec<usize> =
            (0..sys.outputs().len()).filter(|k| sys.outputs()[*k].ty != model_description::BaseType::Real).collect();
        let recorder = record.then(|| Flat {
            rows: Arc::new(Mutex::new(Vec::with_capacity(values.min(1 << 24)))),
            every: if ecco { 1 } else { every },
            steps: if ecco { u64::MAX } else { sys.steps() },
            exact: Arc::new(exact),
            pending: Vec::new(),
            kinds: Arc::new(Mutex::new(vec!["<f8"; labels.len()])),
        });
        if let Some(r) = &recorder {
            let span = (sys.start(), sys.stop());
            let o = master::observer::OutputGrid::wrap(Box::new(r.clone()), sys.step_control(), span, every)
                .unwrap_or_else(|o| o);
            exec.observe(o);
        }
        let stop = Arc::new(PySignals::new());
        exec.interrupt_on(Arc::clone(&stop) as Arc<dyn master::host::StopRequest>);
        Ok(Self { exec: Some(exec), stop, recorder, labels, summary: None, _fmus: fmus, _ssp: ssp })
    }

    fn exec(&mut self) -> PyResult<&mut master::Execution> {
        self.exec.as_mut().ok_or_else(|| bad("the execution is finished"))
    }

    /// Steps to the communication point nearest to `t` (at most the stop time; with ECCO a time,
    /// not a step count), at most to `max_steps` steps done, with the GIL released, checking for
    /// signals about every 50 ms. On a signal (Ctrl-C) the error of the handler
    /// (KeyboardInterrupt) is returned; the execution stays at the communication point reached.
    fn advance(&mut self, py: Python<'_>, t: f64, max_steps: u64) -> PyResult<()> {
        let stop = Arc::clone(&self.stop);
        let exec = self.exec()?;
        loop {
            let mut done = false;
            let r = py.allow_threads(|| {
                let deadline = Instant::now() + Duration::from_millis(50);
                exec.run_until_while(t, |e| {
                    done = e.steps() >= max_steps;
                    let slice_over = e.steps().is_multiple_of(64) && Instant::now() >= deadline;
                    !done && !slice_over
                })
            });
            match r {
                Ok(true) => return Ok(()),
                Ok(false) if done => return Ok(()),
                Ok(false) => py.check_signals()?,
                // Stopped by a signal handler's error (KeyboardInterrupt): raised as it is.
                Err(e) => return Err(stop.take().unwrap_or_else(|| err(e))),
            }
        }
    }

    fn finish_now(&mut self, py: Python<'_>) -> PyResult<&Summary> {
        if let Some(exec) = self.exec.take() {
            let s = py.allow_threads(|| exec.finish()).map_err(err)?;
            self.summary = Some(s);
        }
        self.summary.as_ref().ok_or_else(|| bad("no summary"))
    }

    /// Everything recorded so far: (the columns with "time" first, each (name, NumPy type:
    /// "<f8", or "<i8"/"<u8" for exact 64-bit integers), row-major bytes of 8-byte fields).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Rows<'py>> {
        let kinds = match &self.recorder {
            Some(r) => r.kinds.lock().unwrap_or_else(PoisonError::into_inner).clone(),
            None => vec!["<f8"; self.labels.len()],
        };
        let mut names = vec![("time".to_owned(), "<f8")];
        names.extend(self.labels.iter().cloned().zip(kinds));
        let Some(r) = &self.recorder else { return Ok((names, PyBytes::new(py, &[]))) };
        let rows = r.rows.lock().unwrap_or_else(PoisonError::into_inner);
        // Written straight into the bytes object (no intermediate buffer of the same size).
        let bytes = PyBytes::new_with(py, rows.len() * 8, |b| {
            for (chunk, x) in b.chunks_exact_mut(8).zip(rows.iter()) {
                chunk.copy_from_slice(&x.to_ne_bytes());
            }
            Ok(())
        })?;
        Ok((names, bytes))
    }
}

fn summary_json(s: &Summary) -> PyResult<String> {
    serde_json::to_string(s).map_err(|e| bad(format!("summary: {e}")))
}

impl Execution {
    fn i(&mut self) -> &mut Inner {
        self.inner.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl Execution {
    #[new]
    #[pyo3(signature = (system, stop_time=None, step=None, start_values=None, output=None, record=true, fmus=None,
                        extrapolation=None, **settings))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        system: &Bound<'_, PyAny>,
        stop_time: Option<f64>,
        step: Option<f64>,
        start_values: Option<&Bound<'_, PyDict>>,
        output: Option<Vec<String>>,
        record: bool,
        fmus: Option<&Bound<'_, PyDict>>,
        extrapolation: Option<usize>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let o = Options { stop_time, step, start_values, output, fmus, extrapolation, settings };
        Ok(Self { inner: Mutex::new(Inner::create(system, o, record)?) })
    }

    /// Simulated time reached (s).
    #[getter]
    fn time(&mut self) -> PyResult<f64> {
        Ok(self.i().exec()?.time())
    }

    /// Communication steps done.
    #[getter]
    fn steps(&mut self) -> PyResult<u64> {
        Ok(self.i().exec()?.steps())
    }

    /// Start time, stop time and communication step (s).
    #[getter]
    fn start_time(&mut self) -> PyResult<f64> {
        Ok(self.i().exec()?.system().start())
    }
    #[getter]
    fn stop_time(&mut self) -> PyResult<f64> {
        Ok(self.i().exec()?.system().stop())
    }
    #[getter]
    fn step_size(&mut self) -> PyResult<f64> {
        Ok(self.i().exec()?.system().step())
    }

    /// Names of the recorded variables (`instance.variable`), in order.
    #[getter]
    fn labels(&mut self) -> Vec<String> {
        self.i().labels.clone()
    }

    /// Sets the start values, initializes the instances (done by the first step if not before).
    fn initialize(&mut self, py: Python<'_>) -> PyResult<()> {
        let exec = self.i().exec()?;
        py.allow_threads(|| exec.initialize()).map_err(err)
    }

    /// `n` communication steps (at most to the stop time).
    #[pyo3(signature = (n=1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        let exec = self.i().exec()?;
        let stop = exec.system().stop();
        let target = exec.steps().saturating_add(n);
        self.i().advance(py, stop, target)
    }

    /// Steps to the communication point nearest to `t` (at most the stop time).
    fn run_until(&mut self, py: Python<'_>, t: f64) -> PyResult<()> {
        self.i().advance(py, t, u64::MAX)
    }

    /// Steps to the stop time.
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        let stop = self.i().exec()?.system().stop();
        self.i().advance(py, stop, u64::MAX)
    }

    /// The current value of a Real, Integer, Enumeration or Boolean variable `instance.variable`.
    fn value(&mut self, name: &str) -> PyResult<f64> {
        self.i().exec()?.value(name).map_err(err)
    }

    /// Sets a Real variable `instance.variable` now (an unconnected input or a tunable parameter).
    fn set(&mut self, name: &str, value: f64) -> PyResult<()> {
        self.i().exec()?.set_real(name, value).map_err(err)
    }

    /// The recorded variables' values now, as a dict.
    fn recorded<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let labels = self.i().labels.clone();
        let values = self.i().exec()?.recorded().map_err(err)?.to_vec();
        let d = PyDict::new(py);
        for (k, v) in labels.iter().zip(values) {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Everything recorded so far: (column names with "time" first, row-major float64 bytes).
    fn _rows<'py>(&mut self, py: Python<'py>) -> PyResult<Rows<'py>> {
        self.i().rows(py)
    }

    /// Terminates the instances and returns the summary (as JSON text); idempotent.
    fn _finish(&mut self, py: Python<'_>) -> PyResult<String> {
        summary_json(self.i().finish_now(py)?)
    }

    /// Whether `finish` was called.
    #[getter]
    fn finished(&mut self) -> bool {
        self.i().exec.is_none()
    }
}

/// A full run: (column names, row-major float64 bytes, summary JSON). A failed run raises
/// `CosimError` with the master's message unless `check` is false (the summary then says
/// `failed` and why); Ctrl-C stops it, terminates the instances and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (system, stop_time=None, step=None, start_values=None, output=None, fmus=None,
                    extrapolation=None, check=true, **settings))]
#[allow(clippy::too_many_arguments)]
fn _simulate<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyAny>,
    stop_time: Option<f64>,
    step: Option<f64>,
    start_values: Option<&Bound<'py, PyDict>>,
    output: Option<Vec<String>>,
    fmus: Option<&Bound<'py, PyDict>>,
    extrapolation: Option<usize>,
    check: bool,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<RowsAndSummary<'py>> {
    let o = Options { stop_time, step, start_values, output, fmus, extrapolation, settings };
    run_to_end(py, Inner::create(system, o, true)?, check)
}

/// Runs `e` to its stop time: (column names, rows as float64 bytes, summary JSON); see `_simulate`.
fn run_to_end(py: Python<'_>, mut e: Inner, check: bool) -> PyResult<RowsAndSummary<'_>> {
    let stop = e.exec()?.system().stop();
    let r = e.advance(py, stop, u64::MAX);
    if let Err(interrupt) = r.as_ref() {
        if !interrupt.is_instance_of::<CosimError>(py) {
            // KeyboardInterrupt (or another signal handler's error): end cleanly, then raise.
            let _ = e.finish_now(py);
            return Err(r.err().unwrap_or_else(|| bad("interrupted")));
        }
    }
    let summary = e.finish_now(py)?.clone();
    if check && summary.status != Status::Ok {
        return Err(bad(summary.message.clone()));
    }
    let (names, rows) = e.rows(py)?;
    Ok((names, rows, summary_json(&summary)?))
}

/// `cosim tune` on a system file with a `[tune]` table; writes tune.csv, tune.json and
/// recommended.toml into `out_dir` and returns tune.json's text.
#[pyfunction]
#[pyo3(signature = (system, out_dir, jobs=0, h_ini=None, h_inc=None, h_max=None, verify=None))]
#[allow(clippy::too_many_arguments)]
fn _tune(
    py: Python<'_>,
    system: PathBuf,
    out_dir: PathBuf,
    jobs: usize,
    h_ini: Option<f64>,
    h_inc: Option<f64>,
    h_max: Option<f64>,
    verify: Option<String>,
) -> PyResult<String> {
    register_worker(py)?;
    let opts = master::tune::TuneOptions {
        out_dir: out_dir.clone(),
        sweep: master::tune::SweepOptions { jobs, progress: None, dask: None },
        verify,
        reference_step: None,
        // No process state from the library: no signal guard (Python has its own KeyboardInterrupt).
        host: master::host::Host::default(),
    };
    py.allow_threads(|| -> master::Result<String> {
        std::fs::create_dir_all(&out_dir).map_err(|source| MasterError::Io { path: out_dir.clone(), source })?;
        master::tune::tune_file(
            &system,
            |s| {
                if let Some(h) = h_ini {
                    s.h_ini = h;
                }
                if let Some(h) = h_inc {
                    s.h_inc = h;
                }
                if let Some(h) = h_max {
                    s.h_max = h;
                }
            },
            &opts,
        )?;
        let json = master::tune::report::read_json(&out_dir.join("tune.json"))?;
        serde_json::to_string(&json)
            .map_err(|e| MasterError::Io { path: out_dir.join("tune.json"), source: std::io::Error::other(e) })
    })
    .map_err(err)
}

/// One (test, configuration) sequence of `cosim tune` on its own (what a Dask worker of
/// `cosim tune --dask` runs): `args` is the JSON of `master::tune::TuneArgs`; returns
/// `{"rows": [...], "limit": {...}}` as one line of JSON.
#[pyfunction]
fn _tune_sequence(py: Python<'_>, system: PathBuf, args: &str, test: usize, config: usize) -> PyResult<String> {
    register_worker(py)?;
    let args: master::tune::TuneArgs = serde_json::from_str(args).map_err(|e| bad(format!("tune args: {e}")))?;
    let (rows, limit) = py
        .allow_threads(|| master::tune::run_sequence(&system, &args, test, config, master::host::Host::default()))
        .map_err(err)?;
    serde_json::to_string(&master::tune::dask::Finished { rows, limit }).map_err(|e| bad(e.to_string()))
}

/// FMU file of each instance of a system (instance name → path), e.g. to ship them to workers.
#[pyfunction]
fn _fmu_paths(system: &Bound<'_, PyAny>) -> PyResult<Vec<(String, PathBuf)>> {
    let s = source(system)?;
    Ok(s.builder.fmus())
}

#[pymodule]
fn _cosim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CosimError", m.py().get_type::<CosimError>())?;
    m.add_class::<Execution>()?;
    m.add_function(wrap_pyfunction!(_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(_fmu_cache_clear, m)?)?;
    m.add_function(wrap_pyfunction!(_fmu_cache_len, m)?)?;
    m.add_function(wrap_pyfunction!(_tune, m)?)?;
    m.add_function(wrap_pyfunction!(_fmu_paths, m)?)?;
    m.add_function(wrap_pyfunction!(_tune_sequence, m)?)?;
    m.add_function(wrap_pyfunction!(_worker, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fmu_log, m)?)?;
    m.add_function(wrap_pyfunction!(_checker_command, m)?)?;
    m.add_function(wrap_pyfunction!(_settings, m)?)?;
    m.add_function(wrap_pyfunction!(_setting_keys, m)?)?;
    m.add_function(wrap_pyfunction!(_bond_setting_keys, m)?)?;
    m.add_function(wrap_pyfunction!(_describe, m)?)?;
    single_fmu::register(m)?;
    Ok(())
}
