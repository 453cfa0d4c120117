//! The FMU model shared by every mechanism FMU: parameters, inputs (cylinder forces, or chamber
//! pressures), the solver loop over internal steps with the restart at input jumps, outputs and
//! diagnostics. A [`Variant`] supplies the mechanism, the variable names and the documentation;
//! [`crate::variants`] defines the six FMUs.
//!
//! Feedthrough: s, ṡ, s̈ and the diagnostics are results of the last step (s̈ is the projected
//! acceleration at its end, computed with the input the step used); setting a new input does
//! not change them, so they have no direct feedthrough. Only the cylinder force output of the
//! pressure variants, F = p1 A1 − p2 A2 − c ṡ + F_d, is evaluated from the current pressures
//! and depends on them directly.

use crate::cylinder::Cylinder;
use crate::cylinder_outputs::{self, CylinderMotion};
use crate::diagnostics::{visit_integer, Counters};
use crate::internal_step::{self, HasInternalStep, InternalStep};
use crate::lu::Lu;
use crate::mechanism::{
    actuator_power, interface_model, static_forces, CylinderForce, ForceLaw, InterfaceModel, Kinematics, Mechanism,
    MAX_ACTUATORS,
};
use crate::solver::{self, consistent_accelerations_factored, Method, Settings, State, Violation};
use fmu_export::{CoSimModel, Context, EnumType, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};
use model_description::DependencyKind;
use std::marker::PhantomData;

/// Number of generalized coordinates of every mechanism here.
pub const N: usize = 5;
/// Most real inputs of a variant (two pressures per cylinder).
pub const MAX_INPUTS: usize = 2 * MAX_ACTUATORS;

/// `Solver` enumeration.
pub static SOLVER: EnumType = EnumType {
    name: "Solver",
    description: "Multibody formulation and integrator",
    items: &[
        ("I3AL-P", 1, "index-3 augmented Lagrangian with projections, trapezoidal rule, positions primary"),
        ("I1AL", 2, "index-1 augmented Lagrangian with Baumgarte-like terms, trapezoidal rule, accelerations primary"),
    ],
};

