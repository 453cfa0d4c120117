//! PNG line plots (plotters, bitmap backend). Text is drawn with DejaVu Sans, registered once from
//! the system fonts (Debian `fonts-dejavu-core`; `.ci/run` installs it).

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;
use std::path::Path;

/// DejaVu Sans as plotters' `sans-serif`, as `cosim plot` registers it.
fn register_font() -> Result<()> {
    cosim_cli::plot::register_font().map_err(|m| anyhow!(m))
}

/// One curve: legend label, points (x, y).
pub struct Series<'a> {
    /// Legend text.
    pub label: &'a str,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Writes a PNG line plot of `series` to `path` with `cosim_cli::plot`: the title, the axis labels
/// (with their units), the legend beside the data, coinciding curves all visible.
pub fn lines(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series<'_>]) -> Result<()> {
    let fig = cosim_cli::plot::Figure {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        panels: vec![cosim_cli::plot::Panel {
            y_label: y_label.to_owned(),
            series: series
                .iter()
                .map(|s| cosim_cli::plot::Series { label: s.label.to_owned(), points: s.points.clone() })
                .collect(),
        }],
        log_y: false,
    };
    cosim_cli::plot::png(path, &fig).map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

/// Writes a log–log work–precision plot (800 × 450 px): every configuration as a dot, the Pareto
/// front as a line; x = wall time (s), y = error. Points with a non-positive or non-finite
/// coordinate are left out.
pub fn work_precision(path: &Path, title: &str, y_label: &str, all: &[(f64, f64)], front: &[(f64, f64)]) -> Result<()> {
    register_font()?;
    let usable = |&&(x, y): &&(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
    let pts: Vec<(f64, f64)> = all.iter().filter(usable).copied().collect();
    if pts.is_empty() {
        return Err(anyhow!("{}: no finite positive points to plot", path.display()));
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0.0_f64, f64::INFINITY, 0.0_f64);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let (x0, x1, y0, y1) = (x0 / 1.3, x1 * 1.3, y0 / 2.0, y1 * 2.0);
    let root = BitMapBackend::new(path, (800, 450)).into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("wall time of the whole run (s)")
        .y_desc(y_label)
        .x_labels(6)
        .y_labels(10)
        .x_label_formatter(&|x| format!("{x:.3}"))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| draw(&e))?;
    let grey = RGBColor(150, 150, 150);
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, grey.filled())))
        .map_err(|e| draw(&e))?
        .label("configuration")
        .legend(move |(x, y)| Circle::new((x + 10, y), 3, grey.filled()));
    let front: Vec<(f64, f64)> = front.iter().filter(usable).copied().collect();
    let red = RGBColor(200, 30, 30);
    chart
        .draw_series(LineSeries::new(front.iter().copied(), red.stroke_width(2)))
        .map_err(|e| draw(&e))?
        .label("Pareto front")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
    chart.draw_series(front.iter().map(|&p| Circle::new(p, 4, red.filled()))).map_err(|e| draw(&e))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| draw(&e))?;
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
