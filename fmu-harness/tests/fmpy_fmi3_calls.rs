#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The FMI 3.0 entry points of our export layer as a third-party importer calls them (FMPy's
//! low-level `FMU3Slave`): `fmi3GetFloat64`/`fmi3SetFloat64` take the direct path for Float64
//! variables and the checked path for everything else (`time`, other types, `nValues` that do
//! not match, unknown references), which answers with `fmi3Error` and a message naming the
//! variable, its type and the value; `fmi3DoStep` fills its four outputs. The model is
//! testing-faulty (x' = u, y = x, x(0) = x0 = 1), so the values are known exactly.

use fmu_harness::paths;
use std::process::Command;

const SCRIPT: &str = r#"
import sys
from fmpy import read_model_description, extract
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave

path = sys.argv[1]
md = read_model_description(path)
vr = {v.name: v.valueReference for v in md.modelVariables}
unzipped = extract(path)
messages = []

def log(env, status, category, message):
    messages.append(message.decode())

def instance(name):
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName=name)
    fmu.instantiate(logMessage=log)
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    return fmu

# The direct path and `time` (checked path), mixed in one call.
fmu = instance('ok')
assert fmu.getFloat64([vr['y'], vr['time']]) == [1.0, 0.0], fmu.getFloat64([vr['y'], vr['time']])
fmu.setFloat64([vr['u']], [0.5])
event, terminate, early, last = fmu.doStep(0.0, 0.25)
assert (event, terminate, early, last) == (False, False, False, 0.25), (event, terminate, early, last)
# x' = 0.5 for 0.25 s from x = 1: 1.125, exact in binary floating point.
assert fmu.getFloat64([vr['time'], vr['y']]) == [0.25, 1.125], fmu.getFloat64([vr['time'], vr['y']])
assert fmu.getFloat64([vr['u'], vr['x0'], vr['fault_time']])[:2] == [0.5, 1.0]
fmu.terminate()
fmu.freeInstance()

def refused(call, expected):
    messages.clear()
    fmu = instance('bad')
    try:
        call(fmu)
    except FMICallException as e:
        assert e.status == 3, e.status
    else:
        raise AssertionError('no error for ' + expected)
    assert any(expected in m for m in messages), (expected, messages)
    fmu.freeInstance()

refused(lambda f: f.getFloat64([vr['fault']]),
        'fmi3GetFloat64: variable "fault" (vr %d) is of type Enumeration, not Float64' % vr['fault'])
refused(lambda f: f.getFloat64([vr['y'], 99]), 'value reference 99 does not exist')
refused(lambda f: f.getFloat64([vr['y']], nValues=2), 'nValues = 2 but 1 value references')
refused(lambda f: f.setFloat64([vr['time']], [1.0]),
        'variable "time" (vr %d) is the independent variable and cannot be set' % vr['time'])
refused(lambda f: f.setFloat64([vr['u'], vr['fault']], [1.0, 2.0]), 'is of type Enumeration, not Float64')
print('ok')
"#;

#[test]
fn fmi3_float64_calls_and_do_step_through_fmpy_give_exact_values_and_named_errors() {
    let fmu = paths::fmu3_dir().join("testing-faulty.fmu");
    assert!(fmu.exists(), "{} is missing: run `cargo xtask fmus`", fmu.display());
    let out = Command::new(paths::python()).args(["-c", SCRIPT]).arg(&fmu).output().expect("running python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
