//! `cargo xtask bench`: runs `cosim bench` on the benchmark scenarios and writes
//! docs/performance.md, and the summary table into README.md (between the bench markers).

use anyhow::{bail, Context, Result};
use std::process::Command;

const SCENARIOS: &[&str] = &[
    "scenarios/bench-trivial.toml",
    "scenarios/bench-trivial-pair.toml",
    "scenarios/oscillator-fd.toml",
    "scenarios/oscillator-dd.toml",
    "scenarios/bench-heavy-pair.toml",
    "scenarios/bench-heavy-equal.toml",
    "scenarios/naya.toml",
    "scenarios/crane-pub3.toml",
];

pub fn run() -> Result<()> {
    crate::package::fmus()?;
    let root = crate::root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args(["build", "--release", "-p", "master", "--bin", "cosim"])
        .status()?;
    if !status.success() {
        bail!("building cosim failed");
    }
    let cosim = crate::target_dir().join("release/cosim");
    let out = Command::new(&cosim)
        .current_dir(&root)
        .arg("bench")
        .args(SCENARIOS)
        .args(["--repeat", "5"])
        .output()
        .with_context(|| format!("running {}", cosim.display()))?;
    if !out.status.success() {
        bail!("cosim bench failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = format!(
        "{report}\nRegenerate with `cargo xtask bench` (needs `cargo xtask test` once for the peers' venv; ecos needs `apt-get install libtbb12`).\n"
    );
    std::fs::write(root.join("docs/performance.md"), &doc).context("writing docs/performance.md")?;
    let summary = report.split("## Summary").nth(1).map(|s| format!("### Measured{s}")).unwrap_or_default();
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path)?;
    let (begin, end) = ("<!-- bench:begin -->", "<!-- bench:end -->");
    if let (Some(a), Some(b)) = (readme.find(begin), readme.find(end)) {
        let new = format!(
            "{}{begin}\n{summary}\nFull output: [docs/performance.md](docs/performance.md).\n{}",
            &readme[..a],
            &readme[b..]
        );
        std::fs::write(&readme_path, new)?;
    }
    print!("{report}");
    Ok(())
}
