#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Publication II checks on Model A′ (DIGEST §1.3, §2.2, §4.6; SPEC §3.7): the singular-
//! perturbation p3 in the monolithic penalty formulation against the lumped-fluid one.

use fmu_hydraulics::sp::{self, Gamma};
use fmu_semirecursive::circuit::P3Model;
use fmu_semirecursive::penalty::Tangent;
use fmu_semirecursive::pub2::{compare, model_a_prime, switch_times, Trace, GAMMA, V_H3};

/// Pub II Table 3: Δt (ms), SP average and maximum iterations.
const TABLE3_SP: [(f64, f64, usize); 6] =
    [(0.5, 1.62, 4), (1.0, 1.76, 4), (2.0, 1.81, 3), (3.0, 1.83, 4), (5.0, 1.85, 3), (8.0, 1.90, 4)];

#[test]
fn model_a_prime_is_model_a_with_pub2_table1_changes() {
    let a = fmu_semirecursive::models::model_a().unwrap();
    let ap = model_a_prime(P3Model::Sp(GAMMA)).unwrap();
    assert_eq!(ap.circuit.lumped.v_h3, 7.85e-7);
    assert_eq!(V_H3, 7.85e-7);
    assert_eq!((GAMMA.plus, GAMMA.minus), (1.16, 1.05));
    // Same mechanism, cycle and static equilibrium (Pub I eqs. 53–54: V3 does not enter).
    assert_eq!(ap.z0, a.z0);
    assert_eq!(ap.p0, a.p0);
    assert_eq!(ap.cycle, a.cycle);
    // The problem size shrinks: pressure unknowns [p1, p2] instead of [p1, p2, p3].
    assert_eq!(ap.circuit.np(), 2);
    assert_eq!(model_a_prime(P3Model::Lf).unwrap().circuit.np(), 3);
}

/// SP's p3 after every step is the quasi-steady state of `fmu_hydraulics::sp` at (p1, U), the
/// analytic and numerical tangents give the same trajectory and iteration counts.
#[test]
fn sp_p3_is_algebraic_and_the_tangents_agree() {
    let m = model_a_prime(P3Model::Sp(GAMMA)).unwrap();
    let a = Trace::simulate(&m, Tangent::Analytic, 2e-3, m.duration);
    let n = Trace::simulate(&m, Tangent::Numerical, 2e-3, m.duration);
    assert!(a.converged() && n.converged(), "{:?} {:?}", a.failure, n.failure);
    let c = m.circuit.lumped.constants();
    let mut dz: f64 = 0.0;
    for (x, y) in a.points.iter().zip(&n.points) {
        dz = dz.max((x.s - y.s).abs());
        assert_eq!(x.iterations, y.iterations, "t = {}", x.t);
        // Pub II eqs. 33–34 (or the laminar-band root) at the recorded (p1, U).
        assert_eq!(x.p[2], sp::p3_quasi_steady(&m.circuit.lumped, &c, x.p[0], x.u), "t = {}", x.t);
    }
    println!("SP analytic vs numerical tangent: max |Δs| = {dz:e} m");
    assert!(dz <= 1e-9, "{dz}");
    // p3 = p1 at rest (U = 0 before 0.5 s) and the closed form while the valve is open.
    let rest = &a.points[100];
    assert_eq!(rest.p[2], rest.p[0]);
    let open = a.points.iter().find(|p| p.t >= 1.5).unwrap();
    let alpha = (open.u * m.circuit.lumped.cv / c.c_t).powi(2);
    let paper = (open.p[0] + alpha * m.circuit.lumped.p_p) / (1.0 + alpha);
    assert!(open.u > 9.9 && (open.p[2] - paper).abs() < 1e-6 * paper, "{} vs {paper}", open.p[2]);
    // Eq. 35: Q31 = γ+ C_t √(p3 − p1).
    let q = GAMMA.plus * c.c_t * (open.p[2] - open.p[0]).sqrt();
    assert!((open.q31 - q).abs() < 1e-9 * q, "{} vs {q}", open.q31);
}

