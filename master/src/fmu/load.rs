//! [`Fmu`], a loaded FMU (FMI 2.0 or 3.0 Co-Simulation): the extracted archive, its model
//! description and its binary, which calls its own version's C API (`ffi.rs`, `ffi3.rs`).
//! [`Fmu::instantiate`] makes an [`Instance`] of the FMU's version.

use super::archive::Archive;
use super::instance::{Core, Fmi2Instance, Instance};
use super::instance3::{Fmi3Instance, Types3};
use super::{ffi, ffi3};
use crate::error::{MasterError, Result};
use crate::host::{FmuLog, LogLevel};
use model_description::{CoSimulation, ModelDescription, ScalarVariable};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The standard log categories (FMI 2.0 §2.2.4) enabled after instantiation when the FMU
/// declares them, so that it explains warnings and errors even with `loggingOn = false`.
const STATUS_CATEGORIES: &[&str] =
    &["logStatusWarning", "logStatusDiscard", "logStatusError", "logStatusFatal", "logStatusPending"];

/// The binary of a loaded FMU, by FMI version and interface: each calls its own version's C API.
/// A Model Exchange binary (driven by the master's solver, issue 43) is a variant to come here.
pub(crate) enum Binary {
    /// FMI 2.0 Co-Simulation.
    Fmi2(Arc<ffi::Binary>),
    /// FMI 3.0 Co-Simulation, with the type of every value reference.
    Fmi3(Arc<ffi3::Binary3>, Arc<Types3>),
}

/// A loaded FMU (FMI 2.0 or 3.0 Co-Simulation): the extracted archive, its model description
/// and its binary. Shared (`Arc`) by its instances: the library stays loaded and the folder
/// extracted while any instance lives.
pub struct Fmu {
    // Field order is drop order: the library is closed before the folder is removed.
    binary: Binary,
    /// Where the instances' messages go (the host's sink, [`crate::host::Host::log`]).
    log: Option<Arc<dyn FmuLog>>,
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

impl std::fmt::Debug for Fmu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fmu")
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

fn fmu_error(path: &Path, message: String) -> MasterError {
    MasterError::Fmu { path: path.to_path_buf(), message }
}

impl Fmu {
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

    /// [`Fmu::load`], the extraction registered with `host`'s cleanup while it exists and the
    /// instances' messages handed to `host`'s log sink.
    pub fn load_in(path: &Path, host: &crate::host::Host) -> Result<Arc<Self>> {
        Self::from_archive(path, Archive::extract_in(path, host)?, host.log.clone())
    }

    /// [`Fmu::load`] of an FMU the master extracted into `dir` already (a worker process of
    /// `cosim run --isolate`; the folder stays the master's); messages go to `log`.
    pub fn load_extracted(path: &Path, dir: &Path, log: Option<Arc<dyn FmuLog>>) -> Result<Arc<Self>> {
        Self::from_archive(path, Archive::extracted_by_master(path, dir)?, log)
    }

    fn from_archive(path: &Path, archive: Archive, log: Option<Arc<dyn FmuLog>>) -> Result<Arc<Self>> {
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
                let types = Types3::new(&md, x);
                let binary = ffi3::Binary3::load(&so).map_err(|m| fmu_error(path, format!("{so_rel}: {m}")))?;
                let version = binary.version();
                if !version.starts_with("3.") {
                    return Err(fmu_error(
                        path,
                        format!("{so_rel}: fmi3GetVersion() returned \"{version}\", not \"3.0\": the binary is not an FMI 3.0 binary"),
                    ));
                }
                let binary = Binary::Fmi3(Arc::new(binary), Arc::new(types));
                return Ok(Self::assemble(path, archive, md, cs, binary, log));
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
        Ok(Self::assemble(path, archive, md, cs, Binary::Fmi2(Arc::new(binary)), log))
    }