/// Per-cylinder variable names of a variant.
#[derive(Debug)]
pub struct CylinderNames {
    /// Force input (force coupling) or force output (pressure coupling), e.g. `F`, `F1`.
    pub force: &'static str,
    /// Length, velocity, acceleration outputs.
    pub s: [&'static str; 3],
    /// Pressure inputs p1 (piston side), p2 (rod side) of the pressure variants.
    pub pressures: [&'static str; 2],
    /// Dependencies of the force output on the pressure inputs (pressure variants).
    pub force_deps: &'static [(&'static str, DependencyKind)],
    /// Calculated parameters: static force, initial length, static p1 (pressure variants).
    pub calculated: [&'static str; 3],
    /// Cylinder parameters of the pressure variants, in the order of [`CYLINDER_PARAMETERS`].
    pub params: [&'static str; 9],
    /// Interface-model outputs: this cylinder's row of m_eff (one entry per cylinder), f_eff.
    pub im: ([&'static str; MAX_ACTUATORS], &'static str),
}

/// (unit, description, min) of the cylinder parameters, in the order of
/// [`CylinderNames::params`]: A1, A2, c, l_d, k_d, c_d, l10, l20, p2_0.
pub const CYLINDER_PARAMETERS: [(&str, &str, f64); 9] = [
    ("m2", "Piston-side area A1 (p1 acts on it and extends the cylinder)", 1e-12),
    ("m2", "Rod-side (annulus) area A2 (p2 acts on it and retracts the cylinder)", 1e-12),
    ("N.s/m", "Viscous friction coefficient c: force -c s_dot (Pub III eq. 30)", 0.0),
    ("m", "End-damper length l_d (Pub III eq. 31); 0 disables the dampers", 0.0),
    ("N/m", "End-damper spring coefficient k_d (Pub III eq. 31)", 0.0),
    ("N.s/m", "End-damper damping coefficient c_d (Pub III eq. 31)", 0.0),
    ("m", "Piston-side chamber length at the initial cylinder length, l10", 1e-9),
    ("m", "Rod-side chamber length at the initial cylinder length, l20", 1e-9),
    ("Pa", "Rod-side pressure of the static initial state, p2_0 (start of input p2; p1 follows from F_static)", 0.0),
];

/// What distinguishes the FMUs: mechanism, coupling, names, documentation.
pub trait Variant<const M: usize>: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// The mechanism.
    type Mech: Mechanism<N, M> + Clone + std::fmt::Debug + Send + 'static;
    /// Pressure coupling (inputs p1, p2 per cylinder) instead of force coupling (input F).
    const PRESSURE: bool;
    /// Names per cylinder.
    const CYLINDERS: &'static [CylinderNames];
    /// Names and documentation.
    fn info() -> ModelInfo;
    /// The mechanism with its default parameters.
    fn mechanism() -> Self::Mech;
    /// The default cylinder (pressure variants).
    fn cylinder(k: usize) -> Cylinder;
    /// The mechanism's parameters as FMU variables.
    fn mechanism_variables() -> Vec<Variable<MbFmu<Self, M>>>;
    /// Visits the mechanism's parameters.
    fn visit_mechanism(mech: &mut Self::Mech, v: &mut dyn StateVisitor);
}

/// The FMU model of a mechanism variant `V` with `M` constraints.
#[derive(Debug, Clone)]
pub struct MbFmu<V: Variant<M>, const M: usize> {
    /// Mechanism parameters.
    pub mech: V::Mech,
    /// Cylinder parameters (pressure variants).
    pub cylinders: [Cylinder; MAX_ACTUATORS],
    /// Item of [`SOLVER`].
    pub solver: i32,
    /// Solver settings (the method and the cap are copied in at initialization).
    pub settings: Settings,
    /// Internal step and Newton iteration cap (the cap is copied into `settings` at initialization).
    pub step: InternalStep,
    /// Restart the trapezoidal step where an input jumps (diagnostic switch; default true).
    pub restart: bool,
    /// Inputs: F per cylinder, or p1, p2 per cylinder.
    pub inputs: [InputSignal; MAX_INPUTS],
    /// Static cylinder forces of the initial configuration (calculated).
    pub f_static: [f64; MAX_ACTUATORS],
    /// Initial cylinder lengths (calculated).
    pub s0: [f64; MAX_ACTUATORS],
    /// Static piston-side pressures (calculated, pressure variants).
    pub p1_static: [f64; MAX_ACTUATORS],
    /// Positions, velocities, accelerations, multipliers.
    pub state: State<N, M>,
    /// Actuator work ∫ Σ F ṡ dt (J), trapezoidal rule per internal step.
    pub work: f64,
    /// Mechanical energy at initialization (J).
    pub e0: f64,
    /// Actuator power at the end of the last step (W).
    pub power_end: f64,
    /// Input values at the end of the last step (jump detection).
    pub u_end: [f64; MAX_INPUTS],
    /// Newton iterations, internal steps and restarts.
    pub counters: Counters,
    /// The small-penalty warning was given in this run.
    pub warned: bool,
    /// A piston beyond its stroke was reported in this run (pressure variants; once).
    pub stroke_warned: bool,
    /// The outputs of the current state, evaluated once when the state changes (see [`Results`]);
    /// `None` until then, and after the state was replaced from outside (FMU state), when the
    /// getters evaluate them directly.
    pub results: Option<Results>,
    /// The interface model of the state of `results`, once read ([`MbFmu::interface_model`]).
    interface: std::cell::OnceCell<InterfaceModel>,
    /// LU factors of the (constant) mass matrix for the restart's Schur complement; `None` when M
    /// is singular. Evaluated with the parameters at initialization and state restore.
    pub mass_lu: Option<Lu<N>>,
    _variant: PhantomData<V>,
}

/// The outputs that follow from the state alone: cylinder kinematics, energies, constraint
/// violations. The export layer reads every output after every step (its finiteness check) and
/// the master reads s and ṡ again; evaluated once per step, with the same arithmetic as the
/// definitions ([`Actuator::kinematics`](crate::mechanism::Actuator::kinematics),
/// [`Mechanism::kinetic_energy`], [`solver::violation`]), so the values are the same bits.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Results {
    /// s, ṡ, s̈ per cylinder.
    pub kinematics: [Kinematics; MAX_ACTUATORS],
    /// E_kin (J).
    pub kinetic_energy: f64,
    /// E_pot (J).
    pub potential_energy: f64,
    /// Constraint violation norms.
    pub violation: Violation,
}

impl<V: Variant<M>, const M: usize> Default for MbFmu<V, M> {
    fn default() -> Self {
        let mech = V::mechanism();
        let cylinders = [V::cylinder(0), V::cylinder(1)];
        let q0 = mech.initial_positions();
        let f_static = static_forces(&mech, &q0).unwrap_or([0.0; MAX_ACTUATORS]);
        let mut m = Self {
            cylinders,
            solver: 1,
            settings: Settings::default(),
            step: InternalStep::default(),
            restart: true,
            inputs: [InputSignal::new(0.0); MAX_INPUTS],
            f_static,
            s0: [0.0; MAX_ACTUATORS],
            p1_static: [0.0; MAX_ACTUATORS],
            state: State::at_rest(q0),
            work: 0.0,
            e0: 0.0,
            power_end: 0.0,
            u_end: [0.0; MAX_INPUTS],
            counters: Counters::default(),
            warned: false,
            stroke_warned: false,
            results: None,
            interface: std::cell::OnceCell::new(),
            mass_lu: Lu::new(mech.mass_matrix()),
            mech,
            _variant: PhantomData,
        };
        m.derive_calculated();
        let starts = m.input_starts();
        for (u, x) in m.inputs.iter_mut().zip(starts) {
            u.value = x;
        }
        m.u_end = starts;
        m
    }
}

/// The cylinder forces of a variant at one instant.
struct Law<'a> {
    inputs: &'a [InputSignal; MAX_INPUTS],
    cylinders: &'a [Cylinder; MAX_ACTUATORS],
    s0: &'a [f64; MAX_ACTUATORS],
    pressure: bool,
}

