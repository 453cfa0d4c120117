//! Plots people can read (issue 36 item 4), for `cosim plot DIR [VARS…]`, the validation and tune
//! reports: a title, one panel per unit with the unit on its y axis, time (s) on x, the legend in
//! its own column right of the data (never over it), and later curves drawn thinner on top of
//! earlier ones, so that two curves that coincide both stay visible; curves of few points (a
//! sweep over H) get a marker at each point, so a single point shows too.
//!
//! A [`Figure`] is plain data; [`draw`] renders it on any plotters backend (PNG in [`png`]; the
//! tests render it on a backend that records the text drawn and check titles, axes and legends).
//! Text is drawn with DejaVu Sans from the system fonts (Debian `fonts-dejavu-core`).

use master::error::{MasterError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

const FONT_PATHS: [&str; 2] =
    ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"];

/// Registers DejaVu Sans as plotters' `sans-serif` (once); an error when it is not installed.
pub fn register_font() -> std::result::Result<(), String> {
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
        Err(format!("no DejaVuSans.ttf in {FONT_PATHS:?}: install fonts-dejavu-core"))
    }
}

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points (x, y); non-finite ones are left out.
    pub points: Vec<(f64, f64)>,
}

/// One panel: curves sharing a y axis.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The y axis' label, with its unit (e.g. `pressure (Pa)`).
    pub y_label: String,
    /// Curves.
    pub series: Vec<Series>,
}

/// A figure: a title over panels stacked vertically, sharing the x axis.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Title.
    pub title: String,
    /// The x axis' label, with its unit (e.g. `time (s)`).
    pub x_label: String,
    /// Panels, top to bottom.
    pub panels: Vec<Panel>,
    /// Logarithmic y axes.
    pub log_y: bool,
}

/// Where things went: each panel's plotting area and the left edge of its legend column
/// (pixels), for the tests of the layout.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// (x0, y0, x1, y1) of each panel's plotting area (inside the axes).
    pub plot_areas: Vec<(i32, i32, i32, i32)>,
    /// x of each panel's legend column.
    pub legend_x: Vec<i32>,
}

/// Legend column width for `labels` at 14 px (about 8 px a character, a line sample, margins).
fn legend_width(fig: &Figure) -> u32 {
    let chars = fig.panels.iter().flat_map(|p| &p.series).map(|s| s.label.chars().count()).max().unwrap_or(0);
    (chars as u32 * 8 + 50).clamp(90, 320)
}

