//! The diagnostic outputs of every model that integrates a mechanism (the mechanism FMUs here and
//! the unified FMUs of `fmu-unified`): energies (seed 004 Fig. 8), constraint violation norms
//! (Fig. 9) and Newton counters. One declaration, so both kinds of FMU name and describe them
//! alike.

use crate::solver::Violation;
use fmu_export::Variable;

/// A solver counter exposed as a discrete output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Largest Newton iteration count of the internal steps of the last communication step.
    Iterations,
    /// Newton iterations since initialization.
    IterationsTotal,
    /// Internal steps since initialization.
    StepsTotal,
    /// Communication points where an input jumped and the step was restarted.
    Restarts,
}

/// What the diagnostic outputs read.
pub trait Diagnostics: 'static {
    /// Kinetic energy ½ q̇ᵀ M q̇ (J).
    fn kinetic_energy(&self) -> f64;
    /// Potential energy of gravity, datum y = 0 (J).
    fn potential_energy(&self) -> f64;
    /// Actuator work ∫ Σ F ṡ dt (J).
    fn actuator_work(&self) -> f64;
    /// E_kin + E_pot − W_act − E(t0) (J).
    fn energy_balance(&self) -> f64;
    /// Constraint violation norms.
    fn violation(&self) -> Violation;
    /// ‖Φ‖ alone (the output `phi`, read after every step): a model overrides the three levels to
    /// skip the work of the other two.
    fn violation_position(&self) -> f64 {
        self.violation().position
    }
    /// ‖Φ_q q̇‖ alone.
    fn violation_velocity(&self) -> f64 {
        self.violation().velocity
    }
    /// ‖Φ_q q̈ + Φ̇_q q̇‖ alone.
    fn violation_acceleration(&self) -> f64 {
        self.violation().acceleration
    }
    /// A counter's value.
    fn counter(&self, c: Counter) -> i32;
    /// Sets a counter (FMU state restore through the variable table).
    fn set_counter(&mut self, c: Counter, value: i32);
}

/// The outputs E_kin, E_pot, W_act, E_balance, phi, phi_dot, phi_ddot and the counters
/// newton_iterations, newton_iterations_total, steps_total, restarts.
pub fn variables<M: Diagnostics>() -> Vec<Variable<M>> {
    vec![
        Variable::output("E_kin", "J", "Kinetic energy 1/2 qd^T M qd", |m: &M| m.kinetic_energy()).depends_on(&[]),
        Variable::output("E_pot", "J", "Potential energy of gravity (datum y = 0)", |m: &M| m.potential_energy())
            .depends_on(&[]),
        Variable::output(
            "W_act",
            "J",
            "Actuator work: integral of sum F s_dot dt by the trapezoidal rule over each internal step, with the forces the solver used (including friction and dampers where the model has them)",
            |m: &M| m.actuator_work(),
        )
        .depends_on(&[]),
        Variable::output(
            "E_balance",
            "J",
            "Energy balance E_kin + E_pot - W_act - (E_kin + E_pot)(t0) (seed 004 Fig. 8): zero for exact energy conservation",
            |m: &M| m.energy_balance(),
        )
        .depends_on(&[]),
        Variable::output("phi", "", "Position-level constraint violation norm |Phi|", |m: &M| m.violation_position())
            .depends_on(&[]),
        Variable::output("phi_dot", "", "Velocity-level constraint violation norm |Phi_q qd|", |m: &M| {
            m.violation_velocity()
        })
        .depends_on(&[]),
        Variable::output(
            "phi_ddot",
            "",
            "Acceleration-level constraint violation norm |Phi_q qdd + dPhi_q/dt qd|",
            |m: &M| m.violation_acceleration(),
        )
        .depends_on(&[]),
        Variable::integer(
            "newton_iterations",
            "Largest Newton iteration count of the internal steps of the last communication step",
            |m: &M| m.counter(Counter::Iterations),
            |m, x| m.set_counter(Counter::Iterations, x),
        )
        .discrete_output(),
        Variable::integer(
            "newton_iterations_total",
            "Newton iterations since initialization (average = newton_iterations_total / steps_total)",
            |m: &M| m.counter(Counter::IterationsTotal),
            |m, x| m.set_counter(Counter::IterationsTotal, x),
        )
        .discrete_output(),
        Variable::integer(
            "steps_total",
            "Internal steps since initialization",
            |m: &M| m.counter(Counter::StepsTotal),
            |m, x| m.set_counter(Counter::StepsTotal, x),
        )
        .discrete_output(),
        Variable::integer(
            "restarts",
            "Communication points where an input jumped and the step was restarted",
            |m: &M| m.counter(Counter::Restarts),
            |m, x| m.set_counter(Counter::Restarts, x),
        )
        .discrete_output(),
    ]
}
