//! `hydraulics-naya.fmu`: the seed 004 circuit as an FMI 2.0 Co-Simulation FMU.
//!
//! Coupling variants (Publication IV): the same FMU serves force coupling (connect output `F`;
//! it depends directly on input `s_dot` through the friction −c ṡ, declared in ModelStructure)
//! and pressure coupling (connect outputs `p1`, `p2`, which have no direct feedthrough; the
//! mechanics side then computes (p2 − p1) A − c ṡ itself, with its own friction parameter).

use crate::cavitation::{self, Cavitation, HasCavitation, Monitor, StepWatch};
use crate::integrator::Ode;
use crate::interface::{ImCircuit, ImOde};
use crate::interface_fmu::{self, HasImMode, ImMode};
use crate::naya::{Naya, NayaOde};
use crate::stepping::{self, HasStepping, Stepping};
use fmu_export::{CoSimModel, Context, EnumType, InputSignal, ModelError, ModelInfo, StateVisitor, Variable};
use model_description::DependencyKind as Dep;
use nalgebra::SVector;

/// `Init` enumeration: how the pressures start.
pub static INIT: EnumType = EnumType {
    name: "NayaInit",
    description: "Initial pressures",
    items: &[
        ("equilibrium", 1, "static equilibrium for the load F_static (seed 004 eq. 32)"),
        ("start_values", 2, "the parameters p1_start, p2_start"),
    ],
};

/// The FMU model.
#[derive(Debug, Clone)]
pub struct NayaFmu {
    /// Circuit parameters.
    pub circuit: Naya,
    /// Static load held at rest, F = (2M + m) g (N).
    pub f_static: f64,
    /// Item of [`INIT`].
    pub init: i32,
    /// Initial pressures when `init` = start_values (Pa).
    pub p_start: [f64; 2],
    /// κ₀ of the static equilibrium (calculated parameter).
    pub kappa0: f64,
    /// Integrator settings.
    pub stepping: Stepping,
    /// Pressures [p1, p2] (Pa).
    pub p: SVector<f64, 2>,
    /// Input s (m).
    pub s: InputSignal,
    /// Input ṡ (m/s).
    pub s_dot: InputSignal,
    /// Input κ.
    pub kappa: InputSignal,
    /// Cavitation bookkeeping (time below p_cav, episodes).
    pub monitor: Monitor,
    /// Interface-model mode ([`crate::interface`]): integrate s, ṡ with m_eff s̈ = F + f_eff.
    pub im: ImMode,
}

/// The circuit as the interface model sees it: rates and force at a given s, ṡ.
struct NayaIm<'a> {
    circuit: &'a Naya,
    kappa: &'a InputSignal,
}

impl ImCircuit<2> for NayaIm<'_> {
    fn rates_at(&self, tau: f64, x: &SVector<f64, 2>, s: f64, s_dot: f64) -> SVector<f64, 2> {
        let (d1, d2) =
            self.circuit.pressure_rates(x[0], x[1], &crate::naya::Inputs { s, s_dot, kappa: self.kappa.at(tau) });
        SVector::<f64, 2>::new(d1, d2)
    }
    fn force_at(&self, x: &SVector<f64, 2>, _s: f64, s_dot: f64) -> f64 {
        self.circuit.force(x[0], x[1], s_dot)
    }
    fn admissible_states(&self, x: &SVector<f64, 2>) -> bool {
        self.circuit.cavitation.strict || (x[0] > 0.0 && x[1] > 0.0)
    }
    fn rescues_steps(&self) -> bool {
        !self.circuit.cavitation.strict
    }
}

const DEFAULT_F_STATIC: f64 = 6867.0;

fn circuit_s0() -> f64 {
    Naya::default().s0
}

impl Default for NayaFmu {
    fn default() -> Self {
        let circuit = Naya::default();
        // The default load has an equilibrium; fall back to mid-range values if someone changes
        // the defaults so that it has none (initialize then reports the error).
        let eq = circuit.equilibrium(DEFAULT_F_STATIC).unwrap_or(crate::naya::Equilibrium {
            p1: circuit.p_t,
            p2: circuit.p_t,
            kappa: 0.5,
        });
        Self {
            s: InputSignal::new(circuit.s0),
            circuit,
            f_static: DEFAULT_F_STATIC,
            init: 1,
            p_start: [eq.p1, eq.p2],
            kappa0: eq.kappa,
            stepping: Stepping::default(),
            p: SVector::<f64, 2>::new(eq.p1, eq.p2),
            s_dot: InputSignal::new(0.0),
            kappa: InputSignal::new(eq.kappa),
            monitor: Monitor::default(),
            im: ImMode::new(circuit_s0()),
        }
    }
}

