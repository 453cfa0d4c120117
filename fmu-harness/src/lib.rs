//! A small FMI 2.0 Co-Simulation importer for end-to-end tests: unzips a packaged FMU, loads its
//! `binaries/linux64/<modelIdentifier>.so` with libloading, and calls the C API exactly as a
//! third-party importer would, including deliberately illegal calls.
//!
//! The production importer is the `master` crate; this one stays deliberately thin so that
//! tests see the raw `fmi2Status` of every call.
//!
//! [`in_process`]: our models as instances of that master, without packaging (no `dlopen`).
#![warn(missing_docs)]

pub mod in_process;
pub mod oscillator;
pub mod paths;

use libloading::Library;
use model_description::ModelDescription;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// `fmi2Status` values.
pub mod status {
    /// fmi2OK.
    pub const OK: i32 = 0;
    /// fmi2Warning.
    pub const WARNING: i32 = 1;
    /// fmi2Discard.
    pub const DISCARD: i32 = 2;
    /// fmi2Error.
    pub const ERROR: i32 = 3;
}

/// Errors of the harness.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Archive.
    #[error("{path}: {source}")]
    Zip {
        /// File.
        path: PathBuf,
        /// Cause.
        source: zip::result::ZipError,
    },
    /// Description.
    #[error("{path}: modelDescription.xml: {message}")]
    Description {
        /// File.
        path: PathBuf,
        /// Cause.
        message: String,
    },
    /// Loading.
    #[error("{path}: {source}")]
    Load {
        /// File.
        path: PathBuf,
        /// Cause.
        source: libloading::Error,
    },
    /// A function of the FMI 2.0 API the binary does not export.
    #[error("{path}: does not export {symbol}")]
    Missing {
        /// File.
        path: PathBuf,
        /// The function.
        symbol: &'static str,
    },
    /// Instantiation returned NULL.
    #[error("fmi2Instantiate returned NULL; log: {0:?}")]
    Instantiate(Vec<String>),
}

/// Logger as the harness declares it: the message is used as is (our FMUs escape '%' and pass no
/// variadic arguments). On x86-64 System V a non-variadic callee is call-compatible with a
/// variadic call.
type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char);

#[repr(C)]
struct Callbacks {
    logger: Option<Logger>,
    allocate: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    env: *mut c_void,
}

/// The typed function pointers of the FMI 2.0 Co-Simulation API: the one table of `fmi-api`,
/// which the master's loader uses too.
pub type Api = fmi_api::Fmi2;

/// Every FMI 2.0 common and Co-Simulation function: [`Fmu::load`] requires all of them (the
/// standard does; the master tolerates FMUs without the optional ones of [`Api`]).
pub fn required_symbols() -> Vec<&'static str> {
    Api::REQUIRED.iter().chain(Api::OPTIONAL).copied().collect()
}

/// A loaded FMU.
pub struct Fmu {
    /// The parsed description.
    pub md: ModelDescription,
    /// The API.
    pub api: Api,
    /// Unloaded only by [`Fmu::unload`] (see [`Fmu::load`]).
    _lib: std::mem::ManuallyDrop<Library>,
    dir: PathBuf,
}

impl Drop for Fmu {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unzip(path: &Path, dir: &Path) -> Result<(), HarnessError> {
    let file = std::fs::File::open(path).map_err(|source| HarnessError::Io { path: path.into(), source })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|source| HarnessError::Zip { path: path.into(), source })?;
    zip.extract(dir).map_err(|source| HarnessError::Zip { path: path.into(), source })
}

