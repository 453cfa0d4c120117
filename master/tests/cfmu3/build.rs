//! The small C FMI 3.0 test FMU `cfmu3.c` (its description below), built at test time with the
//! system's `cc` and packaged: shared by `fmi3_cfmu.rs` and `zero_alloc.rs`.
#![allow(dead_code, reason = "each test file uses part of it")]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
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
    <Binary name="blob" valueReference="11" causality="parameter" variability="tunable" maxSize="16"><Start value="C0FFEE"/></Binary>
    <Float64 name="arr" valueReference="12" causality="output"><Dimension start="3"/></Float64>
    <Float64 name="ain" valueReference="13" causality="input" start="0.5 1.5"><Dimension start="2"/></Float64>
    <Boolean name="flags" valueReference="14" causality="output" variability="discrete"><Dimension start="2"/></Boolean>
    <Float64 name="aout" valueReference="15" causality="output"><Dimension start="2"/></Float64>
    <Binary name="bin_in" valueReference="16" causality="input" mimeType="application/x-cfmu3" maxSize="8"><Start value="0102"/></Binary>
    <Binary name="bin_out" valueReference="17" causality="output"/>
    <Binary name="blob_arr" valueReference="18" causality="parameter" variability="fixed"><Dimension start="2"/><Start value="00"/><Start value="01"/></Binary>
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
    <Output valueReference="17"/>
  </ModelStructure>
</fmiModelDescription>
"#;

/// Builds `cfmu3.c` with `cflags` into `dir/<name>.fmu`.
pub fn build(dir: &Path, name: &str, cflags: &[&str]) -> PathBuf {
    build_with(dir, name, cflags, XML)
}

/// [`build`] with the description `xml`.
pub fn build_with(dir: &Path, name: &str, cflags: &[&str], xml: &str) -> PathBuf {
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
    w.write_all(xml.as_bytes()).unwrap();
    w.start_file("binaries/x86_64-linux/cfmu3.so", o).unwrap();
    w.write_all(&std::fs::read(&so).unwrap()).unwrap();
    w.finish().unwrap();
    fmu
}
