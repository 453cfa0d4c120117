//! [`Fmu2`], a loaded FMI 2.0 Co-Simulation FMU, and [`Fmu2Instance`], one instance of it
//! implementing [`FmuInstance`].

use super::archive::Archive;
use super::ffi;
use super::{Call, FmuInstance};
use crate::error::{MasterError, Result};
use model_description::{CoSimulation, ModelDescription, ScalarVariable};
use std::collections::HashMap;
use std::ffi::c_int;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The environment variable that sets which FMU messages are printed on stderr: `COSIM_LOG=all`
/// prints all messages (and instantiates with `loggingOn = true`); `warning` (the default) those
/// of status fmi2Warning or worse, `error` fmi2Error or worse, `none` nothing (`cosim run
/// --fmu-log LEVEL`, Python `cosim.fmu_log(LEVEL)`). Messages are counted whatever the level
/// (`summary.json` `instances[].fmu_warnings`).
pub const LOG_ENV: &str = "COSIM_LOG";

/// The levels of [`LOG_ENV`], most verbose first.
pub const LOG_LEVELS: [&str; 4] = ["all", "warning", "error", "none"];

/// The lowest FMI status printed at the level of [`LOG_ENV`] (an unknown value: the default).
fn echo_from() -> std::os::raw::c_int {
    match std::env::var(LOG_ENV).unwrap_or_default().to_ascii_lowercase().as_str() {
        "all" => ffi::OK,
        "error" => ffi::ERROR,
        "none" => std::os::raw::c_int::MAX,
        _ => ffi::WARNING,
    }
}

/// The standard log categories (FMI 2.0 §2.2.4) enabled after instantiation when the FMU
/// declares them, so that it explains warnings and errors even with `loggingOn = false`.
const STATUS_CATEGORIES: &[&str] =
    &["logStatusWarning", "logStatusDiscard", "logStatusError", "logStatusFatal", "logStatusPending"];

/// A loaded FMI 2.0 Co-Simulation FMU: the extracted archive, its model description and its
/// binary. Shared (`Arc`) by its instances: the library stays loaded and the folder extracted
/// while any instance lives.
pub struct Fmu2 {
    // Field order is drop order: the library is closed before the folder is removed.
    binary: Arc<ffi::Binary>,
    md: ModelDescription,
    cs: CoSimulation,
    by_name: HashMap<String, usize>,
    path: PathBuf,
    resource_uri: String,
    live: AtomicUsize,
    /// `maxSize` of the Binary variables that declare one (checked before fmi3SetBinary).
    binary_max: super::binary::MaxSizes,
    archive: Archive,
}

impl std::fmt::Debug for Fmu2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fmu2")
            .field("path", &self.path)
            .field("model_name", &self.md.model_name)
            .field("guid", &self.md.guid)
            .field("dir", &self.archive.dir())
            .finish_non_exhaustive()
    }
}

/// Reads an FMU's `modelDescription.xml`, FMI 2.0 or 3.0 (with the 3.0 extras); an FMI 3.0
/// description that uses what cosim does not support (clocks, scheduled execution, structural
/// parameters) is refused here, naming each feature and its line.
pub(crate) fn read_description(path: &Path, xml: &str) -> Result<(ModelDescription, Option<model_description::Fmi3>)> {
    let (md, fmi3) = match model_description::from_str(xml) {
        Ok(md) => (md, None),
        Err(model_description::ReadError::UnsupportedVersion { version, .. }) if version.starts_with("3.") => {
            let (md, x) = model_description::from_str3(xml)
                .map_err(|e| fmu_error(path, format!("modelDescription.xml (FMI 3.0): {e}")))?;
            (md, Some(x))
        }
        Err(e) => return Err(fmu_error(path, format!("modelDescription.xml: {e}"))),
    };
    if let Some(x) = &fmi3 {
        if !x.unsupported.is_empty() {
            return Err(fmu_error(
                path,
                format!(
                    "modelDescription.xml: this FMI 3.0 FMU uses what cosim does not support (it runs FMI 3.0 \
                     Co-Simulation without event mode, clocks or scheduled execution):\n  {}",
                    x.unsupported.join("\n  ")
                ),
            ));
        }
    }
    Ok((md, fmi3))
}

