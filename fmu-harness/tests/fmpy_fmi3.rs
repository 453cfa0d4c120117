#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The FMI 3.0 variants of every packaged FMU (`target/fmu3/`, the same model and variable
//! table as `target/fmu/`) through FMPy, a third-party importer: `fmpy validate` (schema and
//! rules of FMI 3.0) finds no problem, FMPy's `simulate_fmu` runs each, and the results equal
//! the FMI 2.0 variant's bit for bit (same steps, same inputs); FMU state get/set and
//! serialization through FMPy's 3.0 API restore a run exactly.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fmu3(name: &str) -> PathBuf {
    let p = paths::fmu3_dir().join(format!("{name}.fmu"));
    assert!(p.exists(), "{} is missing: run `cargo xtask fmus`", p.display());
    p
}

fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new(paths::python()).args(["-c", script]).args(args).output().expect("running python");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn fmpy_validate_reports_no_problems_for_the_fmi3_fmus() {
    let all = paths::all_fmus();
    for fmu in &all {
        let v3 = fmu3(fmu.file_stem().unwrap().to_str().unwrap());
        let out = Command::new(paths::python())
            .args(["-c", "import sys; from fmpy.cli import main; sys.argv[0] = 'fmpy'; sys.exit(main())", "validate"])
            .arg(&v3)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("No problems found"), "{}: {text}", v3.display());
        // It is a 3.0 description (FMPy reads the version from the XML).
        let version = python(
            "import sys; from fmpy import read_model_description as r; print(r(sys.argv[1]).fmiVersion)",
            &[&v3],
        );
        assert_eq!(version.trim(), "3.0", "{}", v3.display());
    }
}

/// FMPy's `simulate_fmu` on the 2.0 and the 3.0 FMU of each model, same stop time, step and
/// (for the hydraulic cylinder) the same input table: every output of every row is printed with
/// `repr` and the two runs must print the same text.
#[test]
fn fmpy_runs_the_fmi3_fmus_bit_identical_to_the_fmi2_fmus() {
    let script = r#"
import sys, numpy as np
from fmpy import simulate_fmu, read_model_description
fmu2, fmu3, name = sys.argv[1], sys.argv[2], sys.argv[3]
stop = 1.0 if name.startswith('oscillator') else 0.5
kw = dict(fmi_type='CoSimulation', stop_time=stop)
if name == 'hydraulics-naya':
    t = np.arange(0, 501) * 1e-3
    inp = np.array(list(zip(t, 0.5 + 0.002 * np.sin(4 * np.pi * t), 0.008 * np.pi * np.cos(4 * np.pi * t))),
                   dtype=[('time', float), ('s', float), ('s_dot', float)])
    kw.update(input=inp, step_size=1e-3, output_interval=1e-3)
outs = [v.name for v in read_model_description(fmu2).modelVariables if v.causality == 'output']
kw['output'] = outs
for f in (fmu2, fmu3):
    r = simulate_fmu(f, **kw)
    print(len(r), ','.join(r.dtype.names))
    for row in r:
        print(','.join(repr(float(x)) for x in row))
    print('=====')
"#;
    for fmu in paths::all_fmus() {
        let name = fmu.file_stem().unwrap().to_str().unwrap().to_owned();
        let text = python(script, &[&fmu, &fmu3(&name), Path::new(&name)]);
        // FMPy prints warnings (inputs without a signal) on stdout too.
        let text: String = text.lines().filter(|l| !l.starts_with("Warning")).map(|l| format!("{l}\n")).collect();
        let runs: Vec<&str> = text.split("=====\n").filter(|s| !s.trim().is_empty()).collect();
        assert_eq!(runs.len(), 2, "{name}: {text}");
        let rows = runs[0].lines().count();
        assert!(rows > 50, "{name}: only {rows} rows");
        assert!(runs[0].lines().nth(1).unwrap().split(',').count() > 1, "{name}: no outputs");
        if runs[0] != runs[1] {
            let diff = runs[0].lines().zip(runs[1].lines()).find(|(a, b)| a != b);
            panic!(
                "{name}: FMI 2.0 and 3.0 results differ; first differing row:\n2.0: {:?}\n3.0: {:?}",
                diff.map(|d| d.0),
                diff.map(|d| d.1)
            );
        }
    }
}

/// FMPy's FMI 3.0 API on the crane: run to t1, `fmi3GetFMUState`, serialize, run on to t2;
/// then deserialize, `fmi3SetFMUState` and run t1 → t2 again: the outputs are the same bits.
/// Also: `time` reads the communication point, an enumeration reads through `fmi3GetInt64`,
/// a counter is an `Int64`, and a type mismatch is refused with a message naming the variable.
#[test]
fn fmpy_fmi3_api_restores_serialized_states_exactly() {
    let script = r#"
import sys
from fmpy import read_model_description, extract
from fmpy.fmi3 import FMU3Slave
path = sys.argv[1]
md = read_model_description(path)
vr = {v.name: v.valueReference for v in md.modelVariables}
types = {v.name: v.type for v in md.modelVariables}
print('time_type', types['time'], md.modelVariables[0].causality)
ints = sorted(n for n, t in types.items() if t in ('Int64', 'Int32', 'Enumeration'))
print('ints', ' '.join('%s:%s' % (n, types[n]) for n in ints))
outs = [v.valueReference for v in md.modelVariables if v.causality == 'output' and v.type == 'Float64']
logs = []
fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(path), modelIdentifier=md.coSimulation.modelIdentifier, instanceName='c1')
fmu.instantiate(loggingOn=True, logMessage=lambda env, st, cat, msg: logs.append(msg.decode()))
fmu.enterInitializationMode(startTime=0.0)
fmu.exitInitializationMode()
h = 1e-3
t = 0.0
for k in range(200):
    fmu.doStep(t, h); t += h
print('time', repr(fmu.getFloat64([vr['time']])[0]), repr(t))
s = fmu.getFMUState()
blob = fmu.serializeFMUState(s)
fmu.freeFMUState(s)
t1 = t
first = []
for k in range(200):
    fmu.doStep(t, h); t += h
    first.append(fmu.getFloat64(outs))
s2 = fmu.deserializeFMUState(blob)
fmu.setFMUState(s2)
fmu.freeFMUState(s2)
t = t1
second = []
for k in range(200):
    fmu.doStep(t, h); t += h
    second.append(fmu.getFloat64(outs))
print('same', first == second, len(blob))
print('moved', first[0] != first[-1])
enum = [n for n in ints if types[n] == 'Enumeration'][0]
print('enum', enum, fmu.getInt64([vr[enum]])[0])
try:
    fmu.getFloat64([vr[enum]])
    print('mismatch accepted')
except Exception as e:
    print('mismatch refused', logs[-1])
fmu.terminate()
fmu.freeInstance()
"#;
    let text = python(script, &[&fmu3("multibody-crane")]);
    assert!(text.contains("time_type Float64 independent"), "{text}");
    assert!(text.contains("same True"), "{text}");
    assert!(text.contains("moved True"), "{text}");
    let time_line = text.lines().find(|l| l.starts_with("time ")).unwrap();
    let parts: Vec<&str> = time_line.split(' ').collect();
    assert_eq!(parts[1], parts[2], "{text}");
    // Counters are Int64, enumerations Enumeration (read through fmi3GetInt64).
    let ints = text.lines().find(|l| l.starts_with("ints")).unwrap();
    assert!(ints.contains(":Int64") && ints.contains(":Enumeration"), "{ints}");
    assert!(text.contains("mismatch refused") && text.contains("is of type Enumeration, not Float64"), "{text}");
}
