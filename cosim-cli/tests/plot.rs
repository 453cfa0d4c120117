#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim plot DIR [VARS…]` (issue 36 item 4) on crane-pub3's results: a PNG whose title, axis
//! labels with units and legend (beside the data, not over it) are checked on the texts the
//! figure draws, not on pixels.

use fmu_harness::paths;
use std::process::Command;

#[test]
fn cosim_plot_of_crane_pub3_has_title_units_and_a_legend_beside_the_data() {
    paths::fmu("multibody-crane");
    paths::fmu("hydraulics-lumped3");
    let dir = std::env::temp_dir().join(format!("cosim-plot-{}", std::process::id())).join("crane-pub3");
    let _ = std::fs::remove_dir_all(&dir);
    let cosim = env!("CARGO_BIN_EXE_cosim");
    let system = paths::root().join("scenarios/crane-pub3.toml");
    let run = Command::new(cosim).arg("run").arg(&system).arg("--out").arg(&dir).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));

    let plot =
        Command::new(cosim).arg("plot").arg(&dir).args(["mech.s", "hyd.p1", "hyd.p2", "hyd.p3"]).output().unwrap();
    assert!(plot.status.success(), "{}", String::from_utf8_lossy(&plot.stderr));
    let png = std::fs::read(dir.join("results.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");

    let fig =
        cosim_cli::plot::results_figure(&dir, &["mech.s".into(), "hyd.p1".into(), "hyd.p2".into(), "hyd.p3".into()])
            .unwrap();
    let (texts, layout) = cosim_cli::plot::texts(&fig).unwrap();
    let has = |t: &str| texts.iter().any(|(s, _)| s == t);
    assert!(has("crane-pub3 (hyd: hydraulics-lumped3, mech: multibody-crane), H = 0.001 s, ok"), "title: {texts:?}");
    // one panel per unit, the unit on each y axis in engineering form (stroke in mm, pressures in
    // bar), time in s on x with more than two ticks
    assert_eq!(layout.plot_areas.len(), 2);
    assert!(has("mech.s (mm)") && has("value (bar)") && has("time (s)"), "{texts:?}");
    let p1 = &fig.panels[1].series[0];
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let first_p1: f64 = csv.lines().nth(1).unwrap().split(',').nth(3).unwrap().parse().unwrap();
    assert_eq!(p1.points[0].1, first_p1 * 1e-5, "hyd.p1 scaled to bar");
    let time_ticks =
        texts.iter().filter(|(s, _)| ["0", "2", "4", "6", "8", "10", "12", "14"].contains(&s.as_str())).count();
    assert!(time_ticks >= 6, "readable time ticks: {texts:?}");
    // the legend: every curve, right of every plotting area
    for label in ["mech.s", "hyd.p1", "hyd.p2", "hyd.p3"] {
        let (_, (x, _)) = texts.iter().find(|(s, _)| s == label).unwrap_or_else(|| panic!("no legend {label}"));
        assert!(layout.plot_areas.iter().all(|a| *x > a.2), "legend {label} over the data");
    }

    // SVG as an option: a picture of the same texts
    let svg = Command::new(cosim).arg("plot").arg(&dir).arg("--svg").arg("hyd.p1").output().unwrap();
    assert!(svg.status.success(), "{}", String::from_utf8_lossy(&svg.stderr));
    let svg = std::fs::read_to_string(dir.join("results.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("hyd.p1 (bar)"), "{}", &svg[..svg.len().min(400)]);

    // a column that is not there: the nearest named
    let bad = Command::new(cosim).arg("plot").arg(&dir).arg("hyd.p4").output().unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("no column \"hyd.p4\"") && err.contains("did you mean"), "{err}");
}
