//! PNG line plots (plotters, bitmap backend). Text is drawn with DejaVu Sans, registered once from
//! the system fonts (Debian `fonts-dejavu-core`; `.ci/run` installs it).

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const FONT_PATHS: [&str; 2] =
    ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"];

fn register_font() -> Result<()> {
    static OK: OnceLock<bool> = OnceLock::new();
    let ok = *OK.get_or_init(|| {
        FONT_PATHS.iter().any(|p| match std::fs::read(p) {
            Ok(bytes) => {
                let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, leaked).is_ok()
            }
            Err(_) => false,
        })
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("no DejaVuSans.ttf in {FONT_PATHS:?}: install fonts-dejavu-core"))
    }
}

/// One curve: legend label, points (x, y).
pub struct Series<'a> {
    /// Legend text.
    pub label: &'a str,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Writes a PNG line plot of `series` to `path` (800 × 450 px).
pub fn lines(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series<'_>]) -> Result<()> {
    register_font()?;
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for s in series {
        for &(x, y) in &s.points {
            if x.is_finite() && y.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
    }
    if !(x0.is_finite() && y0.is_finite()) {
        return Err(anyhow!("{}: no finite points to plot", path.display()));
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = if y1 > y0 { 0.05 * (y1 - y0) } else { 0.5 * y0.abs().max(1e-12) };
    let (y0, y1) = (y0 - pad, y1 + pad);
    let root = BitMapBackend::new(path, (800, 450)).into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| draw(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| draw(&e))?
            .label(s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| draw(&e))?;
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
