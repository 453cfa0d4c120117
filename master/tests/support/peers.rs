//! Peer tools that are on no package registry, provided for the tests as tarballs in
//! `../shared/peers/` beside the repository (CI has the folder; a user's fresh clone does not;
//! `$COSIM_PEERS` points elsewhere). A tarball is extracted at test time into
//! `target/peers/` (never committed), once per test process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder of the peer tools' tarballs: `$COSIM_PEERS`, else `<repository>/../shared/peers`.
pub fn dir() -> PathBuf {
    std::env::var_os("COSIM_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| fmu_harness::paths::root().join("../shared/peers"))
}

/// The rule for a test whose tool is missing (issue 51): `missing_tool::skip_or_fail`.
pub fn skip_or_fail(what: &str, install: &str) {
    missing_tool::skip_or_fail(what, install)
}

/// OMSimulator (OpenModelica's FMI/SSP simulator, `omsimulator-*.tar.gz` in [`dir`]) extracted
/// under `target/peers/`: the folder with `bin/OMSimulator` and `lib/x86_64-linux-gnu/`. `None`
/// when the tarball is absent or the binary does not start (it needs Debian's libicu72): the
/// caller returns (skipped, or failed under CI, by [`skip_or_fail`]).
pub fn omsimulator() -> Option<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, (String, String)>> = OnceLock::new();
    match DIR.get_or_init(extract_omsimulator) {
        Ok(p) => Some(p.clone()),
        Err((what, install)) => {
            skip_or_fail(what, install);
            None
        }
    }
}

fn extract_omsimulator() -> Result<PathBuf, (String, String)> {
    let peers = dir();
    let tarball = std::fs::read_dir(&peers).ok().and_then(|d| {
        d.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("omsimulator-") && n.ends_with(".tar.gz"))
        })
    });
    let Some(tarball) = tarball else {
        return Err((
            format!("OMSimulator (omsimulator-*.tar.gz in {})", peers.display()),
            "the peer tools come with CI's checkout (../shared/peers/, see its README.md), or set COSIM_PEERS".into(),
        ));
    };
    let stem = tarball.file_name().and_then(|n| n.to_str()).unwrap_or("omsimulator").trim_end_matches(".tar.gz");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| fmu_harness::paths::root().join("target"));
    let home = target.join("peers").join(stem);
    let folder = home.join("omsimulator");
    if !folder.join("bin/OMSimulator").exists() {
        // Into a fresh folder beside it, then renamed: a half-extracted tree is never used.
        let partial = target.join("peers").join(format!("{stem}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial).map_err(|e| (format!("{}: {e}", partial.display()), String::new()))?;
        let o = Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&partial).output();
        if !o.as_ref().is_ok_and(|o| o.status.success()) {
            return Err((
                format!("an extracted {} (tar xzf: {o:?})", tarball.display()),
                "tar and gzip (Debian: tar, gzip)".into(),
            ));
        }
        if std::fs::rename(&partial, &home).is_err() {
            // Another test process was first.
            let _ = std::fs::remove_dir_all(&partial);
        }
    }
    let bin = folder.join("bin/OMSimulator");
    let version = Command::new(&bin).arg("--version").output();
    match version {
        Ok(o) if o.status.success() => Ok(folder),
        o => Err((
            format!("a working {} ({o:?})", bin.display()),
            "OMSimulator needs Debian's libicu72 (apt-get install libicu72)".into(),
        )),
    }
}

/// Runs `bin/OMSimulator` of `oms` with `args` in `cwd` (it unpacks into its working directory).
pub fn run_omsimulator(oms: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::fs::create_dir_all(cwd).unwrap();
    Command::new(oms.join("bin/OMSimulator")).args(args).current_dir(cwd).output().unwrap()
}