/// The 3.0 types of a description's scalars and array elements, and the start values of its
/// Float64 arrays (for the adapters of `ffi3.rs`).
fn types3(md: &ModelDescription, x: &model_description::Fmi3) -> ffi::v3::Types3 {
    let mut t = ffi::v3::Types3 { types: HashMap::new(), elements: HashMap::new(), starts: HashMap::new() };
    for (v, ty) in md.model_variables.iter().zip(&x.types) {
        match x.elements.iter().find(|el| el.vr == v.value_reference) {
            Some(el) => {
                t.elements.insert(el.vr, (*el, *ty));
                if *ty == model_description::Type3::Float64 {
                    let start = match v.kind {
                        model_description::VariableKind::Real { start, .. } => start.unwrap_or(0.0),
                        _ => 0.0,
                    };
                    let values = t.starts.entry(el.array_vr).or_insert_with(|| vec![0.0; el.len]);
                    if let Some(s) = values.get_mut(el.index) {
                        *s = start;
                    }
                }
            }
            None => {
                t.types.insert(v.value_reference, *ty);
            }
        }
    }
    t
}

fn fmu_error(path: &Path, message: String) -> MasterError {
    MasterError::Fmu { path: path.to_path_buf(), message }
}

impl Fmu2 {
    /// Extracts and loads the FMU at `path`.
    ///
    /// Checks, each failing with [`MasterError::Fmu`] naming the file and the problem: a safe zip
    /// archive with `modelDescription.xml` (see [`Archive`]); a readable FMI 2.0 description
    /// (FMI 1.0 and 3.0 are named as such; XML errors carry line and column); a `<CoSimulation>`
    /// element; the binary `binaries/linux64/<modelIdentifier>.so` (the message lists what
    /// `binaries/` holds otherwise); every FMI 2.0 common and Co-Simulation function exported;
    /// `fmi2GetTypesPlatform() == "default"` and `fmi2GetVersion() == "2.0"`.
    pub fn load(path: &Path) -> Result<Arc<Self>> {
        Self::load_in(path, &crate::host::Host::default())
    }

    /// [`Fmu2::load`], the extraction registered with `host`'s cleanup while it exists.
    pub fn load_in(path: &Path, host: &crate::host::Host) -> Result<Arc<Self>> {
        Self::from_archive(path, Archive::extract_in(path, host)?)
    }

    /// [`Fmu2::load`] of an FMU the master extracted into `dir` already (a worker process of
    /// `cosim run --isolate`; the folder stays the master's).
    pub fn load_extracted(path: &Path, dir: &Path) -> Result<Arc<Self>> {
        Self::from_archive(path, Archive::extracted_by_master(path, dir)?)
    }

