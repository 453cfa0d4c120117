//! The master's hot paths (`cargo bench -p master --bench hot`): extrapolation polynomials and one
//! whole macro step (transfer, extrapolation, input derivatives, bond residual) over no-op
//! in-process instances, so only the master's own work is measured.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use master::extrapolation::{lagrange, History};
use master::system::{Draft, Overrides};
use master::{Call, Result, Slave};
use model_description::{Causality, ModelDescription, ScalarVariable, Variability, VariableKind};
use std::path::Path;

/// An instance that does nothing: y = stored value, inputs stored.
struct NoOp {
    y: f64,
    u: f64,
}

impl Slave for NoOp {
    fn name(&self) -> &str {
        "noop"
    }
    #[inline]
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        match call {
            Call::GetReal { out, .. } => out.iter_mut().for_each(|o| *o = self.y),
            Call::SetReal { values, .. } => self.u = values.first().copied().unwrap_or(0.0),
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
    let real = |name: &str, vr, causality| ScalarVariable {
        name: name.into(),
        value_reference: vr,
        description: None,
        causality,
        variability: Variability::Continuous,
        initial: None,
        can_handle_multiple_set_per_time_instant: None,
        kind: VariableKind::Real {
            declared_type: None,
            attrs: Default::default(),
            start: (causality == Causality::Input).then_some(0.0),
            derivative: None,
            reinit: None,
        },
        annotations: Vec::new(),
        line: 0,
    };
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
    let text = r#"
[simulation]
stop = 1000.0
step = 1e-3
extrapolation = 2
[instances.a]
fmu = "a.fmu"
[instances.b]
fmu = "b.fmu"
[[connections]]
from = "b.y"
to = "a.u"
[[connections]]
from = "a.y"
to = "b.u"
[[bonds]]
name = "link"
ports = [ { instance = "a", effort = "y", flow = "u" }, { instance = "b", effort = "u", flow = "y", sign = -1.0 } ]
"#;
    let md = description();
    let mds = [&md, &md];
    let sys = Draft::parse(Path::new("bench.toml"), text).and_then(|d| d.resolve(&mds, &Overrides::default()));
    let Ok(sys) = sys else { return };
    let mut slaves: Vec<Box<dyn Slave>> = vec![Box::new(NoOp { y: 1.0, u: 0.0 }), Box::new(NoOp { y: 0.0, u: 0.0 })];
    let Ok(mut engine) = master::run::initialize(&sys, &mut slaves, &mds) else { return };
    engine.set_timing(false);
    let mut n = 0u64;
    c.bench_function("master step (2 no-op instances, 2 connections, order 2, 1 bond)", |b| {
        b.iter(|| {
            let _ = engine.step(black_box(n % 900_000), &mut slaves);
            n += 1;
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
