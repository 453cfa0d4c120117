//! The four oscillator FMUs: force-displacement (fd) and displacement-displacement (dd)
//! decompositions of the double oscillator, seed 001 §A.1 Figs. 18–19.

use crate::subsystem::{Coupling, PointMass, DAMPING};
use fmu_export::{CoSimModel, Context, ModelError, ModelInfo, StateVisitor, Variable};
use model_description::DependencyKind;

/// Access to the point mass inside each FMU's model type.
pub trait HasMass: Clone + Default + Send + 'static {
    /// The subsystem.
    fn pm(&self) -> &PointMass;
    /// The subsystem, mutable.
    fn pm_mut(&mut self) -> &mut PointMass;
}

const SOURCE: &str = "González, Rahikainen et al., Notes on Co-Simulation (seed 001), Appendix A.1, eqs. 34-41";
const EXPERIMENT: (f64, f64, f64) = (0.0, 10.0, 1e-3);

/// Names of the mass, stiffness and damper parameters of one side.
struct Names {
    m: &'static str,
    k: &'static str,
    c: &'static str,
}

const M1: Names = Names { m: "m1", k: "k1", c: "c1" };
const M2: Names = Names { m: "m2", k: "k2", c: "c2" };

/// Parameters of the mass and its ground spring/damper, damping case, initial state, h_max.
fn mass_parameters<M: HasMass>(n: &Names, coupling_here: bool) -> Vec<Variable<M>> {
    let mut v = vec![
        Variable::parameter(
            n.m,
            "kg",
            "Point mass (seed 001 A.1: 1 kg)",
            |s: &M| s.pm().m,
            |s: &mut M, x| s.pm_mut().m = x,
        )
        .min(1e-12),
        Variable::parameter(
            n.k,
            "N/m",
            "Stiffness of the spring to ground",
            |s: &M| s.pm().k,
            |s: &mut M, x| s.pm_mut().k = x,
        )
        .min(0.0),
        Variable::enumeration(
            "damping",
            &DAMPING,
            "Damping case of seed 001 A.1 (c1 = c2 = cc); custom uses the damper parameters",
            |s: &M| s.pm().damping,
            |s: &mut M, x| s.pm_mut().damping = x,
        ),
        Variable::parameter(
            n.c,
            "N.s/m",
            "Damper to ground, used when damping = custom",
            |s: &M| s.pm().c,
            |s: &mut M, x| s.pm_mut().c = x,
        )
        .min(0.0),
    ];
    if coupling_here {
        v.push(
            Variable::parameter(
                "kc",
                "N/m",
                "Coupling spring stiffness (seed 001 A.1: 100 N/m)",
                |s: &M| s.pm().kc,
                |s: &mut M, x| s.pm_mut().kc = x,
            )
            .min(0.0),
        );
        v.push(
            Variable::parameter(
                "cc",
                "N.s/m",
                "Coupling damper, used when damping = custom",
                |s: &M| s.pm().cc,
                |s: &mut M, x| s.pm_mut().cc = x,
            )
            .min(0.0),
        );
    }
    v.push(Variable::parameter(
        "x0",
        "m",
        "Initial position (deflection from equilibrium)",
        |s: &M| s.pm().x0,
        |s: &mut M, x| s.pm_mut().x0 = x,
    ));
    v.push(Variable::parameter("v0", "m/s", "Initial velocity", |s: &M| s.pm().v0, |s: &mut M, x| s.pm_mut().v0 = x));
    v.push(
        Variable::parameter(
            "h_max",
            "s",
            "Largest internal RK4 step; each communication step H is split into ceil(H/h_max) equal sub-steps",
            |s: &M| s.pm().h_max,
            |s: &mut M, x| s.pm_mut().h_max = x,
        )
        .min(1e-9),
    );
    v
}

