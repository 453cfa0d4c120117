//! Cost of the semi-recursive formulations on Model A (`cargo bench -p fmu-semirecursive`):
//! one monolithic penalty step at Δt = 1 ms (analytic and numerical tangent) from the state at
//! t = 1 s (the load rising, valve open), the whole 7 s work cycle of Pub I at Δt = 1 ms (7000
//! steps, integration only), and the same for the natural-coordinate global formulation ("Gl",
//! Pub I Table 3's comparison).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use fmu_semirecursive::gl::Gl;
use fmu_semirecursive::models::model_a;
use fmu_semirecursive::penalty::{Penalty, Settings, Tangent};
use fmu_semirecursive::run::{Formulation, Integrator};
use fmu_semirecursive::state::State;
use std::hint::black_box;

const DT: f64 = 1e-3;

fn benches(c: &mut Criterion) {
    let Ok(m) = model_a() else { return };
    let mut g = c.benchmark_group("model_a_step_1ms");
    for (tangent, name) in [(Tangent::Analytic, "SR penalty analytic"), (Tangent::Numerical, "SR penalty numerical")] {
        let p = Penalty::new(&m, Settings::paper(&m, DT, tangent));
        let mut st = State::initial(&m);
        for _ in 0..1000 {
            if p.step(&mut st).is_err() {
                return;
            }
        }
        g.bench_function(name, |b| {
            b.iter_batched_ref(|| st.clone(), |s| black_box(p.step(s).is_ok()), BatchSize::SmallInput)
        });
    }
    if let Ok(mut gl) = Gl::new(&m) {
        for _ in 0..1000 {
            if gl.step(DT).is_err() {
                return;
            }
        }
        g.bench_function("Gl I3AL-P", |b| {
            b.iter_batched_ref(|| gl.clone(), |s| black_box(s.step(DT).is_ok()), BatchSize::SmallInput)
        });
    }
    g.finish();
    // The integration alone (no recording), as a real-time simulator runs it.
    let steps = (m.duration / DT).round() as usize;
    let mut g = c.benchmark_group("model_a_cycle_7s_1ms");
    g.sample_size(10);
    for (f, name) in [
        (Formulation::Penalty(Tangent::Analytic), "SR penalty analytic"),
        (Formulation::Penalty(Tangent::Numerical), "SR penalty numerical"),
        (Formulation::DoubleStep, "SR double-step"),
    ] {
        let integ = Integrator::new(&m, f, DT);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut st = State::initial(&m);
                black_box((0..steps).all(|_| integ.step(&mut st).is_ok()))
            })
        });
    }
    g.bench_function("Gl I3AL-P", |b| {
        b.iter(|| {
            let Ok(mut gl) = Gl::new(&m) else { return false };
            black_box((0..steps).all(|_| gl.step(DT).is_ok()))
        })
    });
    g.finish();
}

criterion_group!(step, benches);
criterion_main!(step);