impl HasStepping for NayaFmu {
    const LAMBDA_INPUTS: &'static [(&'static str, model_description::DependencyKind)] = &[
        ("s", model_description::DependencyKind::Dependent),
        ("s_dot", model_description::DependencyKind::Dependent),
        ("kappa", model_description::DependencyKind::Dependent),
    ];
    fn stepping(&self) -> &Stepping {
        &self.stepping
    }
    fn stepping_mut(&mut self) -> &mut Stepping {
        &mut self.stepping
    }
    fn lambda_max(&self) -> f64 {
        crate::integrator::stiffest_eigenvalue(&self.ode(), 0.0, &self.p)
    }
}

impl HasImMode for NayaFmu {
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

impl HasCavitation for NayaFmu {
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

impl NayaFmu {
    fn ode(&self) -> NayaOde<'_> {
        NayaOde { circuit: &self.circuit, s: &self.s, s_dot: &self.s_dot, kappa: &self.kappa }
    }

    /// Net valve flows into the chambers now (m³/s).
    pub fn flows(&self) -> (f64, f64) {
        self.circuit.flows(self.p[0], self.p[1], self.kappa.value)
    }

    /// Actuator force now (N), eq. 28.
    pub fn force(&self) -> f64 {
        self.circuit.force(self.p[0], self.p[1], self.s_dot.value)
    }

    /// Hydraulic power delivered to the piston, (p2 − p1) A ṡ (W).
    pub fn power(&self) -> f64 {
        (self.p[1] - self.p[0]) * self.circuit.a_p * self.s_dot.value
    }

    fn rates(&self) -> SVector<f64, 2> {
        self.ode().f(0.0, &self.p)
    }

