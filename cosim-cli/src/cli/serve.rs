//! `cosim serve SYSTEM`: `cosim run SYSTEM --serve --paused` under its own name, for an operator
//! who wants the dashboard (docs/live.md): served on `[live] addr` (or 127.0.0.1:8033, or
//! `--addr`), in real time unless `--real-time FACTOR` says otherwise, waiting for the page's
//! Start button unless `--start`.

use super::Command;
use std::path::PathBuf;

/// The arguments of `cosim serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// What to serve: a TOML system file, an FMU or an SSP (as `cosim run`).
    pub system: PathBuf,
    /// Address to serve on (default: the system's [live] addr, else 127.0.0.1:8033; port 0
    /// picks a free one, printed).
    #[arg(long, value_name = "ADDR")]
    pub addr: Option<String>,
    /// Start running at once instead of waiting for a client's Start.
    #[arg(long)]
    pub start: bool,
    /// Output directory (default: `out/<file stem>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The settings (`--stop-time`, `--real-time`, `--rt-priority`, … and `--set KEY=VALUE`).
    #[command(flatten)]
    pub settings: super::settings_flags::SettingsFlags,
    /// Write timing.csv: every step's wall time, lateness and the stepping thread's counters.
    #[arg(long)]
    pub timing: bool,
    /// Which FMU messages are printed on stderr: all, warning (default), error, none.
    #[arg(long, value_name = "LEVEL", value_parser = ["all", "warning", "error", "none"])]
    pub fmu_log: Option<String>,
}

impl ServeArgs {
    /// The `cosim run` this is: `--serve [ADDR]`, `--paused` unless `--start`.
    pub fn into_run(self) -> Command {
        Command::Run(super::run::RunArgs {
            system: self.system,
            out: self.out,
            settings: self.settings,
            mat: false,
            fmu_log: self.fmu_log,
            output_file: None,
            start_values: Vec::new(),
            input_file: None,
            output_interval: None,
            output_variables: None,
            extrapolation: None,
            force: false,
            print_settings: false,
            timing: self.timing,
            serve: Some(self.addr.unwrap_or_default()),
            paused: !self.start,
            replay: None,
        })
    }
}
