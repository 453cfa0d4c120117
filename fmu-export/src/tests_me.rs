//! The Model Exchange side of the export layer: the description (derivatives, `<ModelExchange>`
//! in 2.0 and 3.0), the state machine of an ME instance, the refusal of ME calls by a
//! Co-Simulation instance, and the C entry points.

use crate::ode::rk4_step;
use crate::types::*;
use crate::*;
use std::ffi::CString;

/// ẋ = −k x + u: a first-order lag with one continuous state.
#[derive(Clone)]
struct Lag {
    k: f64,
    x: f64,
    dx: f64,
    u: InputSignal,
}

impl Default for Lag {
    fn default() -> Self {
        Self { k: 2.0, x: 1.0, dx: 0.0, u: InputSignal::new(0.0) }
    }
}

impl CoSimModel for Lag {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "Lag",
            model_identifier: "lag",
            fmu_name: "lag",
            description: "first-order lag",
            documentation_html: "<p>ẋ = −k x + u</p>",
            source: "textbook",
            default_experiment: (0.0, 1.0, 0.01),
            interpolates_inputs: false,
        }
    }
    fn variables() -> Vec<Variable<Self>> {
        vec![
            Variable::parameter("k", "1/s", "rate", |m: &Self| m.k, |m, v| m.k = v).min(0.0),
            Variable::input("u", "1/s", "forcing", |m: &Self| m.u.value, |m| &mut m.u),
            Variable::output("x", "", "state", |m: &Self| m.x),
            Variable::local("der_x", "1/s", "dx/dt", |m: &Self| m.dx),
        ]
    }
    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.x = 1.0;
        self.dx = -self.k * self.x + self.u.value;
        Ok(())
    }
    fn evaluate(&mut self, _ctx: &mut Context) -> Result<(), ModelError> {
        self.dx = -self.k * self.x + self.u.value;
        Ok(())
    }
    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        rk4_step(self, t, h, ctx)
    }
    fn model_exchange() -> Option<Ode<Self>> {
        Some(Ode::of())
    }
    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        v.real(&mut self.k);
        v.real(&mut self.x);
        v.input(&mut self.u);
    }
}

impl OdeModel for Lag {
    const STATES: &'static [(&'static str, &'static str)] = &[("x", "der_x")];
    const CS_STEP: f64 = 1e-3;
    fn states(&self, x: &mut [f64]) {
        x[0] = self.x;
    }
    fn set_states(&mut self, x: &[f64]) {
        self.x = x[0];
    }
    fn derivatives(&mut self, _t: f64, dx: &mut [f64], _ctx: &mut Context) -> Result<(), ModelError> {
        self.dx = -self.k * self.x + self.u.value;
        dx[0] = self.dx;
        Ok(())
    }
}

static LAG: Factory<Lag> = Factory::new();
static FMUS: &[&dyn Fmu] = &[&LAG];

