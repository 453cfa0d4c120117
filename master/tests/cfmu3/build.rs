//! The small C FMI 3.0 test FMU `cfmu3.c` (its description `modelDescription.xml`), built at test time with the
//! system's `cc` and packaged: shared by `fmi3_cfmu.rs` and `zero_alloc.rs`; likewise `statespace.c`
//! (`statespace.xml`: an FMU sized by a structural parameter) for `fmi3_structural.rs`.
#![allow(dead_code, reason = "each test file uses part of it")]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The description packaged with `cfmu3.c` (also read by `python/tests/test_fmi3.py`).
pub const XML: &str = include_str!("modelDescription.xml");

/// Builds `cfmu3.c` with `cflags` into `dir/<name>.fmu`.
pub fn build(dir: &Path, name: &str, cflags: &[&str]) -> PathBuf {
    build_with(dir, name, cflags, XML)
}

/// [`build`] with the description `xml`.
pub fn build_with(dir: &Path, name: &str, cflags: &[&str], xml: &str) -> PathBuf {
    build_source(dir, name, "cfmu3", cflags, xml)
}

/// The description packaged with `statespace.c` (x' = A x + B u of size n, a structural parameter).
pub const STATESPACE_XML: &str = include_str!("statespace.xml");

/// Builds `statespace.c` into `dir/<name>.fmu` with the description `xml`.
pub fn build_statespace(dir: &Path, name: &str, xml: &str) -> PathBuf {
    build_source(dir, name, "statespace", &[], xml)
}

/// Builds `<source>.c` (next to this file) with `cflags` into `dir/<name>.fmu`, its binary
/// `binaries/x86_64-linux/<source>.so` (the description's modelIdentifier is `source`), linked
/// with the C maths library.
pub fn build_source(dir: &Path, name: &str, source: &str, cflags: &[&str], xml: &str) -> PathBuf {
    let src = Path::new(file!()).parent().map_or_else(PathBuf::new, Path::to_path_buf).join(format!("{source}.c"));
    let src = if src.is_absolute() { src } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(src) };
    let so = dir.join(format!("{name}.so"));
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-w"])
        .args(cflags)
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .arg("-lm")
        .output()
        .expect("the system's `cc` is needed to build the test FMUs");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let fmu = dir.join(format!("{name}.fmu"));
    let mut w = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
    let o = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
    w.start_file("modelDescription.xml", o).unwrap();
    w.write_all(xml.as_bytes()).unwrap();
    w.start_file(format!("binaries/x86_64-linux/{source}.so"), o).unwrap();
    w.write_all(&std::fs::read(&so).unwrap()).unwrap();
    w.finish().unwrap();
    fmu
}
