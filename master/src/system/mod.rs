//! *What* is simulated: the system (instances, connections, time tables, bonds, recorded
//! variables, settings), validated against the FMUs' model descriptions. Every error names the
//! source, the key and the bad value.
//!
//! - [`SystemBuilder`] puts a system together in code; [`SystemBuilder::build`] validates it
//!   into a [`System`] (`resolve`: the checks).
//! - [`SystemFile`] (`schema.rs`): the whole system file, the one serde type every front end
//!   reads into or writes from (system file, SSP annotation, Python, `cosim tune`); its entries
//!   are the builder's drafts. [`Settings`] (`settings.rs`): its `[simulation]`, also filled by
//!   `cosim run --set`; a new setting is a field there.
//! - `resolve/`: the checks, one file per part of the file.
//! - `toml`: the system file front end, reading into the same builder:
//!
//! ```toml
//! [simulation]
//! start = 0.0            # s (default 0)
//! stop = 10.0            # s
//! step = 1e-3            # communication step H, s
//! algorithm = "jacobi"   # or "gauss-seidel"
//! order = ["m2", "m1"]   # Gauss-Seidel order (default: from the connection graph)
//! extrapolation = 1      # default for connections: 0..4 or "I2"
//! parallel = "auto"      # Jacobi worker threads: "auto" | "on" | "off"
//! exchange = "ordered"   # or "explicit": the papers' explicit Jacobi (outputs read once at t_n)
//! record_every = 1       # write results every k-th communication point
//! isolate = false        # run each instance in its own worker process (as `cosim run --isolate`)
//! worker_timeout = 60.0  # s: an isolated instance's call that takes longer ends the run (hung FMU)
//! max_residual_energy = 10.0   # J: stop when a bond's Σ|δE| exceeds it (default: no bound)
//! iterations = 1         # iterative coupling: passes per step (1: non-iterative)
//!
//! [instances.m1]
//! fmu = "../target/fmu/oscillator-fd-m1.fmu"   # relative to this file
//! step = 1e-4                                  # optional own step h = H/k
//! start = { damping = 2, x0 = 0.0 }            # start values: Real, Integer, Boolean, String, enum item name
//!
//! [[connections]]
//! from = "m2.x"
//! to = "m1.xi"
//! gain = 1.0             # optional linear transform: to = gain * from + offset
//! offset = 0.0
//! extrapolation = 2      # or "I2" with derivatives = ["m2.v", "m2.a"]
//!
//! [[bonds]]
//! name = "spring"
//! ports = [ { instance = "m1", effort = "F", flow = "xi_dot", sign = -1.0 },
//!           { instance = "m2", effort = "F", flow = "v" } ]
//!
//! [outputs]
//! variables = ["m1.x", "m2.x"]   # or "all" (default: every output of every instance)
//! ```

pub(crate) mod arrays;
mod builder;
pub mod input_file;
pub mod input_stream;
mod resolve;
mod schema;
mod settings;
pub(crate) mod toml;

pub use self::toml::read_text;
pub use crate::step_control::{EccoParams, StepControl, StepControlKind};
pub use builder::SystemBuilder;
use model_description::{BaseType, Causality};
pub use resolve::LARGE_STEPS;
pub use schema::{
    BondDraft, ConnectionDraft, ExtrapolationSpec, InputDraft, InstanceDraft, Interpolation, Outputs, PortDraft,
    SystemFile, TomlError, TuneTable, Value, Variables,
};
pub use settings::{BondSettings, EccoSettings, InterfaceKind, MeCoupling, Settings, SolverKind};
use std::path::{Path, PathBuf};

/// Co-simulation scheme (one [`crate::algorithm::Algorithm`] each; iterative coupling is
/// Jacobi with `iterations > 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlgorithmKind {
    /// All instances step on inputs from t_n.
    Jacobi,
    /// Instances step one after the other; later ones use earlier ones' t_{n+1} outputs.
    #[value(alias = "gauss_seidel", alias = "gaussseidel")]
    #[serde(alias = "gauss_seidel", alias = "gaussseidel")]
    GaussSeidel,
}

impl AlgorithmKind {
    /// Parses `jacobi` / `gauss-seidel` (the names of the CLI and the system file).
    pub fn parse(s: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(s, false).ok()
    }

    /// The name in system files and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Jacobi => "jacobi",
            Self::GaussSeidel => "gauss-seidel",
        }
    }
}

