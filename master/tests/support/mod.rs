//! What the tests share: a fresh directory, a committed scenario on the FMUs under test, the A1
//! crane (`cosim-cli/tests/support/mod.rs` adds running the `cosim` binary).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod a1;
pub mod peers;

use std::path::PathBuf;

/// A fresh directory per call (tests run in parallel threads of one process).
pub fn tmp(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("cosim-test-{}-{name}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A copy of a committed scenario in `dir` whose FMU paths point at the FMUs under test (ours,
/// and the third-party FMUs `cargo xtask test` extracts into `target/thirdparty`).
pub fn scenario(name: &str, dir: &std::path::Path) -> PathBuf {
    use fmu_harness::paths;
    let text = std::fs::read_to_string(paths::root().join("scenarios").join(name)).unwrap();
    let thirdparty = paths::root().join("target/thirdparty");
    let text = text.replace("../target/thirdparty", &thirdparty.display().to_string());
    let text = text.replace("../target/fmu", &paths::fmu_dir().display().to_string());
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}
