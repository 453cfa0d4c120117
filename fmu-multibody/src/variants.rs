//! The six mechanism FMUs: rod, crane and double-actuator crane, each with force coupling
//! (input F per cylinder) and pressure coupling (inputs p1, p2 per cylinder; suffix `-p`).

use crate::crane::{self, Crane};
use crate::cylinder::Cylinder;
use crate::fmu::{CylinderNames, MbFmu, Variant};
use crate::rod::{self, Rod};
use fmu_export::{ModelInfo, StateVisitor, Variable};
use model_description::DependencyKind as Dep;

/// `multibody-rod.fmu`.
pub type RodFmu = MbFmu<RodF, { rod::M }>;
/// `multibody-crane.fmu`.
pub type CraneFmu = MbFmu<CraneF, { crane::M }>;
/// `multibody-crane2.fmu`.
pub type Crane2Fmu = MbFmu<Crane2F, { crane::M }>;
/// `multibody-rod-p.fmu`.
pub type RodPFmu = MbFmu<RodP, { rod::M }>;
/// `multibody-crane-p.fmu`.
pub type CranePFmu = MbFmu<CraneP, { crane::M }>;
/// `multibody-crane2-p.fmu`.
pub type Crane2PFmu = MbFmu<Crane2P, { crane::M }>;

const SINGLE: &[CylinderNames] = &[CylinderNames {
    force: "F",
    s: ["s", "s_dot", "s_ddot"],
    pressures: ["p1", "p2"],
    force_deps: &[("p1", Dep::Fixed), ("p2", Dep::Fixed)],
    calculated: ["F_static", "s0", "p1_static"],
    params: ["A1", "A2", "c", "l_d", "k_d", "c_d", "l10", "l20", "p2_0"],
    im: (["m_eff", ""], "f_eff"),
}];

const DOUBLE: &[CylinderNames] = &[
    CylinderNames {
        force: "F1",
        s: ["s1", "s1_dot", "s1_ddot"],
        pressures: ["p1_1", "p2_1"],
        force_deps: &[("p1_1", Dep::Fixed), ("p2_1", Dep::Fixed)],
        calculated: ["F1_static", "s1_0", "p1_1_static"],
        params: ["A1_1", "A2_1", "c_1", "l_d_1", "k_d_1", "c_d_1", "l10_1", "l20_1", "p2_0_1"],
        im: (["m_eff_11", "m_eff_12"], "f_eff_1"),
    },
    CylinderNames {
        force: "F2",
        s: ["s2", "s2_dot", "s2_ddot"],
        pressures: ["p1_2", "p2_2"],
        force_deps: &[("p1_2", Dep::Fixed), ("p2_2", Dep::Fixed)],
        calculated: ["F2_static", "s2_0", "p1_2_static"],
        params: ["A1_2", "A2_2", "c_2", "l_d_2", "k_d_2", "c_d_2", "l10_2", "l20_2", "p2_0_2"],
        im: (["m_eff_21", "m_eff_22"], "f_eff_2"),
    },
];

