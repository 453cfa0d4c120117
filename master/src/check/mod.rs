//! `cosim check X.fmu`: a behavioural FMI 2.0 compliance checker. Beyond the XML (which the
//! FMI Compliance Checker and `fmpy validate` check too), it runs the FMU the way a master does and
//! tells whether what the FMU declares holds: states that restore, dependencies that are true,
//! instances that are independent, legal calls that work and illegal ones that are refused.
//!
//! Every dynamic check runs in its own worker process (`cosim check-worker`, [`worker`]): a crash,
//! an `exit()` or a hang of the FMU is that check's FAIL (with the call it happened in and, for a
//! hang, the timeout), never the checker's end, and the worker's process group is killed after
//! each check, so nothing is left running. After a hang the remaining dynamic checks are SKIP
//! (the report ends within about one timeout).
//!
//! One file per family: [`statics`] (description, binary), [`lifecycle`] (load, reset, free
//! without terminate, instances, threads), [`calls`] (legal calls a master may make), [`illegal`]
//! (illegal calls), [`state`] (FMU states), [`structure`] (declared vs measured dependencies),
//! [`configure`] (FMI 3.0 structural parameters), [`run`] (determinism and finiteness), [`cost`] (time per step, memory over instantiate/free
//! cycles), [`me`] (Model Exchange). [`CHECKS`] is the one list of checks; docs/check.md describes each.

pub mod calls;
pub mod configure;
pub mod cost;
pub mod illegal;
pub mod lifecycle;
pub mod me;
pub mod output;
pub mod probe;
pub mod raw;
pub mod run;
pub mod state;
pub mod statics;
pub mod structure;
pub mod worker;

use crate::error::{MasterError, Result};
use crate::system::StartValue;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// The FMU does what the standard and its description say.
    Pass,
    /// Not run: the FMU does not declare the capability (or an earlier check made it pointless).
    Skip,
    /// Legal but suspicious, or against the letter of the standard without harm to an importer
    /// (a warning status, a declared dependency that does not show, a leak, a parameter among
    /// the dependencies).
    Warn,
    /// A check that races gave different verdicts in its repeated runs without failing in any
    /// (PASS in some, WARN in others); exit code 2 when nothing FAILs. A run that FAILed makes the
    /// check FAIL ("intermittent: failed in k of n runs", [`settle`]).
    Intermittent,
    /// The FMU breaks the standard or its own description, crashed or hung.
    Fail,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pass => "PASS",
            Self::Skip => "SKIP",
            Self::Warn => "WARN",
            Self::Intermittent => "INTERMITTENT",
            Self::Fail => "FAIL",
        })
    }
}

/// What a check found: its verdict and the evidence (values, times, calls).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// The evidence, one line.
    pub evidence: String,
}

impl Outcome {
    /// PASS with `evidence`.
    pub fn pass(evidence: impl Into<String>) -> Self {
        Self { verdict: Verdict::Pass, evidence: evidence.into() }
    }
    /// WARN with `evidence`.
    pub fn warn(evidence: impl Into<String>) -> Self {
        Self { verdict: Verdict::Warn, evidence: evidence.into() }
    }
    /// FAIL with `evidence`.
    pub fn fail(evidence: impl Into<String>) -> Self {
        Self { verdict: Verdict::Fail, evidence: evidence.into() }
    }
    /// SKIP with the reason.
    pub fn skip(evidence: impl Into<String>) -> Self {
        Self { verdict: Verdict::Skip, evidence: evidence.into() }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The check's id (`state`, `feedthrough`, …).
    pub check: String,
    /// Its family (1 static … 8 cost, the numbering).
    pub family: String,
    /// What it checks.
    pub title: String,
    /// The FMI 2.0 section it rests on.
    pub section: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The evidence.
    pub evidence: String,
    /// Wall time of the check (s), worker start and FMU load included.
    pub seconds: f64,
    /// A check that races: how many of its repeated runs failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Runs>,
}

/// The repeated runs of a check that races ([`Check::racy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runs {
    /// Runs made.
    pub of: u32,
    /// Runs that FAILed.
    pub failed: u32,
}

