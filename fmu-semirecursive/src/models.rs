//! The benchmark mechanisms as tables (DIGEST §1.2, §1.6, §1.7, with the [DERIVED] geometry
//! reconstructions) and their circuits and work cycles (SPEC §3.7).
//!
//! - Model A: Pub I four-bar (L = 1, 1, 2.5 m; m = 50, 50, 250 kg; z0 = −30°, 30°, 150°),
//!   cylinder from D = (0, −1) to the middle of body 1, Pub I eq. 55 cycle, 7 s.
//! - Model D: 002 four-bar (L = 9, √2, 2 m; m = 225, 35, 50 kg; z0 = 0°, −135°, −45°), cut joint
//!   at E = (0, −1), cylinder from G = (0, −2) to F (CoM of body 3), 002 eq. 46 cycle, 10 s.
//! - Model E: 002 quick-return (5 bodies, 2 prismatic cut joints), cylinder from Q = (−0.96, 3)
//!   to the crank midpoint N (SPEC §3.7), 002 eq. 47 cycle, 10 s.

use crate::circuit::{Circuit, Pressures, WorkCycle};
use crate::mechanism::{Body, CutJoint, Mechanism, Point};
use crate::partition::Partition;
use nalgebra::{DMatrix, DVector};

/// Gravity (m/s²).
pub const G: f64 = 9.81;

/// Which model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Pub I four-bar.
    A,
    /// 002 four-bar.
    D,
    /// 002 quick-return.
    E,
}

impl Which {
    /// From a number 0, 1, 2 (A, D, E), e.g. an FMU parameter.
    pub fn from_index(i: i32) -> Option<Self> {
        match i {
            0 => Some(Self::A),
            1 => Some(Self::D),
            2 => Some(Self::E),
            _ => None,
        }
    }
}

/// A model: mechanism, circuit, cycle, consistent initial state and the papers' solver settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Short name ("A", "D", "E").
    pub name: &'static str,
    /// Mechanism table.
    pub mechanism: Mechanism,
    /// Hydraulic circuit at this model's s0.
    pub circuit: Circuit,
    /// Reference voltage.
    pub cycle: WorkCycle,
    /// Consistent initial joint coordinates (rad).
    pub z0: Vec<f64>,
    /// Static actuator force F_s0 (N).
    pub f0: f64,
    /// Initial pressures (Pa).
    pub p0: Pressures,
    /// Simulated time (s).
    pub duration: f64,
    /// Position tolerance of the Newton iteration (rad): 1e-7 (Pub I, 002).
    pub tol_z: f64,
    /// Pressure tolerance (Pa): 1e2 (Pub I), 1e-2 (002).
    pub tol_p: f64,
}

fn beam(name: &'static str, parent: Option<usize>, joint: [f64; 2], m: f64, l: f64, j: f64) -> Body {
    Body { name, parent, joint, mass: m, inertia: j, com: [l / 2.0, 0.0] }
}

/// Newton on Φ(z) = 0 with coordinate `fixed` held at its value (assembly).
pub fn assemble(mech: &Mechanism, z: &[f64], fixed: usize) -> Result<Vec<f64>, String> {
    let n = mech.n();
    let mut z = z.to_vec();
    let free: Vec<usize> = (0..n).filter(|&j| j != fixed).collect();
    for _ in 0..50 {
        let (phi, phi_z) = mech.constraints(&mech.pose(&z));
        let norm = phi.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if norm < 1e-14 {
            return Ok(z);
        }
        let jz = DMatrix::from_row_slice(mech.m(), n, &phi_z).select_columns(&free);
        let dz = jz.lu().solve(&(-DVector::from_column_slice(&phi))).ok_or("assembly: singular constraint Jacobian")?;
        for (k, &j) in free.iter().enumerate() {
            z[j] += dz[k];
        }
    }
    Err("assembly did not converge".into())
}

/// Static actuator force: the reduced equilibrium R_zᵀ(Q_g + F J_sᵀ) = 0 (1 DOF) (N).
pub fn static_force(mech: &Mechanism, z: &[f64]) -> Result<f64, String> {
    let n = mech.n();
    let zero = vec![0.0; n];
    let e = mech.eval(z, &zero, &zero);
    let phi_z = DMatrix::from_row_slice(mech.m(), n, &e.phi_z);
    let rz = Partition::choose(&phi_z)?.r_z(&phi_z)?;
    // r = −Q_g at rest.
    let q = rz.transpose() * DVector::from_vec(e.r.iter().map(|v| -v).collect());
    let js = rz.transpose() * DVector::from_column_slice(&e.js);
    Ok(-q[0] / js[0])
}

#[allow(clippy::too_many_arguments)]
fn finish(
    name: &'static str,
    mechanism: Mechanism,
    z: Vec<f64>,
    fixed: usize,
    chambers: (f64, f64),
    cycle: Vec<(f64, f64)>,
    duration: f64,
    tol_p: f64,
) -> Result<Model, String> {
    let z0 = assemble(&mechanism, &z, fixed)?;
    let (s0, _) = mechanism.actuator(&mechanism.pose(&z0));
    let circuit = Circuit::pub1(s0, chambers.0, chambers.1);
    let f0 = static_force(&mechanism, &z0)?;
    let p0 = circuit.static_pressures(f0, 3.5e6);
    Ok(Model { name, mechanism, circuit, cycle: WorkCycle { table: cycle }, z0, f0, p0, duration, tol_z: 1e-7, tol_p })
}

