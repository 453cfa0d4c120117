//! The unified FMUs: rod + naya circuit (seed 004), crane + naya (seed 001 A.4), crane +
//! three-volume circuit and double-actuator crane + two three-volume circuits (Publication III).

use crate::circuit::{Lumped3Circuit, NayaCircuit};
use crate::fmu::{CylinderNames, UnifiedFmu, Variant};
use fmu_export::ModelInfo;
use fmu_multibody::crane::{self, Crane};
use fmu_multibody::rod::{self, Rod};

/// `unified-naya.fmu`: rod + naya circuit.
pub type UnifiedNayaFmu = UnifiedFmu<NayaRod, { rod::M }, 2>;
/// `unified-crane-a4.fmu`: crane + naya circuit.
pub type UnifiedCraneA4Fmu = UnifiedFmu<NayaCrane, { crane::M }, 2>;
/// `unified-crane.fmu`: crane + three-volume circuit.
pub type UnifiedCraneFmu = UnifiedFmu<Lumped3Crane, { crane::M }, 4>;
/// `unified-crane2.fmu`: double-actuator crane + two three-volume circuits.
pub type UnifiedCrane2Fmu = UnifiedFmu<Lumped3Crane2, { crane::M }, 4>;

const NAYA: &[CylinderNames<2>] = &[CylinderNames {
    input: "kappa",
    s: ["s", "s_dot", "s_ddot"],
    force: "F",
    states: ["p1", "p2"],
    calculated: ["F_static", "s0", "kappa0"],
}];

const LUMPED3: &[CylinderNames<4>] = &[CylinderNames {
    input: "U_ref",
    s: ["s", "s_dot", "s_ddot"],
    force: "F",
    states: ["p1", "p2", "p3", "U"],
    calculated: ["F_static", "s0", "U_ref0"],
}];

const LUMPED3_DOUBLE: &[CylinderNames<4>] = &[
    CylinderNames {
        input: "U_ref1",
        s: ["s1", "s1_dot", "s1_ddot"],
        force: "F1",
        states: ["p1_1", "p2_1", "p3_1", "U_1"],
        calculated: ["F1_static", "s1_0", "U_ref1_0"],
    },
    CylinderNames {
        input: "U_ref2",
        s: ["s2", "s2_dot", "s2_ddot"],
        force: "F2",
        states: ["p1_2", "p2_2", "p3_2", "U_2"],
        calculated: ["F2_static", "s2_0", "U_ref2_0"],
    },
];

const KAPPA: (&str, &str, f64, f64) =
    ("1", "Spool displacement kappa (seed 004 eq. 31); start: kappa0 of the static equilibrium", 0.0, 1.0);
const U_REF: (&str, &str, f64, f64) =
    ("V", "Valve reference signal (Publication III eq. 28); 0 closes the valve", -10.0, 10.0);

macro_rules! method_docs {
    () => {
        r#"<h3>Unified method (seed 004 §3)</h3>
<p>Positions q and circuit states x are the primary variables of one Newton–Raphson iteration. The trapezoidal rule on both
(q̇ = (2/h) q + q̂̇, q̈ = (4/h²) q + q̂̈, ẋ = (2/h) x + x̂̇, eqs. 7–8 and 22) gives the residual of eq. 25,
(h²/4)[M q̈ + Φ_qᵀαΦ + Φ_qᵀλ − Q(q, q̇, x); ẋ − h(x, s, ṡ, u)], solved with the non-symmetric tangent of eq. 26 (∂Q/∂x through the cylinder
force, ∂h/∂q and ∂h/∂q̇ through s(q) and ṡ(q, q̇)); λ ← λ + αΦ after every iteration; then the velocity and acceleration projections
of eqs. 14–16 and ẋ = h at the projected velocities. The circuit rows are scaled by nominal values (1 MPa, 1 V).
Convergence: position correction ≤ <code>newton_tol</code> and circuit correction ≤ <code>newton_tol_x</code> × nominal.
Default penalty α = 1e10 (seed 004 at h = 10 ms); keep α h² constant when h changes.</p>
<p><b>Restart</b>: where a control input jumps at a communication point, q̈, λ and ẋ are recomputed with the new input before the step
(<code>restart</code> = true, default); without it the trapezoidal rule averages the old and the new input over the first step.</p>
<p><b>Physics</b>: the same code as the co-simulation FMUs (crates <code>fmu-multibody</code> and <code>fmu-hydraulics</code>) with their
default parameters; each circuit's nominal chamber lengths are placed at the cylinder's initial length, and the initial state is at rest:
the static cylinder force from the mechanism and the circuit state that produces it (the control input that holds it is the declared start).
Outputs: cylinder motion, force and circuit states, E_kin, E_pot, actuator work W_act (trapezoidal rule per internal step),
E_balance = E_kin + E_pot − W_act − E(t0) (seed 004 Fig. 8), constraint norms, Newton iterations.</p>"#
    };
}