/// How a check runs: in the checker itself (reads files only) or in a worker process (runs the FMU).
#[derive(Clone, Copy)]
pub enum Runner {
    /// Reads the archive and the description; never runs FMU code.
    Parent(fn(&statics::Static<'_>) -> Outcome),
    /// Runs FMU code, in a worker process.
    Worker(fn(&mut probe::Probe) -> Outcome),
}

/// One check of [`CHECKS`].
pub struct Check {
    /// Short id (`cosim check --only ID`, the JSON's `check`).
    pub id: &'static str,
    /// Family.
    pub family: &'static str,
    /// What it checks.
    pub title: &'static str,
    /// The FMI 2.0 section it rests on.
    pub section: &'static str,
    /// What it rests on in FMI 3.0 (the anchors of the standard's HTML, fmi-standard.org/docs/3.0.1/).
    pub section3: &'static str,
    /// How it runs.
    pub runner: Runner,
    /// Its verdict depends on timing (threads): it runs [`Options::repeat`] times, in a new worker
    /// each ([`settle`]).
    pub racy: bool,
}

/// Every check, in report order: the one list.
pub const CHECKS: &[Check] = &[
    Check {
        id: "description",
        family: "static",
        title: "modelDescription.xml against the standard",
        section: "FMI 2.0 §2.2",
        section3: "FMI 3.0 #fmi-description-schema",
        runner: Runner::Parent(statics::description),
        racy: false,
    },
    Check {
        id: "binary",
        family: "static",
        title: "linux64 binary: x86-64 shared library exporting the FMI 2.0 CS API",
        section: "FMI 2.0 §2.1.1, §2.3, §4.2",
        section3: "FMI 3.0 #fmu-distribution, #fmi3InstantiateCoSimulation",
        runner: Runner::Parent(statics::binary),
        racy: false,
    },
    Check {
        id: "load",
        family: "static",
        title: "load, platform and version, instantiate/free, capability flags vs functions",
        section: "FMI 2.0 §2.1.4, §2.1.5, §4.3.1",
        section3: "FMI 3.0 #fmi3GetVersion, #fmi3InstantiateCoSimulation, #fmi3GetOutputDerivatives",
        runner: Runner::Worker(lifecycle::load),
        racy: false,
    },
    Check {
        id: "run",
        family: "run",
        title: "the experiment: every status fmi2OK, every output finite, same run twice bit for bit",
        section: "FMI 2.0 §2.1.3, §4.2.2",
        section3: "FMI 3.0 #fmi3DoStep, #state-machine-co-simulation",
        runner: Runner::Worker(run::run),
        racy: false,
    },
    Check {
        id: "reset",
        family: "life cycle",
        title: "run, terminate, fmi2Reset, run again: identical",
        section: "FMI 2.0 §2.1.6, §4.2.4",
        section3: "FMI 3.0 #fmi3Reset",
        runner: Runner::Worker(lifecycle::reset),
        racy: false,
    },
    Check {
        id: "free-without-terminate",
        family: "life cycle",
        title: "fmi2FreeInstance while stepping (no fmi2Terminate), then a new instance runs",
        section: "FMI 2.0 §2.1.5, §4.2.4",
        section3: "FMI 3.0 #fmi3FreeInstance",
        runner: Runner::Worker(lifecycle::free_without_terminate),
        racy: false,
    },
    Check {
        id: "instances",
        family: "life cycle",
        title: "two instances at once, stepped alternately: independent and bit-identical",
        section: "FMI 2.0 §2.1.5",
        section3: "FMI 3.0 #fmi3InstantiateCoSimulation",
        runner: Runner::Worker(lifecycle::instances),
        racy: false,
    },
    Check {
        id: "threads",
        family: "life cycle",
        title: "two instances on two threads at once: same results as sequentially",
        section: "FMI 2.0 §2.1.5 (thread safety per instance)",
        section3: "FMI 3.0 #fmi3InstantiateCoSimulation (thread safety per instance)",
        runner: Runner::Worker(lifecycle::threads),
        racy: true,
    },
    Check {
        id: "getters",
        family: "legal calls",
        title: "getters in initialization mode, after steps and after fmi2Terminate",
        section: "FMI 2.0 §2.1.7, §4.2.4",
        section3: "FMI 3.0 #get-and-set-variable-values, #fmi3Terminate",
        runner: Runner::Worker(calls::getters),
        racy: false,
    },
    Check {
        id: "inputs",
        family: "legal calls",
        title: "inputs set between steps, and outside their declared min/max (refused or handled)",
        section: "FMI 2.0 §2.1.7, §2.2.7, §4.2.1",
        section3: "FMI 3.0 #get-and-set-variable-values, #definition-of-model-variables",
        runner: Runner::Worker(calls::inputs),
        racy: false,
    },
    Check {
        id: "variable-step",
        family: "legal calls",
        title: "canHandleVariableCommunicationStepSize: halved steps give the same trajectory",
        section: "FMI 2.0 §4.2.2, §4.3.1",
        section3: "FMI 3.0 #fmi3DoStep (canHandleVariableCommunicationStepSize)",
        runner: Runner::Worker(calls::variable_step),
        racy: false,
    },
    Check {
        id: "zero-step",
        family: "legal calls",
        title: "fmi2DoStep with communicationStepSize = 0 accepted as a no-op or refused",
        section: "FMI 2.0 §4.2.2",
        section3: "FMI 3.0 #fmi3DoStep",
        runner: Runner::Worker(calls::zero_step),
        racy: false,
    },
    Check {
        id: "illegal",
        family: "illegal calls",
        title: "wrong-state calls, unknown value references, setting outputs, NULL instance/state, wrong GUID",
        section: "FMI 2.0 §2.1.3, §2.1.5, §2.1.7, §2.1.8, §4.2.4",
        section3: "FMI 3.0 #state-machine-co-simulation, #fmi3FreeInstance, #fmi3FreeFMUState",
        runner: Runner::Worker(illegal::illegal),
        racy: false,
    },
    Check {
        id: "state",
        family: "state",
        title: "fmi2GetFMUstate, steps, fmi2SetFMUstate, the same steps: bit-identical; states freed",
        section: "FMI 2.0 §2.1.8",
        section3: "FMI 3.0 #fmi3GetFMUState, #fmi3SetFMUState, #fmi3FreeFMUState",
        runner: Runner::Worker(state::restore),
        racy: false,
    },
    Check {
        id: "serialize",
        family: "state",
        title: "serialize, deserialize into a fresh instance: identical continuation",
        section: "FMI 2.0 §2.1.8",
        section3: "FMI 3.0 #fmi3SerializeFMUState, #fmi3DeserializeFMUState",
        runner: Runner::Worker(state::serialize),
        racy: false,
    },
    Check {
        id: "feedthrough",
        family: "structure",
        title: "outputs that respond to inputs without a step are declared in ModelStructure/Outputs",
        section: "FMI 2.0 §2.2.8",
        section3: "FMI 3.0 #modelStructure (Output dependencies)",
        runner: Runner::Worker(structure::feedthrough),
        racy: false,
    },
    Check {
        id: "initial-unknowns",
        family: "structure",
        title: "outputs that respond to inputs in initialization mode are declared in InitialUnknowns",
        section: "FMI 2.0 §2.2.8",
        section3: "FMI 3.0 #modelStructure (InitialUnknown dependencies)",
        runner: Runner::Worker(structure::initial_unknowns),
        racy: false,
    },
    Check {
        id: "interpolate",
        family: "structure",
        title: "canInterpolateInputs: input derivatives change the result",
        section: "FMI 2.0 §4.2.1, §4.3.1",
        section3: "FMI 3.0: no input derivatives",
        runner: Runner::Worker(structure::interpolate),
        racy: false,
    },
    Check {
        id: "structural",
        family: "structure",
        title: "FMI 3.0 structural parameters: another value configured, arrays at its sizes, the round trip",
        section: "FMI 2.0: no structural parameters",
        section3: "FMI 3.0 #structuralParameter, #fmi3EnterConfigurationMode",
        runner: Runner::Worker(configure::structural),
        racy: false,
    },
    Check {
        id: "cost",
        family: "cost",
        title: "time per fmi2DoStep (median, max); memory over instantiate/free cycles (leak WARN)",
        section: "FMI 2.0 §2.1.5",
        section3: "FMI 3.0 #fmi3InstantiateCoSimulation, #fmi3FreeInstance",
        runner: Runner::Worker(cost::cost),
        racy: false,
    },
    Check {
        id: "me-derivatives",
        family: "model exchange",
        title: "states and derivatives as declared, derivatives a function of (t, x, u), their dependencies declared",
        section: "FMI 2.0 §3.2.2 (fmi2GetDerivatives, fmi2SetContinuousStates), §2.2.8 (Derivatives)",
        section3: "FMI 3.0 #fmi3GetContinuousStateDerivatives, #modelStructure (ContinuousStateDerivative)",
        runner: Runner::Worker(me::derivatives),
        racy: false,
    },
    Check {
        id: "me-events",
        family: "model exchange",
        title: "event indicators finite; no jump of the derivatives between events that no indicator signals",
        section: "FMI 2.0 §3.1, §3.2.2 (fmi2GetEventIndicators)",
        section3: "FMI 3.0 #fmi3GetEventIndicators, #state-events",
        runner: Runner::Worker(me::events),
        racy: false,
    },
    Check {
        id: "me-step",
        family: "model exchange",
        title: "fmi2CompletedIntegratorStep answered after every step; completedIntegratorStepNotNeeded holds",
        section: "FMI 2.0 §3.2.2 (fmi2CompletedIntegratorStep), §3.3",
        section3: "FMI 3.0 #fmi3CompletedIntegratorStep",
        runner: Runner::Worker(me::completed_step),
        racy: false,
    },
    Check {
        id: "me-directional",
        family: "model exchange",
        title: "providesDirectionalDerivative: fmi2GetDirectionalDerivative against finite differences",
        section: "FMI 2.0 §2.1.9, §3.3",
        section3: "FMI 3.0 #fmi3GetDirectionalDerivative",
        runner: Runner::Worker(me::directional),
        racy: false,
    },
    Check {
        id: "me-state",
        family: "model exchange",
        title: "canGetAndSetFMUstate in Model Exchange: restored and serialized states continue bit for bit",
        section: "FMI 2.0 §2.1.8, §3.3",
        section3: "FMI 3.0 #fmi3GetFMUState, #fmi3SerializeFMUState",
        runner: Runner::Worker(me::state),
        racy: false,
    },
];

/// The check with id `id`.
pub fn find(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == id)
}

/// The experiment and start values every dynamic check uses (resolved once by the checker, as
/// `cosim run X.fmu` resolves them, and handed to each worker as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Start time (s).
    pub start: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Communication step H (s).
    pub step: f64,
    /// Number of communication steps of the experiment.
    pub steps: u64,
    /// Steps of the shorter runs of the secondary checks (state, structure, instances, …).
    pub short_steps: u64,
    /// Start values: value reference and typed value.
    pub starts: Vec<(u32, PlanValue)>,
    /// Instantiate/free cycles of the cost check.
    pub cycles: u64,
    /// The FMU's fixed internal step (its Real parameter `h` in s, as `cosim run` reads it): the
    /// variable-step check splits H into whole multiples of it.
    #[serde(default)]
    pub fixed_step: Option<f64>,
}

