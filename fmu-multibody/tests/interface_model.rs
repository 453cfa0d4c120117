#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::needless_range_loop)] // test code: matrix indices
//! The interface model outputs (m_eff, f_eff; Publication IV) of the crane FMUs against a
//! finite-difference reconstruction from the FMUs' own response: at a state, apply the cylinder
//! forces F and F ± δ, read s̈ from the equations of motion the FMU restarts with
//! (`solver::consistent_accelerations`, the exact constrained accelerations) and, at rest, from
//! the `s_ddot` output after a short communication step. m_eff s̈ = F + f_eff must hold for both
//! within 1 %. At rest −f_eff is the static force F_static = 8829 N.

mod common;

use common::{init, run_held};
use fmu_export::{CoSimModel, Context, InputSignal};
use fmu_multibody::fmu::{MbFmu, Variant};
use fmu_multibody::mechanism::{GivenForces, Mechanism};
use fmu_multibody::solver::consistent_accelerations;
use fmu_multibody::{Crane2Fmu, CraneFmu};

/// s̈ of every cylinder under cylinder forces `f` at the FMU's state.
fn s_ddot<V: Variant<M>, const M: usize>(m: &MbFmu<V, M>, f: [f64; 2]) -> [f64; 2] {
    let mut st = m.state.clone();
    consistent_accelerations(&m.mech, &GivenForces(|k, _| f[k]), &mut st, 0.0, 0.0, 0.0).unwrap();
    let mut out = [0.0; 2];
    for (k, o) in out.iter_mut().enumerate().take(m.mech.actuator_count()) {
        *o = m.mech.actuator(k).kinematics(&st.q, &st.qd, &st.qdd).s_ddot;
    }
    out
}

/// m_eff and f_eff reconstructed by central differences in each cylinder force.
fn reconstruct<V: Variant<M>, const M: usize>(m: &MbFmu<V, M>, f: [f64; 2], n: usize) -> ([[f64; 2]; 2], [f64; 2]) {
    let delta = 50.0;
    // Columns of W = ∂s̈/∂F.
    let mut w = [[0.0; 2]; 2];
    for k in 0..n {
        let (mut hi, mut lo) = (f, f);
        hi[k] += delta;
        lo[k] -= delta;
        let (a, b) = (s_ddot(m, hi), s_ddot(m, lo));
        for i in 0..n {
            w[i][k] = (a[i] - b[i]) / (2.0 * delta);
        }
    }
    let m_eff = if n == 1 {
        [[1.0 / w[0][0], 0.0], [0.0, 0.0]]
    } else {
        let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
        [[w[1][1] / det, -w[0][1] / det], [-w[1][0] / det, w[0][0] / det]]
    };
    let a = s_ddot(m, f);
    let mut f_eff = [0.0; 2];
    for i in 0..n {
        f_eff[i] = (0..n).map(|k| m_eff[i][k] * a[k]).sum::<f64>() - f[i];
    }
    (m_eff, f_eff)
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 0.01 * scale
}

fn check<V: Variant<M>, const M: usize>(m: &MbFmu<V, M>, f: [f64; 2], n: usize, label: &str) {
    let im = m.interface_model();
    let (m_fd, f_fd) = reconstruct(m, f, n);
    let mass_scale = (0..n).map(|i| m_fd[i][i].abs()).fold(0.0, f64::max);
    let force_scale = (0..n).map(|i| f_fd[i].abs()).fold(1.0, f64::max);
    for i in 0..n {
        for k in 0..n {
            assert!(
                close(im.m_eff[i][k], m_fd[i][k], mass_scale),
                "{label}: m_eff[{i}][{k}] = {} vs FD {}",
                im.m_eff[i][k],
                m_fd[i][k]
            );
        }
        assert!(close(im.f_eff[i], f_fd[i], force_scale), "{label}: f_eff[{i}] = {} vs FD {}", im.f_eff[i], f_fd[i]);
    }
    eprintln!("{label}: m_eff = {:?} (FD {m_fd:?}), f_eff = {:?} (FD {f_fd:?})", im.m_eff, im.f_eff);
}

#[test]
fn crane_interface_model_matches_finite_differences_at_three_configurations() {
    // At rest: −f_eff is the static force.
    let m: CraneFmu = init(|_| {});
    let im = m.interface_model();
    assert!((-im.f_eff[0] - 8829.0).abs() <= 1e-6 * 8829.0, "F_static from the IM: {}", -im.f_eff[0]);
    assert!((m.f_static[0] - 8829.0).abs() <= 1e-6 * 8829.0);
    check(&m, [8829.0, 0.0], 1, "crane at rest");
    // Two moving configurations: 0.3 s under 9500 N (extending) and 8000 N (retracting).
    for f in [9500.0, 8000.0] {
        let mut m: CraneFmu = init(|_| {});
        run_held(&mut m, 1e-3, 300, |_| vec![f], |_, _| {});
        assert!(m.kinematics(0).s_dot.abs() > 1e-3, "the crane moves");
        check(&m, [f, 0.0], 1, &format!("crane after 0.3 s at {f} N"));
    }
}

#[test]
fn crane_interface_model_matches_the_s_ddot_output_after_a_force_step() {
    // The FMU's own output: a 1 µs step after a force step of ±200 N at rest (the restart
    // re-evaluates the accelerations with the new input).
    let response = |f: f64| {
        let mut m: CraneFmu = init(|m: &mut CraneFmu| m.solver = 2);
        m.inputs[0] = InputSignal::new(f);
        m.do_step(0.0, 1e-6, &mut Context::default()).unwrap();
        m.kinematics(0).s_ddot
    };
    let m: CraneFmu = init(|_| {});
    let im = m.interface_model();
    let m_fd = 400.0 / (response(8829.0 + 200.0) - response(8829.0 - 200.0));
    assert!(close(im.m_eff[0][0], m_fd, m_fd), "m_eff = {} vs s_ddot output {m_fd}", im.m_eff[0][0]);
    let f_fd = m_fd * response(8829.0 + 200.0) - (8829.0 + 200.0);
    assert!(close(im.f_eff[0], f_fd, 8829.0), "f_eff = {} vs s_ddot output {f_fd}", im.f_eff[0]);
}

#[test]
fn crane2_effective_mass_matrix_matches_finite_differences() {
    let m: Crane2Fmu = init(|_| {});
    let f = [m.f_static[0], m.f_static[1]];
    let im = m.interface_model();
    for k in 0..2 {
        assert!(
            (-im.f_eff[k] - f[k]).abs() <= 1e-6 * 8829.0,
            "cylinder {k}: −f_eff = {} vs F_static {}",
            -im.f_eff[k],
            f[k]
        );
    }
    check(&m, f, 2, "crane2 at rest");
    for (f1, f2) in [(9500.0, 50.0), (8000.0, -80.0)] {
        let mut m: Crane2Fmu = init(|_| {});
        run_held(&mut m, 1e-3, 300, |_| vec![f1, f2], |_, _| {});
        check(&m, [f1, f2], 2, &format!("crane2 after 0.3 s at ({f1}, {f2}) N"));
        // Away from the rest configuration the off-diagonal terms carry the coupling of the two
        // cylinders; the matrix is symmetric.
        let im = m.interface_model();
        assert!(im.m_eff[0][1].abs() > 1e-3 * im.m_eff[1][1].abs(), "{:?}", im.m_eff);
        assert!((im.m_eff[0][1] - im.m_eff[1][0]).abs() <= 1e-9 * im.m_eff[0][0].abs(), "symmetric: {:?}", im.m_eff);
    }
}
