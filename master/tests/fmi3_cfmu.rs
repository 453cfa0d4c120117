#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! A small C FMI 3.0 FMU (`cfmu3/cfmu3.c`, built here with the system's `cc`, packaged with the
//! description below) through the master's instance abstraction: Int64, UInt64, Int8, Float32,
//! Boolean and String variables through the 3.0 functions of their types (values outside the
//! master's 32-bit integers refused naming the reference), Binary and array variables left out
//! (listed), FMU state get/set/serialize, `terminateSimulation` ending a run at
//! `lastSuccessfulTime`, `earlyReturnAllowed = false` at instantiation (an FMU that returns early
//! anyway fails the run with the reason), `eventHandlingNeeded` reported as a warning.

use master::fmu::{Fmu2, FmuInstance};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{cosim, tmp};

const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="cfmu3" instantiationToken="{cfmu3}" variableNamingConvention="structured">
  <CoSimulation modelIdentifier="cfmu3" canHandleVariableCommunicationStepSize="true" canGetAndSetFMUState="true"
    canSerializeFMUState="true" mightReturnEarlyFromDoStep="true"/>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.1"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="u" valueReference="1" causality="input" start="0"/>
    <Float64 name="x" valueReference="2" causality="output"/>
    <Int64 name="count" valueReference="3" causality="output" variability="discrete"/>
    <UInt64 name="big" valueReference="4" causality="parameter" variability="fixed" start="5000000000"/>
    <String name="label" valueReference="5" causality="parameter" variability="fixed"><Start value="start"/></String>
    <Int8 name="small" valueReference="6" causality="parameter" variability="fixed" start="1"/>
    <Float32 name="xf" valueReference="7" causality="output"/>
    <Boolean name="positive" valueReference="8" causality="output" variability="discrete"/>
    <Boolean name="early_allowed" valueReference="9" causality="output" variability="discrete"/>
    <Float64 name="term_at" valueReference="10" causality="parameter" variability="fixed" start="-1"/>
    <Binary name="blob" valueReference="11" causality="parameter" variability="fixed"/>
    <Float64 name="arr" valueReference="12" causality="output"><Dimension start="3"/></Float64>
    <Float64 name="ain" valueReference="13" causality="input" start="0.5 1.5"><Dimension start="2"/></Float64>
    <Boolean name="flags" valueReference="14" causality="output" variability="discrete"><Dimension start="2"/></Boolean>
    <Float64 name="aout" valueReference="15" causality="output"><Dimension start="2"/></Float64>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="2"/>
    <Output valueReference="3"/>
    <Output valueReference="7"/>
    <Output valueReference="8"/>
    <Output valueReference="9"/>
    <Output valueReference="12"/>
    <Output valueReference="14"/>
    <Output valueReference="15"/>
  </ModelStructure>
</fmiModelDescription>
"#;

/// Builds `cfmu3.c` with `cflags` into `dir/<name>.fmu`.
fn build(dir: &Path, name: &str, cflags: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cfmu3/cfmu3.c");
    let so = dir.join(format!("{name}.so"));
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-w"])
        .args(cflags)
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .output()
        .expect("the system's `cc` is needed to build the test FMUs");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let fmu = dir.join(format!("{name}.fmu"));
    let mut w = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
    let o = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
    w.start_file("modelDescription.xml", o).unwrap();
    w.write_all(XML.as_bytes()).unwrap();
    w.start_file("binaries/x86_64-linux/cfmu3.so", o).unwrap();
    w.write_all(&std::fs::read(&so).unwrap()).unwrap();
    w.finish().unwrap();
    fmu
}

