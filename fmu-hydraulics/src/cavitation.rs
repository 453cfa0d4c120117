//! Low-pressure law of a lumped volume: gaseous cavitation (air release) below a cavitation
//! pressure p_c, shared by both circuits ([`crate::naya`], [`crate::lumped3`]) and through them
//! by the unified FMUs. One law in one place.
//!
//! **Law.** The effective bulk modulus of a volume that holds liquid and free gas is the
//! volume-weighted sum of compliances (Merritt, *Hydraulic Control Systems*, Wiley 1967, §2.5,
//! eq. 2-43; reviewed by Gholizadeh, Burton, Schoenau, "Fluid bulk modulus: a literature
//! survey", Int. J. Fluid Power 12(3), 2011, §4):
//!
//! 1/β_e = 1/β_l + (V_g/V) · 1/β_g,  β_g = n p (polytropic gas; isothermal n = 1),
//!
//! with β_l the liquid's (for Publication III's volumes, oil + wall + hose: eqs. 23–25) modulus.
//! Above p_c the gas stays dissolved (V_g = 0): the law is exactly inactive, the circuit keeps
//! its own β. Below p_c dissolved air and vapour are released (Henry's law; the released-gas
//! volume fraction grows from zero at the saturation pressure, as in the air-release models
//! reviewed by Gholizadeh et al. §4.2). We take the free-gas fraction
//!
//! V_g/V = w(p) = (1 − p/p_c)²,  0 < p < p_c,
//!
//! which starts with zero value *and* zero slope at p_c (β_e and dβ_e/dp are continuous there:
//! the collapse is smooth) and tends to 1 (a gas-filled cavity) as p → 0. Hence
//!
//! β_e(p) = β_l p / (p + β_l w(p)),
//!
//! so β_e → p as p → 0 (an isothermal gas cavity, Boyle): ṗ = β_e/V (Q − V̇) vanishes at p = 0
//! and the pressure cannot reach zero; a volume under suction sits at a few hundred Pa while its
//! volume deficit grows, and the pressure recovers once inflow has refilled the cavity (the
//! behaviour of the discrete-cavity models of Wylie & Streeter, *Fluid Transients in Systems*,
//! 1993, §8). For p ≤ 0, reached only transiently by an explicit stage, β_e = p (the law's own
//! slope at 0, so it is C¹).
//!
//! **Integration.** Near p_c the collapse is steep (β drops from ~1 GPa to the gas value within a
//! few hundred Pa), so the step that enters cavitation can overshoot below zero with any
//! one-step method that is not L-stable (FWE, RK4, and TR through its explicit half). The FMUs
//! then redo that internal step with backward Euler (L-stable; its Newton iterates are damped
//! to keep every pressure positive), see [`crate::integrator::backward_euler`].
//!
//! `strict` (FMU parameter `strict_pressure`) switches the law off: a negative pressure then
//! ends the step with an error, as before the law existed.

/// The cavitation parameters of one circuit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cavitation {
    /// Cavitation (gas-release) pressure p_c, absolute (Pa). Default 3 kPa.
    pub p_cav: f64,
    /// The law is off: negative pressures are errors (FMU parameter `strict_pressure`).
    pub strict: bool,
}

impl Default for Cavitation {
    fn default() -> Self {
        Self { p_cav: 3e3, strict: false }
    }
}

impl Cavitation {
    /// The law applies at pressure p: not strict and p < p_c. Above p_c nothing changes.
    #[inline]
    pub fn active(&self, p: f64) -> bool {
        !self.strict && p < self.p_cav
    }

    /// Released free-gas volume fraction w(p) = (1 − p/p_c)² and dw/dp, for 0 < p < p_c.
    #[inline]
    fn gas_fraction(&self, p: f64) -> (f64, f64) {
        let u = 1.0 - p / self.p_cav;
        (u * u, -2.0 * u / self.p_cav)
    }

