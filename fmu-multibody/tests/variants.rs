#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The rod, the double-actuator crane and the pressure-coupling variants; the six FMUs' model
//! descriptions and FMU-state serialization through the FMI layer.

mod common;

use common::{init, run_held};
use fmu_export::{Fmu, Logger, Status};
use fmu_multibody::{Crane2Fmu, Crane2PFmu, CraneFmu, CranePFmu, RodFmu, RodPFmu};
use model_description::{Causality, VariableKind};

#[test]
fn rod_rests_at_the_seed_004_static_force_6867_n() {
    for solver in [1, 2] {
        let mut m: RodFmu = init(|m: &mut RodFmu| m.solver = solver);
        assert!((m.f_static[0] - 6867.0).abs() < 1e-9, "{}", m.f_static[0]);
        assert!((m.s0[0] - 0.5).abs() < 1e-15);
        let f = m.inputs[0].value;
        let mut drift: f64 = 0.0;
        run_held(&mut m, 1e-2, 1000, |_| vec![f], |_, m| drift = drift.max((m.kinematics(0).s - 0.5).abs()));
        assert!(drift <= 1e-12, "solver {solver}: drift {drift:e}");
    }
}

#[test]
fn crane2_rests_with_8829_n_and_0_n() {
    for solver in [1, 2] {
        let mut m: Crane2Fmu = init(|m: &mut Crane2Fmu| m.solver = solver);
        assert!((m.f_static[0] - 8829.0).abs() < 1e-9 && m.f_static[1].abs() < 1e-9, "{:?}", m.f_static);
        assert!((m.s0[1] - 0.75f64.sqrt() / 2.0).abs() < 1e-15, "s2_0 = {}", m.s0[1]);
        let f = [m.inputs[0].value, m.inputs[1].value];
        let mut drift: f64 = 0.0;
        run_held(
            &mut m,
            1e-3,
            10_000,
            |_| f.to_vec(),
            |_, m| drift = drift.max((m.kinematics(0).s - 0.5).abs()).max((m.kinematics(1).s - m.s0[1]).abs()),
        );
        assert!(drift <= 1e-12, "solver {solver}: drift {drift:e}");
    }
}

/// Pushing cylinder 2 (the one on the hanging link) swings link 2 out; cylinder 1's length
/// changes only through the coupling of the links.
#[test]
fn crane2_second_cylinder_moves_link_2() {
    let mut m: Crane2Fmu = init(|_| {});
    let f1 = m.f_static[0];
    run_held(&mut m, 1e-3, 300, |_| vec![f1, 200.0], |_, _| {});
    let (k1, k2) = (m.kinematics(0), m.kinematics(1));
    assert!(k2.s - m.s0[1] > 1e-3, "s2 = {}", k2.s);
    assert!(m.violation().position < 1e-10);
    // Energy: the work of both cylinders went into the mechanism (cylinder 1 is compressed a little
    // as link 1 gives way, so the net work is negative).
    assert!(
        m.work.abs() > 0.1 && m.energy_balance().abs() < 1e-3 * m.work.abs(),
        "W = {}, balance {}",
        m.work,
        m.energy_balance()
    );
    assert!((k1.s - 0.5).abs() > 1e-6, "the links are coupled: s1 = {}", k1.s);
}

#[test]
fn pressure_variants_rest_at_their_static_pressures() {
    let mut m: CranePFmu = init(|_| {});
    // DIGEST §1.4: F0 = 8829 N with p2 = 3.5 MPa gives p1 = 4.587 MPa.
    assert!((m.p1_static[0] - 4.587e6).abs() < 1e3, "{}", m.p1_static[0]);
    assert_eq!(m.inputs[0].value, m.p1_static[0]);
    assert_eq!(m.inputs[1].value, 3.5e6);
    assert!((m.force(0) - 8829.0).abs() < 1e-6, "F = {}", m.force(0));
    let u = [m.inputs[0].value, m.inputs[1].value];
    let mut drift: f64 = 0.0;
    run_held(&mut m, 1e-3, 10_000, |_| u.to_vec(), |_, m| drift = drift.max((m.kinematics(0).s - 0.5).abs()));
    assert!(drift <= 1e-12, "crane-p drift {drift:e}");

    let r: RodPFmu = init(|_| {});
    // Seed 004 eq. 32 equilibrium, chambers numbered piston side first: 4.3782 / 3.3218 MPa.
    assert!((r.p1_static[0] - 4.3782e6).abs() < 100.0, "{}", r.p1_static[0]);
    assert!((r.force(0) - 6867.0).abs() < 1e-6);

    let mut c2: Crane2PFmu = init(|_| {});
    assert!((c2.p1_static[1] - 3.5e6 * c2.cylinders[1].a2 / c2.cylinders[1].a1).abs() < 1e-6);
    let u: Vec<f64> = c2.inputs.iter().map(|x| x.value).collect();
    let mut drift: f64 = 0.0;
    run_held(
        &mut c2,
        1e-3,
        2000,
        |_| u.clone(),
        |_, m| drift = drift.max((m.kinematics(0).s - 0.5).abs()).max((m.kinematics(1).s - m.s0[1]).abs()),
    );
    assert!(drift <= 1e-12, "crane2-p drift {drift:e}");
}

