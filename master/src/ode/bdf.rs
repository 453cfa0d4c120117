//! Variable-order (1–5), variable-step BDF in the quasi-constant step form of Shampine and
//! Reichelt (MATLAB's ode15s, SciPy's `BDF` with κ = 0): backward differences of the solution
//! rescaled when the step changes, a simplified Newton iteration on (I − h/α J) with a dense
//! Jacobian by finite differences (reused across steps, refreshed when Newton fails), error and
//! order selection from the differences, WRMS norms with weights 1 / (atol + rtol |x|) as
//! CVODE. Dense output is the interpolating polynomial of the differences.

// Matrix and difference-table code reads best with indices.
#![allow(clippy::needless_range_loop)]

use super::linalg::{lu_factor, lu_solve, rms};
use super::{check_dim, roots::Roots, Advance, Integrator, OdeError, OdeProblem, Options, Stats};

const MAX_ORDER: usize = 5;
/// Rows of the difference array: orders 0..=MAX_ORDER and two more for the error estimates.
const ROWS: usize = MAX_ORDER + 3;
const NEWTON_MAXITER: usize = 4;
/// A Newton correction below this fraction of the tolerance has converged (see `newton`).
const NEWTON_NOISE: f64 = 1e-3;
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;

/// γₖ = Σ_{j≤k} 1/j, and α = γ (κ = 0: the BDF proper).
const GAMMA: [f64; MAX_ORDER + 1] =
    [0.0, 1.0, 1.5, 1.5 + 1.0 / 3.0, 1.5 + 1.0 / 3.0 + 0.25, 1.5 + 1.0 / 3.0 + 0.25 + 0.2];
/// Error constants 1/(k+1).
const ERROR_CONST: [f64; MAX_ORDER + 2] = [1.0, 0.5, 1.0 / 3.0, 0.25, 0.2, 1.0 / 6.0, 1.0 / 7.0];

/// The BDF integrator.
#[derive(Clone)]
pub(super) struct Bdf {
    n: usize,
    rtol: f64,
    atol: f64,
    max_step: f64,
    newton_tol: f64,
    /// Backward differences, row k at `d[k n..(k + 1) n]`: row 0 is the solution at `tn`.
    d: Vec<f64>,
    d_tmp: Vec<f64>,
    order: usize,
    /// The step size (positive) the differences are spaced by.
    h: f64,
    n_equal_steps: usize,
    /// The internal time (end of the last step) and the start of that step.
    tn: f64,
    t_old: f64,
    /// The reported time and state (t ≤ tn).
    t: f64,
    x: Vec<f64>,
    jac: Vec<f64>,
    jac_valid: bool,
    /// The Jacobian was formed during the current step.
    jac_current: bool,
    lu: Vec<f64>,
    piv: Vec<usize>,
    lu_valid: bool,
    y_predict: Vec<f64>,
    y_new: Vec<f64>,
    psi: Vec<f64>,
    scale: Vec<f64>,
    corr: Vec<f64>,
    f: Vec<f64>,
    dy: Vec<f64>,
    work: Vec<f64>,
    roots: Roots,
    stats: Stats,
    started: bool,
    /// Where the right-hand side last was not finite (a recoverable failure of a trial step).
    not_finite: Option<(f64, usize, f64)>,
}

/// R(order, factor) of Shampine–Reichelt: the matrix that rescales the differences for a new
/// step h·factor (rows and columns 0..=order).
fn compute_r(order: usize, factor: f64) -> [[f64; MAX_ORDER + 1]; MAX_ORDER + 1] {
    let mut m = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
    m[0] = [1.0; MAX_ORDER + 1];
    for i in 1..=order {
        for j in 1..=order {
            m[i][j] = (i as f64 - 1.0 - factor * j as f64) / i as f64;
        }
    }
    for i in 1..=order {
        for j in 0..=order {
            m[i][j] *= m[i - 1][j];
        }
    }
    m
}

