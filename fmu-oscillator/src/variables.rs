//! Variable tables of the [`Mass`] subsystems (triple and nonlinear oscillators): parameters of
//! the mass and its ground spring-damper, coupling spring-dampers with their position/velocity
//! inputs, coupling-force inputs and outputs, and the macro that turns a table into a
//! [`fmu_export::CoSimModel`].

use crate::coupled::Mass;
use fmu_export::Variable;
use model_description::DependencyKind;

/// Access to the mass inside an FMU's model type.
pub trait HasBody<const S: usize, const F: usize>: Clone + Default + Send + 'static {
    /// The subsystem.
    fn body(&self) -> &Mass<S, F>;
    /// The subsystem, mutable.
    fn body_mut(&mut self) -> &mut Mass<S, F>;
}

/// Names and descriptions of the mass, ground spring and ground damper parameters.
pub struct GroundNames {
    /// Mass parameter name and description.
    pub m: (&'static str, &'static str),
    /// Ground spring stiffness name and description.
    pub k: (&'static str, &'static str),
    /// Ground damper name and description.
    pub c: (&'static str, &'static str),
}

/// Parameters m, k, c of the mass and its ground spring-damper.
pub fn ground<M: HasBody<S, F>, const S: usize, const F: usize>(n: &GroundNames) -> Vec<Variable<M>> {
    vec![
        Variable::parameter(n.m.0, "kg", n.m.1, |s: &M| s.body().m, |s: &mut M, x| s.body_mut().m = x).min(1e-12),
        Variable::parameter(n.k.0, "N/m", n.k.1, |s: &M| s.body().k, |s: &mut M, x| s.body_mut().k = x).min(0.0),
        Variable::parameter(n.c.0, "N.s/m", n.c.1, |s: &M| s.body().c, |s: &mut M, x| s.body_mut().c = x).min(0.0),
    ]
}

/// Orders n and m of the spring and damper laws (eqs. 55–56).
pub fn orders<M: HasBody<S, F>, const S: usize, const F: usize>() -> Vec<Variable<M>> {
    vec![
        Variable::parameter(
            "n",
            "1",
            "Order n of every spring law, F = k |x/(1 m)|^(n-1) x (eq. 55); seed 001 A.3: linear springs, n = 1",
            |s: &M| s.body().n,
            |s: &mut M, x| s.body_mut().n = x,
        )
        .min(1.0),
        Variable::parameter(
            "m",
            "1",
            "Order m of every damper law, F = c |v/(1 m/s)|^(m-1) v (eq. 56; the paper's m, not a mass); default 3 (cubic damping)",
            |s: &M| s.body().m_d,
            |s: &mut M, x| s.body_mut().m_d = x,
        )
        .min(1.0),
    ]
}

/// Parameters kc, cc and inputs ξ, ξ̇ of coupling spring `J`.
pub fn spring<M: HasBody<S, F>, const S: usize, const F: usize, const J: usize>(
    kc: (&'static str, &'static str),
    cc: (&'static str, &'static str),
    xi: (&'static str, &'static str),
    xi_dot: (&'static str, &'static str),
) -> Vec<Variable<M>> {
    vec![
        Variable::parameter(
            kc.0,
            "N/m",
            kc.1,
            |s: &M| s.body().springs[J].kc,
            |s: &mut M, x| s.body_mut().springs[J].kc = x,
        )
        .min(0.0),
        Variable::parameter(
            cc.0,
            "N.s/m",
            cc.1,
            |s: &M| s.body().springs[J].cc,
            |s: &mut M, x| s.body_mut().springs[J].cc = x,
        )
        .min(0.0),
        Variable::input(
            xi.0,
            "m",
            xi.1,
            |s: &M| s.body().springs[J].xi.value,
            |s: &mut M| &mut s.body_mut().springs[J].xi,
        ),
        Variable::input(
            xi_dot.0,
            "m/s",
            xi_dot.1,
            |s: &M| s.body().springs[J].xi_dot.value,
            |s: &mut M| &mut s.body_mut().springs[J].xi_dot,
        ),
    ]
}

