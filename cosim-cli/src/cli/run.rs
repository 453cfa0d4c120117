//! `cosim run`: its arguments and what it does with them (the library's [`crate::run`] runs).

use anyhow::{Context, Result};
use master::system::Overrides;
use std::path::{Path, PathBuf};

/// The arguments of `cosim run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// What to run, recognized by content: a TOML system file, an FMU, an SSP 1.0 package
    /// (.ssp) or description (.ssd).
    pub(crate) system: PathBuf,
    /// Output directory (default: `out/<file stem>`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// The settings (`--step`, `--algorithm`, … and `--set KEY=VALUE` for any of them).
    #[command(flatten)]
    pub(crate) settings: super::settings_flags::SettingsFlags,
    /// Also write results.mat (MATLAB v4, the Dymola/OpenModelica result layout, units in
    /// the descriptions) next to results.csv.
    #[arg(long)]
    pub(crate) mat: bool,
    /// Which FMU messages are printed on stderr: all, warning (default), error, none;
    /// summary.json counts the warnings (instances[].fmu_warnings) anyway.
    #[arg(long, value_name = "LEVEL", value_parser = ["all", "warning", "error", "none"])]
    pub(crate) fmu_log: Option<String>,
    /// Not an option of cosim (FMPy's and libcosim's): refused with a pointer to --out DIR.
    #[arg(long, hide = true, value_name = "FILE")]
    pub(crate) output_file: Option<PathBuf>,
    /// A start value of the FMU, NAME=VALUE, typed by its model description (Real, Integer,
    /// Boolean true/false, String, Enumeration item name or number; a whole FMI 3.0 array:
    /// NAME=[1,2,3], row-major); repeatable.
    #[arg(long = "start-value", value_name = "NAME=VALUE")]
    pub(crate) start_values: Vec<String>,
    /// A CSV file driving inputs (FMPy's and fmusim's --input-file): the first column the time,
    /// one column per input by name (an FMU's names; a system's instance.variable); Real inputs
    /// interpolated linearly, Integer/Boolean/Enumeration held; a repeated time is a jump.
    #[arg(long, value_name = "FILE")]
    pub(crate) input_file: Option<PathBuf>,
    /// Time between rows of results.csv (s): a whole multiple of the step (default: every step).
    #[arg(long)]
    pub(crate) output_interval: Option<f64>,
    /// Recorded variables, comma separated (an FMU's names; a system's instance.variable;
    /// default: every output).
    #[arg(long, value_delimiter = ',')]
    pub(crate) output_variables: Option<Vec<String>>,
    /// Extrapolation order 0-4 for every connection (over each connection's own).
    #[arg(long)]
    pub(crate) extrapolation: Option<usize>,
    /// Run even when an instance would take more than 1e9 fmi2DoStep calls (refused
    /// otherwise as a likely typo in stop or step).
    #[arg(long)]
    pub(crate) force: bool,
    /// Print the settings the run would use (the file's with the command line's over them)
    /// as a TOML `[simulation]` table, and exit without running.
    #[arg(long)]
    pub(crate) print_settings: bool,
    /// Write timing.csv: every step's wall time and lateness (paced runs).
    #[arg(long)]
    pub(crate) timing: bool,
    /// Serve the run live on ADDR (default [live].addr or 127.0.0.1:8033): the dashboard at
    /// http://ADDR/, WebSocket at /ws, JSON lines and UDP datagrams on the same port (docs/live.md).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub(crate) serve: Option<String>,
    /// Start a served run paused, until a client starts it (the page's Start button).
    #[arg(long)]
    pub(crate) paused: bool,
    /// Replay a live run: its results.csv (or the folder holding it) drives the [live] inputs
    /// as the operator did, bit for bit; not served, not paced unless --real-time is given.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["serve", "paused"])]
    pub(crate) replay: Option<PathBuf>,
}