fn range(series: &[Series], log: bool) -> Option<(f64, f64, f64, f64)> {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in series.iter().flat_map(|s| &s.points) {
        if x.is_finite() && y.is_finite() && (!log || y > 0.0) {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if !(x0.is_finite() && y0.is_finite()) {
        return None;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if log {
        return Some((x0, x1, y0 / 1.2, if y1 > y0 { y1 * 1.2 } else { y0 * 10.0 }));
    }
    let pad = if y1 > y0 { 0.05 * (y1 - y0) } else { 0.5 * y0.abs().max(1e-12) };
    Some((x0, x1, y0 - pad, y1 + pad))
}

/// Draws `fig` on `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> std::result::Result<Layout, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let body = root.titled(&fig.title, ("sans-serif", 22)).map_err(|x| e(&x))?;
    let n = fig.panels.len().max(1);
    let panels = body.split_evenly((n, 1));
    let (w, _) = body.dim_in_pixel();
    let lw = legend_width(fig).min(w / 3);
    let mut layout = Layout::default();
    for (k, (area, panel)) in panels.iter().zip(&fig.panels).enumerate() {
        let (chart_area, legend_area) = area.split_horizontally(w - lw);
        let last = k + 1 == fig.panels.len();
        let Some((x0, x1, y0, y1)) = range(&panel.series, fig.log_y) else {
            return Err(format!("{}: nothing finite to plot in panel {:?}", fig.title, panel.y_label));
        };
        let mut builder = ChartBuilder::on(&chart_area);
        builder.margin(8).x_label_area_size(if last { 40 } else { 20 }).y_label_area_size(90);
        let n_series = panel.series.len();
        let mut draw_series = |chart_area_px: ((i32, i32), (i32, i32))| {
            layout.plot_areas.push((chart_area_px.0 .0, chart_area_px.0 .1, chart_area_px.1 .0, chart_area_px.1 .1));
        };
        let bins = chart_area.dim_in_pixel().0.saturating_sub(100).max(50) as usize;
        // One set-up for both y axes (their coordinate types differ, so a macro, not a function).
        macro_rules! chart {
            ($y:expr, $log:expr) => {{
                let mut chart = builder.build_cartesian_2d(x0..x1, $y).map_err(|x| e(&x))?;
                let mut mesh = chart.configure_mesh();
                mesh.y_desc(panel.y_label.as_str()).label_style(("sans-serif", 14)).y_label_formatter(&|v| tick(*v));
                mesh.x_label_formatter(&|v| tick(*v)).x_labels(X_TICKS);
                if last {
                    mesh.x_desc(fig.x_label.as_str());
                }
                mesh.draw().map_err(|x| e(&x))?;
                paint(&mut chart, &panel.series, $log, bins)?;
                chart.plotting_area().get_pixel_range()
            }};
        }
        let r = if fig.log_y { chart!((y0..y1).log_scale(), true) } else { chart!(y0..y1, false) };
        draw_series(((r.0.start, r.1.start), (r.0.end, r.1.end)));
        // The legend, in its own column right of the chart.
        let (lx, ly) = legend_area.get_base_pixel();
        layout.legend_x.push(lx);
        for (i, s) in panel.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let y = 14 + 20 * i as i32;
            legend_area
                .draw(&PathElement::new(vec![(6, y), (30, y)], color.stroke_width(width(i, n_series))))
                .map_err(|x| e(&x))?;
            legend_area.draw(&Text::new(s.label.clone(), (36, y - 7), ("sans-serif", 14))).map_err(|x| e(&x))?;
        }
        let _ = ly;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(layout)
}

/// A tick label: plain for moderate magnitudes, else in exponent form (7.6e6, not 7600000.0).
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{v:.2e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Time ticks on the x axis (plotters' default gives as few as two on a long run).
const X_TICKS: usize = 12;

/// Draws `series` on `chart` (y > 0 only when `log`). A curve with more points than `bins` pixel
/// columns is drawn as its envelope: per column the smallest and largest value, filled as a band
/// and joined by one line through each column's extremes in the order they occur, so a transient
/// faster than a pixel shows as a connected stroke of its full height, never as loose dots.
fn paint<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'_, DB, CT>,
    series: &[Series],
    log: bool,
    bins: usize,
) -> std::result::Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let n = series.len();
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let style = color.stroke_width(width(i, n));
        let pts: Vec<(f64, f64)> =
            s.points.iter().copied().filter(|&(x, y)| x.is_finite() && y.is_finite() && (!log || y > 0.0)).collect();
        if pts.len() <= MARKED {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3 + width(i, n) / 2, style.filled())))
                .map_err(|x| e(&x))?;
        }
        match envelope(&pts, bins) {
            Some(env) => {
                let band: Vec<(f64, f64)> = env.upper.iter().chain(env.lower.iter().rev()).copied().collect();
                chart.draw_series(std::iter::once(Polygon::new(band, color.mix(0.35).filled()))).map_err(|x| e(&x))?;
                // Segment by segment: plotters joins a wide polyline with miters, which at the
                // turn-backs of an envelope shoot far out of the plotting area.
                chart
                    .draw_series(env.line.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], style)))
                    .map_err(|x| e(&x))?;
            }
            None => {
                chart.draw_series(LineSeries::new(pts, style)).map_err(|x| e(&x))?;
            }
        }
    }
    Ok(())
}

/// A curve reduced to `bins` columns of equal time: see [`envelope`].
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Per column, its smallest and largest point in the order they occur (one polyline).
    pub line: Vec<(f64, f64)>,
    /// Per column, (column's mean time, largest value).
    pub upper: Vec<(f64, f64)>,
    /// Per column, (column's mean time, smallest value).
    pub lower: Vec<(f64, f64)>,
}

