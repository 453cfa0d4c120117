//! `cosim tune`: the automated co-simulation configuration search of Publication III §2.4
//! (Fig. 4), with a verification stage on a representative cycle.
//!
//! For every test function ([`signals`]) and configuration ([`space`]) the sweep runs H = H_ini,
//! H_ini + H_inc, … while the run succeeds and Σ|δE|(H) stays in its power-law relation
//! ([`criterion`]); the last accepted H is that pair's limit. Sequences run in parallel on worker
//! threads, every finished run is appended to `tune.csv` at once, and a restarted sweep with the
//! same settings reuses those rows ([`results`]). [`report`] prints Tables 4/5 and writes
//! `tune.json`; [`verify`] runs the recommendation on a real cycle and backs H off until it is
//! stable and accurate.

pub mod criterion;
pub mod dask;
pub mod report;
pub mod results;
pub mod runner;
pub mod signals;
pub mod space;
pub mod verify;

use crate::error::{MasterError, Result};
use criterion::Verdict;
use model_description::{BaseType, Causality, VariableKind};
use runner::Base;
use signals::TestFn;
use space::{Config, TuneSpec};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// One run of the sweep (a row of `tune.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Test label (`sin:35`).
    pub test: String,
    /// Configuration label.
    pub config: String,
    /// Communication step (s).
    #[serde(with = "dask::float")]
    pub h: f64,
    /// Steps done.
    pub steps: u64,
    /// Simulated time covered (s).
    #[serde(with = "dask::float")]
    pub time: f64,
    /// Σ|δE| over all bonds (J).
    #[serde(with = "dask::float")]
    pub e_abs: f64,
    /// `ok` or `failed`.
    pub outcome: String,
    /// Failure message.
    pub message: String,
}

impl Row {
    /// Σ|δE| per second of simulated time (J/s), the quantity the criterion judges; `None` for a
    /// failed run.
    pub fn rate(&self) -> Option<f64> {
        (self.outcome == "ok" && self.time > 0.0).then(|| self.e_abs / self.time)
    }
}

/// The limit of one (test, configuration) sequence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    /// Test index.
    pub test: usize,
    /// Configuration index.
    pub config: usize,
    /// Largest accepted H (`None`: even H_ini was rejected).
    #[serde(with = "dask::opt_float")]
    pub h: Option<f64>,
    /// Why the sweep stopped there (`Accept`: reached h_max).
    pub verdict: Verdict,
    /// Σ|δE|/T_c at the limit (J/s).
    #[serde(with = "dask::opt_float")]
    pub rate: Option<f64>,
}

/// Initial value and range of a replaced input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputRange {
    /// v0.
    pub v0: f64,
    /// v_min.
    pub min: f64,
    /// v_max.
    pub max: f64,
}

/// Sweep settings that are not part of the search space.
#[derive(Default)]
pub struct SweepOptions {
    /// Worker threads (0: all cores).
    pub jobs: usize,
    /// Where the progress bar goes (`None`: no progress bar).
    pub progress: Option<std::sync::Mutex<Box<dyn std::io::Write + Send>>>,
    /// Run the sequences on a Dask cluster instead of local threads.
    pub dask: Option<dask::Dask>,
}

/// The command-line adjustments of `cosim tune` to the file's `[tune]` table (serializable, so a
/// Dask worker rebuilds exactly the same [`TuneSpec`]).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TuneArgs {
    /// Replaced inputs (empty: the file's).
    pub inputs: Vec<String>,
    /// Explicit ranges (name, v_min, v_max).
    pub ranges: Vec<(String, f64, f64)>,
    /// H_ini (s).
    pub h_ini: Option<f64>,
    /// H_inc (s).
    pub h_inc: Option<f64>,
    /// H_max (s).
    pub h_max: Option<f64>,
    /// Test functions, comma separated.
    pub tests: Option<String>,
    /// Sinusoid periods.
    pub sine_periods: Option<u32>,
    /// Extrapolation choices, comma separated.
    pub extrapolation: Option<String>,
}

