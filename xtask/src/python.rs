//! The Python side of the tasks: the venv with the packages the tests and the doc-runner need,
//! and the `cosim` wheel (with the release binary) installed into it. Shared by `test`, `docs` and
//! `fuzz` (one module below them, so that they do not import each other).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `cmd`, failing on a non-zero exit.
pub fn sh(cmd: &mut Command) -> Result<()> {
    eprintln!("+ {cmd:?}");
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(())
}

/// Python packages the tests need: FMPy (and lark, which `fmpy validate` needs for structured
/// names); libcosimpy and ecospy, which run our SSP exports (cosim-cli/tests/ssp_interop.rs; the
/// versions of master/peers/requirements.txt; ecospy's library needs libtbb12, in
/// `system_packages::PACKAGES`); maturin, numpy, pandas, dask.distributed and pytest for the `cosim` Python package; matplotlib
/// for the plots of docs/python.md, which the doc-runner runs; scipy, whose MATLAB reader checks
/// `cosim run --mat`; selenium drives the dashboard in headless Chromium
/// (cosim-cli/tests/live.rs; Debian's chromium and chromium-driver are in `system_packages::PACKAGES`);
/// pythonfmu3 builds the FMI 3.0 FMU of python/tests/test_fmi3_modes.py at test time.
const PYTHON_PACKAGES: &[(&str, &str)] = &[
    ("fmpy", "fmpy"),
    ("lark", "lark"),
    ("libcosimpy", "libcosimpy==0.0.6"),
    ("ecospy", "ecospy==0.7.2"),
    ("maturin", "maturin"),
    ("numpy", "numpy"),
    ("pandas", "pandas"),
    ("dask.distributed", "dask[distributed]"),
    ("pytest", "pytest"),
    ("matplotlib", "matplotlib"),
    ("scipy", "scipy"),
    ("selenium", "selenium"),
    ("pythonfmu3", "pythonfmu3"),
];

/// Python venv with [`PYTHON_PACKAGES`].
pub fn venv() -> Result<PathBuf> {
    let root = crate::root();
    let venv = root.join(".venv");
    let python = venv.join("bin/python");
    let has =
        |m: &str| Command::new(&python).args(["-c", &format!("import {m}")]).output().is_ok_and(|o| o.status.success());
    let missing: Vec<&str> = if python.exists() {
        PYTHON_PACKAGES.iter().filter(|(module, _)| !has(module)).map(|(_, package)| *package).collect()
    } else {
        sh(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        PYTHON_PACKAGES.iter().map(|(_, package)| *package).collect()
    };
    if !missing.is_empty() {
        sh(Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(&missing))?;
    }
    Ok(python)
}

/// The release `cosim` binary, and the wheel maturin builds, installed into the venv.
pub fn install_wheel(cargo: &str, root: &Path, python: &Path) -> Result<()> {
    sh(Command::new(cargo).current_dir(root).args(["build", "--release", "-p", "cosim-cli", "--bin", "cosim"]))?;
    let wheels = crate::target_dir().join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    sh(Command::new(python)
        .current_dir(root)
        .args(["-m", "maturin", "build", "--release", "--quiet", "-m", "python/Cargo.toml", "--interpreter"])
        .arg(python)
        .arg("--out")
        .arg(&wheels))?;
    let wheel = std::fs::read_dir(&wheels)
        .with_context(|| format!("reading {}", wheels.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("maturin built no wheel")?;
    sh(Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--force-reinstall", "--no-deps"])
        .arg(&wheel))
}
