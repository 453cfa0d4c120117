#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The semi-recursive engine against an independent computation: M(z) = R_dᵀTᵀM̄TR_d equals
//! Σ m J_gᵀJ_g + J J_θᵀJ_θ with the CoM and angle Jacobians taken by central differences of the
//! positions; the velocity terms of Q match the Lagrange form d/dt(M ż) − ½ ∂(żᵀMż)/∂z.

use fmu_semirecursive::mechanism::Point;
use fmu_semirecursive::models::{model_a, model_d, model_e};

#[test]
fn mass_matrix_and_velocity_terms_match_finite_differences() {
    for m in [model_a().unwrap(), model_d().unwrap(), model_e().unwrap()] {
        let mech = &m.mechanism;
        let n = mech.n();
        let z: Vec<f64> = m.z0.iter().enumerate().map(|(j, v)| v + 0.1 * (j as f64 + 1.0)).collect();
        let zd: Vec<f64> = (0..n).map(|j| 0.3 - 0.2 * j as f64).collect();
        let h = 1e-6;
        let com = |z: &[f64], k: usize| {
            let pose = mech.pose(z);
            (mech.point(&pose, &Point { body: Some(k), local: mech.bodies[k].com }), pose.theta[k])
        };
        let mut mm = vec![vec![0.0; n]; n];
        for (k, b) in mech.bodies.iter().enumerate() {
            let jac: Vec<([f64; 2], f64)> = (0..n)
                .map(|j| {
                    let (mut zp, mut zm) = (z.clone(), z.clone());
                    zp[j] += h;
                    zm[j] -= h;
                    let ((gp, tp), (gm, tm)) = (com(&zp, k), com(&zm, k));
                    ([(gp[0] - gm[0]) / (2.0 * h), (gp[1] - gm[1]) / (2.0 * h)], (tp - tm) / (2.0 * h))
                })
                .collect();
            for i in 0..n {
                for j in 0..n {
                    mm[i][j] += b.mass * (jac[i].0[0] * jac[j].0[0] + jac[i].0[1] * jac[j].0[1])
                        + b.inertia * jac[i].1 * jac[j].1;
                }
            }
        }
        let m_sr = mech.mass_matrix(&z);
        for i in 0..n {
            for j in 0..n {
                assert!(
                    (m_sr[(i, j)] - mm[i][j]).abs() < 1e-6 * (1.0 + mm[i][j].abs()),
                    "model {}: M[{i},{j}]",
                    m.name
                );
            }
        }
        // Velocity terms: r(z, ż, 0) − r(z, 0, 0) = Ṁ ż − ½ ∂(żᵀMż)/∂z (Lagrange).
        let zero = vec![0.0; n];
        let (rv, r0) = (mech.eval(&z, &zd, &zero).r, mech.eval(&z, &zero, &zero).r);
        let ke = |z: &[f64]| mech.kinetic_energy(z, &zd);
        for i in 0..n {
            let mdot_zd: f64 = (0..n)
                .map(|j| {
                    let (zp, zm): (Vec<f64>, Vec<f64>) = z.iter().zip(&zd).map(|(a, v)| (a + h * v, a - h * v)).unzip();
                    (mech.mass_matrix(&zp)[(i, j)] - mech.mass_matrix(&zm)[(i, j)]) / (2.0 * h) * zd[j]
                })
                .sum();
            let (mut zp, mut zm) = (z.clone(), z.clone());
            zp[i] += h;
            zm[i] -= h;
            let dke = (ke(&zp) - ke(&zm)) / (2.0 * h);
            let lagrange = mdot_zd - dke;
            assert!(
                (rv[i] - r0[i] - lagrange).abs() < 1e-5 * (1.0 + lagrange.abs()),
                "model {}: row {i}: {} vs {lagrange}",
                m.name,
                rv[i] - r0[i]
            );
        }
    }
}
