//! Known inputs (time tables) and the output exchange on mock instances built in code: a linear
//! ramp handed to an FMU that interpolates its inputs ends every communication step exactly on
//! the table, whatever the scheme; sub-steps see the table's value at their own start; the
//! explicit exchange reads each output once per step, before any input is set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::error::Result;
use crate::fmu::{Call, FmuInstance};
use crate::system::{AlgorithmKind, Exchange, SystemBuilder};
use crate::Execution;
use model_description::{Causality, ModelDescription, ModelStructure, ScalarVariable, Unknown};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// One input u (vr 1) and one output y (vr 0).
///
/// - `follower`: y is the input as the FMU applies it at its current time: the value set, continued
///   along the first input derivative set (FMI 2.0 §4.2.1) when it interpolates inputs.
/// - otherwise a first-order system ẋ = u + 1 by forward Euler with y = x + u when `feedthrough`
///   (y depends directly on u), else y = x.
struct Mock {
    name: String,
    follower: bool,
    interpolates: bool,
    feedthrough: bool,
    x: f64,
    u: f64,
    du: f64,
    saved: Option<(f64, f64, f64)>,
    log: Log,
}

impl Mock {
    fn note(&self, s: String) {
        self.log.lock().unwrap().push(format!("{}.{s}", self.name));
    }
    fn y(&self) -> f64 {
        if self.follower {
            self.u
        } else if self.feedthrough {
            self.x + self.u
        } else {
            self.x
        }
    }
}

impl FmuInstance for Mock {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match call {
            Call::GetFloat64 { vr, out } => {
                for (o, v) in out.iter_mut().zip(vr) {
                    *o = if *v == 0 { self.y() } else { self.u };
                }
                self.note(format!("get {vr:?}"));
            }
            Call::SetFloat64 { vr, values } => {
                assert_eq!(vr, [1]);
                // A new value starts a new input line (its derivatives follow, if any).
                (self.u, self.du) = (values[0], 0.0);
                self.note(format!("u = {}", values[0]));
            }
            Call::SetInputDerivatives { vr, order, values } => {
                assert!(self.interpolates, "{} does not interpolate inputs", self.name);
                assert_eq!(vr, [1]);
                if order == 1 {
                    self.du = values[0];
                }
                self.note(format!("du{order} = {}", values[0]));
            }
            Call::DoStep { t, h } => {
                self.x += h * (self.u + 1.0);
                self.u += self.du * h;
                self.note(format!("step {t}"));
            }
            Call::SaveState => self.saved = Some((self.x, self.u, self.du)),
            Call::RestoreState => (self.x, self.u, self.du) = self.saved.unwrap(),
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.interpolates
    }
}

