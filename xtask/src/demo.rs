//! `cargo xtask demo`: packages the FMUs, then runs the Publication III crane (`crane-pub3`:
//! crane FMU + three-volume hydraulics FMU, work cycle J1) as a co-simulation and its unified
//! (monolithic) reference, writes CSVs and PNG plots to `target/demo/`, and prints a summary:
//! speed, residual energy of the cylinder bond, and the distance to the unified solution.

use anyhow::{bail, Context, Result};
use master::system::Overrides;
use std::path::{Path, PathBuf};
use validation::plot::{lines, Series};
use validation::runner::Csv;

/// Runs `scenarios/<name>.toml` on the packaged FMUs; returns the summary and the output dir.
fn run_scenario(name: &str, fmu_dir: &Path, out: &Path) -> Result<(master::observer::Summary, PathBuf)> {
    let src = crate::root().join("scenarios").join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&src).with_context(|| format!("reading {}", src.display()))?;
    let system = out.join(format!("{name}.toml"));
    std::fs::write(&system, text.replace("../target/fmu/", &format!("{}/", fmu_dir.display())))
        .with_context(|| format!("writing {}", system.display()))?;
    let dir = out.join(name);
    let summary = cosim_cli::run::run_file(&system, &Overrides::default(), &dir)?;
    if summary.status != master::observer::Status::Ok {
        bail!("{name}: {}", summary.message);
    }
    Ok((summary, dir))
}

fn column(csv: &Csv, name: &str) -> Result<Vec<(f64, f64)>> {
    let (t, c) = (csv.column("time")?, csv.column(name)?);
    Ok(csv.rows.iter().map(|r| (r[t], r[c])).collect())
}

fn max_diff(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x.1 - y.1).abs()).fold(0.0, f64::max)
}

pub fn run() -> Result<()> {
    crate::package::fmus()?;
    let fmu_dir = std::path::absolute(crate::target_dir().join("fmu"))?;
    let out = std::path::absolute(crate::target_dir().join("demo"))?;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    println!("\nPublication III crane, work cycle J1 (20 s): crane FMU + three-volume hydraulics FMU, Jacobi, H = 1 ms, order-1 extrapolation, hydraulics TR at 0.1 ms");
    let (co, co_dir) = run_scenario("crane-pub3", &fmu_dir, &out)?;
    let (un, un_dir) = run_scenario("crane-pub3-unified", &fmu_dir, &out)?;
    let (c, u) = (Csv::read(&co_dir.join("results.csv"))?, Csv::read(&un_dir.join("results.csv"))?);
    let bonds = Csv::read(&co_dir.join("bonds.csv"))?;
    let (s_c, s_u) = (column(&c, "mech.s")?, column(&u, "unified.s")?);
    let (p_c, p_u) = (column(&c, "hyd.p1")?, column(&u, "unified.p1")?);
    let png = |n: &str| out.join(format!("{n}.png"));
    lines(
        &png("crane-pub3-s"),
        "crane-pub3: cylinder length on J1",
        "t (s)",
        "s (m)",
        &[Series { label: "co-simulation", points: s_c.clone() }, Series { label: "unified", points: s_u.clone() }],
    )?;
    lines(
        &png("crane-pub3-pressures"),
        "crane-pub3: pressures",
        "t (s)",
        "p (Pa)",
        &[
            Series { label: "p1", points: p_c.clone() },
            Series { label: "p2", points: column(&c, "hyd.p2")? },
            Series { label: "p3", points: column(&c, "hyd.p3")? },
        ],
    )?;
    lines(
        &png("crane-pub3-residual"),
        "crane-pub3: residual energy of the cylinder bond",
        "t (s)",
        "E (J)",
        &[
            Series { label: "Σ δE", points: column(&bonds, "cylinder.E")? },
            Series { label: "Σ |δE|", points: column(&bonds, "cylinder.E_abs")? },
        ],
    )?;
    let diff: Vec<(f64, f64)> = s_c.iter().zip(&s_u).map(|(a, b)| (a.0, (a.1 - b.1) * 1e3)).collect();
    lines(
        &png("crane-pub3-diff"),
        "crane-pub3: co-simulation − unified",
        "t (s)",
        "Δs (mm)",
        &[Series { label: "s_cosim − s_unified", points: diff }],
    )?;
    let b = co.bonds.first().context("crane-pub3 has no bond")?;
    println!(
        "\n  co-simulation   {} steps in {:.3} s: {:.0}× faster than real time",
        co.steps,
        co.wall_time_s,
        co.time / co.wall_time_s
    );
    println!("  unified         {} steps in {:.3} s (h = 0.1 ms inside each step)", un.steps, un.wall_time_s);
    println!("  residual energy of the cylinder bond: Σ δE = {:.4} J, Σ |δE| = {:.4} J", b.energy, b.energy_abs);
    println!(
        "  co-simulation vs unified: max |Δs| = {:.4} mm, max |Δp1| = {:.3} bar",
        max_diff(&s_c, &s_u) * 1e3,
        max_diff(&p_c, &p_u) / 1e5
    );
    println!(
        "  stroke on J1: s from {:.4} m to {:.4} m",
        s_u.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
        s_u.iter().map(|p| p.1).fold(0.0, f64::max)
    );
    println!("\nResults: {}/{{crane-pub3,crane-pub3-unified}}/results.csv, bonds.csv, summary.json; plots: {}/crane-pub3-*.png", out.display(), out.display());
    println!("The validation report of every benchmark: cargo xtask validate → docs/validation.md");
    Ok(())
}
