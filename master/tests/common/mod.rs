//! In-process instances of our own models behind the master's `Slave` trait: the algorithms are
//! tested on real physics without loading shared libraries.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_export::{CoSimModel, Component, Factory, Instance, Logger, Status};
use master::{MasterError, Result, Slave};
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
    fn setup(&mut self, start: f64, stop: Option<f64>) -> Result<()> {
        self.t = start;
        let s = self.inst.setup_experiment(None, start, stop);
        check(&self.name, "fmi2SetupExperiment", start, s, &self.inst.log)
    }
    fn enter_initialization(&mut self) -> Result<()> {
        let s = self.inst.enter_initialization_mode();
        check(&self.name, "fmi2EnterInitializationMode", self.t, s, &self.inst.log)
    }
    fn exit_initialization(&mut self) -> Result<()> {
        let s = self.inst.exit_initialization_mode();
        check(&self.name, "fmi2ExitInitializationMode", self.t, s, &self.inst.log)
    }
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        let s = self.inst.get_real(vr, out);
        check(&self.name, "fmi2GetReal", self.t, s, &self.inst.log)
    }
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        let s = self.inst.set_real(vr, values);
        check(&self.name, "fmi2SetReal", self.t, s, &self.inst.log)
    }
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Result<()> {
        let s = self.inst.get_integer(vr, out);
        check(&self.name, "fmi2GetInteger", self.t, s, &self.inst.log)
    }
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Result<()> {
        let s = self.inst.set_integer(vr, values);
        check(&self.name, "fmi2SetInteger", self.t, s, &self.inst.log)
    }
    fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()> {
        let mut v = vec![0; vr.len()];
        let s = self.inst.get_boolean(vr, &mut v);
        for (o, x) in out.iter_mut().zip(v) {
            *o = x != 0;
        }
        check(&self.name, "fmi2GetBoolean", self.t, s, &self.inst.log)
    }
    fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> Result<()> {
        let v: Vec<i32> = values.iter().map(|b| i32::from(*b)).collect();
        let s = self.inst.set_boolean(vr, &v);
        check(&self.name, "fmi2SetBoolean", self.t, s, &self.inst.log)
    }
    fn get_string(&mut self, _vr: &[u32]) -> Result<Vec<String>> {
        unimplemented!("not needed by these tests")
    }
    fn set_string(&mut self, vr: &[u32], values: &[&str]) -> Result<()> {
        let v: Vec<Option<&str>> = values.iter().map(|s| Some(*s)).collect();
        let s = self.inst.set_string(vr, &v);
        check(&self.name, "fmi2SetString", self.t, s, &self.inst.log)
    }
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()> {
        let orders = vec![order; vr.len()];
        let s = self.inst.set_real_input_derivatives(vr, &orders, values);
        check(&self.name, "fmi2SetRealInputDerivatives", self.t, s, &self.inst.log)
    }
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        let s = self.inst.do_step(t, h, true);
        self.t = t + h;
        check(&self.name, "fmi2DoStep", t, s, &self.inst.log)
    }
    fn terminate(&mut self) -> Result<()> {
        let s = self.inst.terminate();
        check(&self.name, "fmi2Terminate", self.t, s, &self.inst.log)
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.interpolates
    }
}

pub static FD1: Factory<oscillator::ForceDisplacementM1> = Factory::new();
pub static FD2: Factory<oscillator::ForceDisplacementM2> = Factory::new();
pub static DD1: Factory<oscillator::DisplacementDisplacementM1> = Factory::new();
pub static DD2: Factory<oscillator::DisplacementDisplacementM2> = Factory::new();

pub fn md<M: CoSimModel>(f: &'static Factory<M>) -> &'static ModelDescription {
    &f.table().unwrap().description.model
}
