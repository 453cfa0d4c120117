//! The FMI 2.0 C API (with `ffi3.rs` for FMI 3.0, the only modules with raw pointers and
//! `unsafe`), and the logger environment both versions share ([`InstanceEnv`]).
//!
//! [`Binary`] is a loaded `binaries/linux64/<modelIdentifier>.so` with every FMI 2.0 common and
//! Co-Simulation function resolved once into a typed function pointer. [`Instance`] is one
//! `fmi2Component` of it, with safe methods that check slice lengths and return the raw
//! `fmi2Status`; the status handling (names, errors, timing) is in `instance.rs`.
//!
//! Callbacks: `allocateMemory = calloc`, `freeMemory = free`, `stepFinished = NULL`, and the
//! logger `cosim_fmi2_logger` from `csrc/logger.c`, which formats the variadic message with
//! `vsnprintf` and passes the text to [`log_sink`] through the `componentEnvironment`: a
//! per-instance [`InstanceEnv`] whose first member is the sink.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// `fmi2OK`.
pub(crate) const OK: c_int = 0;
/// `fmi2Warning`.
pub(crate) const WARNING: c_int = 1;
/// `fmi2Discard`.
pub(crate) const DISCARD: c_int = 2;
/// `fmi2Error`.
pub(crate) const ERROR: c_int = 3;
/// `fmi2Fatal`.
pub(crate) const FATAL: c_int = 4;
/// `fmi2Pending`.
pub(crate) const PENDING: c_int = 5;
/// Not an FMI status: the call was not made because the slices' lengths differ or a string
/// holds a NUL character (callers check beforehand; this is the safety net).
pub(crate) const NOT_CALLED: c_int = -1;

/// `fmi2ModelExchange`.
const FMI2_MODEL_EXCHANGE: c_int = 0;
/// `fmi2CoSimulation`.
const FMI2_CO_SIMULATION: c_int = 1;

mod me;

/// The name of an `fmi2Status` value.
pub(crate) fn status_name(status: c_int) -> String {
    match status {
        OK => "fmi2OK".into(),
        WARNING => "fmi2Warning".into(),
        DISCARD => "fmi2Discard".into(),
        ERROR => "fmi2Error".into(),
        FATAL => "fmi2Fatal".into(),
        PENDING => "fmi2Pending".into(),
        NOT_CALLED => "not called (invalid arguments)".into(),
        other => format!("unknown fmi2Status {other}"),
    }
}

use fmi_api::Component;

/// `fmi2CallbackLogger` as FMI 2.0 declares it (variadic).
type LoggerFn = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char, ...);
/// The non-variadic sink the C shim calls with the formatted message.
type LogSink = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char);

extern "C" {
    /// C standard library `calloc`, the `allocateMemory` callback.
    fn calloc(nobj: usize, size: usize) -> *mut c_void;
    /// C standard library `free`, the `freeMemory` callback.
    fn free(obj: *mut c_void);
    /// `csrc/logger.c`: formats `message` with the variadic arguments and calls the sink found
    /// in `env` (see [`InstanceEnv`]).
    fn cosim_fmi2_logger(
        env: *mut c_void,
        instance_name: *const c_char,
        status: c_int,
        category: *const c_char,
        message: *const c_char,
        ...
    );
}

/// `fmi2CallbackFunctions`.
#[repr(C)]
struct CallbackFunctions {
    logger: Option<LoggerFn>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    component_environment: *mut c_void,
}

/// The typed FMI 2.0 functions (common and Co-Simulation), from the one table of `fmi-api`.
/// All are resolved at load time so that an incomplete binary is refused up front, even those
/// the master does not call yet.
type Api = fmi_api::Fmi2;

/// The functions [`Binary::load`] requires: `cosim info` checks a binary's exports against them
/// without loading it.
pub(crate) const REQUIRED_SYMBOLS: &[&str] = fmi_api::Fmi2::REQUIRED;

/// Whether `name` is one of the Co-Simulation functions a Model Exchange binary need not export
/// ([`Binary::load`] for Model Exchange stubs them).
pub(crate) fn co_simulation_only(name: &str) -> bool {
    me::co_simulation_stub(name.as_bytes()).is_some()
}

/// A loaded FMU binary with its resolved API. The library stays loaded while this lives; every
/// [`Instance`] holds an `Arc` of it.
pub(crate) struct Binary {
    api: Api,
    /// The Model Exchange functions, when loaded for Model Exchange (`me.rs`).
    me: Option<fmi_api::Fmi2Me>,
    // Declared after `api`: the function pointers are never used after the library is closed.
    _lib: libloading::os::unix::Library,
}

