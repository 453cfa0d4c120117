//! The FMI 3.0 C API, called directly (no adapters): [`Binary3`] is a loaded
//! `binaries/x86_64-linux/<modelIdentifier>.so` with its `fmi3*` functions resolved once into the
//! typed table of `fmi-api`; [`Instance3`] is one `fmi3Instance` of it (Co-Simulation), with safe
//! methods that check slice lengths and return the raw `fmi3Status`. Which variable has which
//! type, the status handling and the errors are in `instance3.rs`. The logger environment is the
//! one FMI 2.0 instances use ([`InstanceEnv`]).

use super::ffi::{log_sink, symbol, text, InstanceEnv, InstantiateError, NOT_CALLED, OK, WARNING};
use fmi_api::{Component, Status, Vr};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

mod me;

/// The typed FMI 3.0 functions.
pub(crate) type Api3 = fmi_api::Fmi3;

/// The functions [`Binary3::load`] requires (`cosim info` checks a 3.0 binary's exports against them).
pub(crate) const REQUIRED_SYMBOLS3: &[&str] = fmi_api::Fmi3::REQUIRED;

/// Whether `name` is one of the Co-Simulation functions a Model Exchange binary need not export
/// ([`Binary3::load`] for Model Exchange stubs them).
pub(crate) fn co_simulation_only3(name: &str) -> bool {
    me::co_simulation_stub(name.as_bytes()).is_some()
}

/// A loaded FMI 3.0 binary with its resolved API; every [`Instance3`] holds an `Arc` of it.
pub(crate) struct Binary3 {
    pub(super) api: Api3,
    /// The Model Exchange functions, when loaded for Model Exchange (`ffi3/me.rs`).
    me: Option<fmi_api::Fmi3Me>,
    // Declared after `api`: the function pointers are never used after the library is closed.
    _lib: libloading::os::unix::Library,
}

impl Binary3 {
    /// Loads the shared library at `so` (`RTLD_NOW | RTLD_LOCAL`, as FMI 2.0 binaries) and
    /// resolves every `fmi3*` function of the table; the error names the missing symbol. For
    /// Model Exchange (`model_exchange`) the Model Exchange functions are required too and the
    /// Co-Simulation ones may be absent (see `ffi3/me.rs`).
    pub(crate) fn load(so: &Path, model_exchange: bool) -> Result<Self, String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading a library runs its initialisers, which is what loading an FMU means.
        let lib =
            unsafe { Library::open(Some(so), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| format!("cannot be loaded: {e}"))?;
        let lookup = |name: &'static [u8]| match symbol(&lib, name) {
            Err(e) if model_exchange => me::co_simulation_stub(name).ok_or(e),
            r => r,
        };
        // SAFETY: the symbols are FMI 3.0 functions with the table's signatures (those of
        // fmi3FunctionTypes.h; fmi3Boolean = C bool, arrays of it as bytes), or stubs of those
        // signatures; the pointers are only used while `lib` is loaded (both live in Binary3).
        let api = unsafe { Api3::resolve(lookup) }.map_err(|m| {
            let interface = if model_exchange { "common" } else { "Co-Simulation" };
            format!(
                "missing required symbol {}: the binary does not export the FMI 3.0 {interface} API ({})",
                m.symbol, m.error
            )
        })?;
        let me = if model_exchange {
            // SAFETY: as above, with the signatures of the Model Exchange functions.
            Some(unsafe { fmi_api::Fmi3Me::resolve(|name| symbol(&lib, name)) }.map_err(|m| {
                format!(
                    "missing required symbol {}: the binary does not export the FMI 3.0 Model Exchange API ({})",
                    m.symbol, m.error
                )
            })?)
        } else {
            None
        };
        Ok(Self { api, me, _lib: lib })
    }

    /// `fmi3FreeInstance(NULL)`: FMI 3.0 says a null instance is ignored (`cosim check`).
    pub(crate) fn free_null_instance(&self) {
        // SAFETY: a null instance, which the standard allows.
        unsafe { (self.api.free_instance)(std::ptr::null_mut()) }
    }

    /// `fmi3GetVersion()`.
    pub(crate) fn version(&self) -> String {
        // SAFETY: no arguments; a static NUL-terminated string (or NULL, which `text` handles).
        unsafe { text((self.api.get_version)()) }
    }
}

