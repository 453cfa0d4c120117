//! The four FMUs of the double oscillator with nonlinear springs and dampers, seed 001 §A.3
//! (eqs. 55–71): force-displacement (eqs. 67–69) and displacement-displacement (eqs. 70–71).
//!
//! Seed 001 gives the laws but no values for A.3. Project defaults: the masses, springs and
//! initial state of §A.1 (m1 = m2 = 1 kg, k1 = 10, k2 = 1000, kc = 100 N/m, linear springs n = 1
//! as the text says, ẋ1(0) = 100, ẋ2(0) = −100 m/s) and cubic dampers, m = 3, with
//! c1 = c2 = cc = 1e-4 N·s/m at 1 m/s (F = 100 N at 100 m/s). The cubic law c ẋ³ is smooth, so
//! every extrapolation order can show its convergence order (m = 2, c |ẋ| ẋ, has a jump in its
//! second derivative at every velocity reversal), and it dissipates about 75 % of the initial
//! energy in the first second while staying a mild damping rate (3 cc Δẋ² ≤ 12 1/s per unit
//! mass) for communication steps up to 10 ms.

use crate::coupled::{CouplingSpring, Mass};
use crate::variables::{
    body_model, force_input, force_output, ground, initial_state, orders, spring, state_outputs, GroundNames,
};
use model_description::DependencyKind;

const SOURCE: &str = "González, Rahikainen et al., Notes on Co-Simulation (seed 001), Appendix A.3, eqs. 55-71";

/// Masses m1, m2 (kg), as §A.1.
pub const M: [f64; 2] = [1.0, 1.0];
/// Ground springs k1, k2 (N/m), as §A.1.
pub const K: [f64; 2] = [10.0, 1000.0];
/// Coupling spring kc (N/m), as §A.1.
pub const KC: f64 = 100.0;
/// Every damper coefficient c1 = c2 = cc (N·s/m at 1 m/s), project default.
pub const C: f64 = 1e-4;
/// Order of the damper laws (eq. 56), project default.
pub const M_D: f64 = 3.0;
/// Initial velocities (m/s), as §A.1.
pub const V0: [f64; 2] = [100.0, -100.0];

const G1: GroundNames = GroundNames {
    m: ("m1", "Point mass 1 (project default for seed 001 A.3, as A.1: 1 kg)"),
    k: ("k1", "Stiffness of the spring from mass 1 to ground (as A.1: 10 N/m)"),
    c: ("c1", "Damper from mass 1 to ground, F = c1 |v1/(1 m/s)|^(m-1) v1 (eq. 56; default 1e-4 N.s/m)"),
};
const G2: GroundNames = GroundNames {
    m: ("m2", "Point mass 2 (project default for seed 001 A.3, as A.1: 1 kg)"),
    k: ("k2", "Stiffness of the spring from mass 2 to ground (as A.1: 1000 N/m)"),
    c: ("c2", "Damper from mass 2 to ground, F = c2 |v2/(1 m/s)|^(m-1) v2 (eq. 56; default 1e-4 N.s/m)"),
};
const KC_NAME: (&str, &str) = ("kc", "Stiffness of the coupling spring (as A.1: 100 N/m)");
const CC_NAME: (&str, &str) =
    ("cc", "Coupling damper, F = cc |dv/(1 m/s)|^(m-1) dv on the relative velocity dv (eq. 56; default 1e-4 N.s/m)");
const FT: &[(&str, DependencyKind)] = &[("xi", DependencyKind::Fixed), ("xi_dot", DependencyKind::Fixed)];

fn mass<const S: usize, const F: usize>(i: usize, springs: [CouplingSpring; S]) -> Mass<S, F> {
    let mut b = Mass::new(M[i], K[i], V0[i], springs);
    b.c = C;
    b.m_d = M_D;
    b
}

body_model!(
    /// Force-displacement, subsystem M1 (eqs. 67–68): mass 1 with the nonlinear coupling
    /// spring-damper; input ξ = x2, ξ̇ = ẋ2; output the coupling force f1^c.
    NonlinearFdM1, 1, 0, mass(0, [CouplingSpring::new(KC, C)]),
    "OscillatorNonlinearFdM1", "oscillator_nonlinear_fd_m1", "oscillator-nonlinear-fd-m1",
    "Double oscillator with nonlinear damping (seed 001 A.3), force-displacement coupling, subsystem M1: mass 1 with the coupling spring-damper; outputs the coupling force",
    docs::FD_M1, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G1);
        v.extend(spring::<Self, 1, 0, 0>(KC_NAME, CC_NAME, ("xi", "Position of mass 2 (coupling input)"), ("xi_dot", "Velocity of mass 2 (coupling input)")));
        v.extend(orders::<Self, 1, 0>());
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (as A.1: 100 m/s)"));
        v.push(force_output::<Self, 1, 0>("Coupling force on mass 2, f1c = kc* (x1 - xi) + cc* (x1_dot - xi_dot) (eq. 68)", FT));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Force-displacement, subsystem M2 (eq. 69): mass 2 driven by the coupling force.
    NonlinearFdM2, 0, 1, mass(1, []),
    "OscillatorNonlinearFdM2", "oscillator_nonlinear_fd_m2", "oscillator-nonlinear-fd-m2",
    "Double oscillator with nonlinear damping (seed 001 A.3), force-displacement coupling, subsystem M2: mass 2 driven by the coupling force input",
    docs::FD_M2, SOURCE,
    {
        let mut v = ground::<Self, 0, 1>(&G2);
        v.push(force_input::<Self, 0, 1, 0>("F", "Coupling force f1c from subsystem M1 (eq. 69)"));
        v.extend(orders::<Self, 0, 1>());
        v.extend(initial_state::<Self, 0, 1>("Initial velocity (as A.1: -100 m/s)"));
        v.extend(state_outputs::<Self, 0, 1>());
        v
    }
);

