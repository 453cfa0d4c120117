//! Publication II Table 3's CPU-time columns: wall time of a whole 7 s Model A′ run, monolithic
//! penalty formulation with the numerical tangent (as the paper), LF and SP (Pub II γ±) over Δt
//! (`cargo bench -p fmu-semirecursive --bench pub2`). The ratio SP(8 ms)/LF(2 ms) is Table 3's
//! last column (paper 0.18); SP/LF at the same Δt its second-to-last (0.83, 0.71, 0.66).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use fmu_semirecursive::circuit::P3Model;
use fmu_semirecursive::penalty::Tangent;
use fmu_semirecursive::pub2::{model_a_prime, Trace, GAMMA};
use std::time::Duration;

fn pub2(c: &mut Criterion) {
    let (Ok(lf), Ok(sp)) = (model_a_prime(P3Model::Lf), model_a_prime(P3Model::Sp(GAMMA))) else {
        return;
    };
    let mut g = c.benchmark_group("pub2");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for (name, model, dts) in [("lf", &lf, &[0.5, 1.0, 2.0][..]), ("sp", &sp, &[0.5, 1.0, 2.0, 3.0, 5.0, 8.0][..])] {
        for &dt in dts {
            g.bench_function(format!("{name}_{dt}ms"), |b| {
                b.iter(|| {
                    let t = Trace::simulate(model, Tangent::Numerical, black_box(dt * 1e-3), model.duration);
                    assert!(t.converged(), "{name} at {dt} ms: {:?}", t.failure);
                    t.points.len()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, pub2);
criterion_main!(benches);
