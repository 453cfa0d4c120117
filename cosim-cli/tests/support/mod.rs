//! What the end-to-end tests of the `cosim` binary share: running it, and the library tests'
//! helpers (one source: `master/tests/support/mod.rs`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../master/tests/support/mod.rs"]
mod shared;
pub use shared::*;

use std::process::{Command, Output};

/// Runs the `cosim` binary of this build with `args`.
pub fn cosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosim")).args(args).output().unwrap()
}