impl ForceLaw for Law<'_> {
    fn force(&self, k: usize, tau: f64, s: f64, s_dot: f64) -> CylinderForce {
        if self.pressure {
            let (p1, p2) = (self.inputs[2 * k].at(tau), self.inputs[2 * k + 1].at(tau));
            self.cylinders[k].force(p1, p2, s, self.s0[k], s_dot)
        } else {
            CylinderForce { f: self.inputs[k].at(tau), df_ds: 0.0, df_dsd: 0.0 }
        }
    }
}

impl<V: Variant<M>, const M: usize> MbFmu<V, M> {
    /// Number of cylinders.
    pub fn cylinder_count() -> usize {
        V::CYLINDERS.len().min(MAX_ACTUATORS)
    }

    /// Number of real inputs.
    pub fn input_count() -> usize {
        if V::PRESSURE {
            2 * Self::cylinder_count()
        } else {
            Self::cylinder_count()
        }
    }

    fn law(&self) -> Law<'_> {
        Law { inputs: &self.inputs, cylinders: &self.cylinders, s0: &self.s0, pressure: V::PRESSURE }
    }

    /// Static forces, initial lengths, static pressures from the parameters.
    fn derive_calculated(&mut self) {
        let q0 = self.mech.initial_positions();
        for k in 0..Self::cylinder_count() {
            self.s0[k] = self.mech.actuator(k).length(&q0);
            self.p1_static[k] = self.cylinders[k].static_p1(self.f_static[k]);
        }
    }

    /// Input values that hold the initial configuration at rest.
    fn input_starts(&self) -> [f64; MAX_INPUTS] {
        let mut u = [0.0; MAX_INPUTS];
        for k in 0..Self::cylinder_count() {
            if V::PRESSURE {
                u[2 * k] = self.p1_static[k];
                u[2 * k + 1] = self.cylinders[k].p2_0;
            } else {
                u[k] = self.f_static[k];
            }
        }
        u
    }

    /// Length, velocity and acceleration of cylinder `k` now.
    pub fn kinematics(&self, k: usize) -> Kinematics {
        match &self.results {
            Some(r) if k < MAX_ACTUATORS => r.kinematics[k],
            _ => self.mech.actuator(k).kinematics(&self.state.q, &self.state.qd, &self.state.qdd),
        }
    }

    /// The state's outputs, evaluated now (see [`Results`]).
    pub fn evaluate_results(&self) -> Results {
        let (q, qd, qdd) = (&self.state.q, &self.state.qd, &self.state.qdd);
        let mut kinematics = [Kinematics::default(); MAX_ACTUATORS];
        for (k, kin) in kinematics.iter_mut().enumerate().take(Self::cylinder_count()) {
            *kin = self.mech.actuator(k).kinematics(q, qd, qdd);
        }
        let j = self.mech.jacobian(q);
        Results {
            kinematics,
            kinetic_energy: self.mech.kinetic_energy(qd),
            potential_energy: self.mech.potential_energy(q),
            violation: Violation {
                position: self.mech.constraints(q).norm(),
                velocity: (j * qd).norm(),
                acceleration: (j * qdd + self.mech.jacobian_dot_times_velocity(q, qd)).norm(),
            },
        }
    }

    /// The interface model (m_eff, f_eff) at the current state (zero when it is singular):
    /// evaluated when first read after a step (a KKT solve per cylinder; most runs never read it),
    /// then kept with the step's [`Results`].
    pub fn interface_model(&self) -> InterfaceModel {
        let eval = || interface_model(&self.mech, &self.state.q, &self.state.qd).unwrap_or_default();
        match &self.results {
            Some(_) => *self.interface.get_or_init(eval),
            None => eval(),
        }
    }

    /// The outputs of the state as it is now (`None`: evaluated on demand), forgetting the
    /// interface model of the previous state.
    fn set_results(&mut self, results: Option<Results>) {
        self.results = results;
        self.interface = std::cell::OnceCell::new();
    }

    /// Cylinder force of cylinder `k` now, from the current inputs (N).
    pub fn force(&self, k: usize) -> f64 {
        let kin = self.kinematics(k);
        self.law().force(k, 0.0, kin.s, kin.s_dot).f
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        match &self.results {
            Some(r) => r.kinetic_energy,
            None => self.mech.kinetic_energy(&self.state.qd),
        }
    }

    /// Potential energy (J).
    pub fn potential_energy(&self) -> f64 {
        match &self.results {
            Some(r) => r.potential_energy,
            None => self.mech.potential_energy(&self.state.q),
        }
    }

    /// E_kin + E_pot − W_act − E(0) (J): zero for an exact energy balance.
    pub fn energy_balance(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy() - self.work - self.e0
    }

    /// Constraint violation norms now.
    pub fn violation(&self) -> Violation {
        match &self.results {
            Some(r) => r.violation,
            None => solver::violation(&self.mech, &self.state),
        }
    }

    fn method(&self) -> Result<Method, ModelError> {
        Method::from_i32(self.solver)
            .ok_or_else(|| ModelError::new(format!("solver = {} is not 1 (I3AL-P) or 2 (I1AL)", self.solver)))
    }

    fn check_settings(&self) -> Result<(), ModelError> {
        let s = &self.settings;
        for (name, v) in [("alpha", s.alpha_i3al), ("alpha_i1al", s.alpha_i1al), ("newton_tol", s.tol)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {v} must be positive")));
            }
        }
        self.step.check()?;
        for (name, v) in [("xi", s.xi), ("omega", s.omega)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {v} must be non-negative")));
            }
        }
        Ok(())
    }

    /// Number of internal steps in a communication step `big_h`.
    pub fn substeps(&self, t: f64, big_h: f64) -> Result<u64, ModelError> {
        self.step.substeps(t, big_h)
    }

    /// Baumgarte coefficients of the restart: the I1AL acceleration constraint, or exact Φ̈ = 0.
    fn restart_baumgarte(&self) -> (f64, f64) {
        match self.settings.method {
            Method::I3alP => (0.0, 0.0),
            Method::I1al => (self.settings.xi, self.settings.omega),
        }
    }

    /// Physical range of the state after a step ending at `t`: an error for a cylinder of no
    /// length; for a piston beyond its stroke (pressure variants) the message, which the step
    /// reports as a warning — the hydraulics of force coupling go on there too, so pressure and
    /// force coupling stop on the same events.
    fn check_state(&self, t: f64) -> Result<Option<String>, ModelError> {
        let mut beyond = None;
        let names = V::CYLINDERS;
        for (k, n) in names.iter().enumerate().take(Self::cylinder_count()) {
            let kin = self.kinematics(k);
            if kin.s.is_nan() || kin.s <= 1e-9 {
                return Err(ModelError::new(format!(
                    "at t = {t} s: cylinder length {} = {} m is not positive",
                    n.s[0], kin.s
                )));
            }
            if V::PRESSURE {
                let (l1, l2) = self.cylinders[k].chamber_lengths(kin.s, self.s0[k]);
                if (l1 <= 0.0 || l2 <= 0.0) && beyond.is_none() {
                    beyond = Some(format!(
                        "at t = {t} s: {} = {} m puts the piston beyond the end of its stroke (l1 = {l1:.4e} m, l2 = {l2:.4e} m)",
                        n.s[0], kin.s
                    ));
                }
            }
        }
        Ok(beyond)
    }

    fn largest_mass(&self) -> f64 {
        self.mech.mass_matrix().diagonal().amax()
    }
}

