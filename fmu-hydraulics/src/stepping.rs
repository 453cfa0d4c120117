//! What every circuit FMU shares: the integrator choice, the internal step h that must divide
//! the communication step, Newton settings, and the stiffness warning of explicit methods.

use crate::integrator::{self, Method, Newton, Ode, StepError};
use fmu_export::{Context, EnumType, ModelError, StateVisitor, Variable};
use nalgebra::SVector;

/// `Integrator` enumeration of the FMUs.
pub static INTEGRATOR: EnumType = EnumType {
    name: "Integrator",
    description: "Integration method of the pressure equations",
    items: &[
        ("FWE", 1, "forward Euler (order 1, stable for h|lambda| <= 2)"),
        ("TR", 2, "trapezoidal rule, implicit, Newton with analytic Jacobian (order 2, A-stable)"),
        ("RK4", 3, "classical Runge-Kutta (order 4, stable for h|lambda| <= 2.785)"),
    ],
};

/// Integrator settings and per-run diagnostics.
#[derive(Debug, Clone)]
pub struct Stepping {
    /// Integrator, an item of [`INTEGRATOR`] (default TR).
    pub method: i32,
    /// Internal step h (s), default 0.1 ms; must divide every communication step.
    pub h: f64,
    /// Newton absolute tolerance on the pressures (Pa), default 1e-6.
    pub newton_tol: f64,
    /// Newton iteration cap, default 20.
    pub newton_max_iter: i32,
    /// Largest Newton iteration count in the last communication step.
    pub iterations: i32,
    /// The stiffness warning was given in this run.
    pub warned: bool,
    /// |λ|max of the circuit when last estimated (initialization, and each communication point
    /// of an explicit method until it has warned), 1/s.
    pub lambda_max: f64,
}

impl Default for Stepping {
    fn default() -> Self {
        Self {
            method: 2,
            h: 1e-4,
            newton_tol: 1e-6,
            newton_max_iter: 20,
            iterations: 0,
            warned: false,
            lambda_max: 0.0,
        }
    }
}

/// Access to a model's [`Stepping`].
pub trait HasStepping: Clone + Default + Send + 'static {
    /// The settings.
    fn stepping(&self) -> &Stepping;
    /// The settings, mutable.
    fn stepping_mut(&mut self) -> &mut Stepping;
    /// |λ|max of the circuit's Jacobian at the current state and inputs (1/s), computed on demand.
    fn lambda_max(&self) -> f64;
    /// The inputs `lambda_max` depends on (the Jacobian's inputs).
    const LAMBDA_INPUTS: &'static [(&'static str, model_description::DependencyKind)];
}

/// Parameters `integrator`, `h`, `newton_tol`, `newton_max_iter`, outputs `newton_iterations`
/// and `lambda_max`.
pub fn variables<M: HasStepping>() -> (Vec<Variable<M>>, Vec<Variable<M>>) {
    let params = vec![
        Variable::enumeration(
            "integrator",
            &INTEGRATOR,
            "Integration method: FWE, TR (default) or RK4",
            |m: &M| m.stepping().method,
            |m, v| m.stepping_mut().method = v,
        ),
        Variable::parameter(
            "h",
            "s",
            "Internal step; must divide the communication step",
            |m: &M| m.stepping().h,
            |m, v| m.stepping_mut().h = v,
        )
        .min(1e-9),
        Variable::parameter(
            "newton_tol",
            "Pa",
            "Newton tolerance on the pressure correction (TR)",
            |m: &M| m.stepping().newton_tol,
            |m, v| m.stepping_mut().newton_tol = v,
        )
        .min(0.0),
        Variable::integer(
            "newton_max_iter",
            "Newton iteration cap (TR)",
            |m: &M| m.stepping().newton_max_iter,
            |m, v| m.stepping_mut().newton_max_iter = v,
        )
        .min(1.0),
    ];
    let outputs = vec![
        Variable::integer(
            "newton_iterations",
            "Largest Newton iteration count in the last communication step (0 for FWE, RK4)",
            |m: &M| m.stepping().iterations,
            |m, v| m.stepping_mut().iterations = v,
        )
        .discrete_output(),
        Variable::output(
            "lambda_max",
            "1/s",
            "Magnitude of the stiffest eigenvalue of the pressure equations at the last communication point, \
             with the inputs s and s_dot as set now",
            |m: &M| m.lambda_max(),
        )
        // Evaluated with the inputs as set now: direct feedthrough (measured by `cosim check`).
        .depends_on(M::LAMBDA_INPUTS),
    ];
    (params, outputs)
}

impl Stepping {
    /// The method, or an error naming the bad value.
    pub fn method(&self) -> Result<Method, ModelError> {
        Method::from_i32(self.method)
            .ok_or_else(|| ModelError::new(format!("integrator = {} is not 1, 2 or 3", self.method)))
    }

    /// Checks the settings at initialization and resets the run diagnostics.
    pub fn initialize(&mut self) -> Result<(), ModelError> {
        self.method()?;
        if self.h.is_nan() || self.h <= 0.0 {
            return Err(ModelError::new(format!("parameter h = {} must be positive", self.h)));
        }
        self.iterations = 0;
        self.warned = false;
        Ok(())
    }

    /// Number of internal steps in the communication step `big_h` from `t`; an error if it is
    /// not a multiple of h (up to a master's float time, see [`fmu_export::grid`]).
    pub fn substeps(&self, t: f64, big_h: f64) -> Result<u64, ModelError> {
        fmu_export::grid::internal_steps(t, big_h, self.h)
    }

