#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMI 3.0 Co-Simulation in event mode (issue 43 item 2) with a C FMU of our own
//! (`master/tests/cfmu3/events3.c`, built here with the system's `cc`): a bouncing ball that
//! returns early at each bounce (the event time within the FMU's tolerance of the closed form),
//! time events announced with `nextEventTime` that the master lands on exactly, FMPy's run of the
//! same FMU in event mode giving the same rows bit for bit, and the FMU's misuse of event mode
//! (an early return outside the step or not allowed, an event iteration that never converges)
//! each a clear error naming the function and the value.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{python, run_in as run, tmp};

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;
use cfmu3_build::build_source;

/// The description of `events3.c`; `{early}` is `mightReturnEarlyFromDoStep`.
const XML: &str = include_str!("../../master/tests/cfmu3/events3.xml");

fn fmu(dir: &Path, cflags: &[&str], early: bool) -> PathBuf {
    build_source(dir, "events3", "events3", cflags, &XML.replace("{early}", if early { "true" } else { "false" }))
}

/// results.csv: the header and the rows.
fn csv(out: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap().split(',').map(|h| h.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(str::to_owned).collect()).collect())
}

fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<f64> {
    let i = header
        .iter()
        .position(|h| h == name || *h == format!("events3.{name}"))
        .unwrap_or_else(|| panic!("{name} in {header:?}"));
    rows.iter().map(|r| r[i].parse().unwrap()).collect()
}

/// The bounce times of the closed form (h0 = 1, g = 9.81, e = 0.7, resting below 0.1 m/s).
fn bounce_times() -> Vec<f64> {
    let (g, e) = (9.81f64, 0.7f64);
    let mut t = (2.0 / g).sqrt();
    let mut v = g * t;
    let mut times = vec![t];
    loop {
        v *= e;
        if v < 0.1 {
            return times;
        }
        t += 2.0 * v / g;
        times.push(t);
    }
}

const OUT: &[&str] = &["--output-variables", "h,v,bounces,bounce_time,steps,updates,ticks,tick_miss"];

#[test]
fn the_ball_returns_early_at_each_bounce_within_the_fmus_tolerance() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("events3-bounce");
        let fmu = fmu(&dir, &[], true);
        let mut args = OUT.to_vec();
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let (header, rows) = csv(&out);
        assert_eq!(rows.len(), 31, "rows on the communication grid only");
        let bounces = column(&header, &rows, "bounces");
        let when = column(&header, &rows, "bounce_time");
        let steps = column(&header, &rows, "steps");
        let updates = column(&header, &rows, "updates");
        let exact = bounce_times();
        let last = rows.len() - 1;
        assert_eq!(bounces[last] as usize, exact.len(), "every bounce of the closed form happened");
        // The event time of each bounce: within the FMU's bisection tolerance (1e-12) of the
        // closed form (its ballistic steps are exact but for rounding).
        let mut checked = 0;
        for (b, t) in bounces.iter().zip(&when) {
            if *b >= 1.0 {
                let exact_t = exact[*b as usize - 1];
                assert!((t - exact_t).abs() < 1e-9, "bounce {b} at {t} (closed form {exact_t})");
                checked += 1;
            }
        }
        assert!(checked > 20, "{bounces:?}");
        // One early return per bounce: 30 steps plus one more doStep per bounce; one
        // fmi3UpdateDiscreteStates after initialization and one per bounce.
        assert_eq!(steps[last] as usize, 30 + exact.len());
        assert_eq!(updates[last] as usize, 1 + exact.len());
        // The ball rests on the ground at the end.
        assert_eq!(column(&header, &rows, "h")[last], 0.0);
    }
}

#[test]
fn the_master_lands_on_the_announced_next_event_times() {
    let dir = tmp("events3-ticks");
    let fmu = fmu(&dir, &[], true);
    let mut args = OUT.to_vec();
    args.extend_from_slice(&["--start-value", "period=0.25", "--step", "0.2"]);
    let (code, stderr, out) = run(&dir, &fmu, &args);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = csv(&out);
    let ticks = column(&header, &rows, "ticks");
    let last = rows.len() - 1;
    // Every 0.25 s up to 3 s, though the grid is 0.2 s: the steps are cut at the events.
    assert_eq!(ticks[last], 12.0);
    assert_eq!(column(&header, &rows, "tick_miss")[last], 0.0, "the ticks came exactly at k · 0.25");
    let t = column(&header, &rows, "time");
    assert!((t[1] - 0.2).abs() < 1e-12 && ticks[1] == 0.0 && ticks[2] == 1.0, "{t:?} {ticks:?}");
}

#[test]
fn fmpy_in_event_mode_gives_the_same_rows_bit_for_bit() {
    let dir = tmp("events3-fmpy");
    let fmu = fmu(&dir, &[], true);
    let (code, stderr, out) = run(&dir, &fmu, &["--output-variables", "h,v,bounces"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = csv(&out);
    let script = r#"
import sys
from fmpy import simulate_fmu
r = simulate_fmu(sys.argv[1], stop_time=3.0, output_interval=0.1, use_event_mode=True,
                 early_return_allowed=True, output=['h', 'v', 'bounces'])
for row in r:
    print('%r,%r,%r,%d' % (float(row['time']), float(row['h']), float(row['v']), row['bounces']))
"#;
    let o = Command::new(python()).args(["-c", script]).arg(&fmu).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    // FMPy records a row before and after each event too; cosim's rows are those of the grid.
    let fmpy: Vec<Vec<f64>> = stdout.lines().map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    let (t, h, v) = (column(&header, &rows, "time"), column(&header, &rows, "h"), column(&header, &rows, "v"));
    let mut matched = 0;
    for (k, tk) in t.iter().enumerate() {
        let theirs: Vec<&Vec<f64>> = fmpy.iter().filter(|r| (r[0] - tk).abs() < 1e-9).collect();
        let theirs = theirs.last().unwrap_or_else(|| panic!("FMPy has no row at t = {tk}"));
        assert_eq!((h[k].to_bits(), v[k].to_bits()), (theirs[1].to_bits(), theirs[2].to_bits()), "t = {tk}");
        matched += 1;
    }
    assert_eq!(matched, 31);
}

#[test]
fn misuse_of_event_mode_is_a_clear_error() {
    // lastSuccessfulTime outside the step.
    let dir = tmp("events3-bad-last");
    let (code, stderr, _) = run(&dir, &fmu(&dir, &["-DBAD_LAST"], true), &[]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("fmi3DoStep") && stderr.contains("lastSuccessfulTime = 0.6"), "{stderr}");
    assert!(stderr.contains("outside the step [0.4, 0.5"), "{stderr}");
    // An early return the master did not allow (the FMU does not declare mightReturnEarlyFromDoStep).
    let dir = tmp("events3-early-anyway");
    let (code, stderr, _) = run(&dir, &fmu(&dir, &["-DEARLY_ANYWAY"], false), &[]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("fmi3DoStep") && stderr.contains("earlyReturnAllowed = false"), "{stderr}");
    // An event iteration that never converges: bounded, named.
    let dir = tmp("events3-never");
    let (code, stderr, _) = run(&dir, &fmu(&dir, &["-DNEVER_CONVERGES"], true), &[]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("fmi3UpdateDiscreteStates") && stderr.contains("did not converge"), "{stderr}");
    assert!(stderr.contains("1000 calls"), "{stderr}");
}
