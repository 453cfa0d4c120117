#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The integrators against closed forms and the literature's reference values.

use super::*;

/// A problem from closures.
pub(super) struct P<F, G> {
    pub dim: usize,
    pub n_roots: usize,
    pub f: F,
    pub g: G,
}

impl<F, G> OdeProblem for P<F, G>
where
    F: FnMut(f64, &[f64], &mut [f64]),
    G: FnMut(f64, &[f64], &mut [f64]),
{
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_roots(&self) -> usize {
        self.n_roots
    }
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), OdeError> {
        (self.f)(t, x, dx);
        Ok(())
    }
    fn roots(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> Result<(), OdeError> {
        (self.g)(t, x, g);
        Ok(())
    }
}

fn no_roots(_: f64, _: &[f64], _: &mut [f64]) {}

/// A callback (t, x, out).
type Callback = fn(f64, &[f64], &mut [f64]);

pub(super) fn ode<F: FnMut(f64, &[f64], &mut [f64])>(dim: usize, f: F) -> P<F, Callback> {
    P { dim, n_roots: 0, f, g: no_roots }
}

fn options(method: Method) -> Options {
    Options { method, ..Options::default() }
}

/// Integrates to `t_end`, returning the integrator (stopping at no root).
pub(super) fn run(p: &mut dyn OdeProblem, opts: &Options, t0: f64, x0: &[f64], t_end: f64) -> Box<dyn Integrator> {
    let mut it = integrator(p.dim(), p.n_roots(), opts).unwrap();
    it.reset(p, t0, x0).unwrap();
    while it.time() < t_end {
        let before = it.time();
        match it.step(p, t_end).unwrap() {
            Advance::Step { t } => {
                assert!(t > before && t <= t_end, "step from {before} to {t}, stop {t_end}");
                assert_eq!(t, it.time());
            }
            Advance::Root { .. } => panic!("no roots here"),
        }
    }
    assert_eq!(it.time(), t_end);
    it
}

fn decay(h: f64, method: Method) -> f64 {
    let mut p = ode(1, |_, x, dx| dx[0] = -x[0]);
    let it = run(&mut p, &Options { fixed_step: h, ..options(method) }, 0.0, &[1.0], 1.0);
    (it.state()[0] - (-1.0_f64).exp()).abs()
}

#[test]
fn euler_and_rk4_converge_at_their_orders_on_exponential_decay() {
    // Euler's global error at t = 1 is h t e^{-t} / 2 to first order.
    let e1 = decay(0.01, Method::Euler);
    assert!((e1 / (0.5 * 0.01 * (-1.0_f64).exp()) - 1.0).abs() < 0.02, "Euler error {e1}");
    assert!((e1 / decay(0.005, Method::Euler) - 2.0).abs() < 0.02);
    // RK4: e^{-h} to h⁵/120 per step, global error h⁴ t e^{-t} / 120.
    let e4 = decay(0.01, Method::Rk4);
    assert!((e4 / (1e-8 / 120.0 * (-1.0_f64).exp()) - 1.0).abs() < 0.02, "RK4 error {e4}");
    assert!((e4 / decay(0.005, Method::Rk4) - 16.0).abs() < 0.3);
}