    /// Physical range of a state: non-negative pressures (with `strict_pressure`; otherwise
    /// the cavitation law keeps them positive) with a positive bulk modulus, chambers of
    /// positive length.
    fn check(circuit: &Naya, s: f64, x: &SVector<f64, 2>) -> Result<(), String> {
        for (name, p) in [("p1", x[0]), ("p2", x[1])] {
            if p < 0.0 && circuit.cavitation.strict {
                return Err(format!(
                    "{name} = {p:.6e} Pa is negative (with strict_pressure = true the cavitation law is off, so a chamber that cavitates is an error)"
                ));
            }
            if p <= circuit.cavitation.p_cav {
                // The law's range: β_e = β(p) p/(p + β w) > 0 for p > 0.
                continue;
            }
            let beta = circuit.beta(p);
            if !(beta > 0.0 && beta.is_finite()) {
                return Err(format!(
                    "{name} = {p:.6e} Pa is outside the range of the bulk-modulus law (beta = {beta:.3e} Pa)"
                ));
            }
        }
        let (l1, l2) = circuit.chamber_lengths(s);
        if l1 <= 0.0 || l2 <= 0.0 {
            return Err(format!("s = {s} m puts the piston beyond the end of stroke (l1 = {l1} m, l2 = {l2} m)"));
        }
        Ok(())
    }
}

impl NayaFmu {
    /// A step in interface-model mode: [p1, p2, s, ṡ] from the inputs s, ṡ at t, m_eff and f_eff
    /// held.
    fn do_step_im(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        let (m_eff, f_eff) = self.im.held()?;
        if fmu_export::grid::is_remainder(t, h, self.stepping.h) {
            // A master's float-time remainder changes nothing, the prediction included.
            return Ok(());
        }
        let im = NayaIm { circuit: &self.circuit, kappa: &self.kappa };
        let ode = ImOde { circuit: &im, m_eff, f_eff };
        let mut y = SVector::<f64, 4>::new(self.p[0], self.p[1], self.s.value, self.s_dot.value);
        let circuit = &self.circuit;
        let mut watch = StepWatch::new(&mut self.monitor, &circuit.cavitation, t);
        self.stepping.advance(&ode, &mut y, t, h, ctx, |tau, y| {
            let p = SVector::<f64, 2>::new(y[0], y[1]);
            Self::check(circuit, y[2], &p)?;
            watch.observe(tau, &[("p1", y[0]), ("p2", y[1])]);
            Ok(())
        })?;
        watch.report(ctx);
        self.p = SVector::<f64, 2>::new(y[0], y[1]);
        self.im.motion = [y[2], y[3]];
        Ok(())
    }
}

const DOCS: &str = r#"<p><b>Equations</b> (Naya et al. 2011, seed 004 §4):</p>
<ul>
<li>ṗ1 = β1/(A l1) [A ṡ + A_i c_d √(2(p_P − p1)/ρ) δ_P − A_o c_d √(2(p1 − p_T)/ρ) δ_T] (eq. 29)</li>
<li>ṗ2 = β2/(A l2) [−A ṡ + A_o c_d √(2(p_P − p2)/ρ) δ_P − A_i c_d √(2(p2 − p_T)/ρ) δ_T] (eq. 29); δ = 0 when the root's argument is negative</li>
<li>β(p) = (1 + a p + b p²)/(a + 2 b p) (eq. 3); l1 = 0.5 l + s0 − s, l2 = 0.5 l + s − s0 (eq. 30); A_i = a_v κ, A_o = a_v (1 − κ) (eq. 31)</li>
<li>F = (p2 − p1) A − c ṡ (eq. 28)</li>
</ul>
<p><b>Initialization</b> (init = equilibrium): eq. 32, (2M + m) g = (p2 − p1) A and ṗ1 = ṗ2 = 0 at ṡ = 0, solved in closed form:
r = (1 − d)/(1 + d) with d = F_static/(A (p_P − p_T)), κ0 = √r/(1 + √r), p1 = (r p_P + p_T)/(1 + r), p2 = (p_P + r p_T)/(1 + r).
Defaults give p1 = 3.3218 MPa, p2 = 4.3782 MPa, κ0 = 0.46461. The input kappa is declared with start κ0, so a default run rests at the
equilibrium. An input left at its declared start value follows the parameters: kappa follows κ0 when F_static or the circuit changes, and s follows s0.</p>
<p><b>Integration</b>: FWE, TR (default; Newton with the analytic diagonal Jacobian of eqs. 36–37 including dβ/dp) or RK4 with fixed internal step h
(default 0.1 ms) that must divide the communication step. Inputs follow the polynomials of fmi2SetRealInputDerivatives at every stage.
Explicit methods warn once per run when h·|λmax| exceeds their stability bound (λmax: stiffest eigenvalue of the pressure Jacobian, also output lambda_max).</p>
<p><b>Coupling</b>: force coupling uses output F (direct feedthrough from s_dot, declared in ModelStructure); pressure coupling uses p1, p2
(no feedthrough) and the mechanics computes (p2 − p1) A − c ṡ itself.</p>
<p><b>Cavitation</b>: below the cavitation pressure p_cav (default 3 kPa absolute) dissolved air is released and the effective bulk modulus collapses to that of the gas,
1/β_e = 1/β(p) + w(p)/p with the free-gas fraction w = (1 − p/p_cav)² (Merritt, Hydraulic Control Systems, 1967, §2.5: volume-weighted compliances with an isothermal gas, β_gas = p;
Gholizadeh, Burton, Schoenau, Int. J. Fluid Power 12(3), 2011: air release below the saturation pressure). Above p_cav the law is exactly inactive; β_e and dβ_e/dp are continuous at p_cav,
and β_e → p as p → 0, so a chamber under suction keeps a small positive pressure and recovers once it is refilled. An internal step that would end with a pressure ≤ 0 is redone with
backward Euler, damped to keep the pressures positive. Output t_cav is the time spent with a pressure below p_cav, cav_episodes the number of episodes; each episode is logged once
as a warning. strict_pressure = true switches the law off (a negative pressure is then an error).</p>
<p><b>Interface model</b> (im_mode = true; Publication IV, Peiret et al. 2018): the circuit integrates the cylinder motion itself with the mechanism reduced to its
actuator coordinate, m_eff s̈ = F + f_eff, F = (p2 − p1) A − c ṡ, from the inputs s, s_dot at the communication point, with inputs m_eff, f_eff (outputs of the multibody FMUs) held over
the step; state [p1, p2, s, ṡ], Jacobian of the coupled system by central differences. Outputs s_im, s_dot_im are the predicted motion at the end of the step; p1, p2 (pressure
coupling, no feedthrough) are the coupling outputs.</p>
<p><b>Failures</b>: Newton divergence, NaN, (with strict_pressure = true) a negative pressure, a pressure beyond the bulk-modulus law or a piston beyond
its stroke end the step with fmi2Error naming the time and the quantity.</p>"#;

macro_rules! param {
    ($name:literal, $unit:literal, $descr:literal, $($field:tt).+) => {
        Variable::parameter($name, $unit, $descr, |m: &NayaFmu| m.$($field).+, |m, v| m.$($field).+ = v)
    };
}

impl CoSimModel for NayaFmu {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "HydraulicsNaya",
            model_identifier: "hydraulics_naya",
            fmu_name: "hydraulics-naya",
            description: "Two-chamber hydraulic cylinder with open-centre 4-way valve (Naya et al. 2011, seed 004 eqs. 28-32): inputs s, s_dot, kappa; outputs F, p1, p2",
            documentation_html: DOCS,
            source: "Naya, Cuadrado, Dopico, Lugris 2011 (seed 004) §4 eqs. 28-38; González et al. (seed 001) Appendix A.4 Table 2",
            default_experiment: (0.0, 10.0, 1e-3),
            interpolates_inputs: true,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        let (step_params, step_outputs) = stepping::variables::<Self>();
        let (cav_params, cav_outputs) = cavitation::variables::<Self>();
        let (im_switch, im_io) = interface_fmu::variables::<Self>();
        let mut v = vec![
            param!("A", "m2", "Piston area (seed 001 Table 2)", circuit.a_p).min(1e-12),
            param!("l", "m", "Cylinder length", circuit.l).min(1e-9),
            param!("c", "N.s/m", "Viscous friction coefficient", circuit.c).min(0.0),
            param!("c_d", "1", "Valve discharge coefficient", circuit.cd).min(1e-9),
            param!("rho", "kg/m3", "Fluid density", circuit.rho).min(1e-9),
            param!("p_P", "Pa", "Pump pressure", circuit.p_p).min(0.0),
            param!("p_T", "Pa", "Tank pressure", circuit.p_t).min(0.0),
            param!("a", "1/Pa", "Bulk-modulus coefficient a of eq. 3", circuit.a).min(1e-30),
            param!("b", "1/Pa2", "Bulk-modulus coefficient b of eq. 3", circuit.b),
            param!("s0", "m", "Actuator length with equal chambers (eq. 30)", circuit.s0),
            param!("a_v", "m2", "Valve area gain: A_i = a_v kappa, A_o = a_v (1 - kappa) (eq. 31)", circuit.a_v)
                .min(0.0),
            param!("F_static", "N", "Static load for init = equilibrium, (2M + m) g = 700 kg * 9.81 m/s2", f_static),
            Variable::enumeration(
                "init",
                &INIT,
                "Initial pressures: equilibrium (eq. 32) or p1_start, p2_start",
                |m: &Self| m.init,
                |m, v| m.init = v,
            ),
            Variable::parameter(
                "p1_start",
                "Pa",
                "Initial p1 when init = start_values",
                |m: &Self| m.p_start[0],
                |m, v| m.p_start[0] = v,
            )
            .min(0.0),
            Variable::parameter(
                "p2_start",
                "Pa",
                "Initial p2 when init = start_values",
                |m: &Self| m.p_start[1],
                |m, v| m.p_start[1] = v,
            )
            .min(0.0),
        ];
        v.extend(step_params);
        v.extend(cav_params);
        v.push(im_switch);
        v.push(Variable::calculated_parameter(
            "kappa0",
            "1",
            "Spool position of the static equilibrium (eq. 32)",
            |m: &Self| m.kappa0,
        ));
        v.push(Variable::input("s", "m", "Actuator length (from the mechanism)", |m: &Self| m.s.value, |m| &mut m.s));
        v.push(Variable::input("s_dot", "m/s", "Actuator velocity", |m: &Self| m.s_dot.value, |m| &mut m.s_dot));
        v.push(
            Variable::input(
                "kappa",
                "1",
                "Spool position (valve control); start = kappa0 of the default load",
                |m: &Self| m.kappa.value,
                |m| &mut m.kappa,
            )
            .min(0.0)
            .max(1.0),
        );
        v.extend(im_io);
        v.push(
            Variable::output("F", "N", "Actuator force F = (p2 - p1) A - c s_dot (eq. 28), along s", |m: &Self| {
                m.force()
            })
            .depends_on(&[("s_dot", Dep::Fixed)])
            .output_derivatives(1, |m, _| {
                let d = m.rates();
                (d[1] - d[0]) * m.circuit.a_p - m.circuit.c * m.s_dot.rate_at(0.0)
            }),
        );
        v.push(
            Variable::output("p1", "Pa", "Upper-chamber pressure", |m: &Self| m.p[0])
                .depends_on(&[])
                .output_derivatives(1, |m, _| m.rates()[0]),
        );
        v.push(
            Variable::output("p2", "Pa", "Lower-chamber pressure", |m: &Self| m.p[1])
                .depends_on(&[])
                .output_derivatives(1, |m, _| m.rates()[1]),
        );
        v.push(
            Variable::output("P_hyd", "W", "Hydraulic power delivered to the piston, (p2 - p1) A s_dot", |m: &Self| {
                m.power()
            })
            .depends_on(&[("s_dot", Dep::Dependent)]),
        );
        v.push(
            Variable::output("Q1", "m3/s", "Net valve flow into chamber 1", |m: &Self| m.flows().0)
                .depends_on(&[("kappa", Dep::Dependent)]),
        );
        v.push(
            Variable::output("Q2", "m3/s", "Net valve flow into chamber 2", |m: &Self| m.flows().1)
                .depends_on(&[("kappa", Dep::Dependent)]),
        );
        v.extend(step_outputs);
        v.extend(cav_outputs);
        v
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.circuit.check().map_err(ModelError::new)?;
        self.stepping.initialize()?;
        self.monitor.reset();
        let defaults = Self::default();
        let eq = self.circuit.equilibrium(self.f_static).map_err(ModelError::new)?;
        self.kappa0 = eq.kappa;
        // Inputs left at their declared start values follow the parameters.
        if self.kappa.value.to_bits() == defaults.kappa.value.to_bits() {
            self.kappa.value = eq.kappa;
        }
        if self.s.value.to_bits() == defaults.s.value.to_bits() {
            self.s.value = self.circuit.s0;
        }
        self.p = match self.init {
            1 => SVector::<f64, 2>::new(eq.p1, eq.p2),
            2 => SVector::<f64, 2>::new(self.p_start[0], self.p_start[1]),
            other => return Err(ModelError::new(format!("init = {other} is not 1 (equilibrium) or 2 (start_values)"))),
        };
        // Negative initial pressures are bad parameters, whatever the cavitation law.
        let strict = Naya {
            cavitation: crate::cavitation::Cavitation { strict: true, ..self.circuit.cavitation },
            ..self.circuit.clone()
        };
        Self::check(&strict, self.s.value, &self.p).map_err(|m| ModelError::new(format!("initial state: {m}")))?;
        self.stepping.lambda_max = crate::integrator::stiffest_eigenvalue(&self.ode(), 0.0, &self.p);
        Ok(())
    }

