#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! SSP 1.0: `cosim export-ssp` → `cosim run x.ssp` reproduces the TOML run byte for byte;
//! hand-written SSDs/SSPs following the standard's examples (`.ssv` bindings, an `.ssm` mapping,
//! a linear transformation) give the expected values; malformed ones give clear errors; FMPy's
//! schema-validating reader accepts the exported package and `simulate_ssp` runs it.

use fmu_harness::paths;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::{cosim, tmp};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(system: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", s(system), "--out", s(out)];
    args.extend_from_slice(extra);
    cosim(&args)
}

fn run_ok(system: &Path, out: &Path, extra: &[&str]) -> String {
    let o = run(system, out, extra);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{}: {err}", system.display());
    err
}

fn run_err(system: &Path, extra: &[&str]) -> String {
    let out = tmp("err");
    let o = run(system, &out, extra);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{} should fail: {err}", system.display());
    err
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn col(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// Zips `dir`'s files (relative names) into `out`.
fn zip_dir(dir: &Path, files: &[&str], out: &Path) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(out).unwrap());
    for f in files {
        zip.start_file(*f, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(&std::fs::read(dir.join(f)).unwrap()).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn oscillator_round_trip_through_ssp_is_byte_identical() {
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("osc");
    let ssp = dir.join("oscillator-fd.ssp");
    let toml = paths::root().join("scenarios/oscillator-fd.toml");
    let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (dir.join("toml"), dir.join("ssp"));
    run_ok(&toml, &a, &["--stop-time", "1"]);
    run_ok(&ssp, &b, &["--stop-time", "1"]);
    for f in ["results.csv", "bonds.csv"] {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f}");
    }
}

#[test]
fn crane_pub3_round_trip_through_ssp_is_byte_identical() {
    paths::fmu("multibody-crane");
    let dir = tmp("crane");
    let ssp = dir.join("crane-pub3.ssp");
    let toml = paths::root().join("scenarios/crane-pub3.toml");
    let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (dir.join("toml"), dir.join("ssp"));
    run_ok(&toml, &a, &["--stop-time", "2"]);
    let err = run_ok(&ssp, &b, &["--stop-time", "2"]);
    assert!(err.contains("read as SSP 1.0 package"), "{err}");
    for f in ["results.csv", "bonds.csv"] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x.len() > 1000 && x == y, "{f} differs between the TOML and the SSP run");
    }
    // The package holds the standard's parts.
    let zip = zip::ZipArchive::new(std::fs::File::open(&ssp).unwrap()).unwrap();
    let names: Vec<&str> = zip.file_names().collect();
    for n in ["SystemStructure.ssd", "resources/multibody-crane.fmu", "resources/hydraulics-lumped3.fmu"] {
        assert!(names.contains(&n), "{n} missing: {names:?}");
    }
}

