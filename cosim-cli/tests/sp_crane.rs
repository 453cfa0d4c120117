#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Publication II's singular-perturbation hydraulics on the Publication III crane (issue 16):
//! with `p3_model = SP` forward Euler at h_h = 0.1 ms is stable (no stiffness warning) and J1 at
//! H = 1 ms stays within 1 mm of the unified (lumped-fluid) reference; with the lumped-fluid p3
//! the same integrator warns and fails.

use std::path::Path;

mod support;
use support::{cosim, scenario, tmp};

/// (header, rows) of a results.csv.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(|s| s.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn column(csv: &(Vec<String>, Vec<Vec<f64>>), name: &str) -> Vec<f64> {
    let i = csv.0.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    csv.1.iter().map(|r| r[i]).collect()
}

#[test]
fn sp_hydraulics_make_forward_euler_usable_on_the_crane() {
    let dir = tmp("sp-crane");
    let sp = scenario("crane-pub3-sp.toml", &dir);
    let reference = scenario("crane-pub3-unified.toml", &dir);
    let (sp_out, ref_out) = (dir.join("sp"), dir.join("ref"));
    let run = cosim(&["run", sp.to_str().unwrap(), "--out", sp_out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(!stderr.contains("unstable"), "no stiffness warning with SP: {stderr}");
    let r = cosim(&["run", reference.to_str().unwrap(), "--out", ref_out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (a, b) = (read_csv(&sp_out.join("results.csv")), read_csv(&ref_out.join("results.csv")));
    let (s, s_ref) = (column(&a, "mech.s"), column(&b, "unified.s"));
    assert_eq!(s.len(), 20_001);
    assert_eq!(s.len(), s_ref.len());
    let ds = s.iter().zip(&s_ref).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    eprintln!("crane-pub3 J1, SP hydraulics with FWE at 0.1 ms, H = 1 ms: max |Δs| = {ds:.3e} m against unified-crane");
    assert!(ds < 1e-3, "max |Δs| = {ds} m");
    // The same integrator with the lumped-fluid p3: the FMU warns (and the run then fails).
    let lf = dir.join("lf.toml");
    let text = std::fs::read_to_string(&sp).unwrap().replace("p3_model = \"SP\"", "p3_model = \"LF\"");
    std::fs::write(&lf, text).unwrap();
    let run = cosim(&["run", lf.to_str().unwrap(), "--out", dir.join("lf").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&run.stderr).contains("unstable"), "{}", String::from_utf8_lossy(&run.stderr));
}
