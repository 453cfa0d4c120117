//! Publication II (seed 000; DIGEST §1.3, §2.2, §4.6; SPEC §3.7): Model A′ simulated
//! monolithically by the semi-recursive penalty formulation with the lumped-fluid p3 (LF) and the
//! singular-perturbation p3 (SP, eqs. 33–35), in process on the same code as the
//! `semirecursive-a` FMU, whose parameters p3_model, gamma_plus, gamma_minus, V_h3 select the
//! same runs (one row runs the packaged FMU through scenario fourbar-pub2).
//!
//! Rows: convergence of LF and SP over Pub II Table 3's steps, iterations beside Table 3, SP at
//! 8 ms against LF at 2 ms (s, p1, energy balance; Figs. 4, 5, 8), and the flow corrections γ±
//! against γ = 1. The wall-time ratio SP(8 ms)/LF(2 ms) is measured by criterion
//! (`cargo bench -p fmu-semirecursive --bench pub2`, docs/performance.md); this report has no
//! timing columns, it gives the deterministic Newton work beside it.

use crate::naya::series;
use crate::plot::{lines, Series};
use crate::runner::Runner;
use crate::{PapersMethod, Row, Section, Verdict};
use anyhow::Result;
use fmu_hydraulics::sp::Gamma;
use fmu_semirecursive::circuit::P3Model;
use fmu_semirecursive::models::Model;
use fmu_semirecursive::penalty::{Penalty, Settings, Tangent, DAMP_AFTER};
use fmu_semirecursive::pub2::{compare, model_a_prime, switch_times, Comparison, Trace, GAMMA};
use master::system::Overrides;
use std::fmt::Write as _;
use std::path::Path;

/// Average and maximum Newton iterations per step.
type Iterations = (f64, usize);

/// Pub II Table 3: Δt (ms), LF avg/max ("fail" = None), SP avg/max.
const TABLE3: [(f64, Option<Iterations>, Iterations); 6] = [
    (0.5, Some((1.76, 4)), (1.62, 4)),
    (1.0, Some((2.26, 4)), (1.76, 4)),
    (2.0, Some((2.52, 4)), (1.81, 3)),
    (3.0, None, (1.83, 4)),
    (5.0, None, (1.85, 3)),
    (8.0, None, (1.90, 4)),
];

/// Seconds after each valve switch excluded from the p1 comparison (issue 16).
const SETTLE: f64 = 0.3;

/// The three circuits compared.
struct Models {
    lf: Model,
    sp_paper: Model,
    sp_one: Model,
}

fn models() -> Result<Models> {
    let m = |p3| model_a_prime(p3).map_err(anyhow::Error::msg);
    Ok(Models { lf: m(P3Model::Lf)?, sp_paper: m(P3Model::Sp(GAMMA))?, sp_one: m(P3Model::Sp(Gamma::default()))? })
}

/// The paper's method: plain Newton with the numerical tangent of eq. 45 (the analytic one gives
/// the same iterates, tests/pub2.rs), α = 1e11, 1e-7 rad, 1e2 Pa, cap 100 iterations.
fn run(m: &Model, dt_ms: f64) -> Trace {
    let set = Settings::paper(m, dt_ms * 1e-3, Tangent::Numerical);
    Trace::simulate_with(&Penalty::new(m, set).plain_newton(), m.duration)
}

/// As [`run`] with our safeguard: the update halved after [`DAMP_AFTER`] iterations.
fn run_damped(m: &Model, dt_ms: f64) -> Trace {
    Trace::simulate(m, Tangent::Numerical, dt_ms * 1e-3, m.duration)
}

fn it_cell(t: &Trace) -> String {
    match &t.failure {
        None => {
            let (a, m) = t.iterations();
            format!("{a:.2} / {m}")
        }
        Some(_) => format!("fail at t = {:.3} s", t.points.last().map_or(0.0, |p| p.t) + t.dt),
    }
}

fn pct(c: &Comparison) -> f64 {
    100.0 * c.dp1 / c.p1_range
}

/// Largest |Q31 − Q31_ref| (m³/s) outside the settle windows, and the largest |Q31_ref|.
fn q31_error(run: &Trace, reference: &Trace, switches: &[f64]) -> (f64, f64) {
    let mut e: f64 = 0.0;
    for p in &run.points {
        if !switches.iter().any(|&t0| p.t >= t0 - 1e-12 && p.t < t0 + SETTLE) {
            e = e.max((p.q31 - reference.at(p.t, |q| q.q31)).abs());
        }
    }
    (e, reference.points.iter().fold(0.0, |a, p| a.max(p.q31.abs())))
}

