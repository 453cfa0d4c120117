#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The per-input energy correction (issue 37) on instances that hold their inputs and are
//! sub-stepped by the master: the A.1 double oscillator of seed 001 (case 1, force-displacement)
//! as two instances built in code that cannot interpolate inputs, each stepped k = 4 times per
//! communication step with the inputs held at the extrapolation polynomial's value at each
//! sub-step's start (a staircase). All the project's FMUs interpolate, so this is the path they
//! never take: the correction shifts every stair, and the energy error it returns is computed
//! from the value held over the last sub-step.

mod support;

use master::fmu::{Call, FmuInstance};
use master::system::{CorrectionLaw, PortDraft, SystemBuilder};
use master::Execution;
use model_description::{Causality, CoSimulation, ModelDescription, ModelStructure, ScalarVariable, Unknown};

/// A.1 case 1: m1 = m2 = 1 kg, k1 = 10, k2 = 1000, k_c = 100 N/m, no damping, x(0) = 0,
/// v(0) = (100, −100) m/s.
const K1: f64 = 10.0;
const K2: f64 = 1000.0;
const KC: f64 = 100.0;
const H: f64 = 1e-3;
const SUB: usize = 4;
const T_END: f64 = 10.0;
/// The instances' own RK4 step (as the oscillator FMUs' h_max).
const H_RK4: f64 = 1e-4 / 4.0;

/// One mass. m1 (`coupling`): ẍ1 = −k1 x1 − F, outputs x (vr 0), v (vr 1), F = k_c (x1 − ξ)
/// (vr 2, feeds through from ξ), inputs ξ (vr 3), ξ̇ (vr 4). m2: ẍ2 = −k2 x2 + F, outputs x, v,
/// input F (vr 3). Inputs are held over each `fmi2DoStep` (RK4 at [`H_RK4`]).
struct Mass {
    name: &'static str,
    coupling: bool,
    x: f64,
    v: f64,
    u: [f64; 2],
}

impl Mass {
    fn accel(&self, x: f64) -> f64 {
        if self.coupling {
            -K1 * x - KC * (x - self.u[0])
        } else {
            -K2 * x + self.u[0]
        }
    }
}

