#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The BDF integrator against closed forms and the literature's reference values.

use super::tests::{bouncing_ball, ode, run, P};
use super::*;

fn bdf(rtol: f64, atol: f64) -> Options {
    Options { method: Method::Bdf, rtol, atol, ..Options::default() }
}

/// Robertson's chemical kinetics (Hairer & Wanner, Solving ODEs II, §IV.1, problem (1.4)).
pub(super) fn robertson(_: f64, y: &[f64], dy: &mut [f64]) {
    dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
    dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
    dy[2] = 3e7 * y[1] * y[1];
}

/// Van der Pol with μ = 1000 (Hairer & Wanner II §IV.1 in the unscaled form).
pub(super) fn van_der_pol(_: f64, y: &[f64], dy: &mut [f64]) {
    dy[0] = y[1];
    dy[1] = 1000.0 * (1.0 - y[0] * y[0]) * y[1] - y[0];
}

#[test]
fn exponential_decay_within_a_multiple_of_the_tolerance_over_five_time_constants() {
    for k in 4..=10 {
        let rtol = 10f64.powi(-k);
        let mut p = ode(1, |_, x, dx| dx[0] = -x[0]);
        let it = run(&mut p, &bdf(rtol, rtol * 1e-3), 0.0, &[1.0], 5.0);
        let err = (it.state()[0] - (-5.0_f64).exp()).abs() / (-5.0_f64).exp();
        // Global error over ~40–240 steps of local error ≈ rtol: SciPy's BDF gives the same
        // ratios (0.5 at 1e-4 to 57 at 1e-10, docs/model-exchange.md "Solvers").
        assert!(err < 100.0 * rtol, "rtol {rtol:e}: relative error {err:e}, {:?}", it.stats());
        assert!(err > 1e-3 * rtol, "rtol {rtol:e}: relative error {err:e} suspiciously small");
    }
}

#[test]
fn harmonic_oscillator_over_ten_periods() {
    let mut p = ode(2, |_, x, dx| {
        dx[0] = x[1];
        dx[1] = -x[0];
    });
    let t_end = 20.0 * std::f64::consts::PI;
    let it = run(&mut p, &bdf(1e-8, 1e-10), 0.0, &[1.0, 0.0], t_end);
    let err = (it.state()[0] - 1.0).abs().max(it.state()[1].abs());
    assert!(err < 1e-5, "error {err:e} {:?}", it.stats());
}

#[test]
fn robertson_to_1e5_and_1e11() {
    // Reference values: y(40) from Hairer & Wanner II (§IV.10, and the Bari test set for IVP
    // solvers, problem ROBER: y(1e11) = (0.2083340149701255e-7, 0.8333360770334713e-13,
    // 0.9999999791665050)); y(1e5) by SciPy's Radau at rtol 1e-13, which agrees with both
    // others to 9 digits.
    let refs: [(f64, [f64; 3]); 3] = [
        (40.0, [0.7158270687, 9.185534764e-6, 0.2841637457]),
        (1e5, [1.786592114210e-2, 7.274751468437e-8, 9.821340061104e-1]),
        (1e11, [0.2083340149701255e-7, 0.8333360770334713e-13, 0.999999979166505]),
    ];
    let mut p = ode(3, robertson);
    let opts = bdf(1e-8, 1e-14);
    let mut it = integrator(3, 0, &opts).unwrap();
    it.reset(&mut p, 0.0, &[1.0, 0.0, 0.0]).unwrap();
    for (t_ref, y_ref) in refs {
        while it.time() < t_ref {
            it.step(&mut p, t_ref).unwrap();
        }
        for (i, (y, r)) in it.state().iter().zip(y_ref).enumerate() {
            let err = (y - r).abs() / r.abs();
            assert!(err < 1e-5, "t = {t_ref}: y{} = {y:e}, reference {r:e} (relative {err:e})", i + 1);
        }
        if t_ref == 1e5 {
            let s = it.stats();
            assert!(s.steps < 2000 && s.jacobians < s.steps, "{s:?}");
        }
    }
}

