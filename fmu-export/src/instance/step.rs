//! The end of a step of an [`Instance`] in which the model terminated the simulation, and the
//! status queries (`fmi2Get*Status`) that follow a step.

use super::{mask, Instance, Res, State, Table};
use crate::logger::Category;
use crate::model::{CoSimModel, Context};
use crate::types::{self, Status};

impl<M: CoSimModel> Instance<M> {
    /// The end of a step in which the model terminated the simulation at `at`
    /// ([`Context::terminate`]): fmi2Discard, state stepFailed, time `at`, fmi2Terminated true.
    pub(super) fn terminated_in_step(&mut self, t: f64, h: f64, at: f64, why: &str, ctx: Context) -> Res<Status> {
        let tol = (1e-9 * h).max(4.0 * f64::EPSILON * t.abs());
        if !(at >= t - tol && at <= t + h + tol) {
            self.flush("fmi2DoStep", ctx);
            self.state = State::Error;
            self.last_step_status = Status::Error;
            return Err(format!(
                "the model terminated the step from t = {t} with h = {h} at t = {at}, outside the step"
            ));
        }
        let at = at.max(t).min(t + h);
        let table: &'static Table<M> = self.table;
        for signal in &table.inputs {
            signal(&mut self.model).end_step(at - t);
        }
        for (name, get) in &table.real_outputs {
            let y = get(&self.model);
            if !y.is_finite() {
                self.flush("fmi2DoStep", ctx);
                self.state = State::Error;
                self.last_step_status = Status::Error;
                return Err(format!("output \"{name}\" = {y} at the termination at t = {at}"));
            }
        }
        self.flush("fmi2DoStep", ctx);
        let msg = format!(
            "fmi2DoStep: the model terminated the simulation at t = {at} (step from t = {t} with h = {h}): {why}"
        );
        self.log.log(Status::Discard, Category::Warning, &msg);
        self.time = at;
        self.dirty = false;
        self.state = State::StepFailed;
        self.terminated = true;
        self.last_step_status = Status::Discard;
        Ok(Status::Discard)
    }

    pub(super) fn status_kind(kind: i32) -> &'static str {
        match kind {
            types::FMI2_DO_STEP_STATUS => "fmi2DoStepStatus",
            types::FMI2_PENDING_STATUS => "fmi2PendingStatus",
            types::FMI2_LAST_SUCCESSFUL_TIME => "fmi2LastSuccessfulTime",
            types::FMI2_TERMINATED => "fmi2Terminated",
            _ => "an unknown fmi2StatusKind",
        }
    }

    pub(super) fn status_guard(&mut self, function: &str) -> Result<(), Status> {
        self.guard(mask::STATUS).map_err(|m| self.error(function, &m))
    }

    pub(super) fn discard_status(&mut self, function: &str, kind: i32) -> Status {
        self.log.log(
            Status::Discard,
            Category::Warning,
            &format!(
                "{function}: {} is not available from this function (steps are synchronous)",
                Self::status_kind(kind)
            ),
        );
        Status::Discard
    }
}