impl FmuInstance for Mass {
    fn name(&self) -> &str {
        self.name
    }
    fn execute(&mut self, call: Call<'_>) -> master::Result<()> {
        match call {
            Call::GetFloat64 { vr, out } => {
                for (o, v) in out.iter_mut().zip(vr) {
                    *o = match v {
                        0 => self.x,
                        1 => self.v,
                        2 => KC * (self.x - self.u[0]),
                        _ => self.u[(*v - 3) as usize],
                    };
                }
            }
            Call::SetFloat64 { vr, values } => {
                for (v, value) in vr.iter().zip(values) {
                    self.u[(*v - 3) as usize] = *value;
                }
            }
            Call::SetInputDerivatives { .. } => panic!("{} cannot interpolate inputs", self.name),
            Call::DoStep { h, .. } => {
                let n = (h / H_RK4).round().max(1.0) as usize;
                let dt = h / n as f64;
                for _ in 0..n {
                    let (x, v) = (self.x, self.v);
                    let (k1x, k1v) = (v, self.accel(x));
                    let (k2x, k2v) = (v + 0.5 * dt * k1v, self.accel(x + 0.5 * dt * k1x));
                    let (k3x, k3v) = (v + 0.5 * dt * k2v, self.accel(x + 0.5 * dt * k2x));
                    let (k4x, k4v) = (v + dt * k3v, self.accel(x + dt * k3x));
                    self.x += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
                    self.v += dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        false
    }
}

fn description(coupling: bool) -> ModelDescription {
    let var = ScalarVariable::real;
    let mut vars = vec![var("x", 0, Causality::Output), var("v", 1, Causality::Output)];
    let mut outputs = vec![1, 2];
    if coupling {
        vars.extend([
            var("F", 2, Causality::Output),
            var("xi", 3, Causality::Input),
            var("xi_dot", 4, Causality::Input),
        ]);
        outputs.push(3);
    } else {
        vars.push(var("F", 3, Causality::Input));
    }
    ModelDescription {
        fmi_version: "2.0".into(),
        model_name: "mass".into(),
        co_simulation: Some(CoSimulation {
            model_identifier: "mass".into(),
            can_handle_variable_communication_step_size: true,
            ..Default::default()
        }),
        model_variables: vars,
        model_structure: ModelStructure {
            outputs: outputs
                .into_iter()
                .map(|index| Unknown {
                    index,
                    // F = k_c (x1 − ξ) depends directly on the input ξ (variable 4).
                    dependencies: Some(if index == 3 { vec![4] } else { vec![] }),
                    dependencies_kind: None,
                    line: 0,
                })
                .collect(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// max |x − x_exact| over the communication points at extrapolation `order`, both instances
/// stepped `sub` times per H with held inputs; `law` corrects (α = 1, no flow floor) or not.
fn error(law: Option<CorrectionLaw>, order: usize, sub: usize) -> f64 {
    let mut b = SystemBuilder::new();
    b.stop(T_END).step(H).extrapolation(order);
    for m in ["m1", "m2"] {
        b.instance(m, format!("{m}.fmu")).step(H / sub as f64);
    }
    b.connect("m2.x", "m1.xi");
    b.connect("m2.v", "m1.xi_dot");
    b.connect("m1.F", "m2.F");
    b.bond("coupling", PortDraft::new("m1", "F", "xi_dot").sign(-1.0), PortDraft::new("m2", "F", "v"));
    if let Some(law) = law {
        b.energy_correction(true).energy_correction_law(1.0, 0.0).energy_correction_kind(law);
    }
    b.outputs(["m1.x", "m2.x"]);
    let (d1, d2) = (description(true), description(false));
    let sys = b.build(&[&d1, &d2]).unwrap();
    let instances: Vec<Box<dyn FmuInstance>> = vec![
        Box::new(Mass { name: "m1", coupling: true, x: 0.0, v: 100.0, u: [0.0; 2] }),
        Box::new(Mass { name: "m2", coupling: false, x: 0.0, v: -100.0, u: [0.0; 2] }),
    ];
    let mut run = Execution::with_instances(sys, instances, &[&d1, &d2]).unwrap();
    run.initialize().unwrap();
    let mut err: f64 = 0.0;
    while run.time() < T_END - 0.5 * H {
        run.step().unwrap();
        let e = support::a1::a1_exact(run.time());
        let x = run.recorded().unwrap();
        err = err.max((x[0] - e[0]).abs()).max((x[1] - e[1]).abs());
    }
    assert!((run.time() - T_END).abs() < 1e-9);
    err
}

#[test]
fn per_input_correction_cuts_the_error_of_held_sub_stepped_inputs() {
    // These instances are A.1: at order 0 without sub-steps they give the oscillator FMUs' numbers
    // (docs/validation.md: 1.157 m uncorrected, 0.222 m with law `input`).
    let (plain0, input0) = (error(None, 0, 1), error(Some(CorrectionLaw::Input), 0, 1));
    assert!((plain0 - 1.1574).abs() < 1e-3 && (input0 - 0.2222).abs() < 1e-3, "{plain0} m, {input0} m");
    // Order 1, held over 4 sub-steps: a staircase along the extrapolated line (like a zero-order
    // hold at H/4, 0.26 m). Measured: 0.0561 m with law `input`, 0.179 m with law `bond`; taking
    // the held input's end value from the line's end instead of the last stair (what an
    // interpolating FMU gets) leaves 0.258 m.
    let plain = error(None, 1, SUB);
    let input = error(Some(CorrectionLaw::Input), 1, SUB);
    let bond = error(Some(CorrectionLaw::Bond), 1, SUB);
    assert!(plain > 0.2, "the staircase's coupling error: {plain} m");
    assert!(input <= plain / 4.0 && input < bond, "per-input {input} m vs uncorrected {plain} m (bond {bond} m)");
}