/// Model A (Pub I §5). Inertias J = m(L² + 0.05²)/12 (SPEC §3.7).
pub fn model_a() -> Result<Model, String> {
    let j = |m: f64, l: f64| m * (l * l + 0.05 * 0.05) / 12.0;
    let bodies = vec![
        beam("body 1", None, [0.0, 0.0], 50.0, 1.0, j(50.0, 1.0)),
        beam("body 2", Some(0), [1.0, 0.0], 50.0, 1.0, j(50.0, 1.0)),
        // Body 3: joint 1 m from the cut end C, CoM 1.25 m from C on the far side.
        Body {
            name: "body 3",
            parent: Some(1),
            joint: [1.0, 0.0],
            mass: 250.0,
            inertia: j(250.0, 2.5),
            com: [-0.25, 0.0],
        },
    ];
    let cuts = vec![CutJoint::Revolute { a: Point::on(2, 1.0, 0.0), b: Point::ground(1.0, 0.0) }];
    let mech = Mechanism::new(bodies, cuts, [Point::ground(0.0, -1.0), Point::on(0, 0.5, 0.0)], G)?;
    let z = [-30f64, 30.0, 150.0].map(f64::to_radians).to_vec();
    finish("A", mech, z, 0, (0.2, 0.5), vec![(0.5, 10.0), (2.8, 0.0), (4.5, -10.0), (6.0, 0.0)], 7.0, 1e2)
}

/// Model D (002 four-bar). Beams J = mL²/12.
pub fn model_d() -> Result<Model, String> {
    let r2 = 2f64.sqrt();
    let j = |m: f64, l: f64| m * l * l / 12.0;
    let bodies = vec![
        beam("body 1", None, [0.0, 0.0], 225.0, 9.0, j(225.0, 9.0)),
        beam("body 2", Some(0), [3.0, 0.0], 35.0, r2, j(35.0, r2)),
        beam("body 3", Some(1), [r2, 0.0], 50.0, 2.0, j(50.0, 2.0)),
    ];
    let cuts = vec![CutJoint::Revolute { a: Point::on(2, 2.0, 0.0), b: Point::ground(0.0, -1.0) }];
    let mech = Mechanism::new(bodies, cuts, [Point::ground(0.0, -2.0), Point::on(2, 1.0, 0.0)], G)?;
    let z = [0f64, -135.0, -45.0].map(f64::to_radians).to_vec();
    finish("D", mech, z, 0, (0.2, 0.5), vec![(1.0, 10.0), (2.5, 0.0), (5.0, -10.0), (8.0, 0.0)], 10.0, 1e-2)
}

/// Model E (002 quick-return). Beams mL²/12, cuboids mL²/6; sliders' centres at their pins.
pub fn model_e() -> Result<Model, String> {
    let beam_j = |m: f64, l: f64| m * l * l / 12.0;
    let cube_j = |m: f64, l: f64| m * l * l / 6.0;
    let bodies = vec![
        beam("body 1 (rocker)", None, [0.0, 0.0], 25.0, 5.0, beam_j(25.0, 5.0)),
        beam("body 2 (rod)", Some(0), [5.0, 0.0], 12.0, 1.2, beam_j(12.0, 1.2)),
        Body {
            name: "body 3 (ram)",
            parent: Some(1),
            joint: [1.2, 0.0],
            mass: 3.0,
            inertia: cube_j(3.0, 0.3),
            com: [0.0, 0.0],
        },
        beam("body 4 (crank)", None, [0.0, 3.0], 100.0, 1.0, beam_j(100.0, 1.0)),
        Body {
            name: "body 5 (block)",
            parent: Some(3),
            joint: [1.0, 0.0],
            mass: 30.0,
            inertia: cube_j(30.0, 0.3),
            com: [0.0, 0.0],
        },
    ];
    let cuts = vec![
        // J: the ram slides horizontally on y = 5 m, turned by 180°.
        CutJoint::Prismatic {
            a: Point::ground(0.0, 5.0),
            axis: [1.0, 0.0],
            b: Point::on(2, 0.0, 0.0),
            angle: std::f64::consts::PI,
        },
        // M: the block slides along the rocker.
        CutJoint::Prismatic { a: Point::on(0, 0.0, 0.0), axis: [1.0, 0.0], b: Point::on(4, 0.0, 0.0), angle: 0.0 },
    ];
    let mech = Mechanism::new(bodies, cuts, [Point::ground(-0.96, 3.0), Point::on(3, 0.5, 0.0)], G)?;
    let z = [76.22f64, 96.89, 6.89, 30.59, 45.63].map(f64::to_radians).to_vec();
    finish("E", mech, z, 3, (0.5, 0.2), vec![(1.0, -10.0), (4.0, 0.0), (6.5, 10.0), (8.0, 0.0)], 10.0, 1e-2)
}

/// A model by kind.
pub fn model(which: Which) -> Result<Model, String> {
    match which {
        Which::A => model_a(),
        Which::D => model_d(),
        Which::E => model_e(),
    }
}
