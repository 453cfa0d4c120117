//! The `cosim` command line: its commands ([`Command`], one file each) and what each does
//! ([`run_command`]). The library, `master`, never uses them.
//!
//! ```text
//! cosim run SYSTEM.toml|MODEL.fmu|x.ssp [--out DIR] [--start-time T0] [--stop-time T] [--step H] [--start-value NAME=VALUE ...]
//!           [--output-interval DT] [--output-variables A,B] [--algorithm jacobi|gauss-seidel] [--extrapolation N] [--isolate]
//!           [--step-control fixed|ecco] [--ecco-rtol R] [--ecco-atol A] [--h-min H] [--h-max H] [--energy-correction true|false]
//!           [--set KEY=VALUE ...]   (any [simulation] setting, TOML value syntax, dotted keys: ecco.safety=0.8)
//!           [--real-time [FACTOR]] [--max-lateness S] [--rt-priority] [--timing] [--serve [ADDR]] [--paused]
//! cosim serve SYSTEM.toml|MODEL.fmu|x.ssp [--addr ADDR] [--start] [--out DIR] [--real-time [FACTOR]] [--rt-priority] [--timing] …
//! cosim tune SYSTEM.toml [--input inst.var ...] [--h-ini H] [--h-inc H] [--tests step,ramp,...] [--verify CYCLE] [--out DIR]
//! cosim export-ssp SYSTEM.toml [--out x.ssp]
//! cosim info FMU
//! cosim check FMU [--start-value NAME=VALUE ...] [--stop-time T] [--step H] [--steps N] [--timeout S] [--json FILE]
//! cosim plot DIR [VAR ...] [--output PNG]
//! cosim bench [SCENARIO ...] | cosim bench --precision SYSTEM --reference REF [--grid KEY=V1,V2 ...]
//! ```

use anyhow::Result;
use clap::{Parser, Subcommand};

pub mod bench;
pub mod check;
pub mod export_ssp;
pub mod info;
pub mod plot;
pub mod run;
pub mod serve;
pub mod settings_flags;
pub mod stderr;
pub mod tune;
pub mod worker;

/// Co-simulation master for FMI 2.0 and FMI 3.0 FMUs (Co-Simulation, and Model Exchange integrated
/// by the master): runs a system file (TOML), an SSP or one FMU, serves a run live, tunes, checks
/// and benchmarks.
#[derive(Parser)]
#[command(name = "cosim", version)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `cosim`.
#[derive(Subcommand)]
pub enum Command {
    /// Run a system file (TOML), an SSP or one FMU (FMI 2.0 or 3.0); writes results.csv, bonds.csv
    /// and summary.json.
    ///
    /// What the file is, is decided by its content, not its name: a zip archive with
    /// modelDescription.xml is an FMU (FMI 2.0 or 3.0, run as one instance with its
    /// DefaultExperiment; Co-Simulation, or Model Exchange where the FMU has only that or
    /// --interface me says so), one with SystemStructure.ssd an SSP, anything else a system file.
    Run(run::RunArgs),
    /// Serve a run live in real time: the dashboard, WebSocket, JSON lines, UDP (docs/live.md)
    ///
    /// `cosim run --serve --paused`: the dashboard on http://ADDR/ (default [live].addr or
    /// 127.0.0.1:8033), WebSocket at /ws, JSON lines and UDP datagrams on the same port; waits
    /// for the page's Start unless --start.
    Serve(serve::ServeArgs),
    /// Internal: serve one FMU instance for `run --isolate` (handshake on stdout, calls through
    /// the master's shared memory).
    #[command(hide = true)]
    Worker(worker::WorkerArgs),
    /// Measure the master against the FFI floor and against FMPy, libcosim and ecos.
    Bench(bench::BenchArgs),
    /// Publication III configuration search: replace external inputs with test functions, sweep
    /// H per configuration while Σ|δE|(H) stays in its power-law relation, recommend, verify.
    Tune(tune::TuneArgs),
    /// Write a system file as an SSP 1.0 package (FMUs embedded; cosim settings SSP cannot carry
    /// in an annotation that `cosim run x.ssp` reads back).
    ExportSsp(export_ssp::ExportSspArgs),
    /// Behavioural FMI 2.0 compliance check of an FMI 2.0 Co-Simulation FMU: every check in its
    /// own worker process, one line per check (PASS/WARN/FAIL/SKIP, evidence, FMI 2.0 section);
    /// exit code 1 on FAIL.
    Check(check::CheckArgs),
    /// Internal: run one check of `cosim check` on an extracted FMU.
    #[command(hide = true)]
    CheckWorker(check::CheckWorkerArgs),
    /// Show an FMU's metadata (FMI 2.0 or 3.0), capabilities and variables.
    Info(info::InfoArgs),
    /// Plot a run's results.csv as a PNG or SVG: titled (the run and its models), one panel per unit (from summary.json), time
    /// on x, the legend beside the data.
    Plot(plot::PlotArgs),
}

/// Runs `command`; returns the process's exit code. `allocations`: the binary's count of heap
/// allocations so far (for `cosim bench`).
pub fn run_command(command: Command, allocations: fn() -> u64) -> Result<i32> {
    match command {
        Command::Serve(args) => run_command(args.into_run(), allocations),
        Command::Bench(args) => bench::bench(args, allocations),
        Command::Tune(args) => tune::tune(args),
        Command::ExportSsp(args) => export_ssp::export_ssp(args),
        Command::Check(args) => check::check(args),
        Command::CheckWorker(args) => check::check_worker(args),
        Command::Info(args) => info::info(args),
        Command::Plot(args) => plot::plot(args),
        Command::Worker(args) => worker::worker(args),
        Command::Run(args) => run::run(args),
    }
}