/// The FMU's `fmi3LogMessageCallback`: to the instance's environment (the FMI 2.0 sink).
unsafe extern "C" fn log3(env: *mut c_void, status: c_int, category: *const c_char, message: *const c_char) {
    // SAFETY: env is the InstanceEnv given at instantiation; strings NUL-terminated or NULL.
    unsafe { log_sink(env, std::ptr::null(), status, category, message) }
}

/// The FMU's `fmi3IntermediateUpdateCallback`: cosim sets no intermediate inputs, reads no
/// intermediate outputs and never asks for an early return; the call is counted (never unwinds).
unsafe extern "C" fn intermediate_update3(
    env: *mut c_void,
    _time: f64,
    _set_requested: bool,
    _get_allowed: bool,
    _step_finished: bool,
    _can_return_early: bool,
    early_return_requested: *mut bool,
    early_return_time: *mut f64,
) {
    if !early_return_requested.is_null() {
        // SAFETY: the FMU passes a writable fmi3Boolean.
        unsafe { *early_return_requested = false };
    }
    if !early_return_time.is_null() {
        // SAFETY: a writable fmi3Float64; not read while earlyReturnRequested is false.
        unsafe { *early_return_time = 0.0 };
    }
    if !env.is_null() {
        // SAFETY: env is the InstanceEnv given at instantiation, alive while the instance lives.
        unsafe { (*env.cast::<InstanceEnv>()).count_intermediate_update() };
    }
}

/// The FMU's `fmi3ClockUpdateCallback`: counted (cosim activates time-based clocks only).
unsafe extern "C" fn clock_update3(env: *mut c_void) {
    if !env.is_null() {
        // SAFETY: env is the InstanceEnv given at instantiation, alive while the instance lives.
        unsafe { (*env.cast::<InstanceEnv>()).count_intermediate_update() };
    }
}

/// `fmi3LockPreemptionCallback` / `fmi3UnlockPreemptionCallback`: nothing to lock, the master
/// activates one partition at a time from one thread.
unsafe extern "C" fn lock_preemption3() {}

/// How an instance is instantiated: FMI 3.0 Co-Simulation's event mode and early return.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Modes {
    /// `eventModeUsed`: the FMU stops at its events and the master runs event mode.
    pub(crate) event_mode_used: bool,
    /// `earlyReturnAllowed`.
    pub(crate) early_return_allowed: bool,
    /// Pass the (inert) `fmi3IntermediateUpdateCallback`.
    pub(crate) intermediate_update: bool,
    /// Scheduled Execution (`fmi3InstantiateScheduledExecution`, `scheduled.rs`).
    pub(crate) scheduled: bool,
}

/// What `fmi3UpdateDiscreteStates` returned besides its status.
pub(crate) type Discrete = crate::fmu::DiscreteStates;

/// What `fmi3DoStep` returned besides its status.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StepResult {
    pub(crate) event_handling_needed: bool,
    pub(crate) terminate_simulation: bool,
    pub(crate) early_return: bool,
    pub(crate) last_successful_time: f64,
}

/// One `fmi3Instance` (Co-Simulation), freed on drop. All methods take `&mut self`.
pub(crate) struct Instance3 {
    inst: NonNull<c_void>,
    env: NonNull<InstanceEnv>,
    binary: Arc<Binary3>,
    /// The one saved `fmi3FMUState`; null until the first save.
    saved: *mut c_void,
}

// SAFETY: as FMI 2.0's `Instance`: exclusive ownership, calls never concurrent (`&mut self`),
// the environment only read through shared references from the logger.
unsafe impl Send for Instance3 {}

/// A numeric getter of the table.
pub(crate) type Get<T> = unsafe extern "C" fn(Component, *const Vr, usize, *mut T, usize) -> Status;
/// A numeric setter of the table.
pub(crate) type Set<T> = unsafe extern "C" fn(Component, *const Vr, usize, *const T, usize) -> Status;

