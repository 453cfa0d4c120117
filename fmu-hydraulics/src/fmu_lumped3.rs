//! `hydraulics-lumped3.fmu`: the Publication III three-volume circuit as an FMI 2.0
//! Co-Simulation FMU.
//!
//! Coupling variants (Publication IV): force coupling connects output `F` (direct feedthrough
//! from `s_dot` through the friction and damper terms, and from `s` through the end dampers,
//! both declared in ModelStructure); pressure coupling connects `p1`, `p2` (no feedthrough) and
//! the mechanics computes p1 A1 − p2 A2 − c ṡ (+ dampers) itself.

use crate::cavitation::{self, Cavitation, HasCavitation, Monitor, StepWatch};
use crate::integrator::Ode;
use crate::interface::{ImCircuit, ImOde};
use crate::interface_fmu::{self, HasImMode, ImMode};
use crate::lumped3::{idx, Flows, Lumped3, Lumped3Ode};
use crate::sp::{self, Gamma, Lumped3SpOde};
use crate::stepping::{self, HasStepping, Stepping};
use fmu_export::{CoSimModel, Context, EnumType, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};
use model_description::DependencyKind as Dep;
use nalgebra::SVector;

/// Static load held at rest, F0 = 2 g (m/2 + m_p + m_h) of the Publication III crane (N),
/// SPEC §3.6.
const DEFAULT_F_STATIC: f64 = 8829.0;
/// Initial rod-side pressure (Pa), SPEC §3.6.
const DEFAULT_P2: f64 = 3.5e6;
/// Spool signal of the valve's rating point (V): full opening.
const DEFAULT_U_N: f64 = 10.0;
/// Pressure difference of the valve's rating point (Pa): 35 bar. The paper gives only C_v.
const DEFAULT_DP_N: f64 = 3.5e6;

/// `P3Model` enumeration: how p3 (the valve-to-throttle volume V3) is modelled.
pub static P3_MODEL: EnumType = EnumType {
    name: "P3Model",
    description: "Model of the pressure p3 between directional valve and throttle",
    items: &[
        ("LF", 1, "lumped fluid: p3 is a state, eq. 22 (Publication III)"),
        ("SP", 2, "singular perturbation: p3 algebraic, quasi-steady Q_V3 = Q31 (Publication II eqs. 33-35)"),
    ],
};

/// Item of [`P3_MODEL`]: lumped fluid.
pub const P3_LF: i32 = 1;
/// Item of [`P3_MODEL`]: singular perturbation.
pub const P3_SP: i32 = 2;

/// The FMU model.
#[derive(Debug, Clone)]
pub struct Lumped3Fmu {
    /// Circuit parameters; `circuit.cv` is calculated from the valve rating at initialization.
    pub circuit: Lumped3,
    /// Rated flow of the directional valve Q_N (m³/s) at U_N and Δp_N: C_v = Q_N/(U_N √Δp_N).
    pub q_n: f64,
    /// Spool signal of the rating point U_N (V).
    pub u_n: f64,
    /// Pressure difference of the rating point Δp_N (Pa).
    pub dp_n: f64,
    /// Static load at rest F0 (N): p1 A1 − p2 A2 = F0.
    pub f_static: f64,
    /// Initial rod-side pressure p2 (Pa).
    pub p2_0: f64,
    /// Initial p1 from the static equilibrium (calculated parameter, Pa).
    pub p1_0: f64,
    /// Initial p3 = p1 (no throttle flow at rest; calculated parameter, Pa).
    pub p3_0: f64,
    /// Integrator settings.
    pub stepping: Stepping,
    /// p3 model, an item of [`P3_MODEL`] (default LF).
    pub p3_model: i32,
    /// Flow corrections γ± of eq. 35 (SP only).
    pub gamma: Gamma,
    /// State [p1, p2, p3, U] (Pa, Pa, Pa, V); with SP, p3 is the quasi-steady value of (p1, U).
    pub x: SVector<f64, 4>,
    /// Input s (m).
    pub s: InputSignal,
    /// Input ṡ (m/s).
    pub s_dot: InputSignal,
    /// Input U_ref (V).
    pub u_ref: InputSignal,
    /// Outputs of the state reached by the last step (see [`StepResults`]); `None` before the
    /// first step and after the state was replaced from outside (FMU state): the getters then
    /// evaluate them.
    pub results: Option<StepResults>,
    /// Whether a piston position beyond a stroke end was reported (once per instance).
    pub stroke_warned: bool,
    /// Cavitation bookkeeping (time below p_cav, episodes).
    pub monitor: Monitor,
    /// Interface-model mode ([`crate::interface`]): integrate s, ṡ with m_eff s̈ = F + f_eff.
    pub im: ImMode,
    /// With `strict_pressure` (no cavitation law): integrate through negative pressures with one
    /// warning instead of failing, as a model without a cavitation law does (the semi-recursive
    /// seed-002 four-bar, whose rod side dips to about −0.23 MPa for ~20 ms, SPEC §3.7). Default
    /// false.
    pub allow_negative_pressure: bool,
    /// Whether a negative pressure was reported (once per instance).
    pub negative_warned: bool,
}

/// The circuit as the interface model sees it: rates and force at a given s, ṡ.
struct Lumped3Im<'a> {
    circuit: &'a Lumped3,
    u_ref: &'a InputSignal,
}

