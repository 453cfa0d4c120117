//! Small C FMUs for the master's tests, compiled with the system's `cc` from `cfmu.c` and
//! packaged with a modelDescription written here. Real variables by value reference: 0 = `u`
//! (input), 1 = `x` (x' = u), 2 = `n` (fmi2DoStep calls), 3 = `t` (the FMU's time), 4.. = `y4`,
//! `y5`, … (outputs equal to their value reference).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the FMU looks like.
pub struct Spec {
    /// modelIdentifier and file name (`<id>.fmu`).
    pub id: String,
    /// Number of Real variables (≥ 4).
    pub n_real: usize,
    /// `canInterpolateInputs`.
    pub interpolate: bool,
    /// Extra attributes of `<CoSimulation>`, e.g. `canGetAndSetFMUstate="true"`.
    pub cs_attrs: String,
    /// Names of the variables in value-reference order (default: u, x, n, t, y4, …).
    pub names: Vec<String>,
    /// Text put on one line (no newlines between elements).
    pub one_line: bool,
    /// Extra `cc` arguments (e.g. `-DOMIT_…`).
    pub cflags: Vec<String>,
    /// Inner XML of a `<VendorAnnotations><Tool name="t">` (none when empty).
    pub vendor_annotation: String,
    /// Declare that `x` depends directly on `u` (direct feedthrough).
    pub feedthrough: bool,
    /// `y4 = u` at every instant (built with `-DPASS`, declared as depending on `u`; needs
    /// `n_real` ≥ 5): a real direct feedthrough.
    pub pass: bool,
}

impl Spec {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.into(),
            n_real: 4,
            interpolate: false,
            cs_attrs: String::new(),
            names: Vec::new(),
            one_line: false,
            cflags: Vec::new(),
            vendor_annotation: String::new(),
            feedthrough: false,
            pass: false,
        }
    }

    fn name(&self, vr: usize) -> String {
        self.names.get(vr).cloned().unwrap_or_else(|| match vr {
            0 => "u".into(),
            1 => "x".into(),
            2 => "n".into(),
            3 => "t".into(),
            k => format!("y{k}"),
        })
    }

    /// The modelDescription.xml.
    pub fn description(&self) -> String {
        let nl = if self.one_line { "" } else { "\n" };
        let esc = |s: &str| s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('\n', "&#10;");
        let mut xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>{nl}<fmiModelDescription fmiVersion="2.0" modelName="{id}" guid="{{cfmu}}">{nl}<CoSimulation modelIdentifier="{id}" canHandleVariableCommunicationStepSize="true" canInterpolateInputs="{interp}" maxOutputDerivativeOrder="0" {attrs}/>{nl}<DefaultExperiment startTime="0" stopTime="1" stepSize="0.1"/>{nl}{vendor}<ModelVariables>{nl}"#,
            id = self.id,
            interp = self.interpolate,
            attrs = self.cs_attrs,
            vendor = if self.vendor_annotation.is_empty() {
                String::new()
            } else {
                format!(
                    r#"<VendorAnnotations><Tool name="t">{}</Tool></VendorAnnotations>{nl}"#,
                    self.vendor_annotation
                )
            },
        );
        for vr in 0..self.n_real {
            let (causality, extra) = if vr == 0 { ("input", r#" start="0""#) } else { ("output", "") };
            xml += &format!(
                r#"<ScalarVariable name="{}" valueReference="{vr}" causality="{causality}" variability="continuous"><Real{extra}/></ScalarVariable>{nl}"#,
                esc(&self.name(vr))
            );
        }
        xml += &format!("</ModelVariables>{nl}<ModelStructure>{nl}<Outputs>{nl}");
        for vr in 1..self.n_real {
            let deps = if (vr == 1 && self.feedthrough) || (vr == 4 && self.pass) { "1" } else { "" };
            xml += &format!(r#"<Unknown index="{}" dependencies="{deps}"/>{nl}"#, vr + 1);
        }
        xml += &format!("</Outputs>{nl}<InitialUnknowns>{nl}");
        for vr in 1..self.n_real {
            xml += &format!(r#"<Unknown index="{}" dependencies=""/>{nl}"#, vr + 1);
        }
        xml += &format!("</InitialUnknowns>{nl}</ModelStructure>{nl}</fmiModelDescription>\n");
        xml
    }

    /// Compiles the library and writes `<dir>/<id>.fmu`.
    pub fn build(&self, dir: &Path) -> PathBuf {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cfmu/cfmu.c");
        let so = dir.join(format!("{}.so", self.id));
        let out = Command::new("cc")
            .args(["-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-w"])
            .arg(format!("-DNREAL={}", self.n_real))
            .args(&self.cflags)
            .args(self.pass.then_some("-DPASS"))
            .arg("-o")
            .arg(&so)
            .arg(&src)
            .output()
            .expect("the system's `cc` is needed to build the test FMUs");
        assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
        let fmu = dir.join(format!("{}.fmu", self.id));
        self.package(&fmu, &std::fs::read(&so).unwrap());
        fmu
    }

    /// Writes the archive with `binary` as the linux64 library.
    pub fn package(&self, fmu: &Path, binary: &[u8]) {
        let mut w = zip::ZipWriter::new(std::fs::File::create(fmu).unwrap());
        let o = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
        w.start_file("modelDescription.xml", o).unwrap();
        w.write_all(self.description().as_bytes()).unwrap();
        w.start_file(format!("binaries/linux64/{}.so", self.id), o).unwrap();
        w.write_all(binary).unwrap();
        w.finish().unwrap();
    }
}
