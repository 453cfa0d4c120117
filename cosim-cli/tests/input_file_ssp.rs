#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 44: an `[[inputs]] file` exported to SSP travels as a signal source other tools read —
//! a table component (`type="application/table"`, OMSimulator's) with the file as a CSV resource
//! (scale and offset applied, rows added at the start and stop time) connected to the inputs —
//! and our annotation's `[[inputs]]` entry pointing at it (what the component cannot say:
//! `interpolation = "hold"` of a Real input). `cosim run` of the package gives the system file's
//! results byte for byte; OMSimulator runs the package with the same results (a C integrator
//! that holds its input over each step: x(t_N) = H Σ u(t_n)); an SSD with only the component
//! (another tool's) is read as an input file.

mod cfmu;
mod support;

use std::path::Path;
use support::{cosim, peers, tmp};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn column(csv: &Path, name: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(|h| h.trim_matches('"')).collect();
    let k = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
    lines.map(|l| l.split(',').nth(k).unwrap().parse().unwrap()).collect()
}

/// The system: the integrator driven by a file that starts after the start time, ends before
/// the stop time, has a jump off the grid, and is scaled.
fn system(dir: &Path, interpolation: &str) -> std::path::PathBuf {
    let csv = "t,ignored,U\n0.1,7,1\n0.5,7,2\n0.53125,7,-1\n0.53125,7,3\n0.9,7,2.5\n";
    integrator_from(dir, csv, &format!("scale = 2.0\noffset = 0.5\ninterpolation = {interpolation:?}\n"))
}

/// The C integrator driven by u.csv (`csv`, columns t and U) with more `[[inputs]]` keys: its system file.
fn integrator_from(dir: &Path, csv: &str, keys: &str) -> std::path::PathBuf {
    let fmu = cfmu::Spec::new("integrator").build(dir);
    std::fs::write(dir.join("u.csv"), csv).unwrap();
    let toml = dir.join("sys.toml");
    std::fs::write(
        &toml,
        format!(
            "[simulation]\nstop = 1.0\nstep = 0.0625\n[instances.integrator]\nfmu = {:?}\n\
             [[inputs]]\nfile = \"u.csv\"\ntime = \"t\"\ncolumns = {{ \"integrator.u\" = \"U\" }}\n{keys}",
            s(&fmu)
        ),
    )
    .unwrap();
    toml
}