impl TuneArgs {
    /// Applies the adjustments (errors: a bad test or extrapolation name).
    pub fn apply(&self, spec: &mut TuneSpec) -> std::result::Result<(), String> {
        let tests = match &self.tests {
            None => None,
            Some(t) => Some(t.split(',').map(TestFn::parse).collect::<std::result::Result<Vec<_>, _>>()?),
        };
        let extrapolations = match &self.extrapolation {
            None => None,
            Some(e) => Some(e.split(',').map(space::parse_extrap_str).collect::<std::result::Result<Vec<_>, _>>()?),
        };
        if !self.inputs.is_empty() {
            spec.inputs.clone_from(&self.inputs);
        }
        spec.range.extend(self.ranges.iter().map(|(n, lo, hi)| (n.clone(), (*lo, *hi))));
        if let Some(h) = self.h_ini {
            spec.h_ini = h;
            if self.h_max.is_none() {
                spec.h_max = spec.h_max.max(h);
            }
        }
        spec.h_inc = self.h_inc.unwrap_or(spec.h_inc);
        spec.h_max = self.h_max.unwrap_or(spec.h_max);
        if let Some(t) = tests {
            spec.tests = t;
        }
        if let Some(e) = extrapolations {
            spec.extrapolations = e;
        }
        if self.sine_periods.is_some() {
            spec.sine_periods = self.sine_periods;
        }
        Ok(())
    }
}

/// The sweep settings of a system file: its `[tune]` table, adjusted and checked.
pub fn tune_spec(
    base: &Base,
    adjust: impl FnOnce(&mut TuneSpec) -> std::result::Result<(), String>,
) -> Result<TuneSpec> {
    let bad = |message: String| MasterError::System { path: base.path().to_path_buf(), key: "tune".into(), message };
    let mut spec = TuneSpec::from_tune(base.tune_table()).map_err(bad)?;
    adjust(&mut spec).map_err(bad)?;
    spec.check().map_err(bad)?;
    // Every variable the table names exists, checked before the sweep (issue 30 item 17: a
    // misspelled name in `range`, `extrapolate` or `compare` was accepted).
    let named = |what: &str, name: &str| {
        base.var(name).map(|_| ()).map_err(|e| match e {
            MasterError::System { message, .. } => bad(format!("[tune].{what}: {message}")),
            other => other,
        })
    };
    for name in spec.range.keys() {
        named("range", name)?;
    }
    for name in spec.extrapolate.iter().flatten() {
        named("extrapolate", name)?;
    }
    for name in spec.compare.iter().flatten() {
        named("compare", name)?;
    }
    Ok(spec)
}

/// One (test `t`, configuration `c`) sequence of the sweep of `path` with `args`, run on its own
/// (no results file): its rows in H order and its limit. What a Dask worker of
/// `cosim tune --dask` runs. `host`: the embedding program's ([`crate::host::Host`]).
pub fn run_sequence(
    path: &Path,
    args: &TuneArgs,
    t: usize,
    c: usize,
    host: crate::host::Host,
) -> Result<(Vec<Row>, Limit)> {
    let base = Base::load(path, host)?;
    let spec = tune_spec(&base, |s| args.apply(s))?;
    let configs = spec.configs();
    let (Some(test), Some(config)) = (spec.tests.get(t), configs.get(c)) else {
        return Err(MasterError::System {
            path: path.to_path_buf(),
            key: "tune".into(),
            message: format!("no sequence (test {t}, configuration {c})"),
        });
    };
    let ranges = input_ranges(&base, &spec)?;
    let inputs: Vec<_> = spec.inputs.iter().map(|n| base.var(n)).collect::<Result<_>>()?;
    let draft = base.document(&spec, config, true)?;
    let cache = results::Cache::new();
    let seq = Sequence {
        base: &base,
        spec: &spec,
        test,
        label: config.label(),
        draft: &draft,
        signals: test_signals(&spec, test, &inputs, &ranges),
        cache: &cache,
    };
    let (tx, rx) = mpsc::channel();
    let limit = seq.run(t, c, &tx, false);
    drop(tx);
    let mut rows = Vec::new();
    for msg in rx {
        match msg {
            Msg::Row(row, _) => rows.push(row),
            Msg::Error(e) => return Err(e),
            Msg::Done(_) => {}
        }
    }
    limit.map(|l| (rows, l)).ok_or_else(|| MasterError::System {
        path: path.to_path_buf(),
        key: "tune".into(),
        message: "sequence ended without a limit".into(),
    })
}

