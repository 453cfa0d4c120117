//! `cosim plot DIR [VAR ...]`: a run's results.csv as a PNG.

use anyhow::Result;
use std::path::PathBuf;

/// The arguments of `cosim plot`.
#[derive(clap::Args)]
pub struct PlotArgs {
    /// The output directory of `cosim run` (results.csv, summary.json).
    dir: PathBuf,
    /// The columns to plot (default: every one).
    vars: Vec<String>,
    /// The PNG to write (default: DIR/results.png).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Draws the figure and writes the PNG.
pub fn plot(args: PlotArgs) -> Result<i32> {
    let PlotArgs { dir, vars, output } = args;
    let fig = crate::plot::results_figure(&dir, &vars)?;
    let png = output.unwrap_or_else(|| dir.join("results.png"));
    crate::plot::png(&png, &fig)?;
    eprintln!("{}: {} ({} panels)", png.display(), fig.title, fig.panels.len());
    Ok(0)
}
