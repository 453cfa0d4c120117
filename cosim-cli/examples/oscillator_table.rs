//! Prints the double-oscillator error table of issue 4 (H × extrapolation order × scheme, both
//! couplings), the residual-energy slopes and the master's overhead per communication step per
//! instance, from `cosim` runs of the packaged FMUs:
//!
//! ```text
//! cargo xtask fmus && cargo run --release -p cosim-cli --example oscillator_table
//! ```

use master::system::{AlgorithmKind, Overrides, Parallel, Settings};
use std::path::{Path, PathBuf};

fn analytic(t: f64) -> [f64; 2] {
    let z = fmu_harness::oscillator::analytic(1, t);
    [z[0], z[1]]
}

fn run(scenario: &str, h: f64, order: usize, alg: AlgorithmKind) -> anyhow::Result<(f64, f64, f64, f64)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("oscillator-table-{}", std::process::id()));
    let settings =
        Settings { step: Some(h), algorithm: Some(alg), parallel: Some(Parallel::Off), ..Default::default() };
    let over = Overrides { settings, extrapolation: Some(order), ..Default::default() };
    let s = cosim_cli::run::run_file(&root.join("scenarios").join(scenario), &over, &out)?;
    anyhow::ensure!(s.status == master::observer::Status::Ok, "{}", s.message);
    let text = std::fs::read_to_string(out.join("results.csv"))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let i1 = header.iter().position(|c| *c == "m1.x").unwrap_or(1);
    let i2 = header.iter().position(|c| *c == "m2.x").unwrap_or(2);
    let mut err: f64 = 0.0;
    for l in lines {
        let v: Vec<f64> = l.split(',').filter_map(|x| x.parse().ok()).collect();
        let z = analytic(v[0]);
        err = err.max((v[i1] - z[0]).abs()).max((v[i2] - z[1]).abs());
    }
    let e_abs_per_step = s.bonds.first().map_or(0.0, |b| b.energy_abs) / s.steps as f64;
    let inside: f64 = s.instances.iter().map(|i| i.do_step_seconds).sum();
    let overhead = (s.wall_time_s - inside) / (s.steps as f64 * s.instances.len() as f64);
    let _ = std::fs::remove_dir_all(Path::new(&out));
    Ok((err, e_abs_per_step, overhead, s.wall_time_s))
}

fn slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = x.iter().zip(y).map(|(a, b)| (a.ln(), b.ln())).unzip();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum::<f64>() / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>()
}

fn main() -> anyhow::Result<()> {
    let hs = [4e-3, 2e-3, 1e-3];
    println!("Double oscillator, seed 001 A.1 case 1, 10 s: max |x - x_exact| over x1, x2 (m)\n");
    println!("| coupling | scheme | order | H = 4 ms | H = 2 ms | H = 1 ms | fitted order | Σ|δE|/step slope |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut overheads = Vec::new();
    for (scenario, coupling) in [("oscillator-fd.toml", "force-displ."), ("oscillator-dd.toml", "displ.-displ.")] {
        for (alg, name) in [(AlgorithmKind::Jacobi, "Jacobi"), (AlgorithmKind::GaussSeidel, "Gauss-Seidel")] {
            for order in 0..=2 {
                let mut errs = Vec::new();
                let mut des = Vec::new();
                for h in hs {
                    let (e, de, ov, _) = run(scenario, h, order, alg)?;
                    errs.push(e);
                    des.push(de);
                    overheads.push(ov);
                }
                let de_slope =
                    if des.iter().all(|d| *d > 0.0) { format!("{:.2}", slope(&hs, &des)) } else { "-".into() };
                println!(
                    "| {coupling} | {name} | {order} | {:.3e} | {:.3e} | {:.3e} | {:.2} | {de_slope} |",
                    errs[0],
                    errs[1],
                    errs[2],
                    slope(&hs, &errs)
                );
            }
        }
    }
    overheads.sort_by(f64::total_cmp);
    println!(
        "\nmaster time per communication step per instance (wall - time inside fmi2DoStep, incl. get/set and CSV): median {:.2} µs",
        overheads[overheads.len() / 2] * 1e6
    );
    Ok(())
}
