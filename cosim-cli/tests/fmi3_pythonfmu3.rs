#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! An FMI 3.0 FMU built at test time with pythonfmu3 (issue 43:
//! `python/tests/pythonfmu3/StateSpace2.py`, a two-state state-space model stepped exactly) run by
//! `cosim run` and by FMPy: the same numbers bit for bit. Its binary needs the Python library
//! loaded first (`needsExecutionTool`): without it cosim says how to give it; with it
//! (`LD_PRELOAD`, as a Python host has it) the FMU runs.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::tmp;

/// The interpreter with FMPy and pythonfmu3 (`FMI_PYTHON`, else the workspace's `.venv`).
fn python() -> PathBuf {
    let p = std::env::var_os("FMI_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| fmu_harness::paths::root().join(".venv/bin/python"));
    assert!(p.exists(), "{} is missing: `cargo xtask test` creates the venv with FMPy and pythonfmu3", p.display());
    p
}

fn py(args: &[&str]) -> String {
    let o = Command::new(python()).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{args:?}: {stdout}{}", String::from_utf8_lossy(&o.stderr));
    stdout
}

fn build(dir: &Path) -> PathBuf {
    let script = fmu_harness::paths::root().join("python/tests/pythonfmu3/StateSpace2.py");
    py(&["-m", "pythonfmu3", "build", "-f", script.to_str().unwrap(), "--dest", dir.to_str().unwrap()]);
    dir.join("StateSpace2.fmu")
}

#[test]
fn a_pythonfmu3_fmu_gives_fmpys_numbers_bit_for_bit() {
    let dir = tmp("pythonfmu3");
    let fmu = build(&dir);
    let out = dir.join("out");
    let args = ["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap(), "--stop-time", "1", "--step", "0.1"];
    // Without the Python library: refused with the way to give it.
    let o = Command::new(env!("CARGO_BIN_EXE_cosim")).args(args).env_remove("LD_PRELOAD").output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("needs the Python library") && stderr.contains("LD_PRELOAD"),
        "{stderr}"
    );
    // With it, and the interpreter's packages (pythonfmu3) on the path.
    let lib = py(&[
        "-c",
        "import os, sysconfig; print(os.path.join(sysconfig.get_config_var('LIBDIR'), sysconfig.get_config_var('LDLIBRARY')))",
    ]);
    let site = py(&["-c", "import pythonfmu3, os; print(os.path.dirname(os.path.dirname(pythonfmu3.__file__)))"]);
    let o = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(args)
        .env("LD_PRELOAD", lib.trim())
        .env("PYTHONPATH", site.trim())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let script = r#"
import sys
from fmpy import simulate_fmu
r = simulate_fmu(sys.argv[1], stop_time=1.0, output_interval=0.1, output=['x1', 'x2', 'y'])
for row in r:
    print('%r,%r,%r,%r' % tuple(float(x) for x in row))
"#;
    let theirs = py(&["-c", script, fmu.to_str().unwrap()]);
    let ours: Vec<Vec<f64>> =
        ours.lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    let theirs: Vec<Vec<f64>> = theirs.lines().map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!(ours.len(), 11);
    assert_eq!(ours, theirs, "cosim run and FMPy, bit for bit (the shortest round-trip texts are equal)");
    // The closed form: x_i(t) = (1 - e^{-i t}) / i.
    for r in &ours {
        for i in 1..=2 {
            let k = i as f64;
            assert!((r[i] - (1.0 - (-k * r[0]).exp()) / k).abs() < 1e-12, "{r:?}");
        }
    }
}
