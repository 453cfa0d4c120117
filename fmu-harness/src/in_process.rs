//! [`InProcess`]: one of our models (a physics crate's `CoSimModel`, through its entry in the
//! crate's `FMUS`) as an instance of the master (`master::FmuInstance`), called directly: no packaging,
//! no `dlopen`. The calls go through the export layer the packaged FMU's C API calls
//! (`fmu_export::Component`: state machine, value checks, input polynomials, FMU states), so a run
//! gives the packaged FMU's results bit for bit, and tests can couple real physics without
//! `cargo xtask fmus`.
//!
//! [`instances`] makes the instances of a system file (or builder) from the model lists of the
//! physics crates, by FMU name: `[instances.m1] fmu = "…/oscillator-fd-m1.fmu"` runs the model
//! whose `fmu_name` is `oscillator-fd-m1`.
//!
//! It lives here, in the tests crate, because it needs both sides: the master (the importer) and
//! the export layer of the models. Neither depends on the other.

use fmu_export::component::Snapshot;
use fmu_export::{Component, Fmu, Logger, Status};
use master::system::SystemBuilder;
use master::{Call, FmuInstance, MasterError, Result};
use model_description::ModelDescription;
use std::ffi::CStr;
use std::path::Path;

/// The status categories enabled after instantiation, as the master does for a packaged FMU
/// (so that warnings and errors are explained with `loggingOn = false`).
const STATUS_CATEGORIES: [Option<&str>; 2] = [Some("logStatusWarning"), Some("logStatusError")];

/// An instance of one of our models, in process.
pub struct InProcess {
    name: String,
    component: Box<dyn Component>,
    /// Whether the master may send input derivatives: the model's `canInterpolateInputs` (a test
    /// may switch it off to run the model as one that cannot).
    pub interpolates: bool,
    /// The time the next call is made at (for errors): the start, then the end of the last step.
    t: f64,
    saved: Option<Snapshot>,
    warnings: u64,
}

impl InProcess {
    /// An instance named `name` of `fmu` (an entry of a physics crate's `FMUS`, or a
    /// `&'static Factory<M>`).
    pub fn new(fmu: &'static dyn Fmu, name: &str) -> Result<Self> {
        let info = fmu.info();
        let mut component = fmu.instantiate("", Logger::new(None, name, false)).map_err(|e| MasterError::Fmu {
            path: format!("<in-process {}>", info.fmu_name).into(),
            message: e.to_string(),
        })?;
        let s = component.set_debug_logging(true, &STATUS_CATEGORIES);
        let mut me = Self {
            name: name.into(),
            component,
            interpolates: info.interpolates_inputs,
            t: 0.0,
            saved: None,
            warnings: 0,
        };
        me.check("fmi2SetDebugLogging", 0.0, s)?;
        Ok(me)
    }

    /// [`InProcess::new`], boxed as the execution takes it, with the model description.
    pub fn boxed(fmu: &'static dyn Fmu, name: &str) -> Result<(Box<dyn FmuInstance>, &'static ModelDescription)> {
        Ok((Box::new(Self::new(fmu, name)?), description(fmu)?))
    }

    fn check(&mut self, function: &'static str, time: f64, s: Status) -> Result<()> {
        match s {
            Status::Ok => Ok(()),
            Status::Warning => {
                self.warnings += 1;
                Ok(())
            }
            _ => Err(MasterError::Call {
                instance: self.name.clone(),
                function,
                time,
                status: s.as_str().to_owned(),
                last_log: self.component.last_message().unwrap_or_default().to_owned(),
            }),
        }
    }
}

/// The model description of `fmu` (the one its packaged FMU carries).
pub fn description(fmu: &'static dyn Fmu) -> Result<&'static ModelDescription> {
    fmu.description().map(|d| &d.model).map_err(|e| MasterError::Fmu {
        path: format!("<in-process {}>", fmu.info().fmu_name).into(),
        message: e.to_string(),
    })
}

/// The model named `fmu_name` in the lists `libraries` (physics crates' `FMUS`).
pub fn find(libraries: &[&'static [&'static dyn Fmu]], fmu_name: &str) -> Option<&'static dyn Fmu> {
    libraries.iter().flat_map(|l| l.iter()).copied().find(|f| f.info().fmu_name == fmu_name)
}

/// A system's instances, in its order, and their model descriptions (what
/// `master::Execution::with_instances` takes).
pub type Instances = (Vec<Box<dyn FmuInstance>>, Vec<&'static ModelDescription>);

/// The instances of the system `b`, in its order, with their model descriptions: each instance
/// runs the model of `libraries` named like its FMU file (`oscillator-fd-m1.fmu` →
/// `oscillator-fd-m1`). An FMU that no list serves is an error naming the instance and the file.
pub fn instances(b: &SystemBuilder, libraries: &[&'static [&'static dyn Fmu]]) -> Result<Instances> {
    let (mut instances, mut mds) = (Vec::new(), Vec::new());
    for (name, path) in b.fmus() {
        let stem = Path::new(&path).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let fmu = find(libraries, stem).ok_or_else(|| MasterError::System {
            path: b.path().to_path_buf(),
            key: format!("instances.{name}.fmu"),
            message: format!(
                "{}: no model named \"{stem}\" in the in-process model lists (their FMU names: {})",
                path.display(),
                libraries.iter().flat_map(|l| l.iter()).map(|f| f.info().fmu_name).collect::<Vec<_>>().join(", ")
            ),
        })?;
        let (instance, md) = InProcess::boxed(fmu, &name)?;
        instances.push(instance);
        mds.push(md);
    }
    Ok((instances, mds))
}