impl Fmu {
    /// Unzips `path` into a private temporary folder and loads its binary.
    pub fn load(path: &Path) -> Result<Self, HarnessError> {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fmu-harness-{}-{n}", std::process::id()));
        unzip(path, &dir)?;
        let xml_path = dir.join("modelDescription.xml");
        let xml = std::fs::read_to_string(&xml_path).map_err(|source| HarnessError::Io { path: xml_path, source })?;
        let md = model_description::from_str(&xml)
            .map_err(|e| HarnessError::Description { path: path.into(), message: e.to_string() })?;
        let id = md.co_simulation.as_ref().map(|c| c.model_identifier.clone()).unwrap_or_default();
        let so = dir.join("binaries/linux64").join(format!("{id}.so"));
        // SAFETY: loading a library runs its initialisers; our FMUs have none beyond Rust's.
        let lib = unsafe { Library::new(&so) }.map_err(|source| HarnessError::Load { path: so.clone(), source })?;
        let lookup = |name: &[u8]| {
            // SAFETY: only the address is read; `Api::resolve` types it.
            let p = unsafe { lib.get::<*mut c_void>(name) }?;
            std::ptr::NonNull::new(*p).ok_or(libloading::Error::DlSymUnknown)
        };
        // SAFETY: the symbols are FMI 2.0 functions with the table's signatures; the library
        // stays loaded while the table is used (see below).
        let api =
            unsafe { Api::resolve(lookup) }.map_err(|m| HarnessError::Load { path: so.clone(), source: m.error })?;
        if let Some(missing) = api.missing_optional().first() {
            return Err(HarnessError::Missing { path: so, symbol: missing });
        }
        // The library stays loaded until the process ends unless `unload` is called (most tests
        // keep their instances' FMU for the whole test).
        Ok(Self { md, api, _lib: std::mem::ManuallyDrop::new(lib), dir })
    }

    /// Unloads the library (`dlclose`) and removes the extraction: our FMUs free what they
    /// allocated for the process when unloaded (issue 30: ≈ 12–23 KB leaked per cycle before).
    pub fn unload(mut self) {
        // SAFETY: no instance borrows `self` any more (they borrow it), and the library is
        // dropped once: `_lib` is not touched again (Drop only removes the folder).
        unsafe { std::mem::ManuallyDrop::drop(&mut self._lib) };
    }

    /// Value reference of a variable by name.
    pub fn vr(&self, name: &str) -> u32 {
        self.md.variable(name).map_or(u32::MAX, |v| v.value_reference)
    }

    /// `file://` URI of the unzipped `resources/` folder.
    pub fn resource_uri(&self) -> String {
        format!("file://{}/resources/", self.dir.display())
    }

    /// Instantiates with this FMU's GUID.
    pub fn instantiate(&self, name: &str) -> Result<Instance<'_>, HarnessError> {
        self.instantiate_with(name, &self.md.guid.clone(), 1)
    }

    /// Instantiates with any GUID and fmuType (for negative tests).
    pub fn instantiate_with(&self, name: &str, guid: &str, fmu_type: i32) -> Result<Instance<'_>, HarnessError> {
        let log = Box::new(Mutex::new(Vec::new()));
        let callbacks = Box::new(Callbacks {
            logger: Some(log_message),
            allocate: None,
            free: None,
            step_finished: None,
            env: (&*log as *const Mutex<Vec<String>>).cast_mut().cast(),
        });
        let cname = CString::new(name).unwrap_or_default();
        let cguid = CString::new(guid).unwrap_or_default();
        let res = CString::new(self.resource_uri()).unwrap_or_default();
        // SAFETY: FMI 2.0 fmi2Instantiate with valid strings and a callback struct that outlives
        // the instance (both boxed in the returned Instance).
        let c = unsafe {
            (self.api.instantiate)(
                cname.as_ptr(),
                fmu_type,
                cguid.as_ptr(),
                res.as_ptr(),
                std::ptr::from_ref(&*callbacks).cast(),
                0,
                1,
            )
        };
        if c.is_null() {
            let lines = log.lock().map(|l| l.clone()).unwrap_or_default();
            return Err(HarnessError::Instantiate(lines));
        }
        Ok(Instance { fmu: self, c, log, _callbacks: callbacks, freed: false })
    }
}

