//! In-process tests of the export layer with a model that has every variable type.

use crate::types::*;
use crate::*;
use crate::{common, fmi2 as ffi};
use model_description::{Causality, DependencyKind, VariableKind};
use std::ffi::{c_char, c_void, CStr};

static MODE: EnumType = EnumType {
    name: "Mode",
    description: "test enumeration",
    items: &[("slow", 1, "half rate"), ("fast", 2, "double rate")],
};

/// ẋ = −r x + u with r = rate·(mode == fast ? 2 : 0.5); Integer, Boolean and String parameters,
/// a tunable gain, an integer output counting steps, and a switch that panics in `do_step`.
#[derive(Clone)]
struct Toy {
    rate: f64,
    gain: f64,
    mode: i32,
    substeps: i32,
    explode: bool,
    label: String,
    x: f64,
    steps: i32,
    u: InputSignal,
    /// A bounded input, [-2, 2] (not used by the dynamics).
    w: InputSignal,
}

impl Default for Toy {
    fn default() -> Self {
        Self {
            rate: 1.0,
            gain: 1.0,
            mode: 1,
            substeps: 10,
            explode: false,
            label: "toy".into(),
            x: 1.0,
            steps: 0,
            u: InputSignal::new(0.0),
            w: InputSignal::new(0.0),
        }
    }
}

impl Toy {
    fn r(&self) -> f64 {
        self.rate * if self.mode == 2 { 2.0 } else { 0.5 }
    }
}

impl CoSimModel for Toy {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "Toy",
            model_identifier: "toy",
            fmu_name: "toy",
            description: "test model",
            documentation_html: "<p>x' = -r x + u</p>",
            source: "none",
            default_experiment: (0.0, 1.0, 0.1),
            interpolates_inputs: true,
        }
    }
    fn variables() -> Vec<Variable<Self>> {
        vec![
            Variable::parameter("rate", "1/s", "rate", |m: &Self| m.rate, |m, v| m.rate = v).min(0.0).max(100.0),
            Variable::parameter("gain", "1", "output gain", |m: &Self| m.gain, |m, v| m.gain = v).tunable(),
            Variable::enumeration("mode", &MODE, "rate mode", |m: &Self| m.mode, |m, v| m.mode = v),
            Variable::integer("substeps", "Euler sub-steps", |m: &Self| m.substeps, |m, v| m.substeps = v).min(1.0),
            Variable::boolean("explode", "panic in do_step", |m: &Self| m.explode, |m, v| m.explode = v),
            Variable::string("label", "a label", |m: &Self| m.label.as_str(), |m, v| m.label = v.to_owned()),
            Variable::input("u", "1/s", "forcing", |m: &Self| m.u.value, |m| &mut m.u),
            Variable::output("x", "", "state", |m: &Self| m.x).output_derivatives(1, |m, _| -m.r() * m.x + m.u.value),
            Variable::output("y", "", "gain (x + u)", |m: &Self| m.gain * (m.x + m.u.value))
                .depends_on(&[("u", DependencyKind::Tunable)]),
            Variable::integer("steps", "steps taken", |m: &Self| m.steps, |m, v| m.steps = v).discrete_output(),
            Variable::calculated_parameter("r", "1/s", "effective rate", |m: &Self| m.r()),
            Variable::input("w", "1", "bounded input", |m: &Self| m.w.value, |m| &mut m.w).min(-2.0).max(2.0),
        ]
    }
    fn initialize(&mut self, _t0: f64, ctx: &mut Context) -> Result<(), ModelError> {
        if self.rate > 50.0 {
            ctx.warn(format!("rate = {} is large", self.rate));
        }
        self.x = 1.0;
        self.steps = 0;
        Ok(())
    }
    fn do_step(&mut self, _t: f64, h: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        if self.explode {
            panic!("boom");
        }
        let n = self.substeps.max(1);
        let dt = h / f64::from(n);
        for i in 0..n {
            let tau = f64::from(i) * dt;
            self.x += dt * (-self.r() * self.x + self.u.at(tau));
        }
        self.steps += 1;
        Ok(())
    }
    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        v.real(&mut self.rate);
        v.real(&mut self.gain);
        let mut mode = i64::from(self.mode);
        v.integer(&mut mode);
        self.mode = mode as i32;
        let mut sub = i64::from(self.substeps);
        v.integer(&mut sub);
        self.substeps = sub as i32;
        v.boolean(&mut self.explode);
        v.string(&mut self.label);
        v.real(&mut self.x);
        let mut steps = i64::from(self.steps);
        v.integer(&mut steps);
        self.steps = steps as i32;
        v.input(&mut self.u);
        v.input(&mut self.w);
    }
}

