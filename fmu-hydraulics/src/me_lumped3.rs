//! `hydraulics-lumped3-me.fmu`: the Publication III three-volume circuit as a Model Exchange
//! FMU (FMI 2.0 and 3.0; it declares Co-Simulation too, integrated with RK4). The importer
//! integrates the states x = [p1, p2, p3, U] (Pa, Pa, Pa, V) with ẋ = h(x, s, ṡ, U_ref) of
//! eqs. 20–22 and 28 ([`Lumped3::rates`], the code of `hydraulics-lumped3.fmu` and of the
//! unified crane); output F of eqs. 30–31 ([`Lumped3::force`]).

use crate::lumped3::{idx, Inputs, Lumped3};
use fmu_export::{CoSimModel, Context, InputSignal, ModelError, ModelInfo, StateVisitor, StoredOde, Variable};
use model_description::DependencyKind as Dep;
use nalgebra::SVector;

/// The model: the circuit, the initial state's parameters, the state and its rates.
#[derive(Debug, Clone)]
pub struct Lumped3MeFmu {
    /// Circuit parameters (Publication III Table 2, SPEC §3.6 defaults).
    pub circuit: Lumped3,
    /// Static load held at rest F_static (N): p1 A1 − p2 A2 = F_static at t0.
    pub f_static: f64,
    /// Initial rod-side pressure p2 (Pa).
    pub p2_0: f64,
    /// State [p1, p2, p3, U] (Pa, Pa, Pa, V).
    pub x: SVector<f64, 4>,
    /// ẋ at the current state and inputs (Pa/s, Pa/s, Pa/s, V/s).
    pub dx: SVector<f64, 4>,
    /// Input s (m).
    pub s: InputSignal,
    /// Input ṡ (m/s).
    pub s_dot: InputSignal,
    /// Input U_ref (V).
    pub u_ref: InputSignal,
}

impl Default for Lumped3MeFmu {
    fn default() -> Self {
        let circuit = Lumped3::default();
        let (f_static, p2_0) = (8829.0, 3.5e6);
        let (p1, p3) = circuit.static_pressures(f_static, p2_0);
        Self {
            s: InputSignal::new(circuit.s0),
            circuit,
            f_static,
            p2_0,
            x: SVector::<f64, 4>::new(p1, p2_0, p3, 0.0),
            dx: SVector::zeros(),
            s_dot: InputSignal::new(0.0),
            u_ref: InputSignal::new(0.0),
        }
    }
}

impl Lumped3MeFmu {
    fn inputs(&self) -> Inputs {
        Inputs { s: self.s.value, s_dot: self.s_dot.value, u_ref: self.u_ref.value }
    }

    /// Cylinder force F = p1 A1 − p2 A2 − c ṡ + F_d (N), eqs. 30–31.
    pub fn force(&self) -> f64 {
        self.circuit.force(self.x[idx::P1], self.x[idx::P2], self.s.value, self.s_dot.value)
    }
}

const DOCS: &str = r#"<p>The three-volume circuit of <code>hydraulics-lumped3.fmu</code> (Publication III §3.2, eqs. 20–31, Table 2; the same code)
as a <b>Model Exchange</b> FMU: continuous states p1, p2, p3 (Pa) and the spool position U (V), derivatives der_p1, der_p2, der_p3 (Pa/s), der_U (V/s):</p>
<ul><li>ṗ1 = B_e1/V1 (Q31 − A1 ṡ), ṗ2 = B_e2/V2 (A2 ṡ − Q2V), ṗ3 = B_e3/V3 (Q_V3 − Q31) (eqs. 20–22), U̇ = (U_ref − U)/τ (eq. 28);</li>
<li>F = p1 A1 − p2 A2 − c ṡ + F_d (N, eqs. 30–31), with direct feedthrough from s and s_dot.</li></ul>
<p>Initial state: p2 = p2_0, p1 = p3 = (F_static + p2_0 A2)/A1, U = 0 (at rest under F_static, SPEC §3.6). The cavitation law of the circuit
(below p_cav = 3 kPa) is part of the rates. Under Co-Simulation the same right-hand side is integrated with classical RK4 at internal steps of at most 10 µs,
inputs held over the step.</p>"#;

impl CoSimModel for Lumped3MeFmu {
    fn info() -> ModelInfo {
        ModelInfo {
            model_name: "HydraulicsLumped3ME",
            model_identifier: "hydraulics_lumped3_me",
            fmu_name: "hydraulics-lumped3-me",
            description: "Three-volume hydraulic circuit of Publication III (eqs. 20-31) as a Model Exchange FMU: states p1, p2, p3, U; inputs s, s_dot, U_ref; output F",
            documentation_html: DOCS,
            source: "Rahikainen, González, Naya 2019, Publication III §3.2 (eqs. 20-31, Table 2) in seed 000",
            default_experiment: (0.0, 20.0, 1e-3),
            interpolates_inputs: false,
        }
    }