/// How the inputs at t_n are taken from the outputs (`[simulation] exchange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exchange {
    /// The default: inputs are set instance by instance, the sources of direct-feedthrough
    /// outputs first, and such an output is read again after its own instance's inputs at t_n
    /// are set (a force F(s, ṡ) handed on with the ṡ of t_n). A cycle of feedthrough outputs is
    /// refused as an algebraic loop.
    Ordered,
    /// The papers' explicit Jacobi: every output is read once, at the end of the previous step
    /// (t_n), before any input is set; no output is read again (a feedthrough output such as
    /// F(s, ṡ) carries the inputs of the previous exchange). Cycles through feedthrough outputs
    /// are allowed.
    Explicit,
}

impl Exchange {
    /// Parses `ordered` / `explicit`.
    pub fn parse(s: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(s, false).ok()
    }

    /// The name in system files (`ordered`, `explicit`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Ordered => "ordered",
            Self::Explicit => "explicit",
        }
    }
}

/// Worker threads for Jacobi.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Parallel {
    /// Decide from measured step cost.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl Parallel {
    /// Parses `auto` / `on` / `off`.
    pub fn parse(s: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(s, false).ok()
    }

    /// The name in system files (`auto`, `on`, `off`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// A variable of an instance, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct VarRef {
    /// Instance index.
    pub instance: usize,
    /// Variable name.
    pub name: String,
    /// Value reference.
    pub vr: u32,
    /// Base type.
    pub ty: BaseType,
    /// Causality.
    pub causality: Causality,
}

/// A start value.
#[derive(Debug, Clone, PartialEq)]
pub enum StartValue {
    /// fmi2Real.
    Real(f64),
    /// An integer or enumeration value (Int8…Int64, UInt8…UInt64, Enumeration; FMI 2.0: 32
    /// bits), exact; the instance refuses a value outside its variable's type.
    Integer(i128),
    /// fmi2Boolean.
    Boolean(bool),
    /// fmi2String.
    String(String),
    /// fmi3Binary (FMI 3.0 FMUs): the bytes.
    Binary(Vec<u8>),
}

impl StartValue {
    /// Sets this value on variable `vr` of an instance (the setter of its type: `fmi2SetReal`,
    /// `fmi3SetInt64`, `fmi3SetUInt64`, …).
    pub fn apply(&self, instance: &mut dyn crate::fmu::FmuInstance, vr: u32) -> crate::Result<()> {
        match self {
            Self::Real(x) => instance.set_real(&[vr], &[*x]),
            Self::Integer(x) => match (instance.value_type(vr), u64::try_from(*x), i64::try_from(*x)) {
                (Some(crate::fmu::ValueType::UInt64), Ok(u), _) => instance.set_uint64(&[vr], &[u]),
                // The instance checks the value against the variable's type, naming both.
                (_, _, Ok(i)) => instance.set_int64(&[vr], &[i]),
                // Above Int64 (values are read as Int64 or UInt64): only a UInt64 takes it, and
                // the instance refuses any other type by name.
                (_, Ok(u), Err(_)) => instance.set_uint64(&[vr], &[u]),
                (_, Err(_), Err(_)) => Err(crate::error::MasterError::System {
                    path: PathBuf::new(),
                    key: format!("start value of value reference {vr}"),
                    message: format!("{x} is outside the range of Int64 and of UInt64"),
                }),
            },
            Self::Boolean(x) => instance.set_boolean(&[vr], &[*x]),
            Self::String(x) => instance.set_string(&[vr], &[x.as_str()]),
            Self::Binary(x) => instance.set_binary(&[vr], &[x.as_slice()]),
        }
    }
}

/// An instance of an FMU.
#[derive(Debug, Clone)]
pub struct InstanceSpec {
    /// Name (unique in the system).
    pub name: String,
    /// The FMU file.
    pub fmu: PathBuf,
    /// Own step h = H / substeps.
    pub substeps: u64,
    /// The instance's own step `[instances.x] step` (s), if given: the master sub-steps it.
    pub step: Option<f64>,
    /// The instance's fixed internal step (s), if known: its own step, else the FMU's Real
    /// parameter `h` (unit s, > 0), which the FMU sub-steps itself. Step control keeps H a whole
    /// multiple of it.
    pub fixed_step: Option<f64>,
    /// Start values.
    pub starts: Vec<(VarRef, StartValue)>,
    /// FMI 3.0: the structural parameters the instance's FMU is configured with (the start values
    /// of [`InstanceSpec::starts`] that name one; filled by [`SystemBuilder::load`]): the FMU of
    /// this configuration is [`crate::fmu::FmuCache::get_configured`]'s.
    pub configuration: crate::fmu::Configuration,
    /// `[instances.x] me_group`: the group of Model Exchange instances integrated as one ODE
    /// that this instance belongs to, if given.
    pub me_group: Option<String>,
}

