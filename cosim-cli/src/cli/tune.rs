//! `cosim tune`: its arguments and what it does with them (the library's [`master::tune`] tunes).

use super::stderr::{redirect_stderr, restore_stderr};
use anyhow::{bail, Context, Result};
use std::io::IsTerminal;
use std::path::PathBuf;

/// The arguments of `cosim tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// The system file (TOML); its [tune] table declares the search (see docs/tune.md).
    system: PathBuf,
    /// External input replaced by the test functions (repeatable; overrides [tune].inputs).
    #[arg(long = "input")]
    inputs: Vec<String>,
    /// Range of a replaced input, `inst.var=MIN:MAX` (repeatable; default its min/max).
    #[arg(long = "range")]
    ranges: Vec<String>,
    /// First communication step H_ini (s).
    #[arg(long)]
    h_ini: Option<f64>,
    /// Increment H_inc (s).
    #[arg(long)]
    h_inc: Option<f64>,
    /// Largest H tried (s).
    #[arg(long)]
    h_max: Option<f64>,
    /// Test functions, comma separated: step,ramp,impulse[:WIDTH],sin:FREQ.
    #[arg(long)]
    tests: Option<String>,
    /// Sinusoid tests over this many whole periods (Publication III: 1; default: ⌈f·T⌉, T = 1 s).
    #[arg(long)]
    sine_periods: Option<u32>,
    /// Extrapolation choices, comma separated: 0,1,2,3,4,I2.
    #[arg(long)]
    extrapolation: Option<String>,
    /// Verification cycle: `system` (the file's own [[inputs]]) or a TOML file with stop and [[inputs]].
    #[arg(long)]
    verify: Option<String>,
    /// Reference step of the verification (s; default H_inc).
    #[arg(long)]
    reference_step: Option<f64>,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Output directory (default: `out/<system file stem>-tune`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run the sequences on a Dask cluster (scheduler address, e.g. tcp://host:8786) through
    /// `python -m cosim.tune_dask` (Python: $COSIM_PYTHON, else .venv/bin/python, else python3).
    #[arg(long, value_name = "SCHEDULER")]
    dask: Option<String>,
}

/// Runs `cosim tune`; returns the exit code.
pub fn tune(args: TuneArgs) -> Result<i32> {
    let TuneArgs {
        system,
        inputs,
        ranges,
        h_ini,
        h_inc,
        h_max,
        tests,
        sine_periods,
        extrapolation,
        verify,
        reference_step,
        jobs,
        out,
        dask,
    } = args;
    let mut parsed_ranges = Vec::new();
    for r in &ranges {
        let parsed = r.split_once('=').and_then(|(name, lim)| {
            let (lo, hi) = lim.split_once(':')?;
            Some((name.to_owned(), lo.trim().parse::<f64>().ok()?, hi.trim().parse::<f64>().ok()?))
        });
        match parsed {
            Some((name, lo, hi)) if lo < hi => parsed_ranges.push((name, lo, hi)),
            _ => bail!("--range {r}: expected inst.var=MIN:MAX with MIN < MAX"),
        }
    }
    let args = master::tune::TuneArgs {
        inputs,
        ranges: parsed_ranges,
        h_ini,
        h_inc,
        h_max,
        tests,
        sine_periods,
        extrapolation,
    };
    // SIGINT/SIGTERM stop the sweep at the next communication step of every run (the
    // guard's watchdog ends an FMU call that does not return, removing the extractions).
    crate::guard::install();
    crate::guard::doing(crate::guard::Doing::Running);
    // Bad test or extrapolation names are reported before anything runs.
    let mut defaults = master::tune::space::TuneSpec::from_table(None).map_err(anyhow::Error::msg)?;
    args.apply(&mut defaults).map_err(anyhow::Error::msg)?;
    let out = out.unwrap_or_else(|| {
        PathBuf::from("out")
            .join(format!("{}-tune", system.file_stem().map_or("system".into(), |s| s.to_string_lossy())))
    });
    // Thousands of runs: the FMUs' warnings (e.g. "RK4 unstable for this circuit") go to
    // out/fmu-warnings.log instead of the terminal; the progress bar keeps the terminal.
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let terminal = std::io::stderr().is_terminal();
    let log = out.join("fmu-warnings.log");
    let stderr = redirect_stderr(&log).with_context(|| format!("redirecting FMU messages to {}", log.display()))?;
    let progress: Option<std::sync::Mutex<Box<dyn std::io::Write + Send>>> =
        if terminal { Some(std::sync::Mutex::new(Box::new(stderr.try_clone()?))) } else { None };
    let opts = master::tune::TuneOptions {
        out_dir: out.clone(),
        sweep: master::tune::SweepOptions {
            jobs,
            progress,
            dask: dask.map(|scheduler| master::tune::dask::Dask { scheduler, args: args.clone(), python: None }),
        },
        verify,
        reference_step,
        host: crate::guard::host(),
    };
    let tuned = master::tune::tune_file(
        &system,
        |spec| {
            let _ = args.apply(spec);
        },
        &opts,
    )
    .with_context(|| format!("tuning {}", system.display()));
    restore_stderr(stderr);
    if let (Err(_), Some(sig)) = (&tuned, crate::guard::signal()) {
        eprintln!(
            "error: tuning {}: interrupted ({}): the runs done are in {}; the same command resumes the sweep",
            system.display(),
            crate::guard::signal_name(sig),
            out.join("tune.csv").display()
        );
        return Ok(crate::guard::exit_code(sig));
    }
    let tuned = tuned?;
    print!("{}", tuned.text);
    eprintln!(
        "{} runs ({} reused); tune.csv, tune.json and recommended.toml in {}",
        tuned.sweep.rows.len(),
        tuned.sweep.reused,
        out.display()
    );
    Ok(if tuned.report.paper.is_some() { 0 } else { 1 })
}