    fn from_archive(path: &Path, archive: Archive) -> Result<Arc<Self>> {
        let xml = archive.model_description()?;
        let (md, fmi3) = read_description(path, &xml)?;
        if md.fmi_version != "2.0" && fmi3.is_none() {
            return Err(fmu_error(
                path,
                format!(
                    "modelDescription.xml: fmiVersion=\"{}\": this is not an FMI 2.0 or 3.0 FMU, only FMI 2.0 and 3.0 are supported",
                    md.fmi_version
                ),
            ));
        }
        let Some(cs) = md.co_simulation.clone() else {
            let message = match &md.model_exchange {
                Some(me) => format!(
                    "the FMU supports Model Exchange only (modelIdentifier \"{}\"; modelDescription.xml has no \
                     <CoSimulation> element): cosim runs Co-Simulation FMUs",
                    me.model_identifier
                ),
                None => "modelDescription.xml has neither <CoSimulation> nor <ModelExchange>: \
                         cosim runs Co-Simulation FMUs"
                    .into(),
            };
            return Err(fmu_error(path, message));
        };
        let id = &cs.model_identifier;
        if id.is_empty() || id.contains(['/', '\\', '\0']) || id == "." || id == ".." {
            return Err(fmu_error(
                path,
                format!("modelDescription.xml: modelIdentifier \"{}\" is not a valid file name", id.escape_debug()),
            ));
        }
        let platform_dir = if fmi3.is_some() { "x86_64-linux" } else { "linux64" };
        let so_rel = format!("binaries/{platform_dir}/{id}.so");
        let so = archive.dir().join(&so_rel);
        if !so.is_file() {
            let present = archive.binaries();
            let listing = if present.is_empty() {
                "the archive has no binaries at all (a source-only FMU cannot be run)".to_owned()
            } else {
                format!("binaries/ contains: {}", present.join(", "))
            };
            return Err(fmu_error(
                path,
                format!(
                    "{so_rel} is missing: the FMU has no binary for Linux x86-64 (modelIdentifier \"{id}\"); {listing}"
                ),
            ));
        }
        let binary = match &fmi3 {
            Some(x) => {
                let types = types3(&md, x);
                let binary = ffi::Binary::load3(&so, types).map_err(|m| fmu_error(path, format!("{so_rel}: {m}")))?;
                let version = binary.version();
                if !version.starts_with("3.") {
                    return Err(fmu_error(
                        path,
                        format!("{so_rel}: fmi3GetVersion() returned \"{version}\", not \"3.0\": the binary is not an FMI 3.0 binary"),
                    ));
                }
                return Ok(Self::assemble(path, archive, md, cs, binary));
            }
            None => ffi::Binary::load(&so).map_err(|m| fmu_error(path, format!("{so_rel}: {m}")))?,
        };
        let platform = binary.types_platform();
        if platform != "default" {
            return Err(fmu_error(
                path,
                format!(
                    "{so_rel}: fmi2GetTypesPlatform() returned \"{platform}\", not \"default\": \
                     the binary's C types differ from the standard's"
                ),
            ));
        }
        let version = binary.version();
        if version != "2.0" {
            return Err(fmu_error(
                path,
                format!(
                    "{so_rel}: fmi2GetVersion() returned \"{version}\", not \"2.0\": \
                     the binary is not an FMI 2.0 binary"
                ),
            ));
        }
        Ok(Self::assemble(path, archive, md, cs, binary))
    }

    fn assemble(
        path: &Path,
        archive: Archive,
        md: ModelDescription,
        cs: CoSimulation,
        binary: ffi::Binary,
    ) -> Arc<Self> {
        let mut by_name = HashMap::with_capacity(md.model_variables.len());
        for (i, v) in md.model_variables.iter().enumerate() {
            by_name.entry(v.name.clone()).or_insert(i);
        }
        Arc::new(Self {
            binary: Arc::new(binary),
            binary_max: super::binary::max_sizes(&md),
            by_name,
            path: path.to_path_buf(),
            resource_uri: archive.resources_uri(),
            live: AtomicUsize::new(0),
            md,
            cs,
            archive,
        })
    }

    /// Instantiates the FMU as a Co-Simulation instance named `name`, with the description's GUID.
    /// Several instances of one FMU may live at once (unless it declares
    /// `canBeInstantiatedOnlyOncePerProcess`). `fmi2Instantiate` returning NULL gives
    /// [`MasterError::Fmu`] with the FMU's last log message (e.g. why it rejected the GUID).
    pub fn instantiate(self: &Arc<Self>, name: &str) -> Result<Fmu2Instance> {
        let cs = &self.cs;
        if cs.can_be_instantiated_only_once_per_process && self.live.load(Ordering::SeqCst) > 0 {
            return Err(fmu_error(
                &self.path,
                format!(
                    "cannot instantiate \"{name}\": the FMU declares canBeInstantiatedOnlyOncePerProcess \
                     and an instance exists already"
                ),
            ));
        }
        let echo = echo_from();
        let echo_all = echo == ffi::OK;
        let created = ffi::Instance::new(&self.binary, name, &self.md.guid, &self.resource_uri, echo_all, echo);
        let mut instance = match created {
            Ok(instance) => instance,
            Err(ffi::InstantiateError::Nul(what)) => {
                let message = format!("cannot instantiate {name:?}: the {what} contains a NUL character");
                return Err(fmu_error(&self.path, message));
            }
            Err(ffi::InstantiateError::Null(last)) => {
                let why = if last.is_empty() {
                    "the FMU logged no message".to_owned()
                } else {
                    format!("the FMU's last message: {last}")
                };
                return Err(fmu_error(&self.path, format!("fmi2Instantiate(\"{name}\") returned NULL; {why}")));
            }
        };
        self.live.fetch_add(1, Ordering::SeqCst);
        let live = Live(Arc::clone(self));
        if !echo_all {
            let categories: Vec<&str> = STATUS_CATEGORIES
                .iter()
                .copied()
                .filter(|c| self.md.log_categories.iter().any(|d| d.name == *c))
                .collect();
            if !categories.is_empty() {
                // Best effort: an FMU that refuses still works, it just explains less.
                let _ = instance.set_debug_logging(true, &categories);
            }
        }
        Ok(Fmu2Instance {
            instance,
            fmu: live,
            name: name.to_owned(),
            time: 0.0,
            busy: Duration::ZERO,
            steps: 0,
            warnings: 0,
            can_interpolate_inputs: cs.can_interpolate_inputs,
            orders: Vec::new(),
            timing: false,
        })
    }