#[test]
fn every_scalar_type_goes_through_the_3_0_function_of_its_type() {
    let dir = tmp("cfmu3-types");
    let fmu = Fmu2::load(&build(&dir, "cfmu3", &[])).unwrap();
    let md = fmu.model_description();
    let names: Vec<&str> = md.model_variables.iter().map(|v| v.name.as_str()).collect();
    // Binary variables are left out; array elements are scalars `name[i]`.
    assert_eq!(
        names,
        [
            "time",
            "u",
            "x",
            "count",
            "big",
            "label",
            "small",
            "xf",
            "positive",
            "early_allowed",
            "term_at",
            "arr[1]",
            "arr[2]",
            "arr[3]",
            "ain[1]",
            "ain[2]",
            "flags[1]",
            "flags[2]",
            "aout[1]",
            "aout[2]"
        ]
    );
    let vr = |n: &str| md.variable(n).unwrap().value_reference;
    let (arr, ain, flags) =
        ([vr("arr[1]"), vr("arr[2]"), vr("arr[3]")], [vr("ain[1]"), vr("ain[2]")], [vr("flags[1]"), vr("flags[2]")]);
    let mut s = fmu.instantiate("c").unwrap();
    s.setup(0.0, Some(1.0)).unwrap();
    s.enter_initialization().unwrap();
    s.set_integer(&[6], &[-5]).unwrap();
    s.set_string(&[5], &["hello"]).unwrap();
    // Int8 range and the master's 32-bit range are checked with the reference named.
    let e = s.set_integer(&[6], &[300]).unwrap_err().to_string();
    assert!(e.contains("value reference 6: 300 is outside the range of Int8"), "{e}");
    let mut i = [0];
    let e = s.get_integer(&[4], &mut i).unwrap_err().to_string();
    assert!(e.contains("value reference 4 (UInt64) = 5000000000 does not fit the master's 32-bit integers"), "{e}");
    s.set_integer(&[4], &[7]).unwrap();
    s.exit_initialization().unwrap();
    s.set_real(&[1], &[2.0]).unwrap();
    let mut t = 0.0;
    for _ in 0..3 {
        s.do_step(t, 0.1).unwrap();
        t += 0.1;
    }
    let mut ints = [0; 3];
    s.get_integer(&[3, 4, 6], &mut ints).unwrap();
    assert_eq!(ints, [3, 7, -5], "count (Int64), big (UInt64), small (Int8)");
    let mut r = [0.0; 3];
    s.get_real(&[0, 2, 7], &mut r).unwrap();
    let x = 0.1 * 2.0 + 0.1 * 2.0 + 0.1 * 2.0;
    assert_eq!(r, [t, x, f64::from(x as f32)], "time, x (Float64), xf (Float32)");
    let mut b = [true, true];
    s.get_boolean(&[8, 9], &mut b).unwrap();
    assert_eq!(b, [true, false], "positive; earlyReturnAllowed was false at instantiation");
    assert_eq!(s.get_string(&[5]).unwrap(), ["hello"]);

    // FMU state: save at t = 0.3, step on, restore, step again: the same values.
    s.save_state().unwrap();
    s.do_step(t, 0.1).unwrap();
    let mut after = [0.0; 2];
    s.get_real(&[0, 2], &mut after).unwrap();
    s.restore_state().unwrap();
    let mut restored = [0.0; 2];
    s.get_real(&[0, 2], &mut restored).unwrap();
    assert_eq!(restored, [t, x]);
    s.do_step(t, 0.1).unwrap();
    let mut again = [0.0; 2];
    s.get_real(&[0, 2], &mut again).unwrap();
    assert_eq!(again, after);
    s.get_integer(&[3], &mut i).unwrap();
    assert_eq!(i, [4]);

    // Array elements: read from the whole array, an input element set within the whole array
    // (the other element keeps its start value 1.5).
    let mut a = [0.0; 3];
    s.get_real(&arr, &mut a).unwrap();
    assert_eq!(a, [again[1], 2.0 * again[1], 3.0 * again[1]]);
    s.set_real(&[ain[0]], &[1.5]).unwrap();
    let mut ains = [0.0; 2];
    s.get_real(&ain, &mut ains).unwrap();
    assert_eq!(ains, [1.5, 1.5]);
    let x0 = again[1];
    s.do_step(t + 0.1, 0.1).unwrap();
    s.get_real(&[2], &mut r[..1]).unwrap();
    assert_eq!(r[0], x0 + 0.1 * (2.0 + 1.5 - 0.5), "x' = u + ain[1] - 0.5");
    let mut fl = [false; 2];
    s.get_boolean(&flags, &mut fl).unwrap();
    assert_eq!(fl, [true, r[0] > 1.0]);
    s.terminate().unwrap();
}

fn run(dir: &Path, fmu: &Path, flags: &[&str]) -> (Option<i32>, String, PathBuf) {
    let out = dir.join("out");
    let mut args = vec!["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
}

#[test]
fn terminate_simulation_ends_the_run_at_last_successful_time() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-term");
        let fmu = build(&dir, "cfmu3", &[]);
        let mut args = vec!["--start-value", "term_at=0.35", "--start-value", "u=1"];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(s["status"], "terminated", "{stderr}");
        assert_eq!(s["time"], 0.35);
        assert_eq!(s["message"], "terminated by cfmu3 at t = 0.35");
    }
}

