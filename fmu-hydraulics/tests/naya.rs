#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The seed 004 circuit driven through its `CoSimModel` in process: equilibrium, convergence
//! orders of the three integrators, mass conservation, step-size and stiffness diagnostics.

use fmu_export::{CoSimModel, Context, InputSignal};
use fmu_hydraulics::NayaFmu;
use std::f64::consts::PI;

fn model(method: i32, h: f64) -> NayaFmu {
    let mut m = NayaFmu::default();
    m.stepping.method = method;
    m.stepping.h = h;
    m.initialize(0.0, &mut Context::default()).unwrap();
    m
}

#[test]
fn equilibrium_rests_for_10_s_with_every_integrator() {
    for method in [1, 2, 3] {
        let mut m = model(method, 1e-4);
        let p0 = m.p;
        assert!((p0[0] - 3.3218e6).abs() < 100.0 && (p0[1] - 4.3782e6).abs() < 100.0);
        assert!((m.kappa0 - 0.46461).abs() < 1e-5);
        for i in 0..1000 {
            m.do_step(i as f64 * 0.01, 0.01, &mut Context::default()).unwrap();
        }
        let drift = (m.p - p0).amax();
        assert!(drift <= 1.0, "integrator {method}: drift {drift} Pa over 10 s");
    }
}

/// s(t) = s0 + A sin(ωt), A = 2 mm, 10 Hz: sets s and ṡ with their Taylor polynomials (order 4) at t.
fn drive(m: &mut NayaFmu, t: f64) {
    let (a, w) = (0.002, 2.0 * PI * 10.0);
    let s0 = m.circuit.s0;
    let (sn, cs) = (w * t).sin_cos();
    m.s = InputSignal {
        value: s0 + a * sn,
        derivatives: [a * w * cs, -a * w * w * sn, -a * w.powi(3) * cs, a * w.powi(4) * sn],
    };
    m.s_dot = InputSignal {
        value: a * w * cs,
        derivatives: [-a * w * w * sn, -a * w.powi(3) * cs, a * w.powi(4) * sn, a * w.powi(5) * cs],
    };
}

fn run(method: i32, h: f64) -> nalgebra::SVector<f64, 2> {
    let big_h = 1e-3;
    let mut m = model(method, h);
    m.stepping.newton_tol = 1e-10;
    for i in 0..200 {
        let t = i as f64 * big_h;
        drive(&mut m, t);
        m.do_step(t, big_h, &mut Context::default()).unwrap();
    }
    m.p
}

#[test]
fn integrators_converge_at_orders_1_2_4() {
    // Same inputs for every run (the communication step is fixed), so the differences measure
    // the integrators alone; reference: RK4 at h = 1 ms / 512. Steps where h|λ| < 1.2 (|λ| ≈ 4.6e3 1/s),
    // the asymptotic regime (TR at h|λ| ≫ 1 rings on transients and shows no clean order).
    let reference = run(3, 1e-3 / 512.0);
    let cases = [(1, 1.25e-4, 1.0), (2, 2.5e-4, 2.0), (3, 6.25e-5, 4.0)];
    for (method, h, expected) in cases {
        let e1 = (run(method, h) - reference).amax();
        let e2 = (run(method, h / 2.0) - reference).amax();
        let order = (e1 / e2).log2();
        assert!((order - expected).abs() < 0.3, "integrator {method}: errors {e1:.3e} → {e2:.3e}, order {order:.2}");
    }
}

#[test]
fn pressure_change_matches_the_flow_through_the_bulk_modulus() {
    // Piston blocked (s = s0, ṡ = 0), spool opened by 0.05: chamber 1 has constant volume
    // V1 = A l1, so ṗ1 = β(p1) Q1 / V1 and ∫dp/β(p) = ln(1 + a p + b p²) changes by ∫Q1 dt / V1.
    let h = 1e-4;
    let mut m = model(2, h);
    m.kappa.value = m.kappa0 + 0.05;
    let n_of = |m: &NayaFmu, p: f64| (1.0 + m.circuit.a * p + m.circuit.b * p * p).ln();
    let start = n_of(&m, m.p[0]);
    let mut integral = 0.0;
    let mut q_prev = m.flows().0;
    for i in 0..500 {
        m.do_step(i as f64 * h, h, &mut Context::default()).unwrap();
        let q = m.flows().0;
        integral += 0.5 * h * (q_prev + q);
        q_prev = q;
    }
    let (l1, _) = m.circuit.chamber_lengths(m.circuit.s0);
    let lhs = n_of(&m, m.p[0]) - start;
    let rhs = integral / (m.circuit.a_p * l1);
    assert!(lhs.abs() > 1e-4, "the pressure must move: {lhs}");
    assert!((lhs - rhs).abs() < 1e-4 * lhs.abs(), "∫dp/β = {lhs}, ∫Q dt/V = {rhs}");
}

#[test]
fn internal_step_must_divide_the_communication_step() {
    let mut m = model(2, 3e-4);
    let e = m.do_step(0.0, 1e-3, &mut Context::default()).unwrap_err();
    assert!(e.0.contains("is not a multiple of the internal step h = 0.0003 s") && e.0.contains("H/h = 3.33"), "{e}");
}