impl FmuInstance for InProcess {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        let function = call.op().function(master::fmu::Version::Fmi2);
        let mut time = self.t;
        let c = &mut self.component;
        let s = match call {
            Call::Setup { start, stop } => {
                (self.t, time) = (start, start);
                c.setup_experiment(None, start, stop)
            }
            Call::EnterInitialization => c.enter_initialization_mode(),
            Call::ExitInitialization => c.exit_initialization_mode(),
            Call::GetFloat64 { vr, out } => c.get_real(vr, out),
            Call::SetFloat64 { vr, values } => c.set_real(vr, values),
            Call::GetInt64 { vr, out } => {
                let mut v = vec![0; vr.len()];
                let s = c.get_integer(vr, &mut v);
                for (o, x) in out.iter_mut().zip(v) {
                    *o = i64::from(x);
                }
                s
            }
            Call::SetInt64 { vr, values } => {
                let Ok(v) = values.iter().map(|x| i32::try_from(*x)).collect::<std::result::Result<Vec<i32>, _>>()
                else {
                    return Err(call_unsupported(&self.name, "a value outside fmi2Integer's 32 bits"));
                };
                c.set_integer(vr, &v)
            }
            Call::GetBoolean { vr, out } => {
                let mut v = vec![0; vr.len()];
                let s = c.get_boolean(vr, &mut v);
                for (o, x) in out.iter_mut().zip(v) {
                    *o = x != 0;
                }
                s
            }
            Call::SetBoolean { vr, values } => {
                let v: Vec<i32> = values.iter().map(|b| i32::from(*b)).collect();
                c.set_boolean(vr, &v)
            }
            Call::GetString { vr, out } => {
                let mut p = vec![std::ptr::null(); vr.len()];
                let s = c.get_string(vr, &mut p);
                if s <= Status::Warning {
                    out.clear();
                    for q in p {
                        // SAFETY: on success every pointer is a NUL-terminated string the instance
                        // keeps until its next call; it is copied here, before any other call.
                        out.push(if q.is_null() {
                            String::new()
                        } else {
                            unsafe { CStr::from_ptr(q) }.to_string_lossy().into()
                        });
                    }
                }
                s
            }
            Call::SetString { vr, values } => {
                let v: Vec<Option<&str>> = values.iter().map(|s| Some(*s)).collect();
                c.set_string(vr, &v)
            }
            Call::SetInputDerivatives { vr, order, values } => {
                c.set_real_input_derivatives(vr, &vec![order; vr.len()], values)
            }
            Call::DoStep { t, h } => {
                time = t;
                self.t = t + h;
                c.do_step(t, h, true)
            }
            Call::Terminate => c.terminate(),
            Call::SaveState => match c.get_fmu_state(self.saved.as_mut()) {
                Ok(Some(new)) => {
                    self.saved = Some(new);
                    Status::Ok
                }
                Ok(None) => Status::Ok,
                Err(s) => s,
            },
            Call::RestoreState => match &self.saved {
                Some(state) => c.set_fmu_state(state),
                None => c.fail("fmi2SetFMUstate", "no state was saved (fmi2GetFMUstate) before"),
            },
            Call::GetBooleanStatus { kind, out } => match c.get_boolean_status(kind) {
                Ok(b) => {
                    *out = b;
                    Status::Ok
                }
                Err(s) => s,
            },
            Call::GetRealStatus { kind, out } => match c.get_real_status(kind) {
                Ok(x) => {
                    *out = x;
                    Status::Ok
                }
                Err(s) => s,
            },
            // FMI 2.0 has no Binary, UInt64, clocks or event mode.
            call @ (Call::GetBinary { .. }
            | Call::SetBinary { .. }
            | Call::GetUInt64 { .. }
            | Call::SetUInt64 { .. }
            | Call::GetClock { .. }
            | Call::SetClock { .. }
            | Call::EnterEventMode
            | Call::UpdateDiscreteStates { .. }
            | Call::EnterStepMode) => return Err(call.unsupported(&self.name)),
        };
        self.check(function, time, s)
    }

    fn can_interpolate_inputs(&self) -> bool {
        self.interpolates
    }

    fn fmu_warnings(&self) -> u64 {
        self.warnings
    }
}

/// The error of a call the harness refuses before calling the FMU.
fn call_unsupported(instance: &str, why: &str) -> MasterError {
    MasterError::Worker {
        instance: instance.to_owned(),
        function: "fmi2SetInteger",
        time: f64::NAN,
        message: why.to_owned(),
    }
}