impl Binary {
    /// Loads the shared library at `so` (`RTLD_NOW | RTLD_LOCAL`: unresolved symbols fail here,
    /// not in the middle of a run, and FMUs do not see each other's symbols) and resolves every
    /// FMI 2.0 common and Co-Simulation function. The error text names the missing symbol.
    ///
    /// For Model Exchange (`model_exchange`) the Model Exchange functions are required too and
    /// the Co-Simulation ones may be absent (calling one is an error status, see `me.rs`).
    pub(crate) fn load(so: &Path, model_exchange: bool) -> Result<Self, String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading a library runs its initialisers, which is what loading an FMU means:
        // the user asked for this binary to be run. The path is an existing file of the archive.
        let lib =
            unsafe { Library::open(Some(so), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| format!("cannot be loaded: {e}"))?;
        // SAFETY: the symbols are FMI 2.0 functions with the table's signatures (those of
        // fmi2FunctionTypes.h); the pointers are only used while `lib` is loaded (both live in
        // the returned Binary).
        let lookup = |name: &'static [u8]| match symbol(&lib, name) {
            Err(e) if model_exchange => me::co_simulation_stub(name).ok_or(e),
            r => r,
        };
        let api = unsafe { Api::resolve(lookup) }.map_err(|m| {
            let interface = if model_exchange { "common" } else { "Co-Simulation" };
            format!(
                "missing required symbol {}: the binary does not export the FMI 2.0 {interface} API ({})",
                m.symbol, m.error
            )
        })?;
        let me = if model_exchange {
            // SAFETY: as above, with the signatures of the Model Exchange functions.
            Some(unsafe { fmi_api::Fmi2Me::resolve(|name| symbol(&lib, name)) }.map_err(|m| {
                format!(
                    "missing required symbol {}: the binary does not export the FMI 2.0 Model Exchange API ({})",
                    m.symbol, m.error
                )
            })?)
        } else {
            None
        };
        Ok(Self { api, me, _lib: lib })
    }

    /// `fmi2GetTypesPlatform()` ("default" for every standard binary).
    pub(crate) fn types_platform(&self) -> String {
        // SAFETY: no arguments; FMI 2.0 returns a static NUL-terminated string (or, in a broken
        // FMU, NULL, which `text` handles).
        unsafe { text((self.api.get_types_platform)()) }
    }

    /// `fmi2FreeInstance(NULL)`: FMI 2.0 §2.1.5 says the call is ignored (`cosim check`).
    pub(crate) fn free_null_instance(&self) {
        // SAFETY: a null component, which the standard allows.
        unsafe { (self.api.free_instance)(std::ptr::null_mut()) }
    }

    /// The optional functions the binary does not export (`cosim check`).
    pub(crate) fn missing_optional(&self) -> Vec<&'static str> {
        self.api.missing_optional()
    }

    /// `fmi2GetVersion()` ("2.0").
    pub(crate) fn version(&self) -> String {
        // SAFETY: as in `types_platform`.
        unsafe { text((self.api.get_version)()) }
    }
}

/// The address of `name` (NUL-terminated) in `lib`; a missing or NULL symbol is an error.
pub(super) fn symbol(lib: &libloading::os::unix::Library, name: &[u8]) -> Result<NonNull<c_void>, String> {
    // SAFETY: only the address is read (as a data pointer); the caller types it.
    let p = unsafe { lib.get::<*mut c_void>(name) }.map_err(|e| e.to_string())?;
    NonNull::new(*p).ok_or_else(|| "the symbol's address is NULL".to_owned())
}

