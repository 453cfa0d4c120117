#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Pub I's comparison of the semi-recursive formulation with the global one ("Gl"): Model A in
//! natural coordinates with the same circuit, integrated by the existing I3AL-P monolithic
//! solver, gives the same joint angles and pressures at Δt = 1 ms.

use fmu_semirecursive::gl::Gl;
use fmu_semirecursive::models::model_a;
use fmu_semirecursive::penalty::Tangent;
use fmu_semirecursive::run::{Formulation, Run};

#[test]
fn semi_recursive_and_global_formulations_agree_at_1ms() {
    let m = model_a().unwrap();
    let sr = Run::simulate(&m, Formulation::Penalty(Tangent::Analytic), 1e-3, m.duration).unwrap();
    let gl = Gl::simulate(&m, 1e-3, m.duration).unwrap();
    let (mut dz, mut dp) = (0.0f64, 0.0f64);
    for (a, b) in sr.samples.iter().zip(&gl) {
        assert!((a.t - b.t).abs() < 1e-9);
        for k in 0..3 {
            dz = dz.max((a.z[k] - b.z[k]).abs());
            dp = dp.max((a.p[k] - b.p[k]).abs() / b.p[k].abs());
        }
    }
    let avg = gl[1..].iter().map(|s| f64::from(s.iterations)).sum::<f64>() / (gl.len() - 1) as f64;
    println!("SR vs Gl at 1 ms: max |Δz| = {dz:e} rad, max |Δp|/p = {dp:e}; Gl iterations avg {avg:.2}");
    assert!(dz <= 1e-6, "{dz}");
    assert!(dp <= 1e-4, "{dp}");
}