/// Without friction and dampers the pressure variant with constant pressures is the force
/// variant with F = p1 A1 − p2 A2.
#[test]
fn pressure_coupling_without_friction_equals_force_coupling() {
    let mut p: CranePFmu = init(|m: &mut CranePFmu| {
        m.cylinders[0].c = 0.0;
        m.cylinders[0].l_d = 0.0;
    });
    let (p1, p2) = (p.p1_static[0] + 2e5, 3.5e6);
    let f = p1 * p.cylinders[0].a1 - p2 * p.cylinders[0].a2;
    let mut fo: CraneFmu = init(|_| {});
    run_held(&mut p, 1e-3, 500, |_| vec![p1, p2], |_, _| {});
    run_held(&mut fo, 1e-3, 500, |_| vec![f], |_, _| {});
    let (a, b) = (p.kinematics(0), fo.kinematics(0));
    assert!(a.s - 0.5 > 0.01, "it moves: s = {}", a.s);
    assert!((a.s - b.s).abs() < 1e-12 && (a.s_dot - b.s_dot).abs() < 1e-10, "{a:?} vs {b:?}");
}

/// A pressure step drives the crane up into the upper end damper (s ≥ s0 + l20 − l_d =
/// 0.742 m); it stops there before the stroke end (0.75 m) and the actuator work includes the
/// friction and damper losses, so the energy balance closes.
#[test]
fn the_upper_end_damper_stops_the_piston_before_the_stroke_end() {
    let mut m: CranePFmu = init(|_| {});
    let (p1, p2) = (m.p1_static[0] + 2e6, 3.5e6);
    let mut s_max: f64 = 0.0;
    let mut max_balance: f64 = 0.0;
    run_held(
        &mut m,
        1e-3,
        6000,
        |_| vec![p1, p2],
        |_, m| {
            s_max = s_max.max(m.kinematics(0).s);
            max_balance = max_balance.max(m.energy_balance().abs());
        },
    );
    let kin = m.kinematics(0);
    assert!(kin.s > 0.742 && s_max < 0.75, "s = {}, s_max = {s_max}", kin.s);
    assert!(kin.s_dot.abs() < 1e-3, "at rest in the damper: {kin:?}");
    assert!(max_balance < 1e-3 * m.work.abs(), "energy balance {max_balance} J, work {} J", m.work);
}

#[test]
fn the_piston_beyond_its_stroke_is_reported_once_and_the_run_goes_on() {
    // As the force-coupled circuit (lumped3 keeps its dead volume and warns), so that pressure and
    // force coupling stop on the same events.
    let mut m: CranePFmu = init(|m: &mut CranePFmu| m.cylinders[0].k_d = 0.0);
    let (p1, p2) = (m.p1_static[0] + 2e6, 3.5e6);
    let mut ctx = fmu_export::Context::default();
    let mut beyond = 0;
    for k in 0..6000 {
        if beyond > 50 {
            break;
        }
        let t = k as f64 * 1e-3;
        m.inputs[0].value = p1;
        m.inputs[1].value = p2;
        fmu_export::CoSimModel::do_step(&mut m, t, 1e-3, &mut ctx).expect("a piston beyond its stroke is no error");
        let (l1, l2) = m.cylinders[0].chamber_lengths(m.kinematics(0).s, m.s0[0]);
        beyond += usize::from(l1 <= 0.0 || l2 <= 0.0);
    }
    assert!(beyond > 0, "the piston must pass the stroke end");
    // A physical state: logged as a warning while fmi2DoStep returns fmi2OK (docs/fmu-behaviour.md).
    assert!(ctx.warnings().iter().all(|w| !w.contains("beyond the end of its stroke")), "{:?}", ctx.warnings());
    let w: Vec<&String> = ctx.reports().iter().filter(|w| w.contains("beyond the end of its stroke")).collect();
    assert_eq!(w.len(), 1, "{:?}", ctx.reports());
    assert!(w[0].contains("at t = "), "{}", w[0]);
}

