//! What a model with continuous states implements to be exported as a Model Exchange FMU too:
//! [`OdeModel`], beside [`CoSimModel`].
//!
//! The export layer turns an `OdeModel` into an FMU that declares both `<ModelExchange>` and
//! `<CoSimulation>` (FMI 2.0 and 3.0): as Model Exchange the importer integrates ẋ = f(t, x, u)
//! through `fmi2SetContinuousStates`/`fmi2GetDerivatives` (3.0:
//! `fmi3GetContinuousStateDerivatives`), as Co-Simulation [`rk4_step`] integrates the same right-hand
//! side with the classical Runge–Kutta method on a fixed internal step. The model lists its
//! states by the names of two variables of its table each: the state and its derivative, so the
//! description carries `derivative="…"` (2.0; 3.0: the state's value reference) and
//! `<Derivatives>` (3.0: `<ContinuousStateDerivative>`) from the same table.
//!
//! A model opts in from its [`CoSimModel::model_exchange`] with `Some(Ode::of::<Self>())`.
//!
//! Most models keep x and ẋ in fields of their own and compute ẋ from x and the inputs: they
//! implement [`StoredOde`] (which gives [`OdeModel`]) and take their [`CoSimModel::evaluate`],
//! [`CoSimModel::do_step`] and [`CoSimModel::model_exchange`] from [`stored_ode_cosim!`](crate::stored_ode_cosim)
//! (our ME FMUs: `hydraulics-lumped3-me`, `multibody-crane-me`).

use crate::model::{CoSimModel, Context, ModelError};

/// A model with continuous states x and ẋ = f(t, x, u).
///
/// The inputs u are the values last set (Model Exchange has no input polynomials). The export
/// layer calls [`CoSimModel::evaluate`] before a getter whenever a state, the time or an input
/// changed, so `evaluate` must make every output and every derivative variable consistent with
/// the current states and inputs.
pub trait OdeModel: CoSimModel {
    /// (state variable, derivative variable) of each continuous state, in state order: names of
    /// Real variables of [`CoSimModel::variables`].
    const STATES: &'static [(&'static str, &'static str)];
    /// Number of event indicators (default none: a smooth right-hand side).
    const EVENT_INDICATORS: usize = 0;
    /// Internal step of the Co-Simulation interface ([`rk4_step`]), s.
    const CS_STEP: f64;

    /// Writes x (`STATES.len()` values).
    fn states(&self, x: &mut [f64]);
    /// Sets x.
    fn set_states(&mut self, x: &[f64]);
    /// ẋ = f(t, x, u) at the current states and inputs.
    fn derivatives(&mut self, t: f64, dx: &mut [f64], ctx: &mut Context) -> Result<(), ModelError>;
    /// Nominal magnitudes of the states (default 1).
    fn nominals(&self, nominal: &mut [f64]) {
        nominal.fill(1.0);
    }
    /// Event indicators z(t, x, u) (default: none).
    fn event_indicators(&mut self, _t: f64, _z: &mut [f64]) -> Result<(), ModelError> {
        Ok(())
    }
}

pub use crate::model::Ode;

/// The common shape of an [`OdeModel`]: the model keeps its states x and their rates ẋ in fields
/// of its own, and ẋ follows from x and the inputs (no explicit time). Implementing it gives
/// [`OdeModel`]; the [`CoSimModel`] methods that go with it are
/// [`stored_ode_cosim!`](crate::stored_ode_cosim).
pub trait StoredOde: CoSimModel {
    /// [`OdeModel::STATES`].
    const STATES: &'static [(&'static str, &'static str)];
    /// [`OdeModel::CS_STEP`].
    const CS_STEP: f64;
    /// The states x as the model keeps them.
    fn x(&self) -> &[f64];
    /// The states x, to set.
    fn x_mut(&mut self) -> &mut [f64];
    /// The rates ẋ as last computed by [`update_rates`](Self::update_rates).
    fn dx(&self) -> &[f64];
    /// Recomputes the stored ẋ at the current states and inputs.
    fn update_rates(&mut self) -> Result<(), ModelError>;
    /// [`OdeModel::nominals`] (default 1).
    fn nominals(&self, nominal: &mut [f64]) {
        nominal.fill(1.0);
    }
}