fn total_iterations(t: &Trace) -> usize {
    t.points.iter().map(|p| p.iterations).sum()
}

/// The Publication II section. `_quick` is accepted for the builder signature: the whole section
/// takes a few seconds.
pub fn section(fmu_dir: &Path, img_dir: &Path, _quick: bool) -> Result<Section> {
    let ms = models()?;
    let mut rows = Vec::new();
    let mut body = String::from(
        "Model A′ (Pub II Table 1: Model A with V_h3 = 7.85e-7 m³; γ+ = 1.16, γ− = 1.05), monolithic semi-recursive \
         penalty formulation (trapezoidal rule, plain Newton with the forward-difference tangent of eq. 45, α = 1e11, \
         tolerances 1e-7 rad and 1e2 Pa, cap 100 iterations), 7 s of the eq. 40 work cycle from static equilibrium. LF: Newton on \
         [z; p1; p2; p3]; SP: on [z; p1; p2], p3 the quasi-steady state of eqs. 33–34 (in the 2 bar laminar band the exact \
         root of Q_V3 = Q31, `fmu_hydraulics::sp`), Q31 = γ± Q̄31 (eq. 35). SP is run with the paper's γ± and with γ = 1 \
         (SPEC §3.7: the quasi-steady state is then exact). Beside the paper's plain Newton, LF with our safeguard (the \
         update halved after 25 iterations, as the FMU runs it). Iterations per step, average / maximum:\n\n\
         | Δt (ms) | LF paper | LF ours | LF ours, halved after 25 | SP paper | SP ours, Pub II γ± | SP ours, γ = 1 | energy peak LF (halved) / SP γ± / SP γ=1 (J) |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mut lf_runs = Vec::new();
    let mut lf_damped = Vec::new();
    let mut sp_runs = Vec::new();
    for (dt, lf_paper, (sp_avg, sp_max)) in TABLE3 {
        let lf = run(&ms.lf, dt);
        let lfd = run_damped(&ms.lf, dt);
        let spp = run(&ms.sp_paper, dt);
        let sp1 = run(&ms.sp_one, dt);
        let lf_cell = lf_paper.map_or("fail".to_string(), |(a, m)| format!("{a} / {m}"));
        let _ = writeln!(
            body,
            "| {dt} | {lf_cell} | {} | {} | {sp_avg} / {sp_max} | {} | {} | {:.2} / {:.2} / {:.2} |",
            it_cell(&lf),
            it_cell(&lfd),
            it_cell(&spp),
            it_cell(&sp1),
            lfd.energy_peak(),
            spp.energy_peak(),
            sp1.energy_peak()
        );
        lf_runs.push((dt, lf));
        lf_damped.push((dt, lfd));
        sp_runs.push((dt, spp, sp1));
    }
    let lf_at = |dt: f64| lf_runs.iter().find(|(d, _)| *d == dt).map(|(_, t)| t);
    let lfd_at = |dt: f64| lf_damped.iter().find(|(d, _)| *d == dt).map(|(_, t)| t);

    // LF convergence.
    let small: Vec<&(f64, Trace)> = lf_runs.iter().filter(|(d, _)| *d <= 2.0).collect();
    let ok_small = small.iter().all(|(_, t)| t.converged());
    rows.push(Row::new(
        "pub2.lf.converges",
        "LF converges at Δt = 0.5, 1, 2 ms",
        "converges (Table 3)",
        small.iter().map(|(d, t)| format!("{d} ms: {}", it_cell(t))).collect::<Vec<_>>().join("; "),
        "all converge",
        Verdict::of(ok_small),
    ));
    let large: Vec<&(f64, Trace)> = lf_runs.iter().filter(|(d, _)| *d > 2.0).collect();
    let all_fail = large.iter().all(|(_, t)| !t.converged());
    let ours = large.iter().map(|(d, t)| format!("{d} ms: {}", it_cell(t))).collect::<Vec<_>>().join("; ");
    rows.push(Row::against_paper(
        "pub2.lf.fails",
        "LF fails to converge within 100 iterations at Δt = 3, 5, 8 ms",
        "fail (Table 3)",
        if all_fail {
            ours
        } else {
            format!(
                "{ours} (avg / max iterations): the 8 ms failure is reproduced, where the valve closes and the piston \
                 stands on the fluid; at 3 and 5 ms Newton converges in a few iterations (the trapezoidal rule is A-stable \
                 on the stiff p3 mode). Halving the update after {DAMP_AFTER} iterations makes 8 ms converge too"
            )
        },
        "all fail",
        all_fail,
        PapersMethod {
            name: "LF with the paper's plain Newton (pub2.rs `run`), beside ours halved after 25 iterations",
            meets: all_fail,
        },
    ));

    // SP convergence and iterations.
    let sp_ok = sp_runs.iter().all(|(_, a, b)| a.converged() && b.converged());
    rows.push(Row::new(
        "pub2.sp.converges",
        "SP (Pub II γ± and γ = 1) converges at Δt = 0.5, 1, 2, 3, 5, 8 ms",
        "converges up to 8 ms",
        sp_runs
            .iter()
            .map(|(d, a, b)| {
                format!(
                    "{d} ms: {} / {}",
                    if a.converged() { "ok" } else { "fail" },
                    if b.converged() { "ok" } else { "fail" }
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        "all converge",
        Verdict::of(sp_ok),
    ));
    let avgs: Vec<(f64, f64)> = sp_runs.iter().map(|(d, a, _)| (*d, a.iterations().0)).collect();
    let avg_ok =
        sp_runs.iter().zip(TABLE3).all(|((_, a, b), (_, _, (pa, _)))| a.iterations().0 <= pa && b.iterations().0 <= pa);
    let (lo, hi) = avgs.iter().fold((f64::INFINITY, 0.0f64), |(l, h), (_, a)| (l.min(*a), h.max(*a)));
    rows.push(Row::new(
        "pub2.sp.iterations_avg",
        "SP average Newton iterations per step (Pub II γ±), Δt = 0.5…8 ms",
        "1.62–1.90",
        format!("{lo:.2}–{hi:.2}"),
        "≤ Table 3 at each Δt (both γ)",
        Verdict::of(avg_ok),
    ));
    let maxes: Vec<String> =
        sp_runs.iter().map(|(d, a, b)| format!("{d} ms: {} / {}", a.iterations().1, b.iterations().1)).collect();
    let over: usize = sp_runs.iter().map(|(_, a, _)| a.points.iter().filter(|p| p.iterations > 4).count()).sum();
    rows.push(Row::info(
        "pub2.sp.iterations_max",
        "SP maximum Newton iterations of a step (Pub II γ± / γ = 1), beside Table 3",
        "≤ 4",
        format!("{} ({over} step(s) of the γ± runs need 5)", maxes.join("; ")),
    ));

    // SP at 8 ms against LF at 2 ms (Figs. 4, 5, 8).
    let Some(lf2) = lf_at(2.0) else { anyhow::bail!("no LF run at 2 ms") };
    let Some(lf05) = lf_at(0.5) else { anyhow::bail!("no LF run at 0.5 ms") };
    let switches = switch_times(&ms.lf);
    let Some((_, sp8_paper, sp8_one)) = sp_runs.iter().find(|(d, _, _)| *d == 8.0) else {
        anyhow::bail!("no SP run at 8 ms")
    };
    let Some((_, sp2_paper, sp2_one)) = sp_runs.iter().find(|(d, _, _)| *d == 2.0) else {
        anyhow::bail!("no SP run at 2 ms")
    };
    let c_one = compare(sp8_one, lf2, &switches, SETTLE);
    let c_paper = compare(sp8_paper, lf2, &switches, SETTLE);
    rows.push(Row::new(
        "pub2.s_8ms",
        "SP (γ = 1) at 8 ms vs LF at 2 ms: max |Δs| over 7 s",
        "practically identical (Fig. 4)",
        format!("{:.3} mm", c_one.ds * 1e3),
        "≤ 1 mm",
        Verdict::of(c_one.ds <= 1e-3),
    ));
    let gamma_pm = "SP with Pub II's γ± (eq. 35, `fmu_semirecursive::pub2::GAMMA`), beside ours with γ = 1";
    rows.push(Row::against_paper(
        "pub2.s_8ms_gamma",
        "SP (Pub II γ±) at 8 ms vs LF at 2 ms: max |Δs| over 7 s",
        "practically identical (Fig. 4)",
        format!(
            "{:.2} mm: γ± add {:.1} % flow into V1 while the valve is open, the piston runs ahead of LF (with γ = 1: {:.3} mm)",
            c_paper.ds * 1e3,
            (GAMMA.plus - 1.0) * 100.0,
            c_one.ds * 1e3
        ),
        "≤ 1 mm",
        c_paper.ds <= 1e-3,
        PapersMethod { name: gamma_pm, meets: c_paper.ds <= 1e-3 },
    ));
    rows.push(Row::new(
        "pub2.p1_8ms",
        "SP (γ = 1) at 8 ms vs LF at 2 ms: max |Δp1| outside the 0.3 s after each valve switch, % of the p1 range",
        "steady state the same, differences in transients (Fig. 5)",
        format!("{:.2} % ({:.1} kPa of {:.2} MPa)", pct(&c_one), c_one.dp1 / 1e3, c_one.p1_range / 1e6),
        "≤ 2 %",
        Verdict::of(c_one.dp1 <= 0.02 * c_one.p1_range),
    ));
    rows.push(Row::against_paper(
        "pub2.p1_8ms_gamma",
        "SP (Pub II γ±) at 8 ms vs LF at 2 ms: max |Δp1| outside the 0.3 s after each valve switch, % of the p1 range",
        "steady state the same (Fig. 5)",
        format!("{:.2} % ({:.1} kPa)", pct(&c_paper), c_paper.dp1 / 1e3),
        "≤ 2 %",
        c_paper.dp1 <= 0.02 * c_paper.p1_range,
        PapersMethod { name: gamma_pm, meets: c_paper.dp1 <= 0.02 * c_paper.p1_range },
    ));
    let (e_paper, e_one) = (sp8_paper.energy_peak(), sp8_one.energy_peak());
    rows.push(Row::new(
        "pub2.energy_8ms",
        "SP at 8 ms: peak |E_kin + ΔE_pot − W_act| (Pub II γ± / γ = 1), of W_act",
        "≈ 8.1 J of ≈ 1400 J (Fig. 8)",
        format!("{e_paper:.2} J / {e_one:.2} J of {:.0} J / {:.0} J", sp8_paper.max_work(), sp8_one.max_work()),
        "≤ 10 J",
        Verdict::of(e_paper <= 10.0 && e_one <= 10.0),
    ));

    // γ± against γ = 1, at the same step as LF (2 ms: the model difference alone) and at 8 ms.
    let c2_one = compare(sp2_one, lf2, &switches, SETTLE);
    let c2_paper = compare(sp2_paper, lf2, &switches, SETTLE);
    let (q_one, q_max) = q31_error(sp2_one, lf2, &switches);
    let (q_paper, _) = q31_error(sp2_paper, lf2, &switches);
    let biased_without = c2_one.dp1 > c2_paper.dp1;
    rows.push(Row::against_paper(
        "pub2.gamma",
        "p1 error of SP against LF without γ± (γ = 1) and with Pub II's γ± (2 ms / 8 ms; outside the 0.3 s after switches)",
        "without γ± Q31 is biased and the error propagates to ṗ1 (§3.2)",
        format!(
            "γ = 1: {:.3} % / {:.2} % of the p1 range, |ΔQ31| ≤ {:.2} % of max Q31; γ±: {:.2} % / {:.2} %, |ΔQ31| ≤ {:.1} %",
            pct(&c2_one),
            pct(&c_one),
            100.0 * q_one / q_max,
            pct(&c2_paper),
            pct(&c_paper),
            100.0 * q_paper / q_max
        ),
        "γ = 1 worse than γ±",
        biased_without,
        PapersMethod { name: gamma_pm, meets: biased_without },
    ));
    // The packaged FMU: scenario fourbar-pub2 (semirecursive-a with Model A′'s parameter set).
    let fmu = Runner::new(fmu_dir)?.run("fourbar-pub2.toml", |_| {}, &Overrides::default())?;
    if !fmu.ok {
        anyhow::bail!("scenario fourbar-pub2 failed: {}", fmu.message);
    }
    let fmu_s = series(&fmu.results, "ap.s")?;
    let fmu_ds = fmu_s.iter().fold(0.0f64, |a, &(t, s)| a.max((s - sp8_paper.at(t, |p| p.s)).abs()));
    rows.push(Row::new(
        "pub2.fmu",
        "Scenario fourbar-pub2 (semirecursive-a FMU: V_h3 = 7.85e-7, p3_model = SP, γ±, H = 8 ms) vs the in-process SP run: max |Δs|",
        "",
        format!("{fmu_ds:.1e} m over {} points", fmu_s.len()),
        "≤ 1e-9 m",
        Verdict::of(fmu_ds <= 1e-9 && fmu_s.len() == sp8_paper.points.len()),
    ));
    rows.push(Row::info(
        "pub2.work",
        "Newton work over 7 s, SP (γ±) at 8 ms vs LF at 2 ms: iterations × unknowns (5 vs 6), beside the paper",
        "CPU time ratio 0.18 (Table 3)",
        format!(
            "{} × 5 vs {} × 6: ratio {:.3}; wall time: criterion, docs/performance.md",
            total_iterations(sp8_paper),
            total_iterations(lf2),
            (total_iterations(sp8_paper) * 5) as f64 / (total_iterations(lf2) * 6) as f64
        ),
    ));
    let _ = writeln!(
        body,
        "\nLF with the halving converges at every step: against LF at 0.5 ms its largest |Δs| is {} mm at 3, 5, 8 ms \
         (at 8 ms ~29 iterations per step while the piston stands on the fluid: plain Newton cycles there). The seeds do \
         not show what made the paper's LF stall at 3 and 5 ms already. With the exact quasi-steady p3 (γ = 1) SP \
         reproduces LF to {:.3} mm at 8 ms; Publication II's manually tuned γ± (\"no clear rule\") bias it \
         (SPEC §3.7) — they probably compensate for something in the paper's own LF model that the seeds do not show.",
        lf_damped
            .iter()
            .filter(|(d, _)| *d > 2.0)
            .map(|(_, t)| format!("{:.2}", compare(t, lf05, &switches, SETTLE).ds * 1e3))
            .collect::<Vec<_>>()
            .join(" / "),
        c_one.ds * 1e3
    );

    // Plots.
    std::fs::create_dir_all(img_dir)?;
    let mut plots = Vec::new();
    let ser = |t: &Trace, f: &dyn Fn(&fmu_semirecursive::pub2::Point) -> f64| -> Vec<(f64, f64)> {
        t.points.iter().map(|p| (p.t, f(p))).collect()
    };
    let three = |f: &dyn Fn(&fmu_semirecursive::pub2::Point) -> f64| {
        [
            Series { label: "LF, Δt = 2 ms", points: ser(lf2, f) },
            Series { label: "SP γ = 1, Δt = 8 ms", points: ser(sp8_one, f) },
            Series { label: "SP Pub II γ±, Δt = 8 ms", points: ser(sp8_paper, f) },
        ]
    };
    let mut plot = |file: &str, title: &str, y: &str, series: &[Series<'_>]| -> Result<()> {
        lines(&img_dir.join(file), title, "t (s)", y, series)?;
        plots.push(Path::new("img").join(file));
        Ok(())
    };
    plot("pub2-s.png", "Model A′: actuator length (Pub II Fig. 4)", "s (m)", &three(&|p| p.s))?;
    plot("pub2-p1.png", "Model A′: piston-side pressure (Pub II Fig. 5)", "p1 (MPa)", &three(&|p| p.p[0] / 1e6))?;
    plot("pub2-q31.png", "Model A′: throttle flow Q31", "Q31 (l/min)", &three(&|p| p.q31 * 6e4))?;
    plot(
        "pub2-energy.png",
        "Model A′: energy balance E_kin + ΔE_pot − W_act (Pub II Fig. 8)",
        "J",
        &three(&|p| p.energy),
    )?;
    let it = |t: &Trace| -> Vec<(f64, f64)> { t.points[1..].iter().map(|p| (p.t, p.iterations as f64)).collect() };
    let lf8 = lfd_at(8.0).map(it).unwrap_or_default();
    plot(
        "pub2-iterations.png",
        "Model A′: Newton iterations per step",
        "iterations",
        &[
            Series { label: "LF, Δt = 2 ms", points: it(lf2) },
            Series { label: "LF, Δt = 8 ms, halved after 25", points: lf8 },
            Series { label: "SP Pub II γ±, Δt = 8 ms", points: it(sp8_paper) },
        ],
    )?;

    Ok(Section {
        title: "Publication II: singular-perturbation p3, Model A′ (monolithic semi-recursive)".into(),
        body,
        rows,
        plots,
    })
}