unsafe extern "C" fn log_message(
    env: *mut c_void,
    name: *const c_char,
    status: c_int,
    cat: *const c_char,
    msg: *const c_char,
) {
    let s = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: the FMU passes NUL-terminated strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: env is the boxed Mutex set in instantiate_with, alive while the instance is.
    if let Some(log) = unsafe { env.cast::<Mutex<Vec<String>>>().as_ref() } {
        if let Ok(mut l) = log.lock() {
            l.push(format!("{} [{}] status {status}: {}", s(name), s(cat), s(msg)));
        }
    }
}

/// An `fmi2FMUstate` returned by the FMU (opaque).
#[derive(Debug)]
pub struct FmuState(pub *mut c_void);

impl FmuState {
    /// Whether the pointer is NULL (after fmi2FreeFMUstate).
    pub fn is_null(&self) -> bool {
        self.0.is_null()
    }
}

/// An instance, freed on drop.
pub struct Instance<'a> {
    /// Its FMU.
    pub fmu: &'a Fmu,
    /// The raw component.
    pub c: *mut c_void,
    log: Box<Mutex<Vec<String>>>,
    _callbacks: Box<Callbacks>,
    freed: bool,
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        if !self.freed {
            // SAFETY: c came from fmi2Instantiate and was not freed.
            unsafe { (self.fmu.api.free_instance)(self.c) };
        }
    }
}