impl<M: StoredOde> OdeModel for M {
    const STATES: &'static [(&'static str, &'static str)] = <M as StoredOde>::STATES;
    const CS_STEP: f64 = <M as StoredOde>::CS_STEP;

    fn states(&self, x: &mut [f64]) {
        x.copy_from_slice(self.x());
    }

    fn set_states(&mut self, x: &[f64]) {
        self.x_mut().copy_from_slice(x);
    }

    fn derivatives(&mut self, _t: f64, dx: &mut [f64], _ctx: &mut Context) -> Result<(), ModelError> {
        self.update_rates()?;
        dx.copy_from_slice(self.dx());
        Ok(())
    }

    fn nominals(&self, nominal: &mut [f64]) {
        <M as StoredOde>::nominals(self, nominal);
    }
}

/// The [`CoSimModel`] methods of a [`StoredOde`] model, written inside its `impl CoSimModel`:
/// `evaluate` recomputes ẋ, `do_step` integrates with [`rk4_step`] and then recomputes ẋ at the
/// step's end, `model_exchange` exports it as Model Exchange too.
#[macro_export]
macro_rules! stored_ode_cosim {
    () => {
        fn evaluate(&mut self, _ctx: &mut $crate::Context) -> Result<(), $crate::ModelError> {
            $crate::ode::StoredOde::update_rates(self)
        }

        fn do_step(&mut self, t: f64, h: f64, ctx: &mut $crate::Context) -> Result<(), $crate::ModelError> {
            $crate::ode::rk4_step(self, t, h, ctx)?;
            $crate::ode::StoredOde::update_rates(self)
        }

        fn model_exchange() -> Option<$crate::Ode<Self>> {
            Some($crate::Ode::of())
        }
    };
}

impl<M: OdeModel> Ode<M> {
    /// The table of `M`.
    pub fn of() -> Self {
        Self {
            states: M::STATES,
            event_indicators: M::EVENT_INDICATORS,
            get: M::states,
            set: M::set_states,
            derivatives: M::derivatives,
            nominals: M::nominals,
            indicators: M::event_indicators,
        }
    }
}

/// One Co-Simulation step of an [`OdeModel`] from `t` over `h`: classical RK4 on internal steps
/// of at most [`OdeModel::CS_STEP`] (h split evenly), inputs held at their values.
pub fn rk4_step<M: OdeModel>(m: &mut M, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
    let n = M::STATES.len();
    let steps = (h / M::CS_STEP).ceil().max(1.0);
    let dt = h / steps;
    let mut x = vec![0.0; n];
    let mut k = [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    let mut y = vec![0.0; n];
    m.states(&mut x);
    for i in 0..steps as u64 {
        let ti = t + i as f64 * dt;
        for stage in 0..4 {
            let (c, a) = match stage {
                0 => (0.0, 0.0),
                1 | 2 => (0.5, 0.5),
                _ => (1.0, 1.0),
            };
            for j in 0..n {
                y[j] = if stage == 0 { x[j] } else { x[j] + a * dt * k[stage - 1][j] };
            }
            m.set_states(&y);
            m.derivatives(ti + c * dt, &mut k[stage], ctx)?;
        }
        for j in 0..n {
            x[j] += dt / 6.0 * (k[0][j] + 2.0 * k[1][j] + 2.0 * k[2][j] + k[3][j]);
        }
        if let Some(j) = (0..n).find(|&j| !x[j].is_finite()) {
            return Err(ModelError::new(format!(
                "state \"{}\" = {} at t = {} (RK4, internal step {dt} s)",
                M::STATES[j].0,
                x[j],
                ti + dt
            )));
        }
    }
    m.set_states(&x);
    Ok(())
}