#[test]
fn sp_converges_at_every_pub2_step_with_table3_iterations() {
    for (label, gamma) in [("Pub II γ±", GAMMA), ("γ = 1", Gamma::default())] {
        let m = model_a_prime(P3Model::Sp(gamma)).unwrap();
        for (dt_ms, avg_paper, max_paper) in TABLE3_SP {
            let run = Trace::simulate(&m, Tangent::Analytic, dt_ms * 1e-3, m.duration);
            assert!(run.converged(), "SP {label} at {dt_ms} ms: {:?}", run.failure);
            let (avg, max) = run.iterations();
            let peak = run.energy_peak();
            println!("SP {label} Δt = {dt_ms} ms: iterations {avg:.2}/{max} (paper {avg_paper}/{max_paper}), energy peak {peak:.2} J");
            assert!(avg <= avg_paper, "{label} {dt_ms} ms: avg {avg}");
            // Pub II: max ≤ 4 over Table 3; ours needs 5 in a few steps (γ± at 5 ms, γ = 1 at 8 ms).
            assert!(max <= 5, "{label} {dt_ms} ms: max {max}");
            // Pub II Fig. 8: ≈ 8.1 J at 8 ms; issue target ≤ 10 J.
            assert!(peak <= 10.0, "{label} {dt_ms} ms: energy peak {peak} J");
        }
    }
}

/// Pub II: LF converges at 0.5, 1, 2 ms and fails (100 iterations) at 3, 5, 8 ms. With plain
/// Newton (the paper's) ours fails at 8 ms only, where the valve closes (t ≈ 2.8 s); at 3 and 5 ms
/// it converges in a few iterations: DISPUTED there. With the update halved after 25 iterations
/// (the FMU's safeguard) LF converges at every step and stays within 0.4 mm of LF at 0.5 ms.
#[test]
fn lf_plain_newton_fails_at_8ms_only() {
    use fmu_semirecursive::penalty::{Penalty, Settings};
    let m = model_a_prime(P3Model::Lf).unwrap();
    for dt_ms in [2.0, 3.0, 5.0, 8.0] {
        let set = Settings::paper(&m, dt_ms * 1e-3, Tangent::Numerical);
        let run = Trace::simulate_with(&Penalty::new(&m, set).plain_newton(), m.duration);
        let last = run.points.last().unwrap().t;
        println!("LF plain Newton Δt = {dt_ms} ms: {:?} (last converged t = {last:.3} s)", run.failure);
        if dt_ms < 8.0 {
            assert!(run.converged(), "{dt_ms} ms: {:?}", run.failure);
        } else {
            let e = run.failure.unwrap();
            assert!(e.contains("no convergence in 100 iterations") && (2.8..2.9).contains(&last), "{e} at {last}");
        }
    }
    // SP with plain Newton at 8 ms: no trouble.
    let sp = model_a_prime(P3Model::Sp(GAMMA)).unwrap();
    let set = Settings::paper(&sp, 8e-3, Tangent::Numerical);
    assert!(Trace::simulate_with(&Penalty::new(&sp, set).plain_newton(), sp.duration).converged());
}

#[test]
fn lf_with_halving_converges_at_every_step() {
    let m = model_a_prime(P3Model::Lf).unwrap();
    let reference = Trace::simulate(&m, Tangent::Analytic, 0.5e-3, m.duration);
    assert!(reference.converged());
    for dt_ms in [1.0, 2.0, 3.0, 5.0, 8.0] {
        let run = Trace::simulate(&m, Tangent::Numerical, dt_ms * 1e-3, m.duration);
        assert!(run.converged(), "LF at {dt_ms} ms: {:?}", run.failure);
        let (avg, max) = run.iterations();
        let c = compare(&run, &reference, &switch_times(&m), 0.3);
        println!("LF Δt = {dt_ms} ms: iterations {avg:.2}/{max}, |Δs| vs 0.5 ms {:.3} mm", c.ds * 1e3);
        assert!(max < 100 && c.ds < 1e-3, "{dt_ms} ms: {max} iterations, Δs {}", c.ds);
        if dt_ms <= 5.0 {
            assert!(max <= 6, "{dt_ms} ms: max {max}");
        }
    }
}

