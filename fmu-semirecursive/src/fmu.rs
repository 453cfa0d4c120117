//! The FMUs of this crate (FMI 2.0 Co-Simulation, built by `fmus/semirecursive-fmus/`):
//!
//! - `semirecursive-{a,d,e}`: monolithic, the mechanism and the lumped-fluid circuit in one Newton
//!   system (Pub I eq. 39 / 002 eq. 35), formulation (penalty / double-step) and tangent
//!   (analytic / numerical) chosen by parameter; the valve reference from the model's work cycle
//!   or from input `U_ref`.
//! - `semirecursive-{a,d,e}-mechanism`: the mechanism alone for co-simulation, input `F` (the
//!   pressure force p1A1 − p2A2 of a hydraulics FMU, e.g. output `F` of `hydraulics-lumped3`
//!   without viscous friction and dampers); the friction law of SPEC §3.7 is applied to it.
//!
//! Outputs: joint coordinates, s, ṡ, s̈, the actuator force, energies, actuator and friction work,
//! the energy balance, ‖Φ‖, ‖Φ̇‖, ‖Φ̈‖, Newton iterations.

use crate::circuit::{Circuit, Drive, P3Model};
use crate::models::{model, Model, Which};
use crate::penalty::{Settings, Tangent};
use crate::run::{Formulation, Integrator};
use crate::state::{State, StepStats};
use fmu_export::{CoSimModel, Context, EnumType, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};
use fmu_hydraulics::fmu_lumped3::{P3_LF, P3_MODEL, P3_SP};
use fmu_hydraulics::sp::Gamma;

/// `Formulation` enumeration.
pub static FORMULATION: EnumType = EnumType {
    name: "Formulation",
    description: "Semi-recursive formulation",
    items: &[
        (
            "penalty",
            1,
            "augmented-Lagrangian penalty, trapezoidal rule, Newton on [z; p] (Pub I eqs. 15, 37-45; 002 eqs. 18-21)",
        ),
        (
            "double-step",
            2,
            "coordinate partitioning by full pivoting, trapezoidal rule on [z_i; p] (002 eqs. 13-17, 30-38)",
        ),
    ],
};

/// `Tangent` enumeration.
pub static TANGENT: EnumType = EnumType {
    name: "Tangent",
    description: "Newton tangent of the penalty formulation",
    items: &[
        ("analytic", 1, "eq. 42, every block exact (mechanical blocks by dual numbers)"),
        ("numerical", 2, "forward differences, delta = 1e-8 max(1e-2, |x0|) (Pub I eq. 45)"),
    ],
};

/// The state and settings both FMU kinds share.
#[derive(Debug, Clone)]
pub struct Core {
    /// The model (rebuilt at initialization).
    pub model: Model,
    /// 1 penalty, 2 double-step.
    pub formulation: i32,
    /// 1 analytic, 2 numerical.
    pub tangent: i32,
    /// Internal step (s); 0 = the communication step.
    pub h: f64,
    /// Penalty factor α.
    pub alpha: f64,
    /// Newton position tolerance (rad).
    pub tol_z: f64,
    /// Newton pressure tolerance (Pa).
    pub tol_p: f64,
    /// Iteration cap.
    pub max_iter: i32,
    /// Cylinder efficiency η of the friction law.
    pub eta: f64,
    /// Friction regularisation velocity v_ε (m/s).
    pub v_eps: f64,
    /// State.
    pub st: State,
    /// Diagnostics of the last internal step.
    pub last: StepStats,
    /// Most Newton iterations of an internal step in the last communication step.
    pub it_max: i32,
    /// Σ iterations and number of internal steps so far.
    pub it_total: [i64; 2],
    /// Lowest pressure so far (Pa; monolithic FMUs).
    pub p_min: f64,
    /// Whether a negative pressure was reported (once per run).
    pub negative_warned: bool,
}

impl Core {
    fn new(which: Which) -> Self {
        // The models are fixed tables; building them cannot fail (tested).
        let model = model(which).unwrap_or_else(|e| unreachable_model(&e));
        let st = State::initial(&model);
        Self {
            formulation: 1,
            tangent: 1,
            h: 0.0,
            alpha: 1e11,
            tol_z: model.tol_z,
            tol_p: model.tol_p,
            max_iter: 100,
            eta: model.circuit.eta,
            v_eps: model.circuit.v_eps,
            st,
            last: StepStats::default(),
            it_max: 0,
            it_total: [0, 0],
            p_min: model.p0.iter().fold(f64::INFINITY, |a, p| a.min(*p)),
            negative_warned: false,
            model,
        }
    }

