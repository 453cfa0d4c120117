//! Where the test inputs are: packaged FMUs and third-party tools.

use std::path::PathBuf;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

/// `target/fmu` (or `$FMU_DIR`), where `cargo xtask fmus` writes the FMUs.
pub fn fmu_dir() -> PathBuf {
    std::env::var_os("FMU_DIR").map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target")).join("fmu")
    })
}

/// A packaged FMU by file stem. Panics with the command to run when it is missing: the
/// end-to-end tests run on packaged FMUs, never on stale or absent ones silently.
pub fn fmu(name: &str) -> PathBuf {
    let p = fmu_dir().join(format!("{name}.fmu"));
    assert!(
        p.exists(),
        "{} is missing: run `cargo xtask fmus` (or the whole suite with `cargo xtask test`)",
        p.display()
    );
    p
}

/// Every packaged FMU.
pub fn all_fmus() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fmu_dir())
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "fmu")).collect()
        })
        .unwrap_or_default();
    v.sort();
    assert!(!v.is_empty(), "no FMUs in {}: run `cargo xtask fmus`", fmu_dir().display());
    v
}

/// The Python with FMPy: `$FMI_PYTHON`, else `.venv/bin/python` of the workspace.
pub fn python() -> PathBuf {
    let p = std::env::var_os("FMI_PYTHON").map(PathBuf::from).unwrap_or_else(|| root().join(".venv/bin/python"));
    assert!(p.exists(), "{} is missing: `cargo xtask test` creates the venv with FMPy", p.display());
    p
}

/// `target/fmu3` (or `$FMU3_DIR`), where `cargo xtask fmus` writes the FMI 3.0 FMUs (the same
/// file names as in [`fmu_dir`]).
pub fn fmu3_dir() -> PathBuf {
    std::env::var_os("FMU3_DIR").map(PathBuf::from).unwrap_or_else(|| fmu_dir().with_file_name("fmu3"))
}
