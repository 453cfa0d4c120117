//! [`Fmu`], a loaded FMU (FMI 2.0 or 3.0, Co-Simulation or Model Exchange): the extracted
//! archive, its model description and its binary, which calls its own version's C API (`ffi.rs`,
//! `ffi3.rs`).
//! [`Fmu::instantiate`] makes an [`Instance`] of the FMU's version.

use super::archive::Archive;
use super::instance::{Core, Fmi2Instance, Instance};
use super::instance3::{Fmi3Instance, Types3};
use super::me::MeInstance;
use super::{ffi, ffi3};
use crate::error::{MasterError, Result};
pub use crate::host::Interface;
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

/// The binary of a loaded FMU, by FMI version: each calls its own version's C API (loaded for
/// Model Exchange, it also holds the version's ME functions).
pub(crate) enum Binary {
    /// FMI 2.0 Co-Simulation.
    Fmi2(Arc<ffi::Binary>),
    /// FMI 3.0 Co-Simulation, with the type of every value reference.
    Fmi3(Arc<ffi3::Binary3>, Arc<Types3>),
}

/// A loaded FMU (FMI 2.0 or 3.0, Co-Simulation or Model Exchange): the extracted archive, its
/// model description and its binary. Shared (`Arc`) by its instances: the library stays loaded and the folder
/// extracted while any instance lives.
pub struct Fmu {
    // Field order is drop order: the library is closed before the folder is removed.
    binary: Binary,
    /// Where the instances' messages go (the host's sink, [`crate::host::Host::log`]).
    log: Option<Arc<dyn FmuLog>>,
    md: ModelDescription,
    cs: CoSimulation,
    /// The interface loaded: what [`Fmu::instantiate`] makes.
    interface: Interface,
    /// The integrator of Model Exchange instances.
    solver: crate::ode::Options,
    by_name: HashMap<String, usize>,
    path: PathBuf,
    resource_uri: String,
    live: AtomicUsize,
    /// `maxSize` of the Binary variables that declare one (checked before fmi3SetBinary).
    binary_max: super::binary::MaxSizes,
    /// FMI 3.0: the structural parameters, with the values this FMU's arrays are sized by.
    structural: Vec<model_description::Structural>,
    /// FMI 3.0: why these structural parameter values cannot be run (an array too large…: the
    /// capability checks of stage `Configure`); instantiation refuses.
    configuration: Option<String>,
    /// Shared by the FMU configured with other structural parameters ([`Fmu::configured`]).
    archive: Arc<Archive>,
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

/// Reads an FMU's `modelDescription.xml`, FMI 2.0 or 3.0 (with the 3.0 extras); a description
/// that uses what cosim does not support (the checks of [`super::capabilities::CHECKS`] of stage
/// `Load`: FMI version, interface, modelIdentifier, clocks, scheduled execution…) is refused here,
/// naming each feature and its line.
pub(crate) fn read_description(path: &Path, xml: &str) -> Result<(ModelDescription, Option<model_description::Fmi3>)> {
    let (md, fmi3) = parse_description(path, xml)?;
    let plan = super::capabilities::Plan::of(&md, fmi3.as_ref());
    if let Some(why) = plan.refusal_text(super::capabilities::Stage::Load) {
        return Err(fmu_error(path, why));
    }
    Ok((md, fmi3))
}

/// A binary that needs the Python library loaded first (pythonfmu/pythonfmu3 FMUs: their
/// `needsExecutionTool` is Python): the hint how to give it, after the loader's message.
fn python_hint(message: &str) -> &'static str {
    if message.contains("undefined symbol: _Py") || message.contains("undefined symbol: Py") {
        " (the FMU needs the Python library, needsExecutionTool: run it from Python with the cosim \
         package, or load libpython first, e.g. LD_PRELOAD=$(python3 -c 'import sysconfig, os; \
         print(os.path.join(sysconfig.get_config_var(\"LIBDIR\"), sysconfig.get_config_var(\"LDLIBRARY\")))') \
         cosim run …)"
    } else {
        ""
    }
}