    fn initialize(&mut self) -> Result<(), ModelError> {
        for (name, v, lo) in [
            ("alpha", self.alpha, 0.0),
            ("tol_z", self.tol_z, 0.0),
            ("tol_p", self.tol_p, 0.0),
            ("v_eps", self.v_eps, 0.0),
        ] {
            if !(v > lo && v.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {v} must be positive")));
            }
        }
        if !(0.0..=1.0).contains(&self.eta) {
            return Err(ModelError::new(format!("parameter eta = {} must lie in [0, 1]", self.eta)));
        }
        if !(self.h >= 0.0 && self.h.is_finite()) {
            return Err(ModelError::new(format!("parameter h = {} s must be >= 0", self.h)));
        }
        if self.max_iter < 1 {
            return Err(ModelError::new(format!("parameter max_iter = {} must be >= 1", self.max_iter)));
        }
        self.model.circuit.eta = self.eta;
        self.model.circuit.v_eps = self.v_eps;
        self.st = State::initial(&self.model);
        self.last = StepStats::default();
        self.it_max = 0;
        self.it_total = [0, 0];
        self.p_min = self.st.p.iter().fold(f64::INFINITY, |a, p| a.min(*p));
        self.negative_warned = false;
        Ok(())
    }

    fn formulation(&self) -> Formulation {
        match (self.formulation, self.tangent) {
            (2, _) => Formulation::DoubleStep,
            (_, 2) => Formulation::Penalty(Tangent::Numerical),
            _ => Formulation::Penalty(Tangent::Analytic),
        }
    }

    /// Internal steps of the communication step H: (count, size).
    fn substeps(&self, t: f64, hh: f64) -> Result<(usize, f64), ModelError> {
        if fmu_export::grid::is_remainder(t, hh, self.h) {
            // A master's float-time remainder: no internal step, the state held.
            return Ok((0, hh));
        }
        if self.h == 0.0 || self.h >= hh {
            return Ok((1, hh));
        }
        let k = fmu_export::grid::internal_steps(t, hh, self.h)?;
        Ok((k as usize, hh / k as f64))
    }

    /// Advances over [t, t + H], `drive(τ0, τ1)` giving the drive of the sub-step [τ0, τ1].
    fn advance(&mut self, t: f64, hh: f64, drive: impl Fn(f64, f64) -> Drive) -> Result<(), ModelError> {
        let (k, dt) = self.substeps(t, hh)?;
        if k == 0 {
            // A master's float-time remainder: the state (and the last step's diagnostics) held.
            self.st.t = t + hh;
            return Ok(());
        }
        let set = Settings {
            dt,
            alpha: self.alpha,
            tol_z: self.tol_z,
            tol_p: self.tol_p,
            max_iter: usize::try_from(self.max_iter).unwrap_or(100),
            tangent: Tangent::Analytic,
        };
        let integ = Integrator::with_settings(&self.model, self.formulation(), set);
        let mut st = self.st.clone();
        st.t = t;
        let mut it_max = 0;
        let mut last = self.last;
        let mut total = self.it_total;
        for i in 0..k {
            let (a, b) = (i as f64 * dt, (i + 1) as f64 * dt);
            last = integ
                .step_driven(&mut st, drive(a, b))
                .map_err(|e| ModelError::new(format!("semi-recursive model {}: {e}", self.model.name)))?;
            it_max = it_max.max(last.iterations);
            self.p_min = st.p.iter().fold(self.p_min, |a, p| a.min(*p));
            total[0] += i64::try_from(last.iterations).unwrap_or(0);
            total[1] += 1;
        }
        st.t = t + hh;
        self.st = st;
        self.last = last;
        self.it_max = i32::try_from(it_max).unwrap_or(i32::MAX);
        self.it_total = total;
        Ok(())
    }

