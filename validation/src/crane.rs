//! Publication III cranes (and seed 001 A.4): co-simulation at H = 1 ms against the unified
//! reference, and Publication IV's qualitative findings on the double-actuator crane as measured
//! tables: force vs pressure coupling over H, the hydraulics' internal step h_h, and FWE vs TR
//! vs RK4 at fixed h_h.

use crate::naya::{bond_energy, max_diff, series};
use crate::plot::{lines, Series};
use crate::runner::{Csv, Runner};
use crate::{Row, Section, Verdict};
use anyhow::{bail, Result};
use master::system::{Overrides, Settings, SystemBuilder, Value};
use std::fmt::Write as _;
use std::path::Path;

struct Pair {
    name: &'static str,
    cosim: &'static str,
    unified: &'static str,
    /// (co-sim column, unified column) for s and p1 per cylinder.
    s: &'static [(&'static str, &'static str)],
    p1: &'static [(&'static str, &'static str)],
}

const PAIRS: [Pair; 3] = [
    Pair {
        name: "crane-pub3 (crane + three-volume circuit, J1)",
        cosim: "crane-pub3.toml",
        unified: "crane-pub3-unified.toml",
        s: &[("mech.s", "unified.s")],
        p1: &[("hyd.p1", "unified.p1")],
    },
    Pair {
        name: "crane2-pub3 (double-actuator crane + two circuits)",
        cosim: "crane2-pub3.toml",
        unified: "crane2-pub3-unified.toml",
        s: &[("mech.s1", "unified.s1"), ("mech.s2", "unified.s2")],
        p1: &[("hyd1.p1", "unified.p1_1"), ("hyd2.p1", "unified.p1_2")],
    },
    Pair {
        name: "crane-a4 (crane + two-chamber cylinder, seed 001 A.4)",
        cosim: "crane-a4.toml",
        unified: "crane-a4-unified.toml",
        s: &[("mech.s", "unified.s")],
        p1: &[("hyd.p1", "unified.p1")],
    },
];

fn ok(run: crate::runner::RunOutput, what: &str) -> Result<(Csv, Csv)> {
    if !run.ok {
        bail!("{what}: the run failed: {}", run.message);
    }
    Ok((run.results, run.bonds))
}

fn worst(csv: &Csv, reference: &Csv, cols: &[(&str, &str)]) -> Result<f64> {
    let mut e: f64 = 0.0;
    for (a, b) in cols {
        e = e.max(max_diff(&series(csv, a)?, &series(reference, b)?));
    }
    Ok(e)
}

fn e_abs(bonds: &Csv) -> f64 {
    bonds
        .rows
        .last()
        .map(|r| bonds.header.iter().enumerate().filter(|(_, h)| h.ends_with(".E_abs")).map(|(i, _)| r[i]).sum())
        .unwrap_or(f64::NAN)
}

/// The crane section. `quick` skips the Publication IV sweeps.
pub fn section(fmu_dir: &Path, img_dir: &Path, quick: bool) -> Result<Section> {
    let mut r = Runner::new(fmu_dir)?;
    let mut rows = Vec::new();
    let mut body = String::from(
        "Co-simulation (Jacobi, H = 1 ms, order-1 extrapolation, hydraulics TR at h_h = 0.1 ms, force coupling) against the \
         unified FMU of the same system (seed 004 §3 method, Δt = 0.1 ms inside 1 ms steps, α = 1e14), same valve signals.\n\n\
         | system | max \\|Δs\\| (m) | max \\|Δp1\\| (Pa) | Σ\\|δE\\| (J) |\n|---|---|---|---|\n",
    );
    let mut crane_plot = None;
    for (i, p) in PAIRS.iter().enumerate() {
        let (cosim, bonds) = ok(r.run(p.cosim, |_| {}, &Overrides::default())?, p.cosim)?;
        let (unified, _) = ok(r.run(p.unified, |_| {}, &Overrides::default())?, p.unified)?;
        let (ds, dp, e) = (worst(&cosim, &unified, p.s)?, worst(&cosim, &unified, p.p1)?, e_abs(&bonds));
        let _ = writeln!(body, "| {} | {ds:.3e} | {dp:.3e} | {e:.4} |", p.name);
        let id = p.cosim.trim_end_matches(".toml");
        rows.push(Row::new(
            &format!("{id}.ds"),
            &format!("{id}: co-sim vs unified, max |Δs|"),
            "",
            format!("{:.4} mm", ds * 1e3),
            "≤ 0.1 mm",
            Verdict::of(ds <= 1e-4),
        ));
        if i == 0 {
            crane_plot = Some((cosim, unified, bonds));
        }
    }
    std::fs::create_dir_all(img_dir)?;
    let mut plots = Vec::new();
    if let Some((cosim, unified, bonds)) = crane_plot {
        lines(
            &img_dir.join("crane-pub3-s.png"),
            "crane-pub3: cylinder length on J1",
            "t (s)",
            "s (m)",
            &[
                Series { label: "co-sim H = 1 ms", points: series(&cosim, "mech.s")? },
                Series { label: "unified", points: series(&unified, "unified.s")? },
            ],
        )?;
        lines(
            &img_dir.join("crane-pub3-pressures.png"),
            "crane-pub3: pressures on J1",
            "t (s)",
            "p (Pa)",
            &[
                Series { label: "p1 co-sim", points: series(&cosim, "hyd.p1")? },
                Series { label: "p2 co-sim", points: series(&cosim, "hyd.p2")? },
                Series { label: "p3 co-sim", points: series(&cosim, "hyd.p3")? },
                Series { label: "p1 unified", points: series(&unified, "unified.p1")? },
            ],
        )?;
        let b = bond_energy(&bonds);
        lines(
            &img_dir.join("crane-pub3-residual.png"),
            "crane-pub3: residual energy of the cylinder bond",
            "t (s)",
            "E (J)",
            &[Series { label: "Σ δE", points: b.signed }, Series { label: "Σ |δE|", points: b.abs }],
        )?;
        plots.extend(
            ["img/crane-pub3-s.png", "img/crane-pub3-pressures.png", "img/crane-pub3-residual.png"].map(Into::into),
        );
    }
    if !quick {
        publication4(&mut r, &mut body)?;
    }
    Ok(Section { title: "Publication III cranes: co-simulation vs unified".into(), body, rows, plots })
}