fn fmu(name: &str) -> &'static dyn Fmu {
    *fmu_multibody::FMUS.iter().find(|f| f.info().fmu_name == name).unwrap()
}

#[test]
fn six_fmus_with_their_coupling_variables() {
    let names: Vec<&str> = fmu_multibody::FMUS.iter().map(|f| f.info().fmu_name).collect();
    assert_eq!(
        names,
        [
            "multibody-rod",
            "multibody-crane",
            "multibody-crane2",
            "multibody-rod-p",
            "multibody-crane-p",
            "multibody-crane2-p",
            "multibody-crane-me"
        ]
    );
    // The six co-simulation FMUs (the Model Exchange crane, minimal coordinates, is tested in
    // fmu-multibody's crane_me and fmu-harness's fmpy_me).
    let expect: [(&str, &[&str], &[&str]); 6] = [
        ("multibody-rod", &["F"], &["s", "s_dot", "s_ddot"]),
        ("multibody-crane", &["F"], &["s", "s_dot", "s_ddot"]),
        ("multibody-crane2", &["F1", "F2"], &["s1", "s1_dot", "s1_ddot", "s2", "s2_dot", "s2_ddot"]),
        ("multibody-rod-p", &["p1", "p2"], &["s", "s_dot", "s_ddot", "F"]),
        ("multibody-crane-p", &["p1", "p2"], &["s", "s_dot", "s_ddot", "F"]),
        (
            "multibody-crane2-p",
            &["p1_1", "p2_1", "p1_2", "p2_2"],
            &["s1", "s1_dot", "s1_ddot", "F1", "s2", "s2_dot", "s2_ddot", "F2"],
        ),
    ];
    for (name, inputs, outputs) in expect {
        let d = fmu(name).description().unwrap();
        let md = &d.model;
        let with = |c: Causality| -> Vec<&str> {
            md.model_variables.iter().filter(|v| v.causality == c).map(|v| v.name.as_str()).collect()
        };
        assert_eq!(with(Causality::Input), inputs, "{name}");
        let outs = with(Causality::Output);
        for o in outputs {
            assert!(outs.contains(o), "{name}: no output {o} in {outs:?}");
        }
        for diag in ["E_kin", "E_pot", "W_act", "E_balance", "phi", "phi_dot", "phi_ddot", "newton_iterations"] {
            assert!(outs.contains(&diag), "{name}: no output {diag}");
        }
        // Only the pressure variants' force outputs have direct feedthrough.
        for u in &md.model_structure.outputs {
            let v = &md.model_variables[(u.index - 1) as usize];
            let deps = u.dependencies.clone().unwrap_or_default();
            if v.name.starts_with('F') {
                assert_eq!(deps.len(), 2, "{name}.{}", v.name);
            } else {
                assert!(deps.is_empty(), "{name}.{} depends on {deps:?}", v.name);
            }
        }
        let id = fmu(name).info().model_identifier;
        assert_eq!(id, name.replace('-', "_"));
        assert!(d.xml.contains("canInterpolateInputs=\"true\""));
        assert!(fmu(name).documentation().unwrap().contains("I3AL-P"));
    }
    // The force input starts at the static force: a default run rests.
    let d = fmu("multibody-crane").description().unwrap();
    let f = d.model.model_variables.iter().find(|v| v.name == "F").unwrap();
    match &f.kind {
        VariableKind::Real { start: Some(x), .. } => assert!((x - 8829.0).abs() < 1e-9, "{x}"),
        other => panic!("{other:?}"),
    }
}

fn vr(name: &str, var: &str) -> u32 {
    fmu(name).description().unwrap().model.model_variables.iter().find(|v| v.name == var).unwrap().value_reference
}