impl Bdf {
    /// An integrator of `dim` states and `n_roots` root functions.
    pub fn new(dim: usize, n_roots: usize, options: &Options) -> Self {
        let v = |len: usize| vec![0.0; len];
        let rtol = options.rtol;
        Self {
            n: dim,
            rtol,
            atol: options.atol,
            max_step: options.max_step,
            newton_tol: (10.0 * f64::EPSILON / rtol).max(0.03_f64.min(rtol.sqrt())),
            d: v(ROWS * dim),
            d_tmp: v((MAX_ORDER + 1) * dim),
            order: 1,
            h: 0.0,
            n_equal_steps: 0,
            tn: 0.0,
            t_old: 0.0,
            t: 0.0,
            x: v(dim),
            jac: v(dim * dim),
            jac_valid: false,
            jac_current: false,
            lu: v(dim * dim),
            piv: vec![0; dim],
            lu_valid: false,
            y_predict: v(dim),
            y_new: v(dim),
            psi: v(dim),
            scale: v(dim),
            corr: v(dim),
            f: v(dim),
            dy: v(dim),
            work: v(dim),
            roots: Roots::new(n_roots, dim),
            stats: Stats::default(),
            started: false,
            not_finite: None,
        }
    }

    /// Rescales the differences for the step h·factor.
    fn change_d(&mut self, factor: f64) {
        let order = self.order;
        let n = self.n;
        let r = compute_r(order, factor);
        let u = compute_r(order, 1.0);
        let mut ru = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
        for i in 0..=order {
            for j in 0..=order {
                ru[i][j] = (0..=order).map(|k| r[i][k] * u[k][j]).sum();
            }
        }
        for k in 0..=order {
            let out = &mut self.d_tmp[k * n..(k + 1) * n];
            out.fill(0.0);
            for (j, ru) in ru.iter().enumerate().take(order + 1) {
                let c = ru[k];
                for (o, d) in out.iter_mut().zip(&self.d[j * n..(j + 1) * n]) {
                    *o += c * d;
                }
            }
        }
        self.d[..(order + 1) * n].copy_from_slice(&self.d_tmp[..(order + 1) * n]);
        self.h *= factor;
        self.n_equal_steps = 0;
    }

    /// f(t, y) into `out`, counted; false (and remembered) when not finite.
    fn eval(&mut self, problem: &mut dyn OdeProblem, t: f64, which: Buf, out: Buf) -> Result<bool, OdeError> {
        self.stats.rhs_evaluations += 1;
        let (y, f) = self.pair(which, out);
        problem.rhs(t, y, f)?;
        match f.iter().position(|v| !v.is_finite()) {
            None => Ok(true),
            Some(i) => {
                self.not_finite = Some((t, i, f[i]));
                Ok(false)
            }
        }
    }

    /// Two distinct buffers: one read, one written.
    fn pair(&mut self, read: Buf, write: Buf) -> (&[f64], &mut [f64]) {
        let Self { y_predict, y_new, f, work, dy, .. } = self;
        match (read, write) {
            (Buf::Predict, Buf::F) => (y_predict, f),
            (Buf::New, Buf::F) => (y_new, f),
            (Buf::Work, Buf::Dy) => (work, dy),
            (Buf::Predict, Buf::Dy) => (y_predict, dy),
            _ => unreachable!("buffer pair"),
        }
    }

    /// The Jacobian at (t, y_predict) by forward differences (CVODE's increments): n + 1
    /// evaluations.
    fn jacobian(&mut self, problem: &mut dyn OdeProblem, t: f64) -> Result<bool, OdeError> {
        let n = self.n;
        self.stats.jacobians += 1;
        if !self.eval(problem, t, Buf::Predict, Buf::F)? {
            return Ok(false);
        }
        let fnorm = rms(&self.f, &self.scale);
        let min_inc = if fnorm != 0.0 { 1000.0 * f64::EPSILON * self.h * n as f64 * fnorm } else { 1.0 };
        let srur = f64::EPSILON.sqrt();
        self.work.copy_from_slice(&self.y_predict);
        for j in 0..n {
            let yj = self.work[j];
            let inc = (srur * yj.abs()).max(min_inc * self.scale[j]);
            self.work[j] = yj + inc;
            let inc = self.work[j] - yj;
            let ok = self.eval(problem, t, Buf::Work, Buf::Dy)?;
            self.work[j] = yj;
            if !ok {
                return Ok(false);
            }
            for i in 0..n {
                self.jac[i * n + j] = (self.dy[i] - self.f[i]) / inc;
            }
        }
        self.jac_valid = true;
        self.jac_current = true;
        self.lu_valid = false;
        Ok(true)
    }