#[test]
fn van_der_pol_mu_1000_takes_few_steps_where_explicit_rk4_blows_up() {
    let mut p = ode(2, van_der_pol);
    let it = run(&mut p, &bdf(1e-6, 1e-8), 0.0, &[2.0, 0.0], 3000.0);
    // Reference y(3000) by SciPy's Radau at rtol 1e-10.
    let err = (it.state()[0] - -1.51060694).abs();
    assert!(err < 1e-3, "y1(3000) = {}, {:?}", it.state()[0], it.stats());
    let s = it.stats();
    assert!(s.steps < 3000, "{s:?}");
    // RK4 is stable only for h |λ| < 2.79, λ ≈ −μ(y₁² − 1) = −3000 at the start: with h = 0.01
    // it blows up within seconds (≥ 3 million steps needed over [0, 3000]).
    let mut rk4 = integrator(2, 0, &Options { method: Method::Rk4, fixed_step: 0.01, ..Options::default() }).unwrap();
    rk4.reset(&mut p, 0.0, &[2.0, 0.0]).unwrap();
    let mut failed = false;
    while rk4.time() < 10.0 {
        if rk4.step(&mut p, 10.0).is_err() || rk4.state().iter().any(|v| v.abs() > 1e6) {
            failed = true;
            break;
        }
    }
    assert!(failed, "RK4 at h = 0.01 stayed bounded: {:?}", rk4.state());
}

#[test]
fn bouncing_ball_events_with_bdf() {
    bouncing_ball(&bdf(1e-10, 1e-12), 1e-8);
}

#[test]
fn steps_never_pass_the_stop_time_and_land_on_it() {
    let mut p = ode(1, |_, x, dx| dx[0] = -x[0]);
    let mut it = integrator(1, 0, &bdf(1e-6, 1e-9)).unwrap();
    it.reset(&mut p, 0.0, &[1.0]).unwrap();
    let mut calls = 0;
    for k in 1..=100 {
        let stop = 0.037 * k as f64;
        while it.time() < stop {
            let Advance::Step { t } = it.step(&mut p, stop).unwrap() else { panic!() };
            assert!(t <= stop, "{t} past {stop}");
            calls += 1;
        }
        assert_eq!(it.time(), stop);
    }
    assert!((it.state()[0] - (-3.7_f64).exp()).abs() < 1e-5);
    assert!(calls < 400, "{calls} steps for 100 stops");
}

#[test]
fn max_step_is_honoured() {
    let mut p = ode(1, |_, x, dx| dx[0] = -1e-3 * x[0]);
    let opts = Options { max_step: 0.5, ..bdf(1e-4, 1e-8) };
    let mut it = integrator(1, 0, &opts).unwrap();
    it.reset(&mut p, 0.0, &[1.0]).unwrap();
    while it.time() < 100.0 {
        let before = it.time();
        it.step(&mut p, 100.0).unwrap();
        assert!(it.time() - before <= 0.5 * (1.0 + 1e-12), "step {before} → {}", it.time());
    }
    assert!(it.stats().steps >= 200);
}

#[test]
fn reset_after_a_jump() {
    let mut p = ode(1, |_, x, dx| dx[0] = -x[0]);
    let mut it = integrator(1, 0, &bdf(1e-8, 1e-12)).unwrap();
    it.reset(&mut p, 0.0, &[1.0]).unwrap();
    while it.time() < 1.0 {
        it.step(&mut p, 1.0).unwrap();
    }
    it.reset(&mut p, 1.0, &[10.0]).unwrap();
    assert_eq!((it.time(), it.state()[0]), (1.0, 10.0));
    while it.time() < 2.0 {
        it.step(&mut p, 2.0).unwrap();
    }
    assert!((it.state()[0] - 10.0 * (-1.0_f64).exp()).abs() < 1e-6, "{}", it.state()[0]);
}

#[test]
fn nan_in_the_right_hand_side_is_an_error_naming_the_time() {
    let mut p = ode(2, |t, x, dx| {
        dx[0] = -x[0];
        dx[1] = if t > 0.5 { f64::NAN } else { 1.0 };
    });
    let mut it = integrator(2, 0, &bdf(1e-6, 1e-9)).unwrap();
    it.reset(&mut p, 0.0, &[1.0, 0.0]).unwrap();
    let err = loop {
        match it.step(&mut p, 1.0) {
            Ok(_) => assert!(it.time() <= 0.5),
            Err(e) => break e,
        }
    };
    assert!(err.message.contains("at t = 0.5"), "{err}");
    assert!(err.message.contains("the derivative of state 1 is NaN"), "{err}");
    assert!(it.step(&mut p, 1.0).is_err());
}