    /// Effective bulk modulus β_e = β_l p/(p + β_l w(p)) and dβ_e/dp for a pressure p < p_c,
    /// given the liquid modulus β_l and its slope dβ_l/dp at p (Pa, 1). For p ≥ p_c (or strict)
    /// it returns (β_l, dβ_l/dp) unchanged; for p ≤ 0, (p, 1).
    pub fn modulus(&self, beta: f64, dbeta: f64, p: f64) -> (f64, f64) {
        if !self.active(p) {
            return (beta, dbeta);
        }
        if p <= 0.0 {
            return (p, 1.0);
        }
        let (w, dw) = self.gas_fraction(p);
        let d = p + beta * w;
        // β_e = β p / d; dd/dp = 1 + β' w + β w'.
        let dd = 1.0 + dbeta * w + beta * dw;
        ((beta * p) / d, (dbeta * p + beta) / d - beta * p * dd / (d * d))
    }

    /// Checks the parameters; the message names the bad one.
    pub fn check(&self) -> Result<(), String> {
        if !(self.p_cav > 0.0 && self.p_cav.is_finite()) {
            return Err(format!("parameter p_cav = {} Pa must be positive", self.p_cav));
        }
        Ok(())
    }
}

/// The cavitation bookkeeping of one communication step from `t`: [`Monitor::observe`] after
/// every internal step, the onsets kept and reported once the step is done.
pub struct StepWatch<'a> {
    monitor: &'a mut Monitor,
    law: &'a Cavitation,
    t: f64,
    /// τ of the last observation (s into the step).
    last: f64,
    onsets: Vec<String>,
}

impl<'a> StepWatch<'a> {
    /// Watches the step from `t` with the law `law`.
    pub fn new(monitor: &'a mut Monitor, law: &'a Cavitation, t: f64) -> Self {
        Self { monitor, law, t, last: 0.0, onsets: Vec::new() }
    }

    /// The pressures at τ into the step (the end of an internal step).
    pub fn observe(&mut self, tau: f64, pressures: &[(&str, f64)]) {
        if let Some(w) = self.monitor.observe(self.law, self.t + tau, tau - self.last, pressures) {
            self.onsets.push(w);
        }
        self.last = tau;
    }

    /// Reports the onsets seen (one warning per episode).
    pub fn report(self, ctx: &mut fmu_export::Context) {
        for w in self.onsets {
            ctx.report(w);
        }
    }
}

/// Cavitation bookkeeping of an FMU: time spent with a pressure below p_c and the episodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Monitor {
    /// Total time with at least one pressure below p_c (s).
    pub time: f64,
    /// Number of episodes (intervals with a pressure below p_c).
    pub episodes: i32,
    /// A pressure is below p_c at the last internal step.
    pub cavitating: bool,
}

impl Monitor {
    /// Records an internal step of length `dt` ending at time `t` with these (name, pressure)
    /// pairs; returns the warning for the start of an episode (one per episode).
    pub fn observe(&mut self, law: &Cavitation, t: f64, dt: f64, pressures: &[(&str, f64)]) -> Option<String> {
        let low = pressures.iter().find(|(_, p)| law.active(*p));
        let was = self.cavitating;
        self.cavitating = low.is_some();
        if self.cavitating {
            self.time += dt;
        }
        match low {
            Some((name, p)) if !was => {
                self.episodes += 1;
                Some(format!(
                    "at t = {t} s {name} = {p:.6e} Pa fell below the cavitation pressure p_cav = {} Pa: the volume cavitates \
                     (gas-release law, effective bulk modulus collapses; episode {}, reported once per episode; output t_cav \
                     accumulates the time spent cavitating)",
                    law.p_cav, self.episodes
                ))
            }
            _ => None,
        }
    }

    /// Resets the bookkeeping (initialization).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// State visitor.
    pub fn visit(&mut self, v: &mut dyn fmu_export::StateVisitor) {
        v.real(&mut self.time);
        let mut e = i64::from(self.episodes);
        v.integer(&mut e);
        self.episodes = i32::try_from(e).unwrap_or(0);
        v.boolean(&mut self.cavitating);
    }
}

/// Access to a model's cavitation law and bookkeeping.
pub trait HasCavitation: Clone + Default + Send + 'static {
    /// The law.
    fn cavitation(&self) -> &Cavitation;
    /// The law, mutable.
    fn cavitation_mut(&mut self) -> &mut Cavitation;
    /// The bookkeeping.
    fn monitor(&self) -> &Monitor;
    /// The bookkeeping, mutable.
    fn monitor_mut(&mut self) -> &mut Monitor;
}