/// Extrapolation of a connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Extrapolation {
    /// Lagrange polynomial of this order (0–4) over past communication points.
    Order(usize),
    /// Taylor polynomial from the source's derivative outputs (seed 001 "I2": integrate s and ṡ
    /// from ṡ, s̈).
    I2 {
        /// Outputs giving d/dt, d²/dt², … of the source.
        derivatives: Vec<VarRef>,
    },
}

impl Extrapolation {
    /// Polynomial order.
    pub fn order(&self) -> usize {
        match self {
            Self::Order(m) => *m,
            Self::I2 { derivatives } => derivatives.len(),
        }
    }
}

/// A connection output → input.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Source output.
    pub from: VarRef,
    /// Destination input.
    pub to: VarRef,
    /// to = gain · from + offset.
    pub gain: f64,
    /// Offset.
    pub offset: f64,
    /// Extrapolation.
    pub extrapolation: Extrapolation,
}

/// One port of a power bond: power into the instance = sign · effort · flow.
#[derive(Debug, Clone)]
pub struct Port {
    /// Effort variable (force, pressure).
    pub effort: VarRef,
    /// Flow variable (velocity, volume flow).
    pub flow: VarRef,
    /// +1 or −1 (SPEC §3.6: power flowing into the subsystem is positive).
    pub sign: f64,
}

/// An input driven by a time table (`[[inputs]]`): right-continuous steps, or linear
/// interpolation; held before the first and after the last time. A table from a file
/// (`[[inputs]] file`) has its points in the file, streamed during the run (`file`; `times`
/// and `values` are then empty).
#[derive(Debug, Clone)]
pub struct Signal {
    /// The input.
    pub to: VarRef,
    /// Times (s), never decreasing (a time given twice is a jump: a file's discontinuity).
    pub times: Vec<f64>,
    /// Values at those times.
    pub values: Vec<f64>,
    /// Linear interpolation (else steps).
    pub linear: bool,
    /// The file column the points come from, read during the run a few rows at a time
    /// ([`input_stream::Window`]); `None` for a table held in memory.
    pub file: Option<FileColumn>,
}

/// One column of an input file driving a [`Signal`].
#[derive(Debug, Clone)]
pub struct FileColumn {
    /// The file, its time column, its used columns and their transform (shared by the
    /// signals of one `[[inputs]] file`).
    pub source: std::sync::Arc<input_stream::FileSource>,
    /// Which of `source.columns`.
    pub column: usize,
}

impl Signal {
    /// For [`System::describe`]: a file signal becomes the table of what it gives — the value
    /// just before and at every communication point and half-way between (at most 10,001
    /// points) — since the same signal can come from files of other rows (an SSP carries it as
    /// a table component with rows added at the start and stop time) or other column names.
    fn describe_file_by_values(&mut self, start: f64, stop: f64, step: f64) {
        let Some(file) = self.file.take() else { return };
        let mut window = input_stream::Window::new(file.source.clone());
        let n = (((stop - start) / step).round() as u64).min(5_000);
        self.times.clear();
        self.values.clear();
        for k in 0..=2 * n {
            let t = start + (stop - start) * k as f64 / (2 * n).max(1) as f64;
            let before = window.before(file.column, self.linear, t).unwrap_or(f64::NAN);
            let (at, _) = window.at(file.column, self.linear, t).unwrap_or((f64::NAN, f64::NAN));
            self.times.extend([t, t]);
            self.values.extend([before, at]);
        }
    }

    /// A table held in memory.
    pub fn new(to: VarRef, times: Vec<f64>, values: Vec<f64>, linear: bool) -> Self {
        Self { to, times, values, linear, file: None }
    }

