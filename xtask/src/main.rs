//! Project tasks, run as `cargo xtask <task>`:
//!
//! - `fmus`: builds the release cdylibs and writes every FMU to `target/fmu/<name>.fmu`.
//! - `demo`: `fmus`, then runs the packaged oscillator FMUs as a co-simulation and compares with
//!   the analytical solution.
//! - `tune`: the Publication III configuration search on the cranes; writes docs/tune.md.
//! - `fuzz [CASES]`: the fuzz properties with many cases, in release builds.
//! - `docs [--long] [--bless] [FILE…]`: the doc-runner (xtask/src/docs.rs): runs the code blocks of
//!   README.md and docs/*.md and compares their output with the one shown.
//! - `packages [--install]`: the system packages `test` needs (system_packages.rs, the one list).
//! - `test`: everything CI runs: the system packages (installed as root, else named), third-party tools into `.venv` (FMPy), third-party FMUs
//!   (gemseo-fmu wheel), `fmus`, `cargo test --workspace`, clippy and rustfmt checks.

mod bench;
mod demo;
mod docs;
mod fuzz;
mod package;
mod provenance;
mod python;
mod system_packages;
mod test;
mod tune;
mod validate;

use anyhow::{bail, Result};
use std::path::PathBuf;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fmus") => package::fmus().map(|_| ()),
        Some("bench") => bench::run(&args[1..]),
        Some("demo") => demo::run(),
        Some("docs") => docs::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("test") => test::run(&args[1..]),
        Some("packages") => system_packages::run(&args[1..]),
        Some("tune") => tune::run(),
        Some("validate") => validate::run(&args[1..]),
        other => bail!(
            "unknown task {other:?}\nusage: cargo xtask fmus | demo | packages [--install] | docs [--long] [--bless] [FILE…] | test [--quick] [--long-docs] | bench [--precision-only] | validate [--quick | --check] [--only SECTION] | fuzz [CASES]\n  fmus  build every FMU into target/fmu/\n  demo  build the FMUs, co-simulate the Publication III crane (crane-pub3) and its unified reference; CSVs and plots in target/demo/\n  docs  the doc-runner: runs the sh/python/toml blocks of README.md and docs/*.md and compares their output with the text blocks shown (--long: also those marked long; --bless: rewrite the shown output)\n  packages  the Debian packages the tests need, present or missing (--install: apt-get them, as `test` does)\n  test  install the system packages (as root; else name them) and test tools, build the FMUs, run every test, the doc-runner (--long-docs: its long blocks too), validate --check, clippy and rustfmt\n  bench [--precision-only]  cosim bench against FMPy, libcosim and ecos, and the work-precision fronts of crane-pub3, crane2-pub3 and naya; writes docs/performance.md (and docs/img/precision-*.png) and the README table\n  validate run the seed papers' benchmarks against their references; writes docs/validation.md and docs/img/; --check: fail when docs/validation.md differs from the generated report (CI); --only SECTION runs the sections whose name contains SECTION into target/validation-only.md\n  fuzz  the fuzz properties (system files, FMU archives, modelDescription reader, FMU C API) with CASES (5000) cases each, release"
        ),
    }
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

/// The cargo target directory.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}
