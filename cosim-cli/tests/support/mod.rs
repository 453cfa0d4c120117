//! What the end-to-end tests of the `cosim` binary share: running it, and the library tests'
//! helpers (one source: `master/tests/support/mod.rs`).
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../master/tests/support/mod.rs"]
mod shared;
pub use shared::*;

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
