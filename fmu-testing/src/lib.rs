//! `testing-faulty.fmu`: a test-only FMU whose failures can be switched on, so that the master's
//! handling of misbehaving FMUs is tested on a real FMU loaded from a real archive.
//!
//! The model is trivial: one state x with ẋ = u (input u, held or following the polynomial of
//! `fmi2SetRealInputDerivatives`), output y = x, x(t₀) = x0. The enumeration parameter `fault`
//! chooses what happens in every `fmi2DoStep` that starts at or after `fault_time`:
//!
//! | fault     | `fmi2DoStep` … |
//! |-----------|----------------|
//! | `none`    | works (the default) |
//! | `warning` | works and returns fmi2Warning, with a logged message |
//! | `discard` | returns fmi2Discard (the step is not done; the instance enters *stepFailed*) |
//! | `error`   | returns fmi2Error (the model reports an error) |
//! | `nan`     | makes y NaN (the export layer refuses it: fmi2Error naming y) |
//! | `panic`   | panics in model code (the export layer catches it: fmi2Error) |
//! | `abort`   | calls `std::process::abort()`: the whole process dies with SIGABRT |
//! | `terminate` | ends the simulation at `fault_time` (FMI 2.0 termination): the step that would pass it integrates up to `fault_time` and returns fmi2Discard with `fmi2Terminated` = true and `fmi2LastSuccessfulTime` = `fault_time` |
//!
//! Not packaged for users: it exists for `cosim-cli/tests/failures.rs`.
#![warn(missing_docs)]

use fmu_export::{CoSimModel, Context, EnumType, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};

/// The `fault` enumeration.
pub static FAULT: EnumType = EnumType {
    name: "Fault",
    description: "What fmi2DoStep does from fault_time on",
    items: &[
        ("none", 1, "no fault"),
        ("warning", 2, "return fmi2Warning with a message"),
        ("discard", 3, "return fmi2Discard: the step cannot be completed"),
        ("error", 4, "return fmi2Error: the model fails"),
        ("nan", 5, "the output y becomes NaN"),
        ("panic", 6, "panic in model code"),
        ("abort", 7, "abort the process (SIGABRT)"),
        ("terminate", 8, "end the simulation at fault_time (fmi2Discard, fmi2Terminated = true)"),
    ],
};

/// Values of [`FAULT`].
pub mod fault {
    /// No fault.
    pub const NONE: i32 = 1;
    /// fmi2Warning.
    pub const WARNING: i32 = 2;
    /// fmi2Discard.
    pub const DISCARD: i32 = 3;
    /// fmi2Error.
    pub const ERROR: i32 = 4;
    /// y = NaN.
    pub const NAN: i32 = 5;
    /// A panic.
    pub const PANIC: i32 = 6;
    /// `std::process::abort()`.
    pub const ABORT: i32 = 7;
    /// The simulation ends at `fault_time` (fmi2Terminated).
    pub const TERMINATE: i32 = 8;
}

/// The faulty integrator ẋ = u, y = x.
#[derive(Debug, Clone)]
pub struct Faulty {
    /// Initial value of x.
    pub x0: f64,
    /// Item of [`FAULT`].
    pub fault: i32,
    /// Steps starting at or after this time fail (s).
    pub fault_time: f64,
    /// The state.
    pub x: f64,
    /// The input.
    pub u: InputSignal,
}

impl Default for Faulty {
    fn default() -> Self {
        Self { x0: 1.0, fault: fault::NONE, fault_time: 0.0, x: 1.0, u: InputSignal::new(0.0) }
    }
}

const DOC: &str = "<h1>testing-faulty</h1>\
<p>Test FMU: x' = u, y = x, x(t0) = x0. From <code>fault_time</code> on, every fmi2DoStep misbehaves \
as the enumeration parameter <code>fault</code> says: none, warning (fmi2Warning), discard \
(fmi2Discard), error (fmi2Error), nan (y becomes NaN, refused with fmi2Error), panic (caught: \
fmi2Error) or abort (the process dies with SIGABRT); terminate ends the simulation at <code>fault_time</code> \
(fmi2Discard with fmi2Terminated = true and fmi2LastSuccessfulTime = fault_time).</p>";

