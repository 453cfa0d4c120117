#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMI 3.0 clocks in Co-Simulation (issue 43 item 3) with a C FMU of our own
//! (`master/tests/cfmu3/clocks3.c`, built here with the system's `cc`): a time-based input clock
//! the master activates at its ticks (the communication step cut there), a countdown clock whose
//! interval the FMU gives, an output clock that ticks every third tick, a triggered input clock
//! activated from a connected output clock of another instance (a clock connection in the system
//! file and in SSP), clocked variables set and read only while their clock is active (activation
//! counts, times and order asserted against the closed form); the clock definitions and clock
//! connections cosim refuses, each named; and FMPy's run of the same FMU, which activates no
//! clock (FMPy 0.3 has no clocks in Co-Simulation: the evidence for docs/fmi3.md).

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{col, cosim, csv_numbers as csv, python, run_in as run, tmp};

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;
use cfmu3_build::build_source;

const XML: &str = include_str!("../../master/tests/cfmu3/clocks3.xml");

fn fmu(dir: &Path, cflags: &[&str], xml: &str) -> PathBuf {
    build_source(dir, "clocks3", "clocks3", cflags, xml)
}

const OUT: &str = "n_tick,n_trig,n_cd,y,got,order,tick_miss,cd_miss,steps,bad_access,last_trig";

/// The ticks of a clock of period `p` from 0 up to `stop` (closed form: k · p).
fn ticks(p: f64, stop: f64) -> usize {
    (0..).take_while(|k| *k as f64 * p <= stop + 1e-9).count()
}