/// A start value of [`Plan::starts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PlanValue {
    /// Real.
    Real(f64),
    /// Integer or Enumeration (Int8 … UInt64).
    Integer(i128),
    /// Boolean.
    Boolean(bool),
    /// String.
    String(String),
    /// Binary.
    Binary(Vec<u8>),
}

impl From<&PlanValue> for StartValue {
    fn from(v: &PlanValue) -> Self {
        match v {
            PlanValue::Real(x) => Self::Real(*x),
            PlanValue::Integer(x) => Self::Integer(*x),
            PlanValue::Boolean(x) => Self::Boolean(*x),
            PlanValue::String(x) => Self::String(x.clone()),
            PlanValue::Binary(x) => Self::Binary(x.clone()),
        }
    }
}

impl From<&StartValue> for PlanValue {
    fn from(v: &StartValue) -> Self {
        match v {
            StartValue::Real(x) => Self::Real(*x),
            StartValue::Integer(x) => Self::Integer(*x),
            StartValue::Boolean(x) => Self::Boolean(*x),
            StartValue::String(x) => Self::String(x.clone()),
            StartValue::Binary(x) => Self::Binary(x.clone()),
        }
    }
}

/// Options of `cosim check`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Start values `NAME=VALUE`, as `cosim run --start-value`.
    pub start_values: Vec<String>,
    /// Stop time (default: the DefaultExperiment's, as `cosim run`).
    pub stop_time: Option<f64>,
    /// Communication step (default: the DefaultExperiment's).
    pub step: Option<f64>,
    /// At most this many communication steps (the stop time is cut; default: the whole experiment).
    pub max_steps: Option<u64>,
    /// How long one check may take before its worker is killed (default 60 s).
    pub timeout: Duration,
    /// Instantiate/free cycles of the cost check (default 1000).
    pub cycles: u64,
    /// Run only these checks (ids; default all).
    pub only: Vec<String>,
    /// Runs of a check that races ([`Check::racy`]; default [`DEFAULT_REPEAT`], at least 1).
    pub repeat: u32,
    /// The executable serving `check-worker` (default: the host's worker command,
    /// [`crate::fmu::isolated::worker_command`]: `cosim` itself, or the Python package's
    /// interpreter with its extension module).
    pub worker_exe: Option<PathBuf>,
    /// Stop request and cleanup registry of the program (`cosim check`: its signal guard).
    pub host: crate::host::Host,
}

