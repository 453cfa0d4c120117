//! The master's hot paths (`cargo bench -p master --bench hot`): extrapolation polynomials and one
//! whole macro step (transfer, extrapolation, input derivatives, bond residual) over no-op
//! in-process instances, so only the master's own work is measured.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use master::extrapolation::{lagrange, History};
use master::system::{PortDraft, SystemBuilder};
use master::Execution;
use master::{Call, FmuInstance, Result};
use model_description::{Causality, ModelDescription, ScalarVariable};

/// An instance that does nothing: y = stored value, inputs stored.
struct NoOp {
    y: f64,
    u: f64,
}

impl FmuInstance for NoOp {
    fn name(&self) -> &str {
        "noop"
    }
    #[inline]
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match call {
            Call::GetFloat64 { out, .. } => out.iter_mut().for_each(|o| *o = self.y),
            Call::SetFloat64 { values, .. } => self.u = values.first().copied().unwrap_or(0.0),
            Call::DoStep { h, .. } => self.y += h * self.u,
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        true
    }
}

fn description() -> ModelDescription {
    let real = ScalarVariable::real;
    let mut md = ModelDescription {
        fmi_version: "2.0".into(),
        model_name: "noop".into(),
        model_variables: vec![real("y", 0, Causality::Output), real("u", 1, Causality::Input)],
        ..Default::default()
    };
    md.model_structure.outputs.push(model_description::Unknown::new(1, vec![]));
    md
}

fn step(c: &mut Criterion) {
    let mut b = SystemBuilder::new();
    b.stop(1e6).step(1e-3).extrapolation(2);
    b.instance("a", "a.fmu");
    b.instance("b", "b.fmu");
    b.connect("b.y", "a.u");
    b.connect("a.y", "b.u");
    b.bond("link", PortDraft::new("a", "y", "u"), PortDraft::new("b", "u", "y").sign(-1.0));
    b.outputs(["a.y"]);
    let md = description();
    let mds = [&md, &md];
    let Ok(sys) = b.build(&mds) else { return };
    let instances: Vec<Box<dyn FmuInstance>> =
        vec![Box::new(NoOp { y: 1.0, u: 0.0 }), Box::new(NoOp { y: 0.0, u: 0.0 })];
    let Ok(mut run) = Execution::with_instances(sys, instances, &mds) else { return };
    run.set_timing(false);
    if run.initialize().is_err() {
        return;
    }
    c.bench_function("master step (2 no-op instances, 2 connections, order 2, 1 bond)", |b| {
        b.iter(|| {
            let _ = black_box(run.step());
        })
    });
}

fn extrapolation(c: &mut Criterion) {
    let mut h = History::default();
    for i in 0..5 {
        h.push(i as f64 * 1e-3, (i as f64 * 1e-3).sin());
    }
    for m in [0, 1, 2, 4] {
        c.bench_function(&format!("extrapolate order {m}"), |b| {
            b.iter(|| black_box(h.extrapolate(black_box(m), 1e-3)))
        });
    }
    let pts = [(0.0, 1.0), (-1e-3, 0.9), (-2.5e-3, 0.7)];
    c.bench_function("lagrange 3 points, uneven", |b| b.iter(|| black_box(lagrange(black_box(&pts), 1e-3))));
}

criterion_group!(benches, step, extrapolation);
criterion_main!(benches);