/// Publication IV's findings on crane2-pub3, measured.
fn publication4(r: &mut Runner, body: &mut String) -> Result<()> {
    let (unified, _) = ok(r.run("crane2-pub3-unified.toml", |_| {}, &Overrides::default())?, "crane2 unified")?;
    let s_cols: &[(&str, &str)] = &[("mech.s1", "unified.s1"), ("mech.s2", "unified.s2")];
    let p_cols: &[(&str, &str)] = &[("hyd1.p1", "unified.p1_1"), ("hyd2.p1", "unified.p1_2")];
    // Both hydraulic circuits get the same start values.
    let outcome = |r: &mut Runner, scenario: &str, starts: &[(&str, Value)], step: f64| -> Result<String> {
        let edit = |b: &mut SystemBuilder| {
            for name in ["hyd1", "hyd2"] {
                if let Some(i) = b.instance_mut(name) {
                    for (var, value) in starts {
                        i.start(var, value.clone());
                    }
                }
            }
        };
        let run = r.run(
            scenario,
            edit,
            &Overrides { settings: Settings { step: Some(step), ..Default::default() }, ..Default::default() },
        )?;
        Ok(if run.ok {
            let e = worst(&run.results, &unified, s_cols)?;
            let ep = worst(&run.results, &unified, p_cols)?;
            if e.is_finite() && e < 0.05 {
                format!("{:.3} mm, {:.2} bar", e * 1e3, ep / 1e5)
            } else {
                format!("unstable ({:.1} mm)", e * 1e3)
            }
        } else {
            // "inst: fmi2DoStep at t = T returned …": name the instance and the time.
            let inst = run.message.split(':').next().unwrap_or("?").to_owned();
            let at =
                run.message.split("at t = ").nth(1).and_then(|x| x.split_whitespace().next()).unwrap_or("?").to_owned();
            format!("diverges ({inst} fails at t = {at} s)")
        })
    };
    body.push_str(
        "\n### Publication IV on crane2-pub3 (measured)\n\n\
         **Force vs pressure coupling**: max |Δs| of both cylinders and max |Δp1| of both circuits against the unified reference for growing H \
         (Jacobi, order-1 extrapolation, TR at h_h = 0.1 ms; `crane2-pub3.toml`, `crane2-pub3-pressure.toml`).\n\n\
         | H (ms) | force coupling | pressure coupling |\n|---|---|---|\n",
    );
    for step in [1e-3, 2e-3, 4e-3, 5e-3, 8e-3, 1e-2] {
        let f = outcome(r, "crane2-pub3.toml", &[], step)?;
        let p = outcome(r, "crane2-pub3-pressure.toml", &[], step)?;
        let _ = writeln!(body, "| {} | {f} | {p} |", step * 1e3);
    }
    body.push_str("\n**Hydraulics internal step h_h** (force coupling, H = 1 ms, TR):\n\n| h_h (ms) | max \\|Δs\\|, max \\|Δp1\\| |\n|---|---|\n");
    for hh in [5e-5, 1e-4, 2e-4, 5e-4, 1e-3] {
        let o = outcome(r, "crane2-pub3.toml", &[("h", Value::Real(hh))], 1e-3)?;
        let _ = writeln!(body, "| {} | {o} |", hh * 1e3);
    }
    body.push_str("\n**Integrator at h_h = 0.1 ms** (force coupling, H = 1 ms):\n\n| integrator | max \\|Δs\\|, max \\|Δp1\\| |\n|---|---|\n");
    for integ in ["FWE", "TR", "RK4"] {
        let o = outcome(r, "crane2-pub3.toml", &[("integrator", Value::from(integ))], 1e-3)?;
        let _ = writeln!(body, "| {integ} | {o} |");
    }
    body.push_str(
        "\nThe single-actuator crane-pub3 runs at H = 2 ms and diverges at 5 ms; the double-actuator crane is more than 10 mm off already at 2 ms \
         — the order of Publication III's Tables 4–5 (single 2.6–5.0 ms, double 1.6–2.0 ms). \
         On this grid (order-1 extrapolation, the master's default exchange, which re-reads the force after the hydraulics' \
         inputs are set) pressure coupling does not reach a larger H than force coupling; the Publication IV section below \
         compares them like with like, in the papers' explicit Jacobi (where pressure coupling does reach a larger H) and in \
         ours, with held inputs and including the interface model. With the \
         hydraulics' cavitation law (the default) the circuits survive the suction and the mechanics' Newton iteration fails \
         first; with `strict_pressure = true` cylinder 2's circuit cavitates within 1 s and ends the run. The hydraulics' internal step hardly changes s: the coupling error at H = 1 ms dominates.\n",
    );
    body.push_str(
        "\nFWE at 0.1 ms is outside its stability bound for the p3 mode (h|λ| ≈ 11, SPEC §3.6): the FMU warns, and the run ends in a \
         wrong limit cycle (with `strict_pressure = true`: in a negative pressure) rather than silently.\n",
    );
    Ok(())
}