    fn do_step(&mut self, t: f64, h: f64, ctx: &mut Context) -> Result<(), ModelError> {
        if self.im.on {
            return self.do_step_im(t, h, ctx);
        }
        let mut x = self.p;
        let ode = NayaOde { circuit: &self.circuit, s: &self.s, s_dot: &self.s_dot, kappa: &self.kappa };
        let (circuit, s) = (&self.circuit, &self.s);
        // The range check uses s at the end of each internal step.
        let mut watch = StepWatch::new(&mut self.monitor, &circuit.cavitation, t);
        self.stepping.advance(&ode, &mut x, t, h, ctx, |tau, x| {
            Self::check(circuit, s.at(tau), x)?;
            watch.observe(tau, &[("p1", x[0]), ("p2", x[1])]);
            Ok(())
        })?;
        watch.report(ctx);
        self.p = x;
        Ok(())
    }

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        let c = &mut self.circuit;
        for x in [
            &mut c.a_p,
            &mut c.l,
            &mut c.c,
            &mut c.cd,
            &mut c.rho,
            &mut c.p_p,
            &mut c.p_t,
            &mut c.a,
            &mut c.b,
            &mut c.s0,
            &mut c.a_v,
            &mut c.cavitation.p_cav,
        ] {
            v.real(x);
        }
        v.boolean(&mut c.cavitation.strict);
        v.real(&mut self.f_static);
        let mut init = i64::from(self.init);
        v.integer(&mut init);
        self.init = i32::try_from(init).unwrap_or(1);
        v.reals(&mut self.p_start);
        v.real(&mut self.kappa0);
        self.stepping.visit(v);
        self.monitor.visit(v);
        v.reals(self.p.as_mut_slice());
        v.input(&mut self.s);
        v.input(&mut self.s_dot);
        v.input(&mut self.kappa);
        self.im.visit(v);
    }
}