/// Copies a C string; NULL gives an empty string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string valid for the duration of the call.
pub(super) unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: per this function's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Per-instance state behind the `componentEnvironment` pointer (FMI 2.0) or
/// `instanceEnvironment` (FMI 3.0). `#[repr(C)]` with the sink first: `csrc/logger.c` reads it as
/// `struct cosim_log_env`. Allocated before instantiation and freed only after the instance is
/// freed, so it outlives it; the FMU may also keep the pointer to `callbacks` (OpenModelica FMUs
/// do), which lives here too.
#[repr(C)]
pub(crate) struct InstanceEnv {
    sink: LogSink,
    callbacks: CallbackFunctions,
    /// Our name of the instance, for the log lines.
    name: String,
    /// Hand the messages of this status or worse to `log` ([`crate::host::LogLevel`]); every
    /// message is counted either way.
    echo_from: c_int,
    /// The host's sink ([`crate::host::Host::log`]).
    log: Option<Arc<dyn crate::host::FmuLog>>,
    /// The last message the FMU logged.
    last: Mutex<String>,
    /// Number of messages logged so far.
    count: AtomicU64,
    /// Number of messages of status fmi2Warning logged so far (physical-state reports come with
    /// fmi2OK from the call: the message is where the warning is).
    warned: AtomicU64,
    /// Number of `fmi3IntermediateUpdateCallback` calls (FMI 3.0 event mode).
    intermediate: AtomicU64,
    /// The strings passed to fmi2Instantiate, kept for FMUs that keep the pointers.
    c_name: CString,
    c_guid: CString,
    c_resources: CString,
}

impl InstanceEnv {
    fn last(&self) -> MutexGuard<'_, String> {
        self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, status: c_int, category: &str, message: &str) {
        {
            let mut last = self.last();
            last.clear();
            last.push_str(message);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        if status == WARNING {
            self.warned.fetch_add(1, Ordering::Relaxed);
        }
        if status >= self.echo_from {
            if let Some(log) = &self.log {
                log.message(&self.name, category, message);
            }
        }
    }

    /// A note of the master about a call of this instance (e.g. a warning status without a
    /// message), to the sink at `status`, not counted as the FMU's message.
    pub(crate) fn note(&self, status: c_int, message: &str) {
        if status >= self.echo_from {
            if let Some(log) = &self.log {
                log.message(&self.name, "cosim", message);
            }
        }
    }

    /// Allocates the environment of an instance named `name` (the strings are kept for FMUs
    /// that keep the pointers); the caller frees it with [`InstanceEnv::free`] after the
    /// instance is freed. Its `componentEnvironment` points to itself.
    pub(crate) fn create(
        name: &str,
        guid: &str,
        resources: &str,
        log: Option<Arc<dyn crate::host::FmuLog>>,
    ) -> Result<NonNull<Self>, InstantiateError> {
        let c_name = CString::new(name).map_err(|_| InstantiateError::Nul("instance name"))?;
        let c_guid = CString::new(guid).map_err(|_| InstantiateError::Nul("GUID"))?;
        let c_resources = CString::new(resources).map_err(|_| InstantiateError::Nul("resource location"))?;
        let echo_from = log.as_ref().map_or(c_int::MAX, |l| l.level().lowest_status());
        let env = Box::new(Self {
            sink: log_sink,
            callbacks: CallbackFunctions {
                logger: Some(cosim_fmi2_logger),
                allocate_memory: Some(calloc),
                free_memory: Some(free),
                step_finished: None,
                component_environment: std::ptr::null_mut(),
            },
            name: name.to_owned(),
            echo_from,
            log,
            last: Mutex::new(String::new()),
            count: AtomicU64::new(0),
            warned: AtomicU64::new(0),
            intermediate: AtomicU64::new(0),
            c_name,
            c_guid,
            c_resources,
        });
        // A raw allocation (not a Box field) because the FMU holds pointers into it while the
        // instance moves around.
        let env = NonNull::from(Box::leak(env));
        let env_ptr = env.as_ptr();
        // SAFETY: env_ptr is the live allocation made just above; nothing else references it yet.
        unsafe { (*env_ptr).callbacks.component_environment = env_ptr.cast() };
        Ok(env)
    }

    /// Frees an environment made by [`InstanceEnv::create`], returning its last message.
    ///
    /// # Safety
    /// `env` came from [`InstanceEnv::create`], is freed once, and no instance refers to it any
    /// more (freed, or never made).
    pub(crate) unsafe fn free(env: NonNull<Self>) -> String {
        // SAFETY: per this function's contract.
        let env = unsafe { Box::from_raw(env.as_ptr()) };
        let last = env.last().clone();
        last
    }

    /// The instance name, GUID/token and resource location as C strings.
    pub(crate) fn c_strings(&self) -> (*const c_char, *const c_char, *const c_char) {
        (self.c_name.as_ptr(), self.c_guid.as_ptr(), self.c_resources.as_ptr())
    }

    /// Messages so far.
    #[inline]
    pub(crate) fn message_count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The last message.
    pub(crate) fn last_message(&self) -> String {
        self.last().clone()
    }

    /// Counts one `fmi3IntermediateUpdateCallback` call.
    pub(crate) fn count_intermediate_update(&self) {
        self.intermediate.fetch_add(1, Ordering::Relaxed);
    }

    /// `fmi3IntermediateUpdateCallback` calls so far.
    pub(crate) fn intermediate_updates(&self) -> u64 {
        self.intermediate.load(Ordering::Relaxed)
    }

    /// Messages so far, and those of status Warning.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.count.load(Ordering::Relaxed), self.warned.load(Ordering::Relaxed))
    }
}

