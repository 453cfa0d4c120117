//! The checks' messages, on a made-up model description.

use super::*;
use model_description::{Initial, ScalarVariable, Variability};

fn var(name: &str, vr: u32, causality: Causality, kind: VariableKind) -> ScalarVariable {
    ScalarVariable {
        name: name.into(),
        value_reference: vr,
        description: None,
        causality,
        variability: if matches!(kind, VariableKind::Real { .. }) {
            Variability::Continuous
        } else {
            Variability::Discrete
        },
        initial: None::<Initial>,
        can_handle_multiple_set_per_time_instant: None,
        kind,
        annotations: Vec::new(),
        line: 0,
    }
}

fn real() -> VariableKind {
    VariableKind::Real {
        declared_type: None,
        attrs: Default::default(),
        start: Some(0.0),
        derivative: None,
        reinit: None,
    }
}

fn md() -> ModelDescription {
    ModelDescription {
        fmi_version: "2.0".into(),
        model_name: "m".into(),
        model_variables: vec![
            var("y", 0, Causality::Output, real()),
            var("u", 1, Causality::Input, real()),
            var(
                "k",
                2,
                Causality::Input,
                VariableKind::Integer { declared_type: None, attrs: Default::default(), start: Some(0) },
            ),
            var("b", 3, Causality::Output, VariableKind::Boolean { declared_type: None, start: None }),
        ],
        ..Default::default()
    }
}

fn resolve(text: &str) -> Result<System> {
    let base = "[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
    let m = md();
    SystemBuilder::parse(Path::new("sys.toml"), &format!("{base}{text}"))?.build(&[&m, &m])
}

fn message(r: Result<System>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn type_mismatch_and_double_connections_are_reported() {
    let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.k\"\n"));
    assert!(e.contains("sys.toml") && e.contains("connections[0]") && e.contains("type mismatch"), "{e}");
    let e = message(resolve("[[connections]]\nfrom = \"a.b\"\nto = \"b.u\"\n"));
    assert!(e.contains("Boolean") && e.contains("Real"), "{e}");
    let e = message(resolve(
        "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.y\"\nto = \"b.u\"\n",
    ));
    assert!(e.contains("connections[1].to") && e.contains("already connected by connections[0]"), "{e}");
}

#[test]
fn gauss_seidel_order_bonds_and_i2_are_checked() {
    let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n").and_then(|_| {
        let m = md();
        let text = "[simulation]\nstop = 1.0\nstep = 0.1\norder = [\"a\"]\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n";
        SystemBuilder::parse(Path::new("sys.toml"), text)?.build(&[&m, &m])
    }));
    assert!(e.contains("simulation.order") && e.contains("missing instances: b"), "{e}");
    let e = message(resolve(
        "[[bonds]]\nname = \"p\"\nports = [ { instance = \"a\", effort = \"y\", flow = \"k\" }, { instance = \"b\", effort = \"y\", flow = \"u\" } ]\n",
    ));
    assert!(e.contains("bonds[0].ports[0]") && e.contains("k must be a Real"), "{e}");
    let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = \"I2\"\n"));
    assert!(e.contains("I2") && e.contains("derivatives"), "{e}");
    let e = message(resolve("[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\nextrapolation = 7\n"));
    assert!(e.contains("extrapolation = 7"), "{e}");
    let e = message(resolve("[outputs]\nvariables = [\"a.zz\"]\n"));
    assert!(e.contains("outputs.variables[0]") && e.contains("no variable \"zz\""), "{e}");
    assert!(!e.contains("did you mean"), "zz is far from y, u, k: {e}");
    let e = message(resolve("[outputs]\nvariables = [\"a.yy\"]\n"));
    assert!(e.contains("no variable \"yy\"; did you mean \"y\"?"), "{e}");
    let e = message(resolve("[[connections]]\nfrom = \"aa.y\"\nto = \"b.u\"\n"));
    assert!(e.contains("unknown instance \"aa\" (instances: a, b); did you mean \"a\"?"), "{e}");
}

