//! `cargo xtask test`: the whole test suite, as CI runs it.

use crate::python::{install_wheel, sh, venv};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The gemseo-fmu wheel with OpenModelica-exported FMUs (third-party XML for the reader tests).
fn gemseo_wheel(python: &Path) -> Result<PathBuf> {
    let dir = crate::target_dir().join("thirdparty");
    let find = || -> Option<PathBuf> {
        std::fs::read_dir(&dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("gemseo_fmu-") && n.ends_with(".whl"))
        })
    };
    if let Some(p) = find() {
        return Ok(p);
    }
    sh(Command::new(python).args(["-m", "pip", "download", "--quiet", "--no-deps", "gemseo-fmu", "-d"]).arg(&dir))?;
    find().context("pip download gemseo-fmu produced no wheel")
}

/// Extracts the wheel's Linux FMUs to `target/thirdparty/gemseo/` (the vendor scenarios use them).
fn extract_gemseo_fmus(wheel: &Path) -> Result<()> {
    let dir = crate::target_dir().join("thirdparty/gemseo");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = std::fs::File::open(wheel).with_context(|| format!("opening {}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file).with_context(|| format!("reading {}", wheel.display()))?;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i)?;
        let name = entry.name().to_owned();
        let Some(fmu) = name.strip_prefix("gemseo_fmu/problems/fmu_files/linux/") else { continue };
        if fmu.is_empty() || fmu.contains('/') || !fmu.ends_with(".fmu") {
            continue;
        }
        let target = dir.join(fmu);
        let mut out = std::fs::File::create(&target).with_context(|| format!("creating {}", target.display()))?;
        std::io::copy(&mut entry, &mut out).with_context(|| format!("extracting {name}"))?;
    }
    Ok(())
}

/// The FMU call-sequence tests (fmu-harness/tests/c_api.rs, which drive the packaged .so files) under
/// valgrind memcheck: zero errors and no definite leaks.
fn valgrind(cargo: &str, root: &Path, fmu_dir: &Path, python: &Path) -> Result<()> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        bail!("valgrind is not installed (apt-get install valgrind; `cargo xtask test` installs it as root)");
    }
    let mut cmd = memcheck(cargo, root, "c_api", "definite")?;
    cmd.arg("--test-threads=1").env("FMU_DIR", fmu_dir).env("FMI_PYTHON", python);
    sh(&mut cmd).context("valgrind memcheck of the FMU call-sequence tests")?;
    // One FMU of every library loaded, instantiated, initialized, freed and unloaded twice: no
    // definite or indirect leak (issue 30 item 14; before, each unload leaked the description table).
    let mut cmd = memcheck(cargo, root, "unload", "definite,indirect")?;
    cmd.args(["--test-threads=1", "--nocapture"])
        .env("FMU_DIR", fmu_dir)
        // One FMU of each library (the code is the library's; ≈ 8 min for all 33 FMUs).
        .env(
            "UNLOAD_FMUS",
            "oscillator-fd-m1,hydraulics-lumped3,hydraulics-naya,multibody-crane,semirecursive-a,unified-naya,testing-faulty",
        )
        .env("UNLOAD_CYCLES", "1")
        .env("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0");
    sh(&mut cmd).context("valgrind memcheck of the FMU load/unload cycles")
}

/// `valgrind` memcheck of the integration test `test` (built here), failing on the leak `kinds`.
fn memcheck(cargo: &str, root: &Path, test: &str, kinds: &str) -> Result<Command> {
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["test", "--no-run", "-p", "fmu-harness", "--test", test])
        .output()
        .with_context(|| format!("building the {test} tests"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    let exe = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '(' || c == ')'))
        .find(|w| w.contains(&format!("deps/{test}-")))
        .with_context(|| format!("no {test} test executable in cargo's output"))?;
    let mut cmd = Command::new("valgrind");
    cmd.current_dir(root)
        .arg("--error-exitcode=99")
        .arg("--leak-check=full")
        .arg(format!("--errors-for-leak-kinds={kinds}"))
        .arg(format!("--show-leak-kinds={kinds}"))
        .arg("-q")
        .arg(root.join(exe));
    Ok(cmd)
}

/// The `cosim` Python package (python/): the wheel built by maturin (release), installed into
/// the venv, and its pytest suite, which compares against the release `cosim` binary.
fn python_package(cargo: &str, root: &Path, fmu_dir: &Path, python: &Path) -> Result<()> {
    install_wheel(cargo, root, python)?;
    sh(Command::new(python)
        .current_dir(root)
        .args(["-m", "pytest", "-q", "python/tests"])
        .env("COSIM_BIN", crate::target_dir().join("release/cosim"))
        .env("COSIM_ROOT", root)
        .env("FMU_DIR", fmu_dir))
}

pub fn run(args: &[String]) -> Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    // Every system package first (installed as root, else named in one line), before any build.
    crate::system_packages::ensure()?;
    if !quick {
        crate::system_packages::ensure_rust_components()?;
    }
    let python = venv()?;
    let wheel = gemseo_wheel(&python)?;
    extract_gemseo_fmus(&wheel)?;
    crate::package::fmus()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = crate::root();
    let fmu_dir = crate::target_dir().join("fmu");
    let mut test = Command::new(&cargo);
    test.current_dir(&root)
        .args(["test", "--workspace", "--no-fail-fast"])
        .env("FMI_PYTHON", &python)
        .env("GEMSEO_FMU_WHEEL", &wheel)
        .env("FMU_DIR", &fmu_dir);
    sh(&mut test)?;
    python_package(&cargo, &root, &fmu_dir, &python)?;
    let long = args.iter().any(|a| a == "--long-docs");
    crate::docs::run_blocks(&python, long, false, &[])?;
    if !quick {
        // docs/validation.md must be what the code generates (issue 51): recomputed, compared.
        let start = std::time::Instant::now();
        crate::validate::run(&["--check".to_owned()])?;
        eprintln!("validate --check: {:.0} s", start.elapsed().as_secs_f64());
        valgrind(&cargo, &root, &fmu_dir, &python)?;
        sh(Command::new(&cargo).current_dir(&root).args(["fmt", "--all", "--check"]))?;
        sh(Command::new(&cargo).current_dir(&root).args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))?;
    }
    Ok(())
}