static TOY: Factory<Toy> = Factory::new();
static FMUS: &[&dyn Fmu] = &[&TOY];

fn vr(name: &str) -> u32 {
    TOY.table().unwrap().vars.iter().position(|v| v.name == name).unwrap() as u32
}

fn started() -> Instance<Toy> {
    let mut i = TOY.instance(Logger::new(None, "toy", true)).unwrap();
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    assert_eq!(i.exit_initialization_mode(), Status::Ok);
    i
}

#[test]
fn description_matches_the_table() {
    let d = TOY.description().unwrap();
    let md = &d.model;
    assert_eq!(md.model_variables.len(), 12);
    for (i, v) in md.model_variables.iter().enumerate() {
        assert_eq!(v.value_reference as usize, i);
    }
    // Start values come from Default through the getters.
    let label = md.variable("label").unwrap();
    assert_eq!(label.kind, VariableKind::String { declared_type: None, start: Some("toy".into()) });
    let mode = md.variable("mode").unwrap();
    assert!(
        matches!(&mode.kind, VariableKind::Enumeration { declared_type, start: Some(1), .. } if declared_type == "Mode")
    );
    assert_eq!(md.variable("r").unwrap().causality, Causality::CalculatedParameter);
    assert!(!md.variable("r").unwrap().kind.has_start());
    // Outputs x, y, steps in index order; y depends on u; initial unknowns add r.
    let outs: Vec<u32> = md.model_structure.outputs.iter().map(|u| u.index).collect();
    assert_eq!(outs, vec![8, 9, 10]);
    assert_eq!(md.model_structure.outputs[1].dependencies, Some(vec![7]));
    assert_eq!(md.model_structure.outputs[0].dependencies, Some(vec![]));
    let iu: Vec<u32> = md.model_structure.initial_unknowns.iter().map(|u| u.index).collect();
    assert_eq!(iu, vec![8, 9, 10, 11]);
    // Their dependencies in Initialization Mode: the parameters (1-6) and, for y, its
    // feedthrough input u (7); none is "depends on everything", which would make a coupled
    // pair look like an algebraic loop to an importer (OMSimulator on the oscillator's m2).
    let deps: Vec<Option<Vec<u32>>> =
        md.model_structure.initial_unknowns.iter().map(|u| u.dependencies.clone()).collect();
    let params = vec![1, 2, 3, 4, 5, 6];
    assert_eq!(deps, vec![Some(params.clone()), Some(vec![1, 2, 3, 4, 5, 6, 7]), Some(params.clone()), Some(params)]);
    assert_eq!(md.co_simulation.as_ref().unwrap().max_output_derivative_order, 1);
    assert!(d.guid.starts_with('{') && d.guid.len() == 38, "{}", d.guid);
    assert!(model_description::validate(md).is_empty());
    // The XML reads back to the same description: the table is the single source of truth.
    let back = model_description::from_str(&d.xml).unwrap();
    assert_eq!(back.model_variables.len(), md.model_variables.len());
    for (a, b) in back.model_variables.iter().zip(&md.model_variables) {
        assert_eq!(
            (&a.name, a.value_reference, a.causality, a.variability, &a.kind),
            (&b.name, b.value_reference, b.causality, b.variability, &b.kind)
        );
    }
    assert_eq!(back.guid, d.guid);
}

#[test]
fn guid_changes_with_the_description() {
    let xml = &TOY.description().unwrap().xml;
    let a = description::guid_of(xml);
    assert_eq!(a, description::guid_of(xml));
    assert_ne!(a, description::guid_of(&xml.replace("effective rate", "effective  rate")));
}

