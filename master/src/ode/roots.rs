//! Root location shared by the integrators: a sign change of a root function g between the
//! ends of a step, located on the step's interpolant by the Illinois variant of regula falsi
//! (the bracketing search of CVODE's `cvRootfind`), to about 1e-12 relative in time.

use super::{OdeError, OdeProblem, Stats};

/// Buffers of the root search; none is reallocated after construction.
#[derive(Clone)]
pub(super) struct Roots {
    /// g at the last reported time (the reference signs).
    pub g_ref: Vec<f64>,
    /// g at the end of the last internal step.
    pub g_end: Vec<f64>,
    g_lo: Vec<f64>,
    g_hi: Vec<f64>,
    g_mid: Vec<f64>,
    /// The state interpolated at the located root.
    pub x: Vec<f64>,
}

/// Relative tolerance of a located time.
const TIME_TOL: f64 = 1e-12;

/// Whether g went from `a` to `b` across zero (from a nonzero value to zero or the other sign).
fn crossed(a: f64, b: f64) -> bool {
    (a < 0.0 && b >= 0.0) || (a > 0.0 && b <= 0.0)
}

impl Roots {
    /// Buffers for `n` root functions of a problem with `dim` states.
    pub fn new(n: usize, dim: usize) -> Self {
        Self {
            g_ref: vec![0.0; n],
            g_end: vec![0.0; n],
            g_lo: vec![0.0; n],
            g_hi: vec![0.0; n],
            g_mid: vec![0.0; n],
            x: vec![0.0; dim],
        }
    }

    /// Whether there are no root functions.
    pub fn is_empty(&self) -> bool {
        self.g_ref.is_empty()
    }

    /// g(t, x) into `g`, counted and checked.
    fn eval(problem: &mut dyn OdeProblem, t: f64, x: &[f64], g: &mut [f64], stats: &mut Stats) -> Result<(), OdeError> {
        stats.root_evaluations += 1;
        problem.roots(t, x, g)?;
        match g.iter().position(|v| v.is_nan()) {
            None => Ok(()),
            Some(i) => Err(OdeError::new(format!("root function {i} is NaN at t = {t}"))),
        }
    }

    /// The reference values g(t, x) at a (re)start.
    pub fn start(
        &mut self,
        problem: &mut dyn OdeProblem,
        t: f64,
        x: &[f64],
        stats: &mut Stats,
    ) -> Result<(), OdeError> {
        if self.is_empty() {
            return Ok(());
        }
        Self::eval(problem, t, x, &mut self.g_ref, stats)
    }

    /// g at the end (t, x) of a new internal step.
    pub fn end(&mut self, problem: &mut dyn OdeProblem, t: f64, x: &[f64], stats: &mut Stats) -> Result<(), OdeError> {
        if self.is_empty() {
            return Ok(());
        }
        Self::eval(problem, t, x, &mut self.g_end, stats)
    }

    /// The reference moves to the end of the step (no root in it).
    pub fn pass(&mut self) {
        self.g_ref.copy_from_slice(&self.g_end);
    }

    /// The first root in (`t_lo`, `t_hi`], g being [`Roots::g_ref`] at `t_lo` and
    /// [`Roots::g_end`] at `t_hi`, `interp` the state between. On a root, returns its time
    /// (the end of the final bracket, where g has changed sign) and the directions;
    /// [`Roots::x`] holds the state there and [`Roots::g_ref`] the values of g. Without a root
    /// (`None`), nothing changes.
    pub fn locate(
        &mut self,
        problem: &mut dyn OdeProblem,
        t_lo: f64,
        t_hi: f64,
        x_hi: &[f64],
        interp: &mut dyn FnMut(f64, &mut [f64]),
        stats: &mut Stats,
    ) -> Result<Option<(f64, Vec<i8>)>, OdeError> {
        if !self.g_ref.iter().zip(&self.g_end).any(|(&a, &b)| crossed(a, b)) {
            return Ok(None);
        }
        self.g_lo.copy_from_slice(&self.g_ref);
        self.g_hi.copy_from_slice(&self.g_end);
        let ttol = (TIME_TOL * (t_hi.abs() + (t_hi - t_lo).abs())).max(4.0 * f64::EPSILON * t_hi.abs());
        let (mut lo, mut hi) = (t_lo, t_hi);
        // The component crossing first by the secant estimate.
        let mut imax = self.earliest(&self.g_hi);
        let (mut alpha, mut side, mut side_prev) = (1.0_f64, 0_u8, 255_u8);
        for _ in 0..200 {
            if (hi - lo).abs() <= ttol {
                break;
            }
            // Illinois: the end that stayed twice in a row has its weight halved.
            alpha = if side == side_prev {
                if side == 2 {
                    alpha * 2.0
                } else {
                    alpha * 0.5
                }
            } else {
                1.0
            };
            let (gl, gh) = (self.g_lo[imax], self.g_hi[imax]);
            let mut mid = hi - (hi - lo) * gh / (gh - alpha * gl);
            if !mid.is_finite() || mid <= lo || mid >= hi {
                mid = 0.5 * (lo + hi);
            }
            let width = hi - lo;
            if mid - lo < 0.5 * ttol {
                let frac = if width / ttol > 5.0 { 0.1 } else { 0.5 * ttol / width };
                mid = lo + frac * width;
            } else if hi - mid < 0.5 * ttol {
                let frac = if width / ttol > 5.0 { 0.1 } else { 0.5 * ttol / width };
                mid = hi - frac * width;
            }
            interp(mid, &mut self.x);
            Self::eval(problem, mid, &self.x, &mut self.g_mid, stats)?;
            side_prev = side;
            let mut zero = false;
            let mut change = false;
            let mut best = 0.0;
            for (i, (&gl, &gm)) in self.g_lo.iter().zip(&self.g_mid).enumerate() {
                if gm == 0.0 && gl != 0.0 {
                    zero = true;
                } else if crossed(gl, gm) {
                    let frac = (gm / (gm - gl)).abs();
                    if frac > best || !change {
                        best = frac;
                        imax = i;
                    }
                    change = true;
                }
            }
            if change {
                hi = mid;
                self.g_hi.copy_from_slice(&self.g_mid);
                side = 1;
            } else if zero {
                hi = mid;
                self.g_hi.copy_from_slice(&self.g_mid);
                break;
            } else {
                lo = mid;
                self.g_lo.copy_from_slice(&self.g_mid);
                side = 2;
            }
        }
        let directions = self
            .g_lo
            .iter()
            .zip(&self.g_hi)
            .map(|(&a, &b)| {
                if crossed(a, b) {
                    if b > a {
                        1
                    } else {
                        -1
                    }
                } else {
                    0
                }
            })
            .collect();
        if hi == t_hi {
            self.x.copy_from_slice(x_hi);
        } else {
            interp(hi, &mut self.x);
        }
        self.g_ref.copy_from_slice(&self.g_hi);
        Ok(Some((hi, directions)))
    }

    /// The crossing component whose secant root comes first.
    fn earliest(&self, g_hi: &[f64]) -> usize {
        let mut imax = 0;
        let mut best = -1.0;
        for (i, (&a, &b)) in self.g_lo.iter().zip(g_hi).enumerate() {
            if crossed(a, b) {
                let frac = (b / (b - a)).abs();
                if frac > best {
                    best = frac;
                    imax = i;
                }
            }
        }
        imax
    }
}
