//! [`SystemBuilder`]: a system put together in code, the one input of validation. The TOML
//! reader ([`SystemBuilder::read`]) fills the same builder, so both go through the same checks
//! ([`SystemBuilder::build`]), and every error names the key the TOML file would use
//! (`connections[2].to`, `instances.m1.start.damping`, …).

use super::settings::{EccoSettings, Settings};
use super::{AlgorithmKind, CorrectionLaw, EccoParams, Exchange, Parallel, StepControlKind};
use crate::error::MasterError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A start value as given, before the variable's type is known (checked by
/// [`SystemBuilder::build`] against the model description: a Real accepts an integer, an
/// enumeration accepts an item name, …).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number with a fraction or exponent.
    Real(f64),
    /// An integer.
    Integer(i64),
    /// A boolean.
    Boolean(bool),
    /// A string (also an enumeration item name).
    String(String),
    /// A TOML array: the start values of a whole array variable's elements, row-major.
    Array(Vec<Value>),
    /// A value of no FMI type (a TOML table or date), shown as written; always refused.
    Other(String),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Real(x) => write!(f, "{}", toml::Value::Float(*x)),
            Self::Integer(x) => write!(f, "{x}"),
            Self::Boolean(b) => write!(f, "{b}"),
            Self::String(s) => write!(f, "{}", toml::Value::String(s.clone())),
            Self::Array(items) => {
                f.write_str("[")?;
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Self::Other(s) => f.write_str(s),
        }
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Self::Real(x)
    }
}
impl From<i64> for Value {
    fn from(x: i64) -> Self {
        Self::Integer(x)
    }
}
impl From<i32> for Value {
    fn from(x: i32) -> Self {
        Self::Integer(i64::from(x))
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Boolean(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

/// Extrapolation of a connection as given: an order (checked to be 0..=4) or I2 with the
/// source's derivative outputs (`inst.var`).
#[derive(Debug, Clone, PartialEq)]
pub enum ExtrapolationSpec {
    /// Lagrange polynomial of this order.
    Order(usize),
    /// Taylor polynomial from these derivative outputs (`None`: not given, an error).
    I2(Option<Vec<String>>),
}

/// An instance as given.
#[derive(Debug, Clone)]
pub struct InstanceDraft {
    pub(crate) fmu: PathBuf,
    pub(crate) step: Option<f64>,
    pub(crate) starts: BTreeMap<String, Value>,
}

impl InstanceDraft {
    /// Own step h = H / k of an instance that cannot interpolate inputs (multirate).
    pub fn step(&mut self, h: f64) -> &mut Self {
        self.step = Some(h);
        self
    }
    /// A start value (parameter or input) set before initialization.
    pub fn start(&mut self, variable: &str, value: impl Into<Value>) -> &mut Self {
        self.starts.insert(variable.to_owned(), value.into());
        self
    }
    /// The FMU file (as resolved against the source's folder).
    pub fn fmu(&self) -> &Path {
        &self.fmu
    }
    /// Points the instance at another FMU file (taken as given).
    pub fn set_fmu(&mut self, fmu: impl Into<PathBuf>) -> &mut Self {
        self.fmu = fmu.into();
        self
    }
}

/// A connection as given.
#[derive(Debug, Clone)]
pub struct ConnectionDraft {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) gain: Option<f64>,
    pub(crate) offset: Option<f64>,
    pub(crate) extrapolation: Option<ExtrapolationSpec>,
}

impl ConnectionDraft {
    /// to = gain · from + offset.
    pub fn gain(&mut self, gain: f64) -> &mut Self {
        self.gain = Some(gain);
        self
    }
    /// to = gain · from + offset.
    pub fn offset(&mut self, offset: f64) -> &mut Self {
        self.offset = Some(offset);
        self
    }
    /// Lagrange extrapolation of order m (0..=4) over past communication points.
    pub fn extrapolation(&mut self, m: usize) -> &mut Self {
        self.extrapolation = Some(ExtrapolationSpec::Order(m));
        self
    }
    /// I2: Taylor polynomial from the source's derivative outputs (`inst.var`, 1 to 4).
    pub fn i2<S: Into<String>>(&mut self, derivatives: impl IntoIterator<Item = S>) -> &mut Self {
        self.extrapolation = Some(ExtrapolationSpec::I2(Some(derivatives.into_iter().map(Into::into).collect())));
        self
    }
    /// The extrapolation as given (`None`: the system's default).
    pub fn extrapolation_spec(&self) -> Option<&ExtrapolationSpec> {
        self.extrapolation.as_ref()
    }
    /// Replaces the extrapolation (`None`: the system's default).
    pub fn set_extrapolation(&mut self, e: Option<ExtrapolationSpec>) -> &mut Self {
        self.extrapolation = e;
        self
    }
    /// `inst.var` of the source.
    pub fn from(&self) -> &str {
        &self.from
    }
    /// `inst.var` of the destination.
    pub fn to(&self) -> &str {
        &self.to
    }
}

/// A time table driving an input, as given.
#[derive(Debug, Clone)]
pub struct InputDraft {
    pub(crate) to: String,
    pub(crate) times: Vec<f64>,
    pub(crate) values: Vec<f64>,
    pub(crate) linear: bool,
}

impl InputDraft {
    /// Linear interpolation between the points (default: right-continuous steps).
    pub fn linear(&mut self) -> &mut Self {
        self.linear = true;
        self
    }
    /// `inst.var` of the driven input.
    pub fn to(&self) -> &str {
        &self.to
    }
}

/// One port of a bond as given: power into `instance` = sign · effort · flow.
#[derive(Debug, Clone)]
pub struct PortDraft {
    pub(crate) instance: String,
    pub(crate) effort: String,
    pub(crate) flow: String,
    pub(crate) sign: Option<f64>,
}

impl PortDraft {
    /// A port with sign +1.
    pub fn new(instance: &str, effort: &str, flow: &str) -> Self {
        Self { instance: instance.into(), effort: effort.into(), flow: flow.into(), sign: None }
    }
    /// +1 or −1 (power flowing into the instance is positive).
    pub fn sign(mut self, sign: f64) -> Self {
        self.sign = Some(sign);
        self
    }
}

/// A `[[bonds]]` table's own correction law, gain and floor (`None`: `[simulation]`'s).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct BondLawDraft {
    pub law: Option<CorrectionLaw>,
    pub gain: Option<f64>,
    pub flow: Option<f64>,
}

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
    pub(crate) bonds: Vec<(String, Vec<PortDraft>)>,
    /// `None`: every output of every instance.
    pub(crate) outputs: Option<Vec<String>>,
    /// Energy correction per bond name (`[[bonds]] energy_correction`), over the system's.
    pub(crate) bond_corrections: BTreeMap<String, bool>,
    /// Correction law, gain and floor per bond name, over the system's.
    pub(crate) bond_laws: BTreeMap<String, BondLawDraft>,
    /// `[tune]` of a system file, kept for `cosim tune`.
    pub(crate) tune: Option<toml::Value>,
    /// `[live]` of a system file: inputs and outputs served while the run goes.
    pub live: Option<crate::live::LiveSpec>,
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
            bond_corrections: BTreeMap::new(),
            bond_laws: BTreeMap::new(),
            tune: None,
            live: None,
        }
    }

    /// Names the source in messages; relative FMU paths given afterwards resolve against its
    /// folder (as in a system file).
    pub fn source(&mut self, path: &Path) -> &mut Self {
        self.path = path.to_path_buf();
        self
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
    /// Energy correction of one bond (by name), over the system's setting.
    pub fn bond_energy_correction(&mut self, bond: &str, on: bool) -> &mut Self {
        self.bond_corrections.insert(bond.to_owned(), on);
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
        self.bond_laws.insert(bond.to_owned(), BondLawDraft { law, gain, flow: flow_floor });
        self
    }

    /// Adds (or replaces) an instance of the FMU at `fmu` (relative paths: against the source's
    /// folder); the returned draft takes its step and start values.
    pub fn instance(&mut self, name: &str, fmu: impl AsRef<Path>) -> &mut InstanceDraft {
        let fmu = self.path.parent().map(|d| d.join(fmu.as_ref())).unwrap_or_else(|| fmu.as_ref().to_path_buf());
        let d = self.instances.entry(name.to_owned()).or_insert(InstanceDraft {
            fmu: PathBuf::new(),
            step: None,
            starts: BTreeMap::new(),
        });
        d.fmu = fmu;
        d
    }

    /// The instance `name`, to change its start values or step.
    pub fn instance_mut(&mut self, name: &str) -> Option<&mut InstanceDraft> {
        self.instances.get_mut(name)
    }

    /// Connects output `from` to input `to` (both `instance.variable`).
    pub fn connect(&mut self, from: &str, to: &str) -> &mut ConnectionDraft {
        self.connections.push(ConnectionDraft {
            from: from.to_owned(),
            to: to.to_owned(),
            gain: None,
            offset: None,
            extrapolation: None,
        });
        let last = self.connections.len() - 1;
        &mut self.connections[last]
    }

    /// The connections, to change their extrapolation.
    pub fn connections_mut(&mut self) -> &mut [ConnectionDraft] {
        &mut self.connections
    }

    /// Drives input `to` from a time table (steps; `.linear()` for linear interpolation).
    pub fn input(&mut self, to: &str, times: Vec<f64>, values: Vec<f64>) -> &mut InputDraft {
        self.inputs.push(InputDraft { to: to.to_owned(), times, values, linear: false });
        let last = self.inputs.len() - 1;
        &mut self.inputs[last]
    }

    /// Removes the time tables whose input `keep` refuses.
    pub fn retain_inputs(&mut self, mut keep: impl FnMut(&InputDraft) -> bool) -> &mut Self {
        self.inputs.retain(|i| keep(i));
        self
    }

    /// A power bond between two ports.
    pub fn bond(&mut self, name: &str, a: PortDraft, b: PortDraft) -> &mut Self {
        self.bonds.push((name.to_owned(), vec![a, b]));
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
        MasterError::System { path: self.path.clone(), key: format!("instances.{name}.fmu"), message: e.to_string() }
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

    /// How the run is paced ([`crate::realtime`]): `None` as fast as possible. A lateness limit
    /// or priority without a factor means real time (factor 1).
    pub fn real_time(&self, over: &super::Overrides) -> crate::Result<Option<crate::realtime::RealTime>> {
        let (s, o) = (&self.settings, &over.settings);
        let factor = o.real_time.or(s.real_time);
        let max_lateness = o.max_lateness.or(s.max_lateness);
        let priority = o.real_time_priority.or(s.real_time_priority).unwrap_or(false);
        if factor.is_none() && max_lateness.is_none() && !priority {
            return Ok(None);
        }
        let rt = crate::realtime::RealTime { factor: factor.unwrap_or(1.0), max_lateness, priority, timing_csv: None };
        rt.check().map_err(|(key, message)| crate::MasterError::System {
            path: self.path().to_path_buf(),
            key: format!("simulation.{key}"),
            message,
        })?;
        Ok(Some(rt))
    }

    /// The `[tune]` table of a system file, if any (see [`crate::tune`]).
    pub fn tune_table(&self) -> Option<&toml::Value> {
        self.tune.as_ref()
    }
}