/// Solver, diagnostics and coupling notes shared by every FMU's documentation.
macro_rules! common_docs {
    () => {
        r#"<h3>Solvers</h3>
<p>Parameter <code>solver</code>: <b>I3AL-P</b> (1, default) — index-3 augmented Lagrangian, positions primary, trapezoidal rule
q̇ = (2/h) q + q̂̇, q̈ = (4/h²) q + q̂̈ (seed 004 eqs. 7–8), Newton–Raphson on the scaled residual
(h²/4)(M q̈ + Φ_qᵀ α Φ + Φ_qᵀ λ − Q) with tangent M + (h/2) C + (h²/4)(Φ_qᵀ α Φ_q + K) (eqs. 10–13), multipliers λ ← λ + α Φ after every
iteration (eq. 6), then mass-damping-stiffness-orthogonal projections of velocities and accelerations with W = M + (h/2) C + (h²/4) K (eqs. 14–16).
<b>I1AL</b> (2) — index-1 augmented Lagrangian of Publication III eq. 17, (M + Φ_qᵀαΦ_q) q̈ + Φ_qᵀλ = Q − Φ_qᵀα(Φ̇_q q̇ + 2ξωΦ̇ + ω²Φ),
λ ← λ + α(Φ̈ + 2ξωΦ̇ + ω²Φ), accelerations primary, integrated with the trapezoidal rule (Newton on q̈_{n+1}; q, q̇ follow from it), no projection.
Publication III §3.1.3 states the trapezoidal rule for both algorithms; the dissertation's summary of Publication IV mentions an explicit
integrator with I1AL (DIGEST §1.9 item 13). We follow Publication III.</p>
<p>C = −∂Q/∂q̇ and K ≈ −∂Q/∂q come from the cylinder forces (friction, end dampers and the geometric stiffness F ∂²s/∂q²).
Penalties: <code>alpha</code> (I3AL-P, default 1e11: it enters as (h²/4)α, so at h = 1 ms it is 2.5e4 against masses ≤ 1200 kg; raise it for smaller h)
and <code>alpha_i1al</code> (I1AL, default 1e7). A warning is logged when the penalty is less than 10 times the largest mass.
Newton stops when the largest position correction is below <code>newton_tol</code> (default 1e-10 m/rad; for I1AL (h²/4)|Δq̈|);
more than <code>newton_max_iter</code> iterations (default 20) end the step with fmi2Error naming the time and the residual norm.
Internal step <code>h</code>: 0 (default) = the communication step; otherwise it must divide the communication step (else fmi2Error).</p>
<h3>Inputs inside a step and at communication points</h3>
<p>Inside a communication step the inputs follow the polynomials of fmi2SetRealInputDerivatives (held without them). Where an input jumps
at a communication point (its value differs from the end value of the previous step), the step restarts: accelerations and multipliers are
recomputed from the constrained equations of motion [M Φ_qᵀ; Φ_q 0][q̈; λ] = [Q; −Φ̇_q q̇] with the new input (I1AL: with its Baumgarte terms)
before the trapezoidal step (SPEC §3.2). Reusing the stored q̈_n would let the previous input act for half a step (an H/2 delay).
The Boolean parameter <code>restart</code> = false switches this off, for diagnostics only.</p>
<h3>Initial state</h3>
<p>At rest in the configuration given by the parameters; accelerations from the equations of motion. The static cylinder forces
(<code>F_static</code>…) are computed from the parameters at initialization (least-squares solution of Φ_qᵀλ − Σ F_k ∂s_k/∂q = Q_g; an error
when no cylinder forces hold the configuration). Inputs are declared with the values that hold it (force, or p1 of the static state with
p2 = p2_0), so a default run rests; an input left at its declared start value follows the parameters when they change.</p>
<h3>Outputs and diagnostics</h3>
<p>s, ṡ, s̈ per cylinder at the end of the last step (no direct feedthrough; output derivatives: s up to order 2, ṡ order 1).
E_kin = ½ q̇ᵀMq̇, E_pot = Σ m g y, W_act = ∫ Σ F ṡ dt by the trapezoidal rule over each internal step with the forces the solver used,
E_balance = E_kin + E_pot − W_act − E(t0). Constraint violation norms phi = |Φ|, phi_dot = |Φ_q q̇|, phi_ddot = |Φ_q q̈ + Φ̇_q q̇|.
newton_iterations (largest of the last communication step), newton_iterations_total and steps_total (for averages), restarts.</p>
<p><b>Failures</b>: Newton divergence, a singular Newton matrix, NaN or a cylinder of zero length end the step with fmi2Error naming the
time and the quantity. A piston beyond its stroke (pressure variants) is an error at initialization and a warning (once) during the
run: the end damper's force grows on, as the hydraulics of force coupling go on with their dead volume.</p>"#
    };
}

/// Pressure-coupling notes.
macro_rules! pressure_docs {
    () => {
        r#"<h3>Pressure coupling</h3>
<p>Inputs p1 (piston side, extends) and p2 (rod side) per cylinder; the mechanics computes the cylinder force itself,
F = p1 A1 − p2 A2 − c ṡ + F_d(s, ṡ) (Publication III eq. 30), with the end dampers of eq. 31: F_d = k_d (l_d − l1) − c_d ṡ when l1 ≤ l_d,
−k_d (l_d − l2) − c_d ṡ when l2 ≤ l_d, chamber lengths l1 = l10 + (s − s0), l2 = l20 − (s − s0) (DIGEST §1.1 sign fix).
This is the convention of hydraulics-lumped3 (connect its p1, p2). hydraulics-naya numbers its chambers the other way (its p2 extends): connect
naya.p2 → p1 and naya.p1 → p2. The force output F has direct feedthrough from p1 and p2 (declared in ModelStructure).
The actuator work includes friction and damper losses.</p>"#
    };
}

