//! The double oscillator of seed 001 §A.1: analytical solution z(t) = e^{A t} z₀ (eqs. 34–36)
//! and a minimal fixed-step co-simulation of the packaged FMUs, used by the demo and the tests.

use crate::{status, Fmu, HarnessError, Instance};

type M4 = [[f64; 4]; 4];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut c = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            c[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// e^M by scaling and squaring with a 24-term Taylor series (|M|/2^s ≤ 0.5): ~1e-15 relative.
pub fn expm(m: &M4) -> M4 {
    let norm = m.iter().map(|r| r.iter().map(|x| x.abs()).sum::<f64>()).fold(0.0, f64::max);
    let s = if norm > 0.5 { (norm / 0.5).log2().ceil() as i32 } else { 0 };
    let scale = 0.5f64.powi(s);
    let a: M4 = m.map(|r| r.map(|x| x * scale));
    let mut result = [[0.0; 4]; 4];
    let mut term = [[0.0; 4]; 4];
    for i in 0..4 {
        result[i][i] = 1.0;
        term[i][i] = 1.0;
    }
    for k in 1..=24 {
        term = mul(&term, &a).map(|r| r.map(|x| x / k as f64));
        for i in 0..4 {
            for j in 0..4 {
                result[i][j] += term[i][j];
            }
        }
    }
    for _ in 0..s {
        result = mul(&result, &result);
    }
    result
}

/// Damping of case 1, 2, 3 (c1 = c2 = cc, N·s/m).
pub fn case_damping(case: i32) -> f64 {
    match case {
        2 => 0.01,
        3 => 10.0,
        _ => 0.0,
    }
}

/// z(t) = [x1, x2, v1, v2] of the monolithic double oscillator, eq. 36 with A of eq. 35
/// (m1 = m2 = 1 kg, k1 = 10, k2 = 1000, kc = 100 N/m, z₀ = [0, 0, 100, −100]).
pub fn analytic(case: i32, t: f64) -> [f64; 4] {
    let (m1, m2, k1, k2, kc) = (1.0, 1.0, 10.0, 1000.0, 100.0);
    let c = case_damping(case);
    let (c1, c2, cc) = (c, c, c);
    let a: M4 = [
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        [-(k1 + kc) / m1, kc / m1, -(c1 + cc) / m1, cc / m1],
        [kc / m2, -(k2 + kc) / m2, cc / m2, -(c2 + cc) / m2],
    ];
    let e = expm(&a.map(|r| r.map(|x| x * t)));
    let z0 = [0.0, 0.0, 100.0, -100.0];
    [0, 1, 2, 3].map(|i| (0..4).map(|k| e[i][k] * z0[k]).sum())
}

/// Co-simulation scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Both subsystems step on inputs from t_n.
    Jacobi,
    /// M2 steps first, M1 then uses M2's outputs at t_{n+1} (interpolated linearly in the step).
    GaussSeidel,
}

/// Result of one co-simulation run.
#[derive(Debug, Clone, Copy)]
pub struct RunError {
    /// max |x1 − x1_exact| over the communication points (m).
    pub x1: f64,
    /// max |x2 − x2_exact| (m).
    pub x2: f64,
}

/// Sets the inputs of `inst` to a polynomial of `order` (0 or 1) through the last samples.
fn set_input(inst: &Instance<'_>, names: &[&str], now: &[f64], before: Option<&[f64]>, h: f64, order: i32) {
    assert_eq!(inst.set(names, now), status::OK, "{}", inst.last_log());
    if order >= 1 {
        if let Some(before) = before {
            let vr: Vec<u32> = names.iter().map(|n| inst.fmu.vr(n)).collect();
            let slopes: Vec<f64> = now.iter().zip(before).map(|(a, b)| (a - b) / h).collect();
            let orders = vec![1; vr.len()];
            assert_eq!(inst.set_input_derivatives(&vr, &orders, &slopes), status::OK, "{}", inst.last_log());
        }
    }
}