/// The per-check timeout from seconds, as both front ends take it: a positive, finite number.
pub fn timeout_from_seconds(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!("{seconds}: must be a positive number of seconds"))
    }
}

/// Runs of a check that races, unless `--repeat` says otherwise.
pub const DEFAULT_REPEAT: u32 = 50;

impl Default for Options {
    fn default() -> Self {
        Self {
            start_values: Vec::new(),
            stop_time: None,
            step: None,
            max_steps: None,
            timeout: Duration::from_secs(60),
            cycles: 1000,
            only: Vec::new(),
            repeat: DEFAULT_REPEAT,
            worker_exe: None,
            host: crate::host::Host::default(),
        }
    }
}

/// The report of `cosim check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The FMU file.
    pub fmu: PathBuf,
    /// `modelName` (empty when the description cannot be read).
    pub model_name: String,
    /// `fmiVersion` ("2.0", "3.0"; empty when the description cannot be read).
    #[serde(default)]
    pub fmi_version: String,
    /// The experiment the dynamic checks ran (`None` when it could not be resolved).
    pub plan: Option<Plan>,
    /// One finding per check, in [`CHECKS`] order.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether any check failed (`cosim check` then exits 1).
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.verdict == Verdict::Fail)
    }

    /// The exit code of `cosim check`: 1 when a check FAILs, else 2 when one is INTERMITTENT,
    /// else 0 (PASS, WARN and SKIP only).
    pub fn exit_code(&self) -> i32 {
        exit_code(self.findings.iter().map(|f| f.verdict))
    }

    /// How many findings have verdict `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.findings.iter().filter(|f| f.verdict == v).count()
    }

    /// The finding of check `id`.
    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.check == id)
    }

    /// The report as text: one line per check (verdict, id, evidence, section), then a summary.
    pub fn text(&self) -> String {
        let mut out = format!("{} ({})\n", self.fmu.display(), self.model_name);
        if let Some(p) = &self.plan {
            let _ = writeln!(
                out,
                "experiment: start {} s, stop {} s, step {} s ({} steps; {} in the shorter runs), {} start values",
                p.start,
                p.stop,
                p.step,
                p.steps,
                p.short_steps,
                p.starts.len()
            );
        }
        let width = CHECKS.iter().map(|c| c.id.len()).max().unwrap_or(10);
        for f in &self.findings {
            let _ =
                writeln!(out, "{} {:<width$}  {} [{}; {:.2} s]", f.verdict, f.check, f.evidence, f.section, f.seconds);
        }
        let count = |v: Verdict| self.count(v);
        let _ = write!(
            out,
            "{} PASS, {} WARN, {} FAIL, {} SKIP",
            count(Verdict::Pass),
            count(Verdict::Warn),
            count(Verdict::Fail),
            count(Verdict::Skip)
        );
        if count(Verdict::Intermittent) > 0 {
            let _ = write!(out, ", {} INTERMITTENT", count(Verdict::Intermittent));
        }
        out.push('\n');
        out
    }

    /// The report as pretty-printed JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// The exit code of verdicts: 1 with a FAIL, else 2 with an INTERMITTENT, else 0.