    /// Factors I − c J; false when singular.
    fn factor(&mut self, c: f64) -> bool {
        let n = self.n;
        for (l, j) in self.lu.iter_mut().zip(&self.jac) {
            *l = -c * j;
        }
        for i in 0..n {
            self.lu[i * n + i] += 1.0;
        }
        self.lu_valid = lu_factor(&mut self.lu, n, &mut self.piv);
        self.lu_valid
    }

    /// The simplified Newton iteration of one step: y_new and the correction `corr`;
    /// (converged, iterations).
    fn newton(&mut self, problem: &mut dyn OdeProblem, t_new: f64, c: f64) -> Result<(bool, usize), OdeError> {
        let n = self.n;
        self.y_new.copy_from_slice(&self.y_predict);
        self.corr.fill(0.0);
        let mut old_norm: Option<f64> = None;
        for k in 0..NEWTON_MAXITER {
            if !self.eval(problem, t_new, Buf::New, Buf::F)? {
                return Ok((false, k + 1));
            }
            for i in 0..n {
                self.dy[i] = c * self.f[i] - self.psi[i] - self.corr[i];
            }
            lu_solve(&self.lu, n, &self.piv, &mut self.dy);
            let norm = rms(&self.dy, &self.scale);
            if !norm.is_finite() {
                return Ok((false, k + 1));
            }
            // A correction far below the tolerance is rounding (a solution at rest, a right-hand
            // side whose last bits change from one evaluation to the next, as the connections of
            // strongly coupled FMUs do): converged, whatever the rate of such corrections says.
            if norm <= NEWTON_NOISE * self.newton_tol {
                for i in 0..n {
                    self.y_new[i] += self.dy[i];
                    self.corr[i] += self.dy[i];
                }
                return Ok((true, k + 1));
            }
            let rate = old_norm.map(|o| norm / o);
            if let Some(rate) = rate {
                if rate >= 1.0 || rate.powi((NEWTON_MAXITER - k) as i32) / (1.0 - rate) * norm > self.newton_tol {
                    return Ok((false, k + 1));
                }
            }
            for i in 0..n {
                self.y_new[i] += self.dy[i];
                self.corr[i] += self.dy[i];
            }
            if norm == 0.0 || rate.is_some_and(|r| r / (1.0 - r) * norm < self.newton_tol) {
                return Ok((true, k + 1));
            }
            old_norm = Some(norm);
        }
        Ok((false, NEWTON_MAXITER))
    }

    /// The interpolating polynomial of the differences at `t` into `out`.
    fn interpolate(d: &[f64], n: usize, order: usize, tn: f64, h: f64, t: f64, out: &mut [f64]) {
        out.copy_from_slice(&d[..n]);
        let mut p = 1.0;
        for j in 1..=order {
            p *= (t - (tn - (j - 1) as f64 * h)) / (j as f64 * h);
            for (o, d) in out.iter_mut().zip(&d[j * n..(j + 1) * n]) {
                *o += p * d;
            }
        }
    }

