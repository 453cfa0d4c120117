#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 31: `cosim export-ssp` outputs run in the third-party tools that are on PyPI (FMPy,
//! libcosim through libcosimpy, ecos through ecospy) with cosim's results for the same SSP in the
//! same scheme; the SSD follows OMSimulator's rules (checked on the XML here; OMSimulator itself,
//! on no package registry, runs the exports in `omsimulator.rs` and seed 004's naya system below
//! where `../shared/peers/` has it); an SSP in OMSimulator's dialect runs in cosim.
//!
//! The tools' schemes, and the cosim run each is compared with (`--extrapolation 0` everywhere:
//! none of the tools extrapolates):
//! - FMPy's `simulate_ssp`, libcosim and ecos read every output once after the step and then set
//!   every input (the papers' explicit Jacobi): a direct-feedthrough output (oscillator m1.F,
//!   crane hyd.F) carries the inputs of the previous exchange. cosim's matching scheme is
//!   `--exchange explicit`.
//! - `fmpy-loop` (FMPy's SSP building blocks in `simulate_ssp`'s loop, see
//!   `ssp_tools/run_ssp.py`) sets inputs connection by connection and re-reads a feedthrough
//!   output after its instance's inputs are set: cosim's default (ordered) exchange.
//! - `simulate_ssp` starts every connection at 0.0 instead of the outputs' initial values; the
//!   oscillator cases are chosen so that every connected output is 0 at t = 0 where it matters
//!   (case1 and the custom case have cc = 0, so xi_dot does not enter F). The crane's connected
//!   outputs are not (s0 ≠ 0), and its valve reference is a time table, which SSP 1.0 cannot
//!   carry and `simulate_ssp` can feed only through system connectors: the crane runs in
//!   `fmpy-loop`, libcosim and ecos with the table driven by the script before every step.
//! - libcosim keeps time in integer nanoseconds (its dt differs from H by an ulp now and then)
//!   and writes no row at t = 0: rows are compared by time.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{cosim, scenario, tmp};

/// Columns agree to 1e-8 of their largest magnitude (at least 1): rounding of the tools' time
/// and of the FMUs' arithmetic, far below any scheme difference (93 m/s on the oscillator,
/// 3 MPa on the crane between the ordered and the explicit exchange).
const REL: f64 = 1e-8;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn python() -> PathBuf {
    std::env::var_os("FMI_PYTHON").map(PathBuf::from).unwrap_or_else(|| paths::root().join(".venv/bin/python"))
}

fn script() -> PathBuf {
    paths::root().join("master/tests/ssp_tools/run_ssp.py")
}

/// Runs a tool of `run_ssp.py` at H = 1 ms; Err(stdout and stderr: the FMUs' log and the
/// error) when the tool fails.
fn tool(name: &str, ssp: &Path, stop: f64, outputs: &str, csv: &Path, input: Option<&str>) -> Result<String, String> {
    tool_at(name, ssp, stop, 0.001, outputs, csv, input)
}

/// [`tool`] at H = `step`.
fn tool_at(
    name: &str,
    ssp: &Path,
    stop: f64,
    step: f64,
    outputs: &str,
    csv: &Path,
    input: Option<&str>,
) -> Result<String, String> {
    let mut cmd = Command::new(python());
    cmd.arg(script()).args([
        name,
        s(ssp),
        "--stop",
        &stop.to_string(),
        "--step",
        &step.to_string(),
        "--outputs",
        outputs,
    ]);
    cmd.args(["--csv", s(csv)]);
    if let Some(i) = input {
        cmd.args(["--input", i]);
    }
    let o = cmd.output().unwrap_or_else(|e| panic!("running {}: {e}", python().display()));
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
    }
}