impl Instance3 {
    /// `fmi3InstantiateCoSimulation(name, token, resources, visible = false, logging_on,
    /// eventModeUsed, earlyReturnAllowed, no intermediate variables, env, logger,
    /// intermediateUpdate)`; `resource_uri` is the `file://` URI of the resources folder (FMI 3.0
    /// wants the path, with a trailing slash). `modes`: all false is the plain
    /// Co-Simulation of FMUs without event mode (no intermediate update callback either).
    pub(crate) fn new(
        binary: &Arc<Binary3>,
        name: &str,
        token: &str,
        resource_uri: &str,
        logging_on: bool,
        log: Option<Arc<dyn crate::host::FmuLog>>,
        modes: Modes,
    ) -> Result<Self, InstantiateError> {
        let path = resource_uri.strip_prefix("file://").unwrap_or(resource_uri);
        let path = if path.ends_with('/') { path.to_owned() } else { format!("{path}/") };
        let env = InstanceEnv::create(name, token, &path, log)?;
        let env_ptr = env.as_ptr();
        // SAFETY: NUL-terminated strings inside the environment, which outlives the instance
        // (freed after fmi3FreeInstance in Drop); no intermediate variables; our logger.
        let inst = unsafe {
            let (c_name, c_token, c_path) = (*env_ptr).c_strings();
            (binary.api.instantiate)(
                c_name,
                c_token,
                c_path,
                false,
                logging_on,
                modes.event_mode_used,
                modes.early_return_allowed,
                std::ptr::null(),
                0,
                env_ptr.cast(),
                Some(log3),
                modes.intermediate_update.then_some(intermediate_update3 as fmi_api::IntermediateUpdate3),
            )
        };
        match NonNull::new(inst) {
            Some(inst) => Ok(Self { inst, env, binary: Arc::clone(binary), saved: std::ptr::null_mut() }),
            // SAFETY: no instance was made, so nothing refers to the environment.
            None => Err(InstantiateError::Null(unsafe { InstanceEnv::free(env) })),
        }
    }

    /// `fmi3InstantiateScheduledExecution(name, token, resources, visible = false, logging_on,
    /// env, logger, clockUpdate, lockPreemption, unlockPreemption)`: the callbacks count (clock
    /// updates) or do nothing (the master activates partitions from one thread).
    pub(crate) fn new_scheduled(
        binary: &Arc<Binary3>,
        name: &str,
        token: &str,
        resource_uri: &str,
        logging_on: bool,
        log: Option<Arc<dyn crate::host::FmuLog>>,
    ) -> Result<Self, InstantiateError> {
        let path = resource_uri.strip_prefix("file://").unwrap_or(resource_uri);
        let path = if path.ends_with('/') { path.to_owned() } else { format!("{path}/") };
        let env = InstanceEnv::create(name, token, &path, log)?;
        let env_ptr = env.as_ptr();
        let inst = match binary.api.instantiate_scheduled_execution {
            // SAFETY: as `new`: strings inside the environment, which outlives the instance; our
            // callbacks never unwind.
            Some(f) => unsafe {
                let (c_name, c_token, c_path) = (*env_ptr).c_strings();
                f(
                    c_name,
                    c_token,
                    c_path,
                    false,
                    logging_on,
                    env_ptr.cast(),
                    Some(log3),
                    Some(clock_update3),
                    Some(lock_preemption3),
                    Some(lock_preemption3),
                )
            },
            None => std::ptr::null_mut(),
        };
        match NonNull::new(inst) {
            Some(inst) => Ok(Self { inst, env, binary: Arc::clone(binary), saved: std::ptr::null_mut() }),
            // SAFETY: no instance was made, so nothing refers to the environment.
            None => Err(InstantiateError::Null(unsafe { InstanceEnv::free(env) })),
        }
    }

    /// `fmi3ActivateModelPartition(clock, activationTime)`; NOT_CALLED when the binary lacks it.
    pub(crate) fn activate_model_partition(&mut self, clock: u32, time: f64) -> c_int {
        let Some(f) = self.binary.api.activate_model_partition else { return NOT_CALLED };
        // SAFETY: live instance, scalar arguments.
        unsafe { f(self.c(), clock, time) }
    }

    /// `fmi3GetIntervalDecimal` of one clock: (status, interval, qualifier).
    pub(crate) fn get_interval_decimal(&mut self, clock: u32) -> (c_int, f64, c_int) {
        let Some(f) = self.binary.api.get_interval_decimal else { return (NOT_CALLED, 0.0, 0) };
        let (mut interval, mut qualifier) = (0.0, 0);
        // SAFETY: live instance; one reference, one interval and one qualifier to write.
        let s = unsafe { f(self.c(), &clock, 1, &mut interval, &mut qualifier) };
        (s, interval, qualifier)
    }

