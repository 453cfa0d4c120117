//! [`MockInstance`]: an instance without an FMU, for testing a scheme, an observer or a front
//! end on a system built in code ([`crate::Execution::with_instances`]). It logs every call.

use super::{Call, FmuInstance};
use crate::error::{MasterError, Result};
use model_description::{Causality, ModelDescription, ModelStructure, ScalarVariable, Unknown};
use std::sync::{Arc, Mutex, PoisonError};

/// The calls of every mock sharing it, in order: `"<name>.u = 10"`, `"<name>.step 0.5"`,
/// `"<name>.get [0]"`, `"<name>.save"`, `"<name>.restore"`.
pub type CallLog = Arc<Mutex<Vec<String>>>;

/// A first-order system ẋ = u + 1 stepped by forward Euler over each `fmi2DoStep`, output
/// y = x (value reference 0, no feedthrough), input u (value reference 1); it saves and
/// restores its state, and cannot interpolate inputs. Its model description is
/// [`MockInstance::description`].
pub struct MockInstance {
    name: String,
    x: f64,
    u: f64,
    saved: Option<(f64, f64)>,
    log: CallLog,
}

impl MockInstance {
    /// A mock named `name` starting at x = `x0`, logging into `log`.
    pub fn new(name: &str, x0: f64, log: &CallLog) -> Self {
        Self { name: name.into(), x: x0, u: 0.0, saved: None, log: Arc::clone(log) }
    }

    /// [`MockInstance::new`], boxed as the execution takes it.
    pub fn boxed(name: &str, x0: f64, log: &CallLog) -> Box<dyn FmuInstance> {
        Box::new(Self::new(name, x0, log))
    }

    /// Its model description: Real output `y` (vr 0), Real input `u` (vr 1),
    /// canGetAndSetFMUstate.
    pub fn description() -> ModelDescription {
        let var = ScalarVariable::real;
        ModelDescription {
            fmi_version: "2.0".into(),
            model_name: "mock".into(),
            co_simulation: Some(model_description::CoSimulation {
                model_identifier: "mock".into(),
                can_get_and_set_fmu_state: true,
                ..Default::default()
            }),
            model_variables: vec![var("y", 0, Causality::Output), var("u", 1, Causality::Input)],
            model_structure: ModelStructure {
                outputs: vec![Unknown { index: 1, dependencies: Some(vec![]), dependencies_kind: None, line: 0 }],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn note(&self, s: String) {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).push(format!("{}.{s}", self.name));
    }

    fn refuse(&self, what: &str) -> MasterError {
        MasterError::Fmu { path: format!("<mock {}>", self.name).into(), message: what.into() }
    }
}

impl FmuInstance for MockInstance {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match call {
            Call::GetFloat64 { vr, out } => {
                for (o, v) in out.iter_mut().zip(vr) {
                    *o = if *v == 0 { self.x } else { self.u };
                }
                self.note(format!("get {vr:?}"));
            }
            Call::SetFloat64 { vr, values } => {
                if vr != [1] {
                    return Err(self.refuse(&format!("set_real {vr:?}: the mock's only input is vr 1")));
                }
                self.u = values[0];
                self.note(format!("u = {}", values[0]));
            }
            Call::DoStep { t, h } => {
                self.x += h * (self.u + 1.0);
                self.note(format!("step {t}"));
            }
            Call::SaveState => {
                self.saved = Some((self.x, self.u));
                self.note("save".into());
            }
            Call::RestoreState => {
                (self.x, self.u) = self.saved.ok_or_else(|| self.refuse("restore before any save"))?;
                self.note("restore".into());
            }
            Call::SetInputDerivatives { .. } => return Err(self.refuse("the mock does not interpolate inputs")),
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        false
    }
}
