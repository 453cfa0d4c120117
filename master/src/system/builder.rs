//! [`SystemBuilder`]: a system put together in code, the one input of validation. The TOML
//! reader ([`SystemBuilder::read`]) fills the same builder, so both go through the same checks
//! ([`SystemBuilder::build`]), and every error names the key the TOML file would use
//! (`connections[2].to`, `instances.m1.start.damping`, …).

use super::schema::{
    BondDraft, ConnectionDraft, ExtrapolationSpec, InputDraft, InstanceDraft, Outputs, PortDraft, SystemFile, Variables,
};
use super::settings::{EccoSettings, Settings};
use super::{AlgorithmKind, CorrectionLaw, EccoParams, Exchange, Parallel, StepControlKind};
use crate::error::MasterError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A co-simulation system put together in code (or read from TOML, see [`SystemBuilder::read`]).
/// Nothing is checked until [`SystemBuilder::build`], which validates everything against the
/// FMUs' model descriptions exactly as for a system file.
///
/// ```no_run
/// use master::system::{PortDraft, SystemBuilder};
/// # fn main() -> master::Result<()> {
/// let mut b = SystemBuilder::new();
/// b.stop(10.0).step(1e-3).extrapolation(1);
/// b.instance("m1", "target/fmu/oscillator-fd-m1.fmu").start("damping", "case1");
/// b.instance("m2", "target/fmu/oscillator-fd-m2.fmu").start("damping", "case1");
/// b.connect("m2.x", "m1.xi");
/// b.connect("m2.v", "m1.xi_dot").extrapolation(2);
/// b.connect("m1.F", "m2.F");
/// b.bond("spring", PortDraft::new("m1", "F", "xi_dot").sign(-1.0), PortDraft::new("m2", "F", "v"));
/// b.outputs(["m1.x", "m2.x"]);
/// let mut fmus = master::fmu::FmuCache::default();
/// let system = b.load(&mut fmus)?; // loads each FMU once and validates
/// let mut run = master::Execution::new(system, &fmus)?;
/// run.run_until(1.0)?;
/// println!("x1(1 s) = {}", run.value("m1.x")?);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SystemBuilder {
    pub(crate) path: PathBuf,
    pub(crate) settings: Settings,
    pub(crate) instances: BTreeMap<String, InstanceDraft>,
    pub(crate) connections: Vec<ConnectionDraft>,
    pub(crate) inputs: Vec<InputDraft>,
    pub(crate) bonds: Vec<BondDraft>,
    /// `None`: every output of every instance.
    pub(crate) outputs: Option<Vec<String>>,
    /// Per-bond settings given in code for a bond name no bond has (the key, e.g.
    /// `bonds.x.energy_correction`): refused when built.
    pub(crate) unknown_bonds: Vec<String>,
    /// `[tune]` of a system file, kept for `cosim tune`.
    pub(crate) tune: Option<super::TuneTable>,
    /// `[live]` of a system file: inputs and outputs served while the run goes.
    pub live: Option<crate::live::LiveSpec>,
    /// The system file's text, when read from one: errors naming a key name its line.
    pub(crate) text: Option<std::sync::Arc<str>>,
}

impl Default for SystemBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SystemBuilder {
    /// An empty system; messages name it `<builder>` and FMU paths are taken as given.
    pub fn new() -> Self {
        Self {
            path: PathBuf::from("<builder>"),
            settings: Settings::default(),
            instances: BTreeMap::new(),
            connections: Vec::new(),
            inputs: Vec::new(),
            bonds: Vec::new(),
            outputs: None,
            unknown_bonds: Vec::new(),
            tune: None,
            live: None,
            text: None,
        }
    }

    /// Names the source in messages; relative FMU paths given afterwards resolve against its
    /// folder (as in a system file).
    pub fn source(&mut self, path: &Path) -> &mut Self {
        self.path = path.to_path_buf();
        self
    }

    /// The source named in an error at `key`: `x.toml:LINE` when the text read has the key (or
    /// the table it is in), else the source alone.
    pub(crate) fn at(&self, key: &str) -> PathBuf {
        match self.text.as_deref().and_then(|text| super::schema::key_line(text, key)) {
            Some(line) => format!("{}:{line}", self.path.display()).into(),
            None => self.path.clone(),
        }
    }