impl Faulty {
    /// Whether a step starting at `t` (length `h`) is at or after the fault time.
    fn faulty_step(&self, t: f64, h: f64) -> bool {
        self.fault != fault::NONE && t >= self.fault_time - 1e-9 * h
    }

    /// x += ∫ u over [0, tau] of the step (Simpson's rule: exact up to cubics; the quartic term
    /// is negligible for the tests and exact when held).
    fn integrate(&mut self, tau: f64) {
        let u = &self.u;
        self.x += tau / 6.0 * (u.at(0.0) + 4.0 * u.at(0.5 * tau) + u.at(tau));
    }

    /// Panics on purpose: the `panic` fault.
    #[allow(clippy::panic)] // the point of this fault: a panic in model code
    fn panic_now(t: f64) -> ! {
        panic!("fault = panic: deliberate panic in the step from t = {t}")
    }
}

impl CoSimModel for Faulty {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "TestingFaulty",
            model_identifier: "testing_faulty",
            fmu_name: "testing-faulty",
            description: "Test FMU x' = u, y = x whose steps fail on request (parameters fault, fault_time)",
            documentation_html: DOC,
            source: "test fixture of this workspace (issue 7)",
            default_experiment: (0.0, 1.0, 1e-3),
            interpolates_inputs: true,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        vec![
            Variable::parameter("x0", "", "Initial value of x", |m: &Self| m.x0, |m, v| m.x0 = v),
            Variable::enumeration(
                "fault",
                &FAULT,
                "What fmi2DoStep does from fault_time on",
                |m: &Self| m.fault,
                |m, v| m.fault = v,
            ),
            Variable::parameter(
                "fault_time",
                "s",
                "Steps starting at or after this time misbehave as fault says",
                |m: &Self| m.fault_time,
                |m, v| m.fault_time = v,
            ),
            Variable::input("u", "", "Rate of x", |m: &Self| m.u.value, |m| &mut m.u),
            Variable::output("y", "", "y = x", |m: &Self| m.x)
                .depends_on(&[])
                .output_derivatives(1, |m: &Self, _| m.u.value),
        ]
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.x = self.x0;
        Ok(())
    }

    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        if self.fault == fault::TERMINATE {
            // The step that would pass fault_time ends there.
            if t + h > self.fault_time + 1e-9 * h {
                let at = self.fault_time.max(t);
                self.integrate(at - t);
                ctx.terminate(at, format!("fault = terminate: the simulation ends at fault_time = {at}"));
            } else {
                self.integrate(h);
            }
            return Ok(());
        }
        if self.faulty_step(t, h) {
            match self.fault {
                fault::WARNING => ctx.warn(format!("fault = warning: warning in the step from t = {t}")),
                fault::DISCARD => {
                    ctx.discard(format!("fault = discard: the step from t = {t} cannot be completed"));
                    return Ok(());
                }
                fault::ERROR => {
                    return Err(ModelError::new(format!("fault = error: failure in the step from t = {t}")))
                }
                fault::NAN => {
                    self.x = f64::NAN;
                    return Ok(());
                }
                fault::PANIC => Self::panic_now(t),
                fault::ABORT => std::process::abort(),
                _ => {}
            }
        }
        self.integrate(h);
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        v.real(&mut self.x0);
        let mut f = i64::from(self.fault);
        v.integer(&mut f);
        self.fault = i32::try_from(f).unwrap_or(fault::NONE);
        v.real(&mut self.fault_time);
        v.real(&mut self.x);
        v.input(&mut self.u);
    }
}

