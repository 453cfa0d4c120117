//! `cosim`: the co-simulation master's command line.
//!
//! ```text
//! cosim run SYSTEM.toml [--out DIR] [--stop-time T] [--step H] [--algorithm jacobi|gauss-seidel] [--extrapolation N]
//! cosim info FMU
//! ```

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use master::system::{AlgorithmKind, Overrides, Parallel};
use std::path::PathBuf;

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
        Command::Info { fmu } => {
            print!("{}", master::fmu::info::info(&fmu)?);
            Ok(0)
        }
        Command::Run { system, out, stop_time, step, algorithm, extrapolation, parallel } => {
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
            let over = Overrides { stop: stop_time, step, algorithm, extrapolation, parallel };
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