/// Runs the force-displacement double oscillator (`oscillator-fd-m1` + `oscillator-fd-m2`) for
/// `t_end` seconds with step `h`, damping `case` and input extrapolation `order` (0: hold,
/// 1: linear extrapolation set through fmi2SetRealInputDerivatives); errors vs [`analytic`].
pub fn run_force_displacement(
    m1: &Fmu,
    m2: &Fmu,
    case: i32,
    h: f64,
    t_end: f64,
    order: i32,
    scheme: Scheme,
) -> Result<RunError, HarnessError> {
    let a = m1.instantiate("m1")?;
    let b = m2.instantiate("m2")?;
    for inst in [&a, &b] {
        assert_eq!(inst.setup(0.0, Some(t_end)), status::OK);
        assert_eq!(inst.enter_init(), status::OK);
        let (s, _) = (inst.set_integers(&[inst.fmu.vr("damping")], &[case]), ());
        assert_eq!(s, status::OK, "{}", inst.last_log());
        assert_eq!(inst.exit_init(), status::OK, "{}", inst.last_log());
    }
    let n = (t_end / h).round() as u64;
    let mut err = RunError { x1: 0.0, x2: 0.0 };
    let mut prev_xv: Option<Vec<f64>> = None;
    let mut prev_f: Option<Vec<f64>> = None;
    for i in 0..n {
        let t = i as f64 * h;
        let xv2 = b.get(&["x", "v"]);
        set_input(&a, &["xi", "xi_dot"], &xv2, prev_xv.as_deref(), h, order);
        let f = a.get(&["F"]);
        let x1 = a.get(&["x"])[0];
        let z = analytic(case, t);
        err.x1 = err.x1.max((x1 - z[0]).abs());
        err.x2 = err.x2.max((xv2[0] - z[1]).abs());
        match scheme {
            Scheme::Jacobi => {
                set_input(&b, &["F"], &f, prev_f.as_deref(), h, order);
                assert_eq!(b.do_step(t, h), status::OK, "{}", b.last_log());
                assert_eq!(a.do_step(t, h), status::OK, "{}", a.last_log());
            }
            Scheme::GaussSeidel => {
                // M2 first on extrapolated force; M1 then on M2's new outputs, linear in the step.
                set_input(&b, &["F"], &f, prev_f.as_deref(), h, order);
                assert_eq!(b.do_step(t, h), status::OK, "{}", b.last_log());
                let next = b.get(&["x", "v"]);
                assert_eq!(a.set(&["xi", "xi_dot"], &xv2), status::OK);
                let vr = [m1.vr("xi"), m1.vr("xi_dot")];
                let slopes = [(next[0] - xv2[0]) / h, (next[1] - xv2[1]) / h];
                assert_eq!(a.set_input_derivatives(&vr, &[1, 1], &slopes), status::OK);
                assert_eq!(a.do_step(t, h), status::OK, "{}", a.last_log());
            }
        }
        prev_xv = Some(xv2);
        prev_f = Some(f);
    }
    let z = analytic(case, n as f64 * h);
    err.x1 = err.x1.max((a.get(&["x"])[0] - z[0]).abs());
    err.x2 = err.x2.max((b.get(&["x"])[0] - z[1]).abs());
    Ok(err)
}

/// Runs the displacement-displacement double oscillator (`oscillator-dd-m1` + `oscillator-dd-m2`),
/// Jacobi, with input extrapolation `order` (0 or 1).
pub fn run_displacement_displacement(
    m1: &Fmu,
    m2: &Fmu,
    case: i32,
    h: f64,
    t_end: f64,
    order: i32,
) -> Result<RunError, HarnessError> {
    let a = m1.instantiate("m1")?;
    let b = m2.instantiate("m2")?;
    for inst in [&a, &b] {
        assert_eq!(inst.setup(0.0, Some(t_end)), status::OK);
        assert_eq!(inst.enter_init(), status::OK);
        assert_eq!(inst.set_integers(&[inst.fmu.vr("damping")], &[case]), status::OK);
        assert_eq!(inst.exit_init(), status::OK, "{}", inst.last_log());
    }
    let n = (t_end / h).round() as u64;
    let mut err = RunError { x1: 0.0, x2: 0.0 };
    let (mut prev1, mut prev2): (Option<Vec<f64>>, Option<Vec<f64>>) = (None, None);
    for i in 0..n {
        let t = i as f64 * h;
        let y1 = a.get(&["x", "v"]);
        let y2 = b.get(&["x", "v"]);
        let z = analytic(case, t);
        err.x1 = err.x1.max((y1[0] - z[0]).abs());
        err.x2 = err.x2.max((y2[0] - z[1]).abs());
        set_input(&a, &["xi", "xi_dot"], &y2, prev2.as_deref(), h, order);
        set_input(&b, &["eta", "eta_dot"], &y1, prev1.as_deref(), h, order);
        assert_eq!(a.do_step(t, h), status::OK, "{}", a.last_log());
        assert_eq!(b.do_step(t, h), status::OK, "{}", b.last_log());
        prev1 = Some(y1);
        prev2 = Some(y2);
    }
    let z = analytic(case, n as f64 * h);
    err.x1 = err.x1.max((a.get(&["x"])[0] - z[0]).abs());
    err.x2 = err.x2.max((b.get(&["x"])[0] - z[1]).abs());
    Ok(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expm_of_rotation_is_cos_sin() {
        // Undamped single oscillator ω = 2: e^{[[0,1],[-4,0]] t}.
        let t = 1.3;
        let m: M4 = [[0.0, t, 0.0, 0.0], [-4.0 * t, 0.0, 0.0, 0.0], [0.0; 4], [0.0; 4]];
        let e = expm(&m);
        assert!((e[0][0] - (2.0 * t).cos()).abs() < 1e-13);
        assert!((e[0][1] - (2.0 * t).sin() / 2.0).abs() < 1e-13);
        assert!((e[2][2] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn analytic_solution_conserves_energy_when_undamped() {
        let energy = |z: [f64; 4]| {
            0.5 * (z[2] * z[2] + z[3] * z[3])
                + 0.5 * (10.0 * z[0] * z[0] + 1000.0 * z[1] * z[1] + 100.0 * (z[0] - z[1]).powi(2))
        };
        let e0 = energy(analytic(1, 0.0));
        assert!((e0 - 10_000.0).abs() < 1e-9);
        for t in [0.37, 2.5, 10.0] {
            assert!((energy(analytic(1, t)) - e0).abs() < 1e-8 * e0, "t = {t}");
        }
        // Case 3 dissipates.
        assert!(energy(analytic(3, 1.0)) < 0.5 * e0);
    }
}