impl<V: Variant<M>, const M: usize> crate::diagnostics::Diagnostics for MbFmu<V, M> {
    fn kinetic_energy(&self) -> f64 {
        MbFmu::kinetic_energy(self)
    }
    fn potential_energy(&self) -> f64 {
        MbFmu::potential_energy(self)
    }
    fn actuator_work(&self) -> f64 {
        self.work
    }
    fn energy_balance(&self) -> f64 {
        MbFmu::energy_balance(self)
    }
    fn violation(&self) -> Violation {
        MbFmu::violation(self)
    }
    // The levels of `solver::violation`, each with only what it needs (same arithmetic) when
    // they are not evaluated yet.
    fn violation_position(&self) -> f64 {
        match &self.results {
            Some(r) => r.violation.position,
            None => self.mech.constraints(&self.state.q).norm(),
        }
    }
    fn violation_velocity(&self) -> f64 {
        match &self.results {
            Some(r) => r.violation.velocity,
            None => (self.mech.jacobian(&self.state.q) * self.state.qd).norm(),
        }
    }
    fn violation_acceleration(&self) -> f64 {
        match &self.results {
            Some(r) => r.violation.acceleration,
            None => {
                let (q, qd) = (&self.state.q, &self.state.qd);
                (self.mech.jacobian(q) * self.state.qdd + self.mech.jacobian_dot_times_velocity(q, qd)).norm()
            }
        }
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn counters_mut(&mut self) -> &mut Counters {
        &mut self.counters
    }
}

impl<V: Variant<M>, const M: usize> HasInternalStep for MbFmu<V, M> {
    fn internal_step(&self) -> &InternalStep {
        &self.step
    }
    fn internal_step_mut(&mut self) -> &mut InternalStep {
        &mut self.step
    }
}

impl<V: Variant<M>, const M: usize> CylinderMotion for MbFmu<V, M> {
    fn kinematics(&self, k: usize) -> Kinematics {
        MbFmu::kinematics(self, k)
    }
}

/// Field `i` of a cylinder, in the order of [`CYLINDER_PARAMETERS`].
fn cylinder_field(c: &mut Cylinder, i: usize) -> &mut f64 {
    match i {
        0 => &mut c.a1,
        1 => &mut c.a2,
        2 => &mut c.c,
        3 => &mut c.l_d,
        4 => &mut c.k_d,
        5 => &mut c.c_d,
        6 => &mut c.l10,
        7 => &mut c.l20,
        _ => &mut c.p2_0,
    }
}

/// Value of field `i` of a cylinder.
fn cylinder_value(c: &Cylinder, i: usize) -> f64 {
    [c.a1, c.a2, c.c, c.l_d, c.k_d, c.c_d, c.l10, c.l20, c.p2_0].get(i).copied().unwrap_or(f64::NAN)
}

/// Parameter `I` of cylinder `K`.
fn cylinder_parameter<V: Variant<M>, const M: usize, const K: usize, const I: usize>(
    n: &CylinderNames,
) -> Variable<MbFmu<V, M>> {
    let (unit, descr, min) = CYLINDER_PARAMETERS[I];
    Variable::parameter(
        n.params[I],
        unit,
        descr,
        |m: &MbFmu<V, M>| cylinder_value(&m.cylinders[K], I),
        |m, x| *cylinder_field(&mut m.cylinders[K], I) = x,
    )
    .min(min)
}

/// Parameters, inputs and outputs of cylinder `K` (0-based).
fn cylinder_variables<V: Variant<M>, const M: usize, const K: usize>(
    params: &mut Vec<Variable<MbFmu<V, M>>>,
    calculated: &mut Vec<Variable<MbFmu<V, M>>>,
    inputs: &mut Vec<Variable<MbFmu<V, M>>>,
    outputs: &mut Vec<Variable<MbFmu<V, M>>>,
) {
    let Some(n) = V::CYLINDERS.get(K) else { return };
    if V::PRESSURE {
        params.push(cylinder_parameter::<V, M, K, 0>(n));
        params.push(cylinder_parameter::<V, M, K, 1>(n));
        params.push(cylinder_parameter::<V, M, K, 2>(n));
        params.push(cylinder_parameter::<V, M, K, 3>(n));
        params.push(cylinder_parameter::<V, M, K, 4>(n));
        params.push(cylinder_parameter::<V, M, K, 5>(n));
        params.push(cylinder_parameter::<V, M, K, 6>(n));
        params.push(cylinder_parameter::<V, M, K, 7>(n));
        params.push(cylinder_parameter::<V, M, K, 8>(n));
        inputs.push(
            Variable::input(
                n.pressures[0],
                "Pa",
                "Piston-side chamber pressure p1 (extends the cylinder); start: p1 of the static state",
                |m: &MbFmu<V, M>| m.inputs[2 * K].value,
                |m| &mut m.inputs[2 * K],
            )
            .nominal(1e6),
        );
        inputs.push(
            Variable::input(
                n.pressures[1],
                "Pa",
                "Rod-side chamber pressure p2 (retracts the cylinder); start: p2_0",
                |m: &MbFmu<V, M>| m.inputs[2 * K + 1].value,
                |m| &mut m.inputs[2 * K + 1],
            )
            .nominal(1e6),
        );
        outputs.push(
            Variable::output(
                n.force,
                "N",
                "Cylinder force p1 A1 - p2 A2 - c s_dot + F_d (Pub III eqs. 30-31), from the current pressures",
                |m: &MbFmu<V, M>| m.force(K),
            )
            .depends_on(n.force_deps),
        );
        calculated.push(Variable::calculated_parameter(
            n.calculated[2],
            "Pa",
            "Piston-side pressure of the static initial state, (F_static + p2_0 A2)/A1 (start of input p1)",
            |m: &MbFmu<V, M>| m.p1_static[K],
        ));
    } else {
        inputs.push(Variable::input(
            n.force,
            "N",
            "Cylinder force along the cylinder, positive when it extends (start: the static force)",
            |m: &MbFmu<V, M>| m.inputs[K].value,
            |m| &mut m.inputs[K],
        ));
    }
    calculated.push(Variable::calculated_parameter(
        n.calculated[0],
        "N",
        "Cylinder force that holds the initial configuration at rest (static equilibrium, computed from the parameters)",
        |m: &MbFmu<V, M>| m.f_static[K],
    ));
    calculated.push(Variable::calculated_parameter(
        n.calculated[1],
        "m",
        "Initial cylinder length",
        |m: &MbFmu<V, M>| m.s0[K],
    ));
    outputs.extend(cylinder_outputs::length_and_velocity::<MbFmu<V, M>, K>(&n.s));
    outputs.push(
        Variable::output(
            n.im.1,
            "N",
            "Interface model (Publication IV): effective force f_eff of m_eff s_ddot = F + f_eff, all forces but the cylinders' (gravity, velocity terms) reduced to the cylinder coordinates by the constrained inverse mass (null-space projection)",
            |m: &MbFmu<V, M>| m.interface_model().f_eff[K],
        )
        .depends_on(&[])
        .on_demand(),
    );
    outputs.push(
        Variable::output(
            n.im.0[0],
            "kg",
            "Interface model: effective mass m_eff = (G A G^T)^-1, G = ds/dq, A the inverse mass matrix projected onto the constraints' null space; entry (this cylinder, cylinder 1)",
            |m: &MbFmu<V, M>| m.interface_model().m_eff[K][0],
        )
        .depends_on(&[])
        .on_demand(),
    );
    if V::CYLINDERS.len() > 1 {
        outputs.push(
            Variable::output(
                n.im.0[1],
                "kg",
                "Interface model: effective mass matrix entry (this cylinder, cylinder 2); the off-diagonal terms couple the cylinders",
                |m: &MbFmu<V, M>| m.interface_model().m_eff[K][1],
            )
            .depends_on(&[])
            .on_demand(),
        );
    }
    outputs.push(cylinder_outputs::acceleration::<MbFmu<V, M>, K>(
        &n.s,
        "Cylinder acceleration d2s/dt2 (from the projected accelerations at the end of the step)",
    ));
}

impl<V: Variant<M>, const M: usize> CoSimModel for MbFmu<V, M> {
    fn info() -> ModelInfo {
        V::info()
    }