    /// Value at t and slope there (0 for steps). A file's table is read here from the start
    /// of the file (the run reads it through a window instead).
    pub fn at(&self, t: f64) -> (f64, f64) {
        match &self.file {
            None => table_at(&self.times, &self.values, self.linear, t),
            Some(f) => {
                input_stream::Window::new(f.source.clone()).at(f.column, self.linear, t).unwrap_or((f64::NAN, 0.0))
            }
        }
    }

    /// The value just before t (the left limit): [`Signal::at`]'s except at a discontinuity
    /// (a time given twice), where it is the value before the jump. An input's line over a step
    /// ends here, so a jump at the step's end is not ramped into.
    pub fn before(&self, t: f64) -> f64 {
        match &self.file {
            None => table_before(&self.times, &self.values, self.linear, t),
            Some(f) => input_stream::Window::new(f.source.clone()).before(f.column, self.linear, t).unwrap_or(f64::NAN),
        }
    }
}

/// [`Signal::at`] on points `times`, `values`: the one formula of every table, in memory or a
/// window of a file (which gives bit-identical values when it holds the rows around t).
pub(crate) fn table_at(times: &[f64], values: &[f64], linear: bool, t: f64) -> (f64, f64) {
    let k = times.partition_point(|x| *x <= t);
    if k == 0 {
        return (values.first().copied().unwrap_or(0.0), 0.0);
    }
    let (t0, v0) = (times[k - 1], values[k - 1]);
    if !linear || k == times.len() {
        return (v0, 0.0);
    }
    let slope = (values[k] - v0) / (times[k] - t0);
    (v0 + slope * (t - t0), slope)
}

/// [`Signal::before`] on points `times`, `values`.
pub(crate) fn table_before(times: &[f64], values: &[f64], linear: bool, t: f64) -> f64 {
    let k = times.partition_point(|x| *x < t);
    match times.get(k) {
        // The first of the points at t: the value before a jump there.
        Some(tk) if *tk == t => values[k],
        _ => table_at(times, values, linear, t).0,
    }
}

/// A power bond between two ports; residual power δP = Σ ports' power.
#[derive(Debug, Clone)]
pub struct Bond {
    /// Name (column prefix in bonds.csv).
    pub name: String,
    /// The two ports.
    pub ports: [Port; 2],
    /// Energy correction of this bond ([`crate::bonds`]).
    pub energy_correction: bool,
    /// Its law, gain and floor (`[[bonds]]` keys over `[simulation]`'s).
    pub correction: EnergyCorrection,
}

/// Which energy correction law ([`crate::bonds`]): `energy_correction_law = "input" | "bond"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CorrectionLaw {
    /// Each corrected input gets back its own energy error ΔE_u = ∫(ũ − u)·y dt (default).
    #[default]
    Input,
    /// The bond's whole residual energy goes into one effort input (issue 18's law).
    Bond,
}

impl CorrectionLaw {
    /// The name in system files (`input`, `bond`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Bond => "bond",
        }
    }

    /// From its name in a system file.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        match s {
            "input" => Ok(Self::Input),
            "bond" => Ok(Self::Bond),
            other => Err(format!("\"{other}\" is not \"input\" or \"bond\"")),
        }
    }
}

/// Energy correction parameters (`energy_correction_law`, `_gain`, `_flow` of `[simulation]`,
/// or of a `[[bonds]]` table for that bond).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyCorrection {
    /// The law (default [`CorrectionLaw::Input`]).
    pub law: CorrectionLaw,
    /// Gain α of the correction law (default 1).
    pub gain: f64,
    /// Floor y_ε (default 0) regularizing the division by the conjugate variable y: the flow
    /// for an effort input (bond law: always), the effort for a flow input.
    pub flow_floor: f64,
}