/// The min/max envelope of `pts` (sorted by time) over `bins` columns of equal time; `None` when
/// there are at most two points per column (then the curve is drawn point by point).
pub fn envelope(pts: &[(f64, f64)], bins: usize) -> Option<Envelope> {
    if bins == 0 || pts.len() <= 2 * bins {
        return None;
    }
    let (t0, t1) = (pts.first()?.0, pts.last()?.0);
    if t1 <= t0 {
        return None;
    }
    let column = |t: f64| (((t - t0) / (t1 - t0) * bins as f64) as usize).min(bins - 1);
    let mut env = Envelope { line: Vec::new(), upper: Vec::new(), lower: Vec::new() };
    let mut k = 0;
    while k < pts.len() {
        let c = column(pts[k].0);
        let mut j = k;
        let (mut lo, mut hi, mut tsum) = (k, k, 0.0);
        while j < pts.len() && column(pts[j].0) == c {
            if pts[j].1 < pts[lo].1 {
                lo = j;
            }
            if pts[j].1 > pts[hi].1 {
                hi = j;
            }
            tsum += pts[j].0;
            j += 1;
        }
        let tm = tsum / (j - k) as f64;
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        env.line.push(pts[a]);
        if b != a {
            env.line.push(pts[b]);
        }
        env.upper.push((tm, pts[hi].1));
        env.lower.push((tm, pts[lo].1));
        k = j;
    }
    Some(env)
}

/// How a quantity in SI `unit` whose largest magnitude is `max_abs` reads best to an engineer:
/// the factor the values are multiplied by and the unit shown (pressures in bar, strokes in mm,
/// forces in kN, flows in L/min, …); `(1, unit)` when SI already reads well.
pub fn engineering(unit: &str, max_abs: f64) -> (f64, String) {
    let big = max_abs >= 1e3;
    let (factor, shown) = match unit {
        "Pa" if max_abs >= 1e4 => (1e-5, "bar"),
        "m" if max_abs > 0.0 && max_abs < 1.0 => (1e3, "mm"),
        "m/s" if max_abs > 0.0 && max_abs < 0.1 => (1e3, "mm/s"),
        "N" if big => (1e-3, "kN"),
        "N.m" | "N·m" | "Nm" if big => (1e-3, "kN.m"),
        "W" if big => (1e-3, "kW"),
        "J" if big => (1e-3, "kJ"),
        "m3/s" | "m^3/s" => (6e4, "L/min"),
        _ => (1.0, unit),
    };
    (factor, shown.to_owned())
}

/// Curves with at most this many points get a marker at each (a single point draws no line).
const MARKED: usize = 60;

/// Stroke width of curve `i` of `n`: the first the widest, so later ones drawn over it leave it
/// visible where they coincide.
fn width(i: usize, n: usize) -> u32 {
    if n <= 1 {
        2
    } else {
        (2 + 2 * (n - 1 - i) as u32).min(14)
    }
}

/// Writes `fig` as a PNG (1000 px wide, 280 px per panel) to `path`.
pub fn png(path: &Path, fig: &Figure) -> Result<Layout> {
    let fail = |message: String| MasterError::System { path: path.to_path_buf(), key: "plot".into(), message };
    register_font().map_err(fail)?;
    let h = 80 + 280 * fig.panels.len().max(1) as u32;
    let root = BitMapBackend::new(path, (1000, h)).into_drawing_area();
    draw(&root, fig).map_err(fail)
}