    /// `fmi3GetShiftDecimal` of one clock: (status, shift).
    pub(crate) fn get_shift_decimal(&mut self, clock: u32) -> (c_int, f64) {
        let Some(f) = self.binary.api.get_shift_decimal else { return (NOT_CALLED, 0.0) };
        let mut shift = 0.0;
        // SAFETY: live instance; one reference and one shift to write.
        let s = unsafe { f(self.c(), &clock, 1, &mut shift) };
        (s, shift)
    }

    /// `fmi3GetIntervalFraction` of one clock: (status, counter, resolution, qualifier).
    pub(crate) fn get_interval_fraction(&mut self, clock: u32) -> (c_int, u64, u64, c_int) {
        let Some(f) = self.binary.api.get_interval_fraction else { return (NOT_CALLED, 0, 0, 0) };
        let (mut counter, mut resolution, mut qualifier) = (0, 0, 0);
        // SAFETY: live instance; one reference, one counter, resolution and qualifier to write.
        let s = unsafe { f(self.c(), &clock, 1, &mut counter, &mut resolution, &mut qualifier) };
        (s, counter, resolution, qualifier)
    }

    /// `fmi3GetShiftFraction` of one clock: (status, counter, resolution).
    pub(crate) fn get_shift_fraction(&mut self, clock: u32) -> (c_int, u64, u64) {
        let Some(f) = self.binary.api.get_shift_fraction else { return (NOT_CALLED, 0, 0) };
        let (mut counter, mut resolution) = (0, 0);
        // SAFETY: live instance; one reference, one counter and resolution to write.
        let s = unsafe { f(self.c(), &clock, 1, &mut counter, &mut resolution) };
        (s, counter, resolution)
    }

    pub(crate) fn env(&self) -> &InstanceEnv {
        // SAFETY: the environment lives until Drop and is only accessed through shared refs.
        unsafe { self.env.as_ref() }
    }

    fn c(&self) -> Component {
        self.inst.as_ptr()
    }

    pub(crate) fn api(&self) -> &Api3 {
        &self.binary.api
    }

    /// `fmi3SetDebugLogging(on, categories)`.
    pub(crate) fn set_debug_logging(&mut self, on: bool, categories: &[&str]) -> c_int {
        let Ok(owned) = categories.iter().map(|c| CString::new(*c)).collect::<Result<Vec<_>, _>>() else {
            return NOT_CALLED;
        };
        let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live instance; ptrs.len() NUL-terminated strings that outlive the call.
        unsafe { (self.binary.api.set_debug_logging)(self.c(), on, ptrs.len(), ptrs.as_ptr()) }
    }

    /// `fmi3EnterInitializationMode(tolerance, start, stop)`.
    pub(crate) fn enter_initialization_mode(&mut self, tolerance: Option<f64>, start: f64, stop: Option<f64>) -> c_int {
        // SAFETY: live instance, scalar arguments.
        unsafe {
            (self.binary.api.enter_initialization_mode)(
                self.c(),
                tolerance.is_some(),
                tolerance.unwrap_or(0.0),
                start,
                stop.is_some(),
                stop.unwrap_or(0.0),
            )
        }
    }

    /// `fmi3ExitInitializationMode`.
    pub(crate) fn exit_initialization_mode(&mut self) -> c_int {
        // SAFETY: live instance.
        unsafe { (self.binary.api.exit_initialization_mode)(self.c()) }
    }

    /// `fmi3Terminate`.
    pub(crate) fn terminate(&mut self) -> c_int {
        // SAFETY: live instance.
        unsafe { (self.binary.api.terminate)(self.c()) }
    }

    /// `fmi3EnterConfigurationMode` (`enter`) or `fmi3ExitConfigurationMode`; `NOT_CALLED` when
    /// the binary lacks it.
    pub(crate) fn configuration_mode(&mut self, enter: bool) -> c_int {
        let api = &self.binary.api;
        let Some(f) = (if enter { api.enter_configuration_mode } else { api.exit_configuration_mode }) else {
            return NOT_CALLED;
        };
        // SAFETY: live instance.
        unsafe { f(self.c()) }
    }