pub fn exit_code(verdicts: impl IntoIterator<Item = Verdict>) -> i32 {
    let worst = verdicts.into_iter().filter(|v| matches!(v, Verdict::Fail | Verdict::Intermittent)).max();
    match worst {
        Some(Verdict::Fail) => 1,
        Some(_) => 2,
        None => 0,
    }
}

/// One verdict of the `n` runs of a check that races. A run that FAILed proves the fault (a
/// crash, a difference): FAIL, "failed in k of n runs" (with "intermittent" when k < n) and the
/// evidence of the first failing run, so that the verdict does not depend on how often the race
/// showed. Without a FAIL, the verdict every run gave; runs that disagree otherwise (PASS and
/// WARN) give [`Verdict::Intermittent`].
pub fn settle(runs: Vec<Outcome>) -> (Outcome, Runs) {
    let n = runs.len() as u32;
    let failed = runs.iter().filter(|o| o.verdict == Verdict::Fail).count() as u32;
    let stats = Runs { of: n, failed };
    let Some(first) = runs.first().cloned() else { return (Outcome::skip("not run"), stats) };
    if n == 1 {
        return (first, stats);
    }
    if let Some(f) = runs.iter().find(|o| o.verdict == Verdict::Fail) {
        let how = if failed == n {
            format!("failed in all {n} runs")
        } else {
            format!("intermittent: failed in {failed} of {n} runs")
        };
        return (Outcome::fail(format!("{how}; the first failure: {}", f.evidence)), stats);
    }
    if runs.iter().all(|o| o.verdict == first.verdict) {
        return (
            Outcome {
                verdict: first.verdict,
                evidence: format!("{} in all {n} runs: {}", first.verdict, first.evidence),
            },
            stats,
        );
    }
    let verdicts: Vec<String> = runs.iter().map(|o| o.verdict.to_string()).collect();
    (
        Outcome {
            verdict: Verdict::Intermittent,
            evidence: format!("intermittent: the runs gave {}; the first: {}", verdicts.join(", "), first.evidence),
        },
        stats,
    )
}