    /// The loaded binary (`cosim check` calls it directly).
    pub(crate) fn binary(&self) -> &Arc<ffi::Binary> {
        &self.binary
    }

    /// The `.fmu` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model description.
    pub fn model_description(&self) -> &ModelDescription {
        &self.md
    }

    /// The `<CoSimulation>` capabilities (always present in a loaded FMU).
    pub fn co_simulation(&self) -> &CoSimulation {
        &self.cs
    }

    /// `modelIdentifier` of the Co-Simulation interface.
    pub fn model_identifier(&self) -> &str {
        &self.co_simulation().model_identifier
    }

    /// `guid`.
    pub fn guid(&self) -> &str {
        &self.md.guid
    }

    /// `modelName`.
    pub fn model_name(&self) -> &str {
        &self.md.model_name
    }

    /// All variables, in description order.
    pub fn variables(&self) -> &[ScalarVariable] {
        &self.md.model_variables
    }

    /// The variable named `name` (the first one, should a broken description repeat a name).
    pub fn variable(&self, name: &str) -> Option<&ScalarVariable> {
        self.by_name.get(name).and_then(|&i| self.md.model_variables.get(i))
    }

    /// `fmuResourceLocation` passed to `fmi2Instantiate`.
    pub fn resource_uri(&self) -> &str {
        &self.resource_uri
    }

    /// The folder the archive was extracted into (removed when the last reference goes).
    pub fn extracted_dir(&self) -> &Path {
        self.archive.dir()
    }

    /// Number of live instances.
    pub fn instances(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }
}

// Instances move to worker threads; the loaded FMU is shared between them.
const _: () = {
    const fn send<T: Send>() {}
    const fn send_sync<T: Send + Sync>() {}
    send::<Fmu2Instance>();
    send_sync::<Fmu2>();
};

/// A reference to the FMU that counts as a live instance until dropped.
struct Live(Arc<Fmu2>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One instance of an [`Fmu2`]. Implements [`FmuInstance`]; `Send`, so it may move to a worker thread
/// (one thread at a time: every call takes `&mut self`). Dropping it calls `fmi2FreeInstance`.
///
/// Status handling: fmi2OK and fmi2Warning (printed with the FMU's message) succeed;
/// fmi2Discard, fmi2Error, fmi2Fatal and fmi2Pending (asynchronous steps are not supported)
/// give [`MasterError::Call`] with the function, the time, the status and the FMU's message.
pub struct Fmu2Instance {
    // Field order is drop order: fmi2FreeInstance runs before the FMU reference is released.
    instance: ffi::Instance,
    fmu: Live,
    name: String,
    time: f64,
    busy: Duration,
    steps: u64,
    warnings: u64,
    can_interpolate_inputs: bool,
    /// Reused `order` array of fmi2SetRealInputDerivatives (no allocation per step).
    orders: Vec<i32>,
    /// Measure the time inside FMU calls (two clock reads per call; off for overhead benchmarks).
    timing: bool,
}

impl std::fmt::Debug for Fmu2Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fmu2Instance")
            .field("name", &self.name)
            .field("fmu", &self.fmu.0.path)
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}