    /// `fmi3Reset`.
    pub(crate) fn reset(&mut self) -> c_int {
        // SAFETY: live instance.
        unsafe { (self.binary.api.reset)(self.c()) }
    }

    /// A numeric getter `get` (`fmi3GetFloat64`, `fmi3GetInt8`, …): `out` holds the values of
    /// `vr` (scalars: one each; arrays: all their elements).
    #[inline]
    pub(crate) fn get<T>(&mut self, get: Get<T>, vr: &[u32], out: &mut [T]) -> c_int {
        // SAFETY: live instance; vr.len() references, out.len() values (the FMU checks that the
        // count matches the variables' sizes).
        unsafe { get(self.c(), vr.as_ptr(), vr.len(), out.as_mut_ptr(), out.len()) }
    }

    /// A numeric setter `set`, as [`Instance3::get`].
    #[inline]
    pub(crate) fn set<T>(&mut self, set: Set<T>, vr: &[u32], values: &[T]) -> c_int {
        // SAFETY: live instance; vr.len() references, values.len() values.
        unsafe { set(self.c(), vr.as_ptr(), vr.len(), values.as_ptr(), values.len()) }
    }

    /// `fmi3GetString`: copied at once (the FMU's pointers live until its next call); a NULL
    /// string reads as empty.
    pub(crate) fn get_string(&mut self, vr: &[u32]) -> (c_int, Vec<String>) {
        let mut raw: Vec<*const c_char> = vec![std::ptr::null(); vr.len()];
        // SAFETY: live instance; vr.len() references and values.
        let status =
            unsafe { (self.binary.api.get_string)(self.c(), vr.as_ptr(), vr.len(), raw.as_mut_ptr(), raw.len()) };
        if status > WARNING {
            return (status, Vec::new());
        }
        // SAFETY: each pointer NULL or a NUL-terminated string of the FMU, copied before its next call.
        (status, raw.iter().map(|&p| unsafe { text(p) }).collect())
    }

    /// `fmi3SetString`.
    pub(crate) fn set_string(&mut self, vr: &[u32], values: &[&str]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        let Ok(owned) = values.iter().map(|v| CString::new(*v)).collect::<Result<Vec<_>, _>>() else {
            return NOT_CALLED;
        };
        let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live instance; vr.len() references and strings that outlive the call.
        unsafe { (self.binary.api.set_string)(self.c(), vr.as_ptr(), vr.len(), ptrs.as_ptr(), ptrs.len()) }
    }

    /// `fmi3GetBinary`, one value reference per call: each value's bytes are copied into its
    /// `out` buffer at once (no allocation once the buffers have grown); NULL with size 0 reads
    /// as empty. Before copying, `check(vr, size, null)` may refuse the size the FMU reported
    /// (too large, or a NULL pointer with a nonzero size): then nothing more is copied and the
    /// reason is returned with [`NOT_CALLED`].
    pub(crate) fn get_binary(
        &mut self,
        vr: &[u32],
        out: &mut [Vec<u8>],
        check: impl Fn(u32, usize, bool) -> Option<String>,
    ) -> (c_int, Option<String>) {
        if vr.len() != out.len() {
            return (NOT_CALLED, None);
        }
        let Some(get) = self.binary.api.get_binary else { return (NOT_CALLED, None) };
        let mut status = OK;
        for (r, o) in vr.iter().zip(out) {
            let (mut size, mut value) = (0usize, std::ptr::null::<u8>());
            // SAFETY: live instance; one reference, one size and one pointer to write.
            let s = unsafe { get(self.c(), r, 1, &mut size, &mut value, 1) };
            if s > WARNING {
                return (s, None);
            }
            if let Some(why) = check(*r, size, value.is_null()) {
                return (NOT_CALLED, Some(why));
            }
            o.clear();
            if !value.is_null() && size > 0 {
                // SAFETY: on success `value` points to `size` bytes, valid until the next call;
                // `check` bounded the size.
                o.extend_from_slice(unsafe { std::slice::from_raw_parts(value, size) });
            }
            status = status.max(s);
        }
        (status, None)
    }

