#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 30 (robustness, wave 3): the SSP surface (bare file names, parsing speed, units,
//! export safety), non-finite settings, tune's failures, iterative coupling, the worker
//! protocol and misleading messages. Each test failed on the code before its fix.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::{cosim, scenario, tmp};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `cosim ARGS` in `dir`.
fn cosim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosim")).current_dir(dir).args(args).output().unwrap()
}

/// oscillator-fd exported as an SSP in a fresh folder; returns (folder, .ssp).
fn oscillator_ssp(name: &str) -> (PathBuf, PathBuf) {
    paths::fmu("oscillator-fd-m1");
    let dir = tmp(name);
    let toml = scenario("oscillator-fd.toml", &dir);
    let ssp = dir.join("oscillator-fd.ssp");
    let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, ssp)
}

/// The package's entries extracted into `dir/unpacked`.
fn unpack(ssp: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("unpacked");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(ssp).unwrap()).unwrap();
    zip.extract(&out).unwrap();
    out
}

#[test]
fn a_bare_ssd_file_name_runs_from_its_folder() {
    // Item 3: `cosim run SystemStructure.ssd` failed: "cannot make an empty path absolute".
    let (dir, ssp) = oscillator_ssp("bare");
    let unpacked = unpack(&ssp, &dir);
    let o = cosim_in(&unpacked, &["run", "SystemStructure.ssd", "--stop-time", "0.1", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(unpacked.join("out/results.csv")).unwrap().lines().count();
    assert_eq!(rows, 102);
}