    fn variables() -> Vec<Variable<Self>> {
        let mut v = V::mechanism_variables();
        let (mut params, mut calculated, mut inputs, mut outputs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        cylinder_variables::<V, M, 0>(&mut params, &mut calculated, &mut inputs, &mut outputs);
        cylinder_variables::<V, M, 1>(&mut params, &mut calculated, &mut inputs, &mut outputs);
        v.append(&mut params);
        v.push(Variable::enumeration(
            "solver",
            &SOLVER,
            "Multibody solver: I3AL-P (default) or I1AL",
            |m: &Self| m.solver,
            |m, x| m.solver = x,
        ));
        v.push(
            Variable::parameter(
                "alpha",
                "",
                "Penalty factor of I3AL-P (enters as (h^2/4) alpha beside the masses; keep (h^2/4) alpha >> largest mass)",
                |m: &Self| m.settings.alpha_i3al,
                |m, x| m.settings.alpha_i3al = x,
            )
            .min(0.0),
        );
        v.push(
            Variable::parameter(
                "alpha_i1al",
                "",
                "Penalty factor of I1AL (enters beside the masses: alpha >> largest mass, but not so large that M + alpha Phi_q^T Phi_q loses precision)",
                |m: &Self| m.settings.alpha_i1al,
                |m, x| m.settings.alpha_i1al = x,
            )
            .min(0.0),
        );
        v.push(
            Variable::parameter(
                "newton_tol",
                "m",
                "Newton tolerance: largest position correction of the last iteration (m or rad; I1AL: (h^2/4) times the acceleration correction)",
                |m: &Self| m.settings.tol,
                |m, x| m.settings.tol = x,
            )
            .min(0.0),
        );
        v.extend(internal_step::variables::<Self>());
        v.push(
            Variable::parameter(
                "xi",
                "1",
                "Baumgarte-like damping ratio xi of I1AL (Pub III eq. 17)",
                |m: &Self| m.settings.xi,
                |m, x| m.settings.xi = x,
            )
            .min(0.0),
        );
        v.push(
            Variable::parameter(
                "omega",
                "rad/s",
                "Baumgarte-like frequency omega of I1AL (Pub III eq. 17)",
                |m: &Self| m.settings.omega,
                |m, x| m.settings.omega = x,
            )
            .min(0.0),
        );
        v.push(Variable::boolean(
            "restart",
            "Restart the trapezoidal step where an input jumps at a communication point (re-evaluate the accelerations with the new input; SPEC 3.2). false is a diagnostic: the previous input then leaks into the step (an H/2 delay)",
            |m: &Self| m.restart,
            |m, x| m.restart = x,
        ));
        v.append(&mut calculated);
        v.append(&mut inputs);
        v.append(&mut outputs);
        v.extend(crate::diagnostics::variables::<Self>());
        // The accelerations leaving Initialization Mode are computed from the applied forces
        // (inputs F or p1, p2); after a step they are the step's result (no feedthrough).
        let accelerations: Vec<&str> = V::CYLINDERS.iter().map(|n| n.s[2]).chain(["phi_ddot"]).collect();
        for x in v.iter_mut().filter(|x| accelerations.contains(&x.name)) {
            x.initially_from_inputs = true;
        }
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.set_results(None);
        self.mass_lu = Lu::new(self.mech.mass_matrix());
        self.mech.check().map_err(ModelError::new)?;
        if V::PRESSURE {
            for (k, n) in V::CYLINDERS.iter().enumerate().take(Self::cylinder_count()) {
                let suffix = n.params[0].strip_prefix("A1").unwrap_or("");
                self.cylinders[k].check(suffix).map_err(ModelError::new)?;
            }
        }
        self.settings.method = self.method()?;
        self.check_settings()?;
        self.settings.max_iter = self.step.cap();
        let defaults = Self::default();
        let q0 = self.mech.initial_positions();
        self.f_static = static_forces(&self.mech, &q0).map_err(ModelError::new)?;
        self.derive_calculated();
        // Inputs left at their declared start values follow the parameters, so that a default
        // run rests even when masses or geometry change.
        let starts = self.input_starts();
        for ((u, d), x) in self.inputs.iter_mut().zip(&defaults.inputs).zip(starts).take(Self::input_count()) {
            if u.value.to_bits() == d.value.to_bits() {
                u.value = x;
            }
        }
        if V::PRESSURE {
            for k in 0..Self::cylinder_count() {
                let (l1, l2) = self.cylinders[k].chamber_lengths(self.s0[k], self.s0[k]);
                if l1 <= self.cylinders[k].l_d || l2 <= self.cylinders[k].l_d {
                    return Err(ModelError::new(format!(
                        "initial state: cylinder {} starts inside an end damper (l10 = {l1}, l20 = {l2}, l_d = {})",
                        k + 1,
                        self.cylinders[k].l_d
                    )));
                }
            }
        }
        self.state = State::at_rest(q0);
        let (xi, omega) = self.restart_baumgarte();
        let law = self.law();
        let mut st = self.state.clone();
        consistent_accelerations_factored(&self.mech, self.mass_lu.as_ref(), &law, &mut st, 0.0, xi, omega)
            .map_err(|e| ModelError::new(format!("initial state: {e}")))?;
        let power = actuator_power(&self.mech, &law, &st.q, &st.qd, 0.0);
        self.state = st;
        self.set_results(Some(self.evaluate_results()));
        self.power_end = power;
        self.work = 0.0;
        self.e0 = self.kinetic_energy() + self.potential_energy();
        for i in 0..MAX_INPUTS {
            self.u_end[i] = self.inputs[i].value;
        }
        self.counters = Counters::default();
        self.warned = false;
        self.stroke_warned = false;
        match self.check_state(0.0)? {
            // At the start it is the parameters (l10, l20 or the initial length) that are wrong.
            Some(beyond) => Err(ModelError::new(beyond)),
            None => Ok(()),
        }
    }

    fn do_step(&mut self, t: f64, big_h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        let n = self.substeps(t, big_h)?;
        // n = 0: a master's float-time remainder, the state held (fmu_export::grid).
        let dt = big_h / n.max(1) as f64;
        let method = self.settings.method;
        if !self.warned && n > 0 {
            let ratio = match method {
                Method::I3alP => 0.25 * dt * dt * self.settings.alpha_i3al,
                Method::I1al => self.settings.alpha_i1al,
            } / self.largest_mass();
            if ratio < 10.0 {
                self.warned = true;
                ctx.warn(format!(
                    "{}: the penalty is small for this step: {} = {ratio:.3} times the largest mass (want >> 1); Newton will need many iterations or fail. Raise {}",
                    method.name(),
                    if method == Method::I3alP { "(h^2/4) alpha" } else { "alpha_i1al" },
                    if method == Method::I3alP { "alpha" } else { "alpha_i1al" },
                ));
            }
        }
        let law = self.law();
        let mut st = self.state.clone();
        let jumped = (0..Self::input_count()).any(|i| self.inputs[i].at(0.0).to_bits() != self.u_end[i].to_bits());
        let mut power_start = self.power_end;
        let mut restarted = false;
        if jumped && self.restart {
            let (xi, omega) = self.restart_baumgarte();
            consistent_accelerations_factored(&self.mech, self.mass_lu.as_ref(), &law, &mut st, 0.0, xi, omega)
                .map_err(|e| ModelError::new(format!("{}: restart at t = {t} s: {e}", method.name())))?;
            power_start = actuator_power(&self.mech, &law, &st.q, &st.qd, 0.0);
            restarted = true;
        }
        let mut max_it = 0;
        let mut total = i64::from(self.counters.iterations_total);
        let mut work = self.work;
        for i in 0..n {
            let tau1 = (i + 1) as f64 * dt;
            let it = solver::step(&self.mech, &law, &self.settings, &mut st, tau1, dt).map_err(|e| {
                ModelError::new(format!("{}: step from t = {} s to {} s: {e}", method.name(), t + tau1 - dt, t + tau1))
            })?;
            let power = actuator_power(&self.mech, &law, &st.q, &st.qd, tau1);
            work += 0.5 * dt * (power_start + power);
            power_start = power;
            max_it = max_it.max(it);
            total += i64::from(it);
        }
        let mut u_end = [0.0; MAX_INPUTS];
        for (e, u) in u_end.iter_mut().zip(&self.inputs) {
            *e = u.at(big_h);
        }
        self.state = st;
        self.set_results(Some(self.evaluate_results()));
        if let Some(beyond) = self.check_state(t + big_h)? {
            if !self.stroke_warned {
                self.stroke_warned = true;
                ctx.report(format!(
                    "{beyond}: the chamber has no volume left, the end damper's force grows on (as the force-coupled \
                     circuit goes on with its dead volume); reported once"
                ));
            }
        }
        self.work = work;
        self.power_end = power_start;
        self.u_end = u_end;
        if n > 0 {
            // A remainder step is no step of the FMU's own (its counters describe the last one).
            self.counters.book_step(max_it, total, n, restarted);
        }
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        V::visit_mechanism(&mut self.mech, v);
        for c in &mut self.cylinders {
            for x in [
                &mut c.a1,
                &mut c.a2,
                &mut c.c,
                &mut c.l_d,
                &mut c.k_d,
                &mut c.c_d,
                &mut c.l10,
                &mut c.l20,
                &mut c.p2_0,
            ] {
                v.real(x);
            }
        }
        visit_integer(&mut self.solver, v);
        visit_integer(&mut self.step.max_iter, v);
        self.settings.method = Method::from_i32(self.solver).unwrap_or(Method::I3alP);
        self.settings.max_iter = self.step.cap();
        let s = &mut self.settings;
        for x in [&mut s.alpha_i3al, &mut s.alpha_i1al, &mut s.tol, &mut s.xi, &mut s.omega, &mut self.step.h] {
            v.real(x);
        }
        v.boolean(&mut self.restart);
        v.reals(&mut self.f_static);
        v.reals(&mut self.s0);
        v.reals(&mut self.p1_static);
        v.reals(self.state.q.as_mut_slice());
        v.reals(self.state.qd.as_mut_slice());
        v.reals(self.state.qdd.as_mut_slice());
        v.reals(self.state.lambda.as_mut_slice());
        v.real(&mut self.work);
        v.real(&mut self.e0);
        v.real(&mut self.power_end);
        v.reals(&mut self.u_end);
        self.counters.visit(v);
        v.boolean(&mut self.warned);
        for u in &mut self.inputs {
            v.input(u);
        }
        // The state (and the mechanism) may have been replaced.
        self.set_results(None);
        self.mass_lu = Lu::new(self.mech.mass_matrix());
    }
}