#[test]
fn explicit_integrators_warn_once_when_unstable() {
    // |λmax| ≈ 4.6e3 1/s at rest: FWE at 1 ms has h|λ| ≈ 4.6 > 2.
    let mut m = model(1, 1e-3);
    assert!((m.stepping.lambda_max - 4.6e3).abs() < 0.1e3, "{}", m.stepping.lambda_max);
    let mut ctx = Context::default();
    let _ = m.do_step(0.0, 1e-3, &mut ctx);
    assert_eq!(ctx.warnings().len(), 1, "{:?}", ctx.warnings());
    assert!(ctx.warnings()[0].contains("FWE") && ctx.warnings()[0].contains("unstable"));
    let mut ctx = Context::default();
    let _ = m.do_step(1e-3, 1e-3, &mut ctx);
    assert!(ctx.warnings().is_empty(), "warned twice");
    // TR at the same step: no warning, and it stays at rest.
    let mut m = model(2, 1e-3);
    let mut ctx = Context::default();
    m.do_step(0.0, 1e-3, &mut ctx).unwrap();
    assert!(ctx.warnings().is_empty());
}

/// Pull the piston out fast (2 m/s) with the valve closed to the pump side.
fn pull(m: &mut NayaFmu, steps: usize, h: f64, mut each: impl FnMut(&NayaFmu, &Context)) -> Result<(), String> {
    m.kappa.value = 0.0;
    let s0 = m.circuit.s0;
    for i in 0..steps {
        let t = i as f64 * h;
        m.s = InputSignal { value: s0 - 2.0 * t, derivatives: [-2.0, 0.0, 0.0, 0.0] };
        m.s_dot = InputSignal::new(-2.0);
        let mut ctx = Context::default();
        m.do_step(t, h, &mut ctx).map_err(|e| e.0)?;
        each(m, &ctx);
    }
    Ok(())
}

#[test]
fn with_strict_pressure_a_negative_pressure_fails_with_the_quantity_named() {
    let mut m = NayaFmu::default();
    m.circuit.cavitation.strict = true;
    m.initialize(0.0, &mut Context::default()).unwrap();
    let e = pull(&mut m, 1000, 1e-3, |_, _| {}).expect_err("the run must fail");
    assert!(e.contains("at t = ") && e.contains("p1") && e.contains("negative"), "{e}");
}

/// Under suction chamber 1 cavitates. Once p1 < p_T its valve edge is shut (κ = 0), so the
/// chamber is closed and eq. 29 reads ṗ1/β_e(p1) = ṡ/l1 = −l̇1/l1: ∫ dp/β_e between two
/// instants equals −ln(l1_b/l1_a). The quadrature of the law (independent of the integrators)
/// must match every integrator's run; the pressure stays positive, the time below p_cav is
/// counted and the episode is warned once.
#[test]
fn cavitating_chamber_keeps_positive_pressure_and_conserves_volume() {
    for (method, h, tol) in [(1, 1e-6, 3e-3), (2, 2e-6, 1e-3), (3, 2e-6, 1e-3)] {
        let mut m = model(method, h);
        let law = m.circuit.clone();
        let mut mark: Option<(f64, f64)> = None;
        let mut warnings = Vec::new();
        let mut min_p = f64::INFINITY;
        let steps = (2e-3 / h).round() as usize;
        pull(&mut m, steps, h, |m, ctx| {
            warnings.extend(ctx.reports().iter().filter(|w| w.contains("cavitation")).cloned());
            assert!(
                !ctx.warnings().iter().any(|w| w.contains("cavitation")),
                "cavitation is a physical state, not an fmi2Warning: {:?}",
                ctx.warnings()
            );
            min_p = min_p.min(m.p[0]);
            if mark.is_none() && m.p[0] < 0.5e4 {
                mark = Some((m.p[0], m.circuit.chamber_lengths(m.s.at(h)).0));
            }
        })
        .unwrap();
        let (pa, la) = mark.expect("p1 falls below 5 kPa");
        let (pb, lb) = (m.p[0], m.circuit.chamber_lengths(m.s.value - 2.0 * h).0);
        // ∫_{pb}^{pa} dp/β_e by the midpoint rule in ln p (the integrand varies over decades).
        let n = 200_000;
        let (ua, ub) = (pa.ln(), pb.ln());
        let integral: f64 = (0..n)
            .map(|i| {
                let p = (ub + (ua - ub) * (i as f64 + 0.5) / n as f64).exp();
                p / law.beta_e(p)
            })
            .sum::<f64>()
            * (ua - ub)
            / n as f64;
        let expected = (lb / la).ln();
        assert!(min_p > 0.0, "method {method}: p1 min {min_p}");
        assert!(pb < law.cavitation.p_cav, "method {method}: p1 = {pb}");
        assert!(
            (integral - expected).abs() <= tol * expected,
            "method {method}: {integral} vs ln(l1b/l1a) = {expected}"
        );
        let t_cav = m.monitor.time;
        assert!(t_cav > 1e-4 && t_cav < 2e-3, "method {method}: t_cav = {t_cav}");
        assert_eq!(m.monitor.episodes, 1, "method {method}");
        assert_eq!(warnings.len(), 1, "method {method}: {warnings:?}");
    }
}

#[test]
fn force_has_direct_feedthrough_from_s_dot() {
    let mut m = model(2, 1e-4);
    let f0 = m.force();
    m.s_dot.value = 0.01;
    assert!((m.force() - (f0 - 1e5 * 0.01)).abs() < 1e-9);
    assert!((f0 - 6867.0).abs() < 1e-6);
}