macro_rules! variant {
    ($ty:ident, $m:expr, $p:literal, $mech:ty, $make:expr, $circuit:ty, $cyl:expr, $input:expr,
     $name:literal, $fmu:literal, $descr:literal, $docs:expr, $source:literal) => {
        #[doc = concat!("Marker of `", $fmu, ".fmu`.")]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $ty;

        impl Variant<{ $m }, $p> for $ty {
            type Mech = $mech;
            type Circuit = $circuit;
            const CYLINDERS: &'static [CylinderNames<$p>] = $cyl;
            const INPUT: (&'static str, &'static str, f64, f64) = $input;
            fn info() -> ModelInfo {
                ModelInfo {
                    model_name: $name,
                    model_identifier: "unified",
                    fmu_name: $fmu,
                    description: $descr,
                    documentation_html: concat!($docs, method_docs!()),
                    source: $source,
                    default_experiment: (0.0, 10.0, 1e-2),
                    interpolates_inputs: true,
                }
            }
            fn mechanism() -> $mech {
                $make
            }
        }
    };
}

variant!(
    NayaRod, rod::M, 2, Rod, Rod::default(), NayaCircuit, NAYA, KAPPA,
    "UnifiedNaya", "unified-naya",
    "Monolithic reference of seed 004: the rod and its two-chamber hydraulic cylinder integrated together (unified index-3 augmented Lagrangian with pressures); input kappa",
    r#"<h3>System (seed 004 §4)</h3><p>The rod of seed 004 (L = 1 m, m = 200 kg, tip mass 250 kg, θ₀ = 30°, cylinder from B(√3/2, 0) to the
midpoint) driven by the two-chamber cylinder with open-centre valve (eqs. 28–31; β(p) of eq. 3; valve areas 5e-4 κ, 5e-4 (1 − κ)).
p2 (lower chamber) extends the cylinder: F = (p2 − p1) A − c ṡ. Static equilibrium (eq. 32) gives p1 = 3.3218 MPa, p2 = 4.3782 MPa, κ0 = 0.464608.</p>"#,
    "Naya, Cuadrado, Dopico, Lugris 2011 (seed 004) §3 eqs. 17-26, §4 eqs. 27-38"
);
variant!(
    NayaCrane, crane::M, 2, Crane, Crane::default(), NayaCircuit, NAYA, KAPPA,
    "UnifiedCraneA4", "unified-crane-a4",
    "Monolithic reference of seed 001 A.4: the Publication III crane driven by the seed 004 two-chamber cylinder, integrated together; input kappa",
    r#"<h3>System (seed 001 Appendix A.4)</h3><p>The single-actuator crane of Publication III (Table 1) with the two-chamber cylinder and
open-centre valve of seed 004 (eqs. 28–31), chambers equal at the crane's initial cylinder length; static equilibrium for the crane's static force.</p>"#,
    "González et al. 2022 (seed 001) Appendix A.4; Naya et al. 2011 (seed 004) §3-4"
);
variant!(
    Lumped3Crane, crane::M, 4, Crane, Crane::default(), Lumped3Circuit, LUMPED3, U_REF,
    "UnifiedCrane", "unified-crane",
    "Monolithic reference of Publication III: the single-actuator crane and its three-volume hydraulic circuit integrated together; input U_ref",
    r#"<h3>System (Publication III §3, Tables 1–2)</h3><p>The single-actuator crane (link 1 with m = 200 kg, masses 250 kg at Q and 100 kg
at R on the massless link 2) and the three-volume circuit (4/3 valve with spool lag τ = 1/(2π 35 Hz), throttle, laminar region 2 bar, end
dampers; eqs. 20–31 with the DIGEST §1.1 corrections). At rest: p2 = 3.5 MPa, p1 = p3 from p1 A1 − p2 A2 = F_static (SPEC §3.6).</p>"#,
    "Rahikainen et al. 2019, Publication III §3 (seed 000) eqs. 16-31, Tables 1-2; unified method of Naya et al. 2011 (seed 004) §3"
);
variant!(
    Lumped3Crane2, crane::M, 4, Crane, Crane::double(), Lumped3Circuit, LUMPED3_DOUBLE, U_REF,
    "UnifiedCrane2", "unified-crane2",
    "Monolithic reference of Publication III: the double-actuator crane and its two three-volume hydraulic circuits integrated together; inputs U_ref1, U_ref2",
    r#"<h3>System (Publication III §3.1.2)</h3><p>The double-actuator crane: cylinder 1 as in the single-actuator crane, cylinder 2 between P
and the midpoint of link 2; each driven by its own three-volume circuit (Table 2). Cylinder 2's chambers are l10 = 0.05 m, l20 = 0.25 m at its
initial length (SPEC §3.6); it hangs at rest with F2 = 0 (p2 = 3.5 MPa, p1 = p3 = p2 A2/A1).</p>"#,
    "Rahikainen et al. 2019, Publication III §3 (seed 000) eqs. 16-31, Tables 1-2; unified method of Naya et al. 2011 (seed 004) §3"
);