/// The Python with FMPy ($FMI_PYTHON, else the workspace's .venv), or `None`: the test is skipped
/// visibly, or fails under CI (`missing_tool::skip_or_fail`).
fn fmpy_python() -> Option<PathBuf> {
    let p = std::env::var_os("FMI_PYTHON").map(PathBuf::from).unwrap_or_else(|| paths::root().join(".venv/bin/python"));
    let ok = p.exists()
        && Command::new(&p).args(["-c", "import fmpy.ssp.ssd, lxml, numpy"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        missing_tool::skip_or_fail(
            &format!("FMPy (with lxml and numpy) in the Python at {}", p.display()),
            "`cargo xtask test` makes .venv with FMPy, or set FMI_PYTHON to a Python with `pip install fmpy lxml numpy`",
        );
    }
    ok.then_some(p)
}

#[test]
fn exported_ssps_pass_fmpy_schema_validation_and_simulate_ssp() {
    paths::fmu("multibody-crane");
    let dir = tmp("fmpy");
    let mut packages = Vec::new();
    for name in ["crane-pub3", "oscillator-fd"] {
        let ssp = dir.join(format!("{name}.ssp"));
        let toml = paths::root().join(format!("scenarios/{name}.toml"));
        let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        packages.push(ssp);
    }
    let Some(python) = fmpy_python() else { return };
    let script = r#"
import sys
from fmpy.ssp.ssd import read_ssd
from fmpy.ssp.simulation import simulate_ssp
for path in sys.argv[1:]:
    ssd = read_ssd(path, validate=True)
    names = sorted(c.name for c in ssd.system.elements)
    params = sum(len(s.parameters) for b in ssd.system.parameterBindings for s in b.parameterValues)
    # FMPy's simulate_ssp feeds every input 0 in the first step (it does not initialize the
    # connectors from the outputs): the crane's hydraulics then see the piston beyond its stroke
    # end for one step, warn, and go on.
    rows = simulate_ssp(path, stop_time=0.05, step_size=1e-3)
    print(names, params, len(rows) >= 50)
"#;
    let o = Command::new(python).args(["-c", script]).args(&packages).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "FMPy: {out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(out, "['hyd', 'mech'] 0 True\n['m1', 'm2'] 2 True\n");
}

/// Copies the oscillator FMUs into `dir/resources`.
fn oscillator_resources(dir: &Path) {
    std::fs::create_dir_all(dir.join("resources")).unwrap();
    for n in ["oscillator-fd-m1", "oscillator-fd-m2"] {
        std::fs::copy(paths::fmu(n), dir.join(format!("resources/{n}.fmu"))).unwrap();
    }
}

const NS: &str = r#"xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping""#;

/// The double oscillator (force-displacement) as an SSD: m1's start values inline, m2's and m1's
/// coupling stiffness from `resources/params.ssv` through the mapping `resources/mapping.ssm`
/// (`stiffness` → `m1.kc`, scaled by 0.5), the position link scaled by 2 and offset by 0.5.
fn oscillator_ssd(connections: &str, root_extra: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription {NS} version="1.0" name="oscillator">
  <ssd:System name="oscillator">
    <ssd:ParameterBindings>
      <ssd:ParameterBinding source="resources/params.ssv">
        <ssd:ParameterMapping source="resources/mapping.ssm"/>
      </ssd:ParameterBinding>
    </ssd:ParameterBindings>
    <ssd:Elements>
      <ssd:Component name="m1" source="resources/oscillator-fd-m1.fmu">
        <ssd:Connectors>
          <ssd:Connector name="xi" kind="input"><ssc:Real unit="m"/></ssd:Connector>
          <ssd:Connector name="xi_dot" kind="input"><ssc:Real unit="m/s"/></ssd:Connector>
          <ssd:Connector name="F" kind="output"><ssc:Real unit="N"/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="m1-start">
                <ssv:Parameters>
                  <ssv:Parameter name="x0"><ssv:Real value="0.25"/></ssv:Parameter>
                  <ssv:Parameter name="v0"><ssv:Real value="0"/></ssv:Parameter>
                  <ssv:Parameter name="damping"><ssv:Enumeration value="custom"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="m2" type="application/x-fmu-sharedlibrary" source="resources/oscillator-fd-m2.fmu">
        <ssd:Connectors>
          <ssd:Connector name="x" kind="output"><ssc:Real unit="m"/></ssd:Connector>
          <ssd:Connector name="v" kind="output"><ssc:Real unit="m/s"/></ssd:Connector>
          <ssd:Connector name="F" kind="input"><ssc:Real unit="N"/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
{connections}
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="0.5"/>
{root_extra}
</ssd:SystemStructureDescription>
"#
    )
}

const CONNECTIONS: &str = r#"      <ssd:Connection startElement="m2" startConnector="x" endElement="m1" endConnector="xi">
        <ssc:LinearTransformation factor="2" offset="0.5"/>
      </ssd:Connection>
      <ssd:Connection startElement="m2" startConnector="v" endElement="m1" endConnector="xi_dot"/>
      <ssd:Connection startElement="m1" startConnector="F" endElement="m2" endConnector="F"/>"#;

