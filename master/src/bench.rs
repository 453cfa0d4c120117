//! `cosim bench`: the master's cost per communication step against the FFI floor and against
//! third-party masters (FMPy, libcosim, ecos) run on the same FMUs in the same invocation.

use anyhow::{Context, Result};
use master::fmu::Fmu2;
use master::observer::{Observer, ResultsCsv};
use master::system::{Draft, Overrides, Parallel, System};
use master::Slave;
use model_description::ModelDescription;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

/// Heap allocations so far (counted by the binary's global allocator).
pub type AllocCounter = fn() -> u64;

/// Options of `cosim bench`.
pub struct Options {
    /// Communication steps per measurement (default: the scenario's).
    pub steps: Option<u64>,
    /// Repetitions (median reported).
    pub repeat: usize,
    /// Python with FMPy/libcosimpy/ecospy, for the peers; None: skip the peers.
    pub python: Option<PathBuf>,
    /// The peers script.
    pub peers_script: PathBuf,
}

struct Loaded {
    sys: System,
    fmus: Vec<Arc<Fmu2>>,
}

fn load(path: &Path, over: &Overrides) -> Result<Loaded> {
    let draft = Draft::read(path)?;
    let mut cache: Vec<(PathBuf, Arc<Fmu2>)> = Vec::new();
    let mut fmus = Vec::new();
    for (_, p) in draft.fmus() {
        let f = match cache.iter().find(|(q, _)| *q == p) {
            Some((_, f)) => Arc::clone(f),
            None => {
                let f = Fmu2::load(&p)?;
                cache.push((p.clone(), Arc::clone(&f)));
                f
            }
        };
        fmus.push(f);
    }
    let mds: Vec<&ModelDescription> = fmus.iter().map(|f| f.model_description()).collect();
    let sys = draft.resolve(&mds, over)?;
    Ok(Loaded { sys, fmus })
}