    fn visit(&mut self, v: &mut dyn StateVisitor) {
        for x in [&mut self.formulation, &mut self.tangent, &mut self.max_iter, &mut self.it_max] {
            let mut k = i64::from(*x);
            v.integer(&mut k);
            *x = i32::try_from(k).unwrap_or(0);
        }
        for x in &mut self.it_total {
            v.integer(x);
        }
        for x in [
            &mut self.h,
            &mut self.alpha,
            &mut self.tol_z,
            &mut self.tol_p,
            &mut self.eta,
            &mut self.v_eps,
            &mut self.p_min,
        ] {
            v.real(x);
        }
        v.boolean(&mut self.negative_warned);
        self.model.circuit.eta = self.eta;
        self.model.circuit.v_eps = self.v_eps;
        let st = &mut self.st;
        for x in [&mut st.t, &mut st.u, &mut st.w_act, &mut st.w_fric, &mut st.force, &mut st.friction, &mut st.e_pot0]
        {
            v.real(x);
        }
        v.reals(&mut st.z);
        v.reals(&mut st.zd);
        v.reals(&mut st.zdd);
        v.reals(&mut st.lambda);
        v.reals(&mut st.p);
        v.reals(&mut st.pd);
        v.reals(&mut st.s);
        let l = &mut self.last;
        for x in [&mut l.phi, &mut l.phi_d, &mut l.phi_dd] {
            v.real(x);
        }
        let mut it = i64::try_from(l.iterations).unwrap_or(0);
        v.integer(&mut it);
        l.iterations = usize::try_from(it).unwrap_or(0);
    }
}

#[cold]
fn unreachable_model(e: &str) -> Model {
    // Only reachable if a model table in models.rs is edited into an inconsistent state; the
    // unit tests build every model.
    #[allow(clippy::panic)]
    {
        panic!("built-in semi-recursive model is inconsistent: {e}")
    }
}

fn which(w: u8) -> Which {
    match w {
        0 => Which::A,
        1 => Which::D,
        _ => Which::E,
    }
}

/// Joint coordinate k (rad), 0 beyond the model's count.
fn z_of<const K: usize>(c: &Core) -> f64 {
    c.st.z.get(K).copied().unwrap_or(0.0)
}

/// Variables both kinds share: parameters, then outputs (in that order within the groups).
trait HasCore {
    fn core(&self) -> &Core;
    fn core_mut(&mut self) -> &mut Core;
}

macro_rules! common_parameters {
    ($t:ty) => {
        vec![
            Variable::enumeration("formulation", &FORMULATION, "penalty (default) or double-step", |m: &$t| m.core().formulation, |m, x| m.core_mut().formulation = x),
            Variable::enumeration("tangent", &TANGENT, "Newton tangent of the penalty formulation: analytic (default) or numerical (the double-step tangent is always numerical, as in 002)", |m: &$t| m.core().tangent, |m, x| m.core_mut().tangent = x),
            Variable::parameter("h", "s", "Internal step; 0 = the communication step; otherwise it must divide the communication step", |m: &$t| m.core().h, |m, x| m.core_mut().h = x).min(0.0),
            Variable::parameter("alpha", "", "Penalty factor alpha (Pub I, 002: 1e11)", |m: &$t| m.core().alpha, |m, x| m.core_mut().alpha = x).min(0.0),
            Variable::parameter("tol_z", "rad", "Newton tolerance on the joint coordinates (Pub I, 002: 1e-7)", |m: &$t| m.core().tol_z, |m, x| m.core_mut().tol_z = x).min(0.0),
            Variable::parameter("tol_p", "Pa", "Newton tolerance on the pressures (Pub I: 1e2, 002: 1e-2)", |m: &$t| m.core().tol_p, |m, x| m.core_mut().tol_p = x).min(0.0),
            Variable::integer("max_iter", "Newton iteration cap per internal step (100, Pub II)", |m: &$t| m.core().max_iter, |m, x| m.core_mut().max_iter = x).min(1.0),
            Variable::parameter("eta", "1", "Cylinder efficiency of the friction law F_mu = (1 - eta)|p1 A1 - p2 A2| tanh(s_dot/v_eps) (Pub I Table 1: 0.88; SPEC 3.7); 1 = no friction", |m: &$t| m.core().eta, |m, x| m.core_mut().eta = x).min(0.0).max(1.0),
            Variable::parameter("v_eps", "m/s", "Friction regularisation velocity (SPEC 3.7: 1 mm/s)", |m: &$t| m.core().v_eps, |m, x| m.core_mut().v_eps = x).min(0.0),
        ]
    };
}