const PARAMS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="params">
  <ssv:Parameters>
    <ssv:Parameter name="m2.x0"><ssv:Real value="0.1"/></ssv:Parameter>
    <ssv:Parameter name="m2.v0"><ssv:Real value="0.0"/></ssv:Parameter>
    <ssv:Parameter name="stiffness"><ssv:Real value="100"/></ssv:Parameter>
  </ssv:Parameters>
</ssv:ParameterSet>
"#;

const MAPPING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ssm:ParameterMapping xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0">
  <ssm:MappingEntry source="stiffness" target="m1.kc">
    <ssc:LinearTransformation factor="0.5"/>
  </ssm:MappingEntry>
</ssm:ParameterMapping>
"#;

const SETTINGS: &str = r#"  <ssd:Annotations>
    <ssc:Annotation type="org.hydraulic-cosim.settings">
      <cosim:Settings xmlns:cosim="https://example.invalid/hydraulic-cosim/ssp/settings/1.0"><![CDATA[
[simulation]
step = 1e-3
[outputs]
variables = ["m1.x", "m2.x", "m1.F", "m1.xi"]
]]></cosim:Settings>
    </ssc:Annotation>
  </ssd:Annotations>"#;

fn oscillator_dir(name: &str, ssd: &str) -> (PathBuf, PathBuf) {
    let dir = tmp(name);
    oscillator_resources(&dir);
    std::fs::write(dir.join("resources/params.ssv"), PARAMS).unwrap();
    std::fs::write(dir.join("resources/mapping.ssm"), MAPPING).unwrap();
    let path = dir.join("SystemStructure.ssd");
    std::fs::write(&path, ssd).unwrap();
    (dir, path)
}

#[test]
fn hand_written_ssd_and_ssp_with_ssv_ssm_and_linear_transformation_give_the_expected_values() {
    let (dir, ssd) = oscillator_dir("hand", &oscillator_ssd(CONNECTIONS, SETTINGS));
    let out = dir.join("out-ssd");
    let err = run_ok(&ssd, &out, &[]);
    assert!(err.contains("read as SSP 1.0 system structure description"), "{err}");
    let (h, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len(), 501, "DefaultExperiment stopTime 0.5 s, H = 1 ms from the annotation");
    let first = &rows[0];
    // Start values: x1 = 0.25 (inline), x2 = 0.1 (.ssv); kc = 0.5 · 100 (.ssm mapping with a
    // linear transformation); xi = 2 x2 + 0.5 = 0.7 (connection transformation); v = 0.
    assert_eq!(first[col(&h, "m1.x")], 0.25);
    assert_eq!(first[col(&h, "m2.x")], 0.1);
    // The start row is written after the start point's exchange (issue 47): xi = 2 x2(0) + 0.5 =
    // 0.7 (the connection's transformation), F(0) = kc (x1 - xi) = 50 (0.25 - 0.7) = -22.5
    // (kc = 100 would give -45).
    let xi = first[col(&h, "m1.xi")];
    assert!((xi - 0.7).abs() < 1e-15, "xi = 2 x2 + 0.5 = 0.7, got {xi}");
    let f = first[col(&h, "m1.F")];
    assert!((f - 50.0 * (0.25 - 0.7)).abs() < 1e-12, "F(0) = kc (x1 - xi) = -22.5, got {f}");

    // The same system as a TOML file gives the same bytes.
    let fmu = |n: &str| dir.join(format!("resources/{n}.fmu")).display().to_string();
    let toml = format!(
        r#"[simulation]
stop = 0.5
step = 1e-3
[instances.m1]
fmu = "{}"
start = {{ x0 = 0.25, v0 = 0.0, damping = "custom", kc = 50.0 }}
[instances.m2]
fmu = "{}"
start = {{ x0 = 0.1, v0 = 0.0 }}
[[connections]]
from = "m2.x"
to = "m1.xi"
gain = 2.0
offset = 0.5
[[connections]]
from = "m2.v"
to = "m1.xi_dot"
[[connections]]
from = "m1.F"
to = "m2.F"
[outputs]
variables = ["m1.x", "m2.x", "m1.F", "m1.xi"]
"#,
        fmu("oscillator-fd-m1"),
        fmu("oscillator-fd-m2")
    );
    let toml_path = dir.join("same.toml");
    std::fs::write(&toml_path, toml).unwrap();
    let out_toml = dir.join("out-toml");
    run_ok(&toml_path, &out_toml, &[]);
    let reference = std::fs::read(out_toml.join("results.csv")).unwrap();
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), reference, "SSD vs TOML");

    // Packed as an .ssp (the standard's layout) it runs the same, whatever the file is called.
    let ssp = dir.join("packed.bin");
    zip_dir(
        &dir,
        &[
            "SystemStructure.ssd",
            "resources/params.ssv",
            "resources/mapping.ssm",
            "resources/oscillator-fd-m1.fmu",
            "resources/oscillator-fd-m2.fmu",
        ],
        &ssp,
    );
    let out_ssp = dir.join("out-ssp");
    let err = run_ok(&ssp, &out_ssp, &[]);
    assert!(err.contains("read as SSP 1.0 package"), "{err}");
    assert_eq!(std::fs::read(out_ssp.join("results.csv")).unwrap(), reference, "SSP vs TOML");
}

