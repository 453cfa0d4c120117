//! *What* is simulated: the system description (TOML), validated against the FMUs' model
//! descriptions. Every error names the file, the key and the bad value.
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
//! record_every = 1       # write results every k-th communication point
//! isolate = false        # run each instance in its own worker process (as `cosim run --isolate`)
//! max_residual_energy = 10.0   # J: stop when a bond's Σ|δE| exceeds it (default: no bound)
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

use crate::error::{MasterError, Result};
use model_description::{BaseType, Causality, ModelDescription, SimpleTypeKind, VariableKind};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSystem {
    simulation: RawSimulation,
    instances: BTreeMap<String, RawInstance>,
    #[serde(default)]
    connections: Vec<RawConnection>,
    #[serde(default)]
    inputs: Vec<RawSignal>,
    #[serde(default)]
    bonds: Vec<RawBond>,
    #[serde(default)]
    outputs: Option<RawOutputs>,
    /// `[tune]`: read by `cosim tune` ([`crate::tune`]), ignored by `cosim run`.
    #[serde(default)]
    tune: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSimulation {
    #[serde(default)]
    start: f64,
    stop: f64,
    step: f64,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    order: Option<Vec<String>>,
    #[serde(default)]
    extrapolation: Option<toml::Value>,
    #[serde(default)]
    parallel: Option<String>,
    #[serde(default)]
    record_every: Option<u64>,
    #[serde(default)]
    isolate: Option<bool>,
    #[serde(default)]
    max_residual_energy: Option<f64>,
    #[serde(default)]
    iterations: Option<u32>,
    #[serde(default)]
    iteration_tolerance: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInstance {
    fmu: PathBuf,
    #[serde(default)]
    step: Option<f64>,
    #[serde(default)]
    start: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    to: String,
    times: Vec<f64>,
    values: Vec<f64>,
    #[serde(default)]
    interpolation: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConnection {
    from: String,
    to: String,
    #[serde(default)]
    gain: Option<f64>,
    #[serde(default)]
    offset: Option<f64>,
    #[serde(default)]
    extrapolation: Option<toml::Value>,
    #[serde(default)]
    derivatives: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBond {
    name: String,
    ports: Vec<RawPort>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPort {
    instance: String,
    effort: String,
    flow: String,
    #[serde(default)]
    sign: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputs {
    variables: toml::Value,
}

/// Co-simulation scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgorithmKind {
    /// All instances step on inputs from t_n.
    Jacobi,
    /// Instances step one after the other; later ones use earlier ones' t_{n+1} outputs.
    GaussSeidel,
}

impl AlgorithmKind {
    /// Parses `jacobi` / `gauss-seidel`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "jacobi" => Some(Self::Jacobi),
            "gauss-seidel" | "gauss_seidel" | "gaussseidel" => Some(Self::GaussSeidel),
            _ => None,
        }
    }
}

/// Worker threads for Jacobi.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallel {
    /// Decide from measured step cost.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
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
    /// fmi2Integer or enumeration.
    Integer(i32),
    /// fmi2Boolean.
    Boolean(bool),
    /// fmi2String.
    String(String),
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
    /// Start values.
    pub starts: Vec<(VarRef, StartValue)>,
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
/// interpolation; held before the first and after the last time.
#[derive(Debug, Clone)]
pub struct Signal {
    /// The input.
    pub to: VarRef,
    /// Times (s), strictly increasing.
    pub times: Vec<f64>,
    /// Values at those times.
    pub values: Vec<f64>,
    /// Linear interpolation (else steps).
    pub linear: bool,
}

impl Signal {
    /// Value at t and slope there (0 for steps).
    pub fn at(&self, t: f64) -> (f64, f64) {
        let k = self.times.partition_point(|x| *x <= t);
        if k == 0 {
            return (self.values.first().copied().unwrap_or(0.0), 0.0);
        }
        let (t0, v0) = (self.times[k - 1], self.values[k - 1]);
        if !self.linear || k == self.times.len() {
            return (v0, 0.0);
        }
        let slope = (self.values[k] - v0) / (self.times[k] - t0);
        (v0 + slope * (t - t0), slope)
    }
}

/// A power bond between two ports; residual power δP = Σ ports' power.
#[derive(Debug, Clone)]
pub struct Bond {
    /// Name (column prefix in bonds.csv).
    pub name: String,
    /// The two ports.
    pub ports: [Port; 2],
}

/// A validated system.
#[derive(Debug, Clone)]
pub struct System {
    /// The file it came from.
    pub path: PathBuf,
    /// Start time (s).
    pub start: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Communication step H (s).
    pub step: f64,
    /// Scheme.
    pub algorithm: AlgorithmKind,
    /// Gauss-Seidel order given by the user (instance indices), if any.
    pub order: Option<Vec<usize>>,
    /// Jacobi threads.
    pub parallel: Parallel,
    /// Record every k-th communication point.
    pub record_every: u64,
    /// Run each instance in its own worker process ([`crate::fmu::isolated`]).
    pub isolate: bool,
    /// Stop the run when a bond's Σ|δE| exceeds this (J).
    pub max_residual_energy: Option<f64>,
    /// Iterative coupling (Jacobi): at most this many passes per communication step, each
    /// repeating the step from the saved FMU states with the inputs interpolated towards the
    /// latest end values; 1 = non-iterative (default).
    pub iterations: u32,
    /// Convergence of the iterative coupling: largest change of a connection's end value
    /// between passes, relative to max(|value|, nominal 1) (default 1e-9).
    pub iteration_tolerance: f64,
    /// Instances, sorted by name.
    pub instances: Vec<InstanceSpec>,
    /// Connections.
    pub connections: Vec<Connection>,
    /// Power bonds.
    pub bonds: Vec<Bond>,
    /// Input signals given by time tables.
    pub signals: Vec<Signal>,
    /// Recorded variables.
    pub outputs: Vec<VarRef>,
}

/// Command-line overrides of `[simulation]`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Stop time.
    pub stop: Option<f64>,
    /// Communication step.
    pub step: Option<f64>,
    /// Scheme.
    pub algorithm: Option<AlgorithmKind>,
    /// Extrapolation order for every connection.
    pub extrapolation: Option<usize>,
    /// Worker threads.
    pub parallel: Option<Parallel>,
    /// Worker processes (`--isolate`); `None` keeps `[simulation].isolate`.
    pub isolate: Option<bool>,
}

/// The parsed file before the FMUs are known: instance names and FMU paths.
#[derive(Debug)]
pub struct Draft {
    path: PathBuf,
    raw: RawSystem,
}

impl Draft {
    /// Reads and parses a system file (syntax and unknown keys are reported with line/column).
    pub fn read(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|source| MasterError::Io { path: path.to_path_buf(), source })?;
        Self::parse(path, &text)
    }

    /// Parses system text (for tests: `path` is only used in messages and to resolve FMU paths).
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let raw: RawSystem = toml::from_str(text).map_err(|e| MasterError::System {
            path: path.to_path_buf(),
            key: e.span().map(|s| format!("bytes {}..{}", s.start, s.end)).unwrap_or_default(),
            message: e.message().to_owned() + &line_col(text, e.span().map(|s| s.start)),
        })?;
        Ok(Self { path: path.to_path_buf(), raw })
    }

    /// Instance names and FMU paths (resolved relative to the system file), sorted by name.
    pub fn fmus(&self) -> Vec<(String, PathBuf)> {
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.raw.instances.iter().map(|(n, i)| (n.clone(), dir.join(&i.fmu))).collect()
    }

    /// The `[tune]` table, if any (configuration search settings, see [`crate::tune`]).
    pub fn tune_table(&self) -> Option<&toml::Value> {
        self.raw.tune.as_ref()
    }

    /// The system file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the instances run in worker processes: `over.isolate`, else `[simulation].isolate`
    /// (known before the FMUs are loaded, which depends on it).
    pub fn isolate(&self, over: &Overrides) -> bool {
        over.isolate.or(self.raw.simulation.isolate).unwrap_or(false)
    }

    /// Validates against the model descriptions (one per instance, in [`Draft::fmus`] order).
    pub fn resolve(&self, mds: &[&ModelDescription], over: &Overrides) -> Result<System> {
        Resolver { path: &self.path, raw: &self.raw, mds, names: self.raw.instances.keys().cloned().collect() }
            .resolve(over)
    }
}