/// [`read_description`] without the capability checks (`cosim info` reports them).
pub(crate) fn parse_description(path: &Path, xml: &str) -> Result<(ModelDescription, Option<model_description::Fmi3>)> {
    let (mut md, mut fmi3) = match model_description::from_str(xml) {
        Ok(md) => (md, None),
        Err(model_description::ReadError::UnsupportedVersion { version, .. }) if version.starts_with("3.") => {
            let (md, x) = model_description::from_str3(xml)
                .map_err(|e| fmu_error(path, format!("modelDescription.xml (FMI 3.0): {e}")))?;
            (md, Some(x))
        }
        Err(e) => return Err(fmu_error(path, format!("modelDescription.xml: {e}"))),
    };
    if let Some(x) = &mut fmi3 {
        super::scheduled::check_clocks(x, !x.has_co_simulation && x.scheduled_execution.is_some())
            .map_err(|why| fmu_error(path, format!("modelDescription.xml: {why}")))?;
        if let Some(id) = x.scheduled_execution.clone().filter(|_| md.co_simulation.is_none()) {
            // Scheduled Execution only: it runs its clocks and clocked variables (scheduled.rs)
            // as one Co-Simulation participant of the run.
            x.unsupported.retain(|u| {
                !["scheduled execution:", "clocks:", "clocked variables:"].iter().any(|p| u.starts_with(p))
            });
            md.co_simulation = Some(CoSimulation {
                model_identifier: id,
                can_handle_variable_communication_step_size: true,
                ..CoSimulation::default()
            });
        }
        if x.has_co_simulation {
            // Co-Simulation is used where the FMU offers both.
            x.unsupported.retain(|u| !u.starts_with("scheduled execution:"));
            if x.has_event_mode {
                // Clocks in Co-Simulation run in event mode (clocks.rs).
                x.unsupported.retain(|u| !["clocks:", "clocked variables:"].iter().any(|p| u.starts_with(p)));
            }
        }
        // What is still unsupported is refused by the capability checks (`read_description`).
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
        let archive = Archive::extract_in(path, host)?;
        Self::from_archive(path, archive, host.log.clone(), host.interface, host.solver.clone())
    }

    /// [`Fmu::load`] of an FMU the master extracted into `dir` already (a worker process of
    /// `cosim run --isolate`; the folder stays the master's); messages go to `log`.
    pub fn load_extracted(path: &Path, dir: &Path, log: Option<Arc<dyn FmuLog>>) -> Result<Arc<Self>> {
        Self::load_extracted_as(path, dir, log, None, None)
    }

    /// [`Fmu::load_extracted`] for `interface` (as [`crate::host::Host::interface`]), its Model
    /// Exchange instances integrated with `solver`.
    pub fn load_extracted_as(
        path: &Path,
        dir: &Path,
        log: Option<Arc<dyn FmuLog>>,
        interface: Option<Interface>,
        solver: Option<crate::ode::Options>,
    ) -> Result<Arc<Self>> {
        Self::from_archive(path, Archive::extracted_by_master(path, dir)?, log, interface, solver)
    }

    fn from_archive(
        path: &Path,
        archive: Archive,
        log: Option<Arc<dyn FmuLog>>,
        interface: Option<Interface>,
        solver: Option<crate::ode::Options>,
    ) -> Result<Arc<Self>> {
        let xml = archive.model_description()?;
        let (md, fmi3) = read_description(path, &xml)?;
        // The description's refusals are `read_description`'s (capabilities.rs); here the
        // interface asked for is matched with those the FMU declares.
        let used = Interface::used(interface, md.co_simulation.is_some(), md.model_exchange.is_some());
        let refusal = match (used, &md.co_simulation, &md.model_exchange) {
            (Some(_), _, _) => String::new(),
            (None, None, Some(me)) => format!(
                "the FMU supports Model Exchange only (modelIdentifier \"{}\"; modelDescription.xml has no \
                 <CoSimulation> element): run it with --interface me",
                me.model_identifier
            ),
            (None, Some(_), None) => "the FMU supports Co-Simulation only (modelDescription.xml has no \
                                      <ModelExchange> element): run it with --interface cs"
                .into(),
            _ => "modelDescription.xml has neither <CoSimulation> nor <ModelExchange>: cosim runs Co-Simulation \
                  and Model Exchange FMUs"
                .into(),
        };
        let Some(interface) = used else { return Err(fmu_error(path, refusal)) };
        // A Model Exchange FMU is a participant with the capabilities the master's integration
        // gives it: any step size, inputs extrapolated; FMU states as its <ModelExchange> element
        // says (the Co-Simulation side's flags are another binary's, or the same binary's other
        // interface: not this one's).
        let cs = match (interface, &md.co_simulation, &md.model_exchange) {
            (Interface::CoSimulation, Some(cs), _) => cs.clone(),
            (_, _, Some(me)) => CoSimulation {
                model_identifier: me.model_identifier.clone(),
                can_handle_variable_communication_step_size: true,
                can_interpolate_inputs: true,
                max_output_derivative_order: 0,
                can_get_and_set_fmu_state: me.can_get_and_set_fmu_state,
                can_serialize_fmu_state: me.can_serialize_fmu_state,
                ..CoSimulation::default()
            },
            _ => return Err(fmu_error(path, "no interface".into())),
        };
        let model_exchange = interface == Interface::ModelExchange;
        let id = &cs.model_identifier;
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
                let mut types = Types3::new(&md, x);
                if model_exchange {
                    // The Co-Simulation side's event mode, early return and clocks are not instantiated.
                    types.modes = ffi3::Modes::default();
                    types.cs_clocks = false;
                }
                let binary = ffi3::Binary3::load(&so, model_exchange)
                    .map_err(|m| fmu_error(path, format!("{so_rel}: {m}{}", python_hint(&m))))?;
                let version = binary.version();
                if !version.starts_with("3.") {
                    return Err(fmu_error(
                        path,
                        format!("{so_rel}: fmi3GetVersion() returned \"{version}\", not \"3.0\": the binary is not an FMI 3.0 binary"),
                    ));
                }
                let binary = Binary::Fmi3(Arc::new(binary), Arc::new(types));
                let fmu = Self::assemble(path, Arc::new(archive), md, cs, binary, log, (interface, solver));
                return Ok(fmu.with_structural(x));
            }
            None => ffi::Binary::load(&so, model_exchange).map_err(|m| fmu_error(path, format!("{so_rel}: {m}")))?,
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
        let binary = Binary::Fmi2(Arc::new(binary));
        Ok(Arc::new(Self::assemble(path, Arc::new(archive), md, cs, binary, log, (interface, solver))))
    }

    fn assemble(
        path: &Path,
        archive: Arc<Archive>,
        md: ModelDescription,
        cs: CoSimulation,
        binary: Binary,
        log: Option<Arc<dyn FmuLog>>,
        (interface, solver): (Interface, Option<crate::ode::Options>),
    ) -> Self {
        let mut by_name = HashMap::with_capacity(md.model_variables.len());
        for (i, v) in md.model_variables.iter().enumerate() {
            by_name.entry(v.name.clone()).or_insert(i);
        }
        Self {
            binary,
            log,
            structural: Vec::new(),
            configuration: None,
            binary_max: super::binary::max_sizes(&md),
            by_name,
            path: path.to_path_buf(),
            resource_uri: archive.resources_uri(),
            live: AtomicUsize::new(0),
            md,
            cs,
            interface,
            solver: solver.unwrap_or_default(),
            archive,
        }
    }

    /// `self` with the structural parameters of `x` (its reading of the description).
    fn with_structural(mut self, x: &model_description::Fmi3) -> Arc<Self> {
        self.structural = x.structural.clone();
        let plan = super::capabilities::Plan::of(&self.md, Some(x));
        self.configuration = plan.refusal_text(super::capabilities::Stage::Configure);
        Arc::new(self)
    }

    /// FMI 3.0: the structural parameters, with the values this FMU is configured with (its
    /// start values, unless [`Fmu::configured`]).
    pub fn structural(&self) -> &[model_description::Structural] {
        &self.structural
    }

    /// This FMU with the structural parameters `values` (by name) set over their start values:
    /// the description read again with the arrays sized by them (each value checked against its
    /// parameter's type and bounds and each array against the element limit first: an error
    /// names the variable, the value and the bounds); its instances are configured with these
    /// values in configuration mode. Shares the extracted folder and the library with `self`.
    pub fn configured(self: &Arc<Self>, values: &[(&str, i128)]) -> Result<Arc<Self>> {
        let Binary::Fmi3(binary, _) = &self.binary else {
            return Err(fmu_error(&self.path, "an FMI 2.0 FMU has no structural parameters".into()));
        };
        let xml = self.archive.model_description()?;
        let (md, x) = model_description::from_str3_configured(&xml, values)
            .map_err(|m| fmu_error(&self.path, format!("structural parameters: {m}")))?;
        let types = Types3::new(&md, &x);
        let binary = Binary::Fmi3(Arc::clone(binary), Arc::new(types));
        let cs = self.cs.clone();
        let how = (self.interface, Some(self.solver.clone()));
        let fmu = Self::assemble(&self.path, Arc::clone(&self.archive), md, cs, binary, self.log.clone(), how);
        Ok(fmu.with_structural(&x))
    }

    /// Instantiates the FMU as a Co-Simulation instance named `name`, with the description's
    /// GUID (instantiation token), of the FMU's version. Several instances of one FMU may live at
    /// once (unless it declares `canBeInstantiatedOnlyOncePerProcess`). Instantiation returning
    /// NULL gives [`MasterError::Fmu`] with the FMU's last log message (e.g. why it rejected the
    /// GUID).
    pub fn instantiate(self: &Arc<Self>, name: &str) -> Result<Instance> {
        let cs = &self.cs;
        if let Some(why) = &self.configuration {
            return Err(fmu_error(&self.path, format!("cannot instantiate \"{name}\": {why}")));
        }
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
                let instance = Fmi2Instance::new(raw, self.core(name));
                if self.interface == Interface::ModelExchange {
                    Instance::Me2(Box::new(MeInstance::new(instance, self.solver.clone())))
                } else {
                    Instance::Fmi2(instance)
                }
            }
            Binary::Fmi3(binary, types) => {
                let model_exchange = self.interface == Interface::ModelExchange;
                let mut raw = if model_exchange {
                    ffi3::Instance3::new_model_exchange(binary, name, &self.md.guid, &self.resource_uri, all, log)
                        .map_err(|e| failed(e, "fmi3InstantiateModelExchange"))?
                } else if types.modes.scheduled {
                    ffi3::Instance3::new_scheduled(binary, name, &self.md.guid, &self.resource_uri, all, log)
                        .map_err(|e| failed(e, "fmi3InstantiateScheduledExecution"))?
                } else {
                    ffi3::Instance3::new(binary, name, &self.md.guid, &self.resource_uri, all, log, types.modes)
                        .map_err(|e| failed(e, "fmi3InstantiateCoSimulation"))?
                };
                if !categories.is_empty() {
                    let _ = raw.set_debug_logging(true, &categories);
                }
                self.live.fetch_add(1, Ordering::SeqCst);
                let mut instance = Fmi3Instance::new(raw, Arc::clone(types), self.core(name));
                instance.configure()?;
                if model_exchange {
                    Instance::Me3(Box::new(MeInstance::new(instance, self.solver.clone())))
                } else {
                    Instance::Fmi3(instance)
                }
            }
        };
        Ok(instance)
    }

    /// The common state of a new instance (counted live from now on).
    fn core(self: &Arc<Self>, name: &str) -> Core {
        Core::new(Live(Arc::clone(self)), name, self.cs.can_interpolate_inputs)
    }

    /// The interface this FMU was loaded for: what [`Fmu::instantiate`] makes (a Model Exchange
    /// instance is an [`Instance::Me2`] or [`Instance::Me3`], integrated by the master).
    pub fn interface(&self) -> Interface {
        self.interface
    }

    /// The integrator options of its Model Exchange instances.
    pub fn solver(&self) -> &crate::ode::Options {
        &self.solver
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

    /// FMI 3.0: the `<Clock>` variables (clock connections of a system join them); none for 2.0.
    pub fn clocks(&self) -> &[model_description::Clock3] {
        match &self.binary {
            Binary::Fmi2(_) => &[],
            Binary::Fmi3(_, types) => &types.clocks,
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
