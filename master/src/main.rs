//! `cosim`: the co-simulation master's command line.
//!
//! ```text
//! cosim run SYSTEM.toml|MODEL.fmu [--out DIR] [--start-time T0] [--stop-time T] [--step H] [--start-value NAME=VALUE ...]
//!           [--output-interval DT] [--output-variables A,B] [--algorithm jacobi|gauss-seidel] [--extrapolation N] [--isolate]
//!           [--step-control fixed|ecco] [--ecco-rtol R] [--ecco-atol A] [--h-min H] [--h-max H] [--energy-correction true|false]
//!           [--set KEY=VALUE ...]   (any [simulation] setting, TOML value syntax, dotted keys: ecco.safety=0.8)
//!           [--real-time [FACTOR]] [--max-lateness S] [--rt-priority] [--timing] [--serve [ADDR]] [--paused]
//! cosim serve SYSTEM.toml|MODEL.fmu|x.ssp [--addr ADDR] [--start] [--out DIR] [--real-time [FACTOR]] [--rt-priority] [--timing] …
//! cosim tune SYSTEM.toml [--input inst.var ...] [--h-ini H] [--h-inc H] [--tests step,ramp,...] [--verify CYCLE] [--out DIR]
//! cosim export-ssp SYSTEM.toml [--out x.ssp]
//! cosim info FMU
//! cosim check FMU [--start-value NAME=VALUE ...] [--stop-time T] [--step H] [--steps N] [--timeout S] [--json FILE]
//! ```

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

mod bench;
mod cli;

/// Counts heap allocations (one relaxed atomic add each), for `cosim bench`.
struct CountingAllocator;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Co-simulation master for FMI 2.0 Co-Simulation FMUs.
/// `cosim export-ssp --enumerations`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum EnumerationsArg {
    /// ssv:Enumeration with the item's name (SSP 1.0).
    Name,
    /// ssv:Integer with the item's value.
    Integer,
}

