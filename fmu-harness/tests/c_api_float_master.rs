#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The physics FMUs under a master that keeps its time in floating point, as OMSimulator does:
//! `t += H` every step and a last step `stop − t`, which is 1.46e-12 s short of H at 20 s
//! (issue 31). Driven through the C API with a plain Jacobi loop and held inputs, the way such
//! importers couple FMUs: every `fmi2DoStep` returns fmi2OK to the end, a step that really is
//! not a multiple of the internal step is refused with its numbers, and cavitation on the crane
//! is a logged warning while the call returns fmi2OK.

use fmu_harness::{paths, status, Fmu, Instance};

fn load(name: &str) -> Fmu {
    Fmu::load(&paths::fmu(name)).unwrap()
}

/// Work cycle J1 of crane-pub3 (scenarios/crane-pub3.toml): the valve reference at t.
fn j1(t: f64) -> f64 {
    let times = [0.0, 0.5, 8.0, 9.5, 12.5, 14.0, 18.5, 19.0, 19.8];
    let values = [0.0, 10.0, 0.0, -10.0, 0.0, -10.0, 0.0, 10.0, 0.0];
    times.iter().zip(values).rev().find(|(ti, _)| **ti <= t).map_or(0.0, |(_, v)| v)
}

/// The float master's grid: `t += H` (n steps of H), the last step `stop − t`.
fn float_grid(big_h: f64, stop: f64) -> Vec<(f64, f64)> {
    let mut steps = Vec::new();
    let mut t = 0.0f64;
    while t < stop {
        let h = if t + big_h > stop { stop - t } else { big_h };
        steps.push((t, h));
        t += big_h;
    }
    steps
}

#[test]
fn lumped3_steps_a_float_accumulated_time_grid_to_the_end() {
    let grid = float_grid(1e-3, 20.0);
    assert_eq!(grid.len(), 20_000);
    let (t_last, h_last) = *grid.last().unwrap();
    // The numbers of the issue: the last step starts at 19.999 and is 1.46e-12 s short of H.
    assert_eq!(h_last, 0.0009999999985410568, "t = {t_last}");
    let fmu = load("hydraulics-lumped3");
    let inst = fmu.instantiate("hyd").unwrap();
    inst.initialize(0.0);
    for &(t, h) in &grid {
        assert_eq!(inst.set(&["U_ref"], &[j1(t)]), status::OK);
        assert_eq!(inst.do_step(t, h), status::OK, "t = {t}, H = {h:e}: {}", inst.last_log());
    }
    let p = inst.get(&["p1", "p2", "p3"]);
    assert!(p.iter().all(|p| p.is_finite() && *p > 0.0), "{p:?}");
}

#[test]
fn a_step_that_is_not_a_multiple_of_h_is_refused_with_the_numbers() {
    let fmu = load("hydraulics-lumped3");
    let inst = fmu.instantiate("hyd").unwrap();
    inst.initialize(0.0);
    assert_eq!(inst.do_step(0.0, 1e-3), status::OK);
    // 1.00001 ms is 1e-8 s off ten internal steps of 0.1 ms: not rounding, a different step.
    assert_eq!(inst.do_step(1e-3, 1.00001e-3), status::ERROR);
    let log = inst.last_log();
    assert!(
        log.contains("H = 1.00001e-3 s")
            && log.contains("t = 0.001 s")
            && log.contains("internal step h = 0.0001 s")
            && log.contains("H/h = 10.0001"),
        "{log}"
    );
}

/// Outputs to inputs of the crane pair, held over the step (zero-order hold).
fn exchange(mech: &Instance, hyd: &Instance) {
    let m = mech.get(&["s", "s_dot"]);
    assert_eq!(hyd.set(&["s", "s_dot"], &m), status::OK, "{}", hyd.last_log());
    let f = hyd.get(&["F"]);
    assert_eq!(mech.set(&["F"], &f), status::OK, "{}", mech.last_log());
}