/// The figure of `cosim plot DIR [VARS…]`: results.csv's columns `vars` (default: every one),
/// one panel per unit (from summary.json's `units`; columns without a unit share a panel).
pub fn results_figure(dir: &Path, vars: &[String]) -> Result<Figure> {
    let csv = dir.join("results.csv");
    let text = std::fs::read_to_string(&csv).map_err(|source| MasterError::Io { path: csv.clone(), source })?;
    let bad = |key: String, message: String| MasterError::System { path: csv.clone(), key, message };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let chosen: Vec<usize> = if vars.is_empty() {
        (1..header.len()).collect()
    } else {
        // The one naming rule (master::names): `instance.variable` as in the header, or bare.
        let pairs = header.iter().skip(1).map(|h| h.split_once('.').unwrap_or(("", h)));
        vars.iter()
            .map(|v| {
                master::names::resolve(v, pairs.clone())
                    .map(|k| k + 1)
                    .map_err(|m| bad(v.clone(), format!("results.csv: {}", m.replacen("no variable", "no column", 1))))
            })
            .collect::<Result<_>>()?
    };
    let mut cols: Vec<Vec<(f64, f64)>> = vec![Vec::new(); chosen.len()];
    for (n, line) in lines.enumerate() {
        let f: Vec<f64> = line
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad(format!("line {}", n + 2), format!("not numbers: {line}")))?;
        let t = f.first().copied().unwrap_or(f64::NAN);
        for (c, &i) in chosen.iter().enumerate() {
            cols[c].push((t, f.get(i).copied().unwrap_or(f64::NAN)));
        }
    }
    let summary: serde_json::Value = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let units: BTreeMap<String, String> = serde_json::from_value(summary["units"].clone()).unwrap_or_default();
    // Panels in the order their units first appear.
    let mut panels: Vec<(Option<String>, Panel)> = Vec::new();
    for (c, &i) in chosen.iter().enumerate() {
        let unit = units.get(header[i]).cloned();
        let series = Series { label: header[i].to_owned(), points: std::mem::take(&mut cols[c]) };
        match panels.iter_mut().find(|(u, _)| *u == unit) {
            Some((_, p)) => p.series.push(series),
            None => panels.push((unit, Panel { y_label: String::new(), series: vec![series] })),
        }
    }
    for (unit, p) in &mut panels {
        let what = if p.series.len() == 1 { p.series[0].label.clone() } else { "value".to_owned() };
        p.y_label = match unit {
            Some(u) => {
                let max_abs = p.series.iter().flat_map(|s| &s.points).map(|&(_, y)| y.abs()).filter(|y| y.is_finite());
                let (factor, shown) = engineering(u, max_abs.fold(0.0, f64::max));
                if factor != 1.0 {
                    for pt in p.series.iter_mut().flat_map(|s| s.points.iter_mut()) {
                        pt.1 *= factor;
                    }
                }
                format!("{what} ({shown})")
            }
            None => format!("{what} (no unit)"),
        };
    }
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
    let status = summary["status"].as_str().map(|s| format!(", {s}")).unwrap_or_default();
    let step = summary["step_size"].as_f64().map(|h| format!(", H = {} s", tick(h))).unwrap_or_default();
    Ok(Figure {
        title: format!("{}{step}{status}", system_name(&folder, &summary)),
        x_label: "time (s)".into(),
        panels: panels.into_iter().map(|(_, p)| p).collect(),
        log_y: false,
    })
}

/// What was simulated, for a title: the output folder's name (the run's name a user chose) and
/// the model of each instance (`hyd: hydraulics-lumped3`), from summary.json; one FMU run under
/// its own name reads as the model's name alone.
fn system_name(folder: &str, summary: &serde_json::Value) -> String {
    let models: Vec<String> = summary["instances"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|i| {
                    let name = i["name"].as_str()?;
                    let model = i["fmu"].as_str().map(Path::new).and_then(Path::file_stem)?.to_string_lossy();
                    Some(if model == name { name.to_owned() } else { format!("{name}: {model}") })
                })
                .collect()
        })
        .unwrap_or_default();
    match models.as_slice() {
        [] => format!("{folder}: results.csv"),
        [one] if one == folder => one.clone(),
        _ => format!("{folder} ({})", models.join(", ")),
    }
}

/// Writes `fig` to `path`: SVG when the name ends in `.svg`, else PNG ([`png`]).
pub fn write(path: &Path, fig: &Figure) -> Result<Layout> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg")) {
        svg(path, fig)
    } else {
        png(path, fig)
    }
}

/// Writes `fig` as an SVG (the size of [`png`]'s picture) to `path`.
pub fn svg(path: &Path, fig: &Figure) -> Result<Layout> {
    let fail = |message: String| MasterError::System { path: path.to_path_buf(), key: "plot".into(), message };
    register_font().map_err(fail)?;
    let h = 80 + 280 * fig.panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (1000, h)).into_drawing_area();
    draw(&root, fig).map_err(fail)
}

/// A text drawn and its anchor position (pixels).
pub type PlacedText = (String, (i32, i32));

/// A backend that draws nothing and records every text with its position: what a figure says,
/// for tests and checks that look at the plot's elements rather than its pixels.
pub struct TextRecorder {
    size: (u32, u32),
    /// Every text drawn, with its anchor position (pixels).
    texts: std::rc::Rc<std::cell::RefCell<Vec<PlacedText>>>,
}