impl ImCircuit<4> for Lumped3Im<'_> {
    fn rates_at(&self, tau: f64, x: &SVector<f64, 4>, s: f64, s_dot: f64) -> SVector<f64, 4> {
        self.circuit.rates(x, &crate::lumped3::Inputs { s, s_dot, u_ref: self.u_ref.at(tau) })
    }
    fn force_at(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64) -> f64 {
        self.circuit.force(x[idx::P1], x[idx::P2], s, s_dot)
    }
    fn admissible_states(&self, x: &SVector<f64, 4>) -> bool {
        self.circuit.cavitation.strict || (x[idx::P1] > 0.0 && x[idx::P2] > 0.0 && x[idx::P3] > 0.0)
    }
    fn rescues_steps(&self) -> bool {
        !self.circuit.cavitation.strict
    }
}

/// Outputs evaluated once at the end of a step (the export layer reads every output after every
/// step), with the constants of the step instead of afresh per getter: the valve flows, which
/// depend on the state alone, and λmax, which depends on the state and on s (the value s holds
/// after the step, `s.at(H)`; a master that sets another s gets λmax evaluated anew). Same
/// arithmetic as the getters' definitions, so the same values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResults {
    /// Bits of the s and ṡ the λmax below belongs to.
    s_bits: (u64, u64),
    /// |λ|max (1/s), [`Lumped3::stiffest_eigenvalue`].
    lambda_max: f64,
    /// The valve flows, [`Lumped3::flows`].
    flows: Flows,
}

impl Default for Lumped3Fmu {
    fn default() -> Self {
        let circuit = Lumped3::default();
        // Rating point that reproduces Table 2's C_v exactly (≈ 12.0 L/min at 35 bar, 10 V).
        let q_n = circuit.cv * DEFAULT_U_N * DEFAULT_DP_N.sqrt();
        let (p1, p3) = circuit.static_pressures(DEFAULT_F_STATIC, DEFAULT_P2);
        Self {
            s: InputSignal::new(circuit.s0),
            circuit,
            q_n,
            u_n: DEFAULT_U_N,
            dp_n: DEFAULT_DP_N,
            f_static: DEFAULT_F_STATIC,
            p2_0: DEFAULT_P2,
            p1_0: p1,
            p3_0: p3,
            stepping: Stepping::default(),
            p3_model: P3_LF,
            gamma: Gamma::default(),
            x: SVector::<f64, 4>::new(p1, DEFAULT_P2, p3, 0.0),
            s_dot: InputSignal::new(0.0),
            u_ref: InputSignal::new(0.0),
            results: None,
            stroke_warned: false,
            monitor: Monitor::default(),
            im: ImMode::new(Lumped3::default().s0),
            allow_negative_pressure: false,
            negative_warned: false,
        }
    }
}

impl HasStepping for Lumped3Fmu {
    const LAMBDA_INPUTS: &'static [(&'static str, model_description::DependencyKind)] =
        &[("s", model_description::DependencyKind::Dependent), ("s_dot", model_description::DependencyKind::Dependent)];
    fn stepping(&self) -> &Stepping {
        &self.stepping
    }
    fn stepping_mut(&mut self) -> &mut Stepping {
        &mut self.stepping
    }
    fn lambda_max(&self) -> f64 {
        match &self.results {
            // The Jacobian depends on the inputs through s (and ṡ, below p_cav) alone.
            Some(r) if r.s_bits == (self.s.value.to_bits(), self.s_dot.value.to_bits()) => r.lambda_max,
            _ if self.sp() => crate::integrator::stiffest_eigenvalue(&self.sp_ode(), 0.0, &sp::reduced_state(&self.x)),
            _ => self.circuit.stiffest_eigenvalue(&self.x, &self.ode().inputs(0.0)),
        }
    }
}

impl HasImMode for Lumped3Fmu {
    fn im(&self) -> &ImMode {
        &self.im
    }
    fn im_mut(&mut self) -> &mut ImMode {
        &mut self.im
    }
    fn actuator(&self) -> (f64, f64) {
        (self.s.value, self.s_dot.value)
    }
}

impl HasCavitation for Lumped3Fmu {
    fn cavitation(&self) -> &Cavitation {
        &self.circuit.cavitation
    }
    fn cavitation_mut(&mut self) -> &mut Cavitation {
        &mut self.circuit.cavitation
    }
    fn monitor(&self) -> &Monitor {
        &self.monitor
    }
    fn monitor_mut(&mut self) -> &mut Monitor {
        &mut self.monitor
    }
}

