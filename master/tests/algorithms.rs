#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The algorithms on the double oscillator of seed 001 §A.1 with in-process instances:
//! convergence orders against e^{At} z0, Gauss-Seidel, displacement coupling, residual energy,
//! multirate, parallel Jacobi.

mod common;

use common::*;
use fmu_harness::oscillator::analytic;
use master::system::{AlgorithmKind, Parallel, PortDraft, SystemBuilder};
use master::{Execution, FmuInstance};
use model_description::ModelDescription;

const JACOBI: AlgorithmKind = AlgorithmKind::Jacobi;

struct Run {
    err: f64,
    e_abs: f64,
    steps: u64,
    x: Vec<Vec<f64>>,
}

/// The double oscillator of seed 001 §A.1, force-displacement ("fd") or
/// displacement-displacement ("dd") coupled, built in code.
fn system(coupling: &str, h: f64, algorithm: AlgorithmKind, m: usize, stop: f64) -> SystemBuilder {
    let mut b = SystemBuilder::new();
    b.stop(stop).step(h).algorithm(algorithm).extrapolation(m);
    b.instance("m1", "m1.fmu").start("damping", "case1");
    b.instance("m2", "m2.fmu").start("damping", "case1");
    b.connect("m2.x", "m1.xi");
    b.connect("m2.v", "m1.xi_dot");
    if coupling == "fd" {
        b.connect("m1.F", "m2.F");
        b.bond("spring", PortDraft::new("m1", "F", "xi_dot").sign(-1.0), PortDraft::new("m2", "F", "v"));
    } else {
        b.connect("m1.x", "m2.eta");
        b.connect("m1.v", "m2.eta_dot");
    }
    b.outputs(["m1.x", "m2.x"]);
    b
}

/// In-process instances of the oscillator's two subsystems.
fn instances(coupling: &str, interpolate: bool) -> (Vec<Box<dyn FmuInstance>>, Vec<&'static ModelDescription>) {
    if coupling == "fd" {
        let mut a = InProcess::new(&FD1, "m1").unwrap();
        let mut b = InProcess::new(&FD2, "m2").unwrap();
        a.interpolates = interpolate;
        b.interpolates = interpolate;
        (vec![Box::new(a), Box::new(b)], vec![md(&FD1), md(&FD2)])
    } else {
        let mut a = InProcess::new(&DD1, "m1").unwrap();
        let mut b = InProcess::new(&DD2, "m2").unwrap();
        a.interpolates = interpolate;
        b.interpolates = interpolate;
        (vec![Box::new(a), Box::new(b)], vec![md(&DD1), md(&DD2)])
    }
}

/// Runs `b` on the instances; the largest error of x1, x2 against e^{At} z0 at every point.
fn execute(b: &SystemBuilder, coupling: &str, interpolate: bool) -> Run {
    let (instances, mds) = instances(coupling, interpolate);
    let sys = b.build(&mds).unwrap();
    let steps = sys.steps();
    let h = sys.step();
    let mut run = Execution::with_instances(sys, instances, &mds).unwrap();
    let mut err: f64 = 0.0;
    let mut x = Vec::new();
    for n in 0..steps {
        run.step().unwrap();
        let values = run.recorded().unwrap().to_vec();
        let z = analytic(1, (n + 1) as f64 * h);
        err = err.max((values[0] - z[0]).abs()).max((values[1] - z[1]).abs());
        x.push(values);
    }
    let e_abs = run.bonds().first().map_or(0.0, |b| b.e_abs);
    Run { err, e_abs, steps, x }
}

fn run(coupling: &str, h: f64, algorithm: AlgorithmKind, m: usize, stop: f64, interpolate: bool) -> Run {
    execute(&system(coupling, h, algorithm, m, stop), coupling, interpolate)
}

fn slope(hs: &[f64], es: &[f64]) -> f64 {
    // Least-squares slope of log e over log h.
    let n = hs.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = hs.iter().zip(es).map(|(h, e)| (h.ln(), e.ln())).unzip();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let num: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
    num / den
}

const HS: [f64; 3] = [4e-3, 2e-3, 1e-3];