fn test_signals(
    spec: &TuneSpec,
    test: &TestFn,
    inputs: &[crate::system::VarRef],
    ranges: &[InputRange],
) -> Vec<crate::system::Signal> {
    inputs.iter().zip(ranges).map(|(v, r)| test.signal(v.clone(), r.v0, r.min, r.max, spec.duration)).collect()
}

/// The finished sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The settings used.
    pub spec: TuneSpec,
    /// The configurations, in enumeration order.
    pub configs: Vec<Config>,
    /// Every run.
    pub rows: Vec<Row>,
    /// One limit per (test, configuration).
    pub limits: Vec<Limit>,
    /// Runs taken from an earlier, interrupted sweep.
    pub reused: usize,
}

/// v0 (the file's signal at t = 0, else the start value) and [v_min, v_max] ([tune].range, else
/// the variable's min/max) of each replaced input.
pub fn input_ranges(base: &Base, spec: &TuneSpec) -> Result<Vec<InputRange>> {
    let draft = base.document(spec, &Config { extrapolation: space::Extrap::Order(0), params: vec![] }, false)?;
    let sys = draft.build(&base.mds())?;
    let mds = base.mds();
    let mut out = Vec::new();
    for name in &spec.inputs {
        let v = base.var(name)?;
        let err = |message: String| MasterError::System {
            path: base.path().to_path_buf(),
            key: "tune.inputs".into(),
            message,
        };
        if v.causality != Causality::Input || v.ty != BaseType::Real {
            return Err(err(format!("{name} is not a Real input")));
        }
        if sys.connections().iter().any(|c| c.to == v) {
            return Err(err(format!("{name} is fed by a connection; only external inputs can be replaced")));
        }
        let sv = mds[v.instance].variable(&v.name);
        let (start, min, max) = match sv.map(|s| &s.kind) {
            Some(VariableKind::Real { start, attrs, .. }) => (*start, attrs.min, attrs.max),
            _ => (None, None, None),
        };
        let v0 = sys.signals().iter().find(|s| s.to == v).map(|s| s.at(sys.start()).0).or(start).unwrap_or(0.0);
        let (lo, hi) = match spec.range.get(name) {
            Some(r) => *r,
            None => match (min, max) {
                (Some(lo), Some(hi)) => (lo, hi),
                _ => return Err(err(format!("{name} has no min/max; give [tune].range.\"{name}\" = [v_min, v_max]"))),
            },
        };
        if !(lo <= v0 && v0 <= hi) {
            return Err(err(format!("{name}: initial value {v0} lies outside its range [{lo}, {hi}]")));
        }
        out.push(InputRange { v0, min: lo, max: hi });
    }
    Ok(out)
}

