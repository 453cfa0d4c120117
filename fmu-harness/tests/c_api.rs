#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The packaged oscillator FMUs driven through their C API with libloading, as an importer
//! would: legal and illegal call sequences. Illegal calls give fmi2Error with a message through
//! the logger; nothing crashes.

use fmu_harness::{paths, status, Fmu};
use std::ffi::CStr;

fn load(name: &str) -> Fmu {
    Fmu::load(&paths::fmu(name)).unwrap()
}

#[test]
fn platform_version_and_every_required_symbol() {
    // Fmu::load resolves all of fmu_harness::required_symbols() (it fails naming a missing one).
    let fmu = load("oscillator-fd-m1");
    // SAFETY: FMI 2.0 functions without arguments returning static strings.
    unsafe {
        assert_eq!(CStr::from_ptr((fmu.api.get_types_platform)()).to_str().unwrap(), "default");
        assert_eq!(CStr::from_ptr((fmu.api.get_version)()).to_str().unwrap(), "2.0");
    }
    // FMI 2.0.4 §2.1 and §4.2: 10 common functions (types platform, version, debug logging,
    // instantiate, free, setup, enter/exit initialization, terminate, reset), 8 getters and
    // setters, 6 FMU-state functions, 1 directional derivative; 9 Co-Simulation functions.
    let symbols = fmu_harness::required_symbols();
    assert_eq!(symbols.len(), 34);
    assert!(symbols.iter().all(|s| s.starts_with("fmi2")));
    assert_eq!(symbols.iter().collect::<std::collections::BTreeSet<_>>().len(), 34, "{symbols:?}");
}

#[test]
fn instantiate_checks_guid_and_type() {
    let fmu = load("oscillator-fd-m1");
    let Err(fmu_harness::HarnessError::Instantiate(log)) = fmu.instantiate_with("a", "{not-a-guid}", 1) else {
        panic!("a wrong GUID must give NULL");
    };
    assert!(log.iter().any(|l| l.contains("{not-a-guid}") && l.contains("oscillator_fd_m1")), "{log:?}");
    let Err(fmu_harness::HarnessError::Instantiate(log)) = fmu.instantiate_with("a", &fmu.md.guid.clone(), 0) else {
        panic!("Model Exchange must be refused");
    };
    assert!(log.iter().any(|l| l.contains("Co-Simulation only")), "{log:?}");
    // The same binary serves the other oscillator FMUs: their GUIDs differ.
    let other = load("oscillator-fd-m2");
    assert_ne!(other.md.guid, fmu.md.guid);
    assert!(fmu.instantiate_with("b", &other.md.guid.clone(), 1).is_ok());
}