/// Outputs x and v of the mass (no direct feedthrough).
fn state_outputs<M: HasMass>() -> Vec<Variable<M>> {
    vec![
        Variable::output("x", "m", "Position of this subsystem's mass", |s: &M| s.pm().x)
            .depends_on(&[])
            .output_derivatives(1, |s: &M, _| s.pm().v),
        Variable::output("v", "m/s", "Velocity of this subsystem's mass", |s: &M| s.pm().v)
            .depends_on(&[])
            .output_derivatives(1, |s: &M, _| {
                let p = s.pm();
                p.acceleration(p.x, p.v, 0.0)
            }),
    ]
}

/// Position and velocity inputs of the other mass.
fn position_inputs<M: HasMass>(pos: &'static str, vel: &'static str) -> Vec<Variable<M>> {
    vec![
        Variable::input(
            pos,
            "m",
            "Position of the other subsystem's mass (coupling input)",
            |s: &M| s.pm().u0.value,
            |s: &mut M| &mut s.pm_mut().u0,
        ),
        Variable::input(
            vel,
            "m/s",
            "Velocity of the other subsystem's mass (coupling input)",
            |s: &M| s.pm().u1.value,
            |s: &mut M| &mut s.pm_mut().u1,
        ),
    ]
}

macro_rules! oscillator_model {
    ($(#[$doc:meta])* $name:ident, $coupling:expr, $m:expr, $k:expr, $v0:expr,
     $model_name:literal, $id:literal, $fmu:literal, $descr:literal, $docs:expr, $vars:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub PointMass);

        impl Default for $name {
            fn default() -> Self {
                Self(PointMass::new($coupling, $m, $k, $v0))
            }
        }

        impl HasMass for $name {
            fn pm(&self) -> &PointMass {
                &self.0
            }
            fn pm_mut(&mut self) -> &mut PointMass {
                &mut self.0
            }
        }

        impl CoSimModel for $name {
            fn info() -> ModelInfo {
                ModelInfo {
                    model_name: $model_name,
                    model_identifier: $id,
                    fmu_name: $fmu,
                    description: $descr,
                    documentation_html: $docs,
                    source: SOURCE,
                    default_experiment: EXPERIMENT,
                    interpolates_inputs: true,
                }
            }
            fn variables() -> Vec<Variable<Self>> {
                $vars
            }
            fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
                self.0.initialize()
            }
            fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
                self.0.do_step(t, h, ctx)
            }
            fn visit_state(&mut self, v: &mut dyn StateVisitor) {
                self.0.visit(v)
            }
        }
    };
}

oscillator_model!(
    /// Force-displacement, subsystem M1 (eqs. 37–38): computes the coupling force from its own
    /// mass and the input position/velocity ξ, ξ̇ of mass 2.
    ForceDisplacementM1, Coupling::Spring, 1.0, 10.0, 100.0,
    "OscillatorFdM1", "oscillator_fd_m1", "oscillator-fd-m1",
    "Double oscillator (seed 001 A.1), force-displacement coupling, subsystem M1: mass 1 with the coupling spring-damper; outputs the coupling force",
    const_format_docs::FD_M1,
    {
        let mut v = mass_parameters::<ForceDisplacementM1>(&M1, true);
        v.extend(position_inputs("xi", "xi_dot"));
        v.push(
            Variable::output("F", "N", "Coupling force on mass 2, fc = kc (x1 - xi) + cc (x1_dot - xi_dot) (eq. 38)", |s: &Self| {
                s.0.coupling_force(s.0.x, s.0.v, 0.0)
            })
            .depends_on(&[("xi", DependencyKind::Fixed), ("xi_dot", DependencyKind::Fixed)])
            .output_derivatives(1, |s: &Self, _| s.0.coupling_force_rate()),
        );
        v.extend(state_outputs());
        v
    }
);

