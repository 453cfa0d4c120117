//! Drivers shared by the tests: a model stepped through its `CoSimModel` as the FMI layer does.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_export::{CoSimModel, Context};
use fmu_unified::fmu::{UnifiedFmu, Variant};

/// Initializes a model after `setup` changed its parameters.
pub fn init<V: Variant<M, P>, const M: usize, const P: usize>(
    setup: impl FnOnce(&mut UnifiedFmu<V, M, P>),
) -> UnifiedFmu<V, M, P> {
    let mut m = UnifiedFmu::<V, M, P>::default();
    setup(&mut m);
    m.initialize(0.0, &mut Context::default()).unwrap();
    m
}

/// Runs to `stop` with step `big_h`, inputs `u(t)` held over each step (set at t), calling `each` after every step.
pub fn run<V: Variant<M, P>, const M: usize, const P: usize>(
    m: &mut UnifiedFmu<V, M, P>,
    big_h: f64,
    stop: f64,
    u: impl Fn(f64) -> Vec<f64>,
    mut each: impl FnMut(f64, &UnifiedFmu<V, M, P>),
) {
    let n = (stop / big_h).round() as usize;
    for k in 0..n {
        let t = k as f64 * big_h;
        for (i, x) in u(t).into_iter().enumerate() {
            m.inputs[i].value = x;
        }
        m.do_step(t, big_h, &mut Context::default()).unwrap_or_else(|e| panic!("step at t = {t}: {e}"));
        for x in &mut m.inputs {
            x.end_step(big_h);
        }
        each(t + big_h, m);
    }
}

/// Seed 004 eq. 38 with the jumps right-continuous at the communication points: κ0 until 2 s,
/// κ0 − 0.01 until 6 s, κ0 + 0.01 after.
pub fn kappa_law(kappa0: f64, t: f64) -> f64 {
    if t < 2.0 - 1e-9 {
        kappa0
    } else if t < 6.0 - 1e-9 {
        kappa0 - 0.01
    } else {
        kappa0 + 0.01
    }
}
