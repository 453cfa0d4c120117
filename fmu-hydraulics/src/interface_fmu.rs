//! The interface-model mode as both circuit FMUs expose it (Publication IV; the ODE is
//! [`crate::interface`]): its state (the switch `im_mode`, the inputs m_eff and f_eff, the predicted
//! motion), its variables and the check of the held inputs. One source for `hydraulics-naya` and
//! `hydraulics-lumped3`.

use fmu_export::{InputSignal, ModelError, StateVisitor, Variable};
use model_description::DependencyKind as Dep;

/// State of the interface-model mode.
#[derive(Debug, Clone)]
pub struct ImMode {
    /// Interface-model mode on: integrate s, ṡ with m_eff s̈ = F + f_eff.
    pub on: bool,
    /// Input m_eff (kg).
    pub m_eff: InputSignal,
    /// Input f_eff (N).
    pub f_eff: InputSignal,
    /// s, ṡ of the interface model at the end of the last step (m, m/s).
    pub motion: [f64; 2],
}

impl ImMode {
    /// Off, m_eff = 1 kg, f_eff = 0, resting at length `s0`.
    pub fn new(s0: f64) -> Self {
        Self { on: false, m_eff: InputSignal::new(1.0), f_eff: InputSignal::new(0.0), motion: [s0, 0.0] }
    }

    /// m_eff and f_eff held over the step: m_eff positive, both finite, else the error naming them.
    pub fn held(&self) -> Result<(f64, f64), ModelError> {
        let (m_eff, f_eff) = (self.m_eff.value, self.f_eff.value);
        if !(m_eff > 0.0 && m_eff.is_finite() && f_eff.is_finite()) {
            return Err(ModelError::new(format!(
                "interface model: input m_eff = {m_eff} kg must be positive and f_eff = {f_eff} N finite (connect the mechanism's m_eff, f_eff)"
            )));
        }
        Ok((m_eff, f_eff))
    }

    /// The mode's part of the FMU state.
    pub fn visit(&mut self, v: &mut dyn StateVisitor) {
        v.boolean(&mut self.on);
        v.input(&mut self.m_eff);
        v.input(&mut self.f_eff);
        v.reals(&mut self.motion);
    }
}

/// Access to a circuit FMU's [`ImMode`] and its actuator inputs.
pub trait HasImMode: Sized + 'static {
    /// The mode.
    fn im(&self) -> &ImMode;
    /// The mode, mutable.
    fn im_mut(&mut self) -> &mut ImMode;
    /// The inputs s (m) and ṡ (m/s) now.
    fn actuator(&self) -> (f64, f64);
}

/// Parameter `im_mode`; inputs `m_eff`, `f_eff` and outputs `s_im`, `s_dot_im` (in that order).
pub fn variables<M: HasImMode>() -> (Variable<M>, Vec<Variable<M>>) {
    let switch = Variable::boolean(
        "im_mode",
        "Interface-model mode: integrate s, s_dot with m_eff s_ddot = F + f_eff over each step (inputs m_eff, f_eff from the mechanism)",
        |m: &M| m.im().on,
        |m, x| m.im_mut().on = x,
    );
    let io = vec![
        Variable::input(
            "m_eff",
            "kg",
            "Interface model: effective mass of the mechanism at the cylinder (used with im_mode)",
            |m: &M| m.im().m_eff.value,
            |m| &mut m.im_mut().m_eff,
        ),
        Variable::input(
            "f_eff",
            "N",
            "Interface model: effective force of the mechanism at the cylinder, m_eff s_ddot = F + f_eff (used with im_mode)",
            |m: &M| m.im().f_eff.value,
            |m| &mut m.im_mut().f_eff,
        ),
        Variable::output(
            "s_im",
            "m",
            "Interface model: cylinder length predicted at the end of the last step (im_mode; else s)",
            |m: &M| if m.im().on { m.im().motion[0] } else { m.actuator().0 },
        )
        .depends_on(&[("s", Dep::Dependent)]),
        Variable::output(
            "s_dot_im",
            "m/s",
            "Interface model: cylinder velocity predicted at the end of the last step (im_mode; else s_dot)",
            |m: &M| if m.im().on { m.im().motion[1] } else { m.actuator().1 },
        )
        .depends_on(&[("s_dot", Dep::Dependent)]),
    ];
    (switch, io)
}