/// A validated system: made only by [`SystemBuilder::build`] (from code or a system file), so
/// every `System` passed the same checks. Read it through its accessors.
#[derive(Debug, Clone)]
pub struct System {
    /// The file it came from.
    pub(crate) path: PathBuf,
    /// Start time (s).
    pub(crate) start: f64,
    /// Stop time (s).
    pub(crate) stop: f64,
    /// Communication step H (s).
    pub(crate) step: f64,
    /// Scheme.
    pub(crate) algorithm: AlgorithmKind,
    /// Gauss-Seidel order given by the user (instance indices), if any.
    pub(crate) order: Option<Vec<usize>>,
    /// Jacobi threads.
    pub(crate) parallel: Parallel,
    /// How the inputs at t_n are taken from the outputs.
    pub(crate) exchange: Exchange,
    /// Record every k-th communication point.
    pub(crate) record_every: u64,
    /// Run each instance in its own worker process ([`crate::fmu::isolated`]).
    pub(crate) isolate: bool,
    /// `[simulation] me_coupling`: how Model Exchange instances without a group are integrated.
    pub(crate) me_coupling: MeCoupling,
    /// Isolated instances: longest a call may take before its worker is killed as hung (s).
    pub(crate) worker_timeout: f64,
    /// Real-time pacing (`real_time`, `max_lateness`, `real_time_priority`); `None`: as fast as
    /// possible.
    pub(crate) real_time: Option<crate::realtime::RealTime>,
    /// `[live]`: inputs and outputs served while the run goes (by the front end that serves).
    pub(crate) live: Option<crate::live::LiveSpec>,
    /// Stop the run when a bond's Σ|δE| exceeds this (J).
    pub(crate) max_residual_energy: Option<f64>,
    /// Iterative coupling (Jacobi): at most this many passes per communication step, each
    /// repeating the step from the saved FMU states with the inputs interpolated towards the
    /// latest end values; 1 = non-iterative (default).
    pub(crate) iterations: u32,
    /// Convergence of the iterative coupling: largest change of a connection's end value
    /// between passes, relative to max(|value|, nominal 1) (default 1e-9).
    pub(crate) iteration_tolerance: f64,
    /// How H is chosen (fixed, or ECCO on a grid).
    pub(crate) step_control: StepControl,
    /// Energy correction parameters (which bonds: [`Bond::energy_correction`]).
    pub(crate) energy_correction: EnergyCorrection,
    /// Instances, sorted by name.
    pub(crate) instances: Vec<InstanceSpec>,
    /// Connections.
    pub(crate) connections: Vec<Connection>,
    /// Power bonds.
    pub(crate) bonds: Vec<Bond>,
    /// Input signals given by time tables.
    pub(crate) signals: Vec<Signal>,
    /// Recorded variables.
    pub(crate) outputs: Vec<VarRef>,
    /// Every variable of every instance (for access by name).
    pub(crate) variables: Vec<Vec<VarRef>>,
}

impl System {
    /// `instance.variable`.
    pub fn label(&self, v: &VarRef) -> String {
        format!("{}.{}", self.instances[v.instance].name, v.name)
    }

    /// Number of communication steps (stop − start is a whole number of steps, checked).
    pub fn steps(&self) -> u64 {
        ((self.stop - self.start) / self.step).round().max(0.0) as u64
    }

    /// Time of communication point n: start + n·H.
    pub fn time_at(&self, n: u64) -> f64 {
        self.start + n as f64 * self.step
    }