/// Runs the whole sweep; rows go to `csv` as they finish (and rows already there with the same
/// settings are reused).
pub fn sweep(base: &Base, spec: &TuneSpec, out_dir: &Path, opts: &SweepOptions) -> Result<Sweep> {
    let configs = spec.configs();
    let ranges = input_ranges(base, spec)?;
    let inputs: Vec<_> = spec.inputs.iter().map(|n| base.var(n)).collect::<Result<_>>()?;
    let drafts: Vec<_> = configs.iter().map(|c| base.document(spec, c, true)).collect::<Result<_>>()?;
    let mut store = results::Store::open(out_dir, base, spec)?;
    let reused = store.len();
    let jobs: Vec<(usize, usize)> =
        (0..spec.tests.len()).flat_map(|t| (0..configs.len()).map(move |c| (t, c))).collect();
    let next = AtomicUsize::new(0);
    let workers = if opts.jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { opts.jobs };
    let (tx, rx) = mpsc::channel::<Msg>();
    let cache = store.cache();
    let mut limits = Vec::new();
    let mut rows_out = Vec::new();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers.min(jobs.len()).max(1) {
            let tx = tx.clone();
            let (jobs, next, drafts, inputs, ranges, cache, configs) =
                (&jobs, &next, &drafts, &inputs, &ranges, &cache, &configs);
            let sequence = move |t: usize, c: usize| {
                let test = &spec.tests[t];
                let signals = test_signals(spec, test, inputs, ranges);
                Sequence { base, spec, test, label: configs[c].label(), draft: &drafts[c], signals, cache }
            };
            if let Some(d) = &opts.dask {
                // Sequences the results file already completes are replayed here; the others
                // run on the cluster (in full: a run is deterministic, so its cached rows come
                // back identical and are not appended again).
                let mut remote = Vec::new();
                for &(t, c) in jobs {
                    let (local_tx, local_rx) = mpsc::channel();
                    match sequence(t, c).run(t, c, &local_tx, true) {
                        Some(limit) => {
                            drop(local_tx);
                            for m in local_rx {
                                let _ = tx.send(m);
                            }
                            let _ = tx.send(Msg::Done(limit));
                        }
                        None => remote.push((t, c)),
                    }
                }
                scope.spawn(move || {
                    if remote.is_empty() {
                        return;
                    }
                    let r = dask::run(d, base.path(), &remote, |f| {
                        for row in f.rows {
                            let fresh = !dask::cached(cache, &row);
                            tx.send(Msg::Row(row, fresh)).map_err(|_| stopped())?;
                        }
                        tx.send(Msg::Done(f.limit)).map_err(|_| stopped())
                    });
                    if let Err(e) = r {
                        let _ = tx.send(Msg::Error(e));
                    }
                });
                break;
            }
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(t, c)) = jobs.get(k) else { break };
                let Some(limit) = sequence(t, c).run(t, c, &tx, false) else { break };
                if tx.send(Msg::Done(limit)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for msg in rx {
            match msg {
                Msg::Row(row, fresh) => {
                    if fresh {
                        store.append(&row)?;
                    }
                    rows_out.push(row);
                }
                Msg::Done(limit) => {
                    limits.push(limit);
                    done += 1;
                    if let Some(w) = &opts.progress {
                        let pct = done * 100 / jobs.len();
                        let mut w = w.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        let _ = write!(w, "\r[{:<25}] {pct:>3}%  {done}/{} sequences", "#".repeat(pct / 4), jobs.len());
                        let _ = w.flush();
                    }
                }
                Msg::Error(e) => return Err(e),
            }
        }
        if let Some(w) = &opts.progress {
            let _ = writeln!(w.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        }
        Ok(())
    })?;
    limits.sort_by_key(|l| (l.test, l.config));
    Ok(Sweep { spec: spec.clone(), configs, rows: rows_out, limits, reused })
}

fn stopped() -> MasterError {
    MasterError::Stopped { message: "the sweep ended".into() }
}

enum Msg {
    Row(Row, bool),
    Done(Limit),
    Error(MasterError),
}

/// One (test, configuration) sequence of Fig. 4.
struct Sequence<'a> {
    base: &'a Base,
    spec: &'a TuneSpec,
    test: &'a TestFn,
    label: String,
    draft: &'a crate::system::SystemBuilder,
    signals: Vec<crate::system::Signal>,
    cache: &'a results::Cache,
}