/// The Rust side of the logger: called by `cosim_fmi2_logger` with the formatted message.
///
/// # Safety
/// `env` is NULL or the `InstanceEnv` of a live instance; the strings are NULL or
/// NUL-terminated (the C shim passes the FMU's `instanceName` and `category` and its own
/// buffer).
pub(crate) unsafe extern "C" fn log_sink(
    env: *mut c_void,
    _instance_name: *const c_char,
    status: c_int,
    category: *const c_char,
    message: *const c_char,
) {
    // SAFETY: per this function's contract, env is NULL or points to a live InstanceEnv that is
    // only ever accessed through shared references.
    let Some(env) = (unsafe { env.cast::<InstanceEnv>().as_ref() }) else { return };
    // SAFETY: per this function's contract.
    let (category, message) = unsafe { (text(category), text(message)) };
    env.record(status, &category, &message);
}

/// Why fmi2Instantiate failed.
pub(crate) enum InstantiateError {
    /// The name, GUID or URI holds a NUL character.
    Nul(&'static str),
    /// fmi2Instantiate returned NULL; the FMU's last message (possibly empty).
    Null(String),
}

/// One `fmi2Component`, freed on drop. All methods take `&mut self`: one call at a time.
pub(crate) struct Instance {
    component: NonNull<c_void>,
    env: NonNull<InstanceEnv>,
    binary: Arc<Binary>,
    /// The one saved `fmi2FMUstate` ([`Instance::save_state`]); null until the first save.
    saved: *mut c_void,
}

// SAFETY: an Instance owns its component and environment exclusively; FMI 2.0 lets an importer
// call an instance from any thread as long as calls on it are not concurrent, which `&mut self`
// on every call guarantees (Instance is deliberately not Sync). The environment is only read
// through shared references (and a Mutex) from the logger, which the FMU may call on any thread.
// The binary's function pointers and library handle are thread-safe to share.
unsafe impl Send for Instance {}

impl Instance {
    /// `fmi2Instantiate(name, fmi2CoSimulation, guid, resource_uri, callbacks, visible = false,
    /// logging_on)` (`fmi2ModelExchange` for a binary loaded for Model Exchange); the FMU's
    /// messages go to `log`.
    pub(crate) fn new(
        binary: &Arc<Binary>,
        name: &str,
        guid: &str,
        resource_uri: &str,
        logging_on: bool,
        log: Option<Arc<dyn crate::host::FmuLog>>,
    ) -> Result<Self, InstantiateError> {
        let env = InstanceEnv::create(name, guid, resource_uri, log)?;
        let env_ptr = env.as_ptr();
        // SAFETY: FMI 2.0 fmi2Instantiate with NUL-terminated strings and a callbacks struct, all
        // inside the environment allocation, which outlives the component (freed after
        // fmi2FreeInstance in Drop). Only shared access to the allocation happens from now on.
        let fmu_type = if binary.me.is_some() { FMI2_MODEL_EXCHANGE } else { FMI2_CO_SIMULATION };
        let component = unsafe {
            let e = &*env_ptr;
            let (c_name, c_guid, c_resources) = e.c_strings();
            (binary.api.instantiate)(
                c_name,
                fmu_type,
                c_guid,
                c_resources,
                std::ptr::from_ref(&e.callbacks).cast(),
                0,
                c_int::from(logging_on),
            )
        };
        match NonNull::new(component) {
            Some(component) => Ok(Self { component, env, binary: Arc::clone(binary), saved: std::ptr::null_mut() }),
            // SAFETY: the FMU returned no component, so nothing refers to the environment any
            // more (an FMU that failed to instantiate must not call back).
            None => Err(InstantiateError::Null(unsafe { InstanceEnv::free(env) })),
        }
    }

