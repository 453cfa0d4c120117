//! The value checks of an [`Instance`]: lengths, settable variables, bounds, the setters' fast
//! paths, and the refresh of outputs before they are read.

use super::{mask, Instance, Res, State, Table};
use crate::logger::Category;
use crate::model::CoSimModel;
use crate::types::Status;
use crate::variable::Variable;
use crate::MAX_INPUT_ORDER;
use model_description::{Causality, Variability};

impl<M: CoSimModel> Instance<M> {
    /// Makes outputs consistent with the current parameters and inputs before they are read.
    pub(super) fn refresh(&mut self, function: &str) -> Res<Status> {
        if !self.dirty {
            return Ok(Status::Ok);
        }
        let mut ctx = self.context();
        if self.state == State::InitializationMode {
            self.model.initialize(self.start_time, &mut ctx).map_err(|e| e.to_string())?;
        }
        if matches!(
            self.state,
            State::InitializationMode | State::StepComplete | State::EventMode | State::ContinuousTimeMode
        ) {
            self.model.evaluate(&mut ctx).map_err(|e| e.to_string())?;
            self.dirty = false;
        }
        Ok(self.flush(function, ctx))
    }

    pub(super) fn check_lengths(vr: &[u32], n: usize) -> Res<()> {
        if vr.len() == n {
            Ok(())
        } else {
            Err(format!("{} value references but {n} values", vr.len()))
        }
    }

    /// Whether `v` may be set in the current state (FMI 2.0 §4.2.4: before initialization
    /// variables with a start value; afterwards inputs and tunable parameters only).
    #[inline]
    pub(super) fn may_set(&self, v: &Variable<M>, vr: u32) -> Res<()> {
        if !v.is_settable() {
            return Err(format!("variable \"{}\" (vr {vr}, causality {}) cannot be set", v.name, v.causality));
        }
        match self.state {
            State::Instantiated | State::InitializationMode => Ok(()),
            _ if v.causality == Causality::Input => Ok(()),
            _ if v.causality == Causality::Parameter && v.variability == Variability::Tunable => Ok(()),
            _ => Err(format!(
                "variable \"{}\" (vr {vr}) is a {} {}: it can only be set before fmi2ExitInitializationMode",
                v.name, v.variability, v.causality
            )),
        }
    }

    /// Bounds check: parameters out of range are errors, inputs out of range warnings.
    #[inline]
    pub(super) fn check_range(
        v: &Variable<M>,
        x: f64,
        min: Option<f64>,
        max: Option<f64>,
        warnings: &mut Vec<String>,
    ) -> Res<()> {
        let below = min.is_some_and(|m| x < m);
        let above = max.is_some_and(|m| x > m);
        if !(below || above) {
            return Ok(());
        }
        let msg = format!(
            "variable \"{}\" = {x} is outside [{}, {}]",
            v.name,
            min.map_or("-inf".into(), |m| m.to_string()),
            max.map_or("inf".into(), |m| m.to_string())
        );
        if v.causality == Causality::Input {
            warnings.push(msg);
            Ok(())
        } else {
            Err(msg)
        }
    }

    #[inline]
    pub(super) fn finish_set(&mut self, function: &str, warnings: Vec<String>) -> Res<Status> {
        self.dirty = true;
        if warnings.is_empty() {
            return Ok(Status::Ok);
        }
        let mut status = Status::Ok;
        for w in warnings {
            self.log.log(Status::Warning, Category::Warning, &format!("{function}: {w}"));
            status = Status::Warning;
        }
        Ok(status)
    }

    /// fmi2SetReal's common case, with the general path's outcome: every value reference a Real
    /// input and every value finite and within its bounds sets them all and returns `fmi2OK`
    /// (inputs may be set in every state that allows fmi2SetReal). Anything else returns `None`,
    /// changing nothing, and the general path checks, reports and sets.
    #[inline]
    pub(super) fn set_inputs_fast(&mut self, vr: &[u32], values: &[f64]) -> Option<Status> {
        let table: &'static Table<M> = self.table;
        if vr.len() != values.len() || mask::SET & self.state.bit() == 0 {
            return None;
        }
        for (r, x) in vr.iter().zip(values) {
            let input = table.inputs_by_vr.get(*r as usize)?.as_ref()?;
            let inside = x.is_finite() && !input.min.is_some_and(|m| *x < m) && !input.max.is_some_and(|m| *x > m);
            if !inside {
                return None;
            }
        }
        for (r, x) in vr.iter().zip(values) {
            if let Some(Some(input)) = table.inputs_by_vr.get(*r as usize) {
                (input.signal)(&mut self.model).value = *x;
            }
        }
        self.dirty = true;
        Some(Status::Ok)
    }

    /// fmi2SetRealInputDerivatives' common case, as [`Instance::set_inputs_fast`]: every value
    /// reference a Real input, every order in 1..=MAX_INPUT_ORDER and every value finite.
    #[inline]
    pub(super) fn set_input_derivatives_fast(&mut self, vr: &[u32], order: &[i32], values: &[f64]) -> Option<Status> {
        let table: &'static Table<M> = self.table;
        if vr.len() != values.len() || vr.len() != order.len() || mask::SET & self.state.bit() == 0 {
            return None;
        }
        if !M::info().interpolates_inputs {
            return None;
        }
        for ((r, k), x) in vr.iter().zip(order).zip(values) {
            table.inputs_by_vr.get(*r as usize)?.as_ref()?;
            if !((1..=MAX_INPUT_ORDER as i32).contains(k) && x.is_finite()) {
                return None;
            }
        }
        for ((r, k), x) in vr.iter().zip(order).zip(values) {
            if let Some(Some(input)) = table.inputs_by_vr.get(*r as usize) {
                (input.signal)(&mut self.model).derivatives[(*k - 1) as usize] = *x;
            }
        }
        self.dirty = true;
        Some(Status::Ok)
    }
}
