//! The system packages `cargo xtask test` needs beyond a Rust toolchain and `python3`: one list,
//! checked before anything is built. On a fresh machine as root (CI) the missing ones are
//! installed with apt-get; without the rights, the command stops at once and names them all in
//! one line (the `apt-get install` to run). `.ci/run` runs only the README's test command, so CI
//! installs exactly what a README user's run installs (`ci_runs_only_the_readme_command` below).

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// A Debian package, why the tests need it and how to tell it is there.
pub struct Package {
    /// The Debian package name.
    pub name: &'static str,
    /// What needs it.
    pub why: &'static str,
    /// Whether it is present.
    present: fn() -> bool,
}

fn file(path: &str) -> bool {
    Path::new(path).exists()
}

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}

/// Whether the dynamic linker's cache lists a library whose name starts with `prefix`.
fn library(prefix: &str) -> bool {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output())
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim_start().starts_with(prefix)))
}

/// Every system package the test suite needs (the one list: `.ci/run` has none of its own).
pub const PACKAGES: &[Package] = &[
    Package {
        name: "python3-venv",
        why: "the venv of FMPy, libcosimpy, ecospy and the cosim Python package",
        present: || runs("python3", &["-c", "import venv, ensurepip"]),
    },
    Package {
        name: "valgrind",
        why: "memcheck of the FMU C API (fmu-harness c_api, unload)",
        present: || runs("valgrind", &["--version"]),
    },
    Package {
        name: "libtbb12",
        why: "ecospy's libecosc.so (cosim-cli/tests/ssp_interop.rs)",
        present: || library("libtbb.so.12"),
    },
    Package {
        name: "fonts-dejavu-core",
        why: "text of the plots (demo, validation report, cosim plot)",
        present: || file("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    },
    Package {
        name: "chromium",
        why: "the dashboard's browser tests (cosim-cli/tests/live.rs)",
        present: || file("/usr/bin/chromium"),
    },
    Package {
        name: "chromium-driver",
        why: "selenium's driver of chromium (cosim-cli/tests/live.rs)",
        present: || file("/usr/bin/chromedriver"),
    },
    Package {
        name: "libicu72",
        why: "OMSimulator from ../shared/peers (interop tests)",
        present: || library("libicuuc.so.72"),
    },
];

/// The packages of [`PACKAGES`] that are missing.
pub fn missing() -> Vec<&'static Package> {
    PACKAGES.iter().filter(|p| !(p.present)()).collect()
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs the missing packages (as root with apt-get, or with `sudo -n` where that needs no
/// password); otherwise fails at once naming every missing package and the command to run.
pub fn ensure() -> Result<()> {
    let missing = missing();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.iter().map(|p| p.name).collect();
    for p in &missing {
        eprintln!("missing system package {}: {}", p.name, p.why);
    }
    let sudo: &[&str] = if is_root() {
        &[]
    } else if runs("sudo", &["-n", "true"]) {
        &["sudo", "-n"]
    } else {
        bail!(
            "missing system packages: {0}; install them with: sudo apt-get install --no-install-recommends {0}",
            names.join(" ")
        );
    };
    let apt = |args: &[&str]| -> Result<()> {
        let (program, rest) = match sudo.split_first() {
            Some((s, more)) => (*s, [more, &["apt-get"], args].concat()),
            None => ("apt-get", args.to_vec()),
        };
        eprintln!("+ {program} {}", rest.join(" "));
        let status = Command::new(program)
            .args(&rest)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .with_context(|| format!("starting {program}"))?;
        if !status.success() {
            bail!("{program} {} failed ({status})", rest.join(" "));
        }
        Ok(())
    };
    apt(&["update", "-qq"])?;
    apt(&[&["install", "-y", "-qq", "--no-install-recommends"][..], &names].concat())?;
    let still: Vec<&str> = self::missing().iter().map(|p| p.name).collect();
    if !still.is_empty() {
        bail!("apt-get installed {} but these are still missing: {}", names.join(" "), still.join(" "));
    }
    Ok(())
}

/// clippy and rustfmt, which the full run needs, added to the rustup toolchain where missing.
pub fn ensure_rust_components() -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if runs(&cargo, &["clippy", "--version"]) && runs(&cargo, &["fmt", "--version"]) {
        return Ok(());
    }
    eprintln!("+ rustup component add clippy rustfmt");
    let status = Command::new("rustup").args(["component", "add", "clippy", "rustfmt"]).status();
    match status {
        Ok(s) if s.success() => Ok(()),
        _ => bail!("clippy or rustfmt is missing and `rustup component add clippy rustfmt` failed: install them"),
    }
}

/// `cargo xtask packages`: prints the list and what is missing (`--install`: installs as `test` does).
pub fn run(args: &[String]) -> Result<()> {
    for p in PACKAGES {
        let state = if (p.present)() { "present" } else { "MISSING" };
        println!("{:<18} {state:<8} {}", p.name, p.why);
    }
    if args.iter().any(|a| a == "--install") {
        ensure()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    /// The README's test command: the `cargo xtask test` line of its "fresh machine" block.
    fn readme_test_command() -> String {
        let readme = std::fs::read_to_string(crate::root().join("README.md")).unwrap();
        readme
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .find(|l| l.starts_with("cargo xtask test"))
            .expect("README shows `cargo xtask test`")
            .to_owned()
    }

    /// `.ci/run` installs nothing of its own and runs the README's command: the package list is
    /// `PACKAGES`, used by that command, so a README user's run needs nothing CI has more.
    #[test]
    fn ci_runs_only_the_readme_command() {
        let ci = std::fs::read_to_string(crate::root().join(".ci/run")).unwrap();
        let commands: Vec<&str> = ci.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        for l in &commands {
            for installer in ["apt-get", "apt ", "dpkg", "pip ", "rustup", "npm "] {
                assert!(!l.contains(installer), ".ci/run installs something itself ({l:?}): add it to PACKAGES");
            }
        }
        let readme = readme_test_command();
        assert_eq!(commands.last().copied(), Some(readme.as_str()), ".ci/run must end with the README's command");
        assert_eq!(commands.iter().filter(|l| l.contains("cargo ")).count(), 1, "{commands:?}");
    }

    /// The README's sentence that lists the packages (between "checks the Debian packages" and
    /// "installs the missing ones") names exactly [`super::PACKAGES`]: a package added to the list
    /// is added to the README's text, one removed is removed there.
    #[test]
    fn the_readme_names_exactly_these_packages() {
        let readme = std::fs::read_to_string(crate::root().join("README.md")).unwrap().replace('\n', " ");
        let start = readme.find("checks the Debian packages").expect("README names the Debian packages");
        let end = start + readme[start..].find("installs the missing ones").expect("… and says it installs them");
        let mut named: Vec<&str> = readme[start..end]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'))
            .collect();
        let mut list: Vec<&str> = super::PACKAGES.iter().map(|p| p.name).collect();
        named.sort_unstable();
        list.sort_unstable();
        assert_eq!(named, list, "README.md's list of Debian packages vs xtask/src/system_packages.rs");
    }

    #[test]
    fn every_package_is_named_once_with_a_reason() {
        let mut names: Vec<&str> = super::PACKAGES.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::PACKAGES.len());
        assert!(super::PACKAGES.iter().all(|p| !p.why.is_empty()));
    }
}
