//! Integrators of ordinary differential equations x' = f(t, x) with root functions g(t, x): the
//! solvers that drive Model Exchange FMUs between communication points (issue 52).
//!
//! The contract between the two sides:
//! - the caller (an ME instance, or a group of ME instances integrated as one ODE) implements
//!   [`OdeProblem`]: the right-hand side and the event indicators, evaluated at any (t, x) the
//!   integrator asks for;
//! - an [`Integrator`] (made by [`integrator`] from [`Options`]) advances one internal step at a
//!   time ([`Integrator::step`], CVODE's `CV_ONE_STEP`), never past `t_stop`, and stops at the
//!   first sign change of a root function ([`Advance::Root`], the state interpolated to the
//!   located time). Between steps the caller handles what FMI asks for (completed integrator
//!   step, events, discrete state updates) and, when the states jumped, calls
//!   [`Integrator::reset`].
//!
//! The problem is borrowed for each call, not owned, so that the caller keeps its FMU instances
//! and can call them between steps.

use std::fmt;

mod bdf;
mod euler;
mod fixed;
mod linalg;
mod rk4;
mod roots;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bdf;

/// An ODE x' = f(t, x) with `n_roots` root functions g(t, x) (FMI's event indicators).
pub trait OdeProblem {
    /// Number of states.
    fn dim(&self) -> usize;
    /// Number of root functions.
    fn n_roots(&self) -> usize {
        0
    }
    /// `dx` = f(t, x). `x` and `dx` have [`OdeProblem::dim`] elements.
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), OdeError>;
    /// `g` = g(t, x), [`OdeProblem::n_roots`] values.
    fn roots(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) -> Result<(), OdeError> {
        Ok(())
    }
}

/// The integration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Stiff, variable step (and order): the default.
    Bdf,
    /// Explicit Euler with the fixed step [`Options::fixed_step`].
    Euler,
    /// Classical fourth-order Runge–Kutta with the fixed step [`Options::fixed_step`].
    Rk4,
}

/// Options of an integrator.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The method.
    pub method: Method,
    /// Relative tolerance (variable-step methods).
    pub rtol: f64,
    /// Absolute tolerance (variable-step methods).
    pub atol: f64,
    /// Largest internal step (s); `f64::INFINITY` for none.
    pub max_step: f64,
    /// The step of the fixed-step methods (s).
    pub fixed_step: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self { method: Method::Bdf, rtol: 1e-6, atol: 1e-8, max_step: f64::INFINITY, fixed_step: 1e-3 }
    }
}

/// What one call of [`Integrator::step`] reached.
#[derive(Clone, Debug, PartialEq)]
pub enum Advance {
    /// An internal step ended at `t` (≤ `t_stop`; `t == t_stop` when the stop was reached).
    Step {
        /// The time reached.
        t: f64,
    },
    /// Root functions changed sign within the last step; the integrator stopped at the located
    /// time `t`, its state interpolated there.
    Root {
        /// The located time.
        t: f64,
        /// Per root function: +1 rising, −1 falling, 0 no sign change.
        directions: Vec<i8>,
    },
}

/// Counters of an integrator, reported in summary.json.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Internal steps taken.
    pub steps: u64,
    /// Evaluations of the right-hand side (Jacobian columns by finite differences included).
    pub rhs_evaluations: u64,
    /// Evaluations of the root functions.
    pub root_evaluations: u64,
    /// Jacobians formed.
    pub jacobians: u64,
    /// Steps rejected by the error test or by a failed Newton iteration.
    pub rejected_steps: u64,
    /// Of which rejected by the error test (BDF).
    pub error_test_failures: u64,
    /// Of which rejected because the Newton iteration did not converge (BDF).
    pub convergence_failures: u64,
}

/// An integration failure, or a failure of the problem's callbacks.
#[derive(Clone, Debug, PartialEq)]
pub struct OdeError {
    /// What went wrong, with the time and step size where they matter.
    pub message: String,
}

impl OdeError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

impl fmt::Display for OdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OdeError {}