/// Coupling-force input `I`.
pub fn force_input<M: HasBody<S, F>, const S: usize, const F: usize, const I: usize>(
    name: &'static str,
    description: &'static str,
) -> Variable<M> {
    Variable::input(name, "N", description, |s: &M| s.body().forces[I].value, |s: &mut M| &mut s.body_mut().forces[I])
}

/// Output F: the force of coupling spring 0 on the other mass (eqs. 49–50, 68); it depends
/// directly on the inputs ξ, ξ̇ named in `inputs`.
pub fn force_output<M: HasBody<S, F>, const S: usize, const F: usize>(
    description: &'static str,
    inputs: &'static [(&'static str, DependencyKind)],
) -> Variable<M> {
    Variable::output("F", "N", description, |s: &M| {
        let b = s.body();
        b.coupling_force(0, b.x, b.v, 0.0)
    })
    .depends_on(inputs)
    .output_derivatives(1, |s: &M, _| s.body().coupling_force_rate(0))
}

/// Initial state and internal step: x0, v0, h_max.
pub fn initial_state<M: HasBody<S, F>, const S: usize, const F: usize>(v0: &'static str) -> Vec<Variable<M>> {
    vec![
        Variable::parameter(
            "x0",
            "m",
            "Initial position (deflection from equilibrium)",
            |s: &M| s.body().x0,
            |s: &mut M, x| s.body_mut().x0 = x,
        ),
        Variable::parameter("v0", "m/s", v0, |s: &M| s.body().v0, |s: &mut M, x| s.body_mut().v0 = x),
        Variable::parameter(
            "h_max",
            "s",
            "Largest internal RK4 step; each communication step H is split into ceil(H/h_max) equal sub-steps",
            |s: &M| s.body().h_max,
            |s: &mut M, x| s.body_mut().h_max = x,
        )
        .min(1e-9),
    ]
}

/// Outputs x and v of the mass (no direct feedthrough), with their first derivatives.
pub fn state_outputs<M: HasBody<S, F>, const S: usize, const F: usize>() -> Vec<Variable<M>> {
    vec![
        Variable::output("x", "m", "Position of this subsystem's mass", |s: &M| s.body().x)
            .depends_on(&[])
            .output_derivatives(1, |s: &M, _| s.body().v),
        Variable::output("v", "m/s", "Velocity of this subsystem's mass", |s: &M| s.body().v)
            .depends_on(&[])
            .output_derivatives(1, |s: &M, _| {
                let b = s.body();
                b.acceleration(b.x, b.v, 0.0)
            }),
    ]
}

/// Declares a model type around a [`Mass`] and implements [`fmu_export::CoSimModel`] for it.
macro_rules! body_model {
    ($(#[$doc:meta])* $name:ident, $s:literal, $f:literal, $default:expr,
     $model_name:literal, $id:literal, $fmu:literal, $descr:literal, $docs:expr, $source:expr, $vars:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub $crate::coupled::Mass<$s, $f>);

        impl Default for $name {
            fn default() -> Self {
                Self($default)
            }
        }

        impl $crate::variables::HasBody<$s, $f> for $name {
            fn body(&self) -> &$crate::coupled::Mass<$s, $f> {
                &self.0
            }
            fn body_mut(&mut self) -> &mut $crate::coupled::Mass<$s, $f> {
                &mut self.0
            }
        }

        impl fmu_export::CoSimModel for $name {
            fn info() -> fmu_export::ModelInfo {
                fmu_export::ModelInfo {
                    model_name: $model_name,
                    model_identifier: $id,
                    fmu_name: $fmu,
                    description: $descr,
                    documentation_html: $docs,
                    source: $source,
                    default_experiment: (0.0, 10.0, 1e-3),
                    interpolates_inputs: true,
                }
            }
            fn variables() -> Vec<fmu_export::Variable<Self>> {
                $vars
            }
            fn initialize(&mut self, _t0: f64, _ctx: &mut fmu_export::Context) -> Result<(), fmu_export::ModelError> {
                self.0.initialize()
            }
            fn do_step(&mut self, t: f64, h: f64, _ctx: &mut fmu_export::Context) -> Result<(), fmu_export::ModelError> {
                self.0.do_step(t, h)
            }
            fn visit_state(&mut self, v: &mut dyn fmu_export::StateVisitor) {
                self.0.visit(v)
            }
        }
    };
}
pub(crate) use body_model;
