#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The algorithms on the double oscillator of seed 001 §A.1 with in-process instances:
//! convergence orders against e^{At} z0, Gauss-Seidel, displacement coupling, residual energy,
//! multirate, parallel Jacobi.

mod common;

use common::*;
use fmu_harness::oscillator::analytic;
use master::algorithm::Engine;
use master::system::{Draft, Overrides};
use master::Slave;
use std::path::Path;

struct Run {
    err: f64,
    e_abs: f64,
    steps: u64,
    x: Vec<Vec<f64>>,
}

fn system_text(coupling: &str, h: f64, algorithm: &str, m: usize, stop: f64, extra: &str) -> String {
    let links = if coupling == "fd" {
        r#"
[[connections]]
from = "m2.x"
to = "m1.xi"
[[connections]]
from = "m2.v"
to = "m1.xi_dot"
[[connections]]
from = "m1.F"
to = "m2.F"
[[bonds]]
name = "spring"
ports = [ { instance = "m1", effort = "F", flow = "xi_dot", sign = -1.0 }, { instance = "m2", effort = "F", flow = "v" } ]
"#
    } else {
        r#"
[[connections]]
from = "m2.x"
to = "m1.xi"
[[connections]]
from = "m2.v"
to = "m1.xi_dot"
[[connections]]
from = "m1.x"
to = "m2.eta"
[[connections]]
from = "m1.v"
to = "m2.eta_dot"
"#
    };
    format!(
        r#"
[simulation]
stop = {stop}
step = {h}
algorithm = "{algorithm}"
extrapolation = {m}
{extra}
[instances.m1]
fmu = "m1.fmu"
start = {{ damping = "case1" }}
[instances.m2]
fmu = "m2.fmu"
start = {{ damping = "case1" }}
{links}
[outputs]
variables = ["m1.x", "m2.x"]
"#
    )
}

fn run(coupling: &str, h: f64, algorithm: &str, m: usize, stop: f64, extra: &str, interpolate: bool) -> Run {
    let text = system_text(coupling, h, algorithm, m, stop, extra);
    let draft = Draft::parse(Path::new("test.toml"), &text).unwrap();
    let (mut slaves, mds): (Vec<Box<dyn Slave>>, Vec<&model_description::ModelDescription>) = if coupling == "fd" {
        let mut a = InProcess::new(&FD1, "m1");
        let mut b = InProcess::new(&FD2, "m2");
        a.interpolates = interpolate;
        b.interpolates = interpolate;
        (vec![Box::new(a), Box::new(b)], vec![md(&FD1), md(&FD2)])
    } else {
        let mut a = InProcess::new(&DD1, "m1");
        let mut b = InProcess::new(&DD2, "m2");
        a.interpolates = interpolate;
        b.interpolates = interpolate;
        (vec![Box::new(a), Box::new(b)], vec![md(&DD1), md(&DD2)])
    };
    let sys = draft.resolve(&mds, &Overrides::default()).unwrap();
    let mut engine: Engine = master::run::initialize(&sys, &mut slaves, &mds).unwrap();
    let mut values = Vec::new();
    let mut err: f64 = 0.0;
    let mut x = Vec::new();
    for n in 0..sys.steps() {
        engine.step(n, &mut slaves).unwrap();
        engine.recorded(&mut slaves, &mut values).unwrap();
        let z = analytic(1, (n + 1) as f64 * h);
        err = err.max((values[0] - z[0]).abs()).max((values[1] - z[1]).abs());
        x.push(values.clone());
    }
    let e_abs = engine.bonds().first().map_or(0.0, |b| b.e_abs);
    Run { err, e_abs, steps: sys.steps(), x }
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
    for algorithm in ["jacobi", "gauss-seidel"] {
        let mut report = Vec::new();
        for (m, min_order, max_order) in [(0, 0.8, 1.5), (1, 1.7, 2.5), (2, 2.5, 4.5)] {
            let es: Vec<f64> = HS.iter().map(|h| run("fd", *h, algorithm, m, 10.0, "", true).err).collect();
            let p = slope(&HS, &es);
            report.push(format!("order {m}: errors {es:?}, slope {p:.2}"));
            assert!((min_order..=max_order).contains(&p), "{algorithm}: {}", report.join("; "));
            if m == 1 {
                assert!(es[2] <= 0.05, "{algorithm}: order 1 at H = 1 ms: max error {} m > 0.05 m", es[2]);
            }
        }
        eprintln!("{algorithm}: {}", report.join("; "));
    }
}

#[test]
fn displacement_coupling_beats_force_coupling() {
    for m in [0, 1] {
        let fd = run("fd", 2e-3, "jacobi", m, 10.0, "", true).err;
        let dd = run("dd", 2e-3, "jacobi", m, 10.0, "", true).err;
        assert!(dd < fd, "order {m}: dd {dd} !< fd {fd}");
    }
}

