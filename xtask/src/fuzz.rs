//! `cargo xtask fuzz [CASES]`: the fuzz properties with many cases, in release builds — the
//! inputs of `cosim run` (mutated system files, FMU archives and SSPs,
//! `cosim-cli/tests/fuzz_inputs.rs`), the modelDescription reader, the FMU C API, and the Python
//! package's argument parsing (`python/tests/test_fuzz_args.py`, against the wheel maturin builds). CI runs the same properties briefly (their
//! default case counts) as part of `cargo test`. `FUZZ_SEED` picks another deterministic run of
//! the input fuzzer.

use anyhow::{bail, Result};
use std::process::Command;

/// Default number of cases per property.
const CASES: u64 = 5000;

pub fn run(args: &[String]) -> Result<()> {
    let cases = match args.first() {
        Some(n) => n.parse::<u64>().map_err(|_| anyhow::anyhow!("cargo xtask fuzz [CASES]: {n:?} is not a number"))?,
        None => CASES,
    };
    crate::package::fmus()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for (package, test) in [
        ("cosim-cli", "fuzz_inputs"),
        ("model-description", "fuzz"),
        ("fmu-harness", "fuzz_c_api_oscillator"),
        ("fmu-harness", "fuzz_c_api_hydraulics"),
    ] {
        eprintln!("fuzz: {package} --test {test}, FUZZ_CASES={cases}");
        let status = Command::new(&cargo)
            .current_dir(crate::root())
            .env("FUZZ_CASES", cases.to_string())
            .args(["test", "--release", "-p", package, "--test", test, "--", "--nocapture"])
            .status()?;
        if !status.success() {
            bail!("fuzz: {package} --test {test} failed ({status}); failing inputs are in target/fuzz-failures/");
        }
    }
    // The Python arguments: the wheel built and installed into .venv as `cargo xtask test` does.
    let python = crate::python::venv()?;
    crate::python::install_wheel(&cargo, &crate::root(), &python)?;
    eprintln!("fuzz: python/tests/test_fuzz_args.py, FUZZ_CASES={cases}");
    let status = Command::new(&python)
        .current_dir(crate::root())
        .env("FUZZ_CASES", cases.to_string())
        .env("FMU_DIR", crate::target_dir().join("fmu"))
        .args(["-m", "pytest", "-q", "-s", "python/tests/test_fuzz_args.py"])
        .status()?;
    if !status.success() {
        bail!("fuzz: python/tests/test_fuzz_args.py failed ({status})");
    }
    Ok(())
}
