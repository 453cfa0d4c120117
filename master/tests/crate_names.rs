#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Crate, folder and lib names agree (issue 28 item 2; docs/architecture.md, Names): every
//! workspace member's folder is its package name, and its lib is the package name with `_`
//! (Cargo's default, so no `[lib] name`), except `python/`, whose lib is the module Python
//! imports (`cosim._cosim`).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn manifest(dir: &Path) -> toml::Table {
    let p = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.parse().unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_member_folder_is_its_package_and_its_lib_the_package_with_underscores() {
    let ws = manifest(&root());
    let members = ws["workspace"]["members"].as_array().unwrap();
    assert!(members.len() >= 15, "{members:?}");
    let mut wrong = Vec::new();
    for m in members {
        let dir = m.as_str().unwrap();
        let toml = manifest(&root().join(dir));
        let package = toml["package"]["name"].as_str().unwrap();
        let lib = toml.get("lib").and_then(|l| l.get("name")).and_then(|n| n.as_str());
        if dir == "python" {
            assert_eq!((package, lib), ("cosim-python", Some("_cosim")), "python/: the one documented exception");
            continue;
        }
        let folder = Path::new(dir).file_name().unwrap().to_str().unwrap();
        if folder != package {
            wrong.push(format!("{dir}/: package {package}"));
        }
        if let Some(lib) = lib.filter(|l| *l != package.replace('-', "_")) {
            wrong.push(format!("{dir}/: lib {lib} (package {package})"));
        }
    }
    assert!(wrong.is_empty(), "names that disagree:\n{}", wrong.join("\n"));
    // Paths in [workspace.dependencies] follow the folders.
    for (name, dep) in ws["workspace"]["dependencies"].as_table().unwrap() {
        if let Some(path) = dep.get("path").and_then(|p| p.as_str()) {
            assert_eq!(Path::new(path).file_name().unwrap().to_str().unwrap(), name, "[workspace.dependencies] {name}");
        }
    }
}