#[test]
fn illegal_sequences_and_arguments_give_fmi2error_with_a_message() {
    let fmu = load("oscillator-fd-m1");
    let inst = fmu.instantiate("m1").unwrap();
    // doStep before initialization.
    assert_eq!(inst.do_step(0.0, 1e-3), status::ERROR);
    assert!(
        inst.last_log().contains("fmi2DoStep") && inst.last_log().contains("illegal call sequence"),
        "{}",
        inst.last_log()
    );
    // exit before enter.
    assert_eq!(inst.exit_init(), status::ERROR);
    // Out-of-range parameter, NaN parameter.
    assert_eq!(inst.set(&["m1"], &[-1.0]), status::ERROR);
    assert!(inst.last_log().contains("\"m1\""), "{}", inst.last_log());
    assert_eq!(inst.set(&["k1"], &[f64::NAN]), status::ERROR);
    assert!(inst.last_log().contains("\"k1\""), "{}", inst.last_log());
    // Invalid enumeration value.
    assert_eq!(inst.set_integers(&[fmu.vr("damping")], &[7]), status::ERROR);
    assert!(inst.last_log().contains("DampingCase"), "{}", inst.last_log());
    inst.initialize(0.0);
    // Wrong value reference, wrong type.
    let (s, _) = inst.get_reals(&[9999]);
    assert_eq!(s, status::ERROR);
    assert!(inst.last_log().contains("value reference 9999"), "{}", inst.last_log());
    let (s, _) = inst.get_integers(&[fmu.vr("x")]);
    assert_eq!(s, status::ERROR);
    assert!(inst.last_log().contains("\"x\"") && inst.last_log().contains("Real"), "{}", inst.last_log());
    // Outputs cannot be set; fixed parameters not after initialization.
    assert_eq!(inst.set(&["x"], &[1.0]), status::ERROR);
    assert_eq!(inst.set(&["k1"], &[5.0]), status::ERROR);
    assert!(inst.last_log().contains("before fmi2ExitInitializationMode"), "{}", inst.last_log());
    // NaN input.
    assert_eq!(inst.set(&["xi"], &[f64::NAN]), status::ERROR);
    assert!(inst.last_log().contains("\"xi\""), "{}", inst.last_log());
    // Wrong communication point, non-positive step.
    assert_eq!(inst.do_step(0.5, 1e-3), status::ERROR);
    assert!(inst.last_log().contains("currentCommunicationPoint"), "{}", inst.last_log());
    assert_eq!(inst.do_step(0.0, 0.0), status::ERROR);
    // Input derivative of an output, of order 5.
    assert_eq!(inst.set_input_derivatives(&[fmu.vr("x")], &[1], &[1.0]), status::ERROR);
    assert_eq!(inst.set_input_derivatives(&[fmu.vr("xi")], &[5], &[1.0]), status::ERROR);
    // Unsupported functions say so.
    // SAFETY: FMI 2.0 calls on a live instance.
    unsafe {
        assert_eq!((fmu.api.cancel_step)(inst.c), status::ERROR);
        assert_eq!(
            (fmu.api.get_directional_derivative)(
                inst.c,
                std::ptr::null(),
                0,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null_mut()
            ),
            status::ERROR
        );
        let cat = c"logNoSuchCategory".as_ptr();
        assert_eq!((fmu.api.set_debug_logging)(inst.c, 1, 1, &cat), status::ERROR);
        assert!(inst.last_log().contains("logNoSuchCategory"));
        let cat = c"logAll".as_ptr();
        assert_eq!((fmu.api.set_debug_logging)(inst.c, 1, 1, &cat), status::OK);
    }
    // None of the rejected calls changed anything: the run is still the legal one.
    assert_eq!(inst.do_step(0.0, 1e-3), status::OK, "{}", inst.last_log());
    let mut t = 0.0;
    // Fmu::load requires the optional functions of the table too.
    let get_real_status = fmu.api.get_real_status.unwrap();
    // SAFETY: a live instance; one fmi2Real out.
    unsafe { assert_eq!(get_real_status(inst.c, 2, &mut t), status::OK) };
    assert_eq!(t, 1e-3);
    // After terminate only getters, reset and free.
    assert_eq!(inst.terminate(), status::OK);
    assert_eq!(inst.do_step(1e-3, 1e-3), status::ERROR);
    assert_eq!(inst.get(&["x"]).len(), 1);
    assert_eq!(inst.reset(), status::OK);
    inst.initialize(0.0);
    assert_eq!(inst.get(&["x", "v"]), vec![0.0, 100.0]);
}

#[test]
fn null_pointers_and_double_free_do_not_crash() {
    let fmu = load("oscillator-fd-m2");
    // SAFETY: deliberately NULL arguments: the FMU must reject them.
    unsafe {
        assert_eq!((fmu.api.do_step)(std::ptr::null_mut(), 0.0, 1.0, 1), status::ERROR);
        (fmu.api.free_instance)(std::ptr::null_mut());
    }
    let mut inst = fmu.instantiate("a").unwrap();
    inst.initialize(0.0);
    let vr = [fmu.vr("x")];
    // SAFETY: NULL value array with n = 1.
    unsafe { assert_eq!((fmu.api.get_real)(inst.c, vr.as_ptr(), 1, std::ptr::null_mut()), status::ERROR) };
    inst.free();
    inst.free(); // second free of the same pointer: ignored
    let again = fmu.instantiate("b").unwrap();
    again.initialize(0.0);
    assert_eq!(again.do_step(0.0, 0.01), status::OK);
}