#[test]
fn stop_must_be_a_whole_number_of_steps_and_overrides_apply() {
    let m = md();
    let text = "[simulation]\nstop = 1.05\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n";
    let e = message(SystemBuilder::parse(Path::new("sys.toml"), text).and_then(|d| d.build(&[&m])));
    assert!(e.contains("simulation.step") && e.contains("whole number"), "{e}");
    let over = Overrides::settings(Settings { stop: Some(2.0), step: Some(0.5), ..Default::default() });
    let sys = SystemBuilder::parse(Path::new("sys.toml"), text).and_then(|d| d.build_with(&[&m], &over)).unwrap();
    assert_eq!((sys.stop, sys.step, sys.steps()), (2.0, 0.5, 4));
    // Default outputs: every output of every instance.
    assert_eq!(sys.outputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["y", "b"]);
}

#[test]
fn ecco_refuses_fixed_step_fmus_and_puts_h_on_the_instances_grid() {
    let m = md();
    let over = Overrides::settings(Settings { step_control: Some(StepControlKind::Ecco), ..Default::default() });
    let b = SystemBuilder::parse(
        Path::new("sys.toml"),
        "[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n",
    )
    .unwrap();
    let e = message(b.build_with(&[&m, &m], &over));
    assert!(e.contains("instances.a") && e.contains("canHandleVariableCommunicationStepSize"), "{e}");

    let mut variable = md();
    variable.co_simulation = Some(model_description::CoSimulation {
        can_handle_variable_communication_step_size: true,
        ..Default::default()
    });
    let mut b = SystemBuilder::new();
    b.stop(1.0).step(0.1).step_control(StepControlKind::Ecco);
    b.instance("a", "a.fmu").step(0.025);
    b.instance("b", "b.fmu").step(0.02);
    b.input("a.u", vec![0.0, 0.3, 0.5], vec![0.0, 1.0, 0.0]);
    let e = message(b.build(&[&variable, &variable]));
    assert!(e.contains("simulation.step_control") && e.contains("[[bonds]]"), "{e}");
    b.bond("p", super::super::PortDraft::new("a", "y", "u"), super::super::PortDraft::new("b", "y", "u"));
    let sys = b.build(&[&variable, &variable]).unwrap();
    let StepControl::Ecco { quantum, units, breakpoints, .. } = sys.step_control() else { panic!("not ECCO") };
    // Δ = lcm(25 ms, 20 ms) = 100 ms; H_min = Δ, H_max = 10·H_0 = 1 s, H_0 = 100 ms.
    assert!((quantum - 0.1).abs() < 1e-15, "{quantum}");
    assert_eq!(*units, (1, 10, 1));
    assert_eq!(breakpoints, &[3, 5]);
    // H_0 must lie on the grid.
    let e = message(b.step(0.05).stop(1.0).build(&[&variable, &variable]));
    assert!(e.contains("simulation.step") || e.contains("does not divide"), "{e}");
}