fn line_col(text: &str, offset: Option<usize>) -> String {
    let Some(off) = offset else { return String::new() };
    let before = &text[..off.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(" (line {line}, column {col})")
}

struct Resolver<'a> {
    path: &'a Path,
    raw: &'a RawSystem,
    mds: &'a [&'a ModelDescription],
    names: Vec<String>,
}

impl Resolver<'_> {
    fn err(&self, key: impl Into<String>, message: impl Into<String>) -> MasterError {
        MasterError::System { path: self.path.to_path_buf(), key: key.into(), message: message.into() }
    }

    fn instance(&self, key: &str, name: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| self.err(key, format!("unknown instance \"{name}\" (instances: {})", self.names.join(", "))))
    }

    fn variable_of(&self, key: &str, instance: usize, name: &str) -> Result<VarRef> {
        let md = self.mds[instance];
        let v = md.variable(name).ok_or_else(|| {
            self.err(
                key,
                format!("instance \"{}\" ({}) has no variable \"{name}\"", self.names[instance], md.model_name),
            )
        })?;
        Ok(VarRef {
            instance,
            name: name.to_owned(),
            vr: v.value_reference,
            ty: v.kind.base_type(),
            causality: v.causality,
        })
    }

    /// `inst.var` (the variable name may itself contain dots).
    fn var(&self, key: &str, dotted: &str) -> Result<VarRef> {
        let (inst, var) = dotted
            .split_once('.')
            .ok_or_else(|| self.err(key, format!("\"{dotted}\" is not of the form instance.variable")))?;
        let i = self.instance(key, inst)?;
        self.variable_of(key, i, var)
    }

    fn extrapolation(
        &self,
        key: &str,
        v: Option<&toml::Value>,
        derivatives: Option<&Vec<String>>,
    ) -> Result<Extrapolation> {
        match v {
            None => Ok(Extrapolation::Order(0)),
            Some(toml::Value::Integer(m)) if (0..=4).contains(m) => Ok(Extrapolation::Order(*m as usize)),
            Some(toml::Value::String(s)) if s == "I2" => {
                let names = derivatives.ok_or_else(|| {
                    self.err(key, "extrapolation \"I2\" needs derivatives = [\"inst.ds_dt\", \"inst.d2s_dt2\"]")
                })?;
                if names.is_empty() || names.len() > 4 {
                    return Err(self.err(key, format!("I2 needs 1 to 4 derivative outputs, got {}", names.len())));
                }
                let derivatives =
                    names.iter().map(|n| self.var(&format!("{key}.derivatives"), n)).collect::<Result<Vec<_>>>()?;
                Ok(Extrapolation::I2 { derivatives })
            }
            Some(other) => Err(self.err(key, format!("extrapolation = {other} must be an integer 0..4 or \"I2\""))),
        }
    }

    fn start_value(&self, key: &str, var: &VarRef, value: &toml::Value) -> Result<StartValue> {
        let md = self.mds[var.instance];
        let bad = |want: &str| self.err(key, format!("{value} is not a valid {want} for {} ({})", var.name, var.ty));
        match (var.ty, value) {
            (BaseType::Real, toml::Value::Float(x)) => Ok(StartValue::Real(*x)),
            (BaseType::Real, toml::Value::Integer(x)) => Ok(StartValue::Real(*x as f64)),
            (BaseType::Integer, toml::Value::Integer(x)) => {
                i32::try_from(*x).map(StartValue::Integer).map_err(|_| bad("32-bit integer"))
            }
            (BaseType::Enumeration, toml::Value::Integer(x)) => {
                i32::try_from(*x).map(StartValue::Integer).map_err(|_| bad("enumeration value"))
            }
            (BaseType::Enumeration, toml::Value::String(item)) => {
                let sv = md.variable(&var.name);
                let ty = sv.and_then(|v| v.kind.declared_type()).and_then(|t| md.simple_type(t));
                match ty.map(|t| &t.kind) {
                    Some(SimpleTypeKind::Enumeration { items, .. }) => {
                        items.iter().find(|i| &i.name == item).map(|i| StartValue::Integer(i.value)).ok_or_else(|| {
                            let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
                            self.err(key, format!("\"{item}\" is not an item of {} ({})", var.name, names.join(", ")))
                        })
                    }
                    _ => Err(bad("enumeration item")),
                }
            }
            (BaseType::Boolean, toml::Value::Boolean(b)) => Ok(StartValue::Boolean(*b)),
            (BaseType::String, toml::Value::String(s)) => Ok(StartValue::String(s.clone())),
            (BaseType::Real, _) => Err(bad("number")),
            (BaseType::Integer, _) => Err(bad("integer")),
            (BaseType::Enumeration, _) => Err(bad("enumeration value or item name")),
            (BaseType::Boolean, _) => Err(bad("boolean")),
            (BaseType::String, _) => Err(bad("string")),
        }
    }

    fn compatible(from: BaseType, to: BaseType) -> bool {
        use BaseType as B;
        matches!(
            (from, to),
            (B::Real, B::Real)
                | (B::Integer | B::Enumeration, B::Integer | B::Enumeration)
                | (B::Boolean, B::Boolean)
                | (B::String, B::String)
        )
    }

    fn resolve(&self, over: &Overrides) -> Result<System> {
        let sim = &self.raw.simulation;
        let start = sim.start;
        let stop = over.stop.unwrap_or(sim.stop);
        let step = over.step.unwrap_or(sim.step);
        if !start.is_finite() {
            return Err(self.err("simulation.start", format!("{start} is not finite")));
        }
        if !(stop.is_finite() && stop > start) {
            return Err(self.err("simulation.stop", format!("stop time {stop} must be after the start time {start}")));
        }
        if !(step.is_finite() && step > 0.0) {
            return Err(self.err("simulation.step", format!("communication step {step} must be positive")));
        }
        let n = ((stop - start) / step).round();
        if (n * step - (stop - start)).abs() > 1e-9 * (stop - start).abs().max(step) {
            return Err(self.err(
                "simulation.step",
                format!("stop - start = {} s is not a whole number of communication steps H = {step} s", stop - start),
            ));
        }
        let algorithm = match (&over.algorithm, &sim.algorithm) {
            (Some(a), _) => *a,
            (None, None) => AlgorithmKind::Jacobi,
            (None, Some(s)) => AlgorithmKind::parse(s).ok_or_else(|| {
                self.err("simulation.algorithm", format!("\"{s}\" is not \"jacobi\" or \"gauss-seidel\""))
            })?,
        };
        let parallel = match (over.parallel, sim.parallel.as_deref()) {
            (Some(p), _) => p,
            (None, None | Some("auto")) => Parallel::Auto,
            (None, Some("on")) => Parallel::On,
            (None, Some("off")) => Parallel::Off,
            (None, Some(other)) => {
                return Err(self.err("simulation.parallel", format!("\"{other}\" is not \"auto\", \"on\" or \"off\"")))
            }
        };
        let isolate = over.isolate.or(sim.isolate).unwrap_or(false);
        let max_residual_energy = sim.max_residual_energy;
        if let Some(e) = max_residual_energy {
            if !(e.is_finite() && e > 0.0) {
                return Err(self.err("simulation.max_residual_energy", format!("{e} J must be positive and finite")));
            }
        }
        let iterations = sim.iterations.unwrap_or(1);
        if iterations == 0 {
            return Err(self.err("simulation.iterations", "must be at least 1 (1 = non-iterative coupling)"));
        }
        let iteration_tolerance = sim.iteration_tolerance.unwrap_or(1e-9);
        if !(iteration_tolerance.is_finite() && iteration_tolerance > 0.0) {
            return Err(self.err("simulation.iteration_tolerance", format!("{iteration_tolerance} must be positive")));
        }
        let record_every = sim.record_every.unwrap_or(1);
        if record_every == 0 {
            return Err(self.err("simulation.record_every", "must be at least 1"));
        }
        let order = match &sim.order {
            None => None,
            Some(names) => {
                let mut idx = Vec::new();
                for n in names {
                    let i = self.instance("simulation.order", n)?;
                    if idx.contains(&i) {
                        return Err(self.err("simulation.order", format!("instance \"{n}\" is listed twice")));
                    }
                    idx.push(i);
                }
                if idx.len() != self.names.len() {
                    let missing: Vec<&str> =
                        (0..self.names.len()).filter(|i| !idx.contains(i)).map(|i| self.names[i].as_str()).collect();
                    return Err(self.err("simulation.order", format!("missing instances: {}", missing.join(", "))));
                }
                Some(idx)
            }
        };
        let default_extrapolation = self.extrapolation("simulation.extrapolation", sim.extrapolation.as_ref(), None)?;

        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut instances = Vec::new();
        for (i, (name, ri)) in self.raw.instances.iter().enumerate() {
            let key = format!("instances.{name}");
            if name.is_empty() || name.contains('.') {
                return Err(self.err(&key, format!("instance name \"{name}\" must be non-empty without '.'")));
            }
            let substeps = match ri.step {
                None => 1,
                Some(h) => {
                    let k = (step / h).round();
                    if h.is_nan() || h <= 0.0 || k < 1.0 || (k * h - step).abs() > 1e-9 * step {
                        return Err(self.err(
                            format!("{key}.step"),
                            format!(
                                "step {h} s does not divide the communication step H = {step} s (H/h = {})",
                                step / h
                            ),
                        ));
                    }
                    k as u64
                }
            };
            let mut starts = Vec::new();
            for (var, value) in &ri.start {
                let k = format!("{key}.start.{var}");
                let v = self.variable_of(&k, i, var)?;
                if matches!(v.causality, Causality::Output | Causality::CalculatedParameter | Causality::Independent) {
                    return Err(
                        self.err(&k, format!("{var} has causality {} and cannot be given a start value", v.causality))
                    );
                }
                let value = self.start_value(&k, &v, value)?;
                starts.push((v, value));
            }
            instances.push(InstanceSpec { name: name.clone(), fmu: dir.join(&ri.fmu), substeps, starts });
        }

        let mut connections: Vec<Connection> = Vec::new();
        for (c, rc) in self.raw.connections.iter().enumerate() {
            let key = format!("connections[{c}]");
            let from = self.var(&format!("{key}.from"), &rc.from)?;
            let to = self.var(&format!("{key}.to"), &rc.to)?;
            if from.causality != Causality::Output {
                return Err(self.err(
                    format!("{key}.from"),
                    format!("{} has causality {}, a connection starts at an output", rc.from, from.causality),
                ));
            }
            if to.causality != Causality::Input {
                return Err(self.err(
                    format!("{key}.to"),
                    format!("{} has causality {}, a connection ends at an input", rc.to, to.causality),
                ));
            }
            if !Self::compatible(from.ty, to.ty) {
                return Err(
                    self.err(&key, format!("type mismatch: {} is {}, {} is {}", rc.from, from.ty, rc.to, to.ty))
                );
            }
            if let Some(prev) = connections.iter().position(|p| p.to == to) {
                return Err(
                    self.err(format!("{key}.to"), format!("{} is already connected by connections[{prev}]", rc.to))
                );
            }
            let mut extrapolation = match (&rc.extrapolation, over.extrapolation) {
                (_, Some(m)) if m <= 4 => Extrapolation::Order(m),
                (_, Some(m)) => return Err(self.err("--extrapolation", format!("{m} is not in 0..4"))),
                (None, None) => default_extrapolation.clone(),
                (Some(v), None) => {
                    self.extrapolation(&format!("{key}.extrapolation"), Some(v), rc.derivatives.as_ref())?
                }
            };
            if from.ty != BaseType::Real {
                extrapolation = Extrapolation::Order(0);
            }
            let gain = rc.gain.unwrap_or(1.0);
            let offset = rc.offset.unwrap_or(0.0);
            if from.ty != BaseType::Real && (gain != 1.0 || offset != 0.0) {
                return Err(self.err(&key, "gain and offset apply to Real connections only"));
            }
            connections.push(Connection { from, to, gain, offset, extrapolation });
        }

        let mut signals: Vec<Signal> = Vec::new();
        for (k, rs) in self.raw.inputs.iter().enumerate() {
            let key = format!("inputs[{k}]");
            let to = self.var(&format!("{key}.to"), &rs.to)?;
            if to.causality != Causality::Input || to.ty != BaseType::Real {
                return Err(self.err(format!("{key}.to"), format!("{} must be a Real input", rs.to)));
            }
            if connections.iter().any(|c| c.to == to) || signals.iter().any(|s| s.to == to) {
                return Err(self.err(format!("{key}.to"), format!("{} already has a connection or a signal", rs.to)));
            }
            if rs.times.is_empty() || rs.times.len() != rs.values.len() {
                return Err(self.err(
                    &key,
                    format!(
                        "times ({}) and values ({}) must be non-empty and of equal length",
                        rs.times.len(),
                        rs.values.len()
                    ),
                ));
            }
            if rs.times.windows(2).any(|w| w[1] <= w[0]) || rs.times.iter().chain(&rs.values).any(|x| !x.is_finite()) {
                return Err(
                    self.err(format!("{key}.times"), "times must be finite and strictly increasing, values finite")
                );
            }
            let linear = match rs.interpolation.as_deref() {
                None | Some("step") => false,
                Some("linear") => true,
                Some(other) => {
                    return Err(
                        self.err(format!("{key}.interpolation"), format!("\"{other}\" is not \"step\" or \"linear\""))
                    )
                }
            };
            signals.push(Signal { to, times: rs.times.clone(), values: rs.values.clone(), linear });
        }
        let mut bonds = Vec::new();
        for (b, rb) in self.raw.bonds.iter().enumerate() {
            let key = format!("bonds[{b}]");
            if rb.ports.len() != 2 {
                return Err(self.err(format!("{key}.ports"), format!("a bond has 2 ports, got {}", rb.ports.len())));
            }
            let mut ports = Vec::new();
            for (p, rp) in rb.ports.iter().enumerate() {
                let k = format!("{key}.ports[{p}]");
                let i = self.instance(&format!("{k}.instance"), &rp.instance)?;
                let effort = self.variable_of(&format!("{k}.effort"), i, &rp.effort)?;
                let flow = self.variable_of(&format!("{k}.flow"), i, &rp.flow)?;
                for v in [&effort, &flow] {
                    if v.ty != BaseType::Real || !matches!(v.causality, Causality::Input | Causality::Output) {
                        return Err(self.err(&k, format!("{} must be a Real input or output", v.name)));
                    }
                }
                let sign = rp.sign.unwrap_or(1.0);
                if sign != 1.0 && sign != -1.0 {
                    return Err(self.err(format!("{k}.sign"), format!("{sign} must be 1 or -1")));
                }
                ports.push(Port { effort, flow, sign });
            }
            let [a, b2]: [Port; 2] = ports.try_into().map_err(|_| self.err(&key, "a bond has 2 ports"))?;
            bonds.push(Bond { name: rb.name.clone(), ports: [a, b2] });
        }

        let outputs = match self.raw.outputs.as_ref().map(|o| &o.variables) {
            None => self.all_outputs(),
            Some(toml::Value::String(s)) if s == "all" => self.all_outputs(),
            Some(toml::Value::Array(items)) => {
                let mut v = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let key = format!("outputs.variables[{k}]");
                    let name = item.as_str().ok_or_else(|| self.err(&key, format!("{item} is not a string")))?;
                    let r = self.var(&key, name)?;
                    if r.ty == BaseType::String {
                        return Err(self.err(&key, format!("{name} is a String and cannot be recorded in CSV")));
                    }
                    v.push(r);
                }
                v
            }
            Some(other) => return Err(self.err("outputs.variables", format!("{other} must be \"all\" or a list"))),
        };

        Ok(System {
            path: self.path.to_path_buf(),
            start,
            stop,
            step,
            algorithm,
            order,
            parallel,
            record_every,
            isolate,
            max_residual_energy,
            iterations,
            iteration_tolerance,
            instances,
            connections,
            signals,
            bonds,
            outputs,
        })
    }

    fn all_outputs(&self) -> Vec<VarRef> {
        let mut v = Vec::new();
        for (i, md) in self.mds.iter().enumerate() {
            for sv in &md.model_variables {
                if sv.causality == Causality::Output && !matches!(sv.kind, VariableKind::String { .. }) {
                    v.push(VarRef {
                        instance: i,
                        name: sv.name.clone(),
                        vr: sv.value_reference,
                        ty: sv.kind.base_type(),
                        causality: sv.causality,
                    });
                }
            }
        }
        v
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use model_description::{Initial, ScalarVariable, Variability};

    fn var(name: &str, vr: u32, causality: Causality, kind: VariableKind) -> ScalarVariable {
        ScalarVariable {
            name: name.into(),
            value_reference: vr,
            description: None,
            causality,
            variability: if matches!(kind, VariableKind::Real { .. }) {
                Variability::Continuous
            } else {
                Variability::Discrete
            },
            initial: None::<Initial>,
            can_handle_multiple_set_per_time_instant: None,
            kind,
            annotations: Vec::new(),
            line: 0,
        }
    }

    fn real() -> VariableKind {
        VariableKind::Real {
            declared_type: None,
            attrs: Default::default(),
            start: Some(0.0),
            derivative: None,
            reinit: None,
        }
    }

    fn md() -> ModelDescription {
        ModelDescription {
            fmi_version: "2.0".into(),
            model_name: "m".into(),
            model_variables: vec![
                var("y", 0, Causality::Output, real()),
                var("u", 1, Causality::Input, real()),
                var(
                    "k",
                    2,
                    Causality::Input,
                    VariableKind::Integer { declared_type: None, attrs: Default::default(), start: Some(0) },
                ),
                var("b", 3, Causality::Output, VariableKind::Boolean { declared_type: None, start: None }),
            ],
            ..Default::default()
        }
    }

    fn resolve(text: &str) -> Result<System> {
        let base =
            "[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
        let m = md();
        Draft::parse(Path::new("sys.toml"), &format!("{base}{text}"))?.resolve(&[&m, &m], &Overrides::default())
    }

    fn message(r: Result<System>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn type_mismatch_and_double_connections_are_reported() {
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.k\"\n"));
        assert!(e.contains("sys.toml") && e.contains("connections[0]") && e.contains("type mismatch"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.b\"\nto = \"b.u\"\n"));
        assert!(e.contains("Boolean") && e.contains("Real"), "{e}");
        let e = message(resolve(
            "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.y\"\nto = \"b.u\"\n",
        ));
        assert!(e.contains("connections[1].to") && e.contains("already connected by connections[0]"), "{e}");
    }

    #[test]
    fn gauss_seidel_order_bonds_and_i2_are_checked() {
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n").and_then(|_| {
            let m = md();
            let text = "[simulation]\nstop = 1.0\nstep = 0.1\norder = [\"a\"]\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
            Draft::parse(Path::new("sys.toml"), text)?.resolve(&[&m, &m], &Overrides::default())
        }));
        assert!(e.contains("simulation.order") && e.contains("missing instances: b"), "{e}");
        let e = message(resolve(
            "[[bonds]]\nname = \"p\"\nports = [ { instance = \"a\", effort = \"y\", flow = \"k\" }, { instance = \"b\", effort = \"y\", flow = \"u\" } ]\n",
        ));
        assert!(e.contains("bonds[0].ports[0]") && e.contains("k must be a Real"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = \"I2\"\n"));
        assert!(e.contains("I2") && e.contains("derivatives"), "{e}");
        let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = 7\n"));
        assert!(e.contains("extrapolation = 7"), "{e}");
        let e = message(resolve("[outputs]\nvariables = [\"a.zz\"]\n"));
        assert!(e.contains("outputs.variables[0]") && e.contains("no variable \"zz\""), "{e}");
    }

    #[test]
    fn stop_must_be_a_whole_number_of_steps_and_overrides_apply() {
        let m = md();
        let text = "[simulation]\nstop = 1.05\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n";
        let e =
            message(Draft::parse(Path::new("sys.toml"), text).and_then(|d| d.resolve(&[&m], &Overrides::default())));
        assert!(e.contains("simulation.step") && e.contains("whole number"), "{e}");
        let over = Overrides { stop: Some(2.0), step: Some(0.5), ..Default::default() };
        let sys = Draft::parse(Path::new("sys.toml"), text).and_then(|d| d.resolve(&[&m], &over)).unwrap();
        assert_eq!((sys.stop, sys.step, sys.steps()), (2.0, 0.5, 4));
        // Default outputs: every output of every instance.
        assert_eq!(sys.outputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["y", "b"]);
    }
}
