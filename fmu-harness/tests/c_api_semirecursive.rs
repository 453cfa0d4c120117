#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The packaged semi-recursive FMUs through their C API: FMU states reproduce a trajectory bit for
//! bit (the whole integrator state, multipliers included, is in the state), a double-step run
//! selected by parameter follows the penalty run, bad parameters are refused naming them, and a
//! Newton failure ends the step with fmi2Error naming the model and time.

use fmu_harness::{paths, status, Fmu};

fn load(name: &str) -> Fmu {
    Fmu::load(&paths::fmu(name)).unwrap()
}

/// n steps of H = 1 ms from t0 with input F (mechanism FMUs) following a ramp; returns s, z1.
fn trajectory(inst: &fmu_harness::Instance<'_>, mech: bool, f0: f64, t0: f64, n: usize) -> Vec<[f64; 2]> {
    (0..n)
        .map(|i| {
            let t = t0 + i as f64 * 1e-3;
            if mech {
                assert_eq!(inst.set(&["F"], &[f0 * (1.0 + 0.05 * (3.0 * t).sin())]), status::OK);
            }
            assert_eq!(inst.do_step(t, 1e-3), status::OK, "{}", inst.last_log());
            let v = inst.get(&["s", "z1"]);
            [v[0], v[1]]
        })
        .collect()
}

#[test]
fn fmu_states_reproduce_trajectories_bit_for_bit() {
    for (name, mech) in [("semirecursive-a", false), ("semirecursive-e-mechanism", true), ("semirecursive-d", false)] {
        let fmu = load(name);
        let inst = fmu.instantiate("a").unwrap();
        inst.initialize(0.0);
        let f0 = inst.get(&["F_s0"])[0];
        // Past the valve opening of A (0.5 s) and D/E (1 s) for the monolithic FMUs.
        trajectory(&inst, mech, f0, 0.0, 1100);
        let (s, mut state) = inst.get_state();
        assert_eq!(s, status::OK);
        let first = trajectory(&inst, mech, f0, 1.1, 200);
        assert!(first.iter().any(|v| (v[0] - first[0][0]).abs() > 1e-6), "{name}: nothing moves");
        assert_eq!(inst.set_state(&state), status::OK);
        assert_eq!(trajectory(&inst, mech, f0, 1.1, 200), first, "{name}: restored state");
        let (s, bytes) = inst.serialize(&state);
        assert_eq!(s, status::OK);
        let other = fmu.instantiate("b").unwrap();
        other.initialize(0.0);
        let (s, mut restored) = other.deserialize(&bytes);
        assert_eq!(s, status::OK, "{}", other.last_log());
        assert_eq!(other.set_state(&restored), status::OK);
        assert_eq!(trajectory(&other, mech, f0, 1.1, 200), first, "{name}: deserialized state");
        assert_eq!(inst.free_state(&mut state), status::OK);
        assert_eq!(other.free_state(&mut restored), status::OK);
    }
}

#[test]
fn double_step_by_parameter_follows_the_penalty_run() {
    let fmu = load("semirecursive-d");
    let pen = fmu.instantiate("pen").unwrap();
    pen.initialize(0.0);
    let ds = fmu.instantiate("ds").unwrap();
    assert_eq!(ds.setup(0.0, None), status::OK);
    assert_eq!(ds.enter_init(), status::OK);
    assert_eq!(ds.set_integers(&[fmu.vr("formulation")], &[2]), status::OK);
    assert_eq!(ds.exit_init(), status::OK);
    let (a, b) = (trajectory(&pen, false, 0.0, 0.0, 2000), trajectory(&ds, false, 0.0, 0.0, 2000));
    let worst = a.iter().zip(&b).map(|(x, y)| (x[1] - y[1]).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-6, "z1 differs by {worst} rad");
    assert!((a[1999][0] - a[0][0]).abs() > 1e-3, "the load moved");
    // Double-step holds Φ = 0 to round-off.
    assert!(ds.get(&["phi_norm"])[0] < 1e-10);
}

#[test]
fn bad_parameters_and_failures_are_reported() {
    let fmu = load("semirecursive-a");
    let inst = fmu.instantiate("a").unwrap();
    assert_eq!(inst.setup(0.0, None), status::OK);
    assert_eq!(inst.enter_init(), status::OK);
    assert_eq!(inst.set(&["h"], &[3e-4]), status::OK);
    assert_eq!(inst.exit_init(), status::OK);
    // h = 0.3 ms does not divide H = 1 ms.
    assert_eq!(inst.do_step(0.0, 1e-3), status::ERROR);
    assert!(inst.last_log().contains("is not a multiple of the internal step h = 0.0003 s"), "{}", inst.last_log());
    // An iteration cap of 1 cannot meet the tolerances once the valve opens.
    let capped = fmu.instantiate("b").unwrap();
    assert_eq!(capped.setup(0.0, None), status::OK);
    assert_eq!(capped.enter_init(), status::OK);
    assert_eq!(capped.set_integers(&[fmu.vr("max_iter")], &[1]), status::OK);
    assert_eq!(capped.exit_init(), status::OK);
    let mut failed = None;
    for i in 0..1000 {
        if capped.do_step(i as f64 * 1e-3, 1e-3) != status::OK {
            failed = Some(i);
            break;
        }
    }
    assert!(failed.is_some(), "one iteration per step cannot meet 1e-7 rad and 1e2 Pa at the valve opening");
    let log = capped.last_log();
    assert!(log.contains("model A") && log.contains("no convergence"), "{log}");
}
