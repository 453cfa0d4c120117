//! The six FMUs of the triple oscillator, seed 001 §A.2 (Fig. 20, eq. 42): force-displacement
//! (Fig. 21, eqs. 47–51) and displacement-displacement (Fig. 22, eqs. 52–54) decompositions into
//! three subsystems. M1 and M2 are tied to M3 by the coupling spring-dampers kc1, cc1 and kc2,
//! cc2; in force-displacement they live in M1 and M2, which send their forces to M3; in
//! displacement-displacement M3 has its own copy of both.
//!
//! Paper values: m1 = 10, m2 = 25, m3 = 100 kg; k1 = 10, k2 = 5, k3 = 100 N/m; kc1 = kc2 = 100 N/m;
//! every damper 0; x(0) = 0, ẋ1(0) = 10, ẋ2(0) = 5, ẋ3(0) = −10 m/s.

use crate::coupled::{CouplingSpring, Mass};
use crate::variables::{
    body_model, force_input, force_output, ground, initial_state, spring, state_outputs, GroundNames,
};
use model_description::DependencyKind;

const SOURCE: &str = "González, Rahikainen et al., Notes on Co-Simulation (seed 001), Appendix A.2, eqs. 42-54";

/// Mass 1 (kg), seed 001 §A.2.
pub const M1: f64 = 10.0;
/// Mass 2 (kg).
pub const M2: f64 = 25.0;
/// Mass 3 (kg).
pub const M3: f64 = 100.0;
/// Ground springs k1, k2, k3 (N/m).
pub const K: [f64; 3] = [10.0, 5.0, 100.0];
/// Coupling springs kc1 (mass 1–3) and kc2 (mass 2–3) (N/m).
pub const KC: [f64; 2] = [100.0, 100.0];
/// Initial velocities ẋ1, ẋ2, ẋ3 (m/s).
pub const V0: [f64; 3] = [10.0, 5.0, -10.0];

const G1: GroundNames = GroundNames {
    m: ("m1", "Point mass 1 (seed 001 A.2: 10 kg)"),
    k: ("k1", "Stiffness of the spring from mass 1 to ground (seed 001 A.2: 10 N/m)"),
    c: ("c1", "Damper from mass 1 to ground (seed 001 A.2: 0)"),
};
const G2: GroundNames = GroundNames {
    m: ("m2", "Point mass 2 (seed 001 A.2: 25 kg)"),
    k: ("k2", "Stiffness of the spring from mass 2 to ground (seed 001 A.2: 5 N/m)"),
    c: ("c2", "Damper from mass 2 to ground (seed 001 A.2: 0)"),
};
const G3: GroundNames = GroundNames {
    m: ("m3", "Point mass 3 (seed 001 A.2: 100 kg)"),
    k: ("k3", "Stiffness of the spring from mass 3 to ground (seed 001 A.2: 100 N/m)"),
    c: ("c3", "Damper from mass 3 to ground (seed 001 A.2: 0)"),
};

const KC1: (&str, &str) = ("kc1", "Stiffness of the coupling spring between masses 1 and 3 (seed 001 A.2: 100 N/m)");
const CC1: (&str, &str) = ("cc1", "Coupling damper between masses 1 and 3 (seed 001 A.2: 0)");
const KC2: (&str, &str) = ("kc2", "Stiffness of the coupling spring between masses 2 and 3 (seed 001 A.2: 100 N/m)");
const CC2: (&str, &str) = ("cc2", "Coupling damper between masses 2 and 3 (seed 001 A.2: 0)");
const XI: (&str, &str) = ("xi", "Position of mass 3 (coupling input)");
const XI_DOT: (&str, &str) = ("xi_dot", "Velocity of mass 3 (coupling input)");
const FT: &[(&str, DependencyKind)] = &[("xi", DependencyKind::Fixed), ("xi_dot", DependencyKind::Fixed)];

fn mass_1<const F: usize>(kc: f64) -> Mass<1, F> {
    Mass::new(M1, K[0], V0[0], [CouplingSpring::new(kc, 0.0)])
}
fn mass_2<const F: usize>(kc: f64) -> Mass<1, F> {
    Mass::new(M2, K[1], V0[1], [CouplingSpring::new(kc, 0.0)])
}

