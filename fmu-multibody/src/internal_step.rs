//! The internal step h and the Newton iteration cap of every model that integrates a mechanism
//! (the mechanism FMUs here and the unified FMUs of `fmu-unified`): the parameters, their check
//! and the number of internal steps in a communication step.

use fmu_export::{ModelError, Variable};

/// Internal step and Newton cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InternalStep {
    /// Internal step (s); 0: the communication step.
    pub h: f64,
    /// Newton iteration cap per internal step (parameter `newton_max_iter`).
    pub max_iter: i32,
}

impl Default for InternalStep {
    fn default() -> Self {
        Self { h: 0.0, max_iter: 20 }
    }
}

impl InternalStep {
    /// h non-negative and finite, the cap at least 1.
    pub fn check(&self) -> Result<(), ModelError> {
        if !(self.h >= 0.0 && self.h.is_finite()) {
            return Err(ModelError::new(format!("parameter h = {} must be non-negative", self.h)));
        }
        if self.max_iter < 1 {
            return Err(ModelError::new(format!("parameter newton_max_iter = {} must be at least 1", self.max_iter)));
        }
        Ok(())
    }

    /// The cap as the solvers take it (1 for a cap below 1, which [`check`](Self::check) refuses).
    pub fn cap(&self) -> u32 {
        u32::try_from(self.max_iter).unwrap_or(1)
    }

    /// Number of internal steps in the communication step `big_h` from `t` (0 for a remainder
    /// of a master's float time, [`fmu_export::grid::is_remainder`]).
    pub fn substeps(&self, t: f64, big_h: f64) -> Result<u64, ModelError> {
        if self.h == 0.0 {
            // One internal step per communication step; none over a master's float-time remainder.
            return Ok(u64::from(!fmu_export::grid::is_remainder(t, big_h, 0.0)));
        }
        fmu_export::grid::internal_steps(t, big_h, self.h)
    }
}

/// Access to a model's [`InternalStep`].
pub trait HasInternalStep: 'static {
    /// The settings.
    fn internal_step(&self) -> &InternalStep;
    /// The settings, mutable.
    fn internal_step_mut(&mut self) -> &mut InternalStep;
}

/// Parameters `newton_max_iter` and `h` (in that order).
pub fn variables<T: HasInternalStep>() -> [Variable<T>; 2] {
    [
        Variable::integer(
            "newton_max_iter",
            "Newton iteration cap per internal step",
            |m: &T| m.internal_step().max_iter,
            |m, x| m.internal_step_mut().max_iter = x,
        )
        .min(1.0),
        Variable::parameter(
            "h",
            "s",
            "Internal step; 0 = the communication step; otherwise it must divide the communication step",
            |m: &T| m.internal_step().h,
            |m, x| m.internal_step_mut().h = x,
        )
        .min(0.0),
    ]
}