#[test]
fn residual_energy_scales_with_the_extrapolation_order() {
    // Over a fixed horizon (1 s) the accumulated Σ|δE| scales as O(H^{m+1}); a single step's
    // |δE| = |δP|·H as O(H^{m+2}) (δP is the O(H^{m+1}) extrapolation error times a flow).
    for (m, expected) in [(0usize, 1.0), (1, 2.0), (2, 3.0)] {
        let runs: Vec<Run> = HS.iter().map(|h| run("fd", *h, "jacobi", m, 1.0, "", true)).collect();
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
    let extra = "";
    let text_order = |m| {
        let mut r = run_multirate(m, extra);
        r.err = r.err.max(0.0);
        r.err
    };
    let zoh = text_order(0);
    let quad = text_order(2);
    assert!(quad < 0.5 * zoh, "order 2: {quad} vs ZOH {zoh}");
}

fn run_multirate(m: usize, _extra: &str) -> Run {
    let h = 4e-3;
    let text = system_text("fd", h, "jacobi", m, 5.0, "")
        .replace("[instances.m2]\nfmu = \"m2.fmu\"", &format!("[instances.m2]\nfmu = \"m2.fmu\"\nstep = {}", h / 10.0));
    let draft = Draft::parse(Path::new("test.toml"), &text).unwrap();
    let mut a = InProcess::new(&FD1, "m1");
    let mut b = InProcess::new(&FD2, "m2");
    a.interpolates = false;
    b.interpolates = false;
    let mut slaves: Vec<Box<dyn Slave>> = vec![Box::new(a), Box::new(b)];
    let mds = vec![md(&FD1), md(&FD2)];
    let sys = draft.resolve(&mds, &Overrides::default()).unwrap();
    assert_eq!(sys.instances[1].substeps, 10);
    let mut engine = master::run::initialize(&sys, &mut slaves, &mds).unwrap();
    let mut values = Vec::new();
    let mut err: f64 = 0.0;
    for n in 0..sys.steps() {
        engine.step(n, &mut slaves).unwrap();
        engine.recorded(&mut slaves, &mut values).unwrap();
        let z = analytic(1, (n + 1) as f64 * h);
        err = err.max((values[0] - z[0]).abs()).max((values[1] - z[1]).abs());
    }
    Run { err, e_abs: 0.0, steps: sys.steps(), x: Vec::new() }
}

#[test]
fn parallel_jacobi_gives_identical_results() {
    let seq = run("fd", 1e-3, "jacobi", 2, 2.0, "parallel = \"off\"", true);
    let par = run("fd", 1e-3, "jacobi", 2, 2.0, "parallel = \"on\"", true);
    assert_eq!(seq.x, par.x);
}

#[test]
fn i2_extrapolation_from_derivative_outputs_beats_zero_order_hold() {
    // m1's position input follows ξ(t_n) + ξ̇(t_n) τ built from m2's velocity output.
    let text = system_text("fd", 2e-3, "jacobi", 0, 2.0, "").replace(
        "[[connections]]\nfrom = \"m2.x\"\nto = \"m1.xi\"\n",
        "[[connections]]\nfrom = \"m2.x\"\nto = \"m1.xi\"\nextrapolation = \"I2\"\nderivatives = [\"m2.v\"]\n",
    );
    let draft = Draft::parse(Path::new("test.toml"), &text).unwrap();
    let mds = vec![md(&FD1), md(&FD2)];
    let sys = draft.resolve(&mds, &Overrides::default()).unwrap();
    assert!(
        matches!(&sys.connections[0].extrapolation, master::system::Extrapolation::I2 { derivatives } if derivatives[0].name == "v")
    );
    let mut slaves: Vec<Box<dyn Slave>> =
        vec![Box::new(InProcess::new(&FD1, "m1")), Box::new(InProcess::new(&FD2, "m2"))];
    let mut engine = master::run::initialize(&sys, &mut slaves, &mds).unwrap();
    let mut values = Vec::new();
    let mut err: f64 = 0.0;
    for n in 0..sys.steps() {
        engine.step(n, &mut slaves).unwrap();
        engine.recorded(&mut slaves, &mut values).unwrap();
        let z = analytic(1, (n + 1) as f64 * 2e-3);
        err = err.max((values[0] - z[0]).abs()).max((values[1] - z[1]).abs());
    }
    let zoh = run("fd", 2e-3, "jacobi", 0, 2.0, "", true).err;
    assert!(err < zoh, "I2 {err} vs ZOH {zoh}");
}