body_model!(
    /// Force-displacement, subsystem M1 (eqs. 47, 49): mass 1 with the coupling spring-damper
    /// kc1, cc1; input ξ1 = x3, ξ̇1 = ẋ3; output the coupling force f1^c.
    TripleFdM1, 1, 0, mass_1(KC[0]),
    "OscillatorTripleFdM1", "oscillator_triple_fd_m1", "oscillator-triple-fd-m1",
    "Triple oscillator (seed 001 A.2), force-displacement coupling, subsystem M1: mass 1 with the coupling spring-damper to mass 3; outputs the coupling force",
    docs::FD_M1, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G1);
        v.extend(spring::<Self, 1, 0, 0>(KC1, CC1, XI, XI_DOT));
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (seed 001 A.2: 10 m/s)"));
        v.push(force_output::<Self, 1, 0>("Coupling force on mass 3, f1c = kc1 (x1 - xi) + cc1 (x1_dot - xi_dot) (eq. 49)", FT));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Force-displacement, subsystem M2 (eqs. 48, 50): mass 2 with the coupling spring-damper
    /// kc2, cc2; input ξ2 = x3, ξ̇2 = ẋ3; output the coupling force f2^c.
    TripleFdM2, 1, 0, mass_2(KC[1]),
    "OscillatorTripleFdM2", "oscillator_triple_fd_m2", "oscillator-triple-fd-m2",
    "Triple oscillator (seed 001 A.2), force-displacement coupling, subsystem M2: mass 2 with the coupling spring-damper to mass 3; outputs the coupling force",
    docs::FD_M2, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G2);
        v.extend(spring::<Self, 1, 0, 0>(KC2, CC2, XI, XI_DOT));
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (seed 001 A.2: 5 m/s)"));
        v.push(force_output::<Self, 1, 0>("Coupling force on mass 3, f2c = kc2 (x2 - xi) + cc2 (x2_dot - xi_dot) (eq. 50)", FT));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Force-displacement, subsystem M3 (eq. 51): mass 3 driven by the coupling forces f1^c, f2^c.
    TripleFdM3, 0, 2, Mass::new(M3, K[2], V0[2], []),
    "OscillatorTripleFdM3", "oscillator_triple_fd_m3", "oscillator-triple-fd-m3",
    "Triple oscillator (seed 001 A.2), force-displacement coupling, subsystem M3: mass 3 driven by the coupling forces of M1 and M2",
    docs::FD_M3, SOURCE,
    {
        let mut v = ground::<Self, 0, 2>(&G3);
        v.push(force_input::<Self, 0, 2, 0>("F1", "Coupling force f1c from subsystem M1 (eq. 51)"));
        v.push(force_input::<Self, 0, 2, 1>("F2", "Coupling force f2c from subsystem M2 (eq. 51)"));
        v.extend(initial_state::<Self, 0, 2>("Initial velocity (seed 001 A.2: -10 m/s)"));
        v.extend(state_outputs::<Self, 0, 2>());
        v
    }
);

body_model!(
    /// Displacement-displacement, subsystem M1 (eq. 52).
    TripleDdM1, 1, 0, mass_1(KC[0]),
    "OscillatorTripleDdM1", "oscillator_triple_dd_m1", "oscillator-triple-dd-m1",
    "Triple oscillator (seed 001 A.2), displacement-displacement coupling, subsystem M1: mass 1 with its copy of the coupling spring-damper to mass 3",
    docs::DD_M1, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G1);
        v.extend(spring::<Self, 1, 0, 0>(KC1, CC1, XI, XI_DOT));
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (seed 001 A.2: 10 m/s)"));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Displacement-displacement, subsystem M2 (eq. 53).
    TripleDdM2, 1, 0, mass_2(KC[1]),
    "OscillatorTripleDdM2", "oscillator_triple_dd_m2", "oscillator-triple-dd-m2",
    "Triple oscillator (seed 001 A.2), displacement-displacement coupling, subsystem M2: mass 2 with its copy of the coupling spring-damper to mass 3",
    docs::DD_M2, SOURCE,
    {
        let mut v = ground::<Self, 1, 0>(&G2);
        v.extend(spring::<Self, 1, 0, 0>(KC2, CC2, XI, XI_DOT));
        v.extend(initial_state::<Self, 1, 0>("Initial velocity (seed 001 A.2: 5 m/s)"));
        v.extend(state_outputs::<Self, 1, 0>());
        v
    }
);

