//! The diagnostic outputs of every model that integrates a mechanism (the mechanism FMUs here and
//! the unified FMUs of `fmu-unified`): energies (seed 004 Fig. 8), constraint violation norms
//! (Fig. 9) and Newton counters. One declaration, so both kinds of FMU name and describe them
//! alike.

use crate::solver::Violation;
use fmu_export::{StateVisitor, Variable};

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

/// The solver counters, one field per [`Counter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Largest Newton iteration count of the internal steps of the last communication step.
    pub iterations: i32,
    /// Newton iterations since initialization.
    pub iterations_total: i32,
    /// Internal steps since initialization.
    pub steps_total: i32,
    /// Restarts (input jumps handled) since initialization.
    pub restarts: i32,
}

impl Counters {
    /// A counter's value.
    pub fn get(&self, c: Counter) -> i32 {
        match c {
            Counter::Iterations => self.iterations,
            Counter::IterationsTotal => self.iterations_total,
            Counter::StepsTotal => self.steps_total,
            Counter::Restarts => self.restarts,
        }
    }

    /// A counter, mutable.
    pub fn get_mut(&mut self, c: Counter) -> &mut i32 {
        match c {
            Counter::Iterations => &mut self.iterations,
            Counter::IterationsTotal => &mut self.iterations_total,
            Counter::StepsTotal => &mut self.steps_total,
            Counter::Restarts => &mut self.restarts,
        }
    }

    /// Books a communication step of `steps` internal steps: `max_iterations` the largest Newton
    /// count among them, `iterations_total` the Newton iterations since initialization, `restarted`
    /// whether it began with a restart. Saturates at `i32::MAX`.
    pub fn book_step(&mut self, max_iterations: u32, iterations_total: i64, steps: u64, restarted: bool) {
        self.iterations = i32::try_from(max_iterations).unwrap_or(i32::MAX);
        self.iterations_total = i32::try_from(iterations_total).unwrap_or(i32::MAX);
        self.steps_total = self.steps_total.saturating_add(i32::try_from(steps).unwrap_or(i32::MAX));
        if restarted {
            self.restarts = self.restarts.saturating_add(1);
        }
    }

    /// The counters' part of the FMU state.
    pub fn visit(&mut self, v: &mut dyn StateVisitor) {
        for x in [&mut self.iterations, &mut self.iterations_total, &mut self.steps_total, &mut self.restarts] {
            visit_integer(x, v);
        }
    }
}

/// An `i32` as an integer of the FMU state (a value that does not fit reads back as 0).
pub fn visit_integer(x: &mut i32, v: &mut dyn StateVisitor) {
    let mut k = i64::from(*x);
    v.integer(&mut k);
    *x = i32::try_from(k).unwrap_or(0);
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
    /// The solver counters.
    fn counters(&self) -> &Counters;
    /// The solver counters, mutable (FMU state restore through the variable table).
    fn counters_mut(&mut self) -> &mut Counters;
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
            |m: &M| m.counters().get(Counter::Iterations),
            |m, x| *m.counters_mut().get_mut(Counter::Iterations) = x,
        )
        .discrete_output(),
        Variable::integer(
            "newton_iterations_total",
            "Newton iterations since initialization (average = newton_iterations_total / steps_total)",
            |m: &M| m.counters().get(Counter::IterationsTotal),
            |m, x| *m.counters_mut().get_mut(Counter::IterationsTotal) = x,
        )
        .discrete_output(),
        Variable::integer(
            "steps_total",
            "Internal steps since initialization",
            |m: &M| m.counters().get(Counter::StepsTotal),
            |m, x| *m.counters_mut().get_mut(Counter::StepsTotal) = x,
        )
        .discrete_output(),
        Variable::integer(
            "restarts",
            "Communication points where an input jumped and the step was restarted",
            |m: &M| m.counters().get(Counter::Restarts),
            |m, x| *m.counters_mut().get_mut(Counter::Restarts) = x,
        )
        .discrete_output(),
    ]
}