    /// The source named in messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Start time (s, default 0).
    pub fn start(&mut self, t: f64) -> &mut Self {
        self.settings.start = Some(t);
        self
    }
    /// Stop time (s).
    pub fn stop(&mut self, t: f64) -> &mut Self {
        self.settings.stop = Some(t);
        self
    }
    /// Communication step H (s).
    pub fn step(&mut self, h: f64) -> &mut Self {
        self.settings.step = Some(h);
        self
    }
    /// The coupling scheme (default Jacobi).
    pub fn algorithm(&mut self, a: AlgorithmKind) -> &mut Self {
        self.settings.algorithm = Some(a);
        self
    }
    /// Gauss-Seidel order (every instance once; default: from the connection graph).
    pub fn order<S: Into<String>>(&mut self, names: impl IntoIterator<Item = S>) -> &mut Self {
        self.settings.order = Some(names.into_iter().map(Into::into).collect());
        self
    }
    /// Default extrapolation order of the connections (default 0).
    pub fn extrapolation(&mut self, m: usize) -> &mut Self {
        self.settings.extrapolation = Some(ExtrapolationSpec::Order(m));
        self
    }
    /// Jacobi worker threads (default auto).
    pub fn parallel(&mut self, p: Parallel) -> &mut Self {
        self.settings.parallel = Some(p);
        self
    }
    /// How the inputs at t_n are taken from the outputs (default [`Exchange::Ordered`];
    /// [`Exchange::Explicit`]: the papers' explicit Jacobi).
    pub fn exchange(&mut self, e: Exchange) -> &mut Self {
        self.settings.exchange = Some(e);
        self
    }
    /// Record every k-th communication point (default 1).
    pub fn record_every(&mut self, k: u64) -> &mut Self {
        self.settings.record_every = Some(k);
        self
    }
    /// Run every instance in its own worker process.
    pub fn isolate(&mut self, on: bool) -> &mut Self {
        self.settings.isolate = Some(on);
        self
    }
    /// Isolated instances: a worker whose call has not returned after this many seconds is
    /// killed as hung and the run ends with a message (default 60 s).
    pub fn worker_timeout(&mut self, seconds: f64) -> &mut Self {
        self.settings.worker_timeout = Some(seconds);
        self
    }
    /// Stop when a bond's Σ|δE| exceeds this (J); `None`: no bound.
    pub fn max_residual_energy(&mut self, e: Option<f64>) -> &mut Self {
        self.settings.max_residual_energy = e;
        self
    }
    /// Iterative coupling: at most this many passes per step (1: non-iterative).
    pub fn iterations(&mut self, n: u32) -> &mut Self {
        self.settings.iterations = Some(n);
        self
    }
    /// Convergence tolerance of the iterative coupling (relative, default 1e-9).
    pub fn iteration_tolerance(&mut self, tol: f64) -> &mut Self {
        self.settings.iteration_tolerance = Some(tol);
        self
    }

    /// How the communication step is chosen (default fixed).
    pub fn step_control(&mut self, k: StepControlKind) -> &mut Self {
        self.settings.step_control = Some(k);
        self
    }
    /// ECCO's parameters (all of them; `[simulation.ecco]` may give some).
    pub fn ecco(&mut self, p: EccoParams) -> &mut Self {
        self.settings.ecco = EccoSettings {
            rtol: Some(p.rtol),
            atol: Some(p.atol),
            safety: Some(p.safety),
            p_gain: Some(p.p_gain),
            i_gain: Some(p.i_gain),
            h_min: (p.h_min > 0.0).then_some(p.h_min),
            h_max: p.h_max.is_finite().then_some(p.h_max),
            min_rate: Some(p.min_rate),
            max_rate: Some(p.max_rate),
        };
        self
    }
    /// Energy correction on every bond (default off; a bond's own setting wins).
    pub fn energy_correction(&mut self, on: bool) -> &mut Self {
        self.settings.energy_correction = Some(on);
        self
    }
    /// The bond `name` as given (its ports and own settings).
    pub fn bond_mut(&mut self, name: &str) -> Option<&mut BondDraft> {
        self.bonds.iter_mut().find(|b| b.name == name)
    }