/// Checks the FMU at `fmu`: every check of [`CHECKS`] (or `opts.only`), the dynamic ones each in
/// its own worker process. Errors only for options that cannot be used (an unknown check id, a
/// start value the description refuses, an experiment that is not a whole number of steps);
/// everything the FMU does wrong is a finding.
pub fn check(fmu: &Path, opts: &Options) -> Result<Report> {
    for id in &opts.only {
        if find(id).is_none() {
            let ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
            return Err(MasterError::System {
                path: fmu.to_path_buf(),
                key: "--only".into(),
                message: format!("no check \"{id}\" (checks: {})", ids.join(", ")),
            });
        }
    }
    let selected = |c: &Check| opts.only.is_empty() || opts.only.iter().any(|o| o == c.id);
    let st = statics::Static::read(fmu);
    let fmi3 = st.fmi3();
    // A Model Exchange FMU without <CoSimulation>: the Co-Simulation checks have nothing to run.
    let me_only = st.md.as_ref().is_ok_and(|m| m.co_simulation.is_none() && m.model_exchange.is_some());
    let unread = "not run: modelDescription.xml cannot be read";
    let plan = match &st.md {
        Ok(md) => Some(plan(fmu, md, opts)?),
        Err(_) => None,
    };
    let mut report = Report {
        fmu: fmu.to_path_buf(),
        model_name: st.md.as_ref().map(|m| m.model_name.clone()).unwrap_or_default(),
        fmi_version: st.md.as_ref().map(|m| m.fmi_version.clone()).unwrap_or_default(),
        plan: plan.clone(),
        findings: Vec::new(),
    };
    let mut supervisor = None;
    // Why the remaining dynamic checks are not run (the FMU cannot be loaded, or hung).
    let mut stop_reason: Option<String> = None;
    if !st.unsupported.is_empty() {
        stop_reason =
            Some(format!("cosim does not run what this FMI 3.0 FMU uses yet: {}", statics::some(&st.unsupported, 3)));
    }
    for c in CHECKS.iter().filter(|c| selected(c)) {
        let t0 = std::time::Instant::now();
        let mut runs = None;
        if stop_reason.is_none() && opts.host.stop_requested() {
            stop_reason = Some("interrupted".into());
        }
        let outcome = match (c.runner, &plan, &stop_reason) {
            (Runner::Parent(f), _, _) => f(&st),
            (Runner::Worker(_), None, _) => Outcome::skip(unread),
            (Runner::Worker(_), Some(_), Some(why)) => Outcome::skip(format!("not run: {why}")),
            (Runner::Worker(_), Some(_), None) if me_only && c.family != "model exchange" && c.id != "load" => {
                Outcome::skip("no <CoSimulation> interface: a Model Exchange FMU, checked by the model exchange family")
            }
            (Runner::Worker(_), Some(plan), None) => {
                if supervisor.is_none() {
                    match worker::Supervisor::new(fmu, plan, opts) {
                        Ok(s) => supervisor = Some(s),
                        Err(e) => stop_reason = Some(format!("the archive cannot be extracted: {e}")),
                    }
                }
                match supervisor.as_mut() {
                    Some(s) => {
                        let mut r = s.run(c.id);
                        if c.racy && !r.hung && opts.repeat > 1 {
                            let mut outcomes = vec![r.outcome.clone()];
                            for _ in 1..opts.repeat {
                                if opts.host.stop_requested() {
                                    break;
                                }
                                let again = s.run(c.id);
                                let hung = again.hung;
                                outcomes.push(again.outcome);
                                if hung {
                                    r.hung = true;
                                    break;
                                }
                            }
                            let (settled, stats) = settle(outcomes);
                            runs = Some(stats);
                            r.outcome = settled;
                        }
                        if r.hung {
                            stop_reason =
                                Some(format!("the FMU hung in check {} (killed after {:?})", c.id, opts.timeout));
                        } else if c.id == "load" && r.outcome.verdict == Verdict::Fail {
                            stop_reason = Some("the FMU cannot be loaded and instantiated (check load)".into());
                        }
                        if fmi3 {
                            r.outcome.evidence = raw::names3(&r.outcome.evidence);
                        }
                        r.outcome
                    }
                    None => Outcome::skip(format!("not run: {}", stop_reason.clone().unwrap_or_default())),
                }
            }
        };
        report.findings.push(Finding {
            check: c.id.into(),
            family: c.family.into(),
            title: c.title.into(),
            section: if fmi3 { c.section3 } else { c.section }.into(),
            verdict: outcome.verdict,
            evidence: outcome.evidence,
            seconds: t0.elapsed().as_secs_f64(),
            runs,
        });
    }
    Ok(report)
}