#[test]
fn force_displacement_orders_jacobi_and_gauss_seidel() {
    for algorithm in [JACOBI, AlgorithmKind::GaussSeidel] {
        let mut report = Vec::new();
        for (m, min_order, max_order) in [(0, 0.8, 1.5), (1, 1.7, 2.5), (2, 2.5, 4.5)] {
            let es: Vec<f64> = HS.iter().map(|h| run("fd", *h, algorithm, m, 10.0, true).err).collect();
            let p = slope(&HS, &es);
            report.push(format!("order {m}: errors {es:?}, slope {p:.2}"));
            assert!((min_order..=max_order).contains(&p), "{algorithm:?}: {}", report.join("; "));
            if m == 1 {
                assert!(es[2] <= 0.05, "{algorithm:?}: order 1 at H = 1 ms: max error {} m > 0.05 m", es[2]);
            }
        }
        eprintln!("{algorithm:?}: {}", report.join("; "));
    }
}

#[test]
fn displacement_coupling_beats_force_coupling() {
    for m in [0, 1] {
        let fd = run("fd", 2e-3, JACOBI, m, 10.0, true).err;
        let dd = run("dd", 2e-3, JACOBI, m, 10.0, true).err;
        assert!(dd < fd, "order {m}: dd {dd} !< fd {fd}");
    }
}

#[test]
fn residual_energy_scales_with_the_extrapolation_order() {
    // Over a fixed horizon (1 s) the accumulated Σ|δE| scales as O(H^{m+1}); a single step's
    // |δE| = |δP|·H as O(H^{m+2}) (δP is the O(H^{m+1}) extrapolation error times a flow).
    for (m, expected) in [(0usize, 1.0), (1, 2.0), (2, 3.0)] {
        let runs: Vec<Run> = HS.iter().map(|h| run("fd", *h, JACOBI, m, 1.0, true)).collect();
        let total: Vec<f64> = runs.iter().map(|r| r.e_abs).collect();
        let per_step: Vec<f64> = runs.iter().map(|r| r.e_abs / r.steps as f64).collect();
        let (p_total, p_step) = (slope(&HS, &total), slope(&HS, &per_step));
        eprintln!("order {m}: sum|dE| {total:?} slope {p_total:.2}; per step slope {p_step:.2}");
        assert!((p_total - expected).abs() < 0.4, "order {m}: total slope {p_total}");
        assert!((p_step - (expected + 1.0)).abs() < 0.4, "order {m}: per-step slope {p_step}");
    }
}

#[test]
fn multirate_with_extrapolation_beats_zero_order_hold_substeps() {
    // m2 at h = H/10, inputs not interpolated by the FMU: the master sub-steps it.
    let multirate = |m| {
        let h = 4e-3;
        let mut b = system("fd", h, JACOBI, m, 5.0);
        b.instance_mut("m2").unwrap().step(h / 10.0);
        let (_, mds) = instances("fd", false);
        assert_eq!(b.build(&mds).unwrap().instances()[1].substeps, 10);
        execute(&b, "fd", false).err
    };
    let zoh = multirate(0);
    let quad = multirate(2);
    assert!(quad < 0.5 * zoh, "order 2: {quad} vs ZOH {zoh}");
}

#[test]
fn parallel_jacobi_gives_identical_results() {
    let with = |p| {
        let mut b = system("fd", 1e-3, JACOBI, 2, 2.0);
        b.parallel(p);
        execute(&b, "fd", true)
    };
    assert_eq!(with(Parallel::Off).x, with(Parallel::On).x);
}

#[test]
fn i2_extrapolation_from_derivative_outputs_beats_zero_order_hold() {
    // m1's position input follows ξ(t_n) + ξ̇(t_n) τ built from m2's velocity output.
    let mut b = system("fd", 2e-3, JACOBI, 0, 2.0);
    b.connections_mut()[0].i2(["m2.v"]);
    let (_, mds) = instances("fd", true);
    let sys = b.build(&mds).unwrap();
    assert!(
        matches!(&sys.connections()[0].extrapolation, master::system::Extrapolation::I2 { derivatives } if derivatives[0].name == "v")
    );
    let err = execute(&b, "fd", true).err;
    let zoh = run("fd", 2e-3, JACOBI, 0, 2.0, true).err;
    assert!(err < zoh, "I2 {err} vs ZOH {zoh}");
}