impl Fmu2Instance {
    /// This instance as the master holds it (`Execution::new`): boxed here, so that its methods
    /// are this crate's code (a box made in another crate calls that crate's copies of the
    /// generic methods, inlined differently; `cosim bench` measures the master's own).
    pub fn boxed(self) -> Box<dyn FmuInstance> {
        Box::new(self)
    }

    /// The FMU this is an instance of.
    pub fn fmu(&self) -> &Arc<Fmu2> {
        &self.fmu.0
    }

    /// The last message the FMU logged for this instance (empty if none).
    pub fn last_log(&self) -> String {
        self.instance.last_log()
    }

    /// The time of the last successful `setup` or `do_step` end point.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// How many warnings this instance gave: messages logged with status fmi2Warning (our FMUs
    /// report physical states such as cavitation this way while the call returns fmi2OK) plus
    /// calls that returned fmi2Warning without logging anything.
    pub fn warnings(&self) -> u64 {
        self.warnings + self.instance.warning_count()
    }

    /// The raw instance, for calls the [`FmuInstance`] API does not make (`cosim check`).
    pub(crate) fn raw(&mut self) -> &mut ffi::Instance {
        &mut self.instance
    }

    /// `fmi2Reset`: back to the state after instantiation.
    pub fn reset(&mut self) -> Result<()> {
        let s = self.call(|i| i.reset());
        self.check("fmi2Reset", s)
    }

    /// `fmi2GetRealOutputDerivatives` (one order for all given references).
    pub fn get_output_derivatives(&mut self, vr: &[u32], order: i32, out: &mut [f64]) -> Result<()> {
        self.lengths("fmi2GetRealOutputDerivatives", vr.len(), out.len())?;
        let orders = vec![order; vr.len()];
        let s = self.call(|i| i.get_real_output_derivatives(vr, &orders, out));
        self.check("fmi2GetRealOutputDerivatives", s)
    }

    /// Runs one FMU call, adding its duration to the time spent inside the FMU. Always inlined:
    /// an out-of-line copy per call kind costs ~30 instructions per call on the hot path.
    #[inline(always)]
    fn call(&mut self, f: impl FnOnce(&mut ffi::Instance) -> c_int) -> (c_int, u64) {
        let before = self.instance.message_count();
        if !self.timing {
            return (f(&mut self.instance), before);
        }
        let t0 = Instant::now();
        let status = f(&mut self.instance);
        self.busy += t0.elapsed();
        (status, before)
    }

    /// Maps an fmi2Status to `Ok` or [`MasterError::Call`]. `messages_before` is the FMU's
    /// message count before the call, to tell whether the last message belongs to this call.
    #[inline]
    fn check(&mut self, function: &'static str, (status, messages_before): (c_int, u64)) -> Result<()> {
        if status == ffi::OK {
            return Ok(());
        }
        self.check_status(function, status, messages_before)
    }

    /// [`Self::check`] for a status other than fmi2OK.
    #[cold]
    fn check_status(&mut self, function: &'static str, status: c_int, messages_before: u64) -> Result<()> {
        match status {
            ffi::OK => Ok(()),
            ffi::WARNING => {
                if self.instance.message_count() == messages_before {
                    self.warnings += 1;
                    // The FMU gave no reason; say at least which call warned.
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "[{}] {function} at t = {} returned fmi2Warning (no message from the FMU)",
                        self.name,
                        self.time
                    );
                }
                Ok(())
            }
            _ => {
                let last = self.instance.last_log();
                let last_log = if self.instance.message_count() != messages_before || last.is_empty() {
                    last
                } else {
                    format!("(no message during this call; the FMU's last message was: {last})")
                };
                let mut status = ffi::status_name(status);
                if status == "fmi2Pending" {
                    status.push_str(" (asynchronous steps are not supported)");
                }
                if status == "fmi2Discard" && function == "fmi2DoStep" {
                    status.push_str(" (the FMU could not complete the step; cosim does not retry steps)");
                }
                Err(MasterError::Call { instance: self.name.clone(), function, time: self.time, status, last_log })
            }
        }
    }

    /// A [`MasterError::Call`] for arguments rejected before calling the FMU.
    fn invalid(&self, function: &'static str, why: String) -> MasterError {
        MasterError::Call {
            instance: self.name.clone(),
            function,
            time: self.time,
            status: format!("not called: {why}"),
            last_log: String::new(),
        }
    }

    fn lengths(&self, function: &'static str, refs: usize, values: usize) -> Result<()> {
        if refs == values {
            Ok(())
        } else {
            Err(self.invalid(function, format!("{refs} value references but {values} values")))
        }
    }
}