    pub(crate) fn env(&self) -> &InstanceEnv {
        // SAFETY: the environment lives until Drop and is only accessed through shared refs.
        unsafe { self.env.as_ref() }
    }

    fn c(&self) -> Component {
        self.component.as_ptr()
    }

    /// `fmi2SetDebugLogging(on, categories)`.
    pub(crate) fn set_debug_logging(&mut self, on: bool, categories: &[&str]) -> c_int {
        let Ok(owned) = categories.iter().map(|c| CString::new(*c)).collect::<Result<Vec<_>, _>>() else {
            return NOT_CALLED;
        };
        let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live component; an array of ptrs.len() NUL-terminated strings that outlive
        // the call.
        unsafe { (self.binary.api.set_debug_logging)(self.c(), c_int::from(on), ptrs.len(), ptrs.as_ptr()) }
    }

    /// `fmi2SetupExperiment`.
    pub(crate) fn setup_experiment(&mut self, tolerance: Option<f64>, start: f64, stop: Option<f64>) -> c_int {
        // SAFETY: live component, scalar arguments.
        unsafe {
            (self.binary.api.setup_experiment)(
                self.c(),
                c_int::from(tolerance.is_some()),
                tolerance.unwrap_or(0.0),
                start,
                c_int::from(stop.is_some()),
                stop.unwrap_or(0.0),
            )
        }
    }

    /// `fmi2EnterInitializationMode`.
    pub(crate) fn enter_initialization_mode(&mut self) -> c_int {
        // SAFETY: live component.
        unsafe { (self.binary.api.enter_initialization_mode)(self.c()) }
    }

    /// `fmi2ExitInitializationMode`.
    pub(crate) fn exit_initialization_mode(&mut self) -> c_int {
        // SAFETY: live component.
        unsafe { (self.binary.api.exit_initialization_mode)(self.c()) }
    }

    /// `fmi2Terminate`.
    pub(crate) fn terminate(&mut self) -> c_int {
        // SAFETY: live component.
        unsafe { (self.binary.api.terminate)(self.c()) }
    }

    /// `fmi2Reset`.
    pub(crate) fn reset(&mut self) -> c_int {
        // SAFETY: live component.
        unsafe { (self.binary.api.reset)(self.c()) }
    }

    /// `fmi2GetReal`.
    pub(crate) fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> c_int {
        if vr.len() != out.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; both arrays hold vr.len() elements.
        unsafe { (self.binary.api.get_real)(self.c(), vr.as_ptr(), vr.len(), out.as_mut_ptr()) }
    }

    /// `fmi2SetReal`.
    pub(crate) fn set_real(&mut self, vr: &[u32], values: &[f64]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; both arrays hold vr.len() elements.
        unsafe { (self.binary.api.set_real)(self.c(), vr.as_ptr(), vr.len(), values.as_ptr()) }
    }

    /// `fmi2GetInteger`.
    pub(crate) fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> c_int {
        if vr.len() != out.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; both arrays hold vr.len() elements (fmi2Integer is int = i32).
        unsafe { (self.binary.api.get_integer)(self.c(), vr.as_ptr(), vr.len(), out.as_mut_ptr()) }
    }

    /// `fmi2SetInteger`.
    pub(crate) fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; both arrays hold vr.len() elements.
        unsafe { (self.binary.api.set_integer)(self.c(), vr.as_ptr(), vr.len(), values.as_ptr()) }
    }

    /// `fmi2GetBoolean` (fmi2Boolean is an int: any non-zero value is true).
    pub(crate) fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> c_int {
        if vr.len() != out.len() {
            return NOT_CALLED;
        }
        let mut raw: Vec<c_int> = vec![0; vr.len()];
        // SAFETY: live component; both arrays hold vr.len() elements.
        let status = unsafe { (self.binary.api.get_boolean)(self.c(), vr.as_ptr(), vr.len(), raw.as_mut_ptr()) };
        for (o, r) in out.iter_mut().zip(&raw) {
            *o = *r != 0;
        }
        status
    }