macro_rules! rod_docs {
    () => {
        r#"<h3>Mechanism (seed 004 §4, Fig. 2)</h3>
<p>A rod of length L = 1 m and mass m = 200 kg pinned at A(0, 0), a point mass M = 250 kg (<code>m_tip</code>) at its tip, a cylinder
from B(√3/2, 0) to the rod's midpoint; θ₀ = 30°, so s₀ = 0.5 m. q = {x1, y1, x2, y2, s} (eq. 27): point 1 is the midpoint, point 2 the tip.
Mass matrix diag(0, 0, M + m/3, M + m/3, 0) (eq. 33: the rod's inertia lumped at A and the tip); Q = (0, −m g, 0, −M g, F) (eq. 34);
constraints (eq. 35): (x1 − xA)² + (y1 − yA)² − (L/2)², (x2 − xA) − 2(x1 − xA), (y2 − yA) − 2(y1 − yA), (x1 − xB)² + (y1 − yB)² − s².
Static force (2M + m) g = 6867 N (eq. 32).</p>"#
    };
}

macro_rules! crane_docs {
    () => {
        r#"<h3>Mechanism (Publication III §3.1.1, Table 1; seed 001 Appendix A.4)</h3>
<p>Link 1 (O–Q, L = 1 m, m = 200 kg) pinned at the origin, P its midpoint; link 2 (Q–R, L_h = 0.5 m) massless; point masses m_p = 250 kg at Q
and m_h = 100 kg at R; θ1₀ = π/6, θ2₀ = 3π/2 (absolute: link 2 hangs). q = [x_P, y_P, θ1, x_R, y_R] with the constraints of eq. 16:
L cos θ1 − 2 x_P, L sin θ1 − 2 y_P, (x_R − L cos θ1)² + (y_R − L sin θ1)² − L_h². Mass matrix diag(m + 4m_p, m + 4m_p, m L²/12, m_h, m_h)
(link 1's mass at P with the slender-rod inertia m L²/12 about P, SPEC §3.6; m_p at Q = 2P), gravity (0, −(m + 2m_p) g, 0, 0, −m_h g).
Cylinder 1 from B(√3/2, 0) to P: s1₀ = 0.5 m; static force 2 g (m/2 + m_p + m_h) = 8829 N.</p>"#
    };
}

macro_rules! crane2_docs {
    () => {
        r#"<p><b>Double-actuator crane</b> (Publication III §3.1.2): cylinder 2 acts between P and the midpoint of link 2, (Q + R)/2 = P + R/2,
so s2 = |R|/2 = 0.433 m initially. With link 2 hanging its static force is 0 N. (The paper calls both cylinders identical although
s2₀ ≠ s1₀; the pressure variant uses the Publication III cylinder with l10 = 0.05 m, l20 = 0.25 m at s2₀, SPEC §3.6.)</p>"#
    };
}

fn crane_variables<V: Variant<{ crane::M }, Mech = Crane>>() -> Vec<Variable<MbFmu<V, { crane::M }>>> {
    macro_rules! p {
        ($name:literal, $unit:literal, $descr:literal, $($field:tt)+) => {
            Variable::parameter($name, $unit, $descr, |m: &MbFmu<V, { crane::M }>| m.mech.$($field)+, |m, x| m.mech.$($field)+ = x)
        };
    }
    vec![
        p!("L", "m", "Length of link 1 (Pub III Table 1)", l).min(1e-9),
        p!("L_h", "m", "Length of link 2 (Table 1)", l_h).min(1e-9),
        p!("m", "kg", "Mass of link 1, uniformly distributed (Table 1)", m).min(1e-9),
        p!("m_p", "kg", "Point mass at Q, the tip of link 1 (Table 1)", m_p).min(0.0),
        p!("m_h", "kg", "Point mass at R, the end of link 2 (Table 1)", m_h).min(1e-9),
        p!("x_B", "m", "x of the fixed cylinder point B (Table 1: sqrt(3)/2)", b[0]),
        p!("y_B", "m", "y of the fixed cylinder point B (Table 1: 0)", b[1]),
        p!("theta1_0", "rad", "Initial angle of link 1 (Table 1: pi/6)", theta1_0),
        p!("theta2_0", "rad", "Initial absolute angle of link 2 (Table 1: 3 pi/2, hanging; the initial state is at rest only if link 2 hangs)", theta2_0),
        p!("g", "m/s2", "Gravitational acceleration along -y (Table 1: -9.81 m/s2 as a signed value)", g).min(0.0),
        Variable::calculated_parameter(
            "J1",
            "kg.m2",
            "Inertia of link 1 about its centre, m L^2/12 (slender rod; not in the paper, SPEC 3.6)",
            |m: &MbFmu<V, { crane::M }>| m.mech.inertia(),
        ),
    ]
}

fn visit_crane(c: &mut Crane, v: &mut dyn StateVisitor) {
    for x in [&mut c.l, &mut c.l_h, &mut c.m, &mut c.m_p, &mut c.m_h, &mut c.theta1_0, &mut c.theta2_0, &mut c.g] {
        v.real(x);
    }
    v.reals(&mut c.b);
}

fn rod_variables<V: Variant<{ rod::M }, Mech = Rod>>() -> Vec<Variable<MbFmu<V, { rod::M }>>> {
    macro_rules! p {
        ($name:literal, $unit:literal, $descr:literal, $($field:tt)+) => {
            Variable::parameter($name, $unit, $descr, |m: &MbFmu<V, { rod::M }>| m.mech.$($field)+, |m, x| m.mech.$($field)+ = x)
        };
    }
    vec![
        p!("L", "m", "Rod length (seed 004 §4)", l).min(1e-9),
        p!("m", "kg", "Rod mass, uniformly distributed (seed 004 §4)", m).min(0.0),
        p!("m_tip", "kg", "Point mass at the rod's tip, M in seed 004 §4", m_tip).min(1e-9),
        p!("x_A", "m", "x of the pin A (seed 004: 0)", a[0]),
        p!("y_A", "m", "y of the pin A (seed 004: 0)", a[1]),
        p!("x_B", "m", "x of the fixed cylinder point B (seed 004: sqrt(3)/2)", b[0]),
        p!("y_B", "m", "y of the fixed cylinder point B (seed 004: 0)", b[1]),
        p!("theta0", "rad", "Initial angle between the rod and the ground (seed 004: 30 deg)", theta0),
        p!("g", "m/s2", "Gravitational acceleration along -y (seed 004: 9.81)", g).min(0.0),
    ]
}

fn visit_rod(r: &mut Rod, v: &mut dyn StateVisitor) {
    for x in [&mut r.l, &mut r.m, &mut r.m_tip, &mut r.theta0, &mut r.g] {
        v.real(x);
    }
    v.reals(&mut r.a);
    v.reals(&mut r.b);
}

macro_rules! variant {
    ($ty:ident, $m:expr, $mech:ty, $pressure:expr, $cyl:expr, $make:expr, $cylinder:expr, $vars:ident, $visit:ident,
     $name:literal, $id:literal, $fmu:literal, $descr:literal, $docs:expr, $source:literal) => {
        #[doc = concat!("Marker of `", $fmu, ".fmu`.")]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $ty;

        impl Variant<{ $m }> for $ty {
            type Mech = $mech;
            const PRESSURE: bool = $pressure;
            const CYLINDERS: &'static [CylinderNames] = $cyl;
            fn info() -> ModelInfo {
                ModelInfo {
                    model_name: $name,
                    model_identifier: $id,
                    fmu_name: $fmu,
                    description: $descr,
                    documentation_html: $docs,
                    source: $source,
                    default_experiment: (0.0, 10.0, 1e-3),
                    interpolates_inputs: true,
                }
            }
            fn mechanism() -> $mech {
                $make
            }
            fn cylinder(_k: usize) -> Cylinder {
                $cylinder
            }
            fn mechanism_variables() -> Vec<Variable<MbFmu<Self, { $m }>>> {
                $vars::<Self>()
            }
            fn visit_mechanism(mech: &mut $mech, v: &mut dyn StateVisitor) {
                $visit(mech, v)
            }
        }
    };
}

variant!(
    RodF,
    rod::M,
    Rod,
    false,
    SINGLE,
    Rod::default(),
    Cylinder::seed004(),
    rod_variables,
    visit_rod,
    "MultibodyRod",
    "multibody_rod",
    "multibody-rod",
    "Seed 004 rod with a hydraulic cylinder (force coupling: input F; outputs s, s_dot, s_ddot), I3AL-P or I1AL",
    concat!(rod_docs!(), common_docs!()),
    "Naya, Cuadrado, Dopico, Lugris 2011 (seed 004) §2 eqs. 5-16 and §4 eqs. 27-35"
);
variant!(
    CraneF, crane::M, Crane, false, SINGLE, Crane::default(), Cylinder::publication3(), crane_variables, visit_crane,
    "MultibodyCrane", "multibody_crane", "multibody-crane",
    "Publication III single-actuator crane (force coupling: input F; outputs s, s_dot, s_ddot), I3AL-P or I1AL",
    concat!(crane_docs!(), common_docs!()),
    "Rahikainen et al. 2019, Publication III §3.1 (seed 000) eqs. 16-19, Table 1; seed 001 Appendix A.4; seed 004 §2 eqs. 5-16"
);
variant!(
    Crane2F, crane::M, Crane, false, DOUBLE, Crane::double(), Cylinder::publication3(), crane_variables, visit_crane,
    "MultibodyCrane2", "multibody_crane2", "multibody-crane2",
    "Publication III double-actuator crane (force coupling: inputs F1, F2; outputs s1, s1_dot, s1_ddot, s2, s2_dot, s2_ddot), I3AL-P or I1AL",
    concat!(crane_docs!(), crane2_docs!(), common_docs!()),
    "Rahikainen et al. 2019, Publication III §3.1.2 (seed 000) eqs. 16-19, Table 1; seed 004 §2 eqs. 5-16"
);
variant!(
    RodP, rod::M, Rod, true, SINGLE, Rod::default(), Cylinder::seed004(), rod_variables, visit_rod,
    "MultibodyRodP", "multibody_rod_p", "multibody-rod-p",
    "Seed 004 rod with a hydraulic cylinder (pressure coupling: inputs p1, p2; outputs s, s_dot, s_ddot, F), I3AL-P or I1AL",
    concat!(rod_docs!(), pressure_docs!(), r#"<p>Cylinder defaults of seed 004 §4: A1 = A2 = 0.0065 m², c = 1e5 N·s/m, equal chambers of
0.221 m at s0 (l = 0.442 m), no end dampers (l_d = k_d = c_d = 0); p2_0 = 3.3218 MPa, the retracting-chamber pressure of the seed's
static equilibrium, so p1 = 4.3782 MPa.</p>"#, common_docs!()),
    "Naya, Cuadrado, Dopico, Lugris 2011 (seed 004) §2 eqs. 5-16 and §4 eqs. 27-35"
);
variant!(
    CraneP, crane::M, Crane, true, SINGLE, Crane::default(), Cylinder::publication3(), crane_variables, visit_crane,
    "MultibodyCraneP", "multibody_crane_p", "multibody-crane-p",
    "Publication III single-actuator crane (pressure coupling: inputs p1, p2; outputs s, s_dot, s_ddot, F), I3AL-P or I1AL",
    concat!(crane_docs!(), pressure_docs!(), r#"<p>Cylinder defaults of Publication III Table 2: d1 = 80 mm, d2 = 35 mm
(A1 = 5.0265e-3 m², A2 = 4.0644e-3 m²), l10 = 0.05 m, l20 = 0.25 m, l_d = 8 mm, k_d = 1e7 N/m, c_d = 5e3 N·s/m; c = 1e5 N·s/m and
p2_0 = 3.5 MPa are project defaults (SPEC §3.6), so p1 = 4.587 MPa at rest.</p>"#, common_docs!()),
    "Rahikainen et al. 2019, Publication III §3.1-3.2 (seed 000) eqs. 16-19, 30-31, Tables 1-2; seed 004 §2 eqs. 5-16"
);
variant!(
    Crane2P, crane::M, Crane, true, DOUBLE, Crane::double(), Cylinder::publication3(), crane_variables, visit_crane,
    "MultibodyCrane2P", "multibody_crane2_p", "multibody-crane2-p",
    "Publication III double-actuator crane (pressure coupling: inputs p1_1, p2_1, p1_2, p2_2; outputs s1, s1_dot, s1_ddot, s2, s2_dot, s2_ddot, F1, F2), I3AL-P or I1AL",
    concat!(crane_docs!(), crane2_docs!(), pressure_docs!(), r#"<p>Both cylinders: Publication III Table 2 (see multibody-crane-p), p2_0 = 3.5 MPa;
cylinder 2 is at rest with F2 = 0, so p1_2 = p2_0 A2/A1 (SPEC §3.6).</p>"#, common_docs!()),
    "Rahikainen et al. 2019, Publication III §3.1.2-3.2 (seed 000) eqs. 16-19, 30-31, Tables 1-2; seed 004 §2 eqs. 5-16"
);
