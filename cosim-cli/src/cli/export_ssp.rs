//! `cosim export-ssp SYSTEM.toml`: a system file as an SSP 1.0 package.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// `cosim export-ssp --enumerations`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum EnumerationsArg {
    /// ssv:Enumeration with the item's name (SSP 1.0's form).
    Name,
    /// ssv:Integer with the item's value (the default: every reader tested takes it).
    Integer,
}

/// The arguments of `cosim export-ssp`.
#[derive(clap::Args)]
pub struct ExportSspArgs {
    /// The system file (TOML).
    system: PathBuf,
    /// The .ssp to write (default: `<system file stem>.ssp`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Start values of FMI enumeration variables in the .ssv: `integer` (default) writes
    /// ssv:Integer with the item's value, which cosim, FMPy and OMSimulator apply
    /// (fmi2SetInteger) and libcosim and ecos load (they apply no enumeration); `name` writes
    /// SSP 1.0's ssv:Enumeration (the item's name; cosim applies it, FMPy fails on it,
    /// OMSimulator ignores it).
    #[arg(long, value_enum, default_value = "integer")]
    enumerations: EnumerationsArg,
}

/// Writes the package and says what is in it.
pub fn export_ssp(args: ExportSspArgs) -> Result<i32> {
    let ExportSspArgs { system, out, enumerations } = args;
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