#[derive(Parser)]
#[command(name = "cosim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a system file (TOML) or one FMU; writes results.csv, bonds.csv and summary.json.
    ///
    /// What the file is, is decided by its content, not its name: a zip archive with
    /// modelDescription.xml is an FMU (run as one instance with its DefaultExperiment), one with
    /// SystemStructure.ssd an SSP, anything else a system file.
    Run(cli::run::RunArgs),
    /// Serve a run live in real time: the dashboard, WebSocket, JSON lines, UDP (docs/live.md)
    ///
    /// `cosim run --serve --paused`: the dashboard on http://ADDR/ (default [live].addr or
    /// 127.0.0.1:8033), WebSocket at /ws, JSON lines and UDP datagrams on the same port; waits
    /// for the page's Start unless --start.
    Serve(cli::serve::ServeArgs),
    /// Internal: serve one FMU instance for `run --isolate` (handshake on stdout, calls through
    /// the master's shared memory).
    #[command(hide = true)]
    Worker {
        /// The FMU as extracted by the master (shared by its instances' workers).
        #[arg(long)]
        extracted: Option<PathBuf>,
        /// The descriptor of the master's shared memory (inherited).
        #[arg(long)]
        shm_fd: i32,
        /// Which of the FMU's messages are printed on stderr (the master's `--fmu-log`).
        #[arg(long, value_name = "LEVEL", value_parser = ["all", "warning", "error", "none"], default_value = "warning")]
        fmu_log: String,
        /// The .fmu file.
        fmu: PathBuf,
        /// The instance name.
        instance: String,
    },
    /// Measure the master against the FFI floor and against FMPy, libcosim and ecos.
    Bench {
        /// System files (default: the oscillator scenarios).
        scenarios: Vec<PathBuf>,
        /// Communication steps per measurement (default: each scenario's).
        #[arg(long)]
        steps: Option<u64>,
        /// Repetitions; the median is reported.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Python with fmpy, libcosimpy and ecospy (default: .venv/bin/python if present).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Skip the third-party peers.
        #[arg(long)]
        no_peers: bool,
        /// Work–precision mode: measure this system's wall time and error against --reference
        /// over the --grid of configurations, print the Pareto front (instead of the overhead
        /// benchmark of SCENARIOS).
        #[arg(long, value_name = "SYSTEM", requires = "reference")]
        precision: Option<PathBuf>,
        /// The reference system file of --precision (e.g. a monolithic FMU at a small step).
        #[arg(long, value_name = "REF")]
        reference: Option<PathBuf>,
        /// A grid dimension of --precision, KEY=V1,V2,… with KEY a setting of [simulation]
        /// (`step`, `step_control`, `ecco.rtol`, `energy_correction`, …), `extrapolation` (every
        /// connection), `system` (alternative system files), `instances.NAME.step` (multirate) or
        /// a start value `instance.variable` (repeatable; default: step = H/2, H, 2H, 5H and
        /// extrapolation = 0, 1, 2).
        #[arg(long = "grid", value_name = "KEY=V1,V2")]
        grid: Vec<String>,
        /// --precision: a TOML file of `[[grid]]` tables (KEY = [values]), each a product of its
        /// dimensions; the configurations are the union of all (and of --grid's product).
        #[arg(long, value_name = "FILE")]
        grid_file: Option<PathBuf>,
        /// Compared variable of --precision, SYS=REF (`instance.variable` of the system and of the
        /// reference; repeatable; the first is the front's accuracy measure; default: each
        /// recorded variable of the system with a recorded variable of the same name in the
        /// reference).
        #[arg(long = "compare", value_name = "SYS=REF")]
        compare: Vec<String>,
        /// --precision: also report the fastest configuration within this error of the first
        /// compared variable (its unit).
        #[arg(long)]
        tolerance: Option<f64>,
        /// --precision: write precision.csv (every configuration) and precision.md here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Publication III configuration search: replace external inputs with test functions, sweep
    /// H per configuration while Σ|δE|(H) stays in its power-law relation, recommend, verify.
    Tune(cli::tune::TuneArgs),
    /// Write a system file as an SSP 1.0 package (FMUs embedded; cosim settings SSP cannot carry
    /// in an annotation that `cosim run x.ssp` reads back).
    ExportSsp {
        /// The system file (TOML).
        system: PathBuf,
        /// The .ssp to write (default: `<system file stem>.ssp`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Start values of FMI enumeration variables in the .ssv: `name` writes SSP 1.0's
        /// ssv:Enumeration (the item's name; cosim applies it, FMPy fails on it, OMSimulator
        /// ignores it); `integer` writes ssv:Integer with the item's value, which cosim, FMPy and
        /// OMSimulator apply (fmi2SetInteger) but which is not SSP 1.0's form for an enumeration
        /// (libcosim and ecos apply neither).
        #[arg(long, value_enum, default_value = "name")]
        enumerations: EnumerationsArg,
    },
    /// Behavioural FMI 2.0 compliance check of an FMU: every check in its own worker process,
    /// one line per check (PASS/WARN/FAIL/SKIP, evidence, FMI 2.0 section); exit code 1 on FAIL.
    Check {
        /// The .fmu file.
        fmu: PathBuf,
        /// A start value, NAME=VALUE, as `cosim run --start-value`; repeatable.
        #[arg(long = "start-value", value_name = "NAME=VALUE")]
        start_values: Vec<String>,
        /// Stop time (s; default: the DefaultExperiment's).
        #[arg(long)]
        stop_time: Option<f64>,
        /// Communication step H (s; default: the DefaultExperiment's).
        #[arg(long)]
        step: Option<f64>,
        /// At most this many communication steps (the stop time is cut).
        #[arg(long)]
        steps: Option<u64>,
        /// Seconds one check may take before its worker is killed and the check FAILs as hung.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Instantiate/free cycles of the cost check.
        #[arg(long, default_value_t = 1000)]
        cycles: u64,
        /// Run only these checks (comma separated ids).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Internal: run one check of `cosim check` on an extracted FMU.
    #[command(hide = true)]
    CheckWorker {
        /// The FMU as extracted by the checker.
        #[arg(long)]
        extracted: PathBuf,
        /// The check's id.
        #[arg(long)]
        check: String,
        /// The plan (JSON).
        #[arg(long)]
        plan: String,
        /// The .fmu file.
        fmu: PathBuf,
    },
    /// Show an FMU's metadata, capabilities and variables.
    Info {
        /// The .fmu file.
        fmu: PathBuf,
    },
    /// Plot a run's results.csv as a PNG: titled, one panel per unit (from summary.json), time
    /// on x, the legend beside the data.
    Plot {
        /// The output directory of `cosim run` (results.csv, summary.json).
        dir: PathBuf,
        /// The columns to plot (default: every one).
        vars: Vec<String>,
        /// The PNG to write (default: DIR/results.png).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            // Interrupted before the run started (e.g. while an FMU was loading).
            master::guard::signal().map_or(1, master::guard::exit_code)
        }
    };
    // A normal end: the run guard's atexit handler must not take it for an FMU calling exit().
    master::guard::disarm();
    std::process::exit(code);
}

/// The error and its causes as "a: b: c", each said once: a cause whose text its parent's
/// message already ends with (an OS error in `MasterError::Io`'s message and again as its
/// source) is left out, and so is the context "running x.toml" before a message that starts
/// with "x.toml: ".
fn error_chain(e: &anyhow::Error) -> String {
    let messages: Vec<String> = e.chain().map(ToString::to_string).collect();
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        if out.ends_with(m.as_str()) {
            continue;
        }
        let file = m.strip_prefix("running ").unwrap_or_default();
        if messages.get(i + 1).is_some_and(|next| !file.is_empty() && next.starts_with(&format!("{file}: "))) {
            continue;
        }
        if !out.is_empty() {
            out += ": ";
        }
        out += m;
    }
    out
}

