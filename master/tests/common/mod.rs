//! In-process instances of our own models behind the master's `Slave` trait: the algorithms are
//! tested on real physics without loading shared libraries.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_export::{CoSimModel, Component, Factory, Instance, Logger, Status};
use master::{Call, MasterError, Result, Slave};
use model_description::ModelDescription;

pub struct InProcess<M: CoSimModel> {
    pub name: String,
    pub inst: Instance<M>,
    pub interpolates: bool,
    pub t: f64,
}

fn check(name: &str, function: &'static str, time: f64, s: Status, log: &Logger) -> Result<()> {
    if s <= Status::Warning {
        Ok(())
    } else {
        Err(MasterError::Call {
            instance: name.to_owned(),
            function,
            time,
            status: s.as_str().to_owned(),
            last_log: log.history.last().cloned().unwrap_or_default(),
        })
    }
}

impl<M: CoSimModel> InProcess<M> {
    pub fn new(factory: &'static Factory<M>, name: &str) -> Self {
        let inst = factory.instance(Logger::new(None, name, false)).unwrap();
        Self { name: name.into(), inst, interpolates: M::info().interpolates_inputs, t: 0.0 }
    }
}

impl<M: CoSimModel> Slave for InProcess<M> {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        let function = call.op().function();
        let mut time = self.t;
        let s = match call {
            Call::Setup { start, stop } => {
                self.t = start;
                time = start;
                self.inst.setup_experiment(None, start, stop)
            }
            Call::EnterInitialization => self.inst.enter_initialization_mode(),
            Call::ExitInitialization => self.inst.exit_initialization_mode(),
            Call::GetReal { vr, out } => self.inst.get_real(vr, out),
            Call::SetReal { vr, values } => self.inst.set_real(vr, values),
            Call::GetInteger { vr, out } => self.inst.get_integer(vr, out),
            Call::SetInteger { vr, values } => self.inst.set_integer(vr, values),
            Call::GetBoolean { vr, out } => {
                let mut v = vec![0; vr.len()];
                let s = self.inst.get_boolean(vr, &mut v);
                for (o, x) in out.iter_mut().zip(v) {
                    *o = x != 0;
                }
                s
            }
            Call::SetBoolean { vr, values } => {
                let v: Vec<i32> = values.iter().map(|b| i32::from(*b)).collect();
                self.inst.set_boolean(vr, &v)
            }
            Call::SetString { vr, values } => {
                let v: Vec<Option<&str>> = values.iter().map(|s| Some(*s)).collect();
                self.inst.set_string(vr, &v)
            }
            Call::SetInputDerivatives { vr, order, values } => {
                let orders = vec![order; vr.len()];
                self.inst.set_real_input_derivatives(vr, &orders, values)
            }
            Call::DoStep { t, h } => {
                time = t;
                self.t = t + h;
                self.inst.do_step(t, h, true)
            }
            Call::Terminate => self.inst.terminate(),
            Call::GetBooleanStatus { kind, out } => match self.inst.get_boolean_status(kind) {
                Ok(b) => {
                    *out = b;
                    Status::Ok
                }
                Err(s) => s,
            },
            Call::GetRealStatus { kind, out } => match self.inst.get_real_status(kind) {
                Ok(x) => {
                    *out = x;
                    Status::Ok
                }
                Err(s) => s,
            },
            call @ (Call::GetString { .. } | Call::SaveState | Call::RestoreState) => {
                return Err(call.unsupported(&self.name));
            }
        };
        check(&self.name, function, time, s, &self.inst.log)
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.interpolates
    }
}

pub static FD1: Factory<fmu_oscillator::ForceDisplacementM1> = Factory::new();
pub static FD2: Factory<fmu_oscillator::ForceDisplacementM2> = Factory::new();
pub static DD1: Factory<fmu_oscillator::DisplacementDisplacementM1> = Factory::new();
pub static DD2: Factory<fmu_oscillator::DisplacementDisplacementM2> = Factory::new();

pub fn md<M: CoSimModel>(f: &'static Factory<M>) -> &'static ModelDescription {
    &f.table().unwrap().description.model
}