#[test]
fn time_based_and_countdown_clocks_are_activated_at_their_ticks() {
    const TICK: &str = r#"intervalVariability="constant" intervalDecimal="0.25""#;
    let fixed = XML.replace(TICK, r#"intervalVariability="fixed""#);
    // The interval as a fraction: in the description (1/4 s), or from fmi3GetIntervalFraction.
    let counted = XML.replace(TICK, r#"intervalVariability="constant" intervalCounter="1" resolution="4""#);
    let fraction = XML.replace(TICK, r#"intervalVariability="fixed" supportsFraction="true""#);
    for (xml, flags) in [
        (XML, &[][..]),
        (XML, &["--isolate"][..]),
        (fixed.as_str(), &[][..]),
        (counted.as_str(), &[][..]),
        (fraction.as_str(), &[][..]),
    ] {
        let dir = tmp("clocks3-run");
        let fmu = fmu(&dir, &[], xml);
        let mut args = vec!["--output-variables", OUT];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let (h, rows) = csv(&out);
        let p = |n: &str| col(&h, &rows, &format!("clocks3.{n}"));
        let last = rows.len() - 1;
        assert_eq!(rows.len(), 11, "rows on the communication grid only");
        // tick every 0.25 s from 0 to 1 (5), countdown every 0.3 s from 0.3 (3), every3 once.
        assert_eq!(p("n_tick")[last] as usize, ticks(0.25, 1.0));
        assert_eq!(p("n_cd")[last] as usize, ticks(0.3, 1.0) - 1);
        assert_eq!(p("n_trig")[last], 0.0, "nothing triggers trig in a single-FMU run");
        // Per row: the ticks up to each communication point (t = k · 0.1).
        for (k, n) in p("n_tick").iter().enumerate() {
            assert_eq!(*n as usize, ticks(0.25, k as f64 / 10.0), "n_tick at t = {}", k as f64 / 10.0);
        }
        // Order (newest last): 0 tick, 0.25 tick, 0.3 cd, 0.5 tick + every3, 0.6 cd, 0.75 tick,
        // 0.9 cd, 1.0 tick.
        assert_eq!(p("order")[last], 124141.0);
        assert!(p("tick_miss")[last] < 1e-12 && p("cd_miss")[last] < 1e-12, "ticks at k · period");
        // 10 grid steps, cut at 0.25 and 0.75 (the others lie on the grid).
        assert_eq!(p("steps")[last], 12.0);
        // y (clocked by every3) is 3 from its tick at 0.5 on, its start value before.
        assert_eq!(p("y"), [0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]);
        assert_eq!(p("bad_access")[last], 0.0, "clocks set in event mode, clocked variables while active");
        assert!(stderr.is_empty() || !stderr.contains("error"), "{stderr}");
    }
}

fn system(dir: &Path, fmu: &Path, extra: &str) -> PathBuf {
    let sys = dir.join("system.toml");
    std::fs::write(
        &sys,
        format!(
            "[simulation]\nstop = 2.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\n\n[instances.b]\nfmu = \"{f}\"\n\n\
             [[connections]]\nfrom = \"a.every3\"\nto = \"b.trig\"\n\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n\n\
             {extra}[outputs]\nvariables = [\"a.n_tick\", \"a.y\", \"b.n_trig\", \"b.got\", \"b.last_trig\", \"b.order\", \
             \"a.bad_access\", \"b.bad_access\"]\n",
            f = fmu.display()
        ),
    )
    .unwrap();
    sys
}

#[test]
fn an_output_clock_triggers_the_connected_input_clock_of_another_fmu() {
    let dir = tmp("clocks3-system");
    let fmu = fmu(&dir, &[], XML);
    let sys = system(&dir, &fmu, "");
    for flags in [&[][..], &["--isolate"][..]] {
        let (code, stderr, out) = run(&dir, &sys, flags);
        assert_eq!(code, Some(0), "{stderr}");
        let (h, rows) = csv(&out);
        let p = |n: &str| col(&h, &rows, n);
        let last = rows.len() - 1;
        assert_eq!(p("a.n_tick")[last] as usize, ticks(0.25, 2.0));
        // a.every3 ticks at a's 3rd, 6th, 9th tick: t = 0.5 (on the grid), 1.25 (inside the step
        // [1.2, 1.3]) and 2.0 (the last point). b.trig is activated at the first communication
        // point at or after each tick before the stop: 0.5 and 1.3, with u = a.y = 3, then 6.
        assert_eq!(p("b.n_trig")[last], 2.0);
        assert_eq!(p("b.got")[last], 3.0 + 6.0);
        assert!((p("b.last_trig")[last] - 1.3).abs() < 1e-12, "{}", p("b.last_trig")[last]);
        let n_trig = p("b.n_trig");
        // The row at a communication point is recorded before the activation at the start of
        // the next step: it shows in the rows of 0.6 and 1.4.
        assert_eq!((n_trig[5], n_trig[6], n_trig[13], n_trig[14]), (0.0, 1.0, 1.0, 2.0), "{n_trig:?}");
        assert_eq!((p("a.bad_access")[last], p("b.bad_access")[last]), (0.0, 0.0));
    }
}

#[test]
fn clock_definitions_cosim_cannot_run_are_refused_naming_them() {
    let fixed =
        XML.replace(r#"intervalVariability="constant" intervalDecimal="0.25""#, r#"intervalVariability="fixed""#);
    let cases: [(&str, String, &[&str], &[&str]); 8] = [
        (
            "zero-counter",
            XML.replace("intervalDecimal=\"0.25\"", "intervalCounter=\"0\" resolution=\"4\""),
            &[],
            &["clock \"tick\"", "intervalCounter=\"0\"", "not a positive interval"],
        ),
        (
            "zero-fraction-answered",
            fixed.replace("intervalVariability=\"fixed\"", "intervalVariability=\"fixed\" supportsFraction=\"true\""),
            &["-DZERO_INTERVAL"],
            &["fmi3GetIntervalFraction", "clock \"tick\"", "0 / 4"],
        ),
        // A variable whose clocks attribute names a clock that does not exist.
        ("missing", XML.replace("clocks=\"3\"", "clocks=\"99\""), &[], &["\"u\"", "clocks names 99", "no <Clock>"]),
        (
            "zero",
            XML.replace("intervalDecimal=\"0.25\"", "intervalDecimal=\"0\""),
            &[],
            &["clock \"tick\"", "not a positive interval"],
        ),
        (
            "negative",
            XML.replace("intervalDecimal=\"0.25\"", "intervalDecimal=\"-0.25\""),
            &[],
            &["clock \"tick\"", "intervalDecimal=\"-0.25\"", "not a positive interval"],
        ),
        // The FMU answers an interval of 0 for its fixed clock.
        (
            "zero-answered",
            fixed.clone(),
            &["-DZERO_INTERVAL"],
            &["fmi3GetIntervalDecimal", "clock \"tick\"", "interval 0"],
        ),
        // A countdown clock whose interval is infinite: it never fires.
        ("never", XML.to_owned(), &["-DCD_NEVER"], &["fmi3GetIntervalDecimal", "clock \"cd\"", "never fires"]),
        // Clocks in Co-Simulation without event mode.
        (
            "no-event-mode",
            XML.replace(" hasEventMode=\"true\"", ""),
            &[],
            &["clocks: <Clock name=\"tick\"> (line 7)", "hasEventMode"],
        ),
    ];
    for (name, xml, cflags, wanted) in cases {
        let dir = tmp(&format!("clocks3-{name}"));
        let (code, stderr, _) = run(&dir, &fmu(&dir, cflags, &xml), &[]);
        assert_ne!(code, Some(0), "{name}");
        for w in wanted {
            assert!(stderr.contains(w), "{name}: {w} in {stderr}");
        }
    }
}

#[test]
fn clock_connections_of_the_wrong_kinds_are_refused_naming_them() {
    let dir = tmp("clocks3-bad-connections");
    let fmu = fmu(&dir, &[], XML);
    let cases: [(&str, &str, &[&str]); 5] = [
        ("a.trig", "b.trig", &["connections[0].from", "a.trig is an input clock"]),
        ("a.every3", "b.every3", &["connections[0].to", "b.every3 is an output clock"]),
        ("a.every3", "b.tick", &["connections[0].to", "intervalVariability=\"constant\"", "must be triggered"]),
        ("a.every3", "b.u", &["connections[0].to", "b.u is a Real input variable, not a clock"]),
        ("a.every4", "b.trig", &["connections[0].from", "has no variable \"every4\""]),
    ];
    for (from, to, wanted) in cases {
        let sys = dir.join("bad.toml");
        std::fs::write(
            &sys,
            format!(
                "[simulation]\nstop = 1.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\n\n[instances.b]\nfmu = \"{f}\"\n\n\
                 [[connections]]\nfrom = \"{from}\"\nto = \"{to}\"\n",
                f = fmu.display()
            ),
        )
        .unwrap();
        let (code, stderr, _) = run(&dir, &sys, &[]);
        assert_ne!(code, Some(0), "{from} -> {to}");
        for w in wanted {
            assert!(stderr.contains(w), "{from} -> {to}: {w} in {stderr}");
        }
    }
}

#[test]
fn cosim_info_lists_the_clocks_and_what_cosim_does_with_them() {
    let dir = tmp("clocks3-info");
    let o = cosim(&["info", fmu(&dir, &[], XML).to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    for w in [
        "Clocks (4):",
        "tick (input, constant, interval 0.25 s, shift 0 s): activated by cosim at its ticks",
        "every3 (output or local, triggered): read after every event (fmi3GetClock)",
        "trig (input, triggered): activated from a connected output clock",
        "cd (input, countdown): activated by cosim when the interval the FMU gives",
    ] {
        assert!(text.contains(w), "{w} in {text}");
    }
    assert!(text.contains("Runs with cosim:  yes"), "{text}");
}

/// FMPy 0.3 cannot run clocks in Co-Simulation: its `simulate_fmu` (in event mode too) never
/// calls `fmi3SetClock` nor `fmi3GetClock`, so the FMU's clocks are never activated. The
/// evidence for docs/fmi3.md: FMPy's run of the same FMU counts no activation where cosim
/// counts the closed form's.
#[test]
fn fmpy_activates_no_clock_of_the_fmu() {
    let dir = tmp("clocks3-fmpy");
    let fmu = fmu(&dir, &[], XML);
    let script = r#"
import sys
from fmpy import simulate_fmu
r = simulate_fmu(sys.argv[1], stop_time=1.0, output_interval=0.1, use_event_mode=True,
                 output=['n_tick', 'n_cd', 'bad_access'])
print('%d,%d,%d' % (r[-1]['n_tick'], r[-1]['n_cd'], r[-1]['bad_access']))
"#;
    let o = Command::new(python()).args(["-c", script]).arg(&fmu).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout.trim(), "0,0,0", "FMPy activated a clock: it runs clocks now, compare the results instead");
    let (code, stderr, out) = run(&dir, &fmu, &["--output-variables", "n_tick,n_cd"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (h, rows) = csv(&out);
    assert_eq!((col(&h, &rows, "clocks3.n_tick")[10], col(&h, &rows, "clocks3.n_cd")[10]), (5.0, 3.0));
}

/// The same system as an SSD: the clock connection is a plain `<ssd:Connection>` between the
/// clock connectors (typed `<ssc:Clock/>`, the SSP 2.0 connector type, or untyped in SSP 1.0):
/// the same results as the system file.
#[test]
fn a_clock_connection_in_ssp_is_a_connection_between_clock_connectors() {
    let dir = tmp("clocks3-ssp");
    fmu(&dir, &[], XML);
    let (_, _, toml_out) = run(&dir, &system(&dir, &dir.join("clocks3.fmu"), ""), &[]);
    let expected = std::fs::read_to_string(toml_out.join("results.csv")).unwrap();
    for clock_type in ["<ssc:Clock/>", ""] {
        let ssd = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0" name="clocks">
  <ssd:System name="clocks">
    <ssd:Elements>
      <ssd:Component name="a" source="clocks3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="every3" kind="output">{clock_type}</ssd:Connector>
          <ssd:Connector name="y" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
      <ssd:Component name="b" source="clocks3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="trig" kind="input">{clock_type}</ssd:Connector>
          <ssd:Connector name="u" kind="input"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="a" startConnector="every3" endElement="b" endConnector="trig"/>
      <ssd:Connection startElement="a" startConnector="y" endElement="b" endConnector="u"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="2"/>
  <ssd:Annotations>
    <ssc:Annotation type="org.hydraulic-cosim.settings">
      <cosim:Settings xmlns:cosim="https://example.invalid/hydraulic-cosim/ssp/settings/1.0"><![CDATA[
[simulation]
step = 0.1
[outputs]
variables = ["a.n_tick", "a.y", "b.n_trig", "b.got", "b.last_trig", "b.order", "a.bad_access", "b.bad_access"]
]]></cosim:Settings>
    </ssc:Annotation>
  </ssd:Annotations>
</ssd:SystemStructureDescription>
"#
        );
        let path = dir.join("clocks.ssd");
        std::fs::write(&path, ssd).unwrap();
        let out = dir.join("ssp-out");
        let o = cosim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = std::fs::read_to_string(out.join("results.csv")).unwrap();
        assert_eq!(got, expected, "SSP ({clock_type:?}) and the system file give the same rows");
    }
}