macro_rules! common_outputs {
    ($t:ty, $n:expr) => {{
        let z: [Variable<$t>; 5] = [
            Variable::output("z1", "rad", "Joint coordinate z1 (relative angle)", |m: &$t| z_of::<0>(m.core()))
                .depends_on(&[]),
            Variable::output("z2", "rad", "Joint coordinate z2 (relative angle)", |m: &$t| z_of::<1>(m.core()))
                .depends_on(&[]),
            Variable::output("z3", "rad", "Joint coordinate z3 (relative angle)", |m: &$t| z_of::<2>(m.core()))
                .depends_on(&[]),
            Variable::output("z4", "rad", "Joint coordinate z4 (relative angle)", |m: &$t| z_of::<3>(m.core()))
                .depends_on(&[]),
            Variable::output("z5", "rad", "Joint coordinate z5 (relative angle)", |m: &$t| z_of::<4>(m.core()))
                .depends_on(&[]),
        ];
        let mut v: Vec<Variable<$t>> = z.into_iter().take($n).collect();
        v.extend([
            Variable::output("s", "m", "Actuator length (Pub I eq. 47)", |m: &$t| m.core().st.s[0]).depends_on(&[]),
            Variable::output("s_dot", "m/s", "Actuator velocity", |m: &$t| m.core().st.s[1]).depends_on(&[]),
            Variable::output("s_ddot", "m/s2", "Actuator acceleration", |m: &$t| m.core().st.s[2]).depends_on(&[]),
            Variable::output(
                "F_s",
                "N",
                "Actuator force along s with friction, p1 A1 - p2 A2 - F_mu (Pub I eq. 36)",
                |m: &$t| m.core().st.force,
            )
            .depends_on(&[]),
            Variable::output("E_kin", "J", "Kinetic energy", |m: &$t| m.core().st.kinetic(&m.core().model))
                .depends_on(&[]),
            Variable::output("E_pot", "J", "Potential energy relative to t = 0", |m: &$t| {
                m.core().st.potential(&m.core().model)
            })
            .depends_on(&[]),
            Variable::output(
                "W_act",
                "J",
                "Actuator work, integral of F_s s_dot (trapezoidal; friction included)",
                |m: &$t| m.core().st.w_act,
            )
            .depends_on(&[]),
            Variable::output(
                "W_fric",
                "J",
                "Friction work, integral of F_mu s_dot (dissipated; already inside W_act)",
                |m: &$t| m.core().st.w_fric,
            )
            .depends_on(&[]),
            Variable::output(
                "E_balance",
                "J",
                "Energy balance E_kin + E_pot - W_act (zero for an exact integration)",
                |m: &$t| m.core().st.energy_error(&m.core().model),
            )
            .depends_on(&[]),
            Variable::output(
                "phi_norm",
                "",
                "Constraint violation max|Phi| (m or rad) after the last internal step",
                |m: &$t| m.core().last.phi,
            )
            .depends_on(&[]),
            Variable::output("phi_d_norm", "", "Velocity constraint violation max|Phi_z z_dot|", |m: &$t| {
                m.core().last.phi_d
            })
            .depends_on(&[]),
            Variable::output(
                "phi_dd_norm",
                "",
                "Acceleration constraint violation max|Phi_z z_ddot + dPhi_z/dt z_dot|",
                |m: &$t| m.core().last.phi_dd,
            )
            .depends_on(&[]),
            Variable::output(
                "iterations",
                "1",
                "Most Newton iterations of an internal step in the last communication step",
                |m: &$t| f64::from(m.core().it_max),
            )
            .depends_on(&[]),
            Variable::output(
                "iterations_avg",
                "1",
                "Average Newton iterations per internal step since the start",
                |m: &$t| {
                    let [a, b] = m.core().it_total;
                    if b == 0 {
                        0.0
                    } else {
                        a as f64 / b as f64
                    }
                },
            )
            .depends_on(&[]),
        ]);
        v
    }};
}