#[test]
fn fixed_steps_land_on_every_stop_time_and_honour_max_step() {
    let mut p = ode(1, |_, _, dx| dx[0] = 1.0);
    let opts = Options { fixed_step: 0.3, ..options(Method::Rk4) };
    let mut it = integrator(1, 0, &opts).unwrap();
    it.reset(&mut p, 0.0, &[0.0]).unwrap();
    let mut times = vec![];
    for stop in [1.0, 1.05, 2.0] {
        while it.time() < stop {
            let Advance::Step { t } = it.step(&mut p, stop).unwrap() else { panic!() };
            times.push(t);
        }
    }
    let expected = [0.3, 0.6, 0.9, 1.0, 1.05, 1.35, 1.65, 1.95, 2.0];
    assert_eq!(times.len(), expected.len(), "{times:?}");
    for (t, e) in times.iter().zip(expected) {
        assert!((t - e).abs() < 1e-14, "{times:?}");
    }
    assert_eq!(it.time(), 2.0);
    assert!((it.state()[0] - 2.0).abs() < 1e-14);
    // A stop time in the past is an error, not a step back.
    assert!(it.step(&mut p, 1.0).unwrap_err().message.contains("step back"));
    // max_step below fixed_step bounds the step.
    let it = run(&mut p, &Options { fixed_step: 0.3, max_step: 0.1, ..options(Method::Euler) }, 0.0, &[0.0], 1.0);
    assert_eq!(it.stats().steps, 10);
}

#[test]
fn rk4_harmonic_oscillator_over_ten_periods() {
    let mut p = ode(2, |_, x, dx| {
        dx[0] = x[1];
        dx[1] = -x[0];
    });
    let t_end = 20.0 * std::f64::consts::PI;
    let it = run(&mut p, &Options { fixed_step: 1e-3, ..options(Method::Rk4) }, 0.0, &[1.0, 0.0], t_end);
    assert!((it.state()[0] - 1.0).abs() < 1e-11 && it.state()[1].abs() < 1e-11, "{:?}", it.state());
    assert_eq!(it.stats().rhs_evaluations, 1 + 4 * it.stats().steps);
}

/// A ball dropped from 10 m, restitution 0.8, with root functions h (impact, falling), v (apex,
/// falling) and h − 5 (both directions). Integrates to 4 s, handling each event as an ME
/// instance would (bounce: reset with the reversed velocity), and compares every event with
/// the closed form.
pub(super) fn bouncing_ball(opts: &Options, tol: f64) -> Stats {
    const G: f64 = 9.81;
    const E: f64 = 0.8;
    let mut p = P {
        dim: 2,
        n_roots: 3,
        f: |_: f64, x: &[f64], dx: &mut [f64]| {
            dx[0] = x[1];
            dx[1] = -G;
        },
        g: |_: f64, x: &[f64], g: &mut [f64]| {
            g[0] = x[0];
            g[1] = x[1];
            g[2] = x[0] - 5.0;
        },
    };
    // Closed form: (time, root, direction).
    let mut expected = vec![];
    let (mut t0, mut h0, mut v0) = (0.0, 10.0, 0.0_f64);
    while t0 < 4.0 {
        // h(t) = h0 + v0 s − G s²/2 from (t0, h0, v0).
        let apex = v0 / G;
        if apex > 0.0 {
            expected.push((t0 + apex, 1, -1));
        }
        let top = h0 + v0 * v0 / (2.0 * G);
        if top > 5.0 {
            let d = (v0 * v0 + 2.0 * G * (h0 - 5.0)).sqrt();
            if h0 < 5.0 {
                expected.push((t0 + (v0 - d) / G, 2, 1));
            }
            expected.push((t0 + (v0 + d) / G, 2, -1));
        }
        let s = (v0 + (v0 * v0 + 2.0 * G * h0).sqrt()) / G;
        expected.push((t0 + s, 0, -1));
        (t0, h0, v0) = (t0 + s, 0.0, E * G * s - E * v0);
    }
    expected.retain(|e| e.0 < 4.0);
    expected.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut it = integrator(2, 3, opts).unwrap();
    it.reset(&mut p, 0.0, &[10.0, 0.0]).unwrap();
    let mut found = vec![];
    while it.time() < 4.0 {
        if let Advance::Root { t, directions } = it.step(&mut p, 4.0).unwrap() {
            assert_eq!(t, it.time());
            let (i, d) = directions.iter().enumerate().find(|(_, d)| **d != 0).map(|(i, d)| (i, *d)).unwrap();
            found.push((t, i, d));
            if i == 0 {
                let x = [0.0, -E * it.state()[1]];
                it.reset(&mut p, t, &x).unwrap();
            }
        }
    }
    assert_eq!(found.len(), expected.len(), "{found:?}\n{expected:?}");
    for (f, e) in found.iter().zip(&expected) {
        assert_eq!((f.1, f.2), (e.1, e.2), "{found:?}\n{expected:?}");
        assert!((f.0 - e.0).abs() < tol, "event {f:?}, closed form {e:?}");
    }
    it.stats()
}