    /// Roots in (t, tn]: on one, the reported state moves there.
    fn search(&mut self, problem: &mut dyn OdeProblem) -> Result<Option<Advance>, OdeError> {
        if self.roots.is_empty() {
            return Ok(None);
        }
        let Self { d, n, order, tn, h, t, roots, stats, .. } = self;
        let (d, n, order, tn, h) = (&*d, *n, *order, *tn, *h);
        let mut interp = |tq: f64, out: &mut [f64]| Self::interpolate(d, n, order, tn, h, tq, out);
        match roots.locate(problem, *t, tn, &d[..n], &mut interp, stats)? {
            Some((tr, directions)) => {
                self.t = tr;
                self.x.copy_from_slice(&self.roots.x);
                Ok(Some(Advance::Root { t: tr, directions }))
            }
            None => {
                self.roots.pass();
                Ok(None)
            }
        }
    }

    /// The first step size (Hairer, Nørsett & Wanner, as SciPy's `select_initial_step` for
    /// order 1), f(t, x) in `f`; one evaluation.
    fn initial_step(&mut self, problem: &mut dyn OdeProblem, t: f64) -> Result<f64, OdeError> {
        if self.n == 0 {
            return Ok(self.max_step.min(1.0));
        }
        let x = &self.d[..self.n];
        for (s, x) in self.scale.iter_mut().zip(x) {
            *s = self.atol + self.rtol * x.abs();
        }
        let d0 = rms(x, &self.scale);
        let d1 = rms(&self.f, &self.scale);
        let h0 = if d0 < 1e-5 || d1 < 1e-5 { 1e-6 } else { 0.01 * d0 / d1 };
        for i in 0..self.n {
            self.y_predict[i] = self.d[i] + h0 * self.f[i];
        }
        if !self.eval(problem, t + h0, Buf::Predict, Buf::Dy)? {
            return Ok(h0.min(self.max_step));
        }
        for i in 0..self.n {
            self.work[i] = self.dy[i] - self.f[i];
        }
        let d2 = rms(&self.work, &self.scale) / h0;
        let h1 = if d1 <= 1e-15 && d2 <= 1e-15 { (h0 * 1e-3).max(1e-6) } else { (0.01 / d1.max(d2)).sqrt() };
        Ok((100.0 * h0).min(h1).min(self.max_step))
    }

    /// The smallest step at time t.
    fn min_step(t: f64) -> f64 {
        10.0 * (t.abs() * f64::EPSILON).max(f64::MIN_POSITIVE)
    }