/// Pub II Figs. 4–5, 8: SP at 8 ms vs LF at 2 ms. With γ = 1 (the exact quasi-steady state):
/// s within 1 mm over 7 s, p1 within 2 % of its range outside the 0.3 s after each valve switch,
/// energy peak ≤ 10 J. Pub II's γ± move s by ~18 mm and p1 by ~6 % of its range (SPEC §3.7).
#[test]
fn sp_at_8ms_tracks_lf_at_2ms_with_gamma_one_not_with_pub2_gammas() {
    let lf = model_a_prime(P3Model::Lf).unwrap();
    let reference = Trace::simulate(&lf, Tangent::Analytic, 2e-3, lf.duration);
    let switches = switch_times(&lf);
    let one = model_a_prime(P3Model::Sp(Gamma::default())).unwrap();
    let run = Trace::simulate(&one, Tangent::Analytic, 8e-3, one.duration);
    let c = compare(&run, &reference, &switches, 0.3);
    println!("SP γ = 1 at 8 ms vs LF at 2 ms: {c:?}, energy peak {:.2} J", run.energy_peak());
    assert!(c.ds <= 1e-3, "{c:?}");
    assert!(c.dp1 <= 0.02 * c.p1_range, "{c:?}");
    assert!(run.energy_peak() <= 10.0);
    let pub2 = model_a_prime(P3Model::Sp(GAMMA)).unwrap();
    let run = Trace::simulate(&pub2, Tangent::Analytic, 8e-3, pub2.duration);
    let g = compare(&run, &reference, &switches, 0.3);
    println!("SP Pub II γ± at 8 ms vs LF at 2 ms: {g:?}");
    assert!(g.ds > 10e-3 && g.dp1 > 0.04 * g.p1_range, "γ± bias expected: {g:?}");
}

/// The `semirecursive-a` FMU with Model A′'s parameter set (p3_model = SP, Pub II γ±,
/// V_h3 = 7.85e-7 m³) steps exactly as the in-process run; a bad p3_model is refused at
/// initialization with the parameter named.
#[test]
fn fmu_parameters_select_model_a_prime_with_sp() {
    use fmu_export::{CoSimModel, Context};
    use fmu_hydraulics::fmu_lumped3::P3_SP;
    let mut fmu = fmu_semirecursive::ModelAFmu { p3_model: P3_SP, gamma: GAMMA, v_h3: V_H3, ..Default::default() };
    fmu.initialize(0.0, &mut Context::default()).unwrap();
    assert_eq!(fmu.core.model.circuit.np(), 2);
    let m = model_a_prime(P3Model::Sp(GAMMA)).unwrap();
    let trace = Trace::simulate(&m, Tangent::Analytic, 8e-3, m.duration);
    for (k, p) in trace.points.iter().enumerate().skip(1) {
        fmu.do_step((k - 1) as f64 * 8e-3, 8e-3, &mut Context::default()).unwrap();
        let st = &fmu.core.st;
        assert!(
            (st.s[0] - p.s).abs() <= 1e-9 && (st.p[0] - p.p[0]).abs() <= 1e-3,
            "t = {}: {} vs {}",
            p.t,
            st.s[0],
            p.s
        );
    }
    let mut bad = fmu_semirecursive::ModelAFmu { p3_model: 3, ..Default::default() };
    let e = bad.initialize(0.0, &mut Context::default()).unwrap_err();
    assert!(format!("{e}").contains("p3_model = 3"), "{e}");
}

/// The double-step formulation with SP (Newton on [z_i; p1; p2]) agrees with the penalty one.
#[test]
fn double_step_with_sp_agrees_with_penalty() {
    use fmu_semirecursive::run::{Formulation, Run};
    let m = model_a_prime(P3Model::Sp(Gamma::default())).unwrap();
    let pen = Run::simulate(&m, Formulation::Penalty(Tangent::Analytic), 2e-3, m.duration).unwrap();
    let ds = Run::simulate(&m, Formulation::DoubleStep, 2e-3, m.duration).unwrap();
    let (dz, dp) = pen.difference(&ds);
    println!("SP double-step vs penalty at 2 ms: max |Δz| = {dz:e} rad, max |Δp|/p = {dp:e}");
    assert!(dz < 1e-4 && dp < 1e-2, "{dz} {dp}");
    // At rest (U = 0 before 0.5 s) SP's p3 is p1.
    assert!(ds.samples.iter().filter(|s| s.t < 0.5).all(|s| s.p[2] == s.p[0]));
}