#[test]
fn step_size_underflow_is_reported_at_a_blow_up() {
    // x' = x², x(0) = 1: x = 1/(1 − t) blows up at t = 1.
    let mut p = ode(1, |_, x, dx| dx[0] = x[0] * x[0]);
    let mut it = integrator(1, 0, &bdf(1e-6, 1e-9)).unwrap();
    it.reset(&mut p, 0.0, &[1.0]).unwrap();
    let err = loop {
        if let Err(e) = it.step(&mut p, 2.0) {
            break e;
        }
        assert!(it.stats().steps < 100_000, "no failure at t = {}", it.time());
    };
    assert!(err.message.contains("step size underflow at t = 0.99") || err.message.contains("not finite"), "{err}");
}

#[test]
fn statistics_count_every_evaluation() {
    struct Counted<'a>(&'a mut dyn OdeProblem, u64, u64);
    impl OdeProblem for Counted<'_> {
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn n_roots(&self) -> usize {
            self.0.n_roots()
        }
        fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), OdeError> {
            self.1 += 1;
            self.0.rhs(t, x, dx)
        }
        fn roots(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> Result<(), OdeError> {
            self.2 += 1;
            self.0.roots(t, x, g)
        }
    }
    let mut inner = P { dim: 3, n_roots: 1, f: robertson, g: |_: f64, y: &[f64], g: &mut [f64]| g[0] = y[0] - 0.5 };
    let mut p = Counted(&mut inner, 0, 0);
    let mut it = integrator(3, 1, &bdf(1e-6, 1e-10)).unwrap();
    it.reset(&mut p, 0.0, &[1.0, 0.0, 0.0]).unwrap();
    let mut roots = 0;
    while it.time() < 1e3 {
        if let Advance::Root { directions, .. } = it.step(&mut p, 1e3).unwrap() {
            assert_eq!(directions, vec![-1]);
            roots += 1;
        }
    }
    let s = it.stats();
    assert_eq!(roots, 1);
    assert_eq!((s.rhs_evaluations, s.root_evaluations), (p.1, p.2));
    assert!(s.jacobians >= 1 && s.rhs_evaluations > s.steps + 3 * s.jacobians, "{s:?}");
}

#[test]
fn a_problem_without_states_still_finds_time_roots() {
    let mut p = P {
        dim: 0,
        n_roots: 1,
        f: |_: f64, _: &[f64], _: &mut [f64]| {},
        g: |t: f64, _: &[f64], g: &mut [f64]| g[0] = t - 0.3,
    };
    let mut it = integrator(0, 1, &bdf(1e-6, 1e-9)).unwrap();
    it.reset(&mut p, 0.0, &[]).unwrap();
    let mut found = vec![];
    while it.time() < 1.0 {
        if let Advance::Root { t, .. } = it.step(&mut p, 1.0).unwrap() {
            found.push(t);
        }
    }
    assert_eq!(found.len(), 1);
    assert!((found[0] - 0.3).abs() < 1e-12);
}

/// The work on Robertson and Van der Pol at the settings of docs/solvers/compare_scipy.py, held
/// to SciPy's BDF numbers there (docs/model-exchange.md, "Solvers"): within 1.5× its steps and
/// evaluations, the error within 10× of its error.
#[test]
fn work_against_scipy_bdf() {
    // (f, y0, t_end, rtol, atol, reference, SciPy BDF: steps, rhs, max relative error)
    type Case = (fn(f64, &[f64], &mut [f64]), &'static [f64], f64, f64, f64, &'static [f64], u64, u64, f64);
    let cases: [Case; 2] = [
        (
            robertson,
            &[1.0, 0.0, 0.0],
            1e5,
            1e-6,
            1e-10,
            &[1.786592114210e-2, 7.274751468437e-8, 9.821340061104e-1],
            327,
            922,
            6.3e-6,
        ),
        (van_der_pol, &[2.0, 0.0], 3000.0, 1e-6, 1e-8, &[-1.51060693676], 1647, 5325, 7.5e-5),
    ];
    for (f, y0, t_end, rtol, atol, reference, steps, rhs, error) in cases {
        let mut p = ode(y0.len(), f);
        let it = run(&mut p, &bdf(rtol, atol), 0.0, y0, t_end);
        let s = it.stats();
        let err = reference.iter().zip(it.state()).map(|(r, y)| ((y - r) / r).abs()).fold(0.0, f64::max);
        eprintln!("t_end {t_end:e}: {s:?}, max relative error {err:.1e}");
        assert!(s.steps as f64 <= 1.5 * steps as f64 && s.rhs_evaluations as f64 <= 1.5 * rhs as f64, "{s:?}");
        assert!(err <= 10.0 * error, "error {err:e}");
    }
}