#[test]
fn energy_correction_needs_a_port_with_a_connected_effort_input() {
    let mut m = md();
    // y does not feed through (no algebraic loop a -> b -> a).
    m.model_structure.outputs =
        vec![model_description::Unknown { index: 1, dependencies: Some(Vec::new()), dependencies_kind: None, line: 0 }];
    let text = "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.y\"\nto = \"a.u\"\n\
                [[bonds]]\nname = \"p\"\nenergy_correction = true\nports = [ { instance = \"a\", effort = \"y\", flow = \"u\" }, \
                { instance = \"b\", effort = \"u\", flow = \"y\", sign = -1.0 } ]\n";
    let sys = resolve(text).unwrap();
    assert!(sys.bonds()[0].energy_correction);
    assert!(crate::bonds::couple(&sys, &[&m, &m], &[false, false]).is_ok());
    let coupling_error = |text: &str| match crate::bonds::couple(&resolve(text).unwrap(), &[&m, &m], &[false, false]) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    };
    // Both efforts are outputs: the bond law has no effort to correct; the input law
    // corrects the flow inputs (their conjugates are outputs).
    let text = text.replace("effort = \"u\", flow = \"y\"", "effort = \"y\", flow = \"u\"");
    assert_eq!(resolve(&text).unwrap().bonds()[0].correction.law, CorrectionLaw::Input);
    assert!(crate::bonds::couple(&resolve(&text).unwrap(), &[&m, &m], &[false, false]).is_ok());
    let bond_law =
        text.replace("energy_correction = true\n", "energy_correction = true\nenergy_correction_law = \"bond\"\n");
    let e = coupling_error(&bond_law);
    assert!(e.contains("bonds.p.energy_correction") && e.contains("connected input"), "{e}");
    // Only outputs at both ports: nothing for the input law either.
    let e = coupling_error(&text.replace("flow = \"u\"", "flow = \"y\""));
    assert!(e.contains("bonds.p.energy_correction") && e.contains("connected input"), "{e}");
    // A bond's own gain is checked under its own key.
    let e = message(resolve(
        &bond_law.replace("energy_correction = true\n", "energy_correction = true\nenergy_correction_gain = -1.0\n"),
    ));
    assert!(e.contains("bonds[0].energy_correction_gain") && e.contains("-1"), "{e}");
    // An override switches it off everywhere; an unknown bond name is refused.
    let over = Overrides::settings(Settings { energy_correction: Some(false), ..Default::default() });
    let b = SystemBuilder::parse(
        Path::new("sys.toml"),
        &format!("[simulation]\nstop = 1.0\nstep = 0.1\n[instances.a]\nfmu = \"a.fmu\"\n[instances.b]\nfmu = \"b.fmu\"\n{text}"),
    )
    .unwrap();
    assert!(!b.build_with(&[&m, &m], &over).unwrap().bonds()[0].energy_correction);
    let mut b = b;
    b.bond_energy_correction("nope", true);
    let e = message(b.build(&[&m, &m]));
    assert!(e.contains("bonds.nope.energy_correction"), "{e}");
}

#[test]
fn messages_print_derived_steps_rounded() {
    // Δ = lcm of the instances' steps on a 1 ps grid = 10^8 ps, which is 0.00009999999999999999 s
    // as a double: printed 0.0001 s. So are the default h_max (10 × step), the grid's steps,
    // stop − start and H/h.
    let mut variable = md();
    variable.co_simulation = Some(model_description::CoSimulation {
        can_handle_variable_communication_step_size: true,
        ..Default::default()
    });
    let build = |step: f64, (start, stop): (f64, f64), fixed: Option<f64>, p: EccoParams| {
        let mut b = SystemBuilder::new();
        b.start(start).stop(stop).step(step).step_control(StepControlKind::Ecco).ecco(p);
        for (name, h) in [("a", 1e-4), ("b", 2.5e-5)] {
            let i = b.instance(name, "a.fmu");
            if let Some(f) = fixed {
                i.step(h * f);
            }
        }
        b.bond("p", super::super::PortDraft::new("a", "y", "u"), super::super::PortDraft::new("b", "y", "u"));
        message(b.build(&[&variable, &variable]))
    };
    let free = EccoParams { h_max: f64::INFINITY, ..Default::default() };
    let e = build(3e-4, (0.0, 1.2), Some(1.0), EccoParams { h_max: 5e-5, ..free });
    assert!(e.contains("h_max = 0.00005 s is below the smallest step the grid allows (0.0001 s)"), "{e}");
    let e = build(3e-4, (0.0, 1.2), Some(1.0), EccoParams { h_min: 0.01, ..free });
    assert!(e.contains("h_min = 0.01 s exceeds h_max = 0.003 s (the default, 10 × step)"), "{e}");
    let e = build(1e-3, (0.0, 1.2), None, EccoParams { h_min: 3e-4, ..free });
    assert!(
        e.contains("the initial step H_0 = 0.001 s is not a whole multiple of the grid Δ = h_min = 0.0003 s"),
        "{e}"
    );
    let e = build(1.5e-4, (0.0, 1.5), Some(1.0), free);
    assert!(
        e.contains("instances.a.step: step 0.0001 s does not divide the communication step H = 0.00015 s (H/h = 1.5)"),
        "{e}"
    );
    // 0.3 − 0.1 = 0.19999999999999998.
    let e = build(0.15, (0.1, 0.3), Some(1.0), free);
    assert!(e.contains("stop - start = 0.2 s is not a whole number of communication steps H = 0.15 s"), "{e}");
}