impl DrawingBackend for TextRecorder {
    type ErrorType = std::io::Error;
    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }
    fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }
    fn draw_pixel(
        &mut self,
        _: BackendCoord,
        _: BackendColor,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        _: &S,
        pos: BackendCoord,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.texts.borrow_mut().push((text.to_owned(), pos));
        Ok(())
    }
}

/// The texts `fig` draws (title, axis labels, tick labels, legend) with their positions, and its
/// layout, at the size [`png`] uses.
pub fn texts(fig: &Figure) -> std::result::Result<(Vec<PlacedText>, Layout), String> {
    register_font()?;
    let texts = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let rec = TextRecorder { size: (1000, 80 + 280 * fig.panels.len().max(1) as u32), texts: texts.clone() };
    let layout = draw(&rec.into_drawing_area(), fig)?;
    let texts = texts.borrow().clone();
    Ok((texts, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_units_and_a_legend_outside_the_data() {
        let curve = |label: &str, k: f64| Series {
            label: label.into(),
            points: (0..50).map(|i| (i as f64, k * i as f64)).collect(),
        };
        let fig = Figure {
            title: "crane-pub3: results.csv".into(),
            x_label: "time (s)".into(),
            panels: vec![
                Panel { y_label: "mech.s (m)".into(), series: vec![curve("mech.s", 1.0)] },
                Panel { y_label: "value (Pa)".into(), series: vec![curve("hyd.p1", 2.0), curve("hyd.p3", 2.0)] },
            ],
            log_y: false,
        };
        let (texts, layout) = texts(&fig).unwrap();
        let has = |t: &str| texts.iter().any(|(s, _)| s == t);
        assert!(
            has("crane-pub3: results.csv") && has("time (s)") && has("mech.s (m)") && has("value (Pa)"),
            "{texts:?}"
        );
        assert_eq!(layout.plot_areas.len(), 2);
        for label in ["mech.s", "hyd.p1", "hyd.p3"] {
            let (_, (x, _)) = texts.iter().find(|(s, _)| s == label).unwrap();
            for (_, _, x1, _) in &layout.plot_areas {
                assert!(x > x1, "legend {label} at x = {x} inside the data (right edge {x1})");
            }
        }
        // coinciding curves: the first drawn wider than the one over it
        assert!(width(0, 2) > width(1, 2));
    }

    /// A transient faster than a pixel column: a 1 kHz square wave sampled at 100 kHz over 1 s,
    /// on 500 columns. The envelope keeps its full height in every column and its line is one
    /// polyline through both extremes of each column (never loose points).
    #[test]
    fn a_fast_transient_keeps_its_full_height_as_a_connected_envelope() {
        let pts: Vec<(f64, f64)> =
            (0..100_000).map(|k| (k as f64 * 1e-5, if (k / 50) % 2 == 0 { 1.0 } else { -1.0 })).collect();
        let env = envelope(&pts, 500).unwrap();
        assert_eq!(env.upper.len(), 500);
        assert!(env.upper.iter().all(|p| p.1 == 1.0) && env.lower.iter().all(|p| p.1 == -1.0));
        assert_eq!(env.line.len(), 1000, "both extremes of every column");
        assert!(env.line.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
        // few points: drawn as they are
        assert!(envelope(&pts[..1000], 500).is_none());
        // a ramp: the envelope's extremes are the column's first and last values
        let ramp: Vec<(f64, f64)> = (0..10_000).map(|k| (k as f64, k as f64)).collect();
        let env = envelope(&ramp, 100).unwrap();
        assert_eq!((env.lower[0].1, env.upper[0].1), (0.0, 99.0));
    }

    #[test]
    fn engineering_units_read_as_a_hydraulics_engineer_writes_them() {
        assert_eq!(engineering("Pa", 2.1e7), (1e-5, "bar".to_owned()));
        assert_eq!(engineering("Pa", 5e3), (1.0, "Pa".to_owned()));
        assert_eq!(engineering("m", 0.57), (1e3, "mm".to_owned()));
        assert_eq!(engineering("m", 3.0), (1.0, "m".to_owned()));
        assert_eq!(engineering("N", 8829.0), (1e-3, "kN".to_owned()));
        assert_eq!(engineering("m3/s", 1e-4), (6e4, "L/min".to_owned()));
        assert_eq!(engineering("V", 10.0), (1.0, "V".to_owned()));
    }
}