    /// The source (system file, or `<builder>`).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Start time (s).
    pub fn start(&self) -> f64 {
        self.start
    }
    /// Stop time (s).
    pub fn stop(&self) -> f64 {
        self.stop
    }
    /// Communication step H (s).
    pub fn step(&self) -> f64 {
        self.step
    }
    /// The coupling scheme.
    pub fn algorithm(&self) -> AlgorithmKind {
        self.algorithm
    }
    /// The Gauss-Seidel order given (instance indices), if any.
    pub fn order(&self) -> Option<&[usize]> {
        self.order.as_deref()
    }
    /// Jacobi worker threads.
    pub fn parallel(&self) -> Parallel {
        self.parallel
    }
    /// How the inputs at t_n are taken from the outputs.
    pub fn exchange(&self) -> Exchange {
        self.exchange
    }
    /// Record every k-th communication point.
    pub fn record_every(&self) -> u64 {
        self.record_every
    }
    /// Whether the instances run in worker processes.
    pub fn isolate(&self) -> bool {
        self.isolate
    }
    /// How the Model Exchange instances without an `me_group` are integrated (`me_coupling`).
    pub fn me_coupling(&self) -> MeCoupling {
        self.me_coupling
    }
    /// Isolated instances: longest a call may take before its worker is killed as hung.
    pub fn worker_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.worker_timeout)
    }
    /// How the run is paced (`None`: as fast as possible); every execution of this system is.
    pub fn real_time(&self) -> Option<&crate::realtime::RealTime> {
        self.real_time.as_ref()
    }
    /// `[live]`: what a live server may set and read while the run goes.
    pub fn live(&self) -> Option<&crate::live::LiveSpec> {
        self.live.as_ref()
    }
    /// Divergence bound on each bond's Σ|δE| (J).
    pub fn max_residual_energy(&self) -> Option<f64> {
        self.max_residual_energy
    }
    /// Iterative coupling: passes per step at most (1: non-iterative).
    pub fn iterations(&self) -> u32 {
        self.iterations
    }
    /// Convergence tolerance of the iterative coupling.
    pub fn iteration_tolerance(&self) -> f64 {
        self.iteration_tolerance
    }
    /// How the communication step is chosen.
    pub fn step_control(&self) -> &StepControl {
        &self.step_control
    }
    /// Energy correction parameters.
    pub fn energy_correction(&self) -> EnergyCorrection {
        self.energy_correction
    }
    /// Instances, sorted by name.
    pub fn instances(&self) -> &[InstanceSpec] {
        &self.instances
    }
    /// Connections.
    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }
    /// Power bonds.
    pub fn bonds(&self) -> &[Bond] {
        &self.bonds
    }
    /// Inputs driven by time tables.
    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }
    /// Recorded variables (the columns of results.csv, in order).
    pub fn outputs(&self) -> &[VarRef] {
        &self.outputs
    }
    /// Index of the instance `name`.
    pub fn instance_index(&self, name: &str) -> Option<usize> {
        self.instances.iter().position(|i| i.name == name)
    }
    /// The variable `instance.variable` of the started system, if it exists.
    pub fn variable(&self, dotted: &str) -> Option<&VarRef> {
        let (inst, var) = dotted.split_once('.')?;
        let i = self.instance_index(inst)?;
        self.variables.get(i)?.iter().find(|v| v.name == var)
    }

    /// The variable `name` names by the one naming rule ([`crate::names`]: `instance.variable`,
    /// or a bare name one instance only has); the error says why not (unknown: the nearest
    /// names; ambiguous: the instances that have it).
    pub fn lookup(&self, name: &str) -> std::result::Result<&VarRef, String> {
        let pairs = self
            .instances
            .iter()
            .zip(&self.variables)
            .flat_map(|(inst, vars)| vars.iter().map(move |v| (inst.name.as_str(), v.name.as_str())));
        let k = crate::names::resolve(name, pairs)?;
        self.variables.iter().flatten().nth(k).ok_or_else(|| format!("no variable \"{name}\""))
    }

    /// The resolved system as text, without its source and FMU paths: equal for the same system
    /// however it was given (TOML, SSP, Python; for tests).
    #[doc(hidden)]
    pub fn describe(&self) -> String {
        let mut s = self.clone();
        s.path = PathBuf::new();
        for i in &mut s.instances {
            i.fmu = PathBuf::new();
        }
        for sig in &mut s.signals {
            sig.describe_file_by_values(self.start, self.stop, self.step);
        }
        format!("{s:#?}")
    }

    /// `; did you mean "inst.var"?` for an unknown `dotted` name, or "" (see [`crate::suggest`]).
    pub fn suggest_variable(&self, dotted: &str) -> String {
        let names: Vec<String> = self
            .instances
            .iter()
            .zip(&self.variables)
            .flat_map(|(inst, vars)| vars.iter().map(move |v| format!("{}.{}", inst.name, v.name)))
            .collect();
        crate::suggest::did_you_mean(dotted, names.iter().map(String::as_str))
    }
}

/// What a front end puts over a system's own settings (command-line flags and `--set`, Python
/// keyword arguments).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Settings that win over the system's, key by key (`None`: the system's). Energy correction
    /// and its law given here win over a `[[bonds]]` table's own too.
    pub settings: Settings,
    /// Extrapolation order of every connection, over each connection's own (`--extrapolation`).
    pub extrapolation: Option<usize>,
    /// `--force`: run even more than `LARGE_STEPS` (1e9) fmi2DoStep calls per instance.
    pub force: bool,
    /// How the front end names each setting it gave, by key (`start` → `--start-time` or
    /// `--set start`; Python's `stop_time`): a message about such a value names it so, not the
    /// file's `simulation.KEY` (which it did not come from).
    pub given_as: std::collections::BTreeMap<String, String>,
}

impl Overrides {
    /// Overrides of these settings only.
    pub fn settings(settings: Settings) -> Self {
        Self { settings, ..Self::default() }
    }
}
