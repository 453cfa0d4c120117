//! The run's outcome as `summary.json` holds it: [`Summary`] and its parts.

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Reached the stop time (or the time asked for).
    Ok,
    /// Stopped by an error (the summary's message says which).
    Failed,
    /// Stopped by SIGINT/SIGTERM.
    Interrupted,
    /// Still running: written into `summary.json` before the first step, so that a run that
    /// never finishes (the process killed, an FMU crashing it) is not mistaken for a
    /// completed one.
    Running,
    /// An instance ended the simulation before the stop time (FMI 2.0 `fmi2Terminated`): a
    /// successful run, up to that instance's `fmi2LastSuccessfulTime` (the summary's `time`;
    /// the message says "terminated by <instance> at t = …").
    Terminated,
}

/// Final state of a run, for `summary.json`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// `ok`, `failed`, `interrupted`, `terminated`, or `running` while the run is in progress.
    pub status: Status,
    /// Empty on success, else what happened (instance, time, variable).
    pub message: String,
    /// Communication steps completed.
    pub steps: u64,
    /// Simulated time reached (s).
    pub time: f64,
    /// Wall-clock time (s).
    pub wall_time_s: f64,
    /// Algorithm.
    pub algorithm: String,
    /// Communication step (s; the initial one with step control).
    pub step_size: f64,
    /// `fixed` or `ecco` (`[simulation] step_control`).
    #[serde(default)]
    pub step_control: String,
    /// With step control: the smallest and largest communication step taken (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_size_range: Option<[f64; 2]>,
    /// Whether Jacobi used worker threads.
    pub parallel: bool,
    /// `ordered` or `explicit` (`[simulation] exchange`).
    #[serde(default)]
    pub exchange: String,
    /// Per instance.
    pub instances: Vec<InstanceSummary>,
    /// Per bond.
    pub bonds: Vec<BondSummary>,
    /// Iterative coupling (`iterations > 1`): passes, and steps that ended unconverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<IterationSummary>,
    /// Unit of each results.csv column that has one (`time`: s), from the model descriptions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub units: std::collections::BTreeMap<String, String>,
    /// The results.csv columns that hold FMI 3.0 Binary values (hexadecimal, not numbers);
    /// absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binary_columns: Vec<String>,
    /// The times (s) at which a live client reset the run (`{"reset": true}`, docs/live.md):
    /// results.csv and bonds.csv hold the run after the last of them; absent without resets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live_resets: Vec<f64>,
    /// What the scheme reports of itself ([`crate::algorithm::Algorithm::stats`]; a scheme
    /// from outside the crate too).
    #[serde(default)]
    pub algorithm_stats: AlgorithmStats,
    /// Paced runs (`--real-time`): overruns, lateness and step wall times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_time: Option<crate::realtime::RealTimeSummary>,
}

/// A scheme's own counts (`summary.json` `algorithm_stats`): zero where the scheme has no such
/// thing (Jacobi and Gauss-Seidel pass once and never reject a step).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AlgorithmStats {
    /// Passes over the instances in all (iterative coupling: every repetition of a step).
    pub iterations: u64,
    /// Steps that ended without converging (their values are the last pass's).
    pub unconverged_steps: u64,
    /// Steps rejected and repeated with a smaller communication step.
    pub rejected_steps: u64,
}

/// How iterative coupling went (`summary.json` `iterations`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IterationSummary {
    /// Passes allowed per step (`[simulation] iterations`).
    pub limit: u32,
    /// Convergence tolerance (`[simulation] iteration_tolerance`).
    pub tolerance: f64,
    /// Passes done in all.
    pub passes: u64,
    /// Steps that reached the pass limit without converging (their values are the last pass's).
    pub unconverged_steps: u64,
}

impl Summary {
    /// A warning when iterative coupling left steps unconverged (issue 30 item 12: said nothing).
    pub fn iteration_warning(&self) -> Option<String> {
        let it = self.iterations.as_ref().filter(|i| i.unconverged_steps > 0)?;
        Some(format!(
            "{} of {} communication steps did not converge within iterations = {} (iteration_tolerance = {:e}); \
             their values are those of the last pass",
            it.unconverged_steps, self.steps, it.limit, it.tolerance
        ))
    }
}

/// Per-instance statistics.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct InstanceSummary {
    /// Name.
    pub name: String,
    /// FMU file.
    pub fmu: String,
    /// Macro-step doStep calls (sub-steps count once).
    pub do_step_calls: u64,
    /// Seconds inside doStep (timed on the first 64 steps and every 16th after, scaled to all).
    pub do_step_seconds: f64,
    /// Warnings the FMU gave (fmi2Warning messages and calls), printed or not (`COSIM_LOG`,
    /// `--fmu-log`); not counted for isolated instances.
    #[serde(default)]
    pub fmu_warnings: u64,
    /// A Model Exchange instance: its integration statistics (absent for Co-Simulation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<SolverSummary>,
}

/// The integration statistics of a Model Exchange instance (summed over the run, every restart
/// of the integrator included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SolverSummary {
    /// Internal steps accepted.
    pub steps: u64,
    /// Right-hand-side evaluations (`fmi2GetDerivatives`; the Jacobian's columns included).
    pub rhs_evaluations: u64,
    /// Evaluations of the event indicators.
    pub event_indicator_evaluations: u64,
    /// Jacobians formed (BDF; by finite differences).
    pub jacobians: u64,
    /// Steps rejected (error test and Newton failures).
    pub rejected_steps: u64,
    /// Of which by the error test.
    pub error_test_failures: u64,
    /// Of which because Newton's iteration did not converge.
    pub convergence_failures: u64,
    /// Events handled (the initialization event not counted): time, state and step events, and
    /// those of discrete inputs set between steps.
    pub events: u64,
    /// Time events (`nextEventTime` reached).
    pub time_events: u64,
    /// State events (an event indicator crossed zero).
    pub state_events: u64,
    /// Step events (`completedIntegratorStep` asked for event mode).
    pub step_events: u64,
}

impl From<crate::fmu::me::MeStats> for SolverSummary {
    fn from(m: crate::fmu::me::MeStats) -> Self {
        let s = m.solver;
        Self {
            steps: s.steps,
            rhs_evaluations: s.rhs_evaluations,
            event_indicator_evaluations: s.root_evaluations,
            jacobians: s.jacobians,
            rejected_steps: s.rejected_steps,
            error_test_failures: s.error_test_failures,
            convergence_failures: s.convergence_failures,
            events: m.events,
            time_events: m.time_events,
            state_events: m.state_events,
            step_events: m.step_events,
        }
    }
}

/// Per-bond totals.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BondSummary {
    /// Name.
    pub name: String,
    /// Σ δE (J).
    pub energy: f64,
    /// Whether the bond corrected its residual energy.
    #[serde(default)]
    pub energy_correction: bool,
    /// Σ δE without the correction (J; = `energy` without correction).
    #[serde(default)]
    pub energy_uncorrected: f64,
    /// Σ |δE| without the correction (J).
    #[serde(default)]
    pub energy_abs_uncorrected: f64,
    /// Σ |δE| (J).
    pub energy_abs: f64,
}
