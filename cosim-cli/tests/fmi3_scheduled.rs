#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMI 3.0 Scheduled Execution (issue 43 item 3) with a C FMU of our own
//! (`master/tests/cfmu3/se3.c`, built here with the system's `cc`): two model partitions
//! activated by their time-based clocks (a constant 0.1 s clock and a fixed one whose 0.2 s
//! interval comes from fmi3GetIntervalDecimal), the higher priority first at the same tick
//! (activation counts and order asserted), in a single-FMU run, `--isolate` and a system; and the
//! clock definitions cosim refuses, each named (a `clocks` attribute naming no clock, a
//! triggered clock, a zero interval).

use std::path::{Path, PathBuf};

mod support;
use support::{col, csv_numbers as csv, run_in as run, tmp};

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;
use cfmu3_build::build_source;

const XML: &str = include_str!("../../master/tests/cfmu3/se3.xml");

fn fmu(dir: &Path, cflags: &[&str], xml: &str) -> PathBuf {
    build_source(dir, "se3", "se3", cflags, xml)
}

#[test]
fn partitions_are_activated_at_their_ticks_the_higher_priority_first() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("se3-run");
        let fmu = fmu(&dir, &[], XML);
        let mut args = vec!["--output-variables", "n_fast,n_slow,wrong_order,last_fast,x,y,order"];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let (h, rows) = csv(&out);
        let p = |n: &str| col(&h, &rows, &format!("se3.{n}"));
        let (fast, slow, wrong, order) = (p("n_fast"), p("n_slow"), p("wrong_order"), p("order"));
        // Ticks at 0 (after initialization), then every 0.1 s and 0.2 s up to 1 s.
        assert_eq!(fast, (1..=11).map(f64::from).collect::<Vec<_>>(), "one fast activation per step");
        assert_eq!(slow, [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0]);
        assert_eq!(*wrong.last().unwrap(), 0.0, "slow (priority 1) always before fast (priority 2)");
        // The newest activations last: at t = 1 slow then fast (…2 1), at 0.9 fast alone.
        assert_eq!(*order.last().unwrap(), 1121.0);
        assert_eq!(order[2], 1121.0, "t = 0.2: fast at 0.1, slow then fast at 0.2");
        // y (slow's partition) sees x before fast's activation at the same tick.
        let (x, y) = (p("x"), p("y"));
        assert_eq!((x[2], y[2]), (3.0, 2.0));
        assert_eq!(p("last_fast")[10], 1.0);
    }
}

#[test]
fn a_scheduled_execution_fmu_takes_part_in_a_system() {
    let dir = tmp("se3-system");
    let fmu = fmu(&dir, &[], XML);
    let sys = dir.join("system.toml");
    std::fs::write(
        &sys,
        format!(
            "[simulation]\nstop = 1.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\n\n[instances.b]\nfmu = \"{f}\"\n\n\
             [[connections]]\nfrom = \"a.x\"\nto = \"b.u\"\n\n[outputs]\nvariables = [\"a.x\", \"b.x\", \"b.n_fast\"]\n",
            f = fmu.display()
        ),
    )
    .unwrap();
    let (code, stderr, out) = run(&dir, &sys, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let (h, rows) = csv(&out);
    let (ax, bx) = (col(&h, &rows, "a.x"), col(&h, &rows, "b.x"));
    // a.x counts its activations; b adds a's x as held at each communication point.
    assert_eq!(ax[10], 11.0);
    let mut expected = 1.0; // b's activation at t = 0 with its start u = 1 … then a.x of each point
    for k in 1..=10 {
        expected += ax[k - 1];
        assert_eq!(bx[k], expected, "t = {}", k as f64 / 10.0);
    }
}

#[test]
fn clock_definitions_cosim_cannot_run_are_refused_naming_them() {
    let cases: [(&str, String, &[&str]); 4] = [
        ("missing", XML.replace("clocks=\"2\"", "clocks=\"99\""), &["\"y\"", "clocks names 99", "no <Clock>"]),
        (
            "triggered",
            XML.replace("intervalVariability=\"fixed\"", "intervalVariability=\"triggered\""),
            &["clock \"slow\"", "intervalVariability=\"triggered\""],
        ),
        (
            "zero",
            XML.replace("intervalDecimal=\"0.1\"", "intervalDecimal=\"0\""),
            &["clock \"fast\"", "not a positive interval"],
        ),
        ("no-interval", XML.replace(" intervalDecimal=\"0.1\"", ""), &["clock \"fast\"", "without intervalDecimal"]),
    ];
    for (name, xml, wanted) in cases {
        let dir = tmp(&format!("se3-{name}"));
        let (code, stderr, _) = run(&dir, &fmu(&dir, &[], &xml), &[]);
        assert_ne!(code, Some(0), "{name}");
        for w in wanted {
            assert!(stderr.contains(w), "{name}: {w} in {stderr}");
        }
    }
    // An interval the FMU answers that is no interval.
    let dir = tmp("se3-bad-interval");
    let (code, stderr, _) = run(&dir, &fmu(&dir, &["-DBAD_INTERVAL"], XML), &[]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("fmi3GetIntervalDecimal") && stderr.contains("clock \"slow\""), "{stderr}");
}
