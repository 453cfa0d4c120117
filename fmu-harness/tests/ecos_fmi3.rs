#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Our FMI 3.0 FMUs (`target/fmu3/`) in the third-party masters on PyPI (issue 32):
//! - ecos (ecospy 0.7.2, which loads FMI 1.0, 2.0 and 3.0 through fmi4c) runs the 3.0 variant
//!   of each model with every Float64 output equal to the 2.0 variant's bit for bit;
//! - libcosim (libcosimpy 0.0.6, FMI Library: FMI 1.0 and 2.0) cannot load a 3.0 FMU: the
//!   process dies before the binary is loaded. Kept as a test so that a libcosimpy that starts
//!   taking 3.0 FMUs is noticed (and then tested like ecos).

use fmu_harness::paths;
use std::path::PathBuf;
use std::process::Command;

/// The models run in ecos: one of each FMU family with its own coupling pattern.
const MODELS: [&str; 5] =
    ["oscillator-fd-m1", "oscillator-dd-m2", "hydraulics-lumped3", "multibody-crane", "testing-faulty"];

fn fmu3(name: &str) -> PathBuf {
    let p = paths::fmu3_dir().join(format!("{name}.fmu"));
    assert!(p.exists(), "{} is missing: run `cargo xtask fmus`", p.display());
    p
}

/// ecos, 200 steps of 1 ms from t = 0 with the start values, then `repr` of every Float64
/// output (read through FMPy's description reader: a tool of its own).
const ECOS: &str = r#"
import sys
from fmpy import read_model_description
from ecospy import EcosLib, EcosSimulationStructure, EcosSimulation
EcosLib.set_log_level("err")
path = sys.argv[1]
md = read_model_description(path)
outs = [v.name for v in md.modelVariables if v.causality == 'output' and v.type in ('Real', 'Float64')]
assert outs, "no Float64 outputs"
ss = EcosSimulationStructure()
ss.add_model("m", path)
sim = EcosSimulation(structure=ss, step_size=1e-3)
assert sim.init(0.0, None), EcosLib.get_last_error()
t = sim.step(200)
print("=", md.fmiVersion, repr(t))
for name in outs:
    print("=", name, repr(sim.get_real("m::" + name)))
sim.terminate()
sim.free()
ss.free()
"#;

fn ecos(path: &std::path::Path) -> String {
    let out = Command::new(paths::python()).args(["-c", ECOS]).arg(path).output().expect("running python");
    assert!(
        out.status.success(),
        "ecos on {}: {}{}\n(ecospy comes from PyPI: `cargo xtask test` installs it into .venv; it needs libtbb12)",
        path.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // ecos prints notes of its own on stdout (for a 3.0 FMU: `Function "fmi3GetVersion" is not
    // provided by this FMU.`, although the binary exports it and ecos then runs it): the
    // script's lines start with "= ".
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("= "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn ecos_runs_the_fmi3_fmus_bit_identical_to_the_fmi2_fmus() {
    for name in MODELS {
        let v2 = ecos(&paths::fmu(name));
        let v3 = ecos(&fmu3(name));
        let (head2, rows2) = v2.split_once('\n').unwrap();
        let (head3, rows3) = v3.split_once('\n').unwrap();
        assert!(head2.starts_with("2.0 ") && head3.starts_with("3.0 "), "{name}: {head2} / {head3}");
        // Both ran the 200 steps.
        assert_eq!(head2[4..], head3[4..], "{name}: end times differ");
        assert!(rows3.lines().count() >= 1, "{name}: no outputs");
        assert_eq!(rows2, rows3, "{name}: ecos results of the 2.0 and the 3.0 FMU differ");
    }
}

#[test]
fn libcosimpy_cannot_load_a_fmi3_fmu() {
    let script = r#"
import sys
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimSlave import CosimLocalSlave
ex = CosimExecution.from_step_size(1_000_000)
slave = CosimLocalSlave(fmu_path=sys.argv[1], instance_name="m")
print("index", ex.add_local_slave(slave), flush=True)
"#;
    let run = |p: &std::path::Path| Command::new(paths::python()).args(["-c", script]).arg(p).output().unwrap();
    // The same script takes the 2.0 variant: the failure is the version's.
    let ok = run(&paths::fmu("oscillator-fd-m1"));
    assert!(ok.status.success() && String::from_utf8_lossy(&ok.stdout).contains("index 0"), "{ok:?}");
    let v3 = run(&fmu3("oscillator-fd-m1"));
    let added = v3.status.success() && String::from_utf8_lossy(&v3.stdout).contains("index 0");
    assert!(!added, "libcosimpy now loads FMI 3.0 FMUs: test them like ecos ({v3:?})");
}