#[test]
fn an_input_file_travels_in_ssp_as_a_table_component_and_runs_byte_for_byte() {
    for interpolation in ["linear", "hold"] {
        let dir = tmp(&format!("in-ssp-{interpolation}"));
        let toml = system(&dir, interpolation);
        let ssp = dir.join("sys.ssp");
        let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&ssp).unwrap()).unwrap();
        let ssd = std::io::read_to_string(zip.by_name("SystemStructure.ssd").unwrap()).unwrap();
        assert!(
            ssd.contains("type=\"application/table\" source=\"resources/inputs_u.csv\"")
                && ssd.contains("startElement=\"inputs_u\" startConnector=\"integrator_u\" endElement=\"integrator\" endConnector=\"u\""),
            "{ssd}"
        );
        let csv = std::io::read_to_string(zip.by_name("resources/inputs_u.csv").unwrap()).unwrap();
        assert_eq!(
            csv, "time,integrator_u\n0.0,2.5\n0.1,2.5\n0.5,4.5\n0.53125,-1.5\n0.53125,6.5\n0.9,5.5\n1.0,5.5\n",
            "scaled, held to the start and stop time"
        );
        let a = dir.join("toml");
        let b = dir.join("ssp");
        for (sys, out) in [(&toml, &a), (&ssp, &b)] {
            let o = cosim(&["run", s(sys), "--out", s(out)]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let (ra, rb) = (std::fs::read(a.join("results.csv")).unwrap(), std::fs::read(b.join("results.csv")).unwrap());
        assert!(ra == rb, "{interpolation}: the SSP's run differs from the system file's");
        // Held (hold) or linear (with the jump) u at each step's start: x is the left Riemann sum.
        let x = column(&a.join("results.csv"), "integrator.x");
        let u = |t: f64| {
            let v = |t: f64| match t {
                t if t <= 0.1 => 1.0,
                t if t < 0.5 => 1.0 + (t - 0.1) / 0.4,
                t if t < 0.53125 => 2.0 - 3.0 * (t - 0.5) / 0.03125,
                t if t < 0.9 => 3.0 - 0.5 * (t - 0.53125) / (0.9 - 0.53125),
                _ => 2.5,
            };
            let held = |t: f64| match t {
                t if t < 0.5 => 1.0,
                t if t < 0.53125 => 2.0,
                t if t < 0.9 => 3.0,
                _ => 2.5,
            };
            2.0 * if interpolation == "hold" { held(t) } else { v(t) } + 0.5
        };
        let mut sum = 0.0;
        for (n, xn) in x.iter().enumerate() {
            assert!((xn - sum).abs() <= 1e-12, "{interpolation}: x({}) = {xn}, closed form {sum}", n as f64 * 0.0625);
            sum += 0.0625 * u(n as f64 * 0.0625);
        }
        // OMSimulator runs the package (it interpolates every Real column: only "linear" is
        // the same there).
        if interpolation == "linear" {
            let Some(oms) = peers::omsimulator() else { continue };
            let o = peers::run_omsimulator(&oms, &dir.join("oms"), &["--stopTime=1", "--resultFile=r.csv", s(&ssp)]);
            let log = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success() && !log.contains("error:"), "OMSimulator failed:\n{log}");
            // Its result file has a row before and after each exchange (x the same in both) and
            // 12 significant digits: the first row of each time.
            let text = std::fs::read_to_string(dir.join("oms/r.csv")).unwrap();
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').map(|h| h.trim().trim_matches('"')).collect();
            let k = header.iter().position(|h| h.ends_with(".integrator.x")).expect("integrator.x in r.csv");
            let mut theirs: Vec<(f64, f64)> = Vec::new();
            for l in lines {
                let f: Vec<f64> = l.split(',').map(|v| v.trim().parse().unwrap()).collect();
                if theirs.last().is_none_or(|(t, _)| *t != f[0]) {
                    theirs.push((f[0], f[k]));
                }
            }
            assert_eq!(theirs.len(), x.len(), "OMSimulator's rows:\n{text}");
            let worst = x.iter().zip(&theirs).map(|(a, (_, b))| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst <= 1e-10, "cosim and OMSimulator differ by {worst}");
        }
    }
}

#[test]
fn another_tools_table_component_is_read_as_an_input_file() {
    // The SSD as OMSimulator writes a table: the component and its connection, no annotation.
    let dir = tmp("in-ssp-oms-table");
    let fmu = cfmu::Spec::new("integrator").build(&dir);
    std::fs::create_dir_all(dir.join("resources")).unwrap();
    std::fs::copy(&fmu, dir.join("resources/integrator.fmu")).unwrap();
    std::fs::write(dir.join("resources/table.csv"), "time,\"u\"\n0,1\n1,3\n").unwrap();
    let ssd = r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0" name="m">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="integrator" type="application/x-fmu-sharedlibrary" source="resources/integrator.fmu">
        <ssd:Connectors><ssd:Connector name="u" kind="input"><ssc:Real/></ssd:Connector></ssd:Connectors>
      </ssd:Component>
      <ssd:Component name="table" type="application/table" source="resources/table.csv">
        <ssd:Connectors><ssd:Connector name="u" kind="output"><ssc:Real/></ssd:Connector></ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="table" startConnector="u" endElement="integrator" endConnector="u">
        <ssc:LinearTransformation factor="2" offset="1"/>
      </ssd:Connection>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
</ssd:SystemStructureDescription>
"#;
    std::fs::write(dir.join("m.ssd"), ssd).unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", s(&dir.join("m.ssd")), "--step", "0.25", "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // u = 2 (1 + 2t) + 1 held over each step of 0.25: x(1) = 0.25 (3 + 4 + 5 + 6).
    let x = column(&out.join("results.csv"), "integrator.x");
    assert_eq!(x.last().copied(), Some(4.5), "{x:?}");
}

#[test]
fn a_scaled_value_beyond_the_doubles_is_refused_with_its_line_and_column() {
    let dir = tmp("in-scale-inf");
    let toml = integrator_from(&dir, "t,U\n0,1\n0.5,1e300\n", "scale = 1e10\n");
    let out = dir.join("out");
    let o = cosim(&["run", s(&toml), "--out", s(&out)]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("u.csv: line 3: column \"U\": 1e300 × scale 10000000000 + offset 0 = inf, not a finite number"),
        "{stderr}"
    );
    assert!(!out.join("results.csv").exists(), "nothing of the run started: {stderr}");
}