/// Monolithic FMU of model `W` (0 = A, 1 = D, 2 = E).
#[derive(Debug, Clone)]
pub struct MonolithicFmu<const W: u8> {
    /// Shared state.
    pub core: Core,
    /// Take U_ref from the model's work cycle (true, default) or from input `U_ref`.
    pub use_cycle: bool,
    /// Input U_ref (V).
    pub u_ref: InputSignal,
    /// p3 model, an item of `hydraulics-lumped3`'s P3Model enumeration (1 LF, 2 SP).
    pub p3_model: i32,
    /// SP flow corrections γ± (Pub II eq. 35).
    pub gamma: Gamma,
    /// Valve–throttle hose volume V_h3 (m³): Pub I 4.71e-5, Pub II (Model A′) 7.85e-7.
    pub v_h3: f64,
}

impl<const W: u8> MonolithicFmu<W> {
    /// The circuit of the parameters: the model's with V_h3 and the p3 model applied.
    fn apply_circuit(&mut self) {
        let c = &self.core.model.circuit;
        let mut lumped = c.lumped.clone();
        lumped.v_h3 = self.v_h3;
        let p3 = if self.p3_model == P3_SP { P3Model::Sp(self.gamma) } else { P3Model::Lf };
        self.core.model.circuit = Circuit::new(lumped, c.eta, c.v_eps).with_p3(p3);
    }

    /// Checks the p3 parameters (`fmi2ExitInitializationMode`).
    fn check_p3(&self) -> Result<(), ModelError> {
        if self.p3_model != P3_LF && self.p3_model != P3_SP {
            return Err(ModelError::new(format!("parameter p3_model = {} is not 1 (LF) or 2 (SP)", self.p3_model)));
        }
        for (name, v) in [("gamma_plus", self.gamma.plus), ("gamma_minus", self.gamma.minus), ("V_h3", self.v_h3)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {v} must be positive")));
            }
        }
        Ok(())
    }
}

/// Mechanism-only co-simulation FMU of model `W`.
#[derive(Debug, Clone)]
pub struct MechanismFmu<const W: u8> {
    /// Shared state.
    pub core: Core,
    /// Input F: pressure force p1 A1 − p2 A2 (N).
    pub force: InputSignal,
}

impl<const W: u8> Default for MonolithicFmu<W> {
    fn default() -> Self {
        let core = Core::new(which(W));
        let v_h3 = core.model.circuit.lumped.v_h3;
        Self { core, use_cycle: true, u_ref: InputSignal::new(0.0), p3_model: P3_LF, gamma: Gamma::default(), v_h3 }
    }
}

impl<const W: u8> Default for MechanismFmu<W> {
    fn default() -> Self {
        let core = Core::new(which(W));
        let f0 = core.model.f0;
        Self { core, force: InputSignal::new(f0) }
    }
}