fmu_export::define_fmus!(Faulty);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use fmu_export::{Component, Factory, Logger, Status};

    static F: Factory<Faulty> = Factory::new();

    fn run(fault: i32, steps: usize) -> (Vec<Status>, fmu_export::Instance<Faulty>) {
        let mut i = F.instance(Logger::new(None, "faulty", true)).unwrap();
        assert_eq!(i.set_integer(&[1], &[fault]), Status::Ok);
        assert_eq!(i.set_real(&[2, 3], &[0.25, 2.0]), Status::Ok);
        assert_eq!(i.enter_initialization_mode(), Status::Ok);
        assert_eq!(i.exit_initialization_mode(), Status::Ok);
        let mut t = 0.0;
        let mut statuses = Vec::new();
        for _ in 0..steps {
            let s = i.do_step(t, 0.1, true);
            statuses.push(s);
            if s > Status::Warning {
                break;
            }
            t += 0.1;
        }
        (statuses, i)
    }

    #[test]
    fn faults_start_at_fault_time() {
        let (s, mut i) = run(fault::NONE, 5);
        assert_eq!(s, [Status::Ok; 5]);
        let mut y = [0.0];
        i.get_real(&[4], &mut y);
        assert!((y[0] - 2.0).abs() < 1e-12, "y = 1 + 2 * 0.5 = {}", y[0]);

        let (s, i) = run(fault::WARNING, 5);
        assert_eq!(s, [Status::Ok, Status::Ok, Status::Ok, Status::Warning, Status::Warning]);
        assert!(
            i.log.history.iter().any(|m| m.contains("fault = warning") && m.contains("t = 0.3")),
            "{:?}",
            i.log.history
        );

        let (s, mut i) = run(fault::DISCARD, 5);
        assert_eq!(s, [Status::Ok, Status::Ok, Status::Ok, Status::Discard]);
        assert_eq!(i.state(), fmu_export::State::StepFailed);
        let last = i.get_real_status(fmu_export::types::FMI2_LAST_SUCCESSFUL_TIME).unwrap();
        assert!((last - 0.3).abs() < 1e-12, "the discarded step is not done: {last}");
        assert_eq!(i.do_step(0.3, 0.1, true), Status::Error, "no step after a discard");
        assert_eq!(i.terminate(), Status::Ok);

        let (s, i) = run(fault::ERROR, 5);
        assert_eq!(s.last(), Some(&Status::Error));
        assert!(i.log.history.iter().any(|m| m.contains("fault = error")), "{:?}", i.log.history);

        let (s, i) = run(fault::NAN, 5);
        assert_eq!(s.last(), Some(&Status::Error));
        assert!(i.log.history.iter().any(|m| m.contains("output \"y\" = NaN")), "{:?}", i.log.history);
    }

    #[test]
    fn terminate_ends_the_simulation_at_fault_time() {
        use fmu_export::types::{FMI2_LAST_SUCCESSFUL_TIME, FMI2_TERMINATED};
        // fault_time 0.25 is inside the third step [0.2, 0.3]: x = 1 + 2 * 0.25 there.
        let (s, mut i) = run(fault::TERMINATE, 5);
        assert_eq!(s, [Status::Ok, Status::Ok, Status::Discard]);
        assert_eq!(i.state(), fmu_export::State::StepFailed);
        assert_eq!(i.get_boolean_status(FMI2_TERMINATED), Ok(true));
        let last = i.get_real_status(FMI2_LAST_SUCCESSFUL_TIME).unwrap();
        assert!((last - 0.25).abs() < 1e-15, "{last}");
        let mut y = [0.0];
        assert_eq!(i.get_real(&[4], &mut y), Status::Ok, "outputs may be read after the termination");
        assert!((y[0] - 1.5).abs() < 1e-12, "y = {}", y[0]);
        assert!(
            i.log.history.iter().any(|m| m.contains("terminated the simulation at t = 0.25")),
            "{:?}",
            i.log.history
        );
        // After the termination: no step, no setter; terminate and the getters are allowed.
        assert_eq!(i.do_step(0.25, 0.1, true), Status::Error);
        assert_eq!(i.set_real(&[3], &[1.0]), Status::Error);
        assert_eq!(i.terminate(), Status::Ok);
        assert_eq!(i.get_real(&[4], &mut y), Status::Ok);
        // A discard is not a termination.
        let (s, mut i) = run(fault::DISCARD, 5);
        assert_eq!(s.last(), Some(&Status::Discard));
        assert_eq!(i.get_boolean_status(FMI2_TERMINATED), Ok(false));
    }

    #[test]
    fn the_description_declares_the_fault_enumeration() {
        let xml = &FMUS[0].description().unwrap().xml;
        for item in ["none", "warning", "discard", "error", "nan", "panic", "abort", "terminate"] {
            assert!(xml.contains(&format!("name=\"{item}\"")), "{item} missing");
        }
        assert!(xml.contains("name=\"fault_time\""));
    }
}
