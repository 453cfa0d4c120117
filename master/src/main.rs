//! `cosim`: the co-simulation master's command line.
//!
//! ```text
//! cosim run SYSTEM.toml [--out DIR] [--stop-time T] [--step H] [--algorithm jacobi|gauss-seidel] [--extrapolation N] [--isolate]
//! cosim info FMU
//! ```

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use master::system::{AlgorithmKind, Overrides, Parallel};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

mod bench;

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

extern "C" fn on_signal(_signal: i32) {
    // Async-signal-safe: one atomic store.
    master::run::INTERRUPTED.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM stop the run at the next communication point (results stay readable).
fn install_signal_handlers() {
    extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    // SAFETY: `signal` is the C library's; the handler only performs an atomic store, which is
    // async-signal-safe, and stays valid for the whole process.
    unsafe {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
    }
}

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Co-simulation master for FMI 2.0 Co-Simulation FMUs.
#[derive(Parser)]
#[command(name = "cosim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a system description; writes results.csv, bonds.csv and summary.json.
    Run {
        /// The system file (TOML).
        system: PathBuf,
        /// Output directory (default: `out/<system file stem>`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Stop time (s), overrides [simulation].stop.
        #[arg(long)]
        stop_time: Option<f64>,
        /// Communication step H (s), overrides [simulation].step.
        #[arg(long)]
        step: Option<f64>,
        /// jacobi or gauss-seidel, overrides [simulation].algorithm.
        #[arg(long)]
        algorithm: Option<String>,
        /// Extrapolation order 0-4 for every connection.
        #[arg(long)]
        extrapolation: Option<usize>,
        /// Jacobi worker threads: auto, on or off.
        #[arg(long)]
        parallel: Option<String>,
        /// Run every instance in its own worker process: an FMU that crashes ends the run with a
        /// message instead of taking cosim down (overrides [simulation].isolate).
        #[arg(long)]
        isolate: bool,
    },
    /// Internal: serve one FMU instance over stdin/stdout for `run --isolate`.
    #[command(hide = true)]
    Worker {
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
    },
    /// Show an FMU's metadata, capabilities and variables.
    Info {
        /// The .fmu file.
        fmu: PathBuf,
    },
}

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32> {
    match Cli::parse().command {
        Command::Bench { scenarios, steps, repeat, python, no_peers } => {
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
        Command::Info { fmu } => {
            print!("{}", master::fmu::info::info(&fmu)?);
            Ok(0)
        }
        Command::Worker { fmu, instance } => {
            master::fmu::isolated::serve(&fmu, &instance)
                .with_context(|| format!("worker for instance {instance} of {}", fmu.display()))?;
            Ok(0)
        }
        Command::Run { system, out, stop_time, step, algorithm, extrapolation, parallel, isolate } => {
            install_signal_handlers();
            let algorithm = match algorithm.as_deref() {
                None => None,
                Some(a) => match AlgorithmKind::parse(a) {
                    Some(k) => Some(k),
                    None => bail!("--algorithm {a}: expected jacobi or gauss-seidel"),
                },
            };
            let parallel = match parallel.as_deref() {
                None => None,
                Some("auto") => Some(Parallel::Auto),
                Some("on") => Some(Parallel::On),
                Some("off") => Some(Parallel::Off),
                Some(p) => bail!("--parallel {p}: expected auto, on or off"),
            };
            let isolate = isolate.then_some(true);
            let over = Overrides { stop: stop_time, step, algorithm, extrapolation, parallel, isolate };
            let out = out.unwrap_or_else(|| {
                PathBuf::from("out").join(system.file_stem().map(PathBuf::from).unwrap_or_else(|| "run".into()))
            });
            let summary =
                master::run::run_file(&system, &over, &out).with_context(|| format!("running {}", system.display()))?;
            if summary.status == "ok" {
                eprintln!(
                    "{}: {} steps to t = {} in {:.3} s; results in {}",
                    system.display(),
                    summary.steps,
                    summary.time,
                    summary.wall_time_s,
                    out.display()
                );
                Ok(0)
            } else {
                eprintln!(
                    "error: {}: {} (results up to t = {} in {})",
                    system.display(),
                    summary.message,
                    summary.time,
                    out.display()
                );
                Ok(1)
            }
        }
    }
}