    /// `fmi3SetBinary`, one value reference per call (no allocation).
    pub(crate) fn set_binary(&mut self, vr: &[u32], values: &[&[u8]]) -> c_int {
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        let Some(set) = self.binary.api.set_binary else { return NOT_CALLED };
        let mut status = OK;
        for (r, v) in vr.iter().zip(values) {
            // SAFETY: live instance; one reference, its size and a pointer to that many bytes.
            let s = unsafe { set(self.c(), r, 1, &v.len(), &v.as_ptr(), 1) };
            if s > WARNING {
                return s;
            }
            status = status.max(s);
        }
        status
    }

    /// `fmi3DoStep(t, h, noSetFMUStatePriorToCurrentPoint)` and its outputs.
    #[inline]
    pub(crate) fn do_step(&mut self, t: f64, h: f64, no_set_prior: bool) -> (c_int, StepResult) {
        let mut r = StepResult { last_successful_time: f64::NAN, ..StepResult::default() };
        // SAFETY: live instance; four writable outputs.
        let status = unsafe {
            (self.binary.api.do_step)(
                self.c(),
                t,
                h,
                no_set_prior,
                &mut r.event_handling_needed,
                &mut r.terminate_simulation,
                &mut r.early_return,
                &mut r.last_successful_time,
            )
        };
        (status, r)
    }

    /// `fmi3GetFMUState` into the saved slot.
    pub(crate) fn save_state(&mut self) -> c_int {
        // SAFETY: live instance; `saved` is null or a state it returned.
        unsafe { (self.binary.api.get_fmu_state)(self.c(), &mut self.saved) }
    }

    /// `fmi3SetFMUState` from the saved slot; NOT_CALLED when nothing was saved.
    pub(crate) fn restore_state(&mut self) -> c_int {
        if self.saved.is_null() {
            return NOT_CALLED;
        }
        // SAFETY: live instance; a state it returned.
        unsafe { (self.binary.api.set_fmu_state)(self.c(), self.saved) }
    }

    /// `fmi3EnterEventMode`; NOT_CALLED when the binary lacks it.
    pub(crate) fn enter_event_mode(&mut self) -> c_int {
        let Some(f) = self.binary.api.enter_event_mode else { return NOT_CALLED };
        // SAFETY: live instance.
        unsafe { f(self.c()) }
    }

    /// `fmi3EnterStepMode`; NOT_CALLED when the binary lacks it.
    pub(crate) fn enter_step_mode(&mut self) -> c_int {
        let Some(f) = self.binary.api.enter_step_mode else { return NOT_CALLED };
        // SAFETY: live instance.
        unsafe { f(self.c()) }
    }

    /// `fmi3UpdateDiscreteStates` into `out`; NOT_CALLED when the binary lacks it.
    pub(crate) fn update_discrete_states(&mut self, out: &mut Discrete) -> c_int {
        let Some(f) = self.binary.api.update_discrete_states else { return NOT_CALLED };
        let (mut need, mut term, mut nominals, mut values, mut defined, mut next) =
            (false, false, false, false, false, 0.0);
        // SAFETY: live instance; six writable outputs.
        let status = unsafe { f(self.c(), &mut need, &mut term, &mut nominals, &mut values, &mut defined, &mut next) };
        *out = Discrete {
            need_update: need,
            terminate: term,
            nominals_changed: nominals,
            values_changed: values,
            next_event_time: defined.then_some(next),
        };
        status
    }

    /// `fmi3GetClock` (one fmi3Clock = C bool per reference); NOT_CALLED when the binary lacks it.
    pub(crate) fn get_clock(&mut self, vr: &[u32], out: &mut [bool]) -> c_int {
        let Some(f) = self.binary.api.get_clock else { return NOT_CALLED };
        if vr.len() != out.len() {
            return NOT_CALLED;
        }
        let mut raw = vec![0u8; vr.len()];
        // SAFETY: live instance; vr.len() references and as many writable clock values.
        let status = unsafe { f(self.c(), vr.as_ptr(), vr.len(), raw.as_mut_ptr()) };
        for (o, r) in out.iter_mut().zip(&raw) {
            *o = *r != 0;
        }
        status
    }

    /// `fmi3SetClock`; NOT_CALLED when the binary lacks it.
    pub(crate) fn set_clock(&mut self, vr: &[u32], values: &[bool]) -> c_int {
        let Some(f) = self.binary.api.set_clock else { return NOT_CALLED };
        if vr.len() != values.len() {
            return NOT_CALLED;
        }
        let raw: Vec<u8> = values.iter().map(|b| u8::from(*b)).collect();
        // SAFETY: live instance; vr.len() references and clock values.
        unsafe { f(self.c(), vr.as_ptr(), vr.len(), raw.as_ptr()) }
    }

