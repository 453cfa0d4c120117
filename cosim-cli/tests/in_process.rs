#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! In-process instances (`fmu_harness::in_process`) against the packaged FMUs: the same system
//! file (the oscillator of seed 001 §A.1, the Publication III crane) run by `cosim run` (dlopen
//! of target/fmu/*.fmu) and with the models called in process gives the same results.csv and
//! bonds.csv byte for byte; a system whose FMU no model list
//! serves is refused, naming the instance and the file.

use fmu_harness::in_process;
use fmu_harness::paths;
use master::execution::file_observers;
use master::observer::Status;
use master::{Execution, SystemBuilder};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cosim-in-process-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// scenarios/NAME.toml on the packaged FMUs (target/fmu or $FMU_DIR), with `extra` appended to
/// `[simulation]`.
fn scenario(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(paths::root().join(format!("scenarios/{name}.toml"))).unwrap();
    let mut text = text.replace("[simulation]\n", &format!("[simulation]\n{extra}"));
    let mut fmus = 0;
    while let Some(i) = text.find("\"../target/fmu/") {
        let len = text[i..].find(".fmu\"").expect("an FMU path ends in .fmu") + 5;
        let stem = text[i + 15..i + len - 5].to_owned();
        text.replace_range(i..i + len, &format!("{:?}", paths::fmu(&stem)));
        fmus += 1;
    }
    assert!(fmus >= 2, "scenarios/{name}.toml names {fmus} FMUs under ../target/fmu");
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `system` in process into `out` as `cosim run` records it.
fn run_in_process(system: &Path, out: &Path) {
    let b = SystemBuilder::read(system).unwrap();
    let (instances, mds) =
        in_process::instances(&b, &[fmu_oscillator::FMUS, fmu_multibody::FMUS, fmu_hydraulics::FMUS]).unwrap();
    let sys = b.build(&mds).unwrap();
    let mut e = Execution::with_instances(sys, instances, &mds).unwrap();
    e.initialize().unwrap();
    let start = e.system().start();
    let values = e.recorded().unwrap().to_vec();
    for mut o in file_observers(e.system(), out).unwrap() {
        o.start(start, &values, e.bonds()).unwrap();
        e.observe(o);
    }
    e.run().unwrap();
    let summary = e.finish().unwrap();
    assert_eq!(summary.status, Status::Ok, "{summary:?}");
}

fn run_packaged(system: &Path, out: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(["run", system.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "cosim run {}: {}", system.display(), String::from_utf8_lossy(&o.stderr));
}

fn same_files(a: &Path, b: &Path) {
    for f in ["results.csv", "bonds.csv"] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x.len() > 1000, "{f}: only {} bytes", x.len());
        if x != y {
            let (x, y) = (String::from_utf8_lossy(&x), String::from_utf8_lossy(&y));
            let first = x.lines().zip(y.lines()).position(|(p, q)| p != q);
            panic!(
                "{f} differs (line {first:?}):\n packaged:   {:?}\n in process: {:?}",
                first.and_then(|i| x.lines().nth(i)),
                first.and_then(|i| y.lines().nth(i))
            );
        }
    }
}

#[test]
fn the_oscillator_in_process_gives_the_packaged_fmus_results_bit_for_bit() {
    // Jacobi with linear extrapolation (the file as it is), and three Jacobi passes per step,
    // which saves and restores both instances' FMU states at every step.
    for (case, extra) in [("jacobi", ""), ("iterative", "iterations = 3\n")] {
        let dir = scratch(case);
        let system = scenario(&dir, "oscillator-fd", extra);
        run_packaged(&system, &dir.join("packaged"));
        run_in_process(&system, &dir.join("in-process"));
        same_files(&dir.join("packaged"), &dir.join("in-process"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_crane_in_process_gives_the_packaged_fmus_results_bit_for_bit() {
    // The Publication III crane and its lumped-fluid circuit, force coupled, and with the
    // circuit integrating the cylinder motion itself (interface model, pressure coupling).
    for name in ["crane-pub3", "crane-pub3-im"] {
        let dir = scratch(name);
        let system = scenario(&dir, name, "");
        run_packaged(&system, &dir.join("packaged"));
        run_in_process(&system, &dir.join("in-process"));
        same_files(&dir.join("packaged"), &dir.join("in-process"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_model_no_list_serves_is_refused_naming_instance_and_file() {
    let dir = scratch("unknown");
    let system = dir.join("s.toml");
    std::fs::write(&system, "[simulation]\nstop = 1.0\nstep = 0.1\n\n[instances.lag]\nfmu = \"lag.fmu\"\n").unwrap();
    let b = SystemBuilder::read(&system).unwrap();
    let e = in_process::instances(&b, &[fmu_oscillator::FMUS]).err().expect("no model is named lag");
    let msg = e.to_string();
    for part in ["instances.lag.fmu", "lag.fmu", "no model named \"lag\"", "oscillator-fd-m1"] {
        assert!(msg.contains(part), "{part:?} not in: {msg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