#[test]
fn the_description_declares_model_exchange_and_the_derivatives() {
    let d = LAG.description().unwrap();
    let xml = &d.xml;
    assert!(
        xml.contains(
            r#"<ModelExchange modelIdentifier="lag" canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>"#
        ),
        "{xml}"
    );
    assert!(xml.contains("<CoSimulation"), "{xml}");
    // der_x (index 4) is the derivative of x (index 3), listed in <Derivatives> and as an initial unknown.
    assert!(xml.contains(r#"derivative="3""#), "{xml}");
    assert!(xml.contains("<Derivatives>\n      <Unknown index=\"4\""), "{xml}");
    assert!(model_description::validate(&d.model).is_empty());
    let xml3 = fmi3::description3(&LAG).unwrap();
    assert!(
        xml3.contains(
            r#"<ModelExchange modelIdentifier="lag" canGetAndSetFMUState="true" canSerializeFMUState="true"/>"#
        ),
        "{xml3}"
    );
    // 3.0: the derivative attribute is the state's value reference (2).
    assert!(xml3.contains(r#"derivative="2""#), "{xml3}");
    assert!(xml3.contains(r#"<ContinuousStateDerivative valueReference="3""#), "{xml3}");
}

#[test]
fn the_model_exchange_state_machine_is_enforced() {
    let mut i = LAG.instance_model_exchange(Logger::new(None, "lag", false)).unwrap();
    let mut x = [0.0];
    let mut dx = [0.0];
    // Before initialization the time and the states cannot be set.
    assert_eq!(i.set_time("fmi2SetTime", 0.0), Status::Error);
    assert_eq!(i.get_nominals("fmi2GetNominalsOfContinuousStates", &mut x), Status::Ok);
    assert_eq!(x, [1.0]);
    assert_eq!(i.number_of_states("fmi3GetNumberOfContinuousStates"), Ok(1));
    assert_eq!(i.number_of_event_indicators("fmi3GetNumberOfEventIndicators"), Ok(0));
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    assert_eq!(i.set_real(&[1], &[0.5]), Status::Ok);
    assert_eq!(i.get_continuous_states("fmi2GetContinuousStates", &mut x), Status::Ok);
    assert_eq!(x, [1.0]);
    assert_eq!(i.exit_initialization_mode(), Status::Ok);
    assert_eq!(i.state(), State::EventMode);
    // Event mode: no states set, no doStep, one event iteration.
    assert_eq!(i.set_continuous_states("fmi2SetContinuousStates", &[2.0]), Status::Error);
    assert!(i.log.history.last().unwrap().contains("illegal call sequence: not allowed in state eventMode"));
    assert_eq!(i.do_step(0.0, 0.1, true), Status::Error);
    assert_eq!(i.new_discrete_states("fmi2NewDiscreteStates"), Ok(EventInfo::default()));
    assert_eq!(i.enter_continuous_time_mode("fmi2EnterContinuousTimeMode"), Status::Ok);
    // Continuous-time mode: ẋ = −2 x + 0.5.
    assert_eq!(i.set_time("fmi2SetTime", 0.25), Status::Ok);
    assert_eq!(i.set_continuous_states("fmi2SetContinuousStates", &[2.0]), Status::Ok);
    assert_eq!(i.get_derivatives("fmi2GetDerivatives", &mut dx), Status::Ok);
    assert_eq!(dx, [-3.5]);
    let mut y = [0.0, 0.0];
    assert_eq!(i.get_real(&[2, 3], &mut y), Status::Ok);
    assert_eq!(y, [2.0, -3.5]);
    assert_eq!(i.get_derivatives("fmi2GetDerivatives", &mut [0.0, 0.0]), Status::Error);
    assert!(i.log.history.last().unwrap().contains("2 values given, the model has 1"));
    assert_eq!(i.set_continuous_states("fmi2SetContinuousStates", &[f64::NAN]), Status::Error);
    assert_eq!(i.completed_integrator_step("fmi2CompletedIntegratorStep"), Ok((false, false)));
    assert_eq!(i.new_discrete_states("fmi2NewDiscreteStates"), Err(Status::Error));
    assert_eq!(i.enter_event_mode("fmi2EnterEventMode"), Status::Ok);
    assert_eq!(i.terminate(), Status::Ok);
    assert_eq!(i.get_continuous_states("fmi2GetContinuousStates", &mut x), Status::Ok);
    assert_eq!(x, [2.0]);
}

#[test]
fn a_co_simulation_instance_refuses_model_exchange_calls() {
    let mut i = LAG.instance(Logger::new(None, "lag", false)).unwrap();
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    assert_eq!(i.exit_initialization_mode(), Status::Ok);
    assert_eq!(i.enter_event_mode("fmi3EnterEventMode"), Status::Error);
    assert!(i
        .log
        .history
        .last()
        .unwrap()
        .contains("fmi3EnterEventMode: this instance was instantiated for Co-Simulation"));
    assert_eq!(i.get_derivatives("fmi2GetDerivatives", &mut [0.0]), Status::Error);
    // Its Co-Simulation interface integrates the same ODE (RK4): x(1) = 0.25 + 0.75 e^−2 with u = 0.5.
    assert_eq!(i.set_real(&[1], &[0.5]), Status::Ok);
    assert_eq!(i.do_step(0.0, 1.0, true), Status::Ok);
    let mut x = [0.0];
    assert_eq!(i.get_real(&[2], &mut x), Status::Ok);
    assert!((x[0] - (0.25 + 0.75 * (-2.0f64).exp())).abs() < 1e-10, "{}", x[0]);
}

#[test]
fn the_c_entry_points_instantiate_and_integrate_model_exchange() {
    let guid = CString::new(LAG.description().unwrap().guid.clone()).unwrap();
    // SAFETY: valid arguments per FMI 2.0 (no callbacks: fmi2Instantiate accepts NULL functions).
    unsafe {
        let c = fmi2::instantiate(
            FMUS,
            c"me".as_ptr(),
            FMI2_MODEL_EXCHANGE,
            guid.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            0,
        );
        assert!(!c.is_null());
        assert_eq!(fmi2::enter_initialization_mode(c), Status::Ok);
        assert_eq!(common::exit_initialization_mode(c), Status::Ok);
        let mut info = fmi2EventInfo { new_discrete_states_needed: 1, ..Default::default() };
        assert_eq!(fmi2::new_discrete_states(c, &mut info), Status::Ok);
        assert_eq!(info.new_discrete_states_needed, 0);
        assert_eq!(me_calls::enter_continuous_time_mode(c, "fmi2EnterContinuousTimeMode"), Status::Ok);
        // Explicit Euler through the C API, h = 1e-4 over 1 s: x(1) ≈ e^−2.
        let (mut x, mut dx) = ([0.0], [0.0]);
        assert_eq!(
            me_calls::get_vector(c, "fmi2GetContinuousStates", me_calls::Vector::States, x.as_mut_ptr(), 1),
            Status::Ok
        );
        for n in 0..10_000 {
            assert_eq!(me_calls::set_time(c, "fmi2SetTime", n as f64 * 1e-4), Status::Ok);
            assert_eq!(me_calls::set_continuous_states(c, "fmi2SetContinuousStates", x.as_ptr(), 1), Status::Ok);
            assert_eq!(
                me_calls::get_vector(c, "fmi2GetDerivatives", me_calls::Vector::Derivatives, dx.as_mut_ptr(), 1),
                Status::Ok
            );
            x[0] += 1e-4 * dx[0];
            let (mut e, mut t) = (1, 1);
            assert_eq!(
                me_calls::completed_integrator_step::<fmi2Boolean>(c, "fmi2CompletedIntegratorStep", &mut e, &mut t),
                Status::Ok
            );
            assert_eq!((e, t), (0, 0));
        }
        assert!((x[0] - (-2.0f64).exp()).abs() < 1e-4, "{}", x[0]);
        // NULL arrays are refused, not dereferenced.
        assert_eq!(
            me_calls::get_vector(c, "fmi2GetDerivatives", me_calls::Vector::Derivatives, std::ptr::null_mut(), 1),
            Status::Error
        );
        common::free_instance(c);
        // An fmuType that is neither ME nor CS is refused.
        assert!(fmi2::instantiate(FMUS, c"me".as_ptr(), 7, guid.as_ptr(), std::ptr::null(), std::ptr::null(), 0, 0)
            .is_null());
    }
}

#[test]
fn a_model_exchange_state_is_saved_serialized_and_restored_in_continuous_time_mode() {
    // <ModelExchange> declares canGetAndSetFMUstate and canSerializeFMUstate: a state taken in
    // continuous-time mode comes back (through bytes too, in another instance) with its mode.
    let mut a = LAG.instance_model_exchange(Logger::new(None, "lag", false)).unwrap();
    assert_eq!(a.enter_initialization_mode(), Status::Ok);
    assert_eq!(a.set_real(&[1], &[0.5]), Status::Ok);
    assert_eq!(a.exit_initialization_mode(), Status::Ok);
    assert_eq!(a.new_discrete_states("fmi2NewDiscreteStates"), Ok(EventInfo::default()));
    assert_eq!(a.enter_continuous_time_mode("fmi2EnterContinuousTimeMode"), Status::Ok);
    assert_eq!(a.set_time("fmi2SetTime", 0.25), Status::Ok);
    assert_eq!(a.set_continuous_states("fmi2SetContinuousStates", &[2.0]), Status::Ok);
    let snap = a.get_fmu_state(None).unwrap().unwrap();
    let bytes = a.serialize_fmu_state(&snap).unwrap();
    assert_eq!(a.set_continuous_states("fmi2SetContinuousStates", &[7.0]), Status::Ok);
    assert_eq!(a.enter_event_mode("fmi2EnterEventMode"), Status::Ok);
    let mut dx = [0.0];
    for (i, restored) in [Some(snap), None].into_iter().enumerate() {
        let mut b =
            if i == 0 { None } else { Some(LAG.instance_model_exchange(Logger::new(None, "b", false)).unwrap()) };
        let s = b.as_mut().unwrap_or(&mut a);
        let state = match restored {
            Some(state) => state,
            None => s.deserialize_fmu_state(&bytes).unwrap(),
        };
        assert_eq!(s.set_fmu_state(&state), Status::Ok);
        assert_eq!(s.state(), State::ContinuousTimeMode, "restore {i}");
        assert_eq!(s.get_derivatives("fmi2GetDerivatives", &mut dx), Status::Ok);
        assert_eq!(dx, [-3.5], "restore {i}");
    }
}
