//! The FMU model shared by the unified FMUs: a mechanism and one circuit per cylinder, the
//! control inputs of the circuits (spool κ or valve reference U_ref), the unified step with the
//! restart at input jumps, and the outputs a co-simulation is compared with (cylinder motion,
//! circuit states, energies, constraint norms, Newton iterations).

use crate::circuit::Circuit;
use crate::solver::{self, consistent_rates, Settings, UState};
use fmu_export::{CoSimModel, Context, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};
use fmu_multibody::cylinder_outputs::{self, CylinderMotion};
use fmu_multibody::diagnostics::{visit_integer, Counters};
use fmu_multibody::internal_step::{self, HasInternalStep, InternalStep};
use fmu_multibody::mechanism::{applied_forces, static_forces, Kinematics, Mechanism, MAX_ACTUATORS};
use fmu_multibody::solver::{violation, State, Violation};
use nalgebra::SVector;
use std::marker::PhantomData;

/// Generalized coordinates of every mechanism here.
pub const N: usize = 5;

/// Per-cylinder variable names of a variant.
#[derive(Debug)]
pub struct CylinderNames<const P: usize> {
    /// Control input of the circuit (e.g. `kappa`, `U_ref`, `U_ref1`).
    pub input: &'static str,
    /// Length, velocity, acceleration outputs.
    pub s: [&'static str; 3],
    /// Cylinder force output.
    pub force: &'static str,
    /// Circuit state outputs, in the circuit's order (e.g. `p1`, `p2`, `p3`, `U`).
    pub states: [&'static str; P],
    /// Calculated parameters: static force, initial length, control input at rest.
    pub calculated: [&'static str; 3],
}

/// What distinguishes the unified FMUs: mechanism, circuit, names, documentation.
pub trait Variant<const M: usize, const P: usize>: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// The mechanism.
    type Mech: Mechanism<N, M> + Clone + std::fmt::Debug + Send + 'static;
    /// The circuit of each cylinder.
    type Circuit: Circuit<P> + Default;
    /// Names per cylinder.
    const CYLINDERS: &'static [CylinderNames<P>];
    /// (unit, description, min, max) of the control input.
    const INPUT: (&'static str, &'static str, f64, f64);
    /// Names and documentation.
    fn info() -> ModelInfo;
    /// The mechanism with its default parameters.
    fn mechanism() -> Self::Mech;
}

/// The unified FMU model of variant `V` (`M` constraints, `P` states per circuit).
#[derive(Debug, Clone)]
pub struct UnifiedFmu<V: Variant<M, P>, const M: usize, const P: usize> {
    /// The mechanism.
    pub mech: V::Mech,
    /// One circuit per cylinder (parameters as the co-simulation FMUs' defaults).
    pub circuits: [V::Circuit; MAX_ACTUATORS],
    /// Solver settings.
    pub settings: Settings,
    /// Internal step and Newton iteration cap (the cap is copied into `settings` at initialization).
    pub step: InternalStep,
    /// Restart the step where an input jumps.
    pub restart: bool,
    /// Control inputs per cylinder.
    pub inputs: [InputSignal; MAX_ACTUATORS],
    /// Static cylinder forces (calculated, N).
    pub f_static: [f64; MAX_ACTUATORS],
    /// Initial cylinder lengths (calculated, m).
    pub s0: [f64; MAX_ACTUATORS],
    /// Control inputs that hold the state at rest (calculated).
    pub u_rest: [f64; MAX_ACTUATORS],
    /// The integrated state.
    pub state: UState<N, M, P>,
    /// Actuator work ∫ Σ F ṡ dt (J), trapezoidal rule per internal step.
    pub work: f64,
    /// Mechanical energy at initialization (J).
    pub e0: f64,
    /// Actuator power at the end of the last step (W).
    pub power_end: f64,
    /// Input values at the end of the last step (jump detection).
    pub u_end: [f64; MAX_ACTUATORS],
    /// Newton iterations, internal steps and restarts.
    pub counters: Counters,
    _variant: PhantomData<V>,
}

impl<V: Variant<M, P>, const M: usize, const P: usize> Default for UnifiedFmu<V, M, P> {
    fn default() -> Self {
        let mech = V::mechanism();
        let q0 = mech.initial_positions();
        let mut m = Self {
            circuits: [V::Circuit::default(), V::Circuit::default()],
            settings: Settings::default(),
            step: InternalStep::default(),
            restart: true,
            inputs: [InputSignal::new(0.0); MAX_ACTUATORS],
            f_static: [0.0; MAX_ACTUATORS],
            s0: [0.0; MAX_ACTUATORS],
            u_rest: [0.0; MAX_ACTUATORS],
            state: UState {
                mech: State::at_rest(q0),
                x: [SVector::zeros(); MAX_ACTUATORS],
                xd: [SVector::zeros(); MAX_ACTUATORS],
            },
            work: 0.0,
            e0: 0.0,
            power_end: 0.0,
            u_end: [0.0; MAX_ACTUATORS],
            counters: Counters::default(),
            mech,
            _variant: PhantomData,
        };
        // The declared starts: the state at rest for the default parameters.
        if m.rest().is_ok() {
            for k in 0..Self::cylinders() {
                m.inputs[k].value = m.u_rest[k];
            }
        }
        m
    }
}

impl<V: Variant<M, P>, const M: usize, const P: usize> UnifiedFmu<V, M, P> {
    /// Number of cylinders.
    pub fn cylinders() -> usize {
        V::CYLINDERS.len().min(MAX_ACTUATORS)
    }

    /// Static forces, initial lengths, circuit states at rest and their control inputs.
    fn rest(&mut self) -> Result<(), String> {
        let q0 = self.mech.initial_positions();
        self.f_static = static_forces(&self.mech, &q0)?;
        for k in 0..Self::cylinders() {
            self.s0[k] = self.mech.actuator(k).length(&q0);
            let (x, u) = self.circuits[k]
                .rest(self.s0[k], self.f_static[k])
                .map_err(|e| format!("cylinder {} ({}): {e}", k + 1, V::CYLINDERS[k].s[0]))?;
            self.state.x[k] = x;
            self.u_rest[k] = u;
        }
        self.state.mech = State::at_rest(q0);
        Ok(())
    }

    fn circuits(&self) -> &[V::Circuit] {
        &self.circuits[..Self::cylinders()]
    }

    /// s, ṡ, s̈ of cylinder k.
    pub fn kinematics(&self, k: usize) -> Kinematics {
        let st = &self.state.mech;
        self.mech.actuator(k).kinematics(&st.q, &st.qd, &st.qdd)
    }

    /// Cylinder force of cylinder k now (N).
    pub fn force(&self, k: usize) -> f64 {
        let kin = self.kinematics(k);
        self.circuits[k].force(&self.state.x[k], kin.s, kin.s_dot).0.f
    }

    fn power(&self, st: &UState<N, M, P>) -> f64 {
        let law = solver::CircuitForces { circuits: self.circuits(), x: &st.x };
        applied_forces(&self.mech, &law, &st.mech.q, &st.mech.qd, 0.0).power()
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.mech.kinetic_energy(&self.state.mech.qd)
    }

    /// Potential energy (J).
    pub fn potential_energy(&self) -> f64 {
        self.mech.potential_energy(&self.state.mech.q)
    }

    /// E_kin + E_pot − W_act − E(t0) (J).
    pub fn energy_balance(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy() - self.work - self.e0
    }

    /// Constraint violation norms.
    pub fn violation(&self) -> Violation {
        violation(&self.mech, &self.state.mech)
    }

    fn substeps(&self, t: f64, big_h: f64) -> Result<u64, ModelError> {
        self.step.substeps(t, big_h)
    }

    fn check_state(&self, t: f64, st: &UState<N, M, P>) -> Result<(), ModelError> {
        for (k, names) in V::CYLINDERS.iter().enumerate().take(Self::cylinders()) {
            let s = self.mech.actuator(k).length(&st.mech.q);
            if s.is_nan() || s <= 1e-9 {
                return Err(ModelError::new(format!(
                    "at t = {t} s: cylinder length {} = {s} m is not positive",
                    names.s[0]
                )));
            }
            self.circuits[k]
                .check_state(&st.x[k], s)
                .map_err(|e| ModelError::new(format!("at t = {t} s, cylinder {}: {e}", names.s[0])))?;
        }
        Ok(())
    }

    fn inputs_at(&self, tau: f64) -> [f64; MAX_ACTUATORS] {
        let mut u = [0.0; MAX_ACTUATORS];
        for (x, i) in u.iter_mut().zip(&self.inputs) {
            *x = i.at(tau);
        }
        u
    }
}

impl<V: Variant<M, P>, const M: usize, const P: usize> fmu_multibody::diagnostics::Diagnostics for UnifiedFmu<V, M, P> {
    fn kinetic_energy(&self) -> f64 {
        UnifiedFmu::kinetic_energy(self)
    }
    fn potential_energy(&self) -> f64 {
        UnifiedFmu::potential_energy(self)
    }
    fn actuator_work(&self) -> f64 {
        self.work
    }
    fn energy_balance(&self) -> f64 {
        UnifiedFmu::energy_balance(self)
    }
    fn violation(&self) -> Violation {
        UnifiedFmu::violation(self)
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
    fn counters_mut(&mut self) -> &mut Counters {
        &mut self.counters
    }
}

impl<V: Variant<M, P>, const M: usize, const P: usize> HasInternalStep for UnifiedFmu<V, M, P> {
    fn internal_step(&self) -> &InternalStep {
        &self.step
    }
    fn internal_step_mut(&mut self) -> &mut InternalStep {
        &mut self.step
    }
}

impl<V: Variant<M, P>, const M: usize, const P: usize> CylinderMotion for UnifiedFmu<V, M, P> {
    fn kinematics(&self, k: usize) -> Kinematics {
        UnifiedFmu::kinematics(self, k)
    }
}

fn cylinder_variables<V: Variant<M, P>, const M: usize, const P: usize, const K: usize>(
    calculated: &mut Vec<Variable<UnifiedFmu<V, M, P>>>,
    inputs: &mut Vec<Variable<UnifiedFmu<V, M, P>>>,
    outputs: &mut Vec<Variable<UnifiedFmu<V, M, P>>>,
) {
    let Some(n) = V::CYLINDERS.get(K) else { return };
    let (unit, descr, min, max) = V::INPUT;
    inputs.push(
        Variable::input(n.input, unit, descr, |m: &UnifiedFmu<V, M, P>| m.inputs[K].value, |m| &mut m.inputs[K])
            .min(min)
            .max(max),
    );
    calculated.push(Variable::calculated_parameter(
        n.calculated[0],
        "N",
        "Cylinder force that holds the initial configuration at rest (static equilibrium)",
        |m: &UnifiedFmu<V, M, P>| m.f_static[K],
    ));
    calculated.push(Variable::calculated_parameter(
        n.calculated[1],
        "m",
        "Initial cylinder length (the circuit's chamber lengths are nominal there)",
        |m: &UnifiedFmu<V, M, P>| m.s0[K],
    ));
    calculated.push(Variable::calculated_parameter(
        n.calculated[2],
        unit,
        "Control input that holds the state at rest (start of the input)",
        |m: &UnifiedFmu<V, M, P>| m.u_rest[K],
    ));
    outputs.extend(cylinder_outputs::length_and_velocity::<UnifiedFmu<V, M, P>, K>(&n.s));
    outputs.push(cylinder_outputs::acceleration::<UnifiedFmu<V, M, P>, K>(
        &n.s,
        "Cylinder acceleration d2s/dt2 (projected accelerations)",
    ));
    outputs.push(
        Variable::output(
            n.force,
            "N",
            "Cylinder force from the circuit state (friction and end dampers included), positive extends",
            |m: &UnifiedFmu<V, M, P>| m.force(K),
        )
        .depends_on(&[]),
    );
    state_output::<V, M, P, K, 0>(n, outputs);
    state_output::<V, M, P, K, 1>(n, outputs);
    state_output::<V, M, P, K, 2>(n, outputs);
    state_output::<V, M, P, K, 3>(n, outputs);
}

fn state_output<V: Variant<M, P>, const M: usize, const P: usize, const K: usize, const I: usize>(
    n: &CylinderNames<P>,
    outputs: &mut Vec<Variable<UnifiedFmu<V, M, P>>>,
) {
    let Some(name) = n.states.get(I) else { return };
    let unit = <V::Circuit as Circuit<P>>::UNITS.get(I).copied().unwrap_or("");
    let descr = if unit == "V" { "Spool position of the circuit" } else { "Circuit pressure (see the documentation)" };
    outputs.push(
        Variable::output(name, unit, descr, |m: &UnifiedFmu<V, M, P>| m.state.x[K].get(I).copied().unwrap_or(f64::NAN))
            .depends_on(&[])
            .output_derivatives(1, |m, _| m.state.xd[K].get(I).copied().unwrap_or(f64::NAN)),
    );
}

impl<V: Variant<M, P>, const M: usize, const P: usize> CoSimModel for UnifiedFmu<V, M, P> {
    fn info() -> ModelInfo {
        V::info()
    }

    fn variables() -> Vec<Variable<Self>> {
        let mut v = vec![
            Variable::parameter(
                "alpha",
                "",
                "Penalty factor (seed 004: 1e10 at 10 ms; keep alpha h^2 constant when h changes)",
                |m: &Self| m.settings.alpha,
                |m, x| m.settings.alpha = x,
            )
            .min(0.0),
            Variable::parameter(
                "newton_tol",
                "m",
                "Newton tolerance on the position correction (m or rad)",
                |m: &Self| m.settings.tol_q,
                |m, x| m.settings.tol_q = x,
            )
            .min(0.0),
            Variable::parameter(
                "newton_tol_x",
                "1",
                "Newton tolerance on the circuit-state correction relative to the nominal values (1e6 Pa, 1 V): 1e-9 = 1 mPa",
                |m: &Self| m.settings.tol_x,
                |m, x| m.settings.tol_x = x,
            )
            .min(0.0),
        ];
        v.extend(internal_step::variables::<Self>());
        v.push(Variable::boolean(
                "restart",
                "Restart the step where an input jumps at a communication point (recompute accelerations and circuit rates with the new input). false: the previous input leaks into the step (an O(h) timing error)",
                |m: &Self| m.restart,
            |m, x| m.restart = x,
        ));
        let (mut calculated, mut inputs, mut outputs) = (Vec::new(), Vec::new(), Vec::new());
        cylinder_variables::<V, M, P, 0>(&mut calculated, &mut inputs, &mut outputs);
        cylinder_variables::<V, M, P, 1>(&mut calculated, &mut inputs, &mut outputs);
        v.append(&mut calculated);
        v.append(&mut inputs);
        v.append(&mut outputs);
        v.extend(fmu_multibody::diagnostics::variables::<Self>());
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.mech.check().map_err(ModelError::new)?;
        for (k, c) in self.circuits().iter().enumerate() {
            c.check().map_err(|e| ModelError::new(format!("circuit of cylinder {}: {e}", k + 1)))?;
        }
        let s = &self.settings;
        for (name, x) in [("alpha", s.alpha), ("newton_tol", s.tol_q), ("newton_tol_x", s.tol_x)] {
            if !(x > 0.0 && x.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {x} must be positive")));
            }
        }
        self.step.check()?;
        self.settings.max_iter = self.step.cap();
        let defaults = Self::default();
        self.rest().map_err(|e| ModelError::new(format!("initial state: {e}")))?;
        // Inputs left at their declared start values follow the state at rest.
        for k in 0..Self::cylinders() {
            if self.inputs[k].value.to_bits() == defaults.inputs[k].value.to_bits() {
                self.inputs[k].value = self.u_rest[k];
            }
        }
        let u = self.inputs_at(0.0);
        let mut st = self.state.clone();
        consistent_rates(&self.mech, self.circuits(), &mut st, &u)
            .map_err(|e| ModelError::new(format!("initial state: {e}")))?;
        self.power_end = self.power(&st);
        self.state = st;
        self.work = 0.0;
        self.e0 = self.kinetic_energy() + self.potential_energy();
        self.u_end = u;
        self.counters = Counters::default();
        self.check_state(0.0, &self.state)
    }

    fn do_step(&mut self, t: f64, big_h: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        let n = self.substeps(t, big_h)?;
        // n = 0: a master's float-time remainder, the state held (fmu_export::grid).
        let dt = big_h / n.max(1) as f64;
        let mut st = self.state.clone();
        let u0 = self.inputs_at(0.0);
        let jumped = (0..Self::cylinders()).any(|k| u0[k].to_bits() != self.u_end[k].to_bits());
        let mut power_start = self.power_end;
        if jumped && self.restart {
            consistent_rates(&self.mech, self.circuits(), &mut st, &u0)
                .map_err(|e| ModelError::new(format!("restart at t = {t} s: {e}")))?;
            power_start = self.power(&st);
        }
        let (mut max_it, mut total, mut work) = (0, i64::from(self.counters.iterations_total), self.work);
        for i in 0..n {
            let tau1 = (i + 1) as f64 * dt;
            let u1 = self.inputs_at(tau1);
            let it = solver::step(&self.mech, self.circuits(), &self.settings, &mut st, &u1, dt).map_err(|e| {
                ModelError::new(format!("unified step from t = {} s to {} s: {e}", t + tau1 - dt, t + tau1))
            })?;
            self.check_state(t + tau1, &st)?;
            let power = self.power(&st);
            work += 0.5 * dt * (power_start + power);
            power_start = power;
            max_it = max_it.max(it);
            total += i64::from(it);
        }
        self.state = st;
        self.work = work;
        self.power_end = power_start;
        self.u_end = self.inputs_at(big_h);
        if n > 0 {
            // A remainder step is no step of the FMU's own (its counters describe the last one).
            self.counters.book_step(max_it, total, n, jumped && self.restart);
        }
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        let s = &mut self.settings;
        for x in [&mut s.alpha, &mut s.tol_q, &mut s.tol_x, &mut self.step.h] {
            v.real(x);
        }
        visit_integer(&mut self.step.max_iter, v);
        self.settings.max_iter = self.step.cap();
        v.boolean(&mut self.restart);
        v.reals(&mut self.f_static);
        v.reals(&mut self.s0);
        v.reals(&mut self.u_rest);
        let st = &mut self.state;
        v.reals(st.mech.q.as_mut_slice());
        v.reals(st.mech.qd.as_mut_slice());
        v.reals(st.mech.qdd.as_mut_slice());
        v.reals(st.mech.lambda.as_mut_slice());
        for x in st.x.iter_mut().chain(st.xd.iter_mut()) {
            v.reals(x.as_mut_slice());
        }
        v.real(&mut self.work);
        v.real(&mut self.e0);
        v.real(&mut self.power_end);
        v.reals(&mut self.u_end);
        self.counters.visit(v);
        for u in &mut self.inputs {
            v.input(u);
        }
        // The circuits' nominal chamber positions follow the initial lengths (derived, not stored).
        for k in 0..Self::cylinders() {
            let _ = self.circuits[k].rest(self.s0[k], self.f_static[k]);
        }
    }
}