    fn variables() -> Vec<Variable<Self>> {
        const F_DEPS: &[(&str, Dep)] = &[("s", Dep::Dependent), ("s_dot", Dep::Dependent)];
        vec![
            Variable::parameter(
                "F_static",
                "N",
                "Static load at rest: p1 A1 - p2 A2 = F_static at t0 (crane: 8829 N, SPEC 3.6)",
                |m: &Self| m.f_static,
                |m, v| m.f_static = v,
            ),
            Variable::parameter(
                "p2_0",
                "Pa",
                "Initial rod-side pressure (SPEC 3.6)",
                |m: &Self| m.p2_0,
                |m, v| m.p2_0 = v,
            )
            .min(0.0),
            Variable::parameter(
                "s0",
                "m",
                "Actuator length at which l1 = l_10, l2 = l_20 (Table 2)",
                |m: &Self| m.circuit.s0,
                |m, v| m.circuit.s0 = v,
            ),
            Variable::parameter(
                "c",
                "N.s/m",
                "Viscous friction coefficient of eq. 30 (SPEC 3.6)",
                |m: &Self| m.circuit.c,
                |m, v| m.circuit.c = v,
            )
            .min(0.0),
            Variable::input("s", "m", "Actuator length (from the mechanism)", |m: &Self| m.s.value, |m| &mut m.s),
            Variable::input("s_dot", "m/s", "Actuator velocity", |m: &Self| m.s_dot.value, |m| &mut m.s_dot),
            Variable::input(
                "U_ref",
                "V",
                "Valve reference signal; 0 closes the valve (eq. 28)",
                |m: &Self| m.u_ref.value,
                |m| &mut m.u_ref,
            )
            .min(-10.0)
            .max(10.0),
            Variable::output("F", "N", "Cylinder force p1 A1 - p2 A2 - c s_dot + F_d (eqs. 30-31)", |m: &Self| {
                m.force()
            })
            .depends_on(F_DEPS),
            Variable::output("p1", "Pa", "Piston-side pressure (state)", |m: &Self| m.x[idx::P1]).nominal(1e6),
            Variable::output("p2", "Pa", "Rod-side pressure (state)", |m: &Self| m.x[idx::P2]).nominal(1e6),
            Variable::output("p3", "Pa", "Pressure between valve and throttle (state)", |m: &Self| m.x[idx::P3])
                .nominal(1e6),
            Variable::output("U", "V", "Spool position (state, eq. 28)", |m: &Self| m.x[idx::U]),
            Variable::local("der_p1", "Pa/s", "dp1/dt (eq. 20)", |m: &Self| m.dx[idx::P1]),
            Variable::local("der_p2", "Pa/s", "dp2/dt (eq. 21)", |m: &Self| m.dx[idx::P2]),
            Variable::local("der_p3", "Pa/s", "dp3/dt (eq. 22)", |m: &Self| m.dx[idx::P3]),
            Variable::local("der_U", "V/s", "dU/dt (eq. 28)", |m: &Self| m.dx[idx::U]),
        ]
    }

    fn initialize(&mut self, _t0: f64, _ctx: &mut Context) -> Result<(), ModelError> {
        self.circuit.check().map_err(ModelError::new)?;
        let (p1, p3) = self.circuit.static_pressures(self.f_static, self.p2_0);
        self.x = SVector::<f64, 4>::new(p1, self.p2_0, p3, 0.0);
        self.dx = self.circuit.rates(&self.x, &self.inputs());
        Ok(())
    }

    fmu_export::stored_ode_cosim!();

    fn visit_state(&mut self, v: &mut dyn StateVisitor) {
        v.real(&mut self.f_static);
        v.real(&mut self.p2_0);
        v.real(&mut self.circuit.s0);
        v.real(&mut self.circuit.c);
        v.reals(self.x.as_mut_slice());
        v.reals(self.dx.as_mut_slice());
        v.input(&mut self.s);
        v.input(&mut self.s_dot);
        v.input(&mut self.u_ref);
    }
}

impl StoredOde for Lumped3MeFmu {
    const STATES: &'static [(&'static str, &'static str)] =
        &[("p1", "der_p1"), ("p2", "der_p2"), ("p3", "der_p3"), ("U", "der_U")];
    const CS_STEP: f64 = 1e-5;

    fn x(&self) -> &[f64] {
        self.x.as_slice()
    }

    fn x_mut(&mut self) -> &mut [f64] {
        self.x.as_mut_slice()
    }

    fn dx(&self) -> &[f64] {
        self.dx.as_slice()
    }

    fn update_rates(&mut self) -> Result<(), ModelError> {
        self.dx = self.circuit.rates(&self.x, &self.inputs());
        Ok(())
    }

    fn nominals(&self, nominal: &mut [f64]) {
        nominal.copy_from_slice(&[1e6, 1e6, 1e6, 1.0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmu_export::OdeModel;

    #[test]
    fn rests_at_the_static_load_and_matches_the_cs_rates() {
        let mut m = Lumped3MeFmu::default();
        m.initialize(0.0, &mut Context::default()).unwrap();
        let mut dx = [1.0; 4];
        m.derivatives(0.0, &mut dx, &mut Context::default()).unwrap();
        assert_eq!(dx, [0.0; 4]);
        assert!((m.force() - 8829.0).abs() < 1e-6);
        // Away from rest the rates are the circuit's (the code of hydraulics-lumped3.fmu).
        m.u_ref.value = 10.0;
        m.s_dot.value = 0.01;
        m.derivatives(0.0, &mut dx, &mut Context::default()).unwrap();
        let expected = m.circuit.rates(&m.x, &Inputs { s: m.circuit.s0, s_dot: 0.01, u_ref: 10.0 });
        assert_eq!(dx.as_slice(), expected.as_slice());
        assert!((dx[idx::U] - 10.0 / m.circuit.tau()).abs() < 1e-9);
    }
}