impl Lumped3Fmu {
    fn ode(&self) -> Lumped3Ode<'_> {
        Lumped3Ode::new(&self.circuit, &self.s, &self.s_dot, &self.u_ref)
    }

    fn sp_ode(&self) -> Lumped3SpOde<'_> {
        Lumped3SpOde { lf: self.ode(), gamma: self.gamma }
    }

    /// Whether p3 is algebraic (singular perturbation).
    fn sp(&self) -> bool {
        self.p3_model == P3_SP
    }

    /// The valve flows of the state `x`; with SP the throttle flow is γ Q̄31 (eq. 35), the flow
    /// that enters ṗ1.
    fn flows_of(&self, c: &crate::lumped3::Constants, x: &SVector<f64, 4>) -> Flows {
        let mut f = self.circuit.flows_with(c, x);
        if self.sp() {
            f.q31 *= self.gamma.at(x[idx::U]);
        }
        f
    }

    /// Valve flows now (m³/s).
    pub fn flows(&self) -> Flows {
        match &self.results {
            Some(r) => r.flows,
            None => self.flows_of(&self.circuit.constants(), &self.x),
        }
    }

    /// Cylinder force now (N), eq. 30 with the end dampers of eq. 31.
    pub fn force(&self) -> f64 {
        self.circuit.force(self.x[idx::P1], self.x[idx::P2], self.s.value, self.s_dot.value)
    }

    /// Hydraulic power delivered to the piston, (p1 A1 − p2 A2) ṡ (W).
    pub fn power(&self) -> f64 {
        (self.x[idx::P1] * self.circuit.a1() - self.x[idx::P2] * self.circuit.a2()) * self.s_dot.value
    }

    /// ẋ now (with SP, ṗ3 is the rate of the quasi-steady p3).
    pub fn rates(&self) -> SVector<f64, 4> {
        if self.sp() {
            let y = sp::reduced_state(&self.x);
            let ode = self.sp_ode();
            let yd = ode.f(0.0, &y);
            let p3_dot = sp::p3_rate(&self.circuit, &ode.lf.constants, &y, &yd);
            return SVector::<f64, 4>::new(yd[sp::idx_sp::P1], yd[sp::idx_sp::P2], p3_dot, yd[sp::idx_sp::U]);
        }
        self.ode().f(0.0, &self.x)
    }

    /// dF/dt now (N/s): ṗ1 A1 − ṗ2 A2 − c s̈ + dF_d/dt, with s̈ from the input derivative of ṡ.
    fn force_rate(&self) -> f64 {
        let d = self.rates();
        let s_ddot = self.s_dot.rate_at(0.0);
        let c = &self.circuit;
        d[idx::P1] * c.a1() - d[idx::P2] * c.a2() - c.c * s_ddot
            + c.damper_force_rate(self.s.value, self.s_dot.value, s_ddot)
    }

    /// Physical range of a state: non-negative pressures (with `strict_pressure`; otherwise the
    /// cavitation law keeps them positive and this passes). Runs
    /// after every internal step: the common case is a few comparisons inline,
    /// [`range_error`](Self::range_error) names what is wrong. A piston beyond a stroke end is
    /// not an error: the chamber keeps its dead volume ([`Lumped3::chamber_lengths`]) and
    /// `do_step` warns once ([`Self::stroke_warning`]).
    #[inline]
    fn check(circuit: &Lumped3, _s: f64, x: &SVector<f64, 4>) -> Result<(), String> {
        if !circuit.cavitation.strict || (x[idx::P1] >= 0.0 && x[idx::P2] >= 0.0 && x[idx::P3] >= 0.0) {
            return Ok(());
        }
        Self::range_error(x)
    }

    /// The warning for a piston position beyond a stroke end, if `s` is one.
    #[cold]
    fn stroke_warning(circuit: &Lumped3, s: f64, t: f64) -> Option<String> {
        let (l1, l2) = circuit.stroke_positions(s);
        let (which, l) = if l1 <= 0.0 {
            ("l1", l1)
        } else if l2 <= 0.0 {
            ("l2", l2)
        } else {
            return None;
        };
        Some(format!(
            "at t = {t} s the piston position s = {s} m is beyond a stroke end (chamber length {which} = {l:.6e} m): \
             the chamber keeps only its dead volume until s is back in the stroke; the mechanism should stop the \
             piston there (warned once)"
        ))
    }

    /// The checks of [`check`](Self::check) with their messages (`Ok` for what the quick test
    /// let through only because a value is NaN, as before).
    #[cold]
    #[inline(never)]
    fn range_error(x: &SVector<f64, 4>) -> Result<(), String> {
        for (name, p) in [("p1", x[idx::P1]), ("p2", x[idx::P2]), ("p3", x[idx::P3])] {
            if p < 0.0 {
                return Err(format!(
                    "{name} = {p:.6e} Pa is negative (with strict_pressure = true the cavitation law is off, so a volume that cavitates is an error)"
                ));
            }
        }
        Ok(())
    }
}

impl Lumped3Fmu {
    /// A step in interface-model mode: [p1, p2, p3, U, s, ṡ] from the inputs s, ṡ at t, m_eff
    /// and f_eff held.
    fn do_step_im(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        let (m_eff, f_eff) = self.im.held()?;
        self.results = None;
        if fmu_export::grid::is_remainder(t, h, self.stepping.h) {
            // A master's float-time remainder changes nothing, the prediction included.
            return Ok(());
        }
        let im = Lumped3Im { circuit: &self.circuit, u_ref: &self.u_ref };
        let ode = ImOde { circuit: &im, m_eff, f_eff };
        let x = self.x;
        let mut y = SVector::<f64, 6>::new(x[0], x[1], x[2], x[3], self.s.value, self.s_dot.value);
        let circuit = &self.circuit;
        let mut watch = StepWatch::new(&mut self.monitor, &circuit.cavitation, t);
        self.stepping.advance(&ode, &mut y, t, h, ctx, |tau, y| {
            let x = SVector::<f64, 4>::new(y[0], y[1], y[2], y[3]);
            Self::check(circuit, y[4], &x)?;
            watch.observe(tau, &[("p1", y[0]), ("p2", y[1]), ("p3", y[2])]);
            Ok(())
        })?;
        watch.report(ctx);
        self.x = SVector::<f64, 4>::new(y[0], y[1], y[2], y[3]);
        self.im.motion = [y[4], y[5]];
        Ok(())
    }
}

