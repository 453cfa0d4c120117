#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Our crane as Model Exchange FMUs (issue 52 item 4) through FMPy, a third-party importer:
//! `hydraulics-lumped3-me` and `multibody-crane-me` (FMI 2.0 in `target/fmu/`, 3.0 in
//! `target/fmu3/`) pass `fmpy validate` and are simulated by FMPy as Model Exchange (CVode):
//! the circuit with prescribed inputs against the Co-Simulation `hydraulics-lumped3` (the same
//! equations, trapezoidal rule at a fine internal step), the mechanism in minimal coordinates
//! against the Co-Simulation `multibody-crane` (index-3 augmented Lagrangian, the constrained
//! formulation of the same crane) under the same force input.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fmu_in(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(format!("{name}.fmu"));
    assert!(p.exists(), "{} is missing: run `cargo xtask fmus`", p.display());
    p
}

fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new(paths::python()).args(["-c", script]).args(args).output().expect("running python");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `name max_abs_difference range` lines of a script's output.
fn differences(text: &str) -> Vec<(String, f64, f64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[0] == "diff").then(|| (f[1].to_owned(), f[2].parse().unwrap(), f[3].parse().unwrap()))
        })
        .collect()
}

#[test]
fn fmpy_validate_reports_no_problems_for_the_me_fmus() {
    for dir in [paths::fmu_dir(), paths::fmu3_dir()] {
        for name in ["hydraulics-lumped3-me", "multibody-crane-me"] {
            let fmu = fmu_in(&dir, name);
            let text = python(
                "import sys; from fmpy import read_model_description as r; from fmpy.validation import validate_fmu
md = r(sys.argv[1], validate=False)
print(md.fmiVersion, md.modelExchange is not None, md.coSimulation is not None, len(md.derivatives))
print(validate_fmu(sys.argv[1]))",
                &[&fmu],
            );
            let mut lines = text.lines();
            let version = if dir == paths::fmu_dir() { "2.0" } else { "3.0" };
            assert_eq!(lines.next().unwrap(), format!("{version} True True 4"), "{}: {text}", fmu.display());
            assert_eq!(lines.next().unwrap(), "[]", "{}: {text}", fmu.display());
        }
    }
}

/// The circuit with prescribed s, ṡ (a ramp at 2 mm/s) and U_ref steps (+2 V at 0.05 s, −2 V at
/// 0.3 s): FMPy's ME simulation (CVode, rtol 1e-8) against FMPy's CS simulation of
/// `hydraulics-lumped3` (TR at h = 2.5 µs, communication step 0.1 ms), compared at the CS output
/// times. Measured (FMI 2.0 and 3.0 alike): p1 39 Pa, p2 23 Pa, p3 38 Pa on ranges of 6.7–7.4 MPa;
/// U 1.4e-7 V; F 0.2 N on 64 kN.
#[test]
fn fmpy_simulates_the_circuit_as_model_exchange_like_the_co_simulation_circuit() {
    let script = r#"
import sys, numpy as np
from fmpy import simulate_fmu
me_fmu, cs_fmu = sys.argv[1], sys.argv[2]
t = [0.0, 0.05, 0.05, 0.3, 0.3, 0.5]; u = [0.0, 0.0, 2.0, 2.0, -2.0, -2.0]
inp = np.array([(ti, 0.5 + 0.002 * ti, 0.002, ui) for ti, ui in zip(t, u)],
               dtype=[('time', float), ('s', float), ('s_dot', float), ('U_ref', float)])
out = ['p1', 'p2', 'p3', 'U', 'F']
me = simulate_fmu(me_fmu, fmi_type='ModelExchange', solver='CVode', relative_tolerance=1e-8, stop_time=0.5,
                  output_interval=1e-4, input=inp, output=out)
cs = simulate_fmu(cs_fmu, fmi_type='CoSimulation', stop_time=0.5, step_size=1e-4, output_interval=1e-4,
                  input=inp, output=out, start_values={'h': 2.5e-6})
# ME rows include the events at the input steps (two rows at one time): compare at the CS times.
keep = np.append(np.diff(me['time']) > 0, True)
for n in out:
    a = np.interp(cs['time'], me['time'][keep], me[n][keep])
    print('diff', n, np.max(np.abs(a - cs[n])), np.ptp(cs[n]))
"#;
    for dir in [paths::fmu_dir(), paths::fmu3_dir()] {
        let text = python(script, &[&fmu_in(&dir, "hydraulics-lumped3-me"), &fmu_in(&dir, "hydraulics-lumped3")]);
        let d = differences(&text);
        assert_eq!(d.len(), 5, "{text}");
        for (name, diff, range) in d {
            assert!(range > 1.0, "{name}: the circuit did not move (range {range})");
            assert!(diff <= 2e-5 * range, "{}: {name} differs by {diff:e} (range {range:e})", dir.display());
        }
    }
}

/// The crane in minimal coordinates under a force input (F_static, then +3 kN from 0.1 s, −3 kN
/// from 0.6 s; the boom swings through 0.8 m of cylinder length): FMPy's ME simulation (CVode,
/// rtol 1e-10) against FMPy's CS simulation of `multibody-crane` (index-3 augmented Lagrangian,
/// internal step 0.1 ms). Measured: |Δs| ≤ 8e-9 m, |Δṡ| ≤ 6.3e-6 m/s.
#[test]
fn fmpy_simulates_the_crane_as_model_exchange_like_the_constrained_crane() {
    let script = r#"
import sys, numpy as np
from fmpy import simulate_fmu
me_fmu, cs_fmu = sys.argv[1], sys.argv[2]
fs = 8829.0
t = [0.0, 0.1, 0.1, 0.6, 0.6, 1.0]; f = [fs, fs, fs + 3000, fs + 3000, fs - 3000, fs - 3000]
inp = np.array(list(zip(t, f)), dtype=[('time', float), ('F', float)])
me = simulate_fmu(me_fmu, fmi_type='ModelExchange', solver='CVode', relative_tolerance=1e-10,
                  stop_time=1.0, output_interval=1e-3, input=inp, output=['s', 's_dot'])
cs = simulate_fmu(cs_fmu, fmi_type='CoSimulation', stop_time=1.0, step_size=1e-3,
                  output_interval=1e-3, input=inp, output=['s', 's_dot'], start_values={'h': 1e-4})
keep = np.append(np.diff(me['time']) > 0, True)
for n in ('s', 's_dot'):
    a = np.interp(cs['time'], me['time'][keep], me[n][keep])
    print('diff', n, np.max(np.abs(a - cs[n])), np.ptp(cs[n]))
"#;
    for dir in [paths::fmu_dir(), paths::fmu3_dir()] {
        let text = python(script, &[&fmu_in(&dir, "multibody-crane-me"), &fmu_in(&dir, "multibody-crane")]);
        let d = differences(&text);
        assert_eq!(d.len(), 2, "{text}");
        assert!(d[0].2 > 0.5, "the boom did not swing: {text}");
        assert!(d[0].1 <= 1e-7, "{}: s differs by {:e} m", dir.display(), d[0].1);
        assert!(d[1].1 <= 1e-4, "{}: s_dot differs by {:e} m/s", dir.display(), d[1].1);
    }
}