    /// `fmi2SetBoolean`.
    pub(crate) fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        let raw: Vec<c_int> = values.iter().map(|&b| c_int::from(b)).collect();
        // SAFETY: live component; both arrays hold vr.len() elements.
        unsafe { (self.binary.api.set_boolean)(self.c(), vr.as_ptr(), vr.len(), raw.as_ptr()) }
    }

    /// `fmi2GetString`: the strings are copied at once (the FMU's pointers are only valid until
    /// its next call). A NULL string reads as empty.
    pub(crate) fn get_string(&mut self, vr: &[u32]) -> (c_int, Vec<String>) {
        let mut raw: Vec<*const c_char> = vec![std::ptr::null(); vr.len()];
        // SAFETY: live component; both arrays hold vr.len() elements.
        let status = unsafe { (self.binary.api.get_string)(self.c(), vr.as_ptr(), vr.len(), raw.as_mut_ptr()) };
        if status > WARNING {
            return (status, Vec::new());
        }
        // SAFETY: on success each pointer is NULL or a NUL-terminated string of the FMU, valid
        // until its next call; copied here before any other call.
        let values = raw.iter().map(|&p| unsafe { text(p) }).collect();
        (status, values)
    }

    /// `fmi2SetString`.
    pub(crate) fn set_string(&mut self, vr: &[u32], values: &[&str]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        let Ok(owned) = values.iter().map(|v| CString::new(*v)).collect::<Result<Vec<_>, _>>() else {
            return NOT_CALLED;
        };
        let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live component; both arrays hold vr.len() elements; the strings outlive the call.
        unsafe { (self.binary.api.set_string)(self.c(), vr.as_ptr(), vr.len(), ptrs.as_ptr()) }
    }

    /// `fmi2SetRealInputDerivatives`.
    pub(crate) fn set_real_input_derivatives(&mut self, vr: &[u32], order: &[i32], values: &[f64]) -> c_int {
        if vr.len() != order.len() || vr.len() != values.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; all three arrays hold vr.len() elements.
        unsafe {
            (self.binary.api.set_real_input_derivatives)(
                self.c(),
                vr.as_ptr(),
                vr.len(),
                order.as_ptr(),
                values.as_ptr(),
            )
        }
    }

    /// `fmi2GetRealOutputDerivatives`.
    pub(crate) fn get_real_output_derivatives(&mut self, vr: &[u32], order: &[i32], out: &mut [f64]) -> c_int {
        if vr.len() != order.len() || vr.len() != out.len() {
            return NOT_CALLED;
        }
        // SAFETY: live component; all three arrays hold vr.len() elements.
        unsafe {
            (self.binary.api.get_real_output_derivatives)(
                self.c(),
                vr.as_ptr(),
                vr.len(),
                order.as_ptr(),
                out.as_mut_ptr(),
            )
        }
    }

    /// `fmi2GetFMUstate` into the instance's saved-state slot (allocated by the FMU on the first
    /// call, overwritten in place afterwards, as FMI 2.0 §2.1.8 allows).
    pub(crate) fn save_state(&mut self) -> c_int {
        // SAFETY: live component; `saved` is null or a state this component returned earlier.
        unsafe { (self.binary.api.get_fmu_state)(self.c(), &mut self.saved) }
    }

    /// `fmi2SetFMUstate` from the saved slot; NOT_CALLED when nothing was saved.
    pub(crate) fn restore_state(&mut self) -> c_int {
        if self.saved.is_null() {
            return NOT_CALLED;
        }
        // SAFETY: live component; `saved` is a state this component returned.
        unsafe { (self.binary.api.set_fmu_state)(self.c(), self.saved) }
    }

    /// `fmi2SerializedFMUstateSize` and `fmi2SerializeFMUstate` of the saved slot (`cosim check`);
    /// NOT_CALLED when nothing was saved.
    pub(crate) fn serialize_saved(&mut self) -> (c_int, Vec<u8>) {
        if self.saved.is_null() {
            return (NOT_CALLED, Vec::new());
        }
        let mut size = 0usize;
        // SAFETY: live component; `saved` is a state this component returned; one size_t out.
        let status = unsafe { (self.binary.api.serialized_fmu_state_size)(self.c(), self.saved, &mut size) };
        if status > WARNING || size > (1 << 30) {
            return (if status > WARNING { status } else { ERROR }, Vec::new());
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: as above; a buffer of `size` bytes.
        let status = unsafe {
            (self.binary.api.serialize_fmu_state)(self.c(), self.saved, bytes.as_mut_ptr().cast(), bytes.len())
        };
        (status, bytes)
    }

    /// `fmi2DeSerializeFMUstate` of `bytes` into the saved slot (the previous saved state is freed
    /// first), for [`Instance::restore_state`] (`cosim check`).
    pub(crate) fn deserialize_into_saved(&mut self, bytes: &[u8]) -> c_int {
        let status = self.free_saved_state();
        if status > WARNING {
            return status;
        }
        // SAFETY: live component; a buffer of bytes.len() bytes; `saved` is null and receives
        // the new state.
        unsafe {
            (self.binary.api.deserialize_fmu_state)(self.c(), bytes.as_ptr().cast(), bytes.len(), &mut self.saved)
        }
    }

    /// `fmi2FreeFMUstate` of the saved slot (OK when nothing is saved); the slot is null after.
    pub(crate) fn free_saved_state(&mut self) -> c_int {
        if self.saved.is_null() {
            return OK;
        }
        // SAFETY: live component; the state came from it and is freed once (the slot is nulled).
        let status = unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut self.saved) };
        self.saved = std::ptr::null_mut();
        status
    }

    /// `fmi2FreeFMUstate(c, &NULL)`: FMI 2.0 §2.1.8 says a null state is ignored (`cosim check`).
    pub(crate) fn free_null_state(&mut self) -> c_int {
        let mut null: *mut c_void = std::ptr::null_mut();
        // SAFETY: live component; a pointer to a null FMUstate, which the standard allows.
        unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut null) }
    }

    /// `fmi2GetBooleanStatus(kind)`; NOT_CALLED when the FMU does not export it.
    pub(crate) fn get_boolean_status(&mut self, kind: c_int, out: &mut bool) -> c_int {
        let Some(f) = self.binary.api.get_boolean_status else { return NOT_CALLED };
        let mut raw: c_int = 0;
        // SAFETY: live component; a pointer to one fmi2Boolean.
        let status = unsafe { f(self.c(), kind, &mut raw) };
        *out = raw != 0;
        status
    }

    /// `fmi2GetRealStatus(kind)`; NOT_CALLED when the FMU does not export it.
    pub(crate) fn get_real_status(&mut self, kind: c_int, out: &mut f64) -> c_int {
        let Some(f) = self.binary.api.get_real_status else { return NOT_CALLED };
        // SAFETY: live component; a pointer to one fmi2Real.
        unsafe { f(self.c(), kind, out) }
    }

    /// `fmi2DoStep`.
    pub(crate) fn do_step(&mut self, t: f64, h: f64, no_set_fmu_state_prior: bool) -> c_int {
        // SAFETY: live component, scalar arguments.
        unsafe { (self.binary.api.do_step)(self.c(), t, h, c_int::from(no_set_fmu_state_prior)) }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if !self.saved.is_null() {
            // SAFETY: live component; the state came from it and is freed exactly once, here.
            unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut self.saved) };
        }
        // SAFETY: the component came from fmi2Instantiate and is freed exactly once, here.
        unsafe { (self.binary.api.free_instance)(self.c()) };
        // SAFETY: after fmi2FreeInstance the FMU holds no reference to the environment; it came
        // from InstanceEnv::create in `new` and is freed exactly once, here.
        unsafe { InstanceEnv::free(self.env) };
    }
}

