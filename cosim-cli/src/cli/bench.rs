//! `cosim bench`: the master's overhead against the FFI floor and third-party masters
//! ([`crate::bench::bench`]), or with `--precision` the work–precision search
//! ([`crate::bench::precision`]).

use anyhow::{Context, Result};
use std::path::PathBuf;

/// The arguments of `cosim bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
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
    /// Model Exchange work–precision (issue 50): the FMUs given as SCENARIOS integrated by our
    /// BDF at each --tolerances, RK4 and Euler at each --fixed-divisions, and by FMPy's CVode at
    /// the same tolerances, error against a tight reference vs wall time.
    #[arg(long)]
    model_exchange: bool,
    /// --model-exchange: relative tolerances (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1e-4, 1e-6, 1e-8])]
    tolerances: Vec<f64>,
    /// --model-exchange: fixed steps of RK4 and Euler as the output interval divided by these.
    #[arg(long, value_delimiter = ',', default_values_t = [10, 100])]
    fixed_divisions: Vec<u32>,
    /// --model-exchange: a start value STEM:name=value for the FMU of file stem STEM (repeatable).
    #[arg(long = "start-value", value_name = "STEM:NAME=VALUE")]
    start_values: Vec<String>,
    /// --model-exchange: stop time (default: each FMU's DefaultExperiment).
    #[arg(long)]
    stop: Option<f64>,
    /// --precision: write precision.csv (every configuration) and precision.md here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs the benchmark and prints its tables.
pub fn bench(args: BenchArgs, allocations: fn() -> u64) -> Result<i32> {
    let BenchArgs {
        scenarios,
        steps,
        repeat,
        python,
        no_peers,
        precision,
        reference,
        grid,
        grid_file,
        compare,
        tolerance,
        out,
        model_exchange,
        tolerances,
        fixed_divisions,
        stop,
        start_values,
    } = args;
    // SIGINT/SIGTERM/SIGHUP stop the runs at a communication point (or end the process after the
    // guard's grace period), the extraction folders and workers are cleaned up.
    crate::guard::install();
    crate::guard::doing(crate::guard::Doing::Running);
    if let Some(system) = precision {
        let reference = reference.context("--precision needs --reference")?;
        let args = crate::bench::PrecisionArgs { grid, grid_file, compare, tolerance, out, repeat: repeat.max(1) };
        print!("{}", crate::bench::precision(&system, &reference, &args)?);
        return Ok(0);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    if model_exchange {
        let python =
            if no_peers { None } else { python.or_else(|| Some(root.join(".venv/bin/python")).filter(|p| p.exists())) };
        let opts = crate::bench::MeOptions {
            tolerances,
            fixed_divisions,
            stop,
            repeat: repeat.max(1),
            python,
            script: root.join("master/peers/bench_me_fmpy.py"),
            start_values,
        };
        print!("{}", crate::bench::model_exchange(&scenarios, &opts)?);
        return Ok(0);
    }
    let scenarios = if scenarios.is_empty() {
        vec![root.join("scenarios/oscillator-fd.toml"), root.join("scenarios/oscillator-dd.toml")]
    } else {
        scenarios
    };
    let python =
        if no_peers { None } else { python.or_else(|| Some(root.join(".venv/bin/python")).filter(|p| p.exists())) };
    let opts = crate::bench::Options {
        steps,
        repeat: repeat.max(1),
        python,
        peers_script: root.join("master/peers/bench_peers.py"),
    };
    print!("{}", crate::bench::bench(&scenarios, &opts, allocations)?);
    Ok(0)
}
