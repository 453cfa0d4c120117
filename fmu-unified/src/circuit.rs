//! A hydraulic circuit as the unified solver sees it: states x with rates h(x, s, ṡ, u), the
//! cylinder force F(x, s, ṡ) it applies to the mechanism, and their partial derivatives for the
//! tangent of seed 004 eq. 26. The physics is the hydraulics crate's ([`Naya`], [`Lumped3`]):
//! these adapters only arrange it.

use fmu_hydraulics::lumped3::{self, idx, Lumped3};
use fmu_hydraulics::naya::{self, Naya};
use fmu_multibody::mechanism::CylinderForce;
use nalgebra::{SMatrix, SVector};

/// Partial derivatives of the rates h(x, s, ṡ, u).
#[derive(Debug, Clone, Copy)]
pub struct RateJacobians<const P: usize> {
    /// ∂h/∂x.
    pub dx: SMatrix<f64, P, P>,
    /// ∂h/∂s.
    pub ds: SVector<f64, P>,
    /// ∂h/∂ṡ.
    pub dsd: SVector<f64, P>,
}

/// One cylinder's circuit with `P` states.
pub trait Circuit<const P: usize>: Clone + std::fmt::Debug + Send + 'static {
    /// Names of the states, for outputs and messages (e.g. `["p1", "p2"]`).
    const STATES: [&'static str; P];
    /// Units of the states.
    const UNITS: [&'static str; P];
    /// State magnitudes used to scale the Newton system (Pa for pressures).
    fn nominal(&self) -> SVector<f64, P>;
    /// ẋ = h(x, s, ṡ, u) with u the circuit's control input.
    fn rates(&self, x: &SVector<f64, P>, s: f64, s_dot: f64, u: f64) -> SVector<f64, P>;
    /// ∂h/∂x, ∂h/∂s, ∂h/∂ṡ.
    fn rate_jacobians(&self, x: &SVector<f64, P>, s: f64, s_dot: f64, u: f64) -> RateJacobians<P>;
    /// Cylinder force along s (positive extends) with ∂F/∂s, ∂F/∂ṡ, and ∂F/∂x.
    fn force(&self, x: &SVector<f64, P>, s: f64, s_dot: f64) -> (CylinderForce, SVector<f64, P>);
    /// Sets the cylinder length at which the chambers have their nominal lengths (the
    /// mechanism's initial length), then returns the state at rest under the static force
    /// `f_static` and the control input that holds it.
    fn rest(&mut self, s0: f64, f_static: f64) -> Result<(SVector<f64, P>, f64), String>;
    /// Physical range of a state at length s (non-negative pressures, chambers of positive
    /// length); the message names the quantity and its value.
    fn check_state(&self, x: &SVector<f64, P>, s: f64) -> Result<(), String>;
    /// Checks the parameters.
    fn check(&self) -> Result<(), String>;
}

/// Seed 004's two-chamber cylinder: x = [p1, p2], u = κ. Chamber 1 is the upper one: p2
/// extends the cylinder, F = (p2 − p1) A − c ṡ (eq. 28).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NayaCircuit(pub Naya);

impl Circuit<2> for NayaCircuit {
    const STATES: [&'static str; 2] = ["p1", "p2"];
    const UNITS: [&'static str; 2] = ["Pa", "Pa"];

    fn nominal(&self) -> SVector<f64, 2> {
        SVector::<f64, 2>::repeat(1e6)
    }

    fn rates(&self, x: &SVector<f64, 2>, s: f64, s_dot: f64, u: f64) -> SVector<f64, 2> {
        let (d1, d2) = self.0.pressure_rates(x[0], x[1], &naya::Inputs { s, s_dot, kappa: u });
        SVector::<f64, 2>::new(d1, d2)
    }

    fn rate_jacobians(&self, x: &SVector<f64, 2>, s: f64, s_dot: f64, u: f64) -> RateJacobians<2> {
        let c = &self.0;
        let inputs = naya::Inputs { s, s_dot, kappa: u };
        let (j1, j2) = c.pressure_jacobian(x[0], x[1], &inputs);
        let (h1, h2) = c.pressure_rates(x[0], x[1], &inputs);
        let (l1, l2) = c.chamber_lengths(s);
        // Eq. 36: ∂h/∂q has h1/l1 and −h2/l2 in the s column (l1 = 0.5 l + s0 − s, l2 = 0.5 l + s − s0),
        // ∂h/∂q̇ has β1/l1 and −β2/l2.
        RateJacobians {
            dx: SMatrix::<f64, 2, 2>::new(j1, 0.0, 0.0, j2),
            ds: SVector::<f64, 2>::new(h1 / l1, -h2 / l2),
            dsd: SVector::<f64, 2>::new(c.beta_e(x[0]) / l1, -c.beta_e(x[1]) / l2),
        }
    }

    fn force(&self, x: &SVector<f64, 2>, _s: f64, s_dot: f64) -> (CylinderForce, SVector<f64, 2>) {
        let c = &self.0;
        (
            CylinderForce { f: c.force(x[0], x[1], s_dot), df_ds: 0.0, df_dsd: -c.c },
            SVector::<f64, 2>::new(-c.a_p, c.a_p), // ∂Q/∂p of eq. 36
        )
    }

    fn rest(&mut self, s0: f64, f_static: f64) -> Result<(SVector<f64, 2>, f64), String> {
        self.0.s0 = s0;
        let e = self.0.equilibrium(f_static)?;
        Ok((SVector::<f64, 2>::new(e.p1, e.p2), e.kappa))
    }

    fn check_state(&self, x: &SVector<f64, 2>, s: f64) -> Result<(), String> {
        let (l1, l2) = self.0.chamber_lengths(s);
        for (name, l) in [("l1", l1), ("l2", l2)] {
            if l <= 0.0 {
                return Err(format!(
                    "chamber length {name} = {l:.6e} m <= 0 at s = {s} m: the piston is beyond its stroke"
                ));
            }
        }
        for (name, p) in [("p1", x[0]), ("p2", x[1])] {
            if !p.is_finite() {
                return Err(format!("{name} = {p} Pa is not finite"));
            }
            if p <= 0.0 && !self.0.cavitation.strict {
                return Err(format!(
                    "{name} = {p:.6e} Pa is not positive although the cavitation law keeps pressures positive: reduce the step"
                ));
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        self.0.check()
    }
}

/// Publication III's three-volume circuit: x = [p1, p2, p3, U], u = U_ref. p1 extends the
/// cylinder: F = p1 A1 − p2 A2 − c ṡ + F_d (eqs. 30–31).
#[derive(Debug, Clone, PartialEq)]
pub struct Lumped3Circuit {
    /// The circuit.
    pub circuit: Lumped3,
    /// Rod-side pressure of the state at rest (Pa), SPEC §3.6: 3.5 MPa.
    pub p2_0: f64,
}

impl Default for Lumped3Circuit {
    fn default() -> Self {
        Self { circuit: Lumped3::default(), p2_0: 3.5e6 }
    }
}

impl Circuit<4> for Lumped3Circuit {
    const STATES: [&'static str; 4] = ["p1", "p2", "p3", "U"];
    const UNITS: [&'static str; 4] = ["Pa", "Pa", "Pa", "V"];

    fn nominal(&self) -> SVector<f64, 4> {
        SVector::<f64, 4>::new(1e6, 1e6, 1e6, 1.0)
    }

    fn rates(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64, u: f64) -> SVector<f64, 4> {
        self.circuit.rates(x, &lumped3::Inputs { s, s_dot, u_ref: u })
    }

    fn rate_jacobians(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64, u: f64) -> RateJacobians<4> {
        let c = &self.circuit;
        let inputs = lumped3::Inputs { s, s_dot, u_ref: u };
        let h = c.rates(x, &inputs);
        let k = c.gains(s);
        let dk = c.gains_slope(s);
        // ṗ_i = k_i(s) r_i with r_i independent of s: ∂ṗ_i/∂s = (dk_i/ds / k_i) ṗ_i (eqs. 20–22).
        let mut ds = SVector::<f64, 4>::zeros();
        for i in 0..3 {
            ds[i] = dk[i] / k[i] * h[i];
        }
        // Below p_cav the gains carry the cavitation factor (fmu_hydraulics::cavitation); its
        // dependence on s through B_ei is left out of ∂h/∂s (it only shapes the tangent).
        let kc = c.cavitating_gains(&c.gains_with(&c.constants(), s), x).0;
        let mut dsd = SVector::<f64, 4>::zeros();
        dsd[idx::P1] = -kc[0] * c.a1();
        dsd[idx::P2] = kc[1] * c.a2();
        RateJacobians { dx: c.jacobian(x, &inputs), ds, dsd }
    }

    fn force(&self, x: &SVector<f64, 4>, s: f64, s_dot: f64) -> (CylinderForce, SVector<f64, 4>) {
        let c = &self.circuit;
        let (l1, l2) = c.chamber_lengths(s);
        // Eq. 31: inside a damper F_d changes with s at −k_d (l̇1 = ṡ, l̇2 = −ṡ) and with ṡ at −c_d.
        let in_damper = l1 <= c.l_d || l2 <= c.l_d;
        let (dd_s, dd_sd) = if in_damper { (-c.k_d, -c.c_damp) } else { (0.0, 0.0) };
        (
            CylinderForce { f: c.force(x[idx::P1], x[idx::P2], s, s_dot), df_ds: dd_s, df_dsd: -c.c + dd_sd },
            SVector::<f64, 4>::new(c.a1(), -c.a2(), 0.0, 0.0),
        )
    }

    fn rest(&mut self, s0: f64, f_static: f64) -> Result<(SVector<f64, 4>, f64), String> {
        self.circuit.s0 = s0;
        let (p1, p3) = self.circuit.static_pressures(f_static, self.p2_0);
        let x = SVector::<f64, 4>::new(p1, self.p2_0, p3, 0.0);
        self.check_state(&x, s0)
            .map_err(|m| format!("state at rest (F_static = {f_static} N, p2_0 = {} Pa): {m}", self.p2_0))?;
        Ok((x, 0.0))
    }

    fn check_state(&self, x: &SVector<f64, 4>, s: f64) -> Result<(), String> {
        for (name, p) in [("p1", x[idx::P1]), ("p2", x[idx::P2]), ("p3", x[idx::P3])] {
            if p.is_nan() || p < 0.0 {
                return Err(if self.circuit.cavitation.strict {
                    format!("{name} = {p:.6e} Pa is negative: the volume cavitates, which this model does not describe with strict_pressure = true")
                } else {
                    format!("{name} = {p:.6e} Pa is negative although the cavitation law keeps pressures positive: reduce the step")
                });
            }
        }
        let (l1, l2) = self.circuit.chamber_lengths(s);
        for (name, l) in [("l1", l1), ("l2", l2)] {
            if l <= 0.0 {
                return Err(format!(
                    "chamber length {name} = {l:.6e} m <= 0 at s = {s} m: the piston is beyond its stroke"
                ));
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        self.circuit.check()?;
        if self.p2_0.is_nan() || self.p2_0 < 0.0 {
            return Err(format!("parameter p2_0 = {} must be >= 0", self.p2_0));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of `rates` and `force` against the analytic partials.
    fn check_partials<const P: usize, C: Circuit<P>>(c: &C, x: SVector<f64, P>, s: f64, sd: f64, u: f64) {
        let j = c.rate_jacobians(&x, s, sd, u);
        let scale = c.rates(&x, s, sd, u).amax().max(1.0);
        let nominal = c.nominal();
        for i in 0..P {
            let e = 1e-6 * nominal[i];
            let mut dx = SVector::<f64, P>::zeros();
            dx[i] = e;
            let fd = (c.rates(&(x + dx), s, sd, u) - c.rates(&(x - dx), s, sd, u)) / (2.0 * e);
            assert!(
                (fd - j.dx.column(i)).amax() <= 1e-5 * scale / nominal[i],
                "dx col {i}: {fd} vs {}",
                j.dx.column(i)
            );
            let f_fd = (c.force(&(x + dx), s, sd).0.f - c.force(&(x - dx), s, sd).0.f) / (2.0 * e);
            assert!((f_fd - c.force(&x, s, sd).1[i]).abs() <= 1e-6, "dF/dx {i}");
        }
        let e = 1e-7;
        let fd = (c.rates(&x, s + e, sd, u) - c.rates(&x, s - e, sd, u)) / (2.0 * e);
        assert!((fd - j.ds).amax() <= 1e-5 * fd.amax().max(1.0), "ds: {fd} vs {}", j.ds);
        let fd = (c.rates(&x, s, sd + e, u) - c.rates(&x, s, sd - e, u)) / (2.0 * e);
        assert!((fd - j.dsd).amax() <= 1e-5 * fd.amax().max(1.0), "dsd: {fd} vs {}", j.dsd);
        let f = c.force(&x, s, sd).0;
        let fd_s = (c.force(&x, s + e, sd).0.f - c.force(&x, s - e, sd).0.f) / (2.0 * e);
        let fd_sd = (c.force(&x, s, sd + e).0.f - c.force(&x, s, sd - e).0.f) / (2.0 * e);
        assert!((fd_s - f.df_ds).abs() <= 1e-3 * f.df_ds.abs().max(1.0), "dF/ds {fd_s} vs {}", f.df_ds);
        assert!((fd_sd - f.df_dsd).abs() <= 1e-3 * f.df_dsd.abs().max(1.0), "dF/dsd {fd_sd} vs {}", f.df_dsd);
    }

    #[test]
    fn naya_partials_match_finite_differences() {
        let mut c = NayaCircuit::default();
        let (x, kappa) = c.rest(0.5, 6867.0).unwrap();
        check_partials(&c, x + SVector::<f64, 2>::new(2e5, -1e5), 0.49, 0.02, kappa - 0.01);
    }

    #[test]
    fn lumped3_partials_match_finite_differences() {
        let mut c = Lumped3Circuit::default();
        let (x, _) = c.rest(0.5, 8829.0).unwrap();
        let x = x + SVector::<f64, 4>::new(3e5, -2e5, 1e6, 4.0);
        check_partials(&c, x, 0.55, 0.03, 10.0);
        // Inside the upper damper (l2 <= l_d).
        check_partials(&c, x, 0.745, 0.01, 10.0);
    }

    #[test]
    fn states_at_rest_hold_the_static_force() {
        let mut n = NayaCircuit::default();
        let (x, kappa) = n.rest(0.5, 6867.0).unwrap();
        assert!((n.force(&x, 0.5, 0.0).0.f - 6867.0).abs() < 1e-6);
        assert!(n.rates(&x, 0.5, 0.0, kappa).amax() < 1e-3);
        let mut l = Lumped3Circuit::default();
        let (x, u) = l.rest(0.5, 8829.0).unwrap();
        assert!((l.force(&x, 0.5, 0.0).0.f - 8829.0).abs() < 1e-6);
        assert_eq!(l.rates(&x, 0.5, 0.0, u).amax(), 0.0);
    }
}