    /// Integrates `x` over a communication step [t, t + big_h] in internal steps of h; `check`
    /// validates each new state at its τ (time since t; physical ranges) and names what is wrong.
    pub fn advance<const N: usize, O: Ode<N>>(
        &mut self,
        ode: &O,
        x: &mut SVector<f64, N>,
        t: f64,
        big_h: f64,
        ctx: &mut Context,
        mut check: impl FnMut(f64, &SVector<f64, N>) -> Result<(), String>,
    ) -> Result<(), ModelError> {
        let method = self.method()?;
        let n = self.substeps(t, big_h)?;
        if n == 0 {
            // A master's float-time remainder: the state (and the last step's diagnostics) held
            // (fmu_export::grid).
            return Ok(());
        }
        let dt = big_h / n as f64;
        let newton = Newton {
            abs_tol: self.newton_tol,
            max_iter: u32::try_from(self.newton_max_iter).unwrap_or(1),
            ..Newton::default()
        };
        // The eigenvalue estimate (a Schur decomposition) is only needed until an explicit method
        // has warned; implicit TR never needs it.
        let estimate = !self.warned && method.stability_bound().is_finite();
        if estimate {
            self.lambda_max = integrator::stiffest_eigenvalue(ode, 0.0, x);
        }
        if estimate && dt * self.lambda_max > method.stability_bound() {
            self.warned = true;
            ctx.warn(format!(
                "{} with h = {dt} s is unstable for this circuit: h|lambda| = {:.3} > {:.3} (stiffest eigenvalue |lambda| = {:.4e} 1/s at t = {t}); results are wrong, use integrator TR or h < {:.3e} s",
                method.name(),
                dt * self.lambda_max,
                method.stability_bound(),
                self.lambda_max,
                method.stability_bound() / self.lambda_max
            ));
        }
        let error = |e: StepError, tau: f64| {
            let at = t + tau;
            ModelError::new(match e {
                StepError::Newton { iterations, correction } => format!(
                    "{}: Newton did not converge at t = {at} s after {iterations} iterations (last correction {correction:.3e} Pa)",
                    method.name()
                ),
                StepError::Singular => format!("{}: singular Newton matrix at t = {at} s", method.name()),
                StepError::NotFinite => format!("{}: pressures became NaN/Inf at t = {at} s", method.name()),
            })
        };
        let mut max_iter = 0;
        if method == Method::Trapezoidal {
            // The rate at the start of each internal step is the previous step's end rate by
            // the trapezoidal relation (see `integrator::trapezoidal`); evaluated afresh only at
            // the communication point, where the inputs change.
            // The simplified-Newton matrix is carried from step to step as long as it contracts
            // well (`integrator::trapezoidal_chord`).
            let mut f0 = ode.f(0.0, x);
            let mut chord = None;
            for i in 0..n {
                let (tau, tau1) = (i as f64 * dt, (i + 1) as f64 * dt);
                let start = *x;
                let result = integrator::trapezoidal_chord(ode, x, &f0, &ode.point(tau1), dt, &newton, &mut chord);
                let (mut it, mut f1, failed) = match result {
                    Ok((it, f1)) => (it, f1, false),
                    // The rescue below redoes the step.
                    Err(_) if ode.rescues() => (0, f0, true),
                    Err(e) => return Err(error(e, tau)),
                };
                if failed || !ode.admissible(x) {
                    // The entry into cavitation: redo the step with backward Euler.
                    *x = start;
                    it = integrator::backward_euler_split(ode, x, tau, dt, &newton).map_err(|e| error(e, tau))?;
                    f1 = ode.f(tau1, x);
                    chord = None;
                }
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(error(StepError::NotFinite, tau));
                }
                check(tau1, x).map_err(|m| ModelError::new(format!("at t = {} s: {m}", t + tau1)))?;
                max_iter = max_iter.max(it);
                f0 = f1;
            }
        } else {
            for i in 0..n {
                let tau = i as f64 * dt;
                let start = *x;
                let (mut it, failed) = match integrator::step(ode, method, x, tau, dt, &newton) {
                    Ok(it) => (it, false),
                    Err(_) if ode.rescues() => (0, true),
                    Err(e) => return Err(error(e, tau)),
                };
                if failed || !ode.admissible(x) {
                    *x = start;
                    it = integrator::backward_euler_split(ode, x, tau, dt, &newton).map_err(|e| error(e, tau))?;
                }
                check(tau + dt, x).map_err(|m| ModelError::new(format!("at t = {} s: {m}", t + tau + dt)))?;
                max_iter = max_iter.max(it);
            }
        }
        self.iterations = i32::try_from(max_iter).unwrap_or(i32::MAX);
        Ok(())
    }

    /// State visitor.
    pub fn visit(&mut self, v: &mut dyn StateVisitor) {
        let mut m = i64::from(self.method);
        v.integer(&mut m);
        self.method = i32::try_from(m).unwrap_or(2);
        v.real(&mut self.h);
        v.real(&mut self.newton_tol);
        let mut k = i64::from(self.newton_max_iter);
        v.integer(&mut k);
        self.newton_max_iter = i32::try_from(k).unwrap_or(20);
        let mut it = i64::from(self.iterations);
        v.integer(&mut it);
        self.iterations = i32::try_from(it).unwrap_or(0);
        v.boolean(&mut self.warned);
        v.real(&mut self.lambda_max);
    }
}