#[test]
fn failed_step_leaves_the_instance_in_the_error_state_until_reset() {
    let fmu = load("oscillator-fd-m2");
    let inst = fmu.instantiate("a").unwrap();
    assert_eq!(inst.setup(0.0, None), status::OK);
    assert_eq!(inst.enter_init(), status::OK);
    assert_eq!(inst.set(&["h_max"], &[1e-9]), status::OK);
    assert_eq!(inst.exit_init(), status::OK);
    assert_eq!(inst.do_step(0.0, 10.0), status::ERROR);
    assert!(inst.last_log().contains("sub-steps"), "{}", inst.last_log());
    assert_eq!(inst.do_step(0.0, 1e-3), status::ERROR);
    assert!(inst.last_log().contains("state error"), "{}", inst.last_log());
    assert_eq!(inst.get(&["x"]), vec![0.0]);
    assert_eq!(inst.reset(), status::OK);
    inst.initialize(0.0);
    assert_eq!(inst.do_step(0.0, 1e-3), status::OK);
}

fn trajectory(inst: &fmu_harness::Instance<'_>, t0: f64, n: usize, h: f64) -> Vec<[f64; 2]> {
    (0..n)
        .map(|i| {
            let t = t0 + i as f64 * h;
            assert_eq!(inst.set(&["xi", "xi_dot"], &[0.01 * (7.0 * t).sin(), 0.07 * (7.0 * t).cos()]), status::OK);
            assert_eq!(inst.do_step(t, h), status::OK, "{}", inst.last_log());
            let v = inst.get(&["x", "F"]);
            [v[0], v[1]]
        })
        .collect()
}

#[test]
fn two_interleaved_instances_are_independent() {
    let fmu = load("oscillator-fd-m1");
    let alone = fmu.instantiate("alone").unwrap();
    alone.initialize(0.0);
    let reference = trajectory(&alone, 0.0, 200, 1e-3);
    let a = fmu.instantiate("a").unwrap();
    let b = fmu.instantiate("b").unwrap();
    a.initialize(0.0);
    assert_eq!(b.setup(0.0, None), status::OK);
    assert_eq!(b.enter_init(), status::OK);
    assert_eq!(b.set(&["v0"], &[-3.0]), status::OK);
    assert_eq!(b.exit_init(), status::OK);
    let mut ta = Vec::new();
    for i in 0..200 {
        ta.extend(trajectory(&a, i as f64 * 1e-3, 1, 1e-3));
        trajectory(&b, i as f64 * 1e-3, 1, 1e-3);
    }
    assert_eq!(ta, reference, "instance a was disturbed by instance b");
    assert_ne!(b.get(&["x"])[0], a.get(&["x"])[0]);
}

#[test]
fn fmu_state_restore_and_serialization_reproduce_a_trajectory_bit_for_bit() {
    let fmu = load("oscillator-fd-m1");
    let inst = fmu.instantiate("a").unwrap();
    assert_eq!(inst.setup(0.0, None), status::OK);
    assert_eq!(inst.enter_init(), status::OK);
    assert_eq!(inst.set_integers(&[fmu.vr("damping")], &[3]), status::OK);
    assert_eq!(inst.exit_init(), status::OK);
    trajectory(&inst, 0.0, 50, 1e-3);
    let (s, mut state) = inst.get_state();
    assert_eq!(s, status::OK);
    let first = trajectory(&inst, 0.05, 100, 1e-3);
    assert_eq!(inst.set_state(&state), status::OK);
    let second = trajectory(&inst, 0.05, 100, 1e-3);
    assert_eq!(first, second);
    // Serialized into another instance with other parameters: same trajectory (parameters are
    // part of the state).
    let (s, bytes) = inst.serialize(&state);
    assert_eq!(s, status::OK);
    let other = fmu.instantiate("b").unwrap();
    assert_eq!(other.setup(0.0, None), status::OK);
    assert_eq!(other.enter_init(), status::OK);
    assert_eq!(other.set(&["k1"], &[1.0]), status::OK);
    assert_eq!(other.exit_init(), status::OK);
    let (s, mut restored) = other.deserialize(&bytes);
    assert_eq!(s, status::OK, "{}", other.last_log());
    assert_eq!(other.set_state(&restored), status::OK);
    assert_eq!(trajectory(&other, 0.05, 100, 1e-3), first);
    // Corrupt and foreign bytes are refused.
    let (s, _) = other.deserialize(&bytes[..bytes.len() - 3]);
    assert_eq!(s, status::ERROR);
    assert!(other.last_log().contains("truncated"), "{}", other.last_log());
    let m2 = load("oscillator-fd-m2");
    let foreign = m2.instantiate("c").unwrap();
    let (s, _) = foreign.deserialize(&bytes);
    assert_eq!(s, status::ERROR);
    assert!(foreign.last_log().contains("GUID"), "{}", foreign.last_log());
    assert_eq!(inst.free_state(&mut state), status::OK);
    assert!(state.is_null());
    assert_eq!(other.free_state(&mut restored), status::OK);
}

