//! `cosim plot DIR [VAR ...]`: a run's results.csv as a PNG or SVG.

use anyhow::Result;
use std::path::PathBuf;

/// The arguments of `cosim plot`.
#[derive(clap::Args)]
pub struct PlotArgs {
    /// The output directory of `cosim run` (results.csv, summary.json).
    dir: PathBuf,
    /// The columns to plot (default: every one), named as in results.csv or bare where one
    /// instance only has the variable.
    vars: Vec<String>,
    /// The picture to write: PNG, or SVG when the name ends in `.svg` (default: DIR/results.png).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Write SVG (DIR/results.svg unless --output names the file).
    #[arg(long)]
    svg: bool,
}

/// Draws the figure and writes the picture.
pub fn plot(args: PlotArgs) -> Result<i32> {
    let PlotArgs { dir, vars, output, svg } = args;
    let fig = crate::plot::results_figure(&dir, &vars)?;
    let file = output.unwrap_or_else(|| dir.join(if svg { "results.svg" } else { "results.png" }));
    if svg && !file.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg")) {
        anyhow::bail!("--svg writes SVG: name the file {}.svg", file.with_extension("").display());
    }
    crate::plot::write(&file, &fig)?;
    let n = fig.panels.len();
    eprintln!("{}: {} ({n} panel{})", file.display(), fig.title, if n == 1 { "" } else { "s" });
    Ok(0)
}
