//! What the end-to-end tests of the `cosim` binary share: running it, and the library tests'
//! helpers (one source: `master/tests/support/mod.rs`).
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../master/tests/support/mod.rs"]
mod shared;
pub use shared::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `cosim` binary of this build as a command whose stop signals (SIGINT, SIGTERM, SIGHUP)
/// start at their default dispositions, whatever this test inherited: cosim keeps an inherited
/// ignored signal ignored (`nohup`; a background job of a non-interactive shell ignores SIGINT),
/// so a test that sends one must not depend on how the test itself was started.
pub fn cosim_stoppable() -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_cosim"));
    // SAFETY: sigaction only (async-signal-safe) in the forked child.
    unsafe {
        command.pre_exec(|| {
            for s in cosim_os::signal::STOPS {
                cosim_os::signal::set_default(s)?;
            }
            Ok(())
        })
    };
    command
}

/// Runs the `cosim` binary of this build with `args`.
pub fn cosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosim")).args(args).output().unwrap()
}

/// `cosim run INPUT --out DIR/out FLAGS`: the exit code, stderr and the output folder.
pub fn run_in(dir: &Path, input: &Path, flags: &[&str]) -> (Option<i32>, String, PathBuf) {
    let out = dir.join("out");
    let mut args = vec!["run", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
}

/// `out/results.csv` as its header and rows of numbers.
pub fn csv_numbers(out: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap().split(',').map(|h| h.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

/// The column `name` of such rows.
pub fn col(header: &[String], rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
    rows.iter().map(|r| r[i]).collect()
}

/// The interpreter with FMPy (`FMI_PYTHON`, else the workspace's `.venv`, which `cargo xtask test`
/// creates); a missing one fails the test, naming it.
pub fn python() -> PathBuf {
    let p = std::env::var_os("FMI_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| fmu_harness::paths::root().join(".venv/bin/python"));
    assert!(p.exists(), "{} is missing: `cargo xtask test` creates the venv with FMPy", p.display());
    p
}