#[test]
fn every_type_gets_and_sets() {
    let mut i = TOY.instance(Logger::new(None, "toy", true)).unwrap();
    assert_eq!(i.set_integer(&[vr("mode"), vr("substeps")], &[2, 4]), Status::Ok);
    assert_eq!(i.set_boolean(&[vr("explode")], &[0]), Status::Ok);
    assert_eq!(i.set_string(&[vr("label")], &[Some("hello")]), Status::Ok);
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    let mut r = [0.0];
    assert_eq!(i.get_real(&[vr("r")], &mut r), Status::Ok);
    assert_eq!(r[0], 2.0, "calculated parameter visible in initialization mode");
    assert_eq!(i.exit_initialization_mode(), Status::Ok);
    let mut ints = [0; 2];
    assert_eq!(i.get_integer(&[vr("mode"), vr("substeps")], &mut ints), Status::Ok);
    assert_eq!(ints, [2, 4]);
    let mut b = [7];
    assert_eq!(i.get_boolean(&[vr("explode")], &mut b), Status::Ok);
    assert_eq!(b, [0]);
    let mut s: [*const c_char; 1] = [std::ptr::null()];
    assert_eq!(i.get_string(&[vr("label")], &mut s), Status::Ok);
    // SAFETY: the pointer is valid until the next call on the instance.
    assert_eq!(unsafe { CStr::from_ptr(s[0]) }.to_str().unwrap(), "hello");
    // Tunable parameter between steps; fixed one refused; type mismatches refused.
    assert_eq!(i.set_real(&[vr("gain")], &[3.0]), Status::Ok);
    assert_eq!(i.set_integer(&[vr("substeps")], &[2]), Status::Error);
    assert_eq!(i.set_real(&[vr("mode")], &[1.0]), Status::Error);
    assert_eq!(i.set_boolean(&[vr("label")], &[1]), Status::Error);
    assert_eq!(i.set_string(&[vr("x")], &[Some("x")]), Status::Error);
    assert_eq!(i.set_integer(&[vr("steps")], &[1]), Status::Error);
    // Direct feedthrough: y follows u without a step.
    assert_eq!(i.set_real(&[vr("u")], &[0.5]), Status::Ok);
    let mut y = [0.0];
    assert_eq!(i.get_real(&[vr("y")], &mut y), Status::Ok);
    assert_eq!(y[0], 3.0 * (1.0 + 0.5));
    // Mismatched lengths are refused.
    assert_eq!(i.get_real(&[vr("x"), vr("y")], &mut y), Status::Error);
}

#[test]
fn warnings_from_the_model_are_logged_and_returned() {
    let mut i = TOY.instance(Logger::new(None, "toy", true)).unwrap();
    assert_eq!(i.set_real(&[vr("rate")], &[60.0]), Status::Ok);
    assert_eq!(i.set_real(&[vr("rate")], &[200.0]), Status::Error);
    assert!(i.log.history.last().unwrap().contains("outside [0, 100]"));
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    assert_eq!(i.exit_initialization_mode(), Status::Warning);
    assert!(i.log.history.iter().any(|l| l.contains("logStatusWarning") && l.contains("rate = 60")));
}

#[test]
fn input_polynomial_is_followed_inside_the_step() {
    // r = 0.5, u(τ) = 1 + 2τ over one step with many Euler sub-steps ≈ exact solution.
    let mut i = started();
    assert_eq!(i.set_integer(&[vr("substeps")], &[1]), Status::Error, "fixed after init");
    let mut i2 = TOY.instance(Logger::new(None, "toy", true)).unwrap();
    assert_eq!(i2.set_integer(&[vr("substeps")], &[20000]), Status::Ok);
    assert_eq!(i2.enter_initialization_mode(), Status::Ok);
    assert_eq!(i2.exit_initialization_mode(), Status::Ok);
    assert_eq!(i2.set_real(&[vr("u")], &[1.0]), Status::Ok);
    assert_eq!(i2.set_real_input_derivatives(&[vr("u")], &[1], &[2.0]), Status::Ok);
    assert_eq!(i2.do_step(0.0, 1.0, true), Status::Ok);
    // x' = -x/2 + 1 + 2t, x(0) = 1 → x = -6 + 4t + 7 e^{-t/2}.
    let exact = -6.0 + 4.0 + 7.0 * (-0.5f64).exp();
    let mut x = [0.0];
    assert_eq!(i2.get_real(&[vr("x")], &mut x), Status::Ok);
    assert!((x[0] - exact).abs() < 1e-3, "{} vs {exact}", x[0]);
    // The input now holds u(1) = 3 with no derivative.
    let mut u = [0.0];
    assert_eq!(i2.get_real(&[vr("u")], &mut u), Status::Ok);
    assert_eq!(u[0], 3.0);
    let mut d = [0.0];
    assert_eq!(i2.get_real_output_derivatives(&[vr("x")], &[1], &mut d), Status::Ok);
    assert_eq!(d[0], -0.5 * x[0] + 3.0);
    drop(i);
}

