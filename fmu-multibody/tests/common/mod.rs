//! Drivers shared by the integration tests: a model is stepped through its `CoSimModel`
//! exactly as the FMI layer does it (inputs set at each communication point, `end_step` after
//! the step).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_export::{CoSimModel, Context, InputSignal};
use fmu_multibody::fmu::{MbFmu, Variant};

/// Initializes a model after `setup` changed its parameters.
pub fn init<V: Variant<M>, const M: usize>(setup: impl FnOnce(&mut MbFmu<V, M>)) -> MbFmu<V, M> {
    let mut m = MbFmu::<V, M>::default();
    setup(&mut m);
    m.initialize(0.0, &mut Context::default()).unwrap();
    m
}

/// One communication step from `t` with inputs `u` (value and derivatives per input, or None
/// to leave an input as the previous step left it), then what the FMI layer does after it.
pub fn step<V: Variant<M>, const M: usize>(m: &mut MbFmu<V, M>, t: f64, big_h: f64, u: &[Option<InputSignal>]) {
    for (i, x) in u.iter().enumerate() {
        if let Some(x) = x {
            m.inputs[i] = *x;
        }
    }
    m.do_step(t, big_h, &mut Context::default()).unwrap_or_else(|e| panic!("step at t = {t}: {e}"));
    for x in &mut m.inputs {
        x.end_step(big_h);
    }
}

/// Runs `n` communication steps of `big_h` with held inputs `u(t)` and calls `each` after every step.
pub fn run_held<V: Variant<M>, const M: usize>(
    m: &mut MbFmu<V, M>,
    big_h: f64,
    n: usize,
    u: impl Fn(f64) -> Vec<f64>,
    mut each: impl FnMut(f64, &MbFmu<V, M>),
) {
    for k in 0..n {
        let t = k as f64 * big_h;
        let inputs: Vec<Option<InputSignal>> = u(t).into_iter().map(|x| Some(InputSignal::new(x))).collect();
        step(m, t, big_h, &inputs);
        each(t + big_h, m);
    }
}