    /// `fmi3SerializedFMUStateSize` and `fmi3SerializeFMUState` of the saved slot (`cosim check`);
    /// NOT_CALLED when nothing was saved.
    pub(crate) fn serialize_saved(&mut self) -> (c_int, Vec<u8>) {
        if self.saved.is_null() {
            return (NOT_CALLED, Vec::new());
        }
        let mut size = 0usize;
        // SAFETY: live instance; `saved` is a state it returned; one size_t out.
        let status = unsafe { (self.binary.api.serialized_fmu_state_size)(self.c(), self.saved, &mut size) };
        if status > WARNING || size > (1 << 30) {
            return (if status > WARNING { status } else { super::ffi::ERROR }, Vec::new());
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: as above; a buffer of `size` bytes.
        let status = unsafe {
            (self.binary.api.serialize_fmu_state)(self.c(), self.saved, bytes.as_mut_ptr().cast(), bytes.len())
        };
        (status, bytes)
    }

    /// `fmi3DeserializeFMUState` of `bytes` into the saved slot (the previous one freed first).
    pub(crate) fn deserialize_into_saved(&mut self, bytes: &[u8]) -> c_int {
        let status = self.free_saved_state();
        if status > WARNING {
            return status;
        }
        // SAFETY: live instance; a buffer of bytes.len() bytes; `saved` is null and receives it.
        unsafe {
            (self.binary.api.deserialize_fmu_state)(self.c(), bytes.as_ptr().cast(), bytes.len(), &mut self.saved)
        }
    }

    /// `fmi3FreeFMUState` of the saved slot (OK when nothing is saved); the slot is null after.
    pub(crate) fn free_saved_state(&mut self) -> c_int {
        if self.saved.is_null() {
            return OK;
        }
        // SAFETY: live instance; the state came from it and is freed once (the slot is nulled).
        let status = unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut self.saved) };
        self.saved = std::ptr::null_mut();
        status
    }

    /// `fmi3FreeFMUState(instance, &NULL)`: a null state is ignored (`cosim check`).
    pub(crate) fn free_null_state(&mut self) -> c_int {
        let mut null: *mut c_void = std::ptr::null_mut();
        // SAFETY: live instance; a pointer to a null state, which the standard allows.
        unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut null) }
    }

    /// `fmi3GetDirectionalDerivative(unknowns, knowns, seed)` into `out` (`cosim check`);
    /// NOT_CALLED when the binary lacks it or the lengths disagree.
    pub(crate) fn get_directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        out: &mut [f64],
    ) -> c_int {
        let Some(f) = self.binary.api.get_directional_derivative else { return NOT_CALLED };
        if unknowns.len() != out.len() || knowns.len() != seed.len() {
            return NOT_CALLED;
        }
        // SAFETY: live instance; each array holds the length passed with it.
        unsafe {
            f(
                self.c(),
                unknowns.as_ptr(),
                unknowns.len(),
                knowns.as_ptr(),
                knowns.len(),
                seed.as_ptr(),
                seed.len(),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }

    /// `fmi3GetOutputDerivatives`.
    pub(crate) fn get_output_derivatives(&mut self, vr: &[u32], order: &[i32], out: &mut [f64]) -> c_int {
        if vr.len() != order.len() || vr.len() != out.len() {
            return NOT_CALLED;
        }
        // SAFETY: live instance; arrays of vr.len() elements.
        unsafe {
            (self.binary.api.get_output_derivatives)(
                self.c(),
                vr.as_ptr(),
                vr.len(),
                order.as_ptr(),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }
}

impl Drop for Instance3 {
    fn drop(&mut self) {
        if !self.saved.is_null() {
            // SAFETY: live instance; the state came from it and is freed once, here.
            unsafe { (self.binary.api.free_fmu_state)(self.c(), &mut self.saved) };
        }
        // SAFETY: the instance came from fmi3InstantiateCoSimulation and is freed once, here.
        unsafe { (self.binary.api.free_instance)(self.c()) };
        // SAFETY: after fmi3FreeInstance the FMU holds no reference to the environment.
        unsafe { InstanceEnv::free(self.env) };
    }
}