#[test]
fn rk4_locates_bouncing_ball_events_to_1e_10_s_in_both_directions() {
    // RK4 and the Hermite interpolant are exact on free fall: what remains is the root search.
    let stats = bouncing_ball(&Options { fixed_step: 0.01, ..options(Method::Rk4) }, 1e-10);
    assert!(stats.root_evaluations > 0);
}

#[test]
fn euler_finds_the_same_events_to_its_accuracy() {
    bouncing_ball(&Options { fixed_step: 1e-4, ..options(Method::Euler) }, 1e-3);
}

#[test]
fn a_root_inside_a_step_without_reset_then_the_rest_of_the_step() {
    // g = t − 0.25 inside the step (0.2, 0.3]: the integrator stops at 0.25, then, without a
    // reset, finishes the step at 0.3 with the state of the step's end.
    let mut p = P {
        dim: 1,
        n_roots: 1,
        f: |_: f64, _: &[f64], dx: &mut [f64]| dx[0] = 1.0,
        g: |t: f64, _: &[f64], g: &mut [f64]| g[0] = t - 0.25,
    };
    let mut it = integrator(1, 1, &Options { fixed_step: 0.1, ..options(Method::Rk4) }).unwrap();
    it.reset(&mut p, 0.0, &[0.0]).unwrap();
    let mut events = vec![];
    while it.time() < 1.0 {
        let a = it.step(&mut p, 1.0).unwrap();
        events.push((a, it.time(), it.state()[0]));
    }
    let roots: Vec<_> = events.iter().filter(|e| matches!(e.0, Advance::Root { .. })).collect();
    assert_eq!(roots.len(), 1, "{events:?}");
    assert!((roots[0].1 - 0.25).abs() < 1e-12 && (roots[0].2 - 0.25).abs() < 1e-12, "{events:?}");
    assert_eq!(roots[0].0, Advance::Root { t: roots[0].1, directions: vec![1] });
    let after = events.iter().position(|e| matches!(e.0, Advance::Root { .. })).unwrap() + 1;
    assert!((events[after].1 - 0.3).abs() < 1e-14 && (events[after].2 - 0.3).abs() < 1e-14, "{events:?}");
    assert_eq!(events.len(), 11);
}

#[test]
fn reset_after_a_jump_restarts_from_the_new_state() {
    for method in [Method::Euler, Method::Rk4] {
        let mut p = ode(1, |_, _, dx| dx[0] = 2.0);
        let mut it = integrator(1, 0, &Options { fixed_step: 0.1, ..options(method) }).unwrap();
        it.reset(&mut p, 0.0, &[0.0]).unwrap();
        while it.time() < 0.5 {
            it.step(&mut p, 0.5).unwrap();
        }
        it.reset(&mut p, 0.5, &[10.0]).unwrap();
        while it.time() < 1.0 {
            it.step(&mut p, 1.0).unwrap();
        }
        assert!((it.state()[0] - 11.0).abs() < 1e-12, "{method:?}: {}", it.state()[0]);
    }
}