/// Parameters `p_cav`, `strict_pressure` and outputs `t_cav`, `cav_episodes`.
pub fn variables<M: HasCavitation>() -> (Vec<fmu_export::Variable<M>>, Vec<fmu_export::Variable<M>>) {
    use fmu_export::Variable;
    let params = vec![
        Variable::parameter(
            "p_cav",
            "Pa",
            "Cavitation (gas-release) pressure, absolute: below it the effective bulk modulus collapses to that of the released gas (1/beta_e = 1/beta + w/p, w = (1 - p/p_cav)^2), so the pressure stays positive",
            |m: &M| m.cavitation().p_cav,
            |m, v| m.cavitation_mut().p_cav = v,
        )
        .min(1e-9),
        Variable::boolean(
            "strict_pressure",
            "true: no cavitation law, a negative pressure ends the step with an error (the model before the law)",
            |m: &M| m.cavitation().strict,
            |m, v| m.cavitation_mut().strict = v,
        ),
    ];
    let outputs = vec![
        Variable::output(
            "t_cav",
            "s",
            "Time spent cavitating: total time with a pressure below p_cav since initialization",
            |m: &M| m.monitor().time,
        )
        .depends_on(&[]),
        Variable::integer(
            "cav_episodes",
            "Number of cavitation episodes (intervals with a pressure below p_cav); each is logged once as a warning",
            |m: &M| m.monitor().episodes,
            |m, v| m.monitor_mut().episodes = v,
        )
        .discrete_output(),
    ];
    (params, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn law_is_exactly_inactive_above_p_cav_and_continuous_at_it() {
        let c = Cavitation::default();
        let beta = 1.5e9;
        for p in [3e3, 3.0001e3, 1e5, 4e6] {
            assert_eq!(c.modulus(beta, 0.7, p), (beta, 0.7));
        }
        // Continuous value and slope at p_c from below.
        let (b, db) = c.modulus(beta, 0.0, 3e3 * (1.0 - 1e-13));
        assert!((b - beta).abs() < 1e-3 * beta, "{b}");
        assert!(db.is_finite());
        let strict = Cavitation { strict: true, ..c };
        assert_eq!(strict.modulus(beta, 0.0, -5.0), (beta, 0.0));
    }

    #[test]
    fn law_tends_to_an_isothermal_gas_and_its_slope_matches_differences() {
        let c = Cavitation::default();
        // β_e → p as p → 0.
        let (b, _) = c.modulus(1.5e9, 0.0, 1.0);
        assert!((b - 1.0).abs() < 1e-3, "{b}");
        // Monotone collapse.
        let mut last = 0.0;
        for p in [1.0, 10.0, 100.0, 1e3, 2e3, 2.9e3, 2.999e3] {
            let (b, _) = c.modulus(1.5e9, 0.0, p);
            assert!(b > last, "{p}: {b}");
            last = b;
        }
        for (beta, dbeta) in [(1.5e9, 0.0), (1.53e9, 7.3)] {
            for p in [5.0, 300.0, 1.5e3, 2.99e3] {
                let e = 1e-6 * p;
                let fd = (c.modulus(beta + dbeta * e, dbeta, p + e).0 - c.modulus(beta - dbeta * e, dbeta, p - e).0)
                    / (2.0 * e);
                let an = c.modulus(beta, dbeta, p).1;
                assert!((fd - an).abs() <= 1e-5 * an.abs().max(1.0), "p = {p}: {an} vs {fd}");
            }
        }
        assert_eq!(c.modulus(1.5e9, 0.0, -3.0), (-3.0, 1.0));
    }

    #[test]
    fn monitor_warns_once_per_episode_and_sums_the_time() {
        let c = Cavitation::default();
        let mut m = Monitor::default();
        assert!(m.observe(&c, 0.1, 0.1, &[("p1", 4e6)]).is_none());
        assert!(m.observe(&c, 0.2, 0.1, &[("p1", 2e3)]).unwrap().contains("p1"));
        assert!(m.observe(&c, 0.3, 0.1, &[("p1", 1e3)]).is_none());
        assert!(m.observe(&c, 0.4, 0.1, &[("p1", 1e5)]).is_none());
        assert!(m.observe(&c, 0.5, 0.1, &[("p1", 1e5), ("p2", 10.0)]).unwrap().contains("episode 2"));
        assert_eq!(m.episodes, 2);
        assert!((m.time - 0.3).abs() < 1e-12);
    }
}