const DOCS: &str = r#"<p><b>Equations</b> (Rahikainen, González, Naya 2019, Publication III §3.2 in seed 000, Table 2):</p>
<ul>
<li>ṗ1 = B_e1/V1 (Q31 − A1 ṡ) (eq. 20), ṗ2 = B_e2/V2 (A2 ṡ − Q2V) (eq. 21), ṗ3 = B_e3/V3 (Q_V3 − Q31) (eq. 22)</li>
<li>B_e1 = (1/B_o + A1 l1/(V1 B_c) + V_h1/(V1 B_h))⁻¹ (eq. 23), B_e2 = (1/B_o + A2 l2/(V2 B_c) + V_h2/(V2 B_h))⁻¹ (eq. 24, printed with A2 l1: corrected),
B_e3 = (1/B_o + 1/B_h)⁻¹ (eq. 25)</li>
<li>V1 = V_h1 + A1 l1, V2 = V_h2 + A2 l2, V3 = V_h3; l1 = l10 + (s − s0), l2 = l20 − (s − s0) (Publication I eq. 50 with the signs corrected so that chamber 1 expands when the actuator extends);
A1 = π d1²/4, A2 = π (d1² − d2²)/4</li>
<li>Valves (eqs. 26–27): Q = C g(Δp) with g(Δp) = sgn(Δp) √|Δp| for |Δp| ≥ Δp_L = 2 bar and the laminar line g = Δp/√Δp_L inside (Publication II §3.1.1: the flow at 2 bar interpolated
linearly to zero; continuous at ±2 bar). Throttle Q31 = C_t g(p3 − p1), C_t = C_d A_t √(2/ρ). Directional valve, U ≥ 0: Q_V3 = C_v U g(p_P − p3), Q2V = C_v U g(p2 − p_T);
U &lt; 0: Q_V3 = C_v U g(p3 − p_T), Q2V = C_v U g(p_P − p2). C_v = Q_N/(U_N √Δp_N) from the rating point (§3.2.1).</li>
<li>Spool: U̇ = (U_ref − U)/τ (eq. 28), τ = 1/(2π f₋₄₅) (eq. 29)</li>
<li>Force: F = p1 A1 − p2 A2 − c ṡ + F_d (eq. 30); end dampers F_d = k_d (l_d − l1) − c_d ṡ if l1 ≤ l_d, −k_d (l_d − l2) − c_d ṡ if l2 ≤ l_d, 0 otherwise (eq. 31)</li>
</ul>
<p><b>Parameter values</b>: Publication III Table 2, except (SPEC §3.6, not in the paper) the throttle area A_t = π (3 mm)²/4 = 7.069e-6 m², the viscous coefficient c = 1e5 N·s/m,
the initial pressures (p2 = 3.5 MPa, p1 = p3 from p1 A1 − p2 A2 = F_static = 8829 N, the static load of the Publication III crane) and the valve rating point:
the paper gives C_v = 1.069e-8 m³/(s·V·√Pa) only, so U_N = 10 V, Δp_N = 35 bar and Q_N = C_v U_N √Δp_N ≈ 2.0e-4 m³/s (12 L/min) reproduce it.
The cylinder efficiency η = 0.88 of Table 2 is not used by eq. 30. Stroke l = l10 + l20 = 0.3 m.</p>
<p><b>Initialization</b>: p1 = p3 = (F_static + p2_0 A2)/A1 (calculated parameter p1_0), p2 = p2_0, U = 0. With the inputs at their start values (s = s0, s_dot = 0, U_ref = 0)
the circuit rests: every flow is zero and the pressures stay constant. An input s left at its declared start value follows the parameter s0.</p>
<p><b>Integration</b>: FWE, TR (default; Newton with the analytic 4×4 Jacobian) or RK4 with fixed internal step h (default 0.1 ms) that must divide the communication step.
Inputs follow the polynomials of fmi2SetRealInputDerivatives at every stage. The small volume V3 makes the p3 mode stiff: at rest λ ≈ −(B_e3/V3 + B_e1/V1) C_t/√Δp_L ≈ −1.08e5 1/s,
so forward Euler at h = 0.1 ms is unstable (h|λ| ≈ 11 &gt; 2) although it may not blow up. Explicit methods therefore warn once per run when h·|λmax| exceeds their stability bound
(λmax: stiffest eigenvalue of the Jacobian, also output lambda_max); TR is the safe default.</p>
<p><b>Singular perturbation</b> (<code>p3_model = SP</code>; Publication II §2.2, eqs. 33–35; DIGEST §4.6): V3 is tiny, so eq. 22 is ε ṗ3 = Q_V3 − Q31 with ε = V3/B_e3 → 0 and p3 follows its quasi-steady state Q_V3 = Q31.
p3 leaves the state (p1, p2, U remain: 3 → 2 pressures) and is computed from eqs. 33–34, p3 = (p1 + α p_P)/(1 + α) for U &gt; 0, (p1 + α p_T)/(1 + α) for U &lt; 0, α = (U C_v/C_t)², p3 = p1 at U = 0.
Eqs. 33–34 assume turbulent orifices; <b>in the laminar band</b> (valve edge or throttle with |Δp| &lt; Δp_L, which the paper does not address) SP takes the exact quasi-steady state of eq. 22 with the same orifice laws as LF, the unique root of Q_V3(p3) = Q31(p3) (Newton safeguarded by bisection);
outside the band that root is eqs. 33–34. The throttle flow entering ṗ1 is γ+ Q̄31 (U &gt; 0) or γ− Q̄31 (U &lt; 0), eq. 35, with parameters gamma_plus, gamma_minus: default 1 (the quasi-steady state is exact; SPEC §3.7), Publication II's tuned values are 1.16 and 1.05.
The output p3 is the algebraic value, Q31 the corrected flow; lambda_max is the stiffest eigenvalue of the reduced equations (the stiff V3 mode is gone, so forward Euler is stable at much larger h). The cavitation law applies to V1 and V2; not with im_mode.</p>
<p><b>Coupling</b>: force coupling uses output F (direct feedthrough from s_dot and, through the end dampers, from s; declared in ModelStructure); pressure coupling uses p1, p2 (no feedthrough).</p>
<p><b>Cavitation</b> (all three volumes): below the cavitation pressure p_cav (default 3 kPa absolute) dissolved air is released and the effective bulk modulus collapses to that of the gas,
1/B_e,cav = 1/B_ei + w(p)/p with the free-gas fraction w = (1 − p/p_cav)² (Merritt, Hydraulic Control Systems, 1967, §2.5: volume-weighted compliances with an isothermal gas, β_gas = p;
Gholizadeh, Burton, Schoenau, Int. J. Fluid Power 12(3), 2011: air release below the saturation pressure). Above p_cav the law is exactly inactive; B_e and dB_e/dp are continuous at p_cav,
and B_e → p as p → 0, so a volume under suction keeps a small positive pressure and recovers once it is refilled. An internal step that would end with a pressure ≤ 0 (the steep entry
into cavitation overshoots with FWE, RK4 and the explicit half of TR) is redone with backward Euler, damped to keep the pressures positive. Output t_cav is the time spent with a pressure
below p_cav, cav_episodes the number of episodes; each episode is logged once as a warning. strict_pressure = true switches the law off (a negative pressure is then an error).</p>
<p><b>Interface model</b> (im_mode = true; Publication IV, Peiret et al. 2018): the circuit integrates the cylinder motion itself with the mechanism reduced to its
actuator coordinate, m_eff s̈ = F + f_eff, F of eqs. 30–31, from the inputs s, s_dot at the communication point, with inputs m_eff, f_eff (outputs of the multibody FMUs) held over
the step; state [p1, p2, p3, U, s, ṡ], Jacobian of the coupled system by central differences. Outputs s_im, s_dot_im are the predicted motion at the end of the step; p1, p2
(pressure coupling, no feedthrough) are the coupling outputs. One circuit sees one cylinder: on the double-actuator crane the off-diagonal terms of m_eff are not used.</p>
<p><b>Failures</b>: Newton divergence, NaN or (with strict_pressure = true) a negative pressure end the step with fmi2Error naming the quantity, its value and the time. A piston position s beyond a stroke end (chamber length ≤ 0) is reported once as a warning; the chamber then keeps only its dead volume V_h until s is back in the stroke.</p>"#;

