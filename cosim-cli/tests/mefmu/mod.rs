//! Small FMI 2.0 Model Exchange FMUs for the tests, compiled with the system's `cc` from `me.c`
//! (`-DMODEL=n`) and packaged with a modelDescription written here (ME only: no `<CoSimulation>`).
//! See `models.h` (shared by `me.c` and `me3.c`) for the models: a bouncing ball (state events), a
//! stair (time events), Robertson's stiff chemistry and a decay that ends the simulation from a
//! step event.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One variable: name, causality, variability, start, index of the state it is the derivative of.
struct Var(&'static str, &'static str, &'static str, Option<f64>, Option<usize>);

/// The test models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// h, v; bounces with e = 0.7 from h = 1 (g = 9.81).
    Ball,
    /// x' = k, k = floor(t).
    Stair,
    /// Robertson's stiff chemistry.
    Robertson,
    /// x' = u - x from 1; terminates once x < 0.5 (after the step that crossed it).
    Stop,
}

impl Model {
    fn number(self) -> u32 {
        match self {
            Model::Ball => 1,
            Model::Stair => 2,
            Model::Robertson => 3,
            Model::Stop => 4,
        }
    }

    /// The modelIdentifier (and file stem).
    pub fn id(self) -> &'static str {
        match self {
            Model::Ball => "ball",
            Model::Stair => "stair",
            Model::Robertson => "robertson",
            Model::Stop => "stop",
        }
    }

    fn vars(self) -> (Vec<Var>, u32, f64) {
        let l = "local";
        let c = "continuous";
        match self {
            Model::Ball => (
                vec![
                    Var("h", "output", c, Some(1.0), None),
                    Var("v", "output", c, Some(0.0), None),
                    Var("der(h)", l, c, None, Some(1)),
                    Var("der(v)", l, c, None, Some(2)),
                    Var("g", "parameter", "fixed", Some(9.81), None),
                    Var("e", "parameter", "tunable", Some(0.7), None),
                ],
                1,
                2.0,
            ),
            Model::Stair => (
                vec![
                    Var("x", "output", c, Some(0.0), None),
                    Var("der(x)", l, c, None, Some(1)),
                    Var("k", "output", "discrete", None, None),
                ],
                0,
                3.5,
            ),
            Model::Robertson => (
                vec![
                    Var("y1", "output", c, Some(1.0), None),
                    Var("y2", "output", c, Some(0.0), None),
                    Var("y3", "output", c, Some(0.0), None),
                    Var("der(y1)", l, c, None, Some(1)),
                    Var("der(y2)", l, c, None, Some(2)),
                    Var("der(y3)", l, c, None, Some(3)),
                ],
                0,
                40.0,
            ),
            Model::Stop => (
                vec![
                    Var("x", "output", c, Some(1.0), None),
                    Var("der(x)", l, c, None, Some(1)),
                    Var("threshold", "parameter", "fixed", Some(0.5), None),
                    Var("u", "input", c, Some(0.0), None),
                ],
                0,
                2.0,
            ),
        }
    }

    /// The modelDescription.xml.
    pub fn description(self) -> String {
        let (vars, nz, stop) = self.vars();
        let id = self.id();
        let mut xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription fmiVersion=\"2.0\" modelName=\"{id}\" \
             guid=\"{{mefmu-{id}}}\" numberOfEventIndicators=\"{nz}\">\n<ModelExchange modelIdentifier=\"{id}\" \
             canGetAndSetFMUstate=\"true\"/>\n<DefaultExperiment startTime=\"0\" stopTime=\"{stop}\"/>\n<ModelVariables>\n"
        );
        for (vr, Var(name, causality, variability, start, derivative)) in vars.iter().enumerate() {
            let (causality, variability) = match *causality {
                "parameter" => ("parameter", *variability),
                other => (other, *variability),
            };
            let initial = match (causality, start) {
                ("output" | "local", Some(_)) => " initial=\"exact\"",
                _ => "",
            };
            let start = start.map(|s| format!(" start=\"{s}\"")).unwrap_or_default();
            let derivative = derivative.map(|d| format!(" derivative=\"{d}\"")).unwrap_or_default();
            xml += &format!(
                "<ScalarVariable name=\"{name}\" valueReference=\"{vr}\" causality=\"{causality}\" \
                 variability=\"{variability}\"{initial}><Real{start}{derivative}/></ScalarVariable>\n"
            );
        }
        xml += "</ModelVariables>\n<ModelStructure>\n<Outputs>\n";
        for (i, v) in vars.iter().enumerate() {
            if v.1 == "output" {
                xml += &format!("<Unknown index=\"{}\"/>\n", i + 1);
            }
        }
        xml += "</Outputs>\n<Derivatives>\n";
        for (i, v) in vars.iter().enumerate() {
            if v.4.is_some() {
                xml += &format!("<Unknown index=\"{}\"/>\n", i + 1);
            }
        }
        xml += "</Derivatives>\n</ModelStructure>\n</fmiModelDescription>\n";
        xml
    }

    /// The FMI 3.0 modelDescription.xml of `me3.c` (ball and stair): value reference 0 is the
    /// time, variable k of [`Model::vars`] has value reference k + 1; the ball's event indicator
    /// is h.
    pub fn description3(self) -> String {
        let (vars, nz, stop) = self.vars();
        let id = self.id();
        let mut xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription fmiVersion=\"3.0\" modelName=\"{id}\" \
             instantiationToken=\"{{mefmu3-{id}}}\">\n<ModelExchange modelIdentifier=\"{id}\" \
             canGetAndSetFMUState=\"true\"/>\n<DefaultExperiment startTime=\"0\" stopTime=\"{stop}\"/>\n<ModelVariables>\n\
             <Float64 name=\"time\" valueReference=\"0\" causality=\"independent\" variability=\"continuous\"/>\n"
        );
        for (k, Var(name, causality, variability, start, derivative)) in vars.iter().enumerate() {
            let initial = match (*causality, start) {
                ("output" | "local", Some(_)) => " initial=\"exact\"",
                _ => "",
            };
            let start = start.map(|s| format!(" start=\"{s}\"")).unwrap_or_default();
            let derivative = derivative.map(|d| format!(" derivative=\"{d}\"")).unwrap_or_default();
            xml += &format!(
                "<Float64 name=\"{name}\" valueReference=\"{}\" causality=\"{causality}\" \
                 variability=\"{variability}\"{initial}{start}{derivative}/>\n",
                k + 1
            );
        }
        xml += "</ModelVariables>\n<ModelStructure>\n";
        for (k, v) in vars.iter().enumerate() {
            if v.1 == "output" {
                xml += &format!("<Output valueReference=\"{}\"/>\n", k + 1);
            }
        }
        for (k, v) in vars.iter().enumerate() {
            if v.4.is_some() {
                xml += &format!("<ContinuousStateDerivative valueReference=\"{}\"/>\n", k + 1);
            }
        }
        if nz == 1 {
            xml += "<EventIndicator valueReference=\"1\"/>\n";
        }
        xml += "</ModelStructure>\n</fmiModelDescription>\n";
        xml
    }

    /// Compiles the library and writes `<dir>/<id>.fmu`.
    pub fn build(self, dir: &Path) -> PathBuf {
        self.build_with(dir, &Build::default())
    }

    /// Compiles the FMI 3.0 library (`me3.c`) and writes `<dir>/<id>.fmu`.
    pub fn build3(self, dir: &Path) -> PathBuf {
        self.build_with(dir, &Build { fmi3: true, ..Build::default() })
    }

    /// Compiles the library as `how` says and writes `<dir>/<id>.fmu`.
    pub fn build_with(self, dir: &Path, how: &Build) -> PathBuf {
        let file = if how.fmi3 { "tests/mefmu/me3.c" } else { "tests/mefmu/me.c" };
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        std::fs::create_dir_all(dir).unwrap();
        let so = dir.join(format!("{}.so", self.id()));
        let out = Command::new("cc")
            .args(["-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror"])
            .arg(format!("-DMODEL={}", self.number()))
            .args(how.defines.iter().map(|d| format!("-D{d}")))
            .arg("-o")
            .arg(&so)
            .arg(&src)
            .arg("-lm")
            .output()
            .expect("the system's `cc` is needed to build the test FMUs");
        assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
        let fmu = dir.join(format!("{}.fmu", self.id()));
        let mut w = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
        let o = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
        let xml = if how.fmi3 { self.description3() } else { self.description() };
        let xml = how.xml.iter().fold(xml, |x, (from, to)| {
            assert!(x.contains(from.as_str()), "{from} not in the description");
            x.replace(from.as_str(), to)
        });
        w.start_file("modelDescription.xml", o).unwrap();
        w.write_all(xml.as_bytes()).unwrap();
        let platform = if how.fmi3 { "x86_64-linux" } else { "linux64" };
        w.start_file(format!("binaries/{platform}/{}.so", self.id()), o).unwrap();
        w.write_all(&std::fs::read(&so).unwrap()).unwrap();
        w.finish().unwrap();
        fmu
    }
}

/// How [`Model::build_with`] builds: FMI 3.0 (`me3.c`) or 2.0 (`me.c`), the C macros
/// (`HOSTILE=2`), replacements in the description.
#[derive(Default)]
pub struct Build {
    pub fmi3: bool,
    pub defines: Vec<String>,
    pub xml: Vec<(String, String)>,
}
