//! What a model implements: [`CoSimModel`].

use crate::state::StateVisitor;
use crate::variable::Variable;

/// Static facts about a model: names, documentation, default experiment.
#[derive(Debug, Clone, Copy)]
pub struct ModelInfo {
    /// `modelName`.
    pub model_name: &'static str,
    /// `modelIdentifier`: the binary's file name inside the FMU; the FMU file is
    /// `<fmu_name>.fmu`.
    pub model_identifier: &'static str,
    /// File name of the FMU without `.fmu`, e.g. `oscillator-fd-m1`.
    pub fmu_name: &'static str,
    /// One-paragraph description (`description` attribute).
    pub description: &'static str,
    /// Model documentation for `documentation/index.html`: equations and sources, as HTML.
    pub documentation_html: &'static str,
    /// The paper and section the physics comes from.
    pub source: &'static str,
    /// `DefaultExperiment`: start time, stop time, step size (s).
    pub default_experiment: (f64, f64, f64),
    /// Highest order of `fmi2SetRealInputDerivatives` the model uses (0: inputs are held).
    pub interpolates_inputs: bool,
}

/// A model error: the message names the variable, the value and the time where it applies.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

impl ModelError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// Passed to model calls so they can report warnings (logged under `logStatusWarning`; the call
/// then returns `fmi2Warning`), physical states worth a warning ([`Context::report`]: logged the
/// same way, the call returns `fmi2OK`), informational messages (`logAll`) and, from `do_step`,
/// that the step could not be completed ([`Context::discard`]).
#[derive(Debug, Default)]
pub struct Context {
    pub(crate) warnings: Vec<String>,
    pub(crate) reports: Vec<String>,
    pub(crate) infos: Vec<String>,
    pub(crate) want_infos: bool,
    pub(crate) discarded: Option<String>,
    pub(crate) terminated: Option<(f64, String)>,
}

impl Context {
    /// Reports a warning: the call returns `fmi2Warning`. For what FMI 2.0 means by it: the
    /// computation goes on but something is not quite right with it (an explicit integrator
    /// outside its stability region, a penalty too small for the step, an input out of range).
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings.push(msg.into());
    }

    /// Reports a physical state the model handles and the user should know of (cavitation, a
    /// piston beyond its stroke, negative pressure integrated through): logged as a warning
    /// (category `logStatusWarning`, status `fmi2Warning` in the logger callback) while the call
    /// returns `fmi2OK`, since the step is as valid as any other. Many importers (OMSimulator
    /// among them) stop a simulation on any status other than `fmi2OK`.
    pub fn report(&mut self, msg: impl Into<String>) {
        self.reports.push(msg.into());
    }

    /// The physical-state reports so far (for tests and in-process drivers).
    pub fn reports(&self) -> &[String] {
        &self.reports
    }

    /// From [`CoSimModel::do_step`]: the step could not be completed (e.g. a solver needs a
    /// smaller communication step). The model then returns `Ok(())` with its state left at the
    /// step's start `t`; `fmi2DoStep` returns `fmi2Discard` with `msg` logged, the instance enters
    /// *stepFailed* (getters, `fmi2GetRealStatus(fmi2LastSuccessfulTime)` = t, `fmi2Terminate`,
    /// `fmi2Reset`) and no further step is possible. Requested from any other call, it is logged as a warning
    /// and otherwise ignored.
    pub fn discard(&mut self, msg: impl Into<String>) {
        self.discarded = Some(msg.into());
    }

    /// From [`CoSimModel::do_step`] over [t, t + h]: the model has reached the end of its
    /// simulation (e.g. a terminal state) at time `at` (t ≤ at ≤ t + h) and left its state there;
    /// it returns `Ok(())`. This is FMI 2.0's way for a slave to end the simulation (§4.2.3):
    /// `fmi2DoStep` returns `fmi2Discard` with `msg` logged,
    /// `fmi2GetBooleanStatus(fmi2Terminated)` is then true and
    /// `fmi2GetRealStatus(fmi2LastSuccessfulTime)` is `at`. The instance is in *stepFailed*: the
    /// getters (outputs at `at`), the status functions, `fmi2Terminate`, `fmi2Reset` and
    /// `fmi2FreeInstance` are allowed, no further step and no setter. An `at` outside [t, t + h]
    /// makes the step fail (fmi2Error). Takes precedence over [`Context::discard`]; requested from
    /// any other call, it is logged as a warning and otherwise ignored.
    pub fn terminate(&mut self, at: f64, msg: impl Into<String>) {
        self.terminated = Some((at, msg.into()));
    }

    /// The termination request (time, message), if any (for tests and in-process drivers).
    pub fn terminated(&self) -> Option<(f64, &str)> {
        self.terminated.as_ref().map(|(t, m)| (*t, m.as_str()))
    }

    /// The discard request, if any (for tests and in-process drivers).
    pub fn discarded(&self) -> Option<&str> {
        self.discarded.as_deref()
    }

    /// The warnings reported so far (for tests and in-process drivers).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Reports an informational message, if the `logAll` category is enabled.
    pub fn info(&mut self, msg: impl FnOnce() -> String) {
        if self.want_infos {
            self.infos.push(msg());
        }
    }
}