fn description(feedthrough: bool, interpolates: bool) -> ModelDescription {
    let var = ScalarVariable::real;
    ModelDescription {
        fmi_version: "2.0".into(),
        model_name: "mock".into(),
        co_simulation: Some(model_description::CoSimulation {
            model_identifier: "mock".into(),
            can_get_and_set_fmu_state: true,
            can_interpolate_inputs: interpolates,
            can_handle_variable_communication_step_size: true,
            ..Default::default()
        }),
        model_variables: vec![var("y", 0, Causality::Output), var("u", 1, Causality::Input)],
        model_structure: ModelStructure {
            outputs: vec![Unknown {
                index: 1,
                dependencies: Some(if feedthrough { vec![2] } else { vec![] }),
                dependencies_kind: None,
                line: 0,
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}

fn mock(name: &str, follower: bool, interpolates: bool, feedthrough: bool, x0: f64, log: &Log) -> Box<dyn FmuInstance> {
    Box::new(Mock {
        name: name.into(),
        follower,
        interpolates,
        feedthrough,
        x: x0,
        u: 0.0,
        du: 0.0,
        saved: None,
        log: Arc::clone(log),
    })
}

/// The M1 valve ramp of Publication IV's crane-a4: 0.4 until 6 s, +0.03 over 2 ms, held.
const TIMES: [f64; 3] = [0.0, 6.0, 6.002];
const VALUES: [f64; 3] = [0.4, 0.4, 0.43];
/// H = 17 ms from 5.95 s: the step [5.984, 6.001] ends inside the ramp, [6.001, 6.018] crosses
/// its end at 6.002.
const H: f64 = 0.017;
const START: f64 = 5.95;
const STEPS: u32 = 6;

/// The table's value at t (linear between the points, held outside).
fn table(t: f64) -> f64 {
    if t <= TIMES[1] {
        VALUES[1]
    } else if t >= TIMES[2] {
        VALUES[2]
    } else {
        VALUES[1] + (VALUES[2] - VALUES[1]) * (t - TIMES[1]) / (TIMES[2] - TIMES[1])
    }
}

/// A one-instance system: the ramp table on a.u, y recorded, H = 17 ms; `configure` adds to it.
fn ramp_run(interpolates: bool, configure: impl FnOnce(&mut SystemBuilder)) -> (Execution, Log) {
    let mut b = SystemBuilder::new();
    b.start(START).stop(START + f64::from(STEPS) * H).step(H);
    b.instance("a", "a.fmu");
    b.input("a.u", TIMES.to_vec(), VALUES.to_vec()).linear();
    b.outputs(["a.y"]);
    configure(&mut b);
    let md = description(false, interpolates);
    let sys = b.build(&[&md]).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let instances = vec![mock("a", true, interpolates, false, 0.0, &log)];
    (Execution::with_instances(sys, instances, &[&md]).unwrap(), log)
}

/// y at every communication point against the table's value there.
fn assert_on_table(run: &mut Execution, what: &str) {
    run.initialize().unwrap();
    let mut crossed_ramp = false;
    for _ in 0..STEPS {
        run.step().unwrap();
        let (t, y) = (run.time(), run.recorded().unwrap()[0]);
        crossed_ramp |= t > TIMES[1] && t < TIMES[2];
        assert!(
            (y - table(t)).abs() <= 1e-12,
            "{what}: at t = {t} the FMU's input is {y}, the table's value {} (a slope taken at the step's start \
             runs past the ramp's end)",
            table(t)
        );
        assert!(y <= VALUES[2] + 1e-12, "{what}: overshoot {y} at t = {t}");
    }
    assert!(crossed_ramp, "{what}: no communication point inside the ramp");
}

#[test]
fn a_linear_table_into_an_interpolating_fmu_ends_every_step_on_the_table() {
    // The chord, not the slope at t_n: at 5.984 s the slope is 0 (the ramp starts at 6 s), at
    // 6.001 s it is 15/s and would carry u to 0.415 + 15·0.017 = 0.67 at 6.018 s (table: 0.43).
    let (mut run, _) = ramp_run(true, |_| {});
    assert_on_table(&mut run, "Jacobi");
    let (mut run, _) = ramp_run(true, |b| {
        b.algorithm(AlgorithmKind::GaussSeidel);
    });
    assert_on_table(&mut run, "Gauss-Seidel");
    let (mut run, _) = ramp_run(true, |b| {
        b.iterations(5);
    });
    assert_on_table(&mut run, "iterative");
    let (mut run, _) = ramp_run(true, |b| {
        b.exchange(Exchange::Explicit);
    });
    assert_on_table(&mut run, "explicit exchange");
}

#[test]
fn sub_steps_take_the_table_at_their_own_start() {
    // 17 sub-steps of 1 ms: an interpolating FMU ends each on the table, one that cannot
    // interpolate holds the table's value at each sub-step's start.
    for interpolates in [true, false] {
        let (mut run, log) = ramp_run(interpolates, |b| {
            b.instance_mut("a").unwrap().step(1e-3);
        });
        if interpolates {
            assert_on_table(&mut run, "interpolating, sub-stepped");
        } else {
            run.run().unwrap();
        }
        let log = log.lock().unwrap();
        let mut held = None;
        let mut checked = 0;
        for entry in log.iter() {
            if let Some(v) = entry.strip_prefix("a.u = ") {
                held = Some(v.parse::<f64>().unwrap());
            } else if let Some(t) = entry.strip_prefix("a.step ") {
                let t: f64 = t.parse().unwrap();
                let u = held.take().expect("an input set before every sub-step");
                assert!(
                    (u - table(t)).abs() <= 1e-12,
                    "interpolates {interpolates}: u = {u} at t = {t}, table {}",
                    table(t)
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 17 * STEPS, "interpolates {interpolates}: {log:?}");
    }
}

#[test]
fn a_held_input_takes_the_table_value_at_the_step_start() {
    // An FMU that cannot interpolate holds u(t_n) over the step (zero-order hold of the table).
    let (mut run, log) = ramp_run(false, |_| {});
    run.run().unwrap();
    let log = log.lock().unwrap();
    let set: Vec<f64> = log.iter().filter_map(|e| e.strip_prefix("a.u = ")).map(|v| v.parse().unwrap()).collect();
    // Initialization sets u(start) as a start value and again when it exchanges the start
    // point; each step then sets the point it reached, t_{n+1} (the stop time's included), before
    // that point's row — the value held over the next step.
    let expected: Vec<f64> =
        std::iter::once(table(START)).chain((0..=STEPS).map(|n| table(START + f64::from(n) * H))).collect();
    assert_eq!(set.len(), expected.len(), "{log:?}");
    for (u, e) in set.iter().zip(&expected) {
        assert!((u - e).abs() <= 1e-12, "{set:?} vs {expected:?}");
    }
}

/// a (y feeds through from u) and b (no feedthrough): b.y → a.u, a.y → b.u, H = 0.5 s.
fn feedthrough_pair(exchange: Option<Exchange>) -> (Execution, Log) {
    let mut b = SystemBuilder::new();
    b.stop(2.0).step(0.5);
    b.instance("a", "a.fmu");
    b.instance("b", "b.fmu");
    b.connect("b.y", "a.u");
    b.connect("a.y", "b.u");
    b.outputs(["a.y", "b.y"]);
    if let Some(e) = exchange {
        b.exchange(e);
    }
    let (ma, mb) = (description(true, false), description(false, false));
    let sys = b.build(&[&ma, &mb]).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let instances = vec![mock("a", false, false, true, 1.0, &log), mock("b", false, false, false, 10.0, &log)];
    (Execution::with_instances(sys, instances, &[&ma, &mb]).unwrap(), log)
}

/// The calls that end the initialization (the start point's exchange) and those of one step
/// (which ends with the exchange of the point it reached, before that point's row).
fn first_step(run: &mut Execution, log: &Log) -> (Vec<String>, Vec<String>) {
    log.lock().unwrap().clear();
    run.initialize().unwrap();
    let init = std::mem::take(&mut *log.lock().unwrap());
    (init, one_step(run, log))
}

fn one_step(run: &mut Execution, log: &Log) -> Vec<String> {
    run.initialize().unwrap();
    log.lock().unwrap().clear();
    run.step().unwrap();
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn the_default_exchange_re_reads_a_feedthrough_output_after_its_inputs_are_set() {
    let (mut run, log) = feedthrough_pair(None);
    // At t = 0: a.y = x_a + u_a = 1 + 0 read at initialization; a gets u = b.y = 10 first, its
    // y is read again (1 + 10 = 11) and handed to b.
    let (init, step) = first_step(&mut run, &log);
    assert!(init.ends_with(&["a.u = 10", "a.get [0]", "b.u = 11"].map(String::from)), "{init:?}");
    // Both step on those inputs (ẋ = u + 1): x_a = 1 + 0.5·11 = 6.5, x_b = 10 + 0.5·12 = 16. The
    // exchange at 0.5 s: a.u = b.y = 16 first, a.y read again (6.5 + 16 = 22.5) and handed to b.
    assert_eq!(step, ["a.step 0", "b.step 0", "a.get [0]", "b.get [0]", "a.u = 16", "a.get [0]", "b.u = 22.5"]);
}

#[test]
fn the_explicit_exchange_reads_every_output_once_at_t_n_before_any_input_is_set() {
    let (mut run, log) = feedthrough_pair(Some(Exchange::Explicit));
    // b gets a.y as read at the end of the previous step (here: initialization, 1 + 0), not
    // the value after a's new input.
    let (init, step) = first_step(&mut run, &log);
    assert!(init.ends_with(&["a.u = 10", "b.u = 1"].map(String::from)), "{init:?}");
    // The exchange at 0.5 s from the outputs as read after the step: x_b = 10 + 0.5·2 = 11 → a.u;
    // a.y = x_a + u_a = 6.5 + 10 (its input of step 1) → b.u, not read again after a.u is set.
    assert_eq!(step, ["a.step 0", "b.step 0", "a.get [0]", "b.get [0]", "a.u = 11", "b.u = 16.5"]);
    // Step 2: x_a = 6.5 + 0.5·12 = 12.5, a.y = 12.5 + 11; x_b = 11 + 0.5·17.5 = 19.75.
    let calls = one_step(&mut run, &log);
    assert_eq!(calls, ["a.step 0.5", "b.step 0.5", "a.get [0]", "b.get [0]", "a.u = 19.75", "b.u = 23.5"]);
    // Each output read once per step, after the steps, never between setting inputs.
    for name in ["a", "b"] {
        assert_eq!(calls.iter().filter(|c| c.starts_with(&format!("{name}.get"))).count(), 1);
    }
}

#[test]
fn a_cycle_of_feedthrough_outputs_is_a_loop_only_for_the_ordered_exchange() {
    let build = |exchange: Option<Exchange>| {
        let mut b = SystemBuilder::new();
        b.stop(1.0).step(0.5);
        b.instance("a", "a.fmu");
        b.instance("b", "b.fmu");
        b.connect("b.y", "a.u");
        b.connect("a.y", "b.u");
        if let Some(e) = exchange {
            b.exchange(e);
        }
        let md = description(true, false);
        let sys = b.build(&[&md, &md]).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let instances = vec![mock("a", false, false, true, 1.0, &log), mock("b", false, false, true, 10.0, &log)];
        Execution::with_instances(sys, instances, &[&md, &md])
    };
    let e = build(None).err().expect("an algebraic loop").to_string();
    assert!(e.contains("algebraic loop") && e.contains("exchange = \"explicit\""), "{e}");
    let mut run = build(Some(Exchange::Explicit)).unwrap();
    run.run().unwrap();
    assert_eq!(run.steps(), 2);
}

#[test]
fn ecco_steps_that_cross_a_breakpoint_off_the_grid_end_on_the_table() {
    // ECCO ends its steps on table times rounded to its grid (here Δ = 1 ms): a ramp that ends at
    // 6.0023 s, between grid points, is crossed by the step from 6.002 s. The chord over the step
    // taken ends it on the table; the slope at 6.002 s would run 0.7 ms past the ramp's end.
    use crate::step_control::StepControlKind;
    use crate::system::{EccoParams, PortDraft};
    let end = 6.0023;
    let table = |t: f64| VALUES[1] + (VALUES[2] - VALUES[1]) * ((t - TIMES[1]) / (end - TIMES[1])).clamp(0.0, 1.0);
    let mut b = SystemBuilder::new();
    b.start(START).stop(START + 12.0 * H).step(H).step_control(StepControlKind::Ecco);
    b.ecco(EccoParams { h_min: 1e-3, h_max: H, ..EccoParams::default() });
    b.instance("a", "a.fmu");
    b.input("a.u", vec![0.0, TIMES[1], end], VALUES.to_vec()).linear();
    b.bond("b", PortDraft::new("a", "y", "y"), PortDraft::new("a", "y", "y").sign(-1.0));
    b.outputs(["a.y"]);
    let md = description(false, true);
    let sys = b.build(&[&md]).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut run = Execution::with_instances(sys, vec![mock("a", true, true, false, 0.0, &log)], &[&md]).unwrap();
    run.initialize().unwrap();
    let mut crossed = false;
    while run.time() < START + 12.0 * H - 1e-9 {
        let t0 = run.time();
        run.step().unwrap();
        let (t, y) = (run.time(), run.recorded().unwrap()[0]);
        crossed |= t0 < end && t > end && t0 > TIMES[1];
        assert!((y - table(t)).abs() <= 1e-12, "ECCO: at t = {t} the FMU's input is {y}, the table's {}", table(t));
    }
    assert!(crossed, "a step across the ramp's end: {:?}", run.step_history());
}
