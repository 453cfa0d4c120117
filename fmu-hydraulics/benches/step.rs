//! Cost of one internal step of each circuit with each integrator (`cargo bench -p fmu-hydraulics`).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use fmu_export::InputSignal;
use fmu_hydraulics::integrator::{step, Method, Newton};
use fmu_hydraulics::lumped3::{Lumped3, Lumped3Ode};
use fmu_hydraulics::naya::{Naya, NayaOde};
use nalgebra::SVector;

const METHODS: [Method; 3] = [Method::ForwardEuler, Method::Trapezoidal, Method::Rk4];

fn naya(c: &mut Criterion) {
    let circuit = Naya::default();
    let eq = circuit.equilibrium(6867.0).unwrap_or(fmu_hydraulics::naya::Equilibrium { p1: 3e6, p2: 4e6, kappa: 0.5 });
    let s = InputSignal { value: circuit.s0, derivatives: [0.01, 0.0, 0.0, 0.0] };
    let s_dot = InputSignal::new(0.01);
    let kappa = InputSignal::new(eq.kappa + 0.01);
    let ode = NayaOde { circuit: &circuit, s: &s, s_dot: &s_dot, kappa: &kappa };
    for m in METHODS {
        c.bench_function(&format!("naya/{}", m.name()), |b| {
            let mut x = SVector::<f64, 2>::new(eq.p1, eq.p2);
            b.iter(|| {
                let _ = step(&ode, m, &mut x, 0.0, black_box(1e-5), &Newton::default());
                x = SVector::<f64, 2>::new(eq.p1, eq.p2);
            })
        });
    }
}

fn lumped3(c: &mut Criterion) {
    let circuit = Lumped3::default();
    let s = InputSignal { value: circuit.s0, derivatives: [0.01, 0.0, 0.0, 0.0] };
    let s_dot = InputSignal::new(0.01);
    let u_ref = InputSignal::new(5.0);
    let ode = Lumped3Ode::new(&circuit, &s, &s_dot, &u_ref);
    let (p1, p3) = circuit.static_pressures(8829.0, 3.5e6);
    let x0 = SVector::<f64, 4>::new(p1, 3.5e6, p3, 2.0);
    for m in METHODS {
        c.bench_function(&format!("lumped3/{}", m.name()), |b| {
            let mut x = x0;
            b.iter(|| {
                let _ = step(&ode, m, &mut x, 0.0, black_box(1e-6), &Newton::default());
                x = x0;
            })
        });
    }
}

criterion_group!(benches, naya, lumped3);
criterion_main!(benches);