/// fmi2SerializeFMUstate / fmi2DeSerializeFMUstate round trip in the middle of a motion: the
/// continuation is bit-identical.
#[test]
fn serialized_fmu_state_continues_bit_identically() {
    for name in ["multibody-crane", "multibody-crane2-p"] {
        let f = fmu(name);
        let mut c = f.instantiate("", Logger::new(None, "x", false)).unwrap();
        let (vr_u, vr_s) =
            if name == "multibody-crane" { (vr(name, "F"), vr(name, "s")) } else { (vr(name, "p1_1"), vr(name, "s1")) };
        let vr_solver = vr(name, "solver");
        assert_eq!(c.set_integer(&[vr_solver], &[2]), Status::Ok);
        assert_eq!(c.enter_initialization_mode(), Status::Ok);
        assert_eq!(c.exit_initialization_mode(), Status::Ok);
        let mut u0 = [0.0];
        c.get_real(&[vr_u], &mut u0);
        let h = 1e-3;
        let mut t = 0.0;
        let drive = |c: &mut Box<dyn fmu_export::Component>, t: f64| {
            assert_eq!(c.set_real(&[vr_u], &[u0[0] * (1.0 + 0.05 * (7.0 * t).sin())]), Status::Ok);
            assert_eq!(c.do_step(t, h, true), Status::Ok);
            let mut s = [0.0];
            c.get_real(&[vr_s], &mut s);
            s[0]
        };
        for _ in 0..100 {
            drive(&mut c, t);
            t += h;
        }
        let snap = c.get_fmu_state(None).unwrap().unwrap();
        let bytes = c.serialize_fmu_state(&snap).unwrap();
        let t_saved = t;
        let first: Vec<f64> = (0..100).map(|k| drive(&mut c, t_saved + k as f64 * h)).collect();
        let restored = c.deserialize_fmu_state(&bytes).unwrap();
        assert_eq!(c.set_fmu_state(&restored), Status::Ok);
        let second: Vec<f64> = (0..100).map(|k| drive(&mut c, t_saved + k as f64 * h)).collect();
        assert!(first.iter().zip(&second).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}");
        assert!((first[99] - first[0]).abs() > 1e-6, "{name}: it moves");
    }
}

/// The outputs kept from the end of a step are the values of their definitions, bit for bit,
/// and a state replaced from outside (FMU state restore) drops them.
#[test]
fn outputs_kept_from_the_step_equal_their_definitions() {
    use fmu_multibody::mechanism::Mechanism;
    let mut m: Crane2PFmu = init(|_| {});
    let (p1, p2) = (m.inputs[0].value, m.inputs[1].value);
    run_held(&mut m, 1e-3, 50, |t| vec![p1 * (1.0 + 0.2 * t), p2, p1, p2 * (1.0 - 0.3 * t)], |_, _| {});
    let direct = |m: &Crane2PFmu| {
        let (q, qd, qdd) = (&m.state.q, &m.state.qd, &m.state.qdd);
        let v = fmu_multibody::solver::violation(&m.mech, &m.state);
        let mut x = vec![m.mech.kinetic_energy(qd), m.mech.potential_energy(q), v.position, v.velocity, v.acceleration];
        for k in 0..2 {
            let kin = m.mech.actuator(k).kinematics(q, qd, qdd);
            x.extend([kin.s, kin.s_dot, kin.s_ddot]);
        }
        x.iter().map(|y| y.to_bits()).collect::<Vec<_>>()
    };
    let kept = |m: &Crane2PFmu| {
        let v = m.violation();
        let mut x = vec![m.kinetic_energy(), m.potential_energy(), v.position, v.velocity, v.acceleration];
        for k in 0..2 {
            let kin = m.kinematics(k);
            x.extend([kin.s, kin.s_dot, kin.s_ddot]);
        }
        x.iter().map(|y| y.to_bits()).collect::<Vec<_>>()
    };
    assert!(m.results.is_some());
    assert!(m.kinematics(1).s_dot != 0.0);
    assert_eq!(kept(&m), direct(&m));
    // A state restored through the variable table's visitor: the kept outputs are dropped.
    let other = m.state.clone();
    run_held(&mut m, 1e-3, 5, |_| vec![p1, p2, p1, p2], |_, _| {});
    m.state = other;
    fmu_export::CoSimModel::visit_state(&mut m, &mut NoVisitor);
    assert!(m.results.is_none());
    assert_eq!(kept(&m), direct(&m));
}

/// A state visitor that changes nothing.
struct NoVisitor;
impl fmu_export::StateVisitor for NoVisitor {
    fn real(&mut self, _: &mut f64) {}
    fn integer(&mut self, _: &mut i64) {}
    fn boolean(&mut self, _: &mut bool) {}
    fn string(&mut self, _: &mut String) {}
}