/// An integrator: one internal step at a time.
pub trait Integrator: Send {
    /// (Re)starts at (t, x): at the start and after every event that changed the states or the
    /// equations. Evaluates the problem as it needs (initial step size, root values at t).
    fn reset(&mut self, problem: &mut dyn OdeProblem, t: f64, x: &[f64]) -> Result<(), OdeError>;
    /// One internal step towards `t_stop`, never past it, stopping at the first root.
    fn step(&mut self, problem: &mut dyn OdeProblem, t_stop: f64) -> Result<Advance, OdeError>;
    /// The time last reached.
    fn time(&self) -> f64;
    /// The state at [`Integrator::time`].
    fn state(&self) -> &[f64];
    /// Counters so far.
    fn stats(&self) -> Stats;
    /// The state at `t` on the last internal step's interpolant (`t` within that step, e.g.
    /// between the last two values of [`Integrator::time`]), into `out`: output at points the
    /// integrator stepped past (CVODE's `CVodeGetDky`, order 0). Changes nothing.
    fn interpolate(&self, t: f64, out: &mut [f64]);
    /// A copy of the whole integrator (history, step size, order, Jacobian and its factors,
    /// root-function values, time): what [`Integrator::restore`] goes back to. Iterative
    /// coupling saves it with the FMU states before a communication step.
    fn snapshot(&self) -> Box<dyn Integrator>;
    /// Back to `saved` (a [`Integrator::snapshot`] of an integrator of the same kind and size):
    /// the steps after it are bit-identical to those after the snapshot was taken. The counters
    /// ([`Integrator::stats`]) are kept: they count the work done, repetitions included.
    fn restore(&mut self, saved: &dyn Integrator) -> Result<(), OdeError>;
    /// The integrator as [`std::any::Any`] (for [`Integrator::restore`]).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// [`Integrator::restore`] of an integrator of type `T` that is `Clone`: everything but the
/// counters copied from `saved`.
fn restore_clone<T: Integrator + Clone + 'static>(
    this: &mut T,
    saved: &dyn Integrator,
    stats: impl Fn(&mut T) -> &mut Stats,
) -> Result<(), OdeError> {
    let Some(s) = saved.as_any().downcast_ref::<T>() else {
        return Err(OdeError::new("the saved integrator state is of another method"));
    };
    let kept = *stats(this);
    this.clone_from(s);
    *stats(this) = kept;
    Ok(())
}

/// A new integrator for a problem of `dim` states and `n_roots` root functions.
pub fn integrator(dim: usize, n_roots: usize, options: &Options) -> Result<Box<dyn Integrator>, OdeError> {
    let positive = |name: &str, v: f64| {
        if v > 0.0 && !v.is_nan() {
            Ok(())
        } else {
            Err(OdeError::new(format!("the solver option {name} must be positive, not {v}")))
        }
    };
    positive("max_step", options.max_step)?;
    match options.method {
        Method::Euler | Method::Rk4 => {
            positive("fixed_step", options.fixed_step)?;
            if !options.fixed_step.is_finite() {
                return Err(OdeError::new(format!(
                    "the solver option fixed_step must be finite, not {}",
                    options.fixed_step
                )));
            }
            Ok(Box::new(fixed::Fixed::new(dim, n_roots, options)))
        }
        Method::Bdf => {
            positive("rtol", options.rtol)?;
            if !(options.atol >= 0.0 && options.atol.is_finite()) {
                return Err(OdeError::new(format!(
                    "the solver option atol must be zero or positive, not {}",
                    options.atol
                )));
            }
            if options.rtol < 100.0 * f64::EPSILON || options.rtol > 1.0 {
                return Err(OdeError::new(format!(
                    "the solver option rtol must lie in [{:e}, 1], not {}",
                    100.0 * f64::EPSILON,
                    options.rtol
                )));
            }
            Ok(Box::new(bdf::Bdf::new(dim, n_roots, options)))
        }
    }
}

/// f(t, x) into `dx`, counted; a value that is not finite is an error naming the time and the
/// state.
fn eval_rhs(
    problem: &mut dyn OdeProblem,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    stats: &mut Stats,
) -> Result<(), OdeError> {
    stats.rhs_evaluations += 1;
    problem.rhs(t, x, dx)?;
    match dx.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(not_finite(t, i, dx[i])),
    }
}

/// The error for a derivative that is not finite.
fn not_finite(t: f64, i: usize, v: f64) -> OdeError {
    OdeError::new(format!("the right-hand side is not finite at t = {t}: the derivative of state {i} is {v}"))
}

/// Checks the length of an initial state.
fn check_dim(dim: usize, x: &[f64], t: f64) -> Result<(), OdeError> {
    if x.len() != dim {
        return Err(OdeError::new(format!("the integrator has {dim} states, the state at t = {t} has {}", x.len())));
    }
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(OdeError::new(format!("state {i} is not finite at t = {t}: {}", x[i])));
    }
    Ok(())
}
