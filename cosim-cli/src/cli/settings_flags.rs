//! `cosim run`'s flags for the settings ([`master::system::Settings`]). `--set KEY=VALUE` reaches
//! every setting; the named flags are sugar for the common ones, serialized under the settings'
//! own keys and set the same way ([`Settings::set`]): no list here to keep in step with the
//! settings, and a new setting needs no flag.

use anyhow::{anyhow, Result};
use master::system::{
    AlgorithmKind, CorrectionLaw, Exchange, InterfaceKind, Parallel, Settings, SolverKind, StepControlKind,
};
use std::collections::BTreeMap;

/// The settings given on the command line.
#[derive(clap::Args, serde::Serialize, Debug, Default)]
pub struct SettingsFlags {
    /// Start time (s), overrides [simulation].start or the FMU's DefaultExperiment.
    #[arg(long)]
    #[serde(rename = "start")]
    start_time: Option<f64>,
    /// Stop time (s), overrides [simulation].stop or the FMU's DefaultExperiment.
    #[arg(long)]
    #[serde(rename = "stop")]
    stop_time: Option<f64>,
    /// Communication step H (s), overrides [simulation].step or the FMU's DefaultExperiment.
    #[arg(long)]
    step: Option<f64>,
    /// Coupling scheme, overrides [simulation].algorithm.
    #[arg(long, value_enum)]
    algorithm: Option<AlgorithmKind>,
    /// Jacobi worker threads, overrides [simulation].parallel.
    #[arg(long, value_enum)]
    parallel: Option<Parallel>,
    /// How the inputs at t_n are taken from the outputs: `ordered` (default: feedthrough
    /// outputs re-read after their instance's inputs are set) or `explicit` (the papers'
    /// explicit Jacobi: every output read once at t_n); overrides [simulation].exchange.
    #[arg(long, value_enum)]
    exchange: Option<Exchange>,
    /// Run every instance in its own worker process: an FMU that crashes ends the run with a
    /// message instead of taking cosim down (overrides [simulation].isolate).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    isolate: bool,
    /// How H is chosen: `fixed` or `ecco` (adaptive from the bonds' residual energy;
    /// overrides [simulation].step_control).
    #[arg(long, value_enum)]
    step_control: Option<StepControlKind>,
    /// ECCO: relative tolerance on a step's residual energy (overrides [simulation.ecco].rtol).
    #[arg(long)]
    #[serde(rename = "ecco.rtol")]
    ecco_rtol: Option<f64>,
    /// ECCO: absolute tolerance on a step's residual energy, J ([simulation.ecco].atol).
    #[arg(long)]
    #[serde(rename = "ecco.atol")]
    ecco_atol: Option<f64>,
    /// ECCO: smallest communication step, s ([simulation.ecco].h_min).
    #[arg(long)]
    #[serde(rename = "ecco.h_min")]
    h_min: Option<f64>,
    /// ECCO: largest communication step, s ([simulation.ecco].h_max).
    #[arg(long)]
    #[serde(rename = "ecco.h_max")]
    h_max: Option<f64>,
    /// Energy correction on every bond: `true` or `false` (overrides [simulation] and
    /// [[bonds]] energy_correction).
    #[arg(long)]
    energy_correction: Option<bool>,
    /// Energy correction law of every bond: `input` (each input its own energy error) or
    /// `bond` (overrides [simulation] and [[bonds]] energy_correction_law).
    #[arg(long, value_parser = CorrectionLaw::parse)]
    energy_correction_law: Option<CorrectionLaw>,
    /// Pace the run to the wall clock: FACTOR simulated seconds per second (default 1 = real
    /// time; overrides [simulation].real_time). summary.json then reports step times,
    /// overruns and lateness.
    #[arg(long, value_name = "FACTOR", num_args = 0..=1, default_missing_value = "1")]
    real_time: Option<f64>,
    /// End a paced run when a communication point is reached more than this many seconds
    /// after its deadline (overrides [simulation].max_lateness).
    #[arg(long, value_name = "SECONDS")]
    max_lateness: Option<f64>,
    /// Lock memory (mlockall) and run the stepping thread under SCHED_FIFO where the OS
    /// permits; a note in summary.json otherwise ([simulation].real_time_priority).
    #[arg(long)]
    #[serde(rename = "real_time_priority", skip_serializing_if = "std::ops::Not::not")]
    rt_priority: bool,
    /// The interface of an FMU that has both: `cs` (default) or `me` (Model Exchange, integrated
    /// by cosim; FMPy's --interface-type ModelExchange|CoSimulation too; [simulation].interface).
    #[arg(long, value_enum, alias = "interface-type")]
    interface: Option<InterfaceKind>,
    /// The integrator of Model Exchange FMUs: `bdf` (default, variable step; FMPy's `CVode`),
    /// `euler` or `rk4` ([simulation].solver).
    #[arg(long, value_enum)]
    solver: Option<SolverKind>,
    /// Relative tolerance of the Model Exchange integrator ([simulation].relative_tolerance).
    #[arg(long)]
    relative_tolerance: Option<f64>,
    /// Any setting of [simulation], KEY=VALUE with the value in TOML syntax (a bare word is a
    /// string); dotted keys for [simulation.ecco]: `--set iterations=5 --set ecco.safety=0.8`.
    /// Repeatable; applied after the flags above.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    #[serde(skip)]
    set: Vec<String>,
}

impl SettingsFlags {
    /// The settings these flags give (`None` where none was given) and how each was given
    /// (`start` → `--start-time` or `--set start`, the last one given: `Overrides::given_as`).
    pub fn settings(&self) -> Result<(Settings, BTreeMap<String, String>)> {
        let mut s = Settings::default();
        let mut given_as = BTreeMap::new();
        let flags = toml::Table::try_from(self)?;
        for (key, value) in flags {
            let flag = match key.as_str() {
                "start" => "--start-time".to_owned(),
                "stop" => "--stop-time".to_owned(),
                "ecco.h_min" | "ecco.h_max" => format!("--{}", key.trim_start_matches("ecco.").replace('_', "-")),
                "real_time_priority" => "--rt-priority".to_owned(),
                _ => format!("--{}", key.replace(['_', '.'], "-")),
            };
            s.set(&key, value).map_err(|m| anyhow!("{flag}: {m}"))?;
            given_as.insert(key, flag);
        }
        for arg in &self.set {
            s.set_arg(arg).map_err(|m| anyhow!("--set {m}"))?;
            if let Some((key, _)) = arg.split_once('=') {
                given_as.insert(key.trim().to_owned(), format!("--set {}", key.trim()));
            }
        }
        Ok((s, given_as))
    }
}
