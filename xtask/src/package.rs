//! `cargo xtask fmus`: release cdylibs → `target/fmu/<name>.fmu` (FMI 2.0) and
//! `target/fmu3/<name>.fmu` (FMI 3.0: the same binary, which exports both APIs, under
//! `binaries/x86_64-linux/`, and the 3.0 `modelDescription.xml` of the same variable table).

use anyhow::{bail, Context, Result};
use fmu_export::Fmu;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An FMU cdylib package (`fmus/<package>/`; its lib, and so `lib<package with _>.so`, is named after
/// it) and the FMUs it serves (its physics crate's list).
struct Library {
    package: &'static str,
    fmus: &'static [&'static dyn Fmu],
}

fn libraries() -> Vec<Library> {
    vec![
        Library { package: "oscillator-fmus", fmus: fmu_oscillator::FMUS },
        Library { package: "hydraulics-fmus", fmus: fmu_hydraulics::FMUS },
        Library { package: "testing-fmus", fmus: fmu_testing::FMUS },
        Library { package: "multibody-fmus", fmus: fmu_multibody::FMUS },
        Library { package: "unified-fmus", fmus: fmu_unified::FMUS },
        Library { package: "semirecursive-fmus", fmus: fmu_semirecursive::FMUS },
    ]
}

/// Builds every FMU cdylib in one cargo invocation and packages the FMUs; returns their paths.
pub fn fmus() -> Result<Vec<PathBuf>> {
    let out_dir = crate::target_dir().join("fmu");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let out_dir3 = crate::target_dir().join("fmu3");
    std::fs::create_dir_all(&out_dir3).with_context(|| format!("creating {}", out_dir3.display()))?;
    let libs = libraries();
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(crate::root()).args(["build", "--release", "--lib"]);
    for l in &libs {
        cmd.args(["-p", l.package]);
    }
    eprintln!("building release libraries: {cmd:?}");
    let status = cmd.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release failed ({status})");
    }
    let mut written = Vec::new();
    for l in &libs {
        let so = crate::target_dir().join("release").join(format!("lib{}.so", l.package.replace('-', "_")));
        let binary = std::fs::read(&so).with_context(|| format!("reading {}", so.display()))?;
        for fmu in l.fmus {
            let path = out_dir.join(format!("{}.fmu", fmu.info().fmu_name));
            let d = fmu.description().map_err(|e| anyhow::anyhow!("{e}"))?;
            write_fmu(*fmu, &d.xml, "linux64", &binary, &path)?;
            eprintln!("wrote {}", path.display());
            written.push(path);
            let path3 = out_dir3.join(format!("{}.fmu", fmu.info().fmu_name));
            let xml3 = fmu_export::fmi3::description3(*fmu).map_err(|e| anyhow::anyhow!("{e}"))?;
            write_fmu(*fmu, &xml3, "x86_64-linux", &binary, &path3)?;
            eprintln!("wrote {}", path3.display());
        }
    }
    Ok(written)
}

fn write_fmu(fmu: &dyn Fmu, xml: &str, platform: &str, binary: &[u8], path: &Path) -> Result<()> {
    let info = fmu.info();
    let doc = fmu.documentation().map_err(|e| anyhow::anyhow!("{e}"))?;
    // Write to a temporary file and rename, so a failed build never leaves a broken FMU.
    let tmp = path.with_extension("fmu.partial");
    let file = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let entries: [(String, &[u8]); 3] = [
        ("modelDescription.xml".into(), xml.as_bytes()),
        (format!("binaries/{platform}/{}.so", info.model_identifier), binary),
        ("documentation/index.html".into(), doc.as_bytes()),
    ];
    for (name, bytes) in entries {
        let opts = if name.ends_with(".so") { opts.unix_permissions(0o755) } else { opts };
        zip.start_file(name.as_str(), opts).with_context(|| format!("{}: adding {name}", path.display()))?;
        zip.write_all(bytes).with_context(|| format!("{}: writing {name}", path.display()))?;
    }
    zip.finish().with_context(|| format!("finishing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}