#[test]
fn early_return_is_not_allowed_and_event_handling_needed_is_reported() {
    let dir = tmp("cfmu3-early");
    // The FMU offers early return (mightReturnEarlyFromDoStep); the master does not allow it,
    // so a conforming FMU completes every step.
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &[]), &["--start-value", "u=1"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("10 steps to t = 1"), "{stderr}");
    // One that returns early anyway fails the run, saying why.
    let dir = tmp("cfmu3-always-early");
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &["-DALWAYS_EARLY"]), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr
            .contains("returned early at t = 0.05 although the master instantiated it with earlyReturnAllowed = false"),
        "{stderr}"
    );
    // eventHandlingNeeded: logged as a warning, the run goes on.
    let dir = tmp("cfmu3-event");
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &["-DEVENT_AT=3"]), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("eventHandlingNeeded = true; cosim does not use event mode"), "{stderr}");
    assert!(stderr.contains("10 steps to t = 1"), "{stderr}");
}

#[test]
fn cosim_info_lists_the_binary_variable_it_cannot_address() {
    let dir = tmp("cfmu3-info");
    let fmu = build(&dir, "cfmu3", &[]);
    let o = cosim(&["info", fmu.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let section = text
        .split_once("\nVariables cosim does not address (1; not settable, connectable or recorded):\n")
        .unwrap_or_else(|| panic!("no such section in {text}"))
        .1;
    // The description's line of `<Binary name="blob" …>` (see XML above).
    let line = XML.lines().position(|l| l.contains("<Binary name=\"blob\"")).unwrap() + 1;
    assert_eq!(section.lines().next().unwrap(), format!("  Binary variable \"blob\" (line {line})"));
    // The addressable ones are in the variable table, the Binary one is not.
    assert!(text.contains(" arr[3] ") && !text.contains(" blob "), "{text}");
}

/// A system file of two cfmu3 instances with `extra` appended.
fn two_instances(dir: &Path, extra: &str) -> PathBuf {
    let fmu = build(dir, "cfmu3", &[]);
    let sys = dir.join("system.toml");
    let text = format!(
        "[simulation]\nstop = 1.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\nstart = {{ ain = [2.0, 3.0] }}\n\n\
         [instances.b]\nfmu = \"{f}\"\n\n{extra}",
        f = fmu.display()
    );
    std::fs::write(&sys, text).unwrap();
    sys
}

#[test]
fn a_whole_array_start_value_and_connection_address_every_element() {
    let dir = tmp("cfmu3-whole-array");
    let sys = two_instances(
        &dir,
        "[[connections]]\nfrom = \"a.aout\"\nto = \"b.ain\"\n\n[outputs]\nvariables = [\"a.x\", \"a.aout[1]\", \"a.aout[2]\", \"b.ain[1]\", \"b.ain[2]\", \"b.aout[2]\"]\n",
    );
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let last: Vec<f64> = lines.last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    let col = |name: &str| {
        last[header.iter().position(|h| h.trim_matches('"') == name).unwrap_or_else(|| panic!("{name}: {header:?}"))]
    };
    // a.ain = [2, 3] from the TOML array: aout = 10 ain, x' = u + ain[1] - 0.5 = 1.5 (explicit Euler, exact for a constant rate).
    assert_eq!((col("a.aout[1]"), col("a.aout[2]")), (20.0, 30.0));
    assert!((col("a.x") - 1.5).abs() < 1e-12, "{}", col("a.x"));
    // The connection a.aout → b.ain, element by element.
    assert_eq!((col("b.ain[1]"), col("b.ain[2]")), (20.0, 30.0));
    assert_eq!(col("b.aout[2]"), 300.0);
}

#[test]
fn whole_arrays_of_other_shapes_or_counts_are_refused_naming_both() {
    let dir = tmp("cfmu3-array-shapes");
    let check = |extra: &str, a_start: Option<&str>, expected: &[&str]| {
        let sys = two_instances(&dir, extra);
        if let Some(s) = a_start {
            let t = std::fs::read_to_string(&sys).unwrap().replace("start = { ain = [2.0, 3.0] }", s);
            std::fs::write(&sys, t).unwrap();
        }
        let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{stderr}");
        for e in expected {
            assert!(stderr.contains(e), "expected {e:?} in: {stderr}");
        }
    };
    check(
        "[[connections]]\nfrom = \"a.arr\"\nto = \"b.ain\"\n",
        None,
        &["connections[0]", "a.arr has shape [3] but b.ain has shape [2]"],
    );
    check(
        "[[connections]]\nfrom = \"a.arr\"\nto = \"b.u\"\n",
        None,
        &["connections[0].from", "a.arr is an array of shape [3] but b.u is not", "arr[1]"],
    );
    check(
        "",
        Some("start = { ain = [1.0] }"),
        &["instances.a.start.ain", "ain has shape [2] (2 elements) but 1 start values were given"],
    );
    check("", Some("start = { ain = 1.0 }"), &["ain is an array of shape [2]: give a TOML array of 2 values"]);
    check("", Some("start = { u = [1.0, 2.0] }"), &["u is a scalar: a TOML array [1.0, 2.0]"]);
}

#[test]
fn a_whole_array_start_value_on_the_command_line_sets_every_element() {
    let dir = tmp("cfmu3-start-value-array");
    let fmu = build(&dir, "cfmu3", &[]);
    let args = ["--start-value", "ain=[2, 3]", "--start-value", "u=1", "--output-variables", "x,aout[1],aout[2]"];
    let (code, stderr, out) = run(&dir, &fmu, &args);
    assert_eq!(code, Some(0), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    // time, x, aout[1], aout[2]: aout = 10 ain; x' = u + ain[1] - 0.5 = 2.5 from x = 0 (explicit
    // Euler, exact for a constant rate).
    assert_eq!(&last[2..], [20.0, 30.0]);
    assert!((last[1] - 2.5).abs() < 1e-12, "{}", last[1]);
    // Nested brackets read row by row: the same values.
    let (code, stderr, out2) = run(&dir.join("nested"), &fmu, &["--start-value", "ain=[[2],[3]]"]);
    assert_eq!(code, Some(0), "{stderr}");
    let header = std::fs::read_to_string(out2.join("results.csv")).unwrap();
    assert!(header.lines().next().unwrap().contains("aout[1]"), "{header}");

    for (arg, expected) in [
        ("ain=[1]", "--start-value ain=[1]: ain has shape [2] (2 elements) but 1 values were given: [1]"),
        ("ain=1", "--start-value ain=1: ain is an array of shape [2]: give its 2 values in brackets, row-major (e.g. ain=[0,0]), or name an element, e.g. ain[1]"),
        ("ain=[1,abc]", "--start-value ain=[1,abc]: \"abc\" is not a finite number (ain[2] is Real)"),
        ("ain=[1,2", "ain is an array of shape [2]: give its 2 values in brackets"),
        ("aout=[1,2]", "--start-value aout=[1,2]: aout[1] has causality output and cannot be given a start value"),
    ] {
        let (code, stderr, _) = run(&dir.join("bad"), &fmu, &["--start-value", arg]);
        assert_eq!(code, Some(1), "{arg}: {stderr}");
        assert!(stderr.contains(expected), "{arg}: expected {expected:?} in: {stderr}");
        assert!(stderr.contains("cfmu3.fmu"), "{stderr}");
    }
}

#[test]
fn an_ssp_connection_of_connectors_naming_whole_arrays_joins_every_element() {
    let dir = tmp("cfmu3-ssp-array");
    build(&dir, "cfmu3", &[]);
    let ssd = |to: &str| {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="arrays">
  <ssd:System name="arrays">
    <ssd:Elements>
      <ssd:Component name="a" source="cfmu3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="aout" kind="output"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="arr" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="a-start">
                <ssv:Parameters>
                  <ssv:Parameter name="ain[1]"><ssv:Real value="2"/></ssv:Parameter>
                  <ssv:Parameter name="ain[2]"><ssv:Real value="3"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="b" source="cfmu3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="ain" kind="input"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="a" startConnector="{to}" endElement="b" endConnector="ain"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
  <ssd:Annotations>
    <ssc:Annotation type="org.hydraulic-cosim.settings">
      <cosim:Settings xmlns:cosim="https://example.invalid/hydraulic-cosim/ssp/settings/1.0"><![CDATA[
[simulation]
step = 0.1
[outputs]
variables = ["a.aout[1]", "a.aout[2]", "b.ain[1]", "b.ain[2]", "b.aout[2]"]
]]></cosim:Settings>
    </ssc:Annotation>
  </ssd:Annotations>
</ssd:SystemStructureDescription>
"#
        )
    };
    let path = dir.join("arrays.ssd");
    std::fs::write(&path, ssd("aout")).unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    // a.ain = [2, 3] element by element from the SSV; a.aout = 10 a.ain reaches b.ain element
    // by element; b.aout = 10 b.ain.
    assert_eq!(&last[1..], [20.0, 30.0, 20.0, 30.0, 300.0], "{csv}");

    // Arrays of other shapes: refused naming the SSD, both connectors and both shapes.
    std::fs::write(&path, ssd("arr")).unwrap();
    let o = cosim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("arrays.ssd") && stderr.contains("a.arr has shape [3] but b.ain has shape [2]"),
        "{stderr}"
    );
}