impl Sequence<'_> {
    /// Runs the sequence; `offline`: only from the cache (`None` at the first run not there). The
    /// online run returns `None` only after sending an error.
    fn run(&self, t: usize, c: usize, tx: &mpsc::Sender<Msg>, offline: bool) -> Option<Limit> {
        let duration = self.test.duration(self.spec.duration, self.spec.sine_periods);
        let mut accepted: Vec<(f64, f64)> = Vec::new();
        let mut limit = Limit { test: t, config: c, h: None, verdict: Verdict::Accept, rate: None };
        for h in self.spec.steps() {
            let key = results::key(&self.test.label(), &self.label, h);
            let (row, fresh) = match self.cache.get(&key) {
                Some(row) => (row.clone(), false),
                None if offline => return None,
                None => {
                    let steps = signals::steps_covering(duration, h);
                    // Residual blow-up: 1000× the rate at H_ini stops the run early.
                    let bound = accepted.first().map(|(_, e)| 1e3 * e * steps as f64 * h);
                    match self.base.run(self.draft, h, steps, &self.signals, bound, None) {
                        Ok(o) => (
                            Row {
                                test: self.test.label(),
                                config: self.label.clone(),
                                h,
                                steps: o.steps,
                                time: o.time,
                                e_abs: o.e_abs,
                                outcome: if o.failure.is_some() { "failed".into() } else { "ok".into() },
                                message: o.failure.unwrap_or_default(),
                            },
                            true,
                        ),
                        Err(e) => {
                            let _ = tx.send(Msg::Error(e));
                            return None;
                        }
                    }
                }
            };
            let rate = row.rate();
            let _ = tx.send(Msg::Row(row, fresh));
            let verdict = match rate {
                None => Verdict::Failed,
                Some(e) => self.spec.criterion.judge(&accepted, h, e),
            };
            if verdict != Verdict::Accept {
                limit.verdict = verdict;
                return Some(limit);
            }
            accepted.push((h, rate.unwrap_or(0.0)));
            limit.h = Some(h);
            limit.rate = rate;
        }
        Some(limit)
    }
}

/// What `cosim tune` does besides the sweep.
#[derive(Default)]
pub struct TuneOptions {
    /// Output directory (tune.csv, tune.json, recommended.toml, verification traces).
    pub out_dir: std::path::PathBuf,
    /// Sweep options.
    pub sweep: SweepOptions,
    /// Cycle for the verification stage (`system` or a file), if any.
    pub verify: Option<String>,
    /// Reference step of the verification (s; default H_inc).
    pub reference_step: Option<f64>,
    /// The embedding program's stop request and cleanup registry (`cosim tune`: its signal
    /// guard's; Python: none).
    pub host: crate::host::Host,
}

/// Everything `cosim tune` produced.
#[derive(Debug)]
pub struct Tuned {
    /// The sweep.
    pub sweep: Sweep,
    /// Its parsed results.
    pub report: report::Report,
    /// The verification, if asked for.
    pub verified: Option<verify::Verified>,
    /// The printed report (table and recommendations).
    pub text: String,
}