#[test]
fn an_ssd_without_our_annotation_needs_a_step_and_runs_with_one() {
    let (dir, ssd) = oscillator_dir("nostep", &oscillator_ssd(CONNECTIONS, ""));
    let err = run_err(&ssd, &[]);
    assert!(err.contains("ssd:DefaultExperiment") && err.contains("--step"), "{err}");
    let out = dir.join("out");
    run_ok(&ssd, &out, &["--step", "1e-3", "--stop-time", "0.01"]);
    assert_eq!(read_csv(&out.join("results.csv")).1.len(), 11);
}

/// The SSD with `from` replaced by `to`, expected to fail with every `needles` in the message.
fn refused(name: &str, ssd: &str, needles: &[&str]) {
    let (_, path) = oscillator_dir(name, ssd);
    let err = run_err(&path, &[]);
    for n in needles {
        assert!(err.contains(n), "{name}: \"{n}\" not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn malformed_ssps_give_clear_errors() {
    let good = oscillator_ssd(CONNECTIONS, SETTINGS);
    let line_of = |needle: &str| good.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let src_line = line_of("source=\"resources/oscillator-fd-m2.fmu\"");
    let src_column = good.lines().nth(src_line - 1).and_then(|l| l.find("source=")).unwrap() + 1;
    refused(
        "missing-fmu",
        &good.replace("resources/oscillator-fd-m2.fmu", "resources/nope.fmu"),
        &[
            "SystemStructure.ssd",
            &format!("ssd:Component/@source (line {src_line}, column {src_column})"),
            "nope.fmu",
            "file not found",
        ],
    );
    refused(
        "bad-xml",
        &good.replace("</ssd:Elements>", "</ssd:Element>"),
        &["SystemStructure.ssd", "XML error at line", "ssd:Element"],
    );
    refused(
        "unknown-connector",
        &good.replace(r#"endConnector="xi_dot""#, r#"endConnector="xi_dott""#),
        &[
            "ssd:Connection/@endConnector",
            "unknown connector \"xi_dott\" of \"m1\"",
            "xi, xi_dot",
            "did you mean \"xi_dot\"?",
        ],
    );
    refused(
        "cyclic",
        &good.replace(
            r#"<ssd:Elements>"#,
            r#"<ssd:Elements>
      <ssd:Component name="self" type="application/x-ssp-definition" source="SystemStructure.ssd"/>"#,
        ),
        &["cyclic import", "\"self\""],
    );
    refused(
        "duplicate",
        &good.replace(r#"name="m2" type"#, r#"name="m1" type"#),
        &["duplicate element name \"m1\" (also at line"],
    );
    refused(
        "signal-dictionary",
        &good.replace(
            "  </ssd:System>",
            "    <ssd:SignalDictionaries><ssd:SignalDictionary name=\"d\"/></ssd:SignalDictionaries>\n  </ssd:System>",
        ),
        &["ssd:SignalDictionaries (line", "signal dictionaries are not supported"],
    );
    refused(
        "nested",
        &good.replace("    </ssd:Elements>", "      <ssd:System name=\"sub\"/>\n    </ssd:Elements>"),
        &["ssd:System (line", "nested systems are not supported"],
    );
    refused(
        "units",
        &good.replace(
            r#"name="xi" kind="input"><ssc:Real unit="m"/>"#,
            r#"name="xi" kind="input"><ssc:Real unit="mm"/>"#,
        ),
        &["unit mismatch", "m2.x is in \"m\"", "m1.xi in \"mm\""],
    );
    refused(
        "mapping-transformation",
        &good.replace(
            r#"<ssc:LinearTransformation factor="2" offset="0.5"/>"#,
            r#"<ssc:BooleanMappingTransformation><ssc:MapEntry source="true" target="false"/></ssc:BooleanMappingTransformation>"#,
        ),
        &["ssc:BooleanMappingTransformation (line", "not supported"],
    );
    refused(
        "unknown-variable",
        &good.replace(r#"<ssv:Parameter name="x0">"#, r#"<ssv:Parameter name="x00">"#),
        &["instances.m1.start.x00", "no variable \"x00\"; did you mean \"x0\"?"],
    );
    refused(
        "multiple-systems",
        &good.replace("  <ssd:DefaultExperiment", "  <ssd:System name=\"two\"/>\n  <ssd:DefaultExperiment"),
        &["more than one ssd:System"],
    );
    refused(
        "bad-number",
        &good.replace(r#"stopTime="0.5""#, r#"stopTime="half""#),
        &["ssd:DefaultExperiment/@stopTime", "\"half\" is not a number"],
    );
}

#[test]
fn a_parameter_of_an_unknown_component_names_the_ssv_file_and_line() {
    let (dir, ssd) = oscillator_dir("ssv-component", &oscillator_ssd(CONNECTIONS, SETTINGS));
    std::fs::write(dir.join("resources/params.ssv"), PARAMS.replace("m2.x0", "m3.x0")).unwrap();
    let err = run_err(&ssd, &[]);
    // The line and the column of the attribute that names the unknown component.
    let column = PARAMS.lines().nth(3).and_then(|l| l.find("name=")).unwrap() + 1;
    assert!(
        err.contains("resources/params.ssv")
            && err.contains(&format!("ssv:Parameter/@name (line 4, column {column})"))
            && err.contains("unknown component \"m3\"")
            && err.contains("did you mean \"m1\" or \"m2\"?"),
        "{err}"
    );
    std::fs::write(dir.join("resources/params.ssv"), "<ssv:ParameterSet").unwrap();
    let err = run_err(&ssd, &[]);
    assert!(err.contains("params.ssv") && err.contains("XML error"), "{err}");
}

#[test]
fn a_zip_without_system_structure_is_refused() {
    let dir = tmp("nozip");
    std::fs::write(dir.join("a.txt"), "x").unwrap();
    let ssp = dir.join("x.ssp");
    zip_dir(&dir, &["a.txt"], &ssp);
    let err = run_err(&ssp, &[]);
    assert!(err.contains("x.ssp") && err.contains("SystemStructure"), "{err}");
}
