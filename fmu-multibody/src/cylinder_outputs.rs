//! The cylinder-motion outputs s, ṡ, s̈ of every model that integrates a mechanism (the mechanism
//! FMUs here and the unified FMUs of `fmu-unified`): one declaration, so both kinds of FMU name,
//! describe and differentiate them alike (s carries ṡ and s̈ as its output derivatives, ṡ carries s̈).

use crate::mechanism::Kinematics;
use fmu_export::Variable;

/// What the cylinder-motion outputs read.
pub trait CylinderMotion: 'static {
    /// Length, velocity and acceleration of cylinder `k` at the end of the last step.
    fn kinematics(&self, k: usize) -> Kinematics;
}

/// Outputs s and ṡ of cylinder `K`, named `names[0]`, `names[1]`.
pub fn length_and_velocity<T: CylinderMotion, const K: usize>(names: &[&'static str; 3]) -> [Variable<T>; 2] {
    [
        Variable::output(names[0], "m", "Cylinder length s at the end of the last step", |m: &T| m.kinematics(K).s)
            .depends_on(&[])
            .output_derivatives(2, |m, order| if order == 1 { m.kinematics(K).s_dot } else { m.kinematics(K).s_ddot }),
        Variable::output(names[1], "m/s", "Cylinder velocity ds/dt", |m: &T| m.kinematics(K).s_dot)
            .depends_on(&[])
            .output_derivatives(1, |m, _| m.kinematics(K).s_ddot),
    ]
}

/// Output s̈ of cylinder `K`, named `names[2]` (the description says where the model's accelerations
/// come from).
pub fn acceleration<T: CylinderMotion, const K: usize>(
    names: &[&'static str; 3],
    description: &'static str,
) -> Variable<T> {
    Variable::output(names[2], "m/s2", description, |m: &T| m.kinematics(K).s_ddot).depends_on(&[])
}