/// For a worker process (`cosim worker`, see `isolated.rs`): takes the protocol pipes out of
/// stdin/stdout and points descriptor 0 at `/dev/null` and 1 at stderr, so that whatever the FMU
/// reads from stdin or prints to stdout (`printf`) cannot corrupt the protocol. Returns
/// (requests in, responses out).
pub(crate) fn take_stdio_for_protocol() -> std::io::Result<(std::fs::File, std::fs::File)> {
    cosim_os::fd::take_stdio_for_protocol()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    fn env(name: &str) -> Box<InstanceEnv> {
        Box::new(InstanceEnv {
            sink: log_sink,
            callbacks: CallbackFunctions {
                logger: None,
                allocate_memory: None,
                free_memory: None,
                step_finished: None,
                component_environment: std::ptr::null_mut(),
            },
            name: name.into(),
            echo_from: WARNING,
            log: None,
            last: Mutex::new(String::new()),
            count: AtomicU64::new(0),
            warned: AtomicU64::new(0),
            intermediate: AtomicU64::new(0),
            c_name: CString::default(),
            c_guid: CString::default(),
            c_resources: CString::default(),
        })
    }

    #[test]
    fn the_c_shim_formats_variadic_messages() {
        let e = env("shim");
        let p = (&*e as *const InstanceEnv).cast_mut().cast::<c_void>();
        // SAFETY: a live environment and NUL-terminated strings; the arguments match the format.
        unsafe {
            cosim_fmi2_logger(
                p,
                c"shim".as_ptr(),
                OK,
                c"logAll".as_ptr(),
                c"x = %d, s = %s, %.2f %%".as_ptr(),
                42 as c_int,
                c"str".as_ptr(),
                1.5f64,
            );
        }
        assert_eq!(*e.last(), "x = 42, s = str, 1.50 %");
        // Longer than the shim's stack buffer: the text is not truncated.
        let long = CString::new("y".repeat(5000)).unwrap();
        // SAFETY: as above.
        unsafe { cosim_fmi2_logger(p, std::ptr::null(), OK, std::ptr::null(), c"<%s>".as_ptr(), long.as_ptr()) };
        let last = e.last().clone();
        assert_eq!(last.len(), 5002);
        assert!(last.starts_with("<yyy") && last.ends_with("yy>"));
        // NULL message.
        // SAFETY: as above.
        unsafe { cosim_fmi2_logger(p, std::ptr::null(), OK, std::ptr::null(), std::ptr::null()) };
        assert_eq!(*e.last(), "");
        assert_eq!(e.count.load(Ordering::Relaxed), 3);
        // Messages of status fmi2Warning are counted apart (physical-state reports with fmi2OK).
        assert_eq!(e.warned.load(Ordering::Relaxed), 0);
        // SAFETY: as above.
        unsafe {
            cosim_fmi2_logger(p, c"shim".as_ptr(), WARNING, c"logStatusWarning".as_ptr(), c"cavitation".as_ptr())
        };
        assert_eq!((e.count.load(Ordering::Relaxed), e.warned.load(Ordering::Relaxed)), (4, 1));
    }

    #[test]
    fn the_c_shim_never_writes_through_or_reads_unchecked_from_the_fmus_arguments() {
        // Issue 48 item 15: the message is the FMU's format, and FMUs log "%n"/"%s" as text.
        let e = env("shim");
        let p = (&*e as *const InstanceEnv).cast_mut().cast::<c_void>();
        let log = |format: &CStr| {
            // SAFETY: a live environment; the arguments deliberately do not match the format
            // (what a buggy FMU does): the shim must neither write through nor read from them
            // unchecked.
            unsafe { cosim_fmi2_logger(p, std::ptr::null(), OK, std::ptr::null(), format.as_ptr()) };
            e.last().clone()
        };
        assert_eq!(log(c"done 100%n, 50%% left"), "done 100%n, 50% left");
        let many = log(c"%n%n%n%n%s%s%s%s%s%s%s%s%s%s%s%s %d %f %p");
        assert!(many.starts_with("%n%n%n%n"), "{many}");
        assert_eq!(log(c"positional %2$s %1$d"), "positional %2$s %1$d");
        assert_eq!(log(c"wide %99999999d"), "wide %99999999d");
        assert_eq!(log(c"unknown %y %s"), "unknown %y %s");
        // More conversions than the shim takes arguments for: printed as written from the 33rd on.
        let n = log(&CString::new("%d".repeat(40)).unwrap());
        assert!(n.ends_with(&"%d".repeat(8)), "{n}");
        // SAFETY: a pointer that is not readable: the shim checks before reading.
        unsafe { cosim_fmi2_logger(p, std::ptr::null(), OK, std::ptr::null(), c"<%s>".as_ptr(), 16usize) };
        assert_eq!(*e.last(), "<(unreadable)>");
        // SAFETY: matching arguments: formatted as printf does, %n skipped and not written.
        let mut count: c_int = -1;
        unsafe {
            cosim_fmi2_logger(
                p,
                std::ptr::null(),
                OK,
                std::ptr::null(),
                c"%-4d|%*.*f|%.2s|%n|%5.1e|%c|%lld|%zu".as_ptr(),
                7 as c_int,
                8 as c_int,
                3 as c_int,
                2.71f64,
                c"abc".as_ptr(),
                &mut count as *mut c_int,
                12345.0f64,
                b'z' as c_int,
                -5i64,
                9usize,
            )
        };
        assert_eq!(*e.last(), "7   |   2.710|ab|%n|1.2e+04|z|-5|9");
        assert_eq!(count, -1, "%n never writes");
    }

    #[test]
    fn status_names() {
        assert_eq!(status_name(DISCARD), "fmi2Discard");
        assert_eq!(status_name(FATAL), "fmi2Fatal");
        assert_eq!(status_name(17), "unknown fmi2Status 17");
    }
}