oscillator_model!(
    /// Force-displacement, subsystem M2 (eq. 39): driven by the coupling force.
    ForceDisplacementM2, Coupling::Force, 1.0, 1000.0, -100.0,
    "OscillatorFdM2", "oscillator_fd_m2", "oscillator-fd-m2",
    "Double oscillator (seed 001 A.1), force-displacement coupling, subsystem M2: mass 2 driven by the coupling force input",
    const_format_docs::FD_M2,
    {
        let mut v = mass_parameters::<ForceDisplacementM2>(&M2, false);
        v.push(Variable::input("F", "N", "Coupling force fc from subsystem M1 (eq. 39)", |s: &Self| s.0.u0.value, |s: &mut Self| {
            &mut s.0.u0
        }));
        v.extend(state_outputs());
        v
    }
);

oscillator_model!(
    /// Displacement-displacement, subsystem M1 (eq. 40).
    DisplacementDisplacementM1, Coupling::Spring, 1.0, 10.0, 100.0,
    "OscillatorDdM1", "oscillator_dd_m1", "oscillator-dd-m1",
    "Double oscillator (seed 001 A.1), displacement-displacement coupling, subsystem M1: mass 1 with its own copy of the coupling spring-damper",
    const_format_docs::DD_M1,
    {
        let mut v = mass_parameters::<DisplacementDisplacementM1>(&M1, true);
        v.extend(position_inputs("xi", "xi_dot"));
        v.extend(state_outputs());
        v
    }
);

oscillator_model!(
    /// Displacement-displacement, subsystem M2 (eq. 41).
    DisplacementDisplacementM2, Coupling::Spring, 1.0, 1000.0, -100.0,
    "OscillatorDdM2", "oscillator_dd_m2", "oscillator-dd-m2",
    "Double oscillator (seed 001 A.1), displacement-displacement coupling, subsystem M2: mass 2 with its own copy of the coupling spring-damper",
    const_format_docs::DD_M2,
    {
        let mut v = mass_parameters::<DisplacementDisplacementM2>(&M2, true);
        v.extend(position_inputs("eta", "eta_dot"));
        v.extend(state_outputs());
        v
    }
);

/// Per-FMU documentation fragments (equations), each with the common text.
mod const_format_docs {
    macro_rules! doc {
        ($name:ident, $eq:literal) => {
            pub const $name: &str = concat!(
                "<p><b>Equations:</b> ",
                $eq,
                "</p><p>Double oscillator of seed 001 A.1: m1 = m2 = 1 kg, k1 = 10 N/m, k2 = 1000 N/m, kc = 100 N/m; \
damping case 1: c = 0, case 2: c = 0.01 N·s/m, case 3: c = 10 N·s/m (c1 = c2 = cc); x1(0) = x2(0) = 0, v1(0) = 100 m/s, \
v2(0) = −100 m/s; 10 s. Monolithic solution z(t) = e^{A t} z0, eqs. 35–36.</p>\
<p>Integration: classical RK4, ceil(H/h_max) equal sub-steps per communication step H (h_max = 0.1 ms); inputs are \
evaluated at every stage from the polynomial set by fmi2SetRealInputDerivatives (held when none is set). Output \
derivatives of order 1 are exact at the current state with the inputs held.</p>"
            );
        };
    }
    doc!(FD_M1, "m1 ẍ1 + (c1 + cc) ẋ1 − cc ξ̇ + (k1 + kc) x1 − kc ξ = 0 (eq. 37); F = kc (x1 − ξ) + cc (ẋ1 − ξ̇) (eq. 38). Inputs ξ = xi, ξ̇ = xi_dot; F depends directly on both.");
    doc!(
        FD_M2,
        "m2 ẍ2 + c2 ẋ2 + k2 x2 = F (eq. 39, external force f2 = 0). Input F; outputs x = ξ, v = ξ̇ for subsystem M1."
    );
    doc!(DD_M1, "m1 ẍ1 + (c1 + cc) ẋ1 − cc ξ̇ + (k1 + kc) x1 − kc ξ = 0 (eq. 40). Inputs ξ = xi, ξ̇ = xi_dot (mass 2).");
    doc!(
        DD_M2,
        "m2 ẍ2 + (c2 + cc) ẋ2 − cc η̇ + (k2 + kc) x2 − kc η = 0 (eq. 41). Inputs η = eta, η̇ = eta_dot (mass 1)."
    );
}
