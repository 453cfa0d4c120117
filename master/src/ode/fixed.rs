//! The fixed-step driver of the explicit methods (Euler, RK4): steps of [`Options::fixed_step`]
//! on a grid t = t₀ + n h (the last one shortened to land on `t_stop`), roots located on the
//! cubic Hermite interpolant of each step (values and derivatives at both ends).

use super::{
    check_dim, euler, eval_rhs, rk4, roots::Roots, Advance, Integrator, Method, OdeError, OdeProblem, Options, Stats,
};

/// Euler or RK4 with a fixed step.
#[derive(Clone)]
pub(super) struct Fixed {
    method: Method,
    h: f64,
    dim: usize,
    /// Start of the grid (last reset or last landing on a stop time) and steps since.
    t_base: f64,
    n: u64,
    /// The last internal step: from (t0, x0, f0) to (t1, x1, f1).
    t0: f64,
    x0: Vec<f64>,
    f0: Vec<f64>,
    t1: f64,
    x1: Vec<f64>,
    f1: Vec<f64>,
    /// The reported time and state (t ≤ t1: t < t1 after a root inside the step).
    t: f64,
    x: Vec<f64>,
    rk4: rk4::Stages,
    roots: Roots,
    stats: Stats,
    started: bool,
}

impl Fixed {
    /// An integrator of `dim` states and `n_roots` root functions.
    pub fn new(dim: usize, n_roots: usize, options: &Options) -> Self {
        let v = || vec![0.0; dim];
        Self {
            method: options.method,
            h: options.fixed_step.min(options.max_step),
            dim,
            t_base: 0.0,
            n: 0,
            t0: 0.0,
            x0: v(),
            f0: v(),
            t1: 0.0,
            x1: v(),
            f1: v(),
            t: 0.0,
            x: v(),
            rk4: rk4::Stages::new(dim),
            roots: Roots::new(n_roots, dim),
            stats: Stats::default(),
            started: false,
        }
    }

    /// Roots in (t, t1] of the last step: on one, the reported state moves there.
    fn search(&mut self, problem: &mut dyn OdeProblem) -> Result<Option<Advance>, OdeError> {
        if self.roots.is_empty() {
            return Ok(None);
        }
        let Self { t0, t1, x0, f0, x1, f1, t, roots, stats, .. } = self;
        let (t0, t1) = (*t0, *t1);
        let (x0, f0, x1, f1) = (&*x0, &*f0, &*x1, &*f1);
        let mut interp = |t: f64, out: &mut [f64]| hermite((t0, t1), x0, f0, x1, f1, t, out);
        match roots.locate(problem, *t, t1, x1, &mut interp, stats)? {
            Some((t, directions)) => {
                self.t = t;
                self.x.copy_from_slice(&self.roots.x);
                Ok(Some(Advance::Root { t, directions }))
            }
            None => {
                self.roots.pass();
                Ok(None)
            }
        }
    }
}

/// The cubic Hermite interpolant of a step at `t`.
fn hermite((t0, t1): (f64, f64), x0: &[f64], f0: &[f64], x1: &[f64], f1: &[f64], t: f64, out: &mut [f64]) {
    let h = t1 - t0;
    let s = if h == 0.0 { 1.0 } else { (t - t0) / h };
    let (s2, s3) = (s * s, s * s * s);
    let (h00, h10, h01, h11) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, 3.0 * s2 - 2.0 * s3, s3 - s2);
    for i in 0..out.len() {
        out[i] = h00 * x0[i] + h10 * h * f0[i] + h01 * x1[i] + h11 * h * f1[i];
    }
}

impl Integrator for Fixed {
    fn reset(&mut self, problem: &mut dyn OdeProblem, t: f64, x: &[f64]) -> Result<(), OdeError> {
        check_dim(self.dim, x, t)?;
        self.started = false;
        self.x1.copy_from_slice(x);
        self.x.copy_from_slice(x);
        eval_rhs(problem, t, x, &mut self.f1, &mut self.stats)?;
        self.roots.start(problem, t, x, &mut self.stats)?;
        (self.t_base, self.n, self.t0, self.t1, self.t) = (t, 0, t, t, t);
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
        hermite((self.t0, self.t1), &self.x0, &self.f0, &self.x1, &self.f1, t, out);
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

impl Fixed {
    /// [`Integrator::step`], the integrator left as it is on an error.
    fn step_inner(&mut self, problem: &mut dyn OdeProblem, t_stop: f64) -> Result<Advance, OdeError> {
        if !self.started {
            return Err(OdeError::new("the integrator was not (re)started after its last error"));
        }
        if self.t < self.t1 {
            // Stopped at a root inside the last step, without a reset since.
            if let Some(root) = self.search(problem)? {
                if matches!(root, Advance::Root { t, .. } if t <= t_stop) {
                    return Ok(root);
                }
            }
            if t_stop < self.t1 {
                hermite((self.t0, self.t1), &self.x0, &self.f0, &self.x1, &self.f1, t_stop, &mut self.roots.x);
                let x = std::mem::take(&mut self.roots.x);
                let reset = self.reset(problem, t_stop, &x);
                self.roots.x = x;
                reset?;
                return Ok(Advance::Step { t: t_stop });
            }
            self.t = self.t1;
            self.x.copy_from_slice(&self.x1);
            return Ok(Advance::Step { t: self.t });
        }
        if self.t == t_stop {
            return Ok(Advance::Step { t: self.t });
        }
        let h = self.h;
        let mut t_new = self.t_base + (self.n + 1) as f64 * h;
        let landing = t_new >= t_stop - 1e-9 * h;
        if landing {
            t_new = t_stop;
        }
        // The new step starts where the last one ended.
        std::mem::swap(&mut self.x0, &mut self.x1);
        std::mem::swap(&mut self.f0, &mut self.f1);
        self.t0 = self.t1;
        let dt = t_new - self.t0;
        match self.method {
            Method::Euler => euler::step(&self.x0, &self.f0, dt, &mut self.x1),
            _ => self.rk4.step(problem, self.t0, &self.x0, &self.f0, dt, &mut self.x1, &mut self.stats)?,
        }
        eval_rhs(problem, t_new, &self.x1, &mut self.f1, &mut self.stats)?;
        self.stats.steps += 1;
        self.t1 = t_new;
        if landing {
            (self.t_base, self.n) = (t_new, 0);
        } else {
            self.n += 1;
        }
        self.roots.end(problem, t_new, &self.x1, &mut self.stats)?;
        if let Some(root) = self.search(problem)? {
            return Ok(root);
        }
        self.t = t_new;
        self.x.copy_from_slice(&self.x1);
        Ok(Advance::Step { t: t_new })
    }
}