    fn assemble(
        path: &Path,
        archive: Archive,
        md: ModelDescription,
        cs: CoSimulation,
        binary: Binary,
        log: Option<Arc<dyn FmuLog>>,
    ) -> Arc<Self> {
        let mut by_name = HashMap::with_capacity(md.model_variables.len());
        for (i, v) in md.model_variables.iter().enumerate() {
            by_name.entry(v.name.clone()).or_insert(i);
        }
        Arc::new(Self {
            binary,
            log,
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

    /// Instantiates the FMU as a Co-Simulation instance named `name`, with the description's
    /// GUID (instantiation token), of the FMU's version. Several instances of one FMU may live at
    /// once (unless it declares `canBeInstantiatedOnlyOncePerProcess`). Instantiation returning
    /// NULL gives [`MasterError::Fmu`] with the FMU's last log message (e.g. why it rejected the
    /// GUID).
    pub fn instantiate(self: &Arc<Self>, name: &str) -> Result<Instance> {
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
        let all = self.log.as_ref().is_some_and(|l| l.level() == LogLevel::All);
        let log = self.log.clone();
        let failed = |e: ffi::InstantiateError, function: &str| match e {
            ffi::InstantiateError::Nul(what) => {
                fmu_error(&self.path, format!("cannot instantiate {name:?}: the {what} contains a NUL character"))
            }
            ffi::InstantiateError::Null(last) => {
                let why = if last.is_empty() {
                    "the FMU logged no message".to_owned()
                } else {
                    format!("the FMU's last message: {last}")
                };
                fmu_error(&self.path, format!("{function}(\"{name}\") returned NULL; {why}"))
            }
        };
        let categories: Vec<&str> = if all {
            Vec::new()
        } else {
            STATUS_CATEGORIES.iter().copied().filter(|c| self.md.log_categories.iter().any(|d| d.name == *c)).collect()
        };
        let instance = match &self.binary {
            Binary::Fmi2(binary) => {
                let mut raw = ffi::Instance::new(binary, name, &self.md.guid, &self.resource_uri, all, log)
                    .map_err(|e| failed(e, "fmi2Instantiate"))?;
                if !categories.is_empty() {
                    // Best effort: an FMU that refuses still works, it just explains less.
                    let _ = raw.set_debug_logging(true, &categories);
                }
                self.live.fetch_add(1, Ordering::SeqCst);
                Instance::Fmi2(Fmi2Instance::new(raw, self.core(name)))
            }
            Binary::Fmi3(binary, types) => {
                let mut raw = ffi3::Instance3::new(binary, name, &self.md.guid, &self.resource_uri, all, log)
                    .map_err(|e| failed(e, "fmi3InstantiateCoSimulation"))?;
                if !categories.is_empty() {
                    let _ = raw.set_debug_logging(true, &categories);
                }
                self.live.fetch_add(1, Ordering::SeqCst);
                Instance::Fmi3(Fmi3Instance::new(raw, Arc::clone(types), self.core(name)))
            }
        };
        Ok(instance)
    }

    /// The common state of a new instance (counted live from now on).
    fn core(self: &Arc<Self>, name: &str) -> Core {
        Core::new(Live(Arc::clone(self)), name, self.cs.can_interpolate_inputs)
    }

    /// Model Exchange: the place of an instance driven by the master's solver (issue 43); not
    /// yet, refused naming the FMU.
    pub fn instantiate_model_exchange(self: &Arc<Self>, name: &str) -> Result<Instance> {
        Err(fmu_error(
            &self.path,
            format!(
                "cannot instantiate {name:?} for Model Exchange: not yet (cosim runs Co-Simulation FMUs; issue 43)"
            ),
        ))
    }

    /// The FMI version of the binary.
    pub fn version(&self) -> super::call::Version {
        match self.binary {
            Binary::Fmi2(_) => super::call::Version::Fmi2,
            Binary::Fmi3(..) => super::call::Version::Fmi3,
        }
    }

    /// The `maxSize` of the Binary variables that declare one.
    pub(crate) fn binary_max(&self) -> &super::binary::MaxSizes {
        &self.binary_max
    }

    /// The loaded FMI 2.0 binary (`cosim check` calls it directly); `None` for FMI 3.0.
    pub(crate) fn binary(&self) -> Option<&Arc<ffi::Binary>> {
        match &self.binary {
            Binary::Fmi2(b) => Some(b),
            Binary::Fmi3(..) => None,
        }
    }

    /// The loaded FMI 3.0 binary (`cosim check` calls it directly); `None` for FMI 2.0.
    pub(crate) fn binary3(&self) -> Option<&Arc<ffi3::Binary3>> {
        match &self.binary {
            Binary::Fmi2(_) => None,
            Binary::Fmi3(b, _) => Some(b),
        }
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
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Fmu>();
};

/// A reference to the FMU that counts as a live instance until dropped.
pub(crate) struct Live(pub(crate) Arc<Fmu>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
    }
}