fn instantiate(l: &Loaded, timing: bool, isolate: bool) -> Result<Vec<Box<dyn Slave>>> {
    let mut v: Vec<Box<dyn Slave>> = Vec::new();
    if isolate {
        let exe = std::env::current_exe()?;
        for spec in &l.sys.instances {
            let (s, _) = master::fmu::IsolatedSlave::spawn(&exe, &spec.fmu, &spec.name)?;
            v.push(Box::new(s));
        }
        return Ok(v);
    }
    for (spec, f) in l.sys.instances.iter().zip(&l.fmus) {
        let mut s = f.instantiate(&spec.name)?;
        s.set_timing(timing);
        v.push(Box::new(s));
    }
    Ok(v)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The FFI floor of one instance: doStep + one batched getReal of its recorded outputs.
fn floor(l: &Loaded, i: usize, steps: u64) -> Result<f64> {
    let spec = &l.sys.instances[i];
    let mut s = l.fmus[i].instantiate(&format!("{}-floor", spec.name))?;
    s.set_timing(false);
    s.setup(l.sys.start, None)?;
    for (v, value) in &spec.starts {
        match value {
            master::system::StartValue::Real(x) => s.set_real(&[v.vr], &[*x])?,
            master::system::StartValue::Integer(x) => s.set_integer(&[v.vr], &[*x])?,
            master::system::StartValue::Boolean(x) => s.set_boolean(&[v.vr], &[*x])?,
            master::system::StartValue::String(x) => s.set_string(&[v.vr], &[x.as_str()])?,
        }
    }
    s.enter_initialization()?;
    s.exit_initialization()?;
    let vrs: Vec<u32> = l
        .sys
        .outputs
        .iter()
        .filter(|v| v.instance == i && v.ty == model_description::BaseType::Real)
        .map(|v| v.vr)
        .collect();
    let mut out = vec![0.0; vrs.len()];
    let h = l.sys.step;
    let t0 = Instant::now();
    for n in 0..steps {
        s.do_step(l.sys.start + n as f64 * h, h)?;
        if !vrs.is_empty() {
            s.get_real(&vrs, &mut out)?;
        }
    }
    Ok(t0.elapsed().as_secs_f64() / steps as f64)
}

struct MasterRun {
    per_step: f64,
    fmu_per_step: f64,
    allocs_per_step: f64,
}

fn master_run(
    l: &Loaded,
    steps: u64,
    csv: Option<&Path>,
    timing: bool,
    isolate: bool,
    allocs: AllocCounter,
) -> Result<MasterRun> {
    let mut slaves = instantiate(l, timing, isolate)?;
    let mds: Vec<&ModelDescription> = l.fmus.iter().map(|f| f.model_description()).collect();
    let warm = (steps / 10).clamp(1, 1000);
    let mut sys = l.sys.clone();
    sys.stop = sys.start + (warm + steps) as f64 * sys.step;
    let mut engine = master::run::initialize(&sys, &mut slaves, &mds)?;
    engine.set_timing(timing);
    let labels: Vec<String> = l.sys.outputs.iter().map(|v| l.sys.label(v)).collect();
    let mut recorder = match csv {
        Some(p) => Some(ResultsCsv::create(p, &labels, 1)?),
        None => None,
    };
    let mut values = Vec::with_capacity(labels.len());
    // Warm-up (buffers reach their sizes, the worker pool starts).
    for n in 0..warm {
        engine.step(n, &mut slaves)?;
    }
    let a0 = allocs();
    let t0 = Instant::now();
    for n in warm..warm + steps {
        engine.step(n, &mut slaves)?;
        if let Some(r) = recorder.as_mut() {
            engine.recorded(&mut slaves, &mut values)?;
            r.step(n, l.sys.start + (n + 1) as f64 * l.sys.step, &values, engine.bonds())?;
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let a1 = allocs();
    let fmu: f64 = slaves.iter().map(|s| s.call_stats().0).sum();
    Ok(MasterRun {
        per_step: wall / steps as f64,
        fmu_per_step: fmu / (warm + steps) as f64,
        allocs_per_step: (a1 - a0) as f64 / steps as f64,
    })
}

fn peers(opts: &Options, args: &[String]) -> Vec<serde_json::Value> {
    let Some(python) = &opts.python else { return Vec::new() };
    let out = Command::new(python).arg(&opts.peers_script).args(args).output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect(),
        Err(e) => vec![serde_json::json!({"tool": "python", "ok": false, "error": e.to_string()})],
    }
}

fn us(x: f64) -> String {
    if x.is_finite() {
        format!("{:.3}", x * 1e6)
    } else {
        "-".into()
    }
}

/// Runs the benchmark of every scenario and returns the report (Markdown).
pub fn bench(scenarios: &[PathBuf], opts: &Options, allocs: AllocCounter) -> Result<String> {
    let mut r = String::new();
    r.push_str(&format!(
        "# cosim bench\n\nMachine: {} logical CPUs; medians of {} repetitions; times per communication step.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        opts.repeat
    ));
    let mut summary =
        String::from("\n## Summary\n\n| scenario | cosim µs/step | FMPy | libcosim | ecos |\n|---|---|---|---|---|\n");
    for path in scenarios {
        let seq = Overrides { parallel: Some(Parallel::Off), ..Default::default() };
        let l = load(path, &seq).with_context(|| format!("loading {}", path.display()))?;
        let steps = opts.steps.unwrap_or_else(|| l.sys.steps()).max(10);
        let n_inst = l.sys.instances.len() as f64;
        let mut floors = Vec::new();
        for i in 0..l.sys.instances.len() {
            floors.push(median((0..opts.repeat).map(|_| floor(&l, i, steps)).collect::<Result<Vec<_>>>()?));
        }
        let floor_sum: f64 = floors.iter().sum();
        let runs = |csv: bool, timing: bool, l: &Loaded| -> Result<Vec<MasterRun>> {
            let tmp = std::env::temp_dir().join(format!("cosim-bench-{}.csv", std::process::id()));
            let v = (0..opts.repeat)
                .map(|_| master_run(l, steps, csv.then_some(tmp.as_path()), timing, false, allocs))
                .collect::<Result<Vec<_>>>();
            let _ = std::fs::remove_file(&tmp);
            v
        };
        let plain = runs(false, false, &l)?;
        let with_csv = runs(true, false, &l)?;
        let timed = runs(false, true, &l)?;
        let per_step = median(plain.iter().map(|m| m.per_step).collect());
        let per_step_csv = median(with_csv.iter().map(|m| m.per_step).collect());
        let fmu_share = median(timed.iter().map(|m| m.fmu_per_step).collect());
        let allocs_per_step = plain.iter().chain(&with_csv).map(|m| m.allocs_per_step).fold(0.0, f64::max);
        let overhead = (per_step - floor_sum) / n_inst;
        let overhead_csv = (per_step_csv - floor_sum) / n_inst;
        let sim_time = steps as f64 * l.sys.step;
        let par_line = if l.sys.instances.len() >= 2 {
            let on = load(path, &Overrides { parallel: Some(Parallel::On), ..Default::default() })?;
            let par = median(runs(false, false, &on)?.iter().map(|m| m.per_step).collect());
            format!("| Jacobi on worker threads | {} µs/step ({:.2}× sequential) |\n", us(par), per_step / par)
        } else {
            String::new()
        };
        let isolated = master_run(&l, (steps / 10).max(10), None, false, true, allocs)
            .map(|m| {
                format!(
                    "| instances in worker processes (`--isolate`) | {} µs/step ({:.0}× in process) |\n",
                    us(m.per_step),
                    m.per_step / per_step
                )
            })
            .unwrap_or_else(|e| format!("| instances in worker processes (`--isolate`) | failed: {e} |\n"));
        let par_line = par_line + &isolated;
        r.push_str(&format!(
            "\n## {}\n\n{} instances, H = {} s, {} steps ({} s simulated)\n\n| quantity | value |\n|---|---|\n\
             | wall time per step, no output | {} µs |\n| real-time factor | {:.0}× |\n\
             | FFI floor (doStep + getReal per instance, summed) | {} µs |\n\
             | master overhead per step per instance, no output | {} µs |\n\
             | master overhead per step per instance, CSV every step | {} µs |\n\
             | time inside FMU calls (timed run) | {} µs |\n| heap allocations per step | {} |\n{}",
            path.display(),
            l.sys.instances.len(),
            l.sys.step,
            steps,
            sim_time,
            us(per_step),
            l.sys.step / per_step,
            us(floor_sum),
            us(overhead),
            us(overhead_csv),
            us(fmu_share),
            allocs_per_step,
            par_line,
        ));
        // Peers.
        if opts.python.is_some() {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            let step = format!("{}", l.sys.step);
            let stop = format!("{}", l.sys.start + steps as f64 * l.sys.step);
            let mut rows = Vec::new();
            let mut line = format!("| {stem} | {} |", us(per_step));
            let coupled = peers(
                opts,
                &[
                    "coupled".into(),
                    "--system".into(),
                    path.display().to_string(),
                    "--step".into(),
                    step.clone(),
                    "--stop".into(),
                    stop.clone(),
                    "--repeat".into(),
                    opts.repeat.to_string(),
                ],
            );
            for p in &coupled {
                rows.push(peer_row(p, &format!("{stem} (coupled)"), per_step));
            }
            for tool in ["fmpy", "libcosim", "ecos"] {
                let cell = coupled
                    .iter()
                    .find(|p| p["tool"].as_str() == Some(tool))
                    .and_then(|p| if p["ok"].as_bool() == Some(true) { p["us_per_step"].as_f64() } else { None })
                    .map_or(" n/a |".to_owned(), |t| format!(" {t:.3} ({:.1}×) |", t / (per_step * 1e6)));
                line.push_str(&cell);
                if !line.ends_with('|') {
                    line.push_str(" |");
                }
            }
            summary.push_str(&line);
            summary.push('\n');
            for (i, f) in l.fmus.iter().enumerate() {
                if !l.sys.instances[i].starts.is_empty() {
                    // The peers' single-FMU runs use the FMU's own start values only.
                    continue;
                }
                let single = peers(
                    opts,
                    &[
                        "single".into(),
                        f.path().display().to_string(),
                        "--step".into(),
                        step.clone(),
                        "--stop".into(),
                        stop.clone(),
                        "--repeat".into(),
                        opts.repeat.to_string(),
                        "--tools".into(),
                        "fmpy".into(),
                    ],
                );
                for p in &single {
                    rows.push(peer_row(p, &format!("{} alone", l.sys.instances[i].name), floors[i] + overhead));
                }
            }
            r.push_str("\n| peer | run | peer µs/step | cosim µs/step | peer / cosim |\n|---|---|---|---|---|\n");
            for row in rows {
                r.push_str(&row);
            }
        }
    }
    if opts.python.is_some() {
        r.push_str(&summary);
        r.push_str("\nRatios are peer time / cosim time for the same FMUs, steps and step size (peers: Jacobi with held inputs).\n");
    }
    Ok(r)
}

fn peer_row(p: &serde_json::Value, run: &str, ours: f64) -> String {
    let tool = p["tool"].as_str().unwrap_or("?");
    if p["ok"].as_bool() == Some(true) {
        let t = p["us_per_step"].as_f64().unwrap_or(f64::NAN);
        format!(
            "| {tool} {} | {run} | {t:.3} | {} | {:.1}× |\n",
            p["version"].as_str().unwrap_or(""),
            us(ours),
            t / (ours * 1e6)
        )
    } else {
        let e = p["error"].as_str().unwrap_or("failed").replace('|', "/");
        format!("| {tool} | {run} | not available: {} | {} | - |\n", e.chars().take(120).collect::<String>(), us(ours))
    }
}