#[allow(missing_docs)]
impl Instance<'_> {
    /// Messages logged so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
    /// The last message logged.
    pub fn last_log(&self) -> String {
        self.log().last().cloned().unwrap_or_default()
    }
    /// Frees the instance now (later frees are the test's own business).
    pub fn free(&mut self) {
        // SAFETY: see Drop; the FMU must tolerate a second free of the same pointer.
        unsafe { (self.fmu.api.free_instance)(self.c) };
        self.freed = true;
    }
    pub fn setup(&self, start: f64, stop: Option<f64>) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe {
            (self.fmu.api.setup_experiment)(self.c, 0, 0.0, start, c_int::from(stop.is_some()), stop.unwrap_or(0.0))
        }
    }
    pub fn enter_init(&self) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe { (self.fmu.api.enter_initialization_mode)(self.c) }
    }
    pub fn exit_init(&self) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe { (self.fmu.api.exit_initialization_mode)(self.c) }
    }
    /// setup + enter + exit, asserting fmi2OK.
    pub fn initialize(&self, start: f64) {
        assert_eq!(self.setup(start, None), status::OK, "{}", self.last_log());
        assert_eq!(self.enter_init(), status::OK, "{}", self.last_log());
        assert_eq!(self.exit_init(), status::OK, "{}", self.last_log());
    }
    pub fn do_step(&self, t: f64, h: f64) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe { (self.fmu.api.do_step)(self.c, t, h, 1) }
    }
    pub fn terminate(&self) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe { (self.fmu.api.terminate)(self.c) }
    }
    pub fn reset(&self) -> i32 {
        // SAFETY: FMI 2.0 call on a live instance.
        unsafe { (self.fmu.api.reset)(self.c) }
    }
    pub fn get_reals(&self, vr: &[u32]) -> (i32, Vec<f64>) {
        let mut out = vec![f64::NAN; vr.len()];
        // SAFETY: arrays of vr.len() elements.
        let s = unsafe { (self.fmu.api.get_real)(self.c, vr.as_ptr(), vr.len(), out.as_mut_ptr()) };
        (s, out)
    }
    /// Reals by name, asserting fmi2OK.
    pub fn get(&self, names: &[&str]) -> Vec<f64> {
        let vr: Vec<u32> = names.iter().map(|n| self.fmu.vr(n)).collect();
        let (s, v) = self.get_reals(&vr);
        assert_eq!(s, status::OK, "fmi2GetReal {names:?}: {}", self.last_log());
        v
    }
    pub fn set_reals(&self, vr: &[u32], values: &[f64]) -> i32 {
        // SAFETY: arrays of vr.len() elements (values may be shorter only in negative tests,
        // where the caller passes matching lengths).
        unsafe { (self.fmu.api.set_real)(self.c, vr.as_ptr(), vr.len().min(values.len()), values.as_ptr()) }
    }
    /// Sets reals by name, returning the status.
    pub fn set(&self, names: &[&str], values: &[f64]) -> i32 {
        let vr: Vec<u32> = names.iter().map(|n| self.fmu.vr(n)).collect();
        self.set_reals(&vr, values)
    }
    pub fn get_integers(&self, vr: &[u32]) -> (i32, Vec<i32>) {
        let mut out = vec![0; vr.len()];
        // SAFETY: arrays of vr.len() elements.
        let s = unsafe { (self.fmu.api.get_integer)(self.c, vr.as_ptr(), vr.len(), out.as_mut_ptr()) };
        (s, out)
    }
    pub fn set_integers(&self, vr: &[u32], values: &[i32]) -> i32 {
        // SAFETY: arrays of vr.len() elements.
        unsafe { (self.fmu.api.set_integer)(self.c, vr.as_ptr(), vr.len().min(values.len()), values.as_ptr()) }
    }
    pub fn set_input_derivatives(&self, vr: &[u32], order: &[i32], values: &[f64]) -> i32 {
        // SAFETY: arrays of vr.len() elements.
        unsafe {
            (self.fmu.api.set_real_input_derivatives)(self.c, vr.as_ptr(), vr.len(), order.as_ptr(), values.as_ptr())
        }
    }
    pub fn get_output_derivatives(&self, vr: &[u32], order: &[i32]) -> (i32, Vec<f64>) {
        let mut out = vec![f64::NAN; vr.len()];
        // SAFETY: arrays of vr.len() elements.
        let s = unsafe {
            (self.fmu.api.get_real_output_derivatives)(self.c, vr.as_ptr(), vr.len(), order.as_ptr(), out.as_mut_ptr())
        };
        (s, out)
    }
    /// fmi2GetFMUstate into a new state.
    pub fn get_state(&self) -> (i32, FmuState) {
        let mut s = std::ptr::null_mut();
        // SAFETY: FMI 2.0 call; `s` is NULL so a new state is allocated.
        let st = unsafe { (self.fmu.api.get_fmu_state)(self.c, &mut s) };
        (st, FmuState(s))
    }
    pub fn set_state(&self, s: &FmuState) -> i32 {
        // SAFETY: `s` came from an FMU (the FMU must reject a foreign one).
        unsafe { (self.fmu.api.set_fmu_state)(self.c, s.0) }
    }
    pub fn free_state(&self, s: &mut FmuState) -> i32 {
        // SAFETY: `s` came from this FMU.
        unsafe { (self.fmu.api.free_fmu_state)(self.c, &mut s.0) }
    }
    /// Serializes a state.
    pub fn serialize(&self, state: &FmuState) -> (i32, Vec<u8>) {
        let s = state.0;
        let mut size = 0usize;
        // SAFETY: FMI 2.0 calls with a state of this FMU and a buffer of `size` bytes.
        let st = unsafe { (self.fmu.api.serialized_fmu_state_size)(self.c, s, &mut size) };
        if st != status::OK {
            return (st, Vec::new());
        }
        let mut buf = vec![0u8; size];
        // SAFETY: as above.
        let st = unsafe { (self.fmu.api.serialize_fmu_state)(self.c, s, buf.as_mut_ptr().cast(), size) };
        (st, buf)
    }
    /// Deserializes into a new state.
    pub fn deserialize(&self, bytes: &[u8]) -> (i32, FmuState) {
        let mut s = std::ptr::null_mut();
        // SAFETY: buffer of bytes.len() bytes; `s` NULL.
        let st = unsafe { (self.fmu.api.deserialize_fmu_state)(self.c, bytes.as_ptr().cast(), bytes.len(), &mut s) };
        (st, FmuState(s))
    }
}