/// Runs `cosim run`; returns the exit code.
pub fn run(args: RunArgs) -> Result<i32> {
    let RunArgs {
        system,
        out,
        settings,
        mat,
        fmu_log,
        output_file,
        start_values,
        input_file,
        output_interval,
        output_variables,
        extrapolation,
        force,
        print_settings,
        timing,
        serve,
        paused,
        replay,
    } = args;
    if let Some(f) = output_file {
        anyhow::bail!(
            "--output-file {}: cosim writes a directory, not one file: use --out DIR (results.csv, \
             summary.json, bonds.csv inside; --mat adds results.mat)",
            f.display()
        );
    }
    if let Some(level) = fmu_log.as_deref().and_then(master::host::LogLevel::parse) {
        // The level of the log sink `guard::host` hands the library (passed on to isolated workers).
        crate::guard::set_fmu_log(level);
    }
    crate::guard::install();
    let (settings, given_as) = settings.settings()?;
    let over = Overrides { settings, extrapolation, force, given_as };
    let out = out.unwrap_or_else(|| {
        PathBuf::from("out").join(system.file_stem().map(PathBuf::from).unwrap_or_else(|| "run".into()))
    });
    let input = crate::run::detect(&system)?;
    eprintln!("reading {} as {}", system.display(), input.describe());
    let serve = master::live::ServeOptions { serve: serve.is_some(), addr: serve.filter(|a| !a.is_empty()), paused };
    let opts = crate::run::RunOptions {
        over,
        start_values,
        input_file,
        output_interval,
        output_variables,
        timing_csv: timing,
        serve,
        replay,
    };
    let prepared = crate::run::prepare(&system, input, &opts)?;
    for note in &prepared.notes {
        eprintln!("{}: {note}", system.display());
    }
    if print_settings {
        print!("{}", settings_table(&prepared)?);
        return Ok(0);
    }
    let summary = crate::run::run_prepared(&prepared, &out).with_context(|| format!("running {}", system.display()))?;
    if mat {
        master::matfile::write_from_csv(&out).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(report(&system, &out, &summary))
}

/// `--print-settings`: the settings the run would use, as a TOML `[simulation]` table; a value
/// the run refuses (NaN, `record_every = 0`, …) is refused here too.
fn settings_table(prepared: &crate::run::Prepared) -> Result<String> {
    let s = prepared.builder.checked_settings(&prepared.over)?;
    let mut text = String::new();
    toml_section(&mut text, "simulation", &s.to_table().map_err(anyhow::Error::msg)?);
    Ok(text)
}

/// `[name]` and its keys as TOML, nested tables as `[name.key]` after them; floats in Rust's
/// shortest round-trip form, exponent notation when large or small (`1e300`, not 301 digits).
fn toml_section(out: &mut String, name: &str, table: &toml::Table) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "[{name}]");
    for (k, v) in table {
        match v {
            toml::Value::Table(_) => {}
            toml::Value::Float(x) if x.is_finite() => {
                // `{:?}` keeps a fraction or an exponent: `1.0`, `1e300`, `1e-7`, never an integer.
                let _ = writeln!(out, "{k} = {x:?}");
            }
            v => {
                let _ = writeln!(out, "{k} = {v}");
            }
        }
    }
    for (k, v) in table {
        if let toml::Value::Table(inner) = v {
            out.push('\n');
            toml_section(out, &format!("{name}.{k}"), inner);
        }
    }
}

/// The run's last line on stderr and its exit code: 0 for a run that reached its end (or an
/// instance ended it), the signal's status when interrupted, else 1.
fn report(system: &Path, out: &Path, summary: &master::observer::Summary) -> i32 {
    use master::observer::Status;
    if let Some(w) = summary.iteration_warning() {
        eprintln!("warning: {}: {w}", system.display());
    }
    if matches!(summary.status, Status::Ok | Status::Terminated) {
        let ended =
            if summary.status == Status::Terminated { format!(" ({})", summary.message) } else { String::new() };
        eprintln!(
            "{}: {} steps to t = {}{ended} in {:.3} s; results in {}",
            system.display(),
            summary.steps,
            summary.time,
            summary.wall_time_s,
            out.display()
        );
        0
    } else {
        eprintln!(
            "error: {}: {} (results up to t = {} in {})",
            system.display(),
            summary.message,
            summary.time,
            out.display()
        );
        // Interrupted: the conventional status of the signal (130 for SIGINT, 143 for SIGTERM).
        match (summary.status, crate::guard::signal()) {
            (Status::Interrupted, Some(s)) => crate::guard::exit_code(s),
            _ => 1,
        }
    }
}