impl FmuInstance for Fmu2Instance {
    fn name(&self) -> &str {
        &self.name
    }

    // Always inlined into the typed methods (`set_real`, `do_step`, …), where the call's variant
    // is known: the match folds away and the hot path costs what a direct call did.
    #[inline(always)]
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        let function = call.op().function();
        let s = match call {
            Call::Setup { start, stop } => {
                self.time = start;
                self.call(|i| i.setup_experiment(None, start, stop))
            }
            Call::EnterInitialization => self.call(|i| i.enter_initialization_mode()),
            Call::ExitInitialization => self.call(|i| i.exit_initialization_mode()),
            Call::GetReal { vr, out } => {
                self.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_real(vr, out))
            }
            Call::SetReal { vr, values } => {
                self.lengths(function, vr.len(), values.len())?;
                self.call(|i| i.set_real(vr, values))
            }
            Call::GetInteger { vr, out } => {
                self.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_integer(vr, out))
            }
            Call::SetInteger { vr, values } => {
                self.lengths(function, vr.len(), values.len())?;
                self.call(|i| i.set_integer(vr, values))
            }
            Call::GetBoolean { vr, out } => {
                self.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_boolean(vr, out))
            }
            Call::SetBoolean { vr, values } => {
                self.lengths(function, vr.len(), values.len())?;
                self.call(|i| i.set_boolean(vr, values))
            }
            Call::GetString { vr, out } => self.call(|i| {
                let (status, v) = i.get_string(vr);
                *out = v;
                status
            }),
            Call::SetString { vr, values } => {
                self.lengths(function, vr.len(), values.len())?;
                if let Some(v) = values.iter().find(|v| v.contains('\0')) {
                    return Err(self.invalid(function, format!("the value {v:?} contains a NUL character")));
                }
                self.call(|i| i.set_string(vr, values))
            }
            Call::SetInputDerivatives { vr, order, values } => {
                self.lengths(function, vr.len(), values.len())?;
                if self.orders.len() != vr.len() || self.orders.first() != Some(&order) {
                    self.orders.clear();
                    self.orders.resize(vr.len(), order);
                }
                let orders = std::mem::take(&mut self.orders);
                let s = self.call(|i| i.set_real_input_derivatives(vr, &orders, values));
                self.orders = orders;
                s
            }
            Call::DoStep { t, h } => {
                self.time = t;
                let s = self.call(|i| i.do_step(t, h, true));
                self.steps += 1;
                self.check(function, s)?;
                self.time = t + h;
                return Ok(());
            }
            Call::Terminate => self.call(|i| i.terminate()),
            Call::SaveState => self.call(ffi::Instance::save_state),
            Call::RestoreState => self.call(ffi::Instance::restore_state),
            Call::GetBooleanStatus { kind, out } => self.call(|i| i.get_boolean_status(kind, out)),
            Call::GetRealStatus { kind, out } => self.call(|i| i.get_real_status(kind, out)),
            Call::GetBinary { vr, out } => {
                self.lengths(function, vr.len(), out.len())?;
                self.call(|i| i.get_binary(vr, out))
            }
            Call::SetBinary { vr, values } => {
                self.lengths(function, vr.len(), values.len())?;
                if let Some(why) = super::binary::too_big(&self.fmu.0.binary_max, vr, values) {
                    return Err(self.invalid(function, why));
                }
                self.call(|i| i.set_binary(vr, values))
            }
        };
        self.check(function, s)
    }

    fn can_interpolate_inputs(&self) -> bool {
        self.can_interpolate_inputs
    }

    /// Time inside every FMU call of this instance (s), measured with [`Instant`] around each
    /// call, and the number of `fmi2DoStep` calls.
    fn call_stats(&self) -> (f64, u64) {
        (self.busy.as_secs_f64(), self.steps)
    }

    fn fmu_warnings(&self) -> u64 {
        self.warnings()
    }

    fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }
}