/// A co-simulation model. The export layer ([`crate::define_fmus`], [`crate::export_fmi2`]) turns
/// it into an FMI 2.0 Co-Simulation FMU.
///
/// Call order (the FMI 2.0 state machine is enforced by the export layer, not by the model):
/// 1. `Default::default()` at `fmi2Instantiate` and `fmi2Reset`: parameters at their start values.
/// 2. Setters of parameters and inputs (through [`Variable`]s).
/// 3. [`initialize`](Self::initialize), possibly several times during initialization mode
///    (after each change of a parameter, before a value is read) and always once at
///    `fmi2ExitInitializationMode`. It must be idempotent: set the states from the parameters.
/// 4. Repeatedly: input setters, [`do_step`](Self::do_step), getters. Getters see the state at
///    the end of the last step and the inputs as last set; [`evaluate`](Self::evaluate) is called
///    before a getter when an input changed since the last evaluation.
///
/// Errors: an `Err` from `initialize` or `do_step` makes the FMU return `fmi2Error` with the
/// message logged; the instance must then be reset or freed.
pub trait CoSimModel: Clone + Default + Send + 'static {
    /// Names, documentation and default experiment.
    fn info() -> ModelInfo;

    /// The variable table. Value reference = position in this table.
    fn variables() -> Vec<Variable<Self>>;

    /// Computes the initial state and calculated parameters from the parameters, at `t0`.
    fn initialize(&mut self, t0: f64, ctx: &mut Context) -> Result<(), ModelError>;

    /// Updates outputs that depend on inputs without a step (direct feedthrough). Default: none.
    fn evaluate(&mut self, _ctx: &mut Context) -> Result<(), ModelError> {
        Ok(())
    }

    /// Advances from `t` to `t + h`. Inputs are read through their [`crate::InputSignal`] as
    /// polynomials in `τ ∈ [0, h]`.
    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError>;

    /// The model's continuous states, when it is also a Model Exchange FMU: `Some(Ode::of::<Self>())`
    /// from an [`crate::ode::OdeModel`]. Default: none (Co-Simulation only).
    fn model_exchange() -> Option<Ode<Self>> {
        None
    }

    /// Visits every field of the model state — parameters, states, inputs, counters — in a fixed
    /// order. Used both to serialize and to deserialize `fmi2FMUstate`s.
    fn visit_state(&mut self, v: &mut dyn StateVisitor);
}

/// The [`crate::ode::OdeModel`] functions of `M`, as the type-erased export layer keeps them (a
/// [`CoSimModel`] cannot be asked whether it is an `OdeModel`, so it hands this table in; made by
/// `Ode::of` in `ode.rs`, declared here so that this module does not import that one).
pub struct Ode<M> {
    /// (state, derivative) variable names.
    pub states: &'static [(&'static str, &'static str)],
    /// Number of event indicators.
    pub event_indicators: usize,
    /// [`crate::ode::OdeModel::states`].
    pub get: fn(&M, &mut [f64]),
    /// [`crate::ode::OdeModel::set_states`].
    pub set: fn(&mut M, &[f64]),
    /// [`crate::ode::OdeModel::derivatives`].
    pub derivatives: fn(&mut M, f64, &mut [f64], &mut Context) -> Result<(), ModelError>,
    /// [`crate::ode::OdeModel::nominals`].
    pub nominals: fn(&M, &mut [f64]),
    /// [`crate::ode::OdeModel::event_indicators`].
    pub indicators: fn(&mut M, f64, &mut [f64]) -> Result<(), ModelError>,
}