#[test]
fn nan_in_the_right_hand_side_is_an_error_naming_the_time() {
    for method in [Method::Euler, Method::Rk4] {
        let mut p = ode(2, |t, x, dx| {
            dx[0] = 1.0;
            dx[1] = if t > 0.5 { f64::NAN } else { x[0] };
        });
        let mut it = integrator(2, 0, &Options { fixed_step: 0.1, ..options(method) }).unwrap();
        it.reset(&mut p, 0.0, &[0.0, 0.0]).unwrap();
        let err = loop {
            match it.step(&mut p, 1.0) {
                Ok(_) => assert!(it.time() <= 0.5),
                Err(e) => break e,
            }
        };
        assert!(err.message.contains("t = 0.6") || err.message.contains("t = 0.55"), "{method:?}: {err}");
        assert!(err.message.contains("state 1"), "{err}");
        // Stepping on after the error is refused until a reset.
        assert!(it.step(&mut p, 1.0).is_err());
    }
}

#[test]
fn bad_options_are_refused_with_their_name() {
    let err = |o: Options| integrator(1, 0, &o).err().unwrap().message;
    assert!(err(Options { fixed_step: 0.0, ..options(Method::Euler) }).contains("fixed_step"));
    assert!(err(Options { max_step: -1.0, ..options(Method::Rk4) }).contains("max_step"));
    assert!(err(Options { fixed_step: f64::NAN, ..options(Method::Rk4) }).contains("fixed_step"));
}

#[test]
fn integrators_are_send() {
    fn send<T: Send>(_: T) {}
    send(integrator(1, 0, &options(Method::Rk4)).unwrap());
}

/// Every event and step from `t0` to `t_end` as (t, state bits, root): the trace a restored
/// integrator must repeat bit for bit.
fn trace(it: &mut dyn Integrator, p: &mut dyn OdeProblem, t_end: f64) -> Vec<(u64, Vec<u64>, bool)> {
    let mut out = Vec::new();
    while it.time() < t_end {
        let root = matches!(it.step(p, t_end).unwrap(), Advance::Root { .. });
        out.push((it.time().to_bits(), it.state().iter().map(|x| x.to_bits()).collect(), root));
    }
    out
}

#[test]
fn a_restored_snapshot_repeats_the_steps_bit_for_bit_and_keeps_the_counters() {
    // A stiff-ish problem with a root, for each method: the snapshot is taken mid-run (the BDF
    // at order > 1 with a Jacobian, a root crossed since), the rest is run, the snapshot
    // restored, the rest run again: identical traces; the counters only grow.
    for method in [Method::Bdf, Method::Euler, Method::Rk4] {
        let mut p = P {
            dim: 2,
            n_roots: 1,
            f: |t: f64, x: &[f64], dx: &mut [f64]| {
                dx[0] = -50.0 * (x[0] - t.cos());
                dx[1] = x[0];
            },
            g: |_: f64, x: &[f64], g: &mut [f64]| g[0] = x[1] - 0.4,
        };
        let opts = Options { fixed_step: 1e-3, ..options(method) };
        let mut it = integrator(2, 1, &opts).unwrap();
        it.reset(&mut p, 0.0, &[0.0, 0.0]).unwrap();
        let first = trace(it.as_mut(), &mut p, 0.3);
        let saved = it.snapshot();
        let once = trace(it.as_mut(), &mut p, 1.0);
        assert!(once.iter().any(|s| s.2), "{method:?}: the root x1 = 0.4 lies after the snapshot");
        let work = it.stats();
        it.restore(saved.as_ref()).unwrap();
        assert_eq!(it.time(), 0.3, "{method:?}");
        assert_eq!(it.stats(), work, "{method:?}: the counters are kept");
        let again = trace(it.as_mut(), &mut p, 1.0);
        assert_eq!(once, again, "{method:?}");
        assert!(it.stats().steps > work.steps, "{method:?}");
        assert!(!first.is_empty());
        // A snapshot of another method is refused.
        let other = integrator(2, 1, &options(if method == Method::Bdf { Method::Rk4 } else { Method::Bdf })).unwrap();
        assert!(it.restore(other.as_ref()).unwrap_err().message.contains("another method"), "{method:?}");
    }
}