fn run() -> Result<i32> {
    run_command(Cli::parse().command)
}

fn run_command(command: Command) -> Result<i32> {
    match command {
        Command::Serve(args) => run_command(args.into_run()),
        Command::Bench {
            precision: Some(system), reference, grid, grid_file, compare, tolerance, out, repeat, ..
        } => {
            let reference = reference.context("--precision needs --reference")?;
            let args = bench::PrecisionArgs { grid, grid_file, compare, tolerance, out, repeat: repeat.max(1) };
            print!("{}", bench::precision(&system, &reference, &args)?);
            Ok(0)
        }
        Command::Bench { scenarios, steps, repeat, python, no_peers, .. } => {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
            let scenarios = if scenarios.is_empty() {
                vec![root.join("scenarios/oscillator-fd.toml"), root.join("scenarios/oscillator-dd.toml")]
            } else {
                scenarios
            };
            let python = if no_peers {
                None
            } else {
                python.or_else(|| Some(root.join(".venv/bin/python")).filter(|p| p.exists()))
            };
            let opts = bench::Options {
                steps,
                repeat: repeat.max(1),
                python,
                peers_script: root.join("master/peers/bench_peers.py"),
            };
            print!("{}", bench::bench(&scenarios, &opts, allocations)?);
            Ok(0)
        }
        Command::Tune(args) => cli::tune::tune(args),
        Command::ExportSsp { system, out, enumerations } => {
            let out = out.unwrap_or_else(|| {
                PathBuf::from(format!("{}.ssp", system.file_stem().map_or("system".into(), |s| s.to_string_lossy())))
            });
            let enumerations = match enumerations {
                EnumerationsArg::Name => master::ssp::EnumerationForm::Name,
                EnumerationsArg::Integer => master::ssp::EnumerationForm::Integer,
            };
            let e = master::ssp::export_with(&system, &out, &master::ssp::ExportOptions { enumerations })
                .with_context(|| format!("exporting {} to {}", system.display(), out.display()))?;
            eprintln!(
                "{}: {} components ({} FMUs embedded), {} connections, {} start values",
                out.display(),
                e.components,
                e.fmus,
                e.connections,
                e.parameters
            );
            Ok(0)
        }
        Command::Check { fmu, start_values, stop_time, step, steps, timeout, cycles, only, json } => {
            let timeout = master::check::timeout_from_seconds(timeout).map_err(|e| anyhow::anyhow!("--timeout {e}"))?;
            master::guard::install();
            let opts = master::check::Options {
                start_values,
                stop_time,
                step,
                max_steps: steps,
                timeout,
                cycles,
                only,
                worker_exe: None,
                host: master::guard::host(),
            };
            let report = master::check::check(&fmu, &opts)?;
            print!("{}", report.text());
            if let Some(path) = json {
                std::fs::write(&path, report.json()).with_context(|| format!("writing {}", path.display()))?;
            }
            // Interrupted: the report so far, and the conventional status of the signal.
            Ok(master::guard::signal().map_or(i32::from(report.failed()), master::guard::exit_code))
        }
        Command::CheckWorker { fmu, extracted, check, plan } => {
            master::check::worker::serve(&fmu, &extracted, &check, &plan)
                .with_context(|| format!("check worker {check} for {}", fmu.display()))?;
            Ok(0)
        }
        Command::Info { fmu } => {
            print!("{}", master::fmu::info::info(&fmu)?);
            Ok(0)
        }
        Command::Plot { dir, vars, output } => {
            let fig = master::plot::results_figure(&dir, &vars)?;
            let png = output.unwrap_or_else(|| dir.join("results.png"));
            master::plot::png(&png, &fig)?;
            eprintln!("{}: {} ({} panels)", png.display(), fig.title, fig.panels.len());
            Ok(0)
        }
        Command::Worker { fmu, extracted, shm_fd, fmu_log, instance } => {
            let level = master::host::LogLevel::parse(&fmu_log).unwrap_or_default();
            let log: std::sync::Arc<dyn master::host::FmuLog> = std::sync::Arc::new(master::host::StderrLog(level));
            master::fmu::isolated::serve(&fmu, extracted.as_deref(), &instance, shm_fd, Some(log))
                .with_context(|| format!("worker for instance {instance} of {}", fmu.display()))?;
            Ok(0)
        }
        Command::Run(args) => cli::run::run(args),
    }
}