#[test]
fn fmu_state_round_trip_through_bytes() {
    let mut a = started();
    assert_eq!(a.set_real(&[vr("u")], &[0.3]), Status::Ok);
    assert_eq!(a.do_step(0.0, 0.1, true), Status::Ok);
    let snap = a.get_fmu_state(None).unwrap().unwrap();
    let bytes = a.serialize_fmu_state(&snap).unwrap();
    assert_eq!(a.do_step(0.1, 0.1, true), Status::Ok);
    let mut x1 = [0.0];
    a.get_real(&[vr("x")], &mut x1);
    let mut b = TOY.instance(Logger::new(None, "other", true)).unwrap();
    let restored = b.deserialize_fmu_state(&bytes).unwrap();
    assert_eq!(b.set_fmu_state(&restored), Status::Ok);
    assert_eq!(b.do_step(0.1, 0.1, true), Status::Ok);
    let mut x2 = [0.0];
    b.get_real(&[vr("x")], &mut x2);
    assert_eq!(x1[0].to_bits(), x2[0].to_bits());
    let mut steps = [0];
    b.get_integer(&[vr("steps")], &mut steps);
    assert_eq!(steps, [2]);
    // Trailing garbage is refused.
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(b.deserialize_fmu_state(&longer).is_err());
    assert!(b.log.history.last().unwrap().contains("trailing"));
}

unsafe extern "C" fn no_log(_: *mut c_void, _: *const c_char, _: Status, _: *const c_char, _: *const c_char) {}

#[test]
fn a_panicking_model_returns_fmi2error_through_the_c_abi() {
    let callbacks = fmi2CallbackFunctions {
        // SAFETY: a non-variadic callee is call-compatible with the variadic logger type on the
        // platforms we build for (x86-64 System V); the FMU passes no variadic arguments.
        logger: Some(unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char),
                unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...),
            >(no_log)
        }),
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: std::ptr::null_mut(),
    };
    let guid = std::ffi::CString::new(TOY.description().unwrap().guid.clone()).unwrap();
    // SAFETY: valid arguments per FMI 2.0.
    unsafe {
        let c = ffi::instantiate(
            FMUS,
            c"t".as_ptr(),
            FMI2_CO_SIMULATION,
            guid.as_ptr(),
            std::ptr::null(),
            &callbacks,
            0,
            1,
        );
        assert!(!c.is_null());
        let vr_explode = [vr("explode")];
        assert_eq!(ffi::set_boolean(c, vr_explode.as_ptr(), 1, [1].as_ptr()), Status::Ok);
        assert_eq!(ffi::enter_initialization_mode(c), Status::Ok);
        assert_eq!(common::exit_initialization_mode(c), Status::Ok);
        assert_eq!(ffi::do_step(c, 0.0, 0.1, 1), Status::Error);
        // The instance is in the error state: no more steps, but reset works.
        assert_eq!(ffi::do_step(c, 0.0, 0.1, 1), Status::Error);
        assert_eq!(common::reset(c), Status::Ok);
        assert_eq!(ffi::enter_initialization_mode(c), Status::Ok);
        assert_eq!(common::exit_initialization_mode(c), Status::Ok);
        assert_eq!(ffi::do_step(c, 0.0, 0.1, 1), Status::Ok);
        common::free_instance(c);
        common::free_instance(c);
        // Unknown GUID and NULL name give NULL, not a crash.
        assert!(ffi::instantiate(FMUS, c"t".as_ptr(), 1, c"{x}".as_ptr(), std::ptr::null(), &callbacks, 0, 1).is_null());
        assert!(ffi::instantiate(FMUS, std::ptr::null(), 1, guid.as_ptr(), std::ptr::null(), std::ptr::null(), 0, 1)
            .is_null());
    }
}