    /// One accepted internal step to at most `t_stop` (> tn).
    fn advance(&mut self, problem: &mut dyn OdeProblem, t_stop: f64) -> Result<(), OdeError> {
        let n = self.n;
        let t = self.tn;
        let min_step = Self::min_step(t);
        if self.h > self.max_step {
            self.change_d(self.max_step / self.h);
        } else if self.h < min_step {
            self.change_d(min_step / self.h);
        }
        if t_stop - t <= 100.0 * min_step {
            // Within rounding of the stop time: move there on the polynomial.
            Self::interpolate(&self.d, n, self.order, self.tn, self.h, t_stop, &mut self.work);
            self.d[..n].copy_from_slice(&self.work);
            self.t_old = t;
            self.tn = t_stop;
            return Ok(());
        }
        let h_wanted = self.h;
        let mut clamped = false;
        let mut rejected = false;
        self.jac_current = false;
        let mut newton_failed = false;
        let (t_new, iterations) = loop {
            if self.h < min_step {
                let why = if newton_failed { "the corrector did not converge" } else { "the error test failed" };
                let mut message = format!("step size underflow at t = {t}: h = {:e} ({why})", self.h);
                if let Some((tf, i, v)) = self.not_finite {
                    message += &format!(
                        "; the right-hand side was not finite at t = {tf}: the derivative of state {i} is {v}"
                    );
                }
                return Err(OdeError::new(message));
            }
            let mut t_new = t + self.h;
            if t + self.h * (1.0 + 1e-8) >= t_stop {
                if t_new != t_stop {
                    self.change_d((t_stop - t) / self.h);
                    self.lu_valid = false;
                    clamped = true;
                }
                t_new = t_stop;
            }
            let order = self.order;
            let alpha = GAMMA[order];
            self.y_predict.fill(0.0);
            self.psi.fill(0.0);
            for k in 0..=order {
                let row = &self.d[k * n..(k + 1) * n];
                for i in 0..n {
                    self.y_predict[i] += row[i];
                    if k > 0 {
                        self.psi[i] += row[i] * GAMMA[k] / alpha;
                    }
                }
            }
            for (s, y) in self.scale.iter_mut().zip(&self.y_predict) {
                *s = self.atol + self.rtol * y.abs();
            }
            let c = (t_new - t) / alpha;
            let mut converged = false;
            let mut iterations = 0;
            loop {
                if !self.jac_valid && !self.jacobian(problem, t_new)? {
                    break;
                }
                if !self.lu_valid && !self.factor(c) {
                    if self.jac_current {
                        break;
                    }
                    self.jac_valid = false;
                    continue;
                }
                (converged, iterations) = self.newton(problem, t_new, c)?;
                if converged || self.jac_current {
                    break;
                }
                self.jac_valid = false;
            }
            if !converged {
                newton_failed = true;
                rejected = true;
                self.stats.rejected_steps += 1;
                self.stats.convergence_failures += 1;
                self.change_d(0.5);
                self.lu_valid = false;
                continue;
            }
            for (s, y) in self.scale.iter_mut().zip(&self.y_new) {
                *s = self.atol + self.rtol * y.abs();
            }
            let error = ERROR_CONST[order] * rms(&self.corr, &self.scale);
            if error > 1.0 {
                newton_failed = false;
                rejected = true;
                self.stats.rejected_steps += 1;
                self.stats.error_test_failures += 1;
                let safety = 0.9 * (2 * NEWTON_MAXITER + 1) as f64 / (2 * NEWTON_MAXITER + iterations) as f64;
                self.change_d(MIN_FACTOR.max(safety * error.powf(-1.0 / (order as f64 + 1.0))));
                // The factored matrix stays (for the old h): Newton converged with it.
                continue;
            }
            break (t_new, iterations);
        };
        self.stats.steps += 1;
        self.n_equal_steps += 1;
        self.t_old = t;
        self.tn = t_new;
        // D^{j+1} y_n = D^j y_n − D^j y_{n−1}; corr = D^{k+1} y_n.
        let order = self.order;
        for i in 0..n {
            self.d[(order + 2) * n + i] = self.corr[i] - self.d[(order + 1) * n + i];
            self.d[(order + 1) * n + i] = self.corr[i];
        }
        for k in (0..=order).rev() {
            for i in 0..n {
                self.d[k * n + i] += self.d[(k + 1) * n + i];
            }
        }
        if self.n_equal_steps > order {
            self.select_order(iterations);
        } else if clamped && !rejected && h_wanted > self.h {
            self.change_d((h_wanted / self.h).min(MAX_FACTOR));
            self.lu_valid = false;
        }
        Ok(())
    }

    /// After order + 1 steps of equal size: the order (±1) and step that promise the largest
    /// step, from the error estimates of orders k − 1, k and k + 1.
    fn select_order(&mut self, iterations: usize) {
        let n = self.n;
        let order = self.order;
        let error = ERROR_CONST[order] * rms(&self.d[(order + 1) * n..(order + 2) * n], &self.scale);
        let error_m = if order > 1 {
            ERROR_CONST[order - 1] * rms(&self.d[order * n..(order + 1) * n], &self.scale)
        } else {
            f64::INFINITY
        };
        let error_p = if order < MAX_ORDER {
            ERROR_CONST[order + 1] * rms(&self.d[(order + 2) * n..(order + 3) * n], &self.scale)
        } else {
            f64::INFINITY
        };
        let mut best = 1;
        let mut factors = [0.0; 3];
        for (i, e) in [error_m, error, error_p].into_iter().enumerate() {
            let f = e.powf(-1.0 / (order + i) as f64);
            factors[i] = if f.is_nan() { 0.0 } else { f };
        }
        for i in [0, 2] {
            if factors[i] > factors[best] {
                best = i;
            }
        }
        self.order = order + best - 1;
        let safety = 0.9 * (2 * NEWTON_MAXITER + 1) as f64 / (2 * NEWTON_MAXITER + iterations) as f64;
        self.change_d(MAX_FACTOR.min(safety * factors[best]));
        self.lu_valid = false;
    }
}

