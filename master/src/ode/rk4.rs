//! The classical fourth-order Runge–Kutta method.

// Matrix and difference-table code reads best with indices.
#![allow(clippy::needless_range_loop)]

use super::{eval_rhs, OdeError, OdeProblem, Stats};

/// Stage buffers, each of the problem's dimension.
#[derive(Clone)]
pub(super) struct Stages {
    k2: Vec<f64>,
    k3: Vec<f64>,
    k4: Vec<f64>,
    tmp: Vec<f64>,
}

impl Stages {
    /// Buffers for `dim` states.
    pub fn new(dim: usize) -> Self {
        Self { k2: vec![0.0; dim], k3: vec![0.0; dim], k4: vec![0.0; dim], tmp: vec![0.0; dim] }
    }

    /// One step from (t0, x0), k1 = f0 = f(t0, x0) given, into `x1`: three evaluations of f.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        problem: &mut dyn OdeProblem,
        t0: f64,
        x0: &[f64],
        f0: &[f64],
        h: f64,
        x1: &mut [f64],
        stats: &mut Stats,
    ) -> Result<(), OdeError> {
        let Self { k2, k3, k4, tmp } = self;
        axpy(tmp, x0, 0.5 * h, f0);
        eval_rhs(problem, t0 + 0.5 * h, tmp, k2, stats)?;
        axpy(tmp, x0, 0.5 * h, k2);
        eval_rhs(problem, t0 + 0.5 * h, tmp, k3, stats)?;
        axpy(tmp, x0, h, k3);
        eval_rhs(problem, t0 + h, tmp, k4, stats)?;
        for i in 0..x1.len() {
            x1[i] = x0[i] + h / 6.0 * (f0[i] + 2.0 * (k2[i] + k3[i]) + k4[i]);
        }
        Ok(())
    }
}

/// out = x + a k.
fn axpy(out: &mut [f64], x: &[f64], a: f64, k: &[f64]) {
    for ((o, &x), &k) in out.iter_mut().zip(x).zip(k) {
        *o = x + a * k;
    }
}