    /// Energy correction of one bond (by name), over the system's setting.
    pub fn bond_energy_correction(&mut self, bond: &str, on: bool) -> &mut Self {
        match self.bond_mut(bond) {
            Some(b) => b.energy_correction = Some(on),
            None => self.unknown_bonds.push(format!("bonds.{bond}.energy_correction")),
        }
        self
    }
    /// Energy correction gain α (default 1) and flow floor f_ε (default 0).
    pub fn energy_correction_law(&mut self, gain: f64, flow_floor: f64) -> &mut Self {
        self.settings.energy_correction_gain = Some(gain);
        self.settings.energy_correction_flow = Some(flow_floor);
        self
    }
    /// Which energy correction law every bond uses (default [`CorrectionLaw::Input`]).
    pub fn energy_correction_kind(&mut self, law: CorrectionLaw) -> &mut Self {
        self.settings.energy_correction_law = Some(law);
        self
    }
    /// One bond's own correction law, gain α and floor (`None`: the system's).
    pub fn bond_correction_law(
        &mut self,
        bond: &str,
        law: Option<CorrectionLaw>,
        gain: Option<f64>,
        flow_floor: Option<f64>,
    ) -> &mut Self {
        match self.bond_mut(bond) {
            Some(b) => {
                (b.energy_correction_law, b.energy_correction_gain, b.energy_correction_flow) = (law, gain, flow_floor)
            }
            None => self.unknown_bonds.push(format!("bonds.{bond}.energy_correction_law")),
        }
        self
    }

    /// Adds (or replaces) an instance of the FMU at `fmu` (relative paths: against the source's
    /// folder); the returned draft takes its step and start values.
    pub fn instance(&mut self, name: &str, fmu: impl AsRef<Path>) -> &mut InstanceDraft {
        let fmu = self.path.parent().map(|d| d.join(fmu.as_ref())).unwrap_or_else(|| fmu.as_ref().to_path_buf());
        let d = self.instances.entry(name.to_owned()).or_default();
        d.fmu = fmu;
        d
    }

    /// The instance `name`, to change its start values or step.
    pub fn instance_mut(&mut self, name: &str) -> Option<&mut InstanceDraft> {
        self.instances.get_mut(name)
    }

    /// Connects output `from` to input `to` (both `instance.variable`).
    pub fn connect(&mut self, from: &str, to: &str) -> &mut ConnectionDraft {
        self.connections.push(ConnectionDraft { from: from.to_owned(), to: to.to_owned(), ..Default::default() });
        let last = self.connections.len() - 1;
        &mut self.connections[last]
    }

    /// The connections, to change their extrapolation.
    pub fn connections_mut(&mut self) -> &mut [ConnectionDraft] {
        &mut self.connections
    }

    /// Drives input `to` from a time table (steps; `.linear()` for linear interpolation).
    pub fn input(&mut self, to: &str, times: Vec<f64>, values: Vec<f64>) -> &mut InputDraft {
        self.inputs.push(InputDraft { to: to.to_owned(), times, values, ..InputDraft::default() });
        let last = self.inputs.len() - 1;
        &mut self.inputs[last]
    }

    /// Drives inputs from the CSV file at `path` (relative: against the source's folder), every
    /// column named `instance.variable` of an input unless `.column(…)` picks them.
    pub fn input_file(&mut self, path: impl AsRef<Path>) -> &mut InputDraft {
        let file = self.path.parent().map(|d| d.join(path.as_ref())).unwrap_or_else(|| path.as_ref().to_path_buf());
        self.inputs.push(InputDraft::from_file(file));
        let last = self.inputs.len() - 1;
        &mut self.inputs[last]
    }

    /// The time tables (`[[inputs]]`).
    pub fn inputs(&self) -> &[InputDraft] {
        &self.inputs
    }

    /// Removes the time tables whose input `keep` refuses.
    pub fn retain_inputs(&mut self, mut keep: impl FnMut(&InputDraft) -> bool) -> &mut Self {
        self.inputs.retain(|i| keep(i));
        self
    }

    /// A power bond between two ports.
    pub fn bond(&mut self, name: &str, a: PortDraft, b: PortDraft) -> &mut Self {
        self.bonds.push(BondDraft::new(name, a, b));
        self
    }

