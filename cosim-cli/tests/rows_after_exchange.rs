#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 47 item 3: every row of results.csv — the start time's and the stop time's included —
//! is written after the connections of its communication point are propagated and the outputs
//! that feed through are read again, in every scheme: a feedthrough FMU (`y4 = u`) behind a
//! source FMU (its output `t` is its own time) shows, in every row, its source's value of the
//! same row. Before, each Jacobi row held the feedthrough output of the previous point (the
//! input it had been stepped with), and the stop time's row of every scheme never saw the
//! final exchange (OMSimulator writes the refreshed value there).

mod cfmu;
mod support;

use std::path::{Path, PathBuf};
use support::{cosim, tmp};

/// Writes `src.fmu` (a C FMU whose output `t` is its time) and `ft.fmu` (`y4 = u`, declared as
/// depending on `u`), both with FMU states, and the system `src.t -> ft.u` in `dir`.
fn system(dir: &Path, simulation: &str, bond: bool) -> PathBuf {
    for (id, pass) in [("src", false), ("ft", true)] {
        let mut spec = cfmu::Spec::new(id);
        spec.n_real = if pass { 5 } else { 4 };
        spec.pass = pass;
        spec.cs_attrs = r#"canGetAndSetFMUstate="true""#.into();
        spec.cflags.push("-DSTATES".into());
        spec.build(dir);
    }
    let bond = if bond {
        "\n[[bonds]]\nname = \"b\"\nports = [\n  { instance = \"src\", effort = \"t\", flow = \"x\", sign = 1.0 },\n  { instance = \"ft\", effort = \"u\", flow = \"y4\", sign = -1.0 },\n]\n"
    } else {
        ""
    };
    let text = format!(
        "[simulation]\nstop = 1.0\nstep = 0.1\n{simulation}\n\n[instances.src]\nfmu = \"src.fmu\"\n\n[instances.ft]\nfmu = \"ft.fmu\"\n\n[[connections]]\nfrom = \"src.t\"\nto = \"ft.u\"\n{bond}\n[outputs]\nvariables = [\"src.t\", \"ft.u\", \"ft.y4\"]\n"
    );
    let path = dir.join("system.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The rows (time, src.t, ft.u, ft.y4) of a run.
fn rows(dir: &Path, system: &Path, flags: &[&str]) -> Vec<[f64; 4]> {
    let out = dir.join("out");
    let mut args = vec!["run", system.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,src.t,ft.u,ft.y4"));
    lines
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

#[test]
fn a_feedthrough_output_shows_its_sources_value_of_the_same_row_in_every_scheme() {
    let schemes: [(&str, &str, bool, &[&str]); 7] = [
        ("jacobi", "algorithm = \"jacobi\"\nparallel = \"off\"", false, &[]),
        ("jacobi on worker threads", "algorithm = \"jacobi\"\nparallel = \"on\"", false, &[]),
        ("gauss-seidel", "algorithm = \"gauss-seidel\"", false, &[]),
        ("iterative jacobi", "iterations = 3", false, &[]),
        ("ecco", "step_control = \"ecco\"", true, &[]),
        ("isolated instances", "", false, &["--isolate"]),
        ("every 3rd point recorded", "extrapolation = 0\nrecord_every = 3", false, &[]),
    ];
    for (name, simulation, bond, flags) in schemes {
        let dir = tmp("rows-exchange");
        let sys = system(&dir, simulation, bond);
        let rows = rows(&dir, &sys, flags);
        assert!(rows.len() >= 5, "{name}: {rows:?}");
        let last = rows.last().unwrap();
        assert_eq!(last[0], 1.0, "{name}: the stop time's row is there: {rows:?}");
        for r in &rows {
            // The source's output is its time; the feedthrough's input and output carry it.
            assert!((r[1] - r[0]).abs() <= 1e-12, "{name}: src.t = {} at t = {}", r[1], r[0]);
            assert_eq!((r[2], r[3]), (r[1], r[1]), "{name}: row {r:?} (time, src.t, ft.u, ft.y4)");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The papers' explicit Jacobi reads every output once, after the step, and never again after
/// inputs are set: there a feedthrough output carries the previous exchange in every row
/// (`exchange = "explicit"`, docs/system-description.md), the stop time's included, while the
/// row's inputs are the ones just set.
#[test]
fn under_the_explicit_exchange_a_feedthrough_output_is_one_exchange_behind_in_every_row() {
    let dir = tmp("rows-explicit");
    let sys = system(&dir, "exchange = \"explicit\"\nextrapolation = 0", false);
    let rows = rows(&dir, &sys, &[]);
    assert_eq!(rows.len(), 11, "{rows:?}");
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r[2], r[1], "row {r:?}: the input set at the row's time");
        let behind = if k == 0 { 0.0 } else { rows[k - 1][1] };
        assert_eq!(r[3], behind, "row {r:?}: y4 from the previous exchange");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