body_model!(
    /// Displacement-displacement, subsystem M1 (eq. 70).
    NonlinearDdM1, 1, 0, mass(0, [CouplingSpring::new(KC, C)]),
    "OscillatorNonlinearDdM1", "oscillator_nonlinear_dd_m1", "oscillator-nonlinear-dd-m1",
    "Double oscillator with nonlinear damping (seed 001 A.3), displacement-displacement coupling, subsystem M1: mass 1 with its copy of the coupling spring-damper",
    docs::DD_M1, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G1);
        v.extend(spring::<Self, 1, 0, 0>(KC_NAME, CC_NAME, ("xi", "Position of mass 2 (coupling input)"), ("xi_dot", "Velocity of mass 2 (coupling input)")));
        v.extend(orders::<Self, 1, 0>());
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (as A.1: 100 m/s)"));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Displacement-displacement, subsystem M2 (eq. 71).
    NonlinearDdM2, 1, 0, mass(1, [CouplingSpring::new(KC, C)]),
    "OscillatorNonlinearDdM2", "oscillator_nonlinear_dd_m2", "oscillator-nonlinear-dd-m2",
    "Double oscillator with nonlinear damping (seed 001 A.3), displacement-displacement coupling, subsystem M2: mass 2 with its copy of the coupling spring-damper",
    docs::DD_M2, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G2);
        v.extend(spring::<Self, 1, 0, 0>(KC_NAME, CC_NAME, ("eta", "Position of mass 1 (coupling input)"), ("eta_dot", "Velocity of mass 1 (coupling input)")));
        v.extend(orders::<Self, 1, 0>());
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (as A.1: -100 m/s)"));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

/// Per-FMU documentation (equations), each with the common text.
mod docs {
    macro_rules! doc {
        ($name:ident, $eq:literal) => {
            pub const $name: &str = concat!(
                "<p><b>Equations:</b> ",
                $eq,
                "</p><p>Laws (eqs. 55–56, written for x in m and v in m/s so that k and c keep the units N/m and \
N·s/m): spring F = k |x|^(n−1) x, damper F = c |v|^(m−1) v; the starred coefficients of eqs. 61–66 are \
k* = k |x|^(n−1), c* = c |v|^(m−1) of the spring's or damper's own deflection or rate.</p>\
<p>Seed 001 A.3 gives no values; project defaults: m1 = m2 = 1 kg, k1 = 10 N/m, k2 = 1000 N/m, kc = 100 N/m and \
x1(0) = x2(0) = 0, v1(0) = 100 m/s, v2(0) = −100 m/s as in A.1; linear springs n = 1 (the text: \"linear springs and \
nonlinear dampers\"); cubic dampers m = 3 with c1 = c2 = cc = 1e-4 N·s/m (smooth, so every extrapolation order \
shows its convergence order); 10 s. Reference: the monolithic ODE of eqs. 57–58 integrated with RK4 at a tiny step.</p>\
<p>Integration: classical RK4, ceil(H/h_max) equal sub-steps per communication step H (h_max = 0.1 ms); inputs are \
evaluated at every stage from the polynomial set by fmi2SetRealInputDerivatives (held when none is set). Output \
derivatives of order 1 are exact at the current state with the inputs held.</p>"
            );
        };
    }
    doc!(FD_M1, "m1 ẍ1 + c1* ẋ1 + k1* x1 + F = 0 with F = kc* (x1 − ξ) + cc* (ẋ1 − ξ̇) (eqs. 67–68). Inputs ξ = xi, ξ̇ = xi_dot (mass 2); F depends directly on both.");
    doc!(FD_M2, "m2 ẍ2 + c2* ẋ2 + k2* x2 = F (eq. 69, f2 = 0). Input F; outputs x = ξ, v = ξ̇ for subsystem M1.");
    doc!(
        DD_M1,
        "m1 ẍ1 + (c1* + cc*) ẋ1 − cc* ξ̇ + (k1* + kc*) x1 − kc* ξ = 0 (eq. 70). Inputs ξ = xi, ξ̇ = xi_dot (mass 2)."
    );
    doc!(
        DD_M2,
        "m2 ẍ2 + (c2* + cc*) ẋ2 − cc* η̇ + (k2* + kc*) x2 − kc* η = 0 (eq. 71). Inputs η = eta, η̇ = eta_dot (mass 1)."
    );
}