body_model!(
    /// Displacement-displacement, subsystem M3 (eq. 54): mass 3 with its copies of both
    /// coupling spring-dampers; inputs the positions and velocities of masses 1 and 2.
    TripleDdM3, 2, 0, Mass::new(M3, K[2], V0[2], [CouplingSpring::new(KC[0], 0.0), CouplingSpring::new(KC[1], 0.0)]),
    "OscillatorTripleDdM3", "oscillator_triple_dd_m3", "oscillator-triple-dd-m3",
    "Triple oscillator (seed 001 A.2), displacement-displacement coupling, subsystem M3: mass 3 with its copies of both coupling spring-dampers",
    docs::DD_M3, SOURCE,
    {
        let mut v = ground::<Self, 2, 0>(&G3);
        v.extend(spring::<Self, 2, 0, 0>(KC1, CC1, ("eta1", "Position of mass 1 (coupling input)"), ("eta1_dot", "Velocity of mass 1 (coupling input)")));
        v.extend(spring::<Self, 2, 0, 1>(KC2, CC2, ("eta2", "Position of mass 2 (coupling input)"), ("eta2_dot", "Velocity of mass 2 (coupling input)")));
        v.extend(initial_state::<Self, 2, 0>("Initial velocity (seed 001 A.2: -10 m/s)"));
        v.extend(state_outputs::<Self, 2, 0>());
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
                "</p><p>Triple oscillator of seed 001 A.2 (Fig. 20, eq. 42): m1 = 10 kg, m2 = 25 kg, m3 = 100 kg; \
k1 = 10 N/m, k2 = 5 N/m, k3 = 100 N/m; kc1 = kc2 = 100 N/m (kc1 ties masses 1 and 3, kc2 masses 2 and 3); every \
damper c1 = c2 = c3 = cc1 = cc2 = 0; x1(0) = x2(0) = x3(0) = 0, v1(0) = 10 m/s, v2(0) = 5 m/s, v3(0) = −10 m/s. \
Monolithic solution z(t) = e^{A t} z0 with A of eqs. 44–46 (the paper's K[3][3] is printed divided by m2: it is \
−(k3 + kc1 + kc2)/m3, as eq. 42 and eq. 46 show).</p>\
<p>Integration: classical RK4, ceil(H/h_max) equal sub-steps per communication step H (h_max = 0.1 ms); inputs are \
evaluated at every stage from the polynomial set by fmi2SetRealInputDerivatives (held when none is set). Output \
derivatives of order 1 are exact at the current state with the inputs held.</p>"
            );
        };
    }
    doc!(FD_M1, "m1 ẍ1 + (c1 + cc1) ẋ1 − cc1 ξ̇ + (k1 + kc1) x1 − kc1 ξ = 0 (eq. 47, f1 = 0); F = kc1 (x1 − ξ) + cc1 (ẋ1 − ξ̇) (eq. 49). Inputs ξ = xi, ξ̇ = xi_dot (mass 3); F depends directly on both.");
    doc!(FD_M2, "m2 ẍ2 + (c2 + cc2) ẋ2 − cc2 ξ̇ + (k2 + kc2) x2 − kc2 ξ = 0 (eq. 48, f2 = 0); F = kc2 (x2 − ξ) + cc2 (ẋ2 − ξ̇) (eq. 50). Inputs ξ = xi, ξ̇ = xi_dot (mass 3); F depends directly on both.");
    doc!(FD_M3, "m3 ẍ3 + c3 ẋ3 + k3 x3 = F1 + F2 (eq. 51, f3 = 0; f3c = F1 + F2 from M1 and M2). Outputs x = ξ, v = ξ̇ for M1 and M2.");
    doc!(
        DD_M1,
        "m1 ẍ1 + (c1 + cc1) ẋ1 − cc1 ξ̇ + (k1 + kc1) x1 − kc1 ξ = 0 (eq. 52). Inputs ξ = xi, ξ̇ = xi_dot (mass 3)."
    );
    doc!(
        DD_M2,
        "m2 ẍ2 + (c2 + cc2) ẋ2 − cc2 ξ̇ + (k2 + kc2) x2 − kc2 ξ = 0 (eq. 53). Inputs ξ = xi, ξ̇ = xi_dot (mass 3)."
    );
    doc!(DD_M3, "m3 ẍ3 + (c3 + cc1 + cc2) ẋ3 − cc1 η̇1 − cc2 η̇2 + (k3 + kc1 + kc2) x3 − kc1 η1 − kc2 η2 = 0 (eq. 54). Inputs η1 = eta1, η̇1 = eta1_dot (mass 1), η2 = eta2, η̇2 = eta2_dot (mass 2).");
}