#[test]
fn iterations_read_the_state_flag_of_the_interface_each_instance_runs_as() {
    let both = |cs: bool, me: bool| ModelDescription {
        co_simulation: Some(model_description::CoSimulation {
            model_identifier: "m".into(),
            can_get_and_set_fmu_state: cs,
            ..Default::default()
        }),
        model_exchange: Some(model_description::ModelExchange {
            model_identifier: "m".into(),
            can_get_and_set_fmu_state: me,
            ..Default::default()
        }),
        ..md()
    };
    let build = |m: &ModelDescription, interface: &str| {
        let text = format!(
            "[simulation]\nstop = 1.0\nstep = 0.1\niterations = 3\n{interface}[instances.a]\nfmu = \"a.fmu\"\n"
        );
        SystemBuilder::parse(Path::new("sys.toml"), &text).and_then(|b| b.build(&[m]))
    };
    // Co-Simulation (the default for an FMU with both): <CoSimulation>'s flag, whatever
    // <ModelExchange> says; the other interface is suggested when it declares states.
    assert!(build(&both(true, false), "").is_ok());
    let e = message(build(&both(false, true), ""));
    let refused = "simulation.iterations: iterations = 3 repeats each step from saved FMU states, but a (m) cannot \
                   get and set FMU states (canGetAndSetFMUstate is not \"true\" in";
    assert!(e.contains(&format!("{refused} <CoSimulation>")) && e.contains("interface = \"me\""), "{e}");
    // Model Exchange: <ModelExchange>'s flag.
    assert!(build(&both(false, true), "interface = \"me\"\n").is_ok());
    let e = message(build(&both(true, false), "interface = \"me\"\n"));
    assert!(e.contains(&format!("{refused} <ModelExchange>")) && e.contains("interface = \"cs\""), "{e}");
    // An ME-only FMU runs as Model Exchange without being asked.
    let me_only = ModelDescription { co_simulation: None, ..both(false, true) };
    assert!(build(&me_only, "").is_ok());
    let e = message(build(&ModelDescription { co_simulation: None, ..both(false, false) }, ""));
    assert!(e.contains(&format!("{refused} <ModelExchange>")) && !e.contains("or run it"), "{e}");
}

#[test]
fn an_integer_input_from_a_file_refuses_a_fraction_and_takes_whole_numbers() {
    let dir = std::env::temp_dir().join(format!("cosim-resolve-int-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        format!("[[inputs]]\nfile = {:?}\n", p.to_str().unwrap())
    };
    // Whole numbers (1e300 and -4503599627370497 too: every double of 2^52 or more is one).
    let ok = file("whole.csv", "t,a.k,a.u\n0,1,0.5\n1,-4503599627370497,2.5\n2,1e300,1\n");
    let sys = resolve(&ok).unwrap();
    assert_eq!(sys.signals.len(), 2);
    let fraction = file("fraction.csv", "t,a.k,a.u\n0,1,0.5\n1,2.5,2.5\n2,-0.25,1\n");
    let m = message(resolve(&fraction));
    assert!(m.contains("fraction.csv: row 2 of column \"a.k\": 2.5 is not an integer (a.k is Integer)"), "{m}");
    // Scaled into fractions.
    let scaled = file("scaled.csv", "t,a.k\n0,1\n1,3\n");
    let m = message(resolve(&format!("{scaled}scale = 0.5\n")));
    assert!(m.contains("row 1 of column \"a.k\": 0.5 is not an integer"), "{m}");
    let _ = std::fs::remove_dir_all(&dir);
}