    /// Records these variables (`instance.variable`; default: every output of every instance).
    pub fn outputs<S: Into<String>>(&mut self, names: impl IntoIterator<Item = S>) -> &mut Self {
        self.outputs = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Records one more variable (`instance.variable`) after those listed (when every output is
    /// recorded, an output is recorded already).
    pub fn record(&mut self, name: &str) -> &mut Self {
        if let Some(list) = &mut self.outputs {
            list.push(name.to_owned());
        }
        self
    }

    /// An error loading instance `name`'s FMU, said with the system file and its key
    /// (`x.toml: instances.a.fmu: y.fmu: …`): the FMU path alone does not say which file or
    /// instance asked for it. Unchanged when the builder is the FMU itself (`cosim run X.fmu`).
    pub fn fmu_error(&self, name: &str, e: MasterError) -> MasterError {
        let fmu = self.instances.get(name).map(|i| i.fmu.as_path());
        if fmu == Some(self.path.as_path()) || matches!(e, MasterError::System { .. }) {
            return e;
        }
        // A path that names no file: the nearest FMU of its folder, if one is close.
        let hint = fmu.filter(|f| !f.exists()).map(nearest_fmu).unwrap_or_default();
        let key = format!("instances.{name}.fmu");
        MasterError::System { path: self.at(&key), key, message: format!("{e}{hint}") }
    }

    /// Instance names and FMU paths, sorted by name (the order of the instances in the
    /// [`super::System`] and of the model descriptions [`SystemBuilder::build`] takes).
    pub fn fmus(&self) -> Vec<(String, PathBuf)> {
        self.instances.iter().map(|(n, i)| (n.clone(), i.fmu.clone())).collect()
    }

    /// Whether the instances run in worker processes: `over`'s setting, else the system's (known
    /// before the FMUs are loaded, which depends on it).
    pub fn isolated(&self, over: &super::Overrides) -> bool {
        over.settings.isolate.or(self.settings.isolate).unwrap_or(false)
    }

    /// The instances' names, in order.
    pub fn instance_names(&self) -> impl Iterator<Item = &str> {
        self.instances.keys().map(String::as_str)
    }

    /// The instances as drafted, by name.
    pub fn instance_drafts(&self) -> &BTreeMap<String, InstanceDraft> {
        &self.instances
    }

    /// The recorded variables as given ([`Self::outputs`]), if any.
    pub fn recorded(&self) -> Option<&[String]> {
        self.outputs.as_deref()
    }

    /// The settings as given (`[simulation]`).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings, to change any of them ([`Settings::set`] sets one by key).
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// A builder from a system file's content (`path` names it in messages; relative FMU paths
    /// resolve against its folder); every instance must name its FMU.
    pub fn from_file(path: &Path, file: SystemFile) -> crate::Result<Self> {
        let err =
            |key: String, message: &str| MasterError::System { path: path.to_path_buf(), key, message: message.into() };
        let mut b = SystemBuilder::new();
        b.source(path);
        let SystemFile { simulation, instances, connections, inputs, bonds, outputs, live, tune } = file;
        b.settings = simulation;
        for (name, given) in instances {
            if given.fmu.as_os_str().is_empty() {
                return Err(err(format!("instances.{name}.fmu"), "no FMU given (fmu = \"path/to/model.fmu\")"));
            }
            if given.fmu.to_string_lossy().contains('\0') {
                return Err(err(format!("instances.{name}.fmu"), "the path contains a NUL character"));
            }
            let d = b.instance(&name, &given.fmu);
            d.step = given.step;
            d.start = given.start;
            d.me_group = given.me_group;
        }
        b.connections = connections;
        b.inputs = inputs;
        let dir = path.parent().unwrap_or(Path::new(""));
        for i in &mut b.inputs {
            if let Some(f) = &mut i.file {
                *f = dir.join(&*f);
            }
        }
        b.bonds = bonds;
        b.outputs = outputs.and_then(|o| o.list().map(<[String]>::to_vec));
        b.live = live;
        b.tune = tune;
        Ok(b)
    }

    /// The system as a system file's content (FMU paths as resolved).
    pub fn to_file(&self) -> SystemFile {
        SystemFile {
            simulation: self.settings.clone(),
            instances: self.instances.clone(),
            connections: self.connections.clone(),
            inputs: self.inputs.clone(),
            bonds: self.bonds.clone(),
            outputs: self.outputs.clone().map(|v| Outputs { variables: Variables::List(v) }),
            live: self.live.clone(),
            tune: self.tune.clone(),
        }
    }

    /// The `[tune]` table of a system file, if any (see [`crate::tune`]).
    pub fn tune_table(&self) -> Option<&super::TuneTable> {
        self.tune.as_ref()
    }
}

/// `; did you mean "b.fmu"?` when a file of `fmu`'s folder ending in `.fmu` is close to its name
/// (a typing slip in an FMU path), else "".
fn nearest_fmu(fmu: &Path) -> String {
    let (Some(name), Some(dir)) = (fmu.file_name().and_then(|n| n.to_str()), fmu.parent()) else {
        return String::new();
    };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return String::new() };
    let mut names: Vec<String> =
        entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.ends_with(".fmu")).collect();
    names.sort();
    crate::suggest::did_you_mean(name, names.iter().map(String::as_str))
}