/// The experiment and start values as `cosim run X.fmu` resolves them (same option errors).
fn plan(fmu: &Path, md: &model_description::ModelDescription, opts: &Options) -> Result<Plan> {
    let fo = crate::single::FmuOptions {
        start: None,
        stop: opts.stop_time,
        step: opts.step,
        start_values: opts.start_values.clone(),
        output_interval: None,
        output_variables: None,
        input_file: None,
    };
    let single = crate::single::from_description(fmu, md, &fo)?;
    let system = single.builder.build(&[md])?;
    let (start, mut stop, step) = (system.start(), system.stop(), system.step());
    let mut steps = system.steps();
    if let Some(max) = opts.max_steps.filter(|m| *m >= 1 && *m < steps) {
        steps = max;
        stop = start + max as f64 * step;
    }
    let first = system.instances().first();
    let starts = first.map(|i| i.starts.iter().map(|(v, s)| (v.vr, s.into())).collect());
    let fixed_step = first.and_then(|i| i.fixed_step);
    Ok(Plan {
        start,
        stop,
        step,
        steps,
        short_steps: steps.min(20),
        starts: starts.unwrap_or_default(),
        cycles: opts.cycles,
        fixed_step,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn repeated_runs_settle_on_one_verdict_or_intermittent_with_a_stable_exit_code() {
        let (o, r) = settle(vec![Outcome::pass("ok"), Outcome::pass("ok")]);
        assert_eq!((o.verdict, r), (Verdict::Pass, Runs { of: 2, failed: 0 }));
        assert_eq!(o.evidence, "PASS in all 2 runs: ok");
        // A race that shows in some runs only is a FAIL, however often it showed.
        let (o, r) = settle(vec![Outcome::pass("ok"), Outcome::fail("died"), Outcome::fail("died")]);
        assert_eq!((o.verdict, r), (Verdict::Fail, Runs { of: 3, failed: 2 }));
        assert_eq!(o.evidence, "intermittent: failed in 2 of 3 runs; the first failure: died");
        let (o, _) = settle(vec![Outcome::fail("died"), Outcome::fail("died")]);
        assert_eq!(o.evidence, "failed in all 2 runs; the first failure: died");
        let (o, _) = settle(vec![Outcome::pass("ok"), Outcome::warn("odd")]);
        assert_eq!(
            (o.verdict, o.evidence.as_str()),
            (Verdict::Intermittent, "intermittent: the runs gave PASS, WARN; the first: ok")
        );
        let (o, _) = settle(vec![Outcome::fail("died")]);
        assert_eq!((o.verdict, o.evidence.as_str()), (Verdict::Fail, "died"));
        assert_eq!(exit_code([Verdict::Pass, Verdict::Warn, Verdict::Skip]), 0);
        assert_eq!(exit_code([Verdict::Pass, Verdict::Intermittent]), 2);
        assert_eq!(exit_code([Verdict::Fail, Verdict::Intermittent]), 1);
    }

    #[test]
    fn a_parameter_among_the_dependencies_breaks_the_letter_only() {
        let r = statics::letter_rule("ModelStructure/Derivatives, <Unknown index=\"5\">: depends on the parameter g");
        assert!(r.is_some_and(|r| r.rule.contains("§2.2.8") && r.tools.contains("BouncingBall")));
        assert!(statics::letter_rule("the name is not unique").is_none());
    }
}
