//! Cost of one communication step of each mechanism FMU model with each solver
//! (`cargo bench -p fmu-multibody`): one internal step per H = 1 ms, the input force changing
//! every step (a 1 Hz sine around the static force), so every step also pays the restart at the
//! input jump, as in a co-simulation. Measured per batch of 1000 steps (1 s simulated from the
//! initialized model); the Newton iterations per step are printed once per benchmark.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use fmu_export::{CoSimModel, Context, InputSignal};
use fmu_multibody::fmu::{MbFmu, Variant};
use fmu_multibody::variants::{Crane2F, CraneF, RodF};
use std::f64::consts::PI;
use std::hint::black_box;

const H: f64 = 1e-3;
const STEPS: usize = 1000;

/// Runs the batch; returns the model (its counters hold the Newton iterations).
fn run<V: Variant<M>, const M: usize>(mut m: MbFmu<V, M>, u: &impl Fn(f64) -> Vec<f64>) -> MbFmu<V, M> {
    let mut ctx = Context::default();
    for k in 0..STEPS {
        let t = k as f64 * H;
        for (i, x) in u(t).into_iter().enumerate() {
            m.inputs[i] = InputSignal::new(x);
        }
        if m.do_step(t, H, &mut ctx).is_err() {
            break;
        }
        for x in &mut m.inputs {
            x.end_step(H);
        }
    }
    m
}

fn bench<V: Variant<M>, const M: usize>(c: &mut Criterion, label: &str, u: impl Fn(f64) -> Vec<f64>) {
    let mut group = c.benchmark_group(label);
    group.throughput(Throughput::Elements(STEPS as u64));
    for (solver, name) in [(1, "I3AL-P"), (2, "I1AL")] {
        let mut m0 = MbFmu::<V, M>::default();
        m0.solver = solver;
        if let Err(e) = m0.initialize(0.0, &mut Context::default()) {
            eprintln!("{label}/{name}: initialization failed: {e}");
            continue;
        }
        let done = run(m0.clone(), &u);
        println!(
            "{label}/{name}: {:.2} Newton iterations per step over {} steps",
            f64::from(done.counters.iterations_total) / f64::from(done.counters.steps_total.max(1)),
            done.counters.steps_total
        );
        group.bench_function(name, |b| b.iter_batched(|| m0.clone(), |m| black_box(run(m, &u)), BatchSize::SmallInput));
    }
    group.finish();
}

fn mechanisms(c: &mut Criterion) {
    bench::<RodF, 4>(c, "rod", |t| vec![6867.0 * (1.0 + 0.05 * (2.0 * PI * t).sin())]);
    bench::<CraneF, 3>(c, "crane", |t| vec![8829.0 + 1500.0 * (2.0 * PI * t).sin()]);
    bench::<Crane2F, 3>(c, "crane2", |t| vec![8829.0 + 1500.0 * (2.0 * PI * t).sin(), 100.0 * (2.0 * PI * t).sin()]);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = mechanisms
}
criterion_main!(benches);