fn tool_ok(name: &str, ssp: &Path, stop: f64, outputs: &str, csv: &Path, input: Option<&str>) {
    if let Err(e) = tool(name, ssp, stop, outputs, csv, input) {
        panic!(
            "{name} could not run {}: {e}\n(the tools come from PyPI: `cargo xtask test` installs fmpy, libcosimpy, ecospy into .venv; ecospy needs libtbb12)",
            ssp.display()
        );
    }
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(|h| h.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

/// The largest |a − b| per column of `a`'s (rows matched by time), as a fraction of the column's
/// largest magnitude (at least 1); with the number of rows compared.
fn compare(a: &Path, b: &Path) -> (f64, usize, String) {
    let (ha, ra) = read_csv(a);
    let (hb, rb) = read_csv(b);
    let mut worst = (0.0f64, String::new());
    let mut n = 0;
    let by_time: std::collections::HashMap<i64, &Vec<f64>> =
        rb.iter().map(|r| ((r[0] * 1e6).round() as i64, r)).collect();
    for (j, name) in ha.iter().enumerate().skip(1) {
        let k = hb.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name} not in {}: {hb:?}", b.display()));
        let scale = ra.iter().map(|r| r[j].abs()).fold(1.0, f64::max);
        for r in &ra {
            let Some(other) = by_time.get(&((r[0] * 1e6).round() as i64)) else { continue };
            let d = (r[j] - other[k]).abs() / scale;
            if d > worst.0 || worst.1.is_empty() {
                worst = (d.max(worst.0), format!("{name} at t = {}", r[0]));
            }
            if j == 1 {
                n += 1;
            }
        }
    }
    (worst.0, n, worst.1)
}

fn assert_close(what: &str, a: &Path, b: &Path, rows: usize) {
    let (d, n, at) = compare(a, b);
    eprintln!("{what}: {n} rows, largest difference {d:.2e} of the column's range ({at})");
    assert!(n + 1 >= rows, "{what}: only {n} rows matched by time");
    assert!(d <= REL, "{what}: {d:e} of the column's range ({at})");
}

fn export(toml: &Path, ssp: &Path, extra: &[&str]) {
    let mut args = vec!["export-ssp", s(toml), "--out", s(ssp)];
    args.extend_from_slice(extra);
    let o = cosim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `cosim run SSP --extrapolation 0 [flags]` with only the columns `outputs`.
fn cosim_run(ssp: &Path, out: &Path, outputs: &str, flags: &[&str]) -> PathBuf {
    let mut args = vec!["run", s(ssp), "--extrapolation", "0", "--output-variables", outputs, "--out", s(out)];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("results.csv")
}

/// The explicit-Jacobi tools against `cosim --exchange explicit`.
fn explicit_tools(dir: &Path, ssp: &Path, runs: &[(&str, PathBuf)], rows: usize) {
    let outputs = read_csv(&runs[0].1).0[1..].join(",");
    let reference = cosim_run(ssp, &dir.join("cosim-explicit"), &outputs, &["--exchange", "explicit"]);
    for (name, csv) in runs {
        assert_close(&format!("{name} vs cosim --exchange explicit"), csv, &reference, rows);
    }
}

#[test]
fn oscillator_fd_runs_in_fmpy_libcosim_and_ecos_with_cosims_results() {
    let dir = tmp("interop-osc");
    let toml = scenario("oscillator-fd.toml", &dir);
    let (name_ssp, int_ssp) = (dir.join("name.ssp"), dir.join("integer.ssp"));
    // The default writes enumerations as ssv:Integer, SSP 1.0's ssv:Enumeration on request.
    export(&toml, &name_ssp, &["--enumerations", "name"]);
    export(&toml, &int_ssp, &[]);
    for ssp in [&name_ssp, &int_ssp] {
        let v = tool("fmpy-validate", ssp, 0.0, "", &dir.join("none.csv"), None).unwrap();
        assert!(v.contains("oscillator_fd, 2 components"), "{v}");
    }
    // FMPy's simulate_ssp sets an ssv:Enumeration with int("case1"): SSP 1.0's form fails there.
    let e = tool("fmpy", &name_ssp, 10.0, "m2.x,m2.v", &dir.join("x.csv"), None).unwrap_err();
    assert!(e.contains("invalid literal for int()") && e.contains("case1"), "{e}");

    let xv = "m1.x,m1.v,m2.x,m2.v";
    let ordered = cosim_run(&int_ssp, &dir.join("cosim"), xv, &[]);
    let fmpy_loop = dir.join("fmpy-loop.csv");
    tool_ok("fmpy-loop", &int_ssp, 10.0, xv, &fmpy_loop, None);
    assert_close("fmpy-loop vs cosim (ordered exchange)", &fmpy_loop, &ordered, 10_001);

    // simulate_ssp records connectors only (m2.x, m2.v); every tool runs the default export.
    let (fmpy, libcosim, ecos) = (dir.join("fmpy.csv"), dir.join("libcosim.csv"), dir.join("ecos.csv"));
    tool_ok("fmpy", &int_ssp, 10.0, "m2.x,m2.v", &fmpy, None);
    tool_ok("libcosim", &int_ssp, 10.0, "m2.x,m2.v", &libcosim, None);
    tool_ok("ecos", &int_ssp, 10.0, "m2.x,m2.v", &ecos, None);
    explicit_tools(&dir, &int_ssp, &[("fmpy simulate_ssp", fmpy), ("libcosim", libcosim), ("ecos", ecos)], 10_000);
}

/// A non-default enumeration start value (damping = custom, with dampers to ground and cc = 0):
/// cosim applies both forms, FMPy the ssv:Integer one. libcosim 0.0.6 and ecos 0.7.2 do not
/// expose FMI 2.0 Enumeration variables at all, so neither form reaches them: they simulate the
/// FMU's default (case1, undamped), which this test asserts so that a release that applies it
/// shows up here.
#[test]
fn a_non_default_enumeration_start_value_is_applied_where_the_tool_can() {
    let dir = tmp("interop-enum");
    let toml = scenario("oscillator-fd.toml", &dir);
    let text = std::fs::read_to_string(&toml).unwrap();
    let custom = text
        .replacen("start = { damping = \"case1\" }", "start = { damping = \"custom\", c1 = 0.5, cc = 0.0 }", 1)
        .replacen("start = { damping = \"case1\" }", "start = { damping = \"custom\", c2 = 0.5 }", 1);
    assert_ne!(custom, text);
    let custom_toml = dir.join("custom.toml");
    std::fs::write(&custom_toml, custom).unwrap();
    let (name_ssp, int_ssp, default_ssp) = (dir.join("name.ssp"), dir.join("integer.ssp"), dir.join("case1.ssp"));
    export(&custom_toml, &name_ssp, &["--enumerations", "name"]);
    export(&custom_toml, &int_ssp, &[]);
    export(&toml, &default_ssp, &[]);
    let ssv = |p: &Path| {
        let mut z = zip::ZipArchive::new(std::fs::File::open(p).unwrap()).unwrap();
        std::io::read_to_string(z.by_name("resources/start-values.ssv").unwrap()).unwrap()
    };
    assert!(ssv(&name_ssp).contains(r#"<ssv:Parameter name="m1.damping"><ssv:Enumeration value="custom"/>"#));
    assert!(ssv(&int_ssp).contains(r#"<ssv:Parameter name="m1.damping"><ssv:Integer value="4"/>"#));

    let xv = "m1.x,m1.v,m2.x,m2.v";
    let by_name = cosim_run(&name_ssp, &dir.join("cosim-name"), xv, &[]);
    let by_int = cosim_run(&int_ssp, &dir.join("cosim-int"), xv, &[]);
    assert_eq!(std::fs::read(&by_name).unwrap(), std::fs::read(&by_int).unwrap(), "cosim applies both forms");
    let undamped = cosim_run(&default_ssp, &dir.join("cosim-case1"), xv, &[]);
    let (d, _, _) = compare(&by_int, &undamped);
    assert!(d > 0.1, "the dampers must change the run: {d}");
    let fmpy_loop = dir.join("fmpy-loop.csv");
    tool_ok("fmpy-loop", &int_ssp, 10.0, xv, &fmpy_loop, None);
    assert_close("fmpy-loop (ssv:Integer) vs cosim", &fmpy_loop, &by_int, 10_001);

    let (fmpy, libcosim, ecos) = (dir.join("fmpy.csv"), dir.join("libcosim.csv"), dir.join("ecos.csv"));
    tool_ok("fmpy", &int_ssp, 10.0, "m2.x,m2.v", &fmpy, None);
    let damped = cosim_run(&int_ssp, &dir.join("cosim-x"), "m2.x,m2.v", &["--exchange", "explicit"]);
    assert_close("fmpy simulate_ssp (ssv:Integer) vs cosim --exchange explicit", &fmpy, &damped, 10_000);
    for (name, csv) in [("libcosim", &libcosim), ("ecos", &ecos)] {
        for ssp in [&name_ssp, &int_ssp] {
            tool_ok(name, ssp, 10.0, "m2.x,m2.v", csv, None);
            let (d, _, at) = compare(csv, &fmpy);
            assert!(
                d > 1e-3,
                "{name} applied damping = custom from {}: tell docs/ssp.md ({d:e} at {at})",
                ssp.display()
            );
        }
    }
    let (case1_fmpy, case1_libcosim) = (dir.join("case1-fmpy.csv"), dir.join("case1-libcosim.csv"));
    let case1_int = dir.join("case1-int.ssp");
    export(&toml, &case1_int, &[]);
    tool_ok("fmpy", &case1_int, 10.0, "m2.x,m2.v", &case1_fmpy, None);
    tool_ok("libcosim", &int_ssp, 10.0, "m2.x,m2.v", &case1_libcosim, None);
    assert_close("libcosim on damping = custom vs FMPy on case1", &case1_libcosim, &case1_fmpy, 10_000);
}

#[test]
fn crane_pub3_runs_in_fmpy_libcosim_and_ecos_with_cosims_results() {
    let dir = tmp("interop-crane");
    let toml = scenario("crane-pub3.toml", &dir);
    let ssp = dir.join("crane.ssp");
    export(&toml, &ssp, &[]);
    let v = tool("fmpy-validate", &ssp, 0.0, "", &dir.join("none.csv"), None).unwrap();
    assert!(v.contains("crane_pub3, 2 components"), "{v}");
    // Work cycle J1 (the [[inputs]] table of crane-pub3.toml), which SSP 1.0 cannot carry.
    let j1 = "hyd.U_ref=0:0,0.5:10,8:0,9.5:-10,12.5:0,14:-10,18.5:0,19:10,19.8:0";
    let outputs = "mech.s,mech.s_dot,hyd.p1,hyd.p2,hyd.p3";
    let ordered = cosim_run(&ssp, &dir.join("cosim"), outputs, &[]);
    let fmpy_loop = dir.join("fmpy-loop.csv");
    tool_ok("fmpy-loop", &ssp, 20.0, outputs, &fmpy_loop, Some(j1));
    assert_close("crane fmpy-loop vs cosim (ordered exchange)", &fmpy_loop, &ordered, 20_001);
    let (libcosim, ecos) = (dir.join("libcosim.csv"), dir.join("ecos.csv"));
    tool_ok("libcosim", &ssp, 20.0, outputs, &libcosim, Some(j1));
    tool_ok("ecos", &ssp, 20.0, outputs, &ecos, Some(j1));
    explicit_tools(&dir, &ssp, &[("libcosim", libcosim), ("ecos", ecos)], 20_000);
}

/// An element: (depth, qualified name, attributes).
type Element = (usize, String, Vec<(String, String)>);

/// Elements of an XML document in order.
fn elements(xml: &str) -> Vec<Element> {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_str(xml);
    let (mut out, mut depth) = (Vec::new(), 0);
    loop {
        match r.read_event().unwrap() {
            Event::Start(e) => {
                out.push((depth, qname(&e), attrs(&e)));
                depth += 1;
            }
            Event::Empty(e) => out.push((depth, qname(&e), attrs(&e))),
            Event::End(_) => depth -= 1,
            Event::Eof => return out,
            _ => {}
        }
    }
}

fn qname(e: &quick_xml::events::BytesStart) -> String {
    String::from_utf8_lossy(e.name().as_ref()).into_owned()
}

fn attrs(e: &quick_xml::events::BytesStart) -> Vec<(String, String)> {
    e.attributes()
        .map(|a| {
            let a = a.unwrap();
            (String::from_utf8_lossy(a.key.as_ref()).into_owned(), a.unescape_value().unwrap().into_owned())
        })
        .collect()
}

fn attr<'a>(e: &'a Element, k: &str) -> Option<&'a str> {
    e.2.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

fn is_ident(n: &str) -> bool {
    let mut c = n.chars();
    c.next().is_some_and(|c| c.is_ascii_alphabetic()) && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// OMSimulator's rules (issue 31; all legal SSP 1.0), checked on the exported XML since
/// OMSimulator is not on a package registry here: identifiers for the SSD's, the system's and the
/// components' names (the original kept in `description`); as the first annotation of the
/// system `org.openmodelica` with `oms:Annotations/oms:SimulationInformation/oms:FixedStepMaster`
/// (prefix `oms:` literally, `description="oms-ma"`, the system's step); no `ssd:Annotations`
/// under the root; our settings after OMSimulator's. cosim reads the export back unchanged.
#[test]
fn exported_ssd_follows_omsimulators_rules_and_runs_in_cosim() {
    let dir = tmp("oms-rules");
    let toml = scenario("oscillator-fd.toml", &dir);
    // An instance name that is no identifier.
    let text = std::fs::read_to_string(&toml).unwrap().replace("m2", "mass-2");
    let renamed = dir.join("oscillator-fd.toml");
    std::fs::write(&renamed, text.replace("oscillator-fd-mass-2", "oscillator-fd-m2")).unwrap();
    let ssp = dir.join("o.ssp");
    export(&renamed, &ssp, &[]);
    let mut z = zip::ZipArchive::new(std::fs::File::open(&ssp).unwrap()).unwrap();
    let ssd = std::io::read_to_string(z.by_name("SystemStructure.ssd").unwrap()).unwrap();
    let el = elements(&ssd);
    let root = &el[0];
    assert_eq!(root.1, "ssd:SystemStructureDescription");
    assert_eq!((attr(root, "name"), attr(root, "description")), (Some("oscillator_fd"), Some("oscillator-fd")));
    assert!(attr(root, "xmlns:oms").is_some(), "{ssd}");
    assert!(!el.iter().any(|e| e.0 == 1 && e.1 == "ssd:Annotations"), "no ssd:Annotations under the root: {ssd}");
    let system = el.iter().position(|e| e.1 == "ssd:System").unwrap();
    assert!(is_ident(attr(&el[system], "name").unwrap()));
    let components: Vec<_> = el.iter().filter(|e| e.1 == "ssd:Component").collect();
    assert_eq!(components.len(), 2);
    for c in &components {
        assert!(is_ident(attr(c, "name").unwrap()), "{:?}", c.2);
    }
    let m2 = components.iter().find(|c| attr(c, "description") == Some("mass-2")).expect("the original name kept");
    assert_eq!(attr(m2, "name"), Some("mass_2"));
    // The system's annotations: its last child, OMSimulator's first.
    let children: Vec<_> = el[system + 1..].iter().take_while(|e| e.0 > 1).filter(|e| e.0 == 2).collect();
    assert_eq!(children.last().map(|e| e.1.as_str()), Some("ssd:Annotations"), "{children:?}");
    let ann: Vec<_> = el.iter().filter(|e| e.1 == "ssc:Annotation").collect();
    assert_eq!(attr(ann[0], "type"), Some("org.openmodelica"));
    assert_eq!(attr(ann[1], "type"), Some("org.hydraulic-cosim.settings"));
    let i = el.iter().position(|e| e.1 == "ssc:Annotation").unwrap();
    let path: Vec<&str> = el[i + 1..i + 4].iter().map(|e| e.1.as_str()).collect();
    assert_eq!(path, ["oms:Annotations", "oms:SimulationInformation", "oms:FixedStepMaster"]);
    assert_eq!((attr(&el[i + 3], "description"), attr(&el[i + 3], "stepSize")), (Some("oms-ma"), Some("0.001")));
    // FMPy's SSP 1.0 schemas accept it, and cosim runs it with the renamed instance.
    let v = tool("fmpy-validate", &ssp, 0.0, "", &dir.join("none.csv"), None).unwrap();
    assert!(v.contains("oscillator_fd"), "{v}");
    let out = dir.join("out");
    let o = cosim(&["run", s(&ssp), "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = read_csv(&out.join("results.csv"));
    assert!(h.contains(&"mass_2.x".to_owned()) && rows.len() == 10_001, "{h:?}");
}

/// An SSP as OMSimulator writes it: version="2.0" with the SSP 1.0 namespaces, the step only in
/// `oms:FixedStepMaster`, the system's annotations first (where OMSimulator puts them), connector
/// geometry. cosim reads it with a warning and runs it with that step.
#[test]
fn an_ssp_in_omsimulators_dialect_runs_with_its_step() {
    let dir = tmp("oms-dialect");
    std::fs::create_dir_all(dir.join("resources")).unwrap();
    for n in ["oscillator-fd-m1", "oscillator-fd-m2"] {
        std::fs::copy(paths::fmu(n), dir.join(format!("resources/{n}.fmu"))).unwrap();
    }
    let ssd = r#"<?xml version="1.0"?>
<ssd:SystemStructureDescription xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" xmlns:ssb="http://ssp-standard.org/SSP1/SystemStructureSignalDictionary" xmlns:oms="https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd" name="osc" version="2.0">
  <ssd:System name="root">
    <ssd:Annotations>
      <ssc:Annotation type="org.openmodelica">
        <oms:Annotations>
          <oms:SimulationInformation>
            <oms:FixedStepMaster description="oms-ma" stepSize="0.002000" absoluteTolerance="0.000100" relativeTolerance="0.000100"/>
          </oms:SimulationInformation>
        </oms:Annotations>
      </ssc:Annotation>
    </ssd:Annotations>
    <ssd:Elements>
      <ssd:Component name="m1" type="application/x-fmu-sharedlibrary" source="resources/oscillator-fd-m1.fmu">
        <ssd:Connectors>
          <ssd:Connector name="xi" kind="input"><ssc:Real/><ssd:ConnectorGeometry x="0.0" y="0.5"/></ssd:Connector>
          <ssd:Connector name="F" kind="output"><ssc:Real/><ssd:ConnectorGeometry x="1.0" y="0.5"/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ElementGeometry x1="10" y1="10" x2="30" y2="30"/>
      </ssd:Component>
      <ssd:Component name="m2" type="application/x-fmu-sharedlibrary" source="resources/oscillator-fd-m2.fmu">
        <ssd:Connectors>
          <ssd:Connector name="F" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="x" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="m2" startConnector="x" endElement="m1" endConnector="xi"/>
      <ssd:Connection startElement="m1" startConnector="F" endElement="m2" endConnector="F"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0.000000" stopTime="1.000000">
    <ssd:Annotations>
      <ssc:Annotation type="org.openmodelica">
        <oms:SimulationInformation resultFile="osc_res.mat" loggingInterval="0.000000" bufferSize="10" signalFilter=".*"/>
      </ssc:Annotation>
    </ssd:Annotations>
  </ssd:DefaultExperiment>
</ssd:SystemStructureDescription>
"#;
    std::fs::write(dir.join("SystemStructure.ssd"), ssd).unwrap();
    let ssp = dir.join("osc.ssp");
    {
        use std::io::Write as _;
        let mut z = zip::ZipWriter::new(std::fs::File::create(&ssp).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        z.start_file("SystemStructure.ssd", opts).unwrap();
        z.write_all(ssd.as_bytes()).unwrap();
        for n in ["oscillator-fd-m1", "oscillator-fd-m2"] {
            z.start_file(format!("resources/{n}.fmu"), opts).unwrap();
            z.write_all(&std::fs::read(dir.join(format!("resources/{n}.fmu"))).unwrap()).unwrap();
        }
        z.finish().unwrap();
    }
    for input in [&ssp, &dir.join("SystemStructure.ssd")] {
        let out = dir.join(format!("out-{}", input.extension().unwrap().to_str().unwrap()));
        let o = cosim(&["run", s(input), "--out", s(&out)]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        assert!(stderr.contains("version=\"2.0\"") && stderr.contains("read as SSP 1.0"), "{stderr}");
        assert!(stderr.contains("H = 0.002 s from OMSimulator's annotation oms:FixedStepMaster"), "{stderr}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!((summary["step_size"].as_f64(), summary["steps"].as_u64()), (Some(0.002), Some(500)), "{summary}");
    }
    // A step given on the command line wins over OMSimulator's.
    let out = dir.join("out-step");
    let o = cosim(&["run", s(&ssp), "--step", "0.001", "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"].as_u64(), Some(1000));
    // Other versions are still refused.
    let v3 = dir.join("v3.ssd");
    std::fs::write(&v3, ssd.replace("version=\"2.0\"", "version=\"3.0\"")).unwrap();
    let o = cosim(&["run", s(&v3), "--out", s(&dir.join("out-v3"))]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("\"3.0\": only SSP 1.x is supported"), "{stderr}");
}

/// Seed 004's naya system (issue 47) from the default export in every tool, with cosim's s(10)
/// and p1(10) (and every row of s and p1) within each tool's scheme. Its valve reference κ is a
/// time table (κ0 − 0.01 from 2 s, κ0 + 0.01 from 6 s), which SSP 1.0 cannot carry: each driver
/// sets it before every step, as cosim applies it.
/// - OMSimulator (`../shared/peers/`, skipped visibly where absent): cosim's scheme (Jacobi, held
///   inputs, feedthrough order), its accumulated time and its remainder step to 10 s: 1e-10.
/// - FMPy: `simulate_ssp` cannot: it starts every connection at 0.0, so the hydraulics get
///   s = 0, a piston beyond its stroke, and refuse the first step (asserted, so that a release
///   that starts from the outputs shows up here). `fmpy-loop` (FMPy's functions in
///   simulate_ssp's loop, connections from the outputs' initial values) is cosim's ordered
///   exchange: [`REL`].
/// - libcosim and ecos read each output once after the step (cosim `--exchange explicit`; the
///   hydraulic force feeds through from ṡ) and apply no FMI 2.0 enumeration (`integrator = FWE`
///   does not reach them: the hydraulics integrate with their default, the trapezoidal rule, at
///   the bound h = 0.2 ms): compared with cosim `--exchange explicit` on that integrator, [`REL`].
#[test]
fn naya_runs_in_omsimulator_fmpy_libcosim_and_ecos_with_cosims_s_and_p1() {
    let dir = tmp("interop-naya");
    let toml = scenario("naya.toml", &dir);
    let ssp = dir.join("naya.ssp");
    export(&toml, &ssp, &[]);
    let kappa = "hyd.kappa=0:0.464608,2:0.454608,6:0.474608";
    assert!(std::fs::read_to_string(&toml).unwrap().contains("values = [0.464608, 0.454608, 0.474608]"));
    let sp = "mech.s,hyd.p1";
    let ordered = cosim_run(&ssp, &dir.join("cosim"), sp, &[]);
    let last = |p: &Path| read_csv(p).1.last().cloned().unwrap();
    let c = last(&ordered);
    assert_eq!(c[0], 10.0);
    eprintln!("cosim: s(10) = {} m, p1(10) = {} Pa", c[1], c[2]);
    // The spool's steps move the piston: s(10) is not the start's 0.5 m.
    assert!((c[1] - 0.5708).abs() < 1e-3 && (c[2] - 3.4615e6).abs() < 1e3, "{c:?}");

    if let Some(oms) = support::peers::omsimulator() {
        let csv = dir.join("omsimulator.csv");
        let mut cmd = Command::new(python());
        cmd.arg(script()).args(["omsimulator", s(&ssp), "--stop", "10", "--step", "0.01", "--outputs", sp]);
        cmd.args(["--csv", s(&csv), "--oms", s(&oms), "--input", kappa]);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (d, n, at) = compare(&csv, &ordered);
        let x = last(&csv);
        eprintln!("OMSimulator: s(10) = {}, p1(10) = {}; {n} rows, largest difference {d:.1e} ({at})", x[1], x[2]);
        assert!(n == 1001 && d <= 1e-10, "OMSimulator: {d:e} ({at}), {n} rows");
    }

    let run = |name: &str, csv: &Path, input: Option<&str>| tool_at(name, &ssp, 10.0, 0.01, sp, csv, input);
    let e = run("fmpy", &dir.join("fmpy.csv"), None).unwrap_err();
    assert!(e.contains("s = 0 m puts the piston beyond the end of stroke"), "{e}");
    let fmpy_loop = dir.join("fmpy-loop.csv");
    run("fmpy-loop", &fmpy_loop, Some(kappa)).unwrap_or_else(|e| panic!("fmpy-loop: {e}"));
    assert_close("naya fmpy-loop vs cosim (ordered exchange)", &fmpy_loop, &ordered, 1001);
    let x = last(&fmpy_loop);
    eprintln!("FMPy (fmpy-loop): s(10) = {}, p1(10) = {}", x[1], x[2]);

    // libcosim and ecos: the explicit exchange on the hydraulics' default integrator.
    let tr_toml = dir.join("naya-tr.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&tr_toml, text.replace("integrator = \"FWE\"", "integrator = \"TR\"")).unwrap();
    let tr_ssp = dir.join("naya-tr.ssp");
    export(&tr_toml, &tr_ssp, &[]);
    let explicit_tr = cosim_run(&tr_ssp, &dir.join("cosim-tr-explicit"), sp, &["--exchange", "explicit"]);
    let explicit_fwe = cosim_run(&ssp, &dir.join("cosim-explicit"), sp, &["--exchange", "explicit"]);
    let (e_fwe, e_tr) = (last(&explicit_fwe), last(&explicit_tr));
    eprintln!(
        "cosim --exchange explicit: FWE s(10) = {}, p1(10) = {}; TR s(10) = {}, p1(10) = {}",
        e_fwe[1], e_fwe[2], e_tr[1], e_tr[2]
    );
    for name in ["libcosim", "ecos"] {
        let csv = dir.join(format!("{name}.csv"));
        run(name, &csv, Some(kappa)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_close(&format!("naya {name} vs cosim --exchange explicit, integrator TR"), &csv, &explicit_tr, 1000);
        let x = last(&csv);
        eprintln!("{name}: s(10) = {}, p1(10) = {}", x[1], x[2]);
    }
}