#[test]
fn cavitation_on_the_crane_is_a_logged_warning_and_do_step_returns_ok() {
    // crane-pub3 with held inputs at H = 1 ms cavitates at t ≈ 19.02 s (cosim-cli/tests/cavitation.rs,
    // issue 17), where OMSimulator used to stop on the fmi2Warning.
    let (mf, hf) = (load("multibody-crane"), load("hydraulics-lumped3"));
    let (mech, hyd) = (mf.instantiate("mech").unwrap(), hf.instantiate("hyd").unwrap());
    for i in [&mech, &hyd] {
        assert_eq!(i.setup(0.0, Some(20.0)), status::OK, "{}", i.last_log());
        assert_eq!(i.enter_init(), status::OK, "{}", i.last_log());
    }
    exchange(&mech, &hyd);
    for i in [&mech, &hyd] {
        assert_eq!(i.exit_init(), status::OK, "{}", i.last_log());
    }
    exchange(&mech, &hyd);
    let mut first_warning = None;
    for (t, h) in float_grid(1e-3, 20.0) {
        assert_eq!(hyd.set(&["U_ref"], &[j1(t)]), status::OK);
        for (name, i) in [("mech", &mech), ("hyd", &hyd)] {
            assert_eq!(i.do_step(t, h), status::OK, "{name} at t = {t}: {}", i.last_log());
        }
        exchange(&mech, &hyd);
        if first_warning.is_none() && hyd.log().iter().any(|l| l.contains("status 1") && l.contains("cavitation")) {
            first_warning = Some(t + h);
        }
    }
    let at = first_warning.expect("a logged warning about cavitation");
    assert!((19.0..19.1).contains(&at), "cavitation reported at t = {at}");
    let warning = hyd.log().into_iter().find(|l| l.contains("cavitation")).unwrap();
    assert!(warning.contains("[logStatusWarning] status 1") && warning.contains("fmi2DoStep"), "{warning}");
    let t_cav = hyd.get(&["t_cav"])[0];
    assert!(t_cav > 0.0 && t_cav < 0.5, "time spent cavitating {t_cav} s");
}

/// OMSimulator's naya run (issue 47): H = 10 ms accumulated (`t += H`) reaches
/// t = 9.99999999999983 s after 1000 steps, and the last `fmi2DoStep` to the stop time is
/// 1.69e-13 s long. The rod's I3AL-P took it literally and failed ("(h^2/4) alpha = 0.000
/// times the largest mass", then Newton), the hydraulics refused it (H smaller than their h);
/// now both take it as a remainder of the master's time: fmi2OK, no internal step, the state
/// held.
#[test]
fn naya_takes_the_remainder_step_of_a_float_time_master_to_the_stop_time() {
    let grid = float_grid(1e-2, 10.0);
    assert_eq!(grid.len(), 1001);
    let (t_last, h_last) = *grid.last().unwrap();
    assert!(h_last > 0.0 && h_last < 1e-12 && t_last + h_last == 10.0, "t = {t_last}, H = {h_last:e}");
    let (mech_fmu, hyd_fmu) = (load("multibody-rod"), load("hydraulics-naya"));
    let (mech, hyd) = (mech_fmu.instantiate("mech").unwrap(), hyd_fmu.instantiate("hyd").unwrap());
    mech.initialize(0.0);
    hyd.initialize(0.0);
    let kappa0 = hyd.get(&["kappa0"])[0];
    for (k, &(t, h)) in grid.iter().enumerate() {
        // Seed 004's spool law (scenarios/naya.toml).
        let kappa = kappa0
            + if t >= 6.0 {
                0.01
            } else if t >= 2.0 {
                -0.01
            } else {
                0.0
            };
        assert_eq!(hyd.set(&["kappa"], &[kappa]), status::OK);
        exchange(&mech, &hyd);
        let before = (mech.get(&["s", "s_dot"]), hyd.get(&["p1", "p2"]));
        assert_eq!(mech.do_step(t, h), status::OK, "mech, t = {t}, H = {h:e}: {}", mech.last_log());
        assert_eq!(hyd.do_step(t, h), status::OK, "hyd, t = {t}, H = {h:e}: {}", hyd.last_log());
        if k + 1 == grid.len() {
            assert_eq!((mech.get(&["s", "s_dot"]), hyd.get(&["p1", "p2"])), before, "the remainder holds the state");
        }
    }
    let s = mech.get(&["s"])[0];
    assert!((s - 0.5).abs() > 0.01, "the spool's steps moved the piston: s(10) = {s}");
}