impl<const W: u8> HasCore for MonolithicFmu<W> {
    fn core(&self) -> &Core {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl<const W: u8> HasCore for MechanismFmu<W> {
    fn core(&self) -> &Core {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

/// Names, titles and sources per model.
struct Names {
    model: &'static str,
    ident: [&'static str; 2],
    fmu: [&'static str; 2],
    title: &'static str,
    stop: f64,
    n: usize,
}

fn names(w: u8) -> Names {
    match w {
        0 => Names {
            model: "A",
            ident: ["semirecursive_a", "semirecursive_a_mechanism"],
            fmu: ["semirecursive-a", "semirecursive-a-mechanism"],
            title: "Publication I four-bar (Model A)",
            stop: 7.0,
            n: 3,
        },
        1 => Names {
            model: "D",
            ident: ["semirecursive_d", "semirecursive_d_mechanism"],
            fmu: ["semirecursive-d", "semirecursive-d-mechanism"],
            title: "seed 002 four-bar (Model D)",
            stop: 10.0,
            n: 3,
        },
        _ => Names {
            model: "E",
            ident: ["semirecursive_e", "semirecursive_e_mechanism"],
            fmu: ["semirecursive-e", "semirecursive-e-mechanism"],
            title: "seed 002 quick-return (Model E)",
            stop: 10.0,
            n: 5,
        },
    }
}

const SOURCE: &str = "Rahikainen, Kiani, Sopanen, Jalali, Mikkola, Publication I (seed 000, eqs. 1-55, Tables 1-3) and seed 002 (double-step vs penalty semi-recursive, eqs. 1-47); project defaults SPEC 3.7";

const DOCS: &str = r#"<p><b>Mechanism</b>: planar semi-recursive formulation in relative joint coordinates z (Pub I §2, 002 §2):
Z_k = Z_{k-1} + b_k ż_k, Ż_k = Ż_{k-1} + b_k z̈_k + d_k with b_k = [y_k; −x_k; 1] for a revolute joint at (x_k, y_k);
M(z) = R_dᵀTᵀM̄TR_d, Q = R_dᵀTᵀ(Q̄ − M̄TṘ_dż) (002 eq. 11); loops closed by cut joints Φ(z) = 0 (revolute or prismatic).
Models: A = Pub I four-bar (DIGEST §1.2, J = m(L² + 0.05²)/12), D = 002 four-bar (§1.6), E = 002 quick-return (§1.7; cylinder from Q = (−0.96, 3) m to the crank midpoint).</p>
<p><b>Circuit</b> (monolithic FMUs): the three-volume lumped-fluid circuit of Pub I eqs. 29–36, 50–52 with Pub I Table 1 values; τ = 1/(2π·35 Hz), A_t = π(3 mm)²/4,
C_v = 2.138e-8 m³/(s·V·√Pa), laminar band 2 bar; chamber lengths l1 = l10 + (s − s0), l2 = l20 − (s − s0) (printed signs corrected); l10/l20 = 0.2/0.5 m (A, D), 0.5/0.2 m (E).
Initial state: static equilibrium, p2 = 3.5 MPa, p1 = p3 from p1A1 − p2A2 = F_s0 (Pub I eqs. 53–54). Work cycles: A: +10 V on [0.5, 2.8) s, −10 V on [4.5, 6) s;
D: +10 V on [1, 2.5), −10 V on [5, 8); E: −10 V on [1, 4), +10 V on [6.5, 8); 0 V elsewhere (typos of Pub I eq. 55 and 002 eqs. 46–47 fixed).</p>
<p><b>Friction</b> (SPEC 3.7): F_s = F_p − (1 − η)|F_p| tanh(ṡ/v_ε), F_p = p1A1 − p2A2, η = 0.88, v_ε = 1 mm/s. The mechanism FMUs take F_p as input F and apply the same law.</p>
<p><b>Integrators</b> (trapezoidal rule): <i>penalty</i>: M z̈ + Φ_zᵀαΦ + Φ_zᵀλ* = Q (Pub I eq. 15), λ* ← λ* + αΦ after each iteration, Newton on [z; p] (eqs. 39–41) with the tangent of eq. 42
(analytic: exact, the mechanical blocks by dual numbers) or forward differences (eq. 45), velocity and acceleration projections (002 eqs. 20–21);
the update is halved after 25 iterations (only reached at Δt = 8 ms on Model A when the friction switches inside a step).
<i>double-step</i>: independent coordinates by Gaussian elimination with full pivoting of Φ_z, dependent ones by Newton on Φ(z) = 0, reduced equations R_zᵀ(Mz̈ − Q) = 0 (002 eq. 16),
Newton on [z_i; p] with the numerical tangent. Tolerances: 1e-7 rad and 1e2 Pa (A) or 1e-2 Pa (D, E); α = 1e11; cap 100 iterations.</p>
<p><b>Singular perturbation</b> (monolithic FMUs, <code>p3_model = SP</code>; Publication II §2.2, eqs. 33–35): p3 leaves the Newton unknowns, which become [z; p1; p2];
p3 is the quasi-steady state Q_V3 = Q31 at (p1, U): eqs. 33–34, p3 = (p1 + α p_P)/(1 + α) for U &gt; 0, (p1 + α p_T)/(1 + α) for U &lt; 0, α = (U C_v/C_t)², p3 = p1 at U = 0,
and in the laminar band |Δp| &lt; 2 bar of either orifice the exact root of Q_V3(p3) = Q31(p3) with the same orifice laws (see <code>hydraulics-lumped3</code>).
The throttle flow entering ṗ1 is γ+ Q̄31 (U &gt; 0) or γ− Q̄31 (U &lt; 0), eq. 35: default γ± = 1 (the quasi-steady state is exact; SPEC 3.7), Publication II Table 1: 1.16 and 1.05.
<b>Model A′</b> (Publication II Table 1) is semirecursive-a with V_h3 = 7.85e-7 m³ (and γ+ = 1.16, γ− = 1.05 for the paper's SP); initial state and cycle as Model A (static equilibrium, Pub II eq. 40).</p>
<p><b>Failures</b>: a step whose Newton iteration does not converge ends with fmi2Error naming the model and time. Negative pressures (Model D's rod side dips to about −0.23 MPa after 2.5 s) are integrated through: the circuit has no cavitation law (SPEC 3.7).</p>"#;

impl<const W: u8> CoSimModel for MonolithicFmu<W> {
    fn info() -> ModelInfo {
        let n = names(W);
        ModelInfo {
            model_name: n.fmu[0],
            model_identifier: n.ident[0],
            fmu_name: n.fmu[0],
            description: match W {
                0 => "Publication I four-bar (Model A) with the lumped-fluid circuit, monolithic semi-recursive (penalty or double-step, trapezoidal rule)",
                1 => "Seed 002 four-bar (Model D) with the lumped-fluid circuit, monolithic semi-recursive (penalty or double-step, trapezoidal rule)",
                _ => "Seed 002 quick-return (Model E) with the lumped-fluid circuit, monolithic semi-recursive (penalty or double-step, trapezoidal rule)",
            },
            documentation_html: DOCS,
            source: SOURCE,
            default_experiment: (0.0, n.stop, 1e-3),
            interpolates_inputs: true,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        let mut v = common_parameters!(Self);
        v.push(Variable::boolean(
            "use_cycle",
            "Valve reference from the model's work cycle (true, default: Pub I eq. 55 / 002 eqs. 46-47) or from input U_ref (false)",
            |m: &Self| m.use_cycle,
            |m, x| m.use_cycle = x,
        ));
        v.push(Variable::calculated_parameter(
            "F_s0",
            "N",
            "Static actuator force of the initial configuration (Pub I eq. 53)",
            |m: &Self| m.core.model.f0,
        ));
        v.push(
            Variable::input(
                "U_ref",
                "V",
                "Valve reference (used when use_cycle = false)",
                |m: &Self| m.u_ref.value,
                |m| &mut m.u_ref,
            )
            .min(-10.0)
            .max(10.0),
        );
        v.extend(common_outputs!(Self, names(W).n));
        v.push(Variable::output("p1", "Pa", "Piston-side pressure", |m: &Self| m.core.st.p[0]).depends_on(&[]));
        v.push(Variable::output("p2", "Pa", "Rod-side pressure", |m: &Self| m.core.st.p[1]).depends_on(&[]));
        v.push(
            Variable::output("p3", "Pa", "Pressure between directional valve and throttle", |m: &Self| m.core.st.p[2])
                .depends_on(&[]),
        );
        v.push(Variable::output("U", "V", "Spool position (Pub I eq. 34)", |m: &Self| m.core.st.u).depends_on(&[]));
        v.push(
            Variable::output(
                "p_min",
                "Pa",
                "Lowest pressure of any volume since the start (no cavitation law: may be negative)",
                |m: &Self| m.core.p_min,
            )
            .depends_on(&[]),
        );
        // Publication II (last in the table: the value references above are unchanged).
        v.push(Variable::enumeration(
            "p3_model",
            &P3_MODEL,
            "Model of p3: LF (default; p3 a Newton unknown, Pub I eq. 52) or SP (p3 algebraic by singular perturbation, Publication II eqs. 33-35: Newton on [z; p1; p2])",
            |m: &Self| m.p3_model,
            |m, x| m.p3_model = x,
        ));
        v.push(
            Variable::parameter(
                "gamma_plus",
                "1",
                "SP flow correction gamma+ of Pub II eq. 35 for U > 0 (default 1; Publication II Table 1: 1.16)",
                |m: &Self| m.gamma.plus,
                |m, x| m.gamma.plus = x,
            )
            .min(1e-9),
        );
        v.push(
            Variable::parameter(
                "gamma_minus",
                "1",
                "SP flow correction gamma- of Pub II eq. 35 for U < 0 (default 1; Publication II Table 1: 1.05)",
                |m: &Self| m.gamma.minus,
                |m, x| m.gamma.minus = x,
            )
            .min(1e-9),
        );
        v.push(
            Variable::parameter(
                "V_h3",
                "m3",
                "Hose volume between directional valve and throttle (Pub I Table 1: 4.71e-5; Model A' of Publication II Table 1: 7.85e-7)",
                |m: &Self| m.v_h3,
                |m, x| m.v_h3 = x,
            )
            .min(1e-12),
        );
        v.push(
            Variable::output(
                "Q31",
                "m3/s",
                "Throttle flow V3 -> V1 (SP: gamma times the quasi-steady flow, Pub II eq. 35)",
                |m: &Self| m.core.model.circuit.q31(&m.core.st.p, m.core.st.u),
            )
            .depends_on(&[]),
        );
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.check_p3()?;
        self.apply_circuit();
        self.core.initialize()
    }

    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        let (cycle, u) = (self.use_cycle, self.u_ref);
        self.core.advance(t, h, |a, b| if cycle { Drive::Circuit } else { Drive::CircuitRef(u.at(a), u.at(b)) })?;
        if self.core.p_min < 0.0 && !self.core.negative_warned {
            ctx.report(format!(
                "by t = {} s a pressure fell to {:.6e} Pa: integrated through (the circuit has no cavitation law; SPEC 3.7; output p_min; warned once)",
                t + h,
                self.core.p_min
            ));
            self.core.negative_warned = true;
        }
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        self.core.visit(v);
        v.boolean(&mut self.use_cycle);
        v.input(&mut self.u_ref);
        let mut k = i64::from(self.p3_model);
        v.integer(&mut k);
        self.p3_model = i32::try_from(k).unwrap_or(P3_LF);
        for x in [&mut self.gamma.plus, &mut self.gamma.minus, &mut self.v_h3] {
            v.real(x);
        }
        self.apply_circuit();
    }
}

impl<const W: u8> CoSimModel for MechanismFmu<W> {
    fn info() -> ModelInfo {
        let n = names(W);
        ModelInfo {
            model_name: n.fmu[1],
            model_identifier: n.ident[1],
            fmu_name: n.fmu[1],
            description: match W {
                0 => "Publication I four-bar (Model A) mechanism alone for co-simulation, semi-recursive (penalty or double-step): input pressure force F, outputs s, s_dot, s_ddot",
                1 => "Seed 002 four-bar (Model D) mechanism alone for co-simulation, semi-recursive (penalty or double-step): input pressure force F, outputs s, s_dot, s_ddot",
                _ => "Seed 002 quick-return (Model E) mechanism alone for co-simulation, semi-recursive (penalty or double-step): input pressure force F, outputs s, s_dot, s_ddot",
            },
            documentation_html: DOCS,
            source: SOURCE,
            default_experiment: (0.0, n.stop, 1e-3),
            interpolates_inputs: true,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        let mut v = common_parameters!(Self);
        v.push(Variable::calculated_parameter(
            "F_s0",
            "N",
            "Static actuator force of the initial configuration (Pub I eq. 53); the start value of F",
            |m: &Self| m.core.model.f0,
        ));
        v.push(Variable::input(
            "F",
            "N",
            "Pressure force p1 A1 - p2 A2 of the cylinder (friction is applied here); start value: the static force",
            |m: &Self| m.force.value,
            |m| &mut m.force,
        ));
        v.extend(common_outputs!(Self, names(W).n));
        // F_s = F - F_mu leaving Initialization Mode follows the input F (after a step: the step's result).
        for x in v.iter_mut().filter(|x| x.name == "F_s") {
            x.initially_from_inputs = true;
        }
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.core.initialize()?;
        self.core.st.force = self.core.model.circuit.force_from(self.force.value, 0.0);
        Ok(())
    }

    fn do_step(&mut self, t: f64, h: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        let f = self.force;
        self.core.advance(t, h, |_, b| Drive::Force(f.at(b)))
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        self.core.visit(v);
        v.input(&mut self.force);
    }
}

/// The model name of FMU kind `W` ("A", "D", "E").
pub fn model_name(w: u8) -> &'static str {
    names(w).model
}

/// Title of model `W`.
pub fn model_title(w: u8) -> &'static str {
    names(w).title
}