/// The work buffers [`Bdf::eval`] reads and writes.
#[derive(Clone, Copy)]
enum Buf {
    Predict,
    New,
    Work,
    F,
    Dy,
}

impl Integrator for Bdf {
    fn reset(&mut self, problem: &mut dyn OdeProblem, t: f64, x: &[f64]) -> Result<(), OdeError> {
        check_dim(self.n, x, t)?;
        self.started = false;
        let n = self.n;
        self.d.fill(0.0);
        self.d[..n].copy_from_slice(x);
        self.y_new.copy_from_slice(x);
        if !self.eval(problem, t, Buf::New, Buf::F)? {
            let (tf, i, v) = self.not_finite.unwrap_or((t, 0, f64::NAN));
            return Err(super::not_finite(tf, i, v));
        }
        self.h = self.initial_step(problem, t)?;
        for i in 0..n {
            self.d[n + i] = self.h * self.f[i];
        }
        self.order = 1;
        self.n_equal_steps = 0;
        self.lu_valid = false;
        self.jac_valid = false;
        self.not_finite = None;
        self.x.copy_from_slice(x);
        (self.t, self.tn, self.t_old) = (t, t, t);
        self.roots.start(problem, t, x, &mut self.stats)?;
        self.started = true;
        Ok(())
    }

    fn step(&mut self, problem: &mut dyn OdeProblem, t_stop: f64) -> Result<Advance, OdeError> {
        if t_stop.is_nan() || t_stop < self.t {
            return Err(OdeError::new(format!("cannot step back from t = {} to t = {t_stop}", self.t)));
        }
        let advance = self.step_inner(problem, t_stop);
        if advance.is_err() {
            // Refused until a reset: the state may be half-updated.
            self.started = false;
        }
        advance
    }

    fn time(&self) -> f64 {
        self.t
    }

    fn state(&self) -> &[f64] {
        &self.x
    }

    fn stats(&self) -> Stats {
        self.stats
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        Self::interpolate(&self.d, self.n, self.order, self.tn, self.h, t, out);
    }

    fn snapshot(&self) -> Box<dyn Integrator> {
        Box::new(self.clone())
    }

    fn restore(&mut self, saved: &dyn Integrator) -> Result<(), OdeError> {
        super::restore_clone(self, saved, |s| &mut s.stats)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Bdf {
    /// [`Integrator::step`], the integrator left as it is on an error.
    fn step_inner(&mut self, problem: &mut dyn OdeProblem, t_stop: f64) -> Result<Advance, OdeError> {
        if !self.started {
            return Err(OdeError::new("the integrator was not (re)started after its last error"));
        }
        let n = self.n;
        if self.t < self.tn {
            // Stopped at a root inside the last step, without a reset since.
            if let Some(root) = self.search(problem)? {
                if matches!(root, Advance::Root { t, .. } if t <= t_stop) {
                    return Ok(root);
                }
            }
            if t_stop < self.tn {
                Self::interpolate(&self.d, n, self.order, self.tn, self.h, t_stop, &mut self.work);
                let x = std::mem::take(&mut self.work);
                let reset = self.reset(problem, t_stop, &x);
                self.work = x;
                reset?;
                return Ok(Advance::Step { t: t_stop });
            }
            self.t = self.tn;
            self.x.copy_from_slice(&self.d[..n]);
            return Ok(Advance::Step { t: self.t });
        }
        if self.t == t_stop {
            return Ok(Advance::Step { t: self.t });
        }
        self.advance(problem, t_stop)?;
        let tn = self.tn;
        self.roots.end(problem, tn, &self.d[..n], &mut self.stats)?;
        if let Some(root) = self.search(problem)? {
            return Ok(root);
        }
        self.t = tn;
        self.x.copy_from_slice(&self.d[..n]);
        Ok(Advance::Step { t: tn })
    }
}
