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
//! [`run`] (determinism and finiteness), [`cost`] (time per step, memory over instantiate/free
//! cycles). [`CHECKS`] is the one list of checks; docs/check.md describes each.

pub mod calls;
pub mod cost;
pub mod illegal;
pub mod lifecycle;
pub mod probe;
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
    /// Legal but suspicious (a warning status, a declared dependency that does not show, a leak).
    Warn,
    /// The FMU breaks the standard or its own description, crashed or hung.
    Fail,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pass => "PASS",
            Self::Skip => "SKIP",
            Self::Warn => "WARN",
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
    /// How it runs.
    pub runner: Runner,
}

/// Every check, in report order: the one list.
pub const CHECKS: &[Check] = &[
    Check {
        id: "description",
        family: "static",
        title: "modelDescription.xml against the standard",
        section: "FMI 2.0 §2.2",
        runner: Runner::Parent(statics::description),
    },
    Check {
        id: "binary",
        family: "static",
        title: "linux64 binary: x86-64 shared library exporting the FMI 2.0 CS API",
        section: "FMI 2.0 §2.1.1, §2.3, §4.2",
        runner: Runner::Parent(statics::binary),
    },
    Check {
        id: "load",
        family: "static",
        title: "load, platform and version, instantiate/free, capability flags vs functions",
        section: "FMI 2.0 §2.1.4, §2.1.5, §4.3.1",
        runner: Runner::Worker(lifecycle::load),
    },
    Check {
        id: "run",
        family: "run",
        title: "the experiment: every status fmi2OK, every output finite, same run twice bit for bit",
        section: "FMI 2.0 §2.1.3, §4.2.2",
        runner: Runner::Worker(run::run),
    },
    Check {
        id: "reset",
        family: "life cycle",
        title: "run, terminate, fmi2Reset, run again: identical",
        section: "FMI 2.0 §2.1.6, §4.2.4",
        runner: Runner::Worker(lifecycle::reset),
    },
    Check {
        id: "free-without-terminate",
        family: "life cycle",
        title: "fmi2FreeInstance while stepping (no fmi2Terminate), then a new instance runs",
        section: "FMI 2.0 §2.1.5, §4.2.4",
        runner: Runner::Worker(lifecycle::free_without_terminate),
    },
    Check {
        id: "instances",
        family: "life cycle",
        title: "two instances at once, stepped alternately: independent and bit-identical",
        section: "FMI 2.0 §2.1.5",
        runner: Runner::Worker(lifecycle::instances),
    },
    Check {
        id: "threads",
        family: "life cycle",
        title: "two instances on two threads at once: same results as sequentially",
        section: "FMI 2.0 §2.1.5 (thread safety per instance)",
        runner: Runner::Worker(lifecycle::threads),
    },
    Check {
        id: "getters",
        family: "legal calls",
        title: "getters in initialization mode, after steps and after fmi2Terminate",
        section: "FMI 2.0 §2.1.7, §4.2.4",
        runner: Runner::Worker(calls::getters),
    },
    Check {
        id: "inputs",
        family: "legal calls",
        title: "inputs set between steps, and outside their declared min/max (refused or handled)",
        section: "FMI 2.0 §2.1.7, §2.2.7, §4.2.1",
        runner: Runner::Worker(calls::inputs),
    },
    Check {
        id: "variable-step",
        family: "legal calls",
        title: "canHandleVariableCommunicationStepSize: halved steps give the same trajectory",
        section: "FMI 2.0 §4.2.2, §4.3.1",
        runner: Runner::Worker(calls::variable_step),
    },
    Check {
        id: "zero-step",
        family: "legal calls",
        title: "fmi2DoStep with communicationStepSize = 0 accepted as a no-op or refused",
        section: "FMI 2.0 §4.2.2",
        runner: Runner::Worker(calls::zero_step),
    },
    Check {
        id: "illegal",
        family: "illegal calls",
        title: "wrong-state calls, unknown value references, setting outputs, NULL instance/state, wrong GUID",
        section: "FMI 2.0 §2.1.3, §2.1.5, §2.1.7, §2.1.8, §4.2.4",
        runner: Runner::Worker(illegal::illegal),
    },
    Check {
        id: "state",
        family: "state",
        title: "fmi2GetFMUstate, steps, fmi2SetFMUstate, the same steps: bit-identical; states freed",
        section: "FMI 2.0 §2.1.8",
        runner: Runner::Worker(state::restore),
    },
    Check {
        id: "serialize",
        family: "state",
        title: "serialize, deserialize into a fresh instance: identical continuation",
        section: "FMI 2.0 §2.1.8",
        runner: Runner::Worker(state::serialize),
    },
    Check {
        id: "feedthrough",
        family: "structure",
        title: "outputs that respond to inputs without a step are declared in ModelStructure/Outputs",
        section: "FMI 2.0 §2.2.8",
        runner: Runner::Worker(structure::feedthrough),
    },
    Check {
        id: "initial-unknowns",
        family: "structure",
        title: "outputs that respond to inputs in initialization mode are declared in InitialUnknowns",
        section: "FMI 2.0 §2.2.8",
        runner: Runner::Worker(structure::initial_unknowns),
    },
    Check {
        id: "interpolate",
        family: "structure",
        title: "canInterpolateInputs: input derivatives change the result",
        section: "FMI 2.0 §4.2.1, §4.3.1",
        runner: Runner::Worker(structure::interpolate),
    },
    Check {
        id: "cost",
        family: "cost",
        title: "time per fmi2DoStep (median, max); memory over instantiate/free cycles (leak WARN)",
        section: "FMI 2.0 §2.1.5",
        runner: Runner::Worker(cost::cost),
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
    /// Integer or Enumeration.
    Integer(i64),
    /// Boolean.
    Boolean(bool),
    /// String.
    String(String),
    /// Binary.
    Binary(Vec<u8>),
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
    /// The executable serving `check-worker` (default: [`crate::fmu::isolated::worker_exe`]).
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
        let count = |v: Verdict| self.findings.iter().filter(|f| f.verdict == v).count();
        let _ = writeln!(
            out,
            "{} PASS, {} WARN, {} FAIL, {} SKIP",
            count(Verdict::Pass),
            count(Verdict::Warn),
            count(Verdict::Fail),
            count(Verdict::Skip)
        );
        out
    }

    /// The report as pretty-printed JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
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
    let mut st = statics::Static::read(fmu);
    // An FMI 3.0 FMU: the description check FAILs saying why, nothing else runs.
    let fmi3 = statics::fmi3_refusal(fmu);
    if let Some(why) = &fmi3 {
        st.md = Err(why.clone());
    }
    let unread =
        if fmi3.is_some() { "not run: an FMI 3.0 FMU" } else { "not run: modelDescription.xml cannot be read" };
    let plan = match &st.md {
        Ok(md) => Some(plan(fmu, md, opts)?),
        Err(_) => None,
    };
    let mut report = Report {
        fmu: fmu.to_path_buf(),
        model_name: st.md.as_ref().map(|m| m.model_name.clone()).unwrap_or_default(),
        plan: plan.clone(),
        findings: Vec::new(),
    };
    let mut supervisor = None;
    // Why the remaining dynamic checks are not run (the FMU cannot be loaded, or hung).
    let mut stop_reason: Option<String> = None;
    for c in CHECKS.iter().filter(|c| selected(c)) {
        let t0 = std::time::Instant::now();
        if stop_reason.is_none() && opts.host.stop_requested() {
            stop_reason = Some("interrupted".into());
        }
        let outcome = match (c.runner, &plan, &stop_reason) {
            (Runner::Parent(f), _, _) => f(&st),
            (Runner::Worker(_), None, _) => Outcome::skip(unread),
            (Runner::Worker(_), Some(_), Some(why)) => Outcome::skip(format!("not run: {why}")),
            (Runner::Worker(_), Some(plan), None) => {
                if supervisor.is_none() {
                    match worker::Supervisor::new(fmu, plan, opts) {
                        Ok(s) => supervisor = Some(s),
                        Err(e) => stop_reason = Some(format!("the archive cannot be extracted: {e}")),
                    }
                }
                match supervisor.as_mut() {
                    Some(s) => {
                        let r = s.run(c.id);
                        if r.hung {
                            stop_reason =
                                Some(format!("the FMU hung in check {} (killed after {:?})", c.id, opts.timeout));
                        } else if c.id == "load" && r.outcome.verdict == Verdict::Fail {
                            stop_reason = Some("the FMU cannot be loaded and instantiated (check load)".into());
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
            section: c.section.into(),
            verdict: outcome.verdict,
            evidence: outcome.evidence,
            seconds: t0.elapsed().as_secs_f64(),
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