/// `cosim tune`: reads the system file's `[tune]` table, lets `adjust` apply command-line
/// overrides, sweeps, reports, verifies, and writes the output files.
pub fn tune_file(path: &Path, adjust: impl FnOnce(&mut TuneSpec), opts: &TuneOptions) -> Result<Tuned> {
    let base = Base::load(path, opts.host.clone())?;
    let bad = |message: String| MasterError::System { path: path.to_path_buf(), key: "tune".into(), message };
    let spec = tune_spec(&base, |s| {
        adjust(s);
        Ok(())
    })?;
    let sweep = sweep(&base, &spec, &opts.out_dir, &opts.sweep)?;
    let rep = report::report(&sweep);
    let mut text = report::markdown_table(&sweep, &rep);
    text += "\n";
    text += &report::recommendation_text(&rep);
    let mut verified = None;
    if let (Some(cycle), Some(paper)) = (&opts.verify, &rep.paper) {
        let cycle = verify::Cycle::load(cycle, &base)?;
        let h_ref = opts.reference_step.unwrap_or(spec.h_inc);
        let config = &sweep.configs[paper.index];
        let ref_base = match &spec.reference {
            Some(r) => {
                Some(Base::load(&path.parent().map(Path::to_path_buf).unwrap_or_default().join(r), opts.host.clone())?)
            }
            None => None,
        };
        let reference = match (&ref_base, &spec.reference_compare) {
            (Some(rb), Some(names)) => {
                let sim = rb.settings();
                let h = opts.reference_step.or(sim.step).unwrap_or(h_ref);
                verify::Reference::System(rb, h, sim.stop.unwrap_or(cycle.stop), names.clone())
            }
            _ => verify::Reference::SameConfig(h_ref),
        };
        let (v, traces) = verify::verify(&base, &spec, config, paper.h, &cycle, &reference)?;
        verify::write_trace(
            &opts.out_dir.join("verify-reference.csv"),
            &v.compare,
            traces.reference.0,
            &traces.reference.1,
        )?;
        if let Some((h, t)) = &traces.first {
            verify::write_trace(&opts.out_dir.join("verify-paper.csv"), &v.compare, *h, t)?;
        }
        if let Some((h, t)) = &traces.verified {
            verify::write_trace(&opts.out_dir.join("verify-verified.csv"), &v.compare, *h, t)?;
        }
        text += &format!(
            "\nVerification on {} (reference: {}; tolerance {} of each variable's range):\n",
            cycle.name, v.reference, spec.tolerance
        );
        for a in &v.attempts {
            text += &format!(
                "  H = {:.1} ms: {}, max error {:.3} ({}), Σ|δE| = {:.3e} J\n",
                a.h * 1e3,
                if a.stable { "stable" } else { "FAILED" },
                a.error,
                if a.stable { a.worst.as_str() } else { a.message.as_str() },
                a.sum_abs_de
            );
        }
        text += &match v.h {
            Some(h) => format!("Verified: H = {:.1} ms with {}\n", h * 1e3, v.config),
            None => {
                format!("Verified: none — {} is not stable and accurate on {} at any H ≥ H_ini\n", v.config, cycle.name)
            }
        };
        verified = Some(v);
    }
    let json = report::json(&sweep, &rep, verified.as_ref());
    let json_path = opts.out_dir.join("tune.json");
    let body = serde_json::to_string_pretty(&json).map_err(|e| bad(format!("tune.json: {e}")))?;
    std::fs::write(&json_path, body).map_err(|source| MasterError::Io { path: json_path.clone(), source })?;
    // A system file for `cosim run` with the final choice (the verified H if there is one).
    if let Some(r) = &rep.paper {
        let h = verified.as_ref().and_then(|v| v.h).unwrap_or(r.h);
        let mut doc = base.document(&spec, &sweep.configs[r.index], false)?.to_file();
        doc.tune = None;
        for inst in doc.instances.values_mut() {
            let abs = std::fs::canonicalize(inst.fmu()).unwrap_or_else(|_| inst.fmu().to_path_buf());
            inst.set_fmu(abs);
        }
        doc.simulation.step = Some(h);
        let stop = doc.simulation.stop.unwrap_or(h);
        doc.simulation.stop = Some(signals::steps_covering(stop, h) as f64 * h);
        let p = opts.out_dir.join("recommended.toml");
        let body = format!(
            "# Written by cosim tune from {}\n{}",
            path.display(),
            doc.to_toml().map_err(|e| bad(format!("recommended.toml: {e}")))?
        );
        std::fs::write(&p, body).map_err(|source| MasterError::Io { path: p.clone(), source })?;
    }
    Ok(Tuned { sweep, report: rep, verified, text })
}