macro_rules! param {
    ($name:literal, $unit:literal, $descr:literal, $($field:tt).+) => {
        Variable::parameter($name, $unit, $descr, |m: &Lumped3Fmu| m.$($field).+, |m, v| m.$($field).+ = v)
    };
}

impl CoSimModel for Lumped3Fmu {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "HydraulicsLumped3",
            model_identifier: "hydraulics_lumped3",
            fmu_name: "hydraulics-lumped3",
            description: "Three-volume hydraulic circuit with 4/3 directional valve, throttle and end dampers (Publication III, seed 000 eqs. 20-31): inputs s, s_dot, U_ref; outputs F, p1, p2, p3",
            documentation_html: DOCS,
            source: "Rahikainen, González, Naya 2019, Publication III §3.2 (eqs. 20-31, Table 2) in seed 000 (Rahikainen dissertation, LUT 2019); laminar rule of Publication II §3.1.1",
            default_experiment: (0.0, 20.0, 1e-3),
            interpolates_inputs: true,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        let (step_params, step_outputs) = stepping::variables::<Self>();
        let (cav_params, cav_outputs) = cavitation::variables::<Self>();
        let (im_switch, im_io) = interface_fmu::variables::<Self>();
        let mut v = vec![
            param!("d_1", "m", "Piston diameter (Table 2)", circuit.d1).min(1e-9),
            param!("d_2", "m", "Piston-rod diameter (Table 2)", circuit.d2).min(0.0),
            param!("l_10", "m", "Piston-side chamber length at s = s0 (Table 2)", circuit.l10).min(1e-9),
            param!("l_20", "m", "Rod-side chamber length at s = s0 (Table 2)", circuit.l20).min(1e-9),
            param!("s0", "m", "Actuator length at which l1 = l_10, l2 = l_20 (Table 2)", circuit.s0),
            param!("l_damper", "m", "End damper length l_d (eq. 31, Table 2)", circuit.l_d).min(0.0),
            param!("k_damper", "N/m", "End damper spring coefficient k_d (eq. 31, Table 2)", circuit.k_d).min(0.0),
            param!("c_damper", "N.s/m", "End damper damping coefficient c_d (eq. 31, Table 2)", circuit.c_damp).min(0.0),
            param!("c", "N.s/m", "Viscous friction coefficient of eq. 30 (not in the paper: project default, SPEC 3.6)", circuit.c)
                .min(0.0),
            param!("rho", "kg/m3", "Fluid density (Table 2)", circuit.rho).min(1e-9),
            param!("B_o", "Pa", "Oil bulk modulus (eqs. 23-25, Table 2)", circuit.b_o).min(1e-9),
            param!("B_c", "Pa", "Cylinder bulk modulus (eqs. 23-24, Table 2)", circuit.b_c).min(1e-9),
            param!("B_h", "Pa", "Hose bulk modulus (eqs. 23-25, Table 2)", circuit.b_h).min(1e-9),
            param!("V_h1", "m3", "Volume of hose 1, part of V1 (Table 2)", circuit.v_h1).min(0.0),
            param!("V_h2", "m3", "Volume of hose 2, part of V2 (Table 2)", circuit.v_h2).min(0.0),
            param!("V_h3", "m3", "Volume of hose 3 = V3, between valve and throttle (Table 2)", circuit.v_h3).min(1e-15),
            param!("p_T", "Pa", "Tank pressure (Table 2)", circuit.p_t).min(0.0),
            param!("p_P", "Pa", "Pump pressure (Table 2)", circuit.p_p).min(0.0),
            param!("C_d", "1", "Throttle discharge coefficient: C_t = C_d A_t sqrt(2/rho) (Table 2)", circuit.cd).min(0.0),
            param!("A_t", "m2", "Throttle area (not in the paper: project default pi (3 mm)^2/4, SPEC 3.6)", circuit.a_t).min(0.0),
            param!("Q_N", "m3/s", "Rated flow of the directional valve at U_N and dp_N: C_v = Q_N/(U_N sqrt(dp_N)); default reproduces Table 2's C_v", q_n)
                .min(0.0),
            param!("U_N", "V", "Spool signal of the valve rating point", u_n).min(1e-9),
            param!("dp_N", "Pa", "Pressure difference of the valve rating point (35 bar; assumed, the paper gives C_v only)", dp_n)
                .min(1e-9),
            param!("f_45", "Hz", "Valve frequency at -45 deg phase shift: tau = 1/(2 pi f_45) (eq. 29, Table 2)", circuit.f45)
                .min(1e-9),
            param!("dp_lam", "Pa", "Half-width of the laminar (linear) region of the valve laws (2 bar, section 3.2.1)", circuit.dp_lam)
                .min(1e-9),
            param!("F_static", "N", "Static load at rest for the initial pressures: p1 A1 - p2 A2 = F_static (crane: 8829 N, SPEC 3.6)", f_static),
            param!("p2_0", "Pa", "Initial rod-side pressure (SPEC 3.6)", p2_0).min(0.0),
        ];
        v.extend(step_params);
        v.extend(cav_params);
        v.push(Variable::enumeration(
            "p3_model",
            &P3_MODEL,
            "Model of p3: LF (default; p3 a state, eq. 22) or SP (p3 algebraic by singular perturbation, Publication II eqs. 33-35; in the laminar band the exact quasi-steady state, see the documentation)",
            |m: &Self| m.p3_model,
            |m, v| m.p3_model = v,
        ));
        v.push(
            param!(
                "gamma_plus",
                "1",
                "SP flow correction gamma+ of eq. 35 for U > 0 (default 1; Publication II: 1.16)",
                gamma.plus
            )
            .min(1e-9),
        );
        v.push(
            param!(
                "gamma_minus",
                "1",
                "SP flow correction gamma- of eq. 35 for U < 0 (default 1; Publication II: 1.05)",
                gamma.minus
            )
            .min(1e-9),
        );
        v.push(im_switch);
        v.push(Variable::calculated_parameter("A_1", "m2", "Piston-side area pi d_1^2/4", |m: &Self| m.circuit.a1()));
        v.push(Variable::calculated_parameter("A_2", "m2", "Rod-side area pi (d_1^2 - d_2^2)/4", |m: &Self| {
            m.circuit.a2()
        }));
        v.push(Variable::calculated_parameter(
            "C_v",
            "",
            "Directional-valve coefficient Q_N/(U_N sqrt(dp_N)) in m3/(s.V.Pa^0.5) (eq. 27; Table 2: 1.069e-8)",
            |m: &Self| m.circuit.cv,
        ));
        v.push(Variable::calculated_parameter(
            "C_t",
            "",
            "Throttle coefficient C_d A_t sqrt(2/rho) in m3/(s.Pa^0.5) (eq. 26)",
            |m: &Self| m.circuit.c_t(),
        ));
        v.push(Variable::calculated_parameter("tau", "s", "Spool time constant 1/(2 pi f_45) (eq. 29)", |m: &Self| {
            m.circuit.tau()
        }));
        v.push(Variable::calculated_parameter(
            "p1_0",
            "Pa",
            "Initial p1 = (F_static + p2_0 A_2)/A_1 (static equilibrium p1 A1 - p2 A2 = F_static)",
            |m: &Self| m.p1_0,
        ));
        v.push(Variable::calculated_parameter(
            "p3_0",
            "Pa",
            "Initial p3 = p1_0 (no throttle flow at rest)",
            |m: &Self| m.p3_0,
        ));
        v.push(Variable::input("s", "m", "Actuator length (from the mechanism)", |m: &Self| m.s.value, |m| &mut m.s));
        v.push(Variable::input("s_dot", "m/s", "Actuator velocity", |m: &Self| m.s_dot.value, |m| &mut m.s_dot));
        v.push(
            Variable::input(
                "U_ref",
                "V",
                "Valve reference signal; 0 closes the valve (eq. 28)",
                |m: &Self| m.u_ref.value,
                |m| &mut m.u_ref,
            )
            .min(-10.0)
            .max(10.0),
        );
        v.extend(im_io);
        v.push(
            Variable::output(
                "F",
                "N",
                "Cylinder force p1 A1 - p2 A2 - c s_dot + F_d (eqs. 30-31), along s",
                |m: &Self| m.force(),
            )
            .depends_on(&[("s", Dep::Dependent), ("s_dot", Dep::Dependent)])
            .output_derivatives(1, |m, _| m.force_rate()),
        );
        v.push(
            Variable::output("p1", "Pa", "Piston-side pressure (V1)", |m: &Self| m.x[idx::P1])
                .depends_on(&[])
                .output_derivatives(1, |m, _| m.rates()[idx::P1]),
        );
        v.push(
            Variable::output("p2", "Pa", "Rod-side pressure (V2)", |m: &Self| m.x[idx::P2])
                .depends_on(&[])
                .output_derivatives(1, |m, _| m.rates()[idx::P2]),
        );
        v.push(
            Variable::output("p3", "Pa", "Pressure between directional valve and throttle (V3)", |m: &Self| {
                m.x[idx::P3]
            })
            .depends_on(&[])
            .output_derivatives(1, |m, _| m.rates()[idx::P3]),
        );
        v.push(
            Variable::output("U", "V", "Spool position (eq. 28)", |m: &Self| m.x[idx::U])
                .depends_on(&[])
                .output_derivatives(1, |m, _| m.rates()[idx::U]),
        );
        v.push(
            Variable::output(
                "P_hyd",
                "W",
                "Hydraulic power delivered to the piston, (p1 A1 - p2 A2) s_dot",
                |m: &Self| m.power(),
            )
            .depends_on(&[("s_dot", Dep::Dependent)]),
        );
        v.push(
            Variable::output(
                "Q31",
                "m3/s",
                "Throttle flow V3 -> V1 (SP: gamma times the quasi-steady flow, eq. 35)",
                |m: &Self| m.results.map_or_else(|| m.flows().q31, |r| r.flows.q31),
            )
            .depends_on(&[]),
        );
        v.push(
            Variable::output(
                "QV3",
                "m3/s",
                "Directional-valve flow into V3 (negative: V3 drains to tank)",
                |m: &Self| m.results.map_or_else(|| m.circuit.valve_flow_v3(&m.x), |r| r.flows.qv3),
            )
            .depends_on(&[]),
        );
        v.push(
            Variable::output(
                "Q2V",
                "m3/s",
                "Directional-valve flow out of V2 (negative: the pump fills V2)",
                |m: &Self| m.results.map_or_else(|| m.circuit.valve_flow_2v(&m.x), |r| r.flows.q2v),
            )
            .depends_on(&[]),
        );
        v.extend(step_outputs);
        // Last, so that the value references of the variables above stay as they were.
        v.push(Variable::boolean(
            "allow_negative_pressure",
            "With strict_pressure = true (no cavitation law): integrate through negative pressures with one warning instead of failing (SPEC 3.7, seed-002 four-bar)",
            |m: &Self| m.allow_negative_pressure,
            |m, x| m.allow_negative_pressure = x,
        ));
        v.extend(cav_outputs);
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.results = None;
        for (name, v) in [("Q_N", self.q_n), ("U_N", self.u_n), ("dp_N", self.dp_n)] {
            if v.is_nan() || v < 0.0 || (name != "Q_N" && v == 0.0) {
                return Err(ModelError::new(format!("parameter {name} = {v} must be positive")));
            }
        }
        self.circuit.cv = self.q_n / (self.u_n * self.dp_n.sqrt());
        self.circuit.check().map_err(ModelError::new)?;
        if self.p3_model != P3_LF && self.p3_model != P3_SP {
            return Err(ModelError::new(format!("p3_model = {} is not 1 (LF) or 2 (SP)", self.p3_model)));
        }
        for (name, g) in [("gamma_plus", self.gamma.plus), ("gamma_minus", self.gamma.minus)] {
            if !(g > 0.0 && g.is_finite()) {
                return Err(ModelError::new(format!("parameter {name} = {g} must be positive")));
            }
        }
        if self.sp() && self.im.on {
            return Err(ModelError::new(
                "p3_model = SP with im_mode = true is not supported: the interface model integrates the lumped-fluid circuit (use p3_model = LF)",
            ));
        }
        self.stepping.initialize()?;
        self.monitor.reset();
        // An input s left at its declared start value follows the parameter s0.
        if self.s.value.to_bits() == Self::default().s.value.to_bits() {
            self.s.value = self.circuit.s0;
        }
        let (p1, p3) = self.circuit.static_pressures(self.f_static, self.p2_0);
        self.p1_0 = p1;
        self.p3_0 = p3;
        self.x = SVector::<f64, 4>::new(p1, self.p2_0, p3, 0.0);
        // Negative initial pressures are bad parameters, whatever the cavitation law.
        Self::range_error(&self.x).map_err(|m| {
            ModelError::new(format!("initial state (F_static = {} N, p2_0 = {} Pa): {m}", self.f_static, self.p2_0))
        })?;
        self.stepping.lambda_max = if self.sp() {
            crate::integrator::stiffest_eigenvalue(&self.sp_ode(), 0.0, &sp::reduced_state(&self.x))
        } else {
            crate::integrator::stiffest_eigenvalue(&self.ode(), 0.0, &self.x)
        };
        Ok(())
    }

    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        if self.im.on {
            return self.do_step_im(t, h, ctx);
        }
        let mut x = self.x;
        let ode = Lumped3Ode::new(&self.circuit, &self.s, &self.s_dot, &self.u_ref);
        let circuit = &self.circuit;
        // The range check uses s at the end of each internal step.
        self.results = None;
        let mut watch = StepWatch::new(&mut self.monitor, &circuit.cavitation, t);
        let allow = self.allow_negative_pressure;
        let mut lowest = f64::INFINITY;
        let mut check = |tau: f64, x: &SVector<f64, 4>| {
            if allow {
                lowest = lowest.min(x[idx::P1]).min(x[idx::P2]).min(x[idx::P3]);
            } else {
                Self::check(circuit, ode.s_at(tau), x)?;
            }
            watch.observe(tau, &[("p1", x[idx::P1]), ("p2", x[idx::P2]), ("p3", x[idx::P3])]);
            Ok(())
        };
        if self.p3_model == P3_SP {
            let sp_ode =
                Lumped3SpOde { lf: Lumped3Ode::new(circuit, &self.s, &self.s_dot, &self.u_ref), gamma: self.gamma };
            let c = &sp_ode.lf.constants;
            let mut y = sp::reduced_state(&x);
            self.stepping.advance(&sp_ode, &mut y, t, h, ctx, |tau, y| check(tau, &sp::full_state(circuit, c, y)))?;
            x = sp::full_state(circuit, c, &y);
        } else {
            self.stepping.advance(&ode, &mut x, t, h, ctx, check)?;
        }
        watch.report(ctx);
        if lowest < 0.0 && !self.negative_warned {
            ctx.report(format!(
                "in the step from t = {t} s a pressure fell to {lowest:.6e} Pa: integrated through (allow_negative_pressure with strict_pressure: no cavitation law; warned once)"
            ));
            self.negative_warned = true;
        }
        // s as the export layer leaves it after the step (`InputSignal::end_step`).
        let s_end = self.s.at(h);
        if !self.stroke_warned {
            let beyond =
                Self::stroke_warning(circuit, self.s.value, t).or_else(|| Self::stroke_warning(circuit, s_end, t + h));
            if let Some(w) = beyond {
                ctx.report(w);
                self.stroke_warned = true;
            }
        }
        let c = &ode.constants;
        let s_dot_end = self.s_dot.at(h);
        let lambda_max = if self.p3_model == P3_SP {
            // The Jacobian of the reduced circuit at the end state, with s, ṡ at the end.
            let (s_signal, s_dot_signal) = (InputSignal::new(s_end), InputSignal::new(s_dot_end));
            let sp_ode =
                Lumped3SpOde { lf: Lumped3Ode::new(circuit, &s_signal, &s_dot_signal, &self.u_ref), gamma: self.gamma };
            crate::integrator::stiffest_eigenvalue(&sp_ode, 0.0, &sp::reduced_state(&x))
        } else {
            circuit.stiffest_eigenvalue_with(c, &circuit.gains_with(c, s_end), &x, s_dot_end)
        };
        let results =
            StepResults { s_bits: (s_end.to_bits(), s_dot_end.to_bits()), lambda_max, flows: self.flows_of(c, &x) };
        self.x = x;
        self.results = Some(results);
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        let c = &mut self.circuit;
        for x in [
            &mut c.d1,
            &mut c.d2,
            &mut c.l10,
            &mut c.l20,
            &mut c.s0,
            &mut c.l_d,
            &mut c.k_d,
            &mut c.c_damp,
            &mut c.c,
            &mut c.rho,
            &mut c.b_o,
            &mut c.b_c,
            &mut c.b_h,
            &mut c.v_h1,
            &mut c.v_h2,
            &mut c.v_h3,
            &mut c.p_t,
            &mut c.p_p,
            &mut c.cd,
            &mut c.a_t,
            &mut c.cv,
            &mut c.f45,
            &mut c.dp_lam,
            &mut c.cavitation.p_cav,
        ] {
            v.real(x);
        }
        for x in [
            &mut self.q_n,
            &mut self.u_n,
            &mut self.dp_n,
            &mut self.f_static,
            &mut self.p2_0,
            &mut self.p1_0,
            &mut self.p3_0,
        ] {
            v.real(x);
        }
        v.boolean(&mut self.circuit.cavitation.strict);
        self.stepping.visit(v);
        let mut m = i64::from(self.p3_model);
        v.integer(&mut m);
        self.p3_model = i32::try_from(m).unwrap_or(P3_LF);
        v.real(&mut self.gamma.plus);
        v.real(&mut self.gamma.minus);
        self.monitor.visit(v);
        v.reals(self.x.as_mut_slice());
        v.input(&mut self.s);
        v.input(&mut self.s_dot);
        v.input(&mut self.u_ref);
        self.im.visit(v);
        v.boolean(&mut self.allow_negative_pressure);
        v.boolean(&mut self.negative_warned);
        // The state may have been replaced.
        self.results = None;
    }
}