#[test]
fn input_derivatives_make_the_input_a_polynomial_inside_the_step() {
    // fd-m2 alone with F(t) = b t: m x'' + k x = b t, x(0) = 0, v(0) = v0 gives
    // x(t) = (b/k)(t − sin(ωt)/ω) + (v0/ω) sin(ωt), ω² = k/m.
    let fmu = load("oscillator-fd-m2");
    let inst = fmu.instantiate("a").unwrap();
    inst.initialize(0.0);
    let (b, k, v0): (f64, f64, f64) = (3000.0, 1000.0, -100.0);
    let w = k.sqrt();
    assert_eq!(inst.set(&["F"], &[0.0]), status::OK);
    assert_eq!(inst.set_input_derivatives(&[fmu.vr("F")], &[1], &[b]), status::OK);
    let h = 0.05;
    assert_eq!(inst.do_step(0.0, h), status::OK);
    let exact = (b / k) * (h - (w * h).sin() / w) + v0 / w * (w * h).sin();
    let x = inst.get(&["x"])[0];
    assert!((x - exact).abs() < 1e-9, "x = {x}, exact {exact}");
    // After the step the input holds the value it reached: F = b h.
    assert_eq!(inst.get(&["F"]), vec![b * h]);
    // Output derivative of order 1 of x is v.
    let (s, d) = inst.get_output_derivatives(&[fmu.vr("x")], &[1]);
    assert_eq!(s, status::OK);
    assert_eq!(d[0], inst.get(&["v"])[0]);
    let (s, _) = inst.get_output_derivatives(&[fmu.vr("x")], &[2]);
    assert_eq!(s, status::ERROR);
}

#[test]
fn direct_feedthrough_output_follows_its_inputs_without_a_step() {
    let fmu = load("oscillator-fd-m1");
    let inst = fmu.instantiate("a").unwrap();
    inst.initialize(0.0);
    // F = kc (x1 − xi) + cc (v1 − xi_dot); case 1: cc = 0, kc = 100, x1 = 0.
    assert_eq!(inst.set(&["xi", "xi_dot"], &[0.25, 1.0]), status::OK);
    assert_eq!(inst.get(&["F"]), vec![-25.0]);
    let out =
        fmu.md.model_structure.outputs.iter().find(|u| fmu.md.variable_by_index(u.index).unwrap().name == "F").unwrap();
    let deps: Vec<&str> = out
        .dependencies
        .as_ref()
        .unwrap()
        .iter()
        .map(|i| fmu.md.variable_by_index(*i).unwrap().name.as_str())
        .collect();
    assert_eq!(deps, ["xi", "xi_dot"]);
}

#[test]
fn instantiate_free_cycles_do_not_accumulate() {
    // Run under valgrind by `cargo xtask test`: a leak per cycle would show 100 times.
    let fmu = load("hydraulics-lumped3");
    for k in 0..100 {
        let inst = fmu.instantiate(&format!("cycle{k}")).unwrap();
        inst.initialize(0.0);
        assert_eq!(inst.do_step(0.0, 1e-3), status::OK);
        let (s, mut state) = inst.get_state();
        assert_eq!(s, status::OK);
        let (s, bytes) = inst.serialize(&state);
        assert_eq!(s, status::OK);
        assert!(!bytes.is_empty());
        assert_eq!(inst.free_state(&mut state), status::OK);
    }
}