#[test]
fn setup_experiment_stop_time_is_enforced() {
    let mut i = TOY.instance(Logger::new(None, "toy", false)).unwrap();
    assert_eq!(i.setup_experiment(None, 0.0, Some(-1.0)), Status::Error);
    assert_eq!(i.setup_experiment(Some(1e-6), 1.0, Some(1.2)), Status::Ok);
    assert_eq!(i.enter_initialization_mode(), Status::Ok);
    assert_eq!(i.exit_initialization_mode(), Status::Ok);
    assert_eq!(i.do_step(1.0, 0.1, true), Status::Ok);
    assert_eq!(i.do_step(1.1, 0.1, true), Status::Ok);
    assert_eq!(i.do_step(1.2, 0.1, true), Status::Error);
    // Errors are logged even with logging off.
    assert!(i.log.history.last().unwrap().contains("stopTime"));
}

#[test]
fn input_setters_give_the_general_outcome_on_every_path() {
    // All-valid Real inputs take the setters' fast path; everything else the general one, with
    // its messages. Either way a rejected call changes nothing.
    let mut i = started();
    let (u, w) = (vr("u"), vr("w"));
    let read = |i: &mut Instance<Toy>| {
        let mut v = [0.0; 2];
        assert_eq!(i.get_real(&[u, w], &mut v), Status::Ok);
        v
    };
    assert_eq!(i.set_real(&[u, w], &[0.25, -1.0]), Status::Ok);
    assert_eq!(read(&mut i), [0.25, -1.0]);
    assert_eq!(i.set_real(&[w], &[5.0]), Status::Warning, "an input out of bounds is set with a warning");
    assert!(i.log.history.last().unwrap().contains("outside [-2, 2]"));
    assert_eq!(read(&mut i), [0.25, 5.0]);
    let rejected =
        [(vec![u, w], vec![1.0, f64::NAN]), (vec![u, vr("rate")], vec![1.0, 1.0]), (vec![u, 999], vec![1.0, 1.0])];
    for (vrs, values) in rejected {
        assert_eq!(i.set_real(&vrs, &values), Status::Error, "{vrs:?} = {values:?}");
        assert_eq!(read(&mut i), [0.25, 5.0], "{vrs:?}: nothing set");
    }
    assert_eq!(i.set_real(&[u, w], &[1.0]), Status::Error, "lengths differ");
    assert_eq!(i.set_real_input_derivatives(&[u, w], &[1, 2], &[1.0, 4.0]), Status::Ok);
    assert_eq!(i.model().u.derivatives, [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(i.model().w.derivatives, [0.0, 4.0, 0.0, 0.0]);
    for (vrs, order) in [(vec![u, w], vec![1, 5]), (vec![u, vr("x")], vec![1, 1]), (vec![u, w], vec![0, 1])] {
        assert_eq!(i.set_real_input_derivatives(&vrs, &order, &[9.0, 9.0]), Status::Error, "{vrs:?} {order:?}");
        assert_eq!(i.model().u.derivatives[0], 1.0, "nothing set");
    }
    assert_eq!(i.set_real_input_derivatives(&[u], &[1], &[f64::INFINITY]), Status::Error);
    assert_eq!(i.terminate(), Status::Ok);
    assert_eq!(i.set_real(&[u], &[0.0]), Status::Error, "not in state terminated");
    assert_eq!(i.set_real_input_derivatives(&[u], &[1], &[0.0]), Status::Error);
    assert_eq!(read(&mut i), [0.25, 5.0]);
}

unsafe extern "C" fn keep_log2(
    env: *mut c_void,
    _: *const c_char,
    _: Status,
    _: *const c_char,
    message: *const c_char,
) {
    // SAFETY: `env` is the test's Vec<String>; `message` a NUL-terminated string.
    unsafe { (*env.cast::<Vec<String>>()).push(CStr::from_ptr(message).to_string_lossy().into_owned()) }
}

unsafe extern "C" fn keep_log3(env: *mut c_void, _: Status, _: *const c_char, message: *const c_char) {
    // SAFETY: as `keep_log2`.
    unsafe { (*env.cast::<Vec<String>>()).push(CStr::from_ptr(message).to_string_lossy().into_owned()) }
}

/// One handle for both APIs ([`crate::handle`]): a 3.0 instance answers the 2.0 functions (and
/// the shared ones of [`crate::common`]), a 2.0 instance handed to a 3.0 function is refused
/// with a message, a foreign pointer with `Error`, and each frees by its own type.
#[test]
fn one_handle_serves_the_fmi2_and_fmi3_entry_points() {
    let guid = std::ffi::CString::new(TOY.description().unwrap().guid.clone()).unwrap();
    let time = [fmi3::Extra::of(&TOY, false).unwrap().time_vr];
    let (mut log2, mut log3): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let callbacks = fmi2CallbackFunctions {
        // SAFETY: as in `a_panicking_model_returns_fmi2error_through_the_c_abi`.
        logger: Some(unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char),
                unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...),
            >(keep_log2)
        }),
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: (&raw mut log2).cast(),
    };
    // SAFETY: valid arguments per FMI 2.0 and 3.0; the logs outlive the instances.
    unsafe {
        let c2 = ffi::instantiate(
            FMUS,
            c"two".as_ptr(),
            FMI2_CO_SIMULATION,
            guid.as_ptr(),
            std::ptr::null(),
            &callbacks,
            0,
            0,
        );
        let c3 = fmi3::ffi::instantiate_co_simulation(
            FMUS,
            c"three".as_ptr(),
            guid.as_ptr(),
            std::ptr::null(),
            false,
            false,
            false,
            false,
            (&raw mut log3).cast(),
            Some(keep_log3),
        );
        assert!(!c2.is_null() && !c3.is_null());
        // The 2.0 functions and the shared ones on the 3.0 instance.
        assert_eq!(ffi::setup_experiment(c3, 0, 0.0, 1.0, 0, 0.0), Status::Ok);
        assert_eq!(ffi::enter_initialization_mode(c3), Status::Ok);
        assert_eq!(common::exit_initialization_mode(c3), Status::Ok);
        assert_eq!(ffi::do_step(c3, 1.0, 0.25, 1), Status::Ok);
        let (mut ev, mut term, mut early, mut last) = (true, true, true, 0.0);
        assert_eq!(fmi3::ffi::do_step(c3, 1.25, 0.25, true, &mut ev, &mut term, &mut early, &mut last), Status::Ok);
        assert_eq!((ev, term, early, last), (false, false, false, 1.5));
        let mut t = [0.0];
        assert_eq!(fmi3::ffi::get_float64(c3, time.as_ptr(), 1, t.as_mut_ptr(), 1), Status::Ok);
        assert_eq!(t, [1.5]);
        // A 3.0 function on the 2.0 instance: refused, and the importer is told why.
        assert_eq!(fmi3::ffi::get_float64(c2, time.as_ptr(), 1, t.as_mut_ptr(), 1), Status::Error);
        assert!(log2.last().unwrap().contains("made by fmi2Instantiate, not fmi3InstantiateCoSimulation"), "{log2:?}");
        assert_eq!(fmi3::ffi::do_step(c2, 0.0, 0.1, true, &mut ev, &mut term, &mut early, &mut last), Status::Error);
        assert!(log3.is_empty(), "{log3:?}");
        // A pointer that is no handle of ours.
        let mut junk = [0u64; 16];
        assert_eq!(
            fmi3::ffi::get_float64(junk.as_mut_ptr().cast(), time.as_ptr(), 1, t.as_mut_ptr(), 1),
            Status::Error
        );
        assert_eq!(ffi::do_step(junk.as_mut_ptr().cast(), 0.0, 0.1, 1), Status::Error);
        // Each freed by its own type, once; a second free is ignored.
        common::free_instance(c3);
        common::free_instance(c2);
        common::free_instance(c3);
        assert_eq!(ffi::do_step(std::ptr::null_mut(), 0.0, 0.1, 1), Status::Error);
    }
}
