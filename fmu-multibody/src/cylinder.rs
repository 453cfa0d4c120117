//! The cylinder law of the pressure-coupling variants (Publication IV's comparison of force and
//! pressure coupling): the mechanics receives the chamber pressures and computes the force
//! itself,
//!
//! F = p1 A1 − p2 A2 − c ṡ + F_d(s, ṡ)   (Publication III eq. 30),
//!
//! with the end dampers of Publication III eq. 31: F_d = k_d (l_d − l1) − c_d ṡ when
//! l1 ≤ l_d, −k_d (l_d − l2) − c_d ṡ when l2 ≤ l_d, 0 otherwise, and the chamber lengths
//! l1 = l10 + (s − s0), l2 = l20 − (s − s0) (DIGEST §1.1 sign fix). p1 is the piston-side
//! (cap-end) pressure that extends the cylinder, p2 the rod-side pressure — the convention of
//! the `hydraulics-lumped3` FMU. (The seed 004 circuit `hydraulics-naya` numbers its chambers
//! the other way: its p2 extends; connect naya.p2 → p1 and naya.p1 → p2.)

use crate::mechanism::CylinderForce;
use std::f64::consts::PI;

/// Cylinder parameters (SI).
#[derive(Debug, Clone, PartialEq)]
pub struct Cylinder {
    /// Piston-side area A1 (m²).
    pub a1: f64,
    /// Rod-side (annulus) area A2 (m²).
    pub a2: f64,
    /// Viscous friction coefficient c (N·s/m).
    pub c: f64,
    /// End-damper length l_d (m); 0 disables the dampers.
    pub l_d: f64,
    /// End-damper spring coefficient k_d (N/m).
    pub k_d: f64,
    /// End-damper damping coefficient c_d (N·s/m).
    pub c_d: f64,
    /// Piston-side chamber length at the initial cylinder length s0, l10 (m).
    pub l10: f64,
    /// Rod-side chamber length at s0, l20 (m).
    pub l20: f64,
    /// Rod-side pressure of the static initial state p2₀ (Pa); p1 follows from the static force.
    pub p2_0: f64,
}

impl Cylinder {
    /// The Publication III cylinder (Table 2: d1 = 80 mm, d2 = 35 mm, l10 = 0.05 m,
    /// l20 = 0.25 m, l_d = 8 mm, k_d = 1e7 N/m, c_d = 5e3 N·s/m) with the project's viscous
    /// friction c = 1e5 N·s/m and p2₀ = 3.5 MPa (SPEC §3.6).
    pub fn publication3() -> Self {
        let (d1, d2) = (0.080, 0.035);
        Self {
            a1: PI * d1 * d1 / 4.0,
            a2: PI * (d1 * d1 - d2 * d2) / 4.0,
            c: 1e5,
            l_d: 0.008,
            k_d: 1e7,
            c_d: 5e3,
            l10: 0.05,
            l20: 0.25,
            p2_0: 3.5e6,
        }
    }

    /// The seed 004 cylinder (§4: A = 0.0065 m² on both sides, l = 0.442 m with equal chambers
    /// at s0, c = 1e5 N·s/m, no end dampers), with p2₀ = the rod-side pressure of the seed's
    /// static equilibrium (eq. 32; naya's p1 = 3.3218 MPa).
    pub fn seed004() -> Self {
        Self { a1: 65e-4, a2: 65e-4, c: 1e5, l_d: 0.0, k_d: 0.0, c_d: 0.0, l10: 0.221, l20: 0.221, p2_0: 3.3218e6 }
    }

    /// Chamber lengths (l1, l2) at length s, for the initial length s0 (m).
    pub fn chamber_lengths(&self, s: f64, s0: f64) -> (f64, f64) {
        (self.l10 + (s - s0), self.l20 - (s - s0))
    }

    /// The cylinder force for pressures p1, p2 at (s, ṡ), with its derivatives.
    pub fn force(&self, p1: f64, p2: f64, s: f64, s0: f64, s_dot: f64) -> CylinderForce {
        let (l1, l2) = self.chamber_lengths(s, s0);
        let mut out = CylinderForce { f: p1 * self.a1 - p2 * self.a2 - self.c * s_dot, df_ds: 0.0, df_dsd: -self.c };
        if l1 <= self.l_d {
            out.f += self.k_d * (self.l_d - l1) - self.c_d * s_dot;
            out.df_ds -= self.k_d;
            out.df_dsd -= self.c_d;
        } else if l2 <= self.l_d {
            out.f += -self.k_d * (self.l_d - l2) - self.c_d * s_dot;
            out.df_ds -= self.k_d;
            out.df_dsd -= self.c_d;
        }
        out
    }

    /// Piston-side pressure p1 that holds `f_static` at rest with p2 = p2₀ (outside the dampers).
    pub fn static_p1(&self, f_static: f64) -> f64 {
        (f_static + self.p2_0 * self.a2) / self.a1
    }

    /// Checks the parameters; `suffix` is appended to the names in messages.
    pub fn check(&self, suffix: &str) -> Result<(), String> {
        for (name, v) in [("A1", self.a1), ("A2", self.a2), ("l10", self.l10), ("l20", self.l20)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("parameter {name}{suffix} = {v} must be positive"));
            }
        }
        for (name, v) in [("c", self.c), ("l_d", self.l_d), ("k_d", self.k_d), ("c_d", self.c_d), ("p2_0", self.p2_0)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("parameter {name}{suffix} = {v} must be non-negative"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_and_static_pressure_match_the_digest() {
        let c = Cylinder::publication3();
        assert!((c.a1 - 5.0265e-3).abs() < 1e-7 && (c.a2 - 4.0644e-3).abs() < 1e-7);
        // DIGEST §1.4: F0 = 8829 N with p2 = 3.5 MPa gives p1 = 4.587 MPa.
        assert!((c.static_p1(8829.0) - 4.587e6).abs() < 1e3, "{}", c.static_p1(8829.0));
    }

    #[test]
    fn end_dampers_push_away_from_the_stroke_ends_with_consistent_derivatives() {
        let c = Cylinder::publication3();
        let s0 = 0.5;
        // Inside the lower damper (l1 = 4 mm): pushes out; inside the upper (l2 = 4 mm): pushes in.
        let low = s0 - 0.046;
        let high = s0 + 0.246;
        assert!((c.force(0.0, 0.0, low, s0, 0.0).f - 4e4).abs() < 1e-6);
        assert!((c.force(0.0, 0.0, high, s0, 0.0).f + 4e4).abs() < 1e-6);
        for s in [low, high, s0] {
            let (ds, dv) = (1e-7, 1e-4);
            let f = c.force(1e6, 2e6, s, s0, 0.1);
            let fs = (c.force(1e6, 2e6, s + ds, s0, 0.1).f - c.force(1e6, 2e6, s - ds, s0, 0.1).f) / (2.0 * ds);
            let fv = (c.force(1e6, 2e6, s, s0, 0.1 + dv).f - c.force(1e6, 2e6, s, s0, 0.1 - dv).f) / (2.0 * dv);
            assert!((fs - f.df_ds).abs() < 1e-3 * (1.0 + f.df_ds.abs()), "{fs} {}", f.df_ds);
            assert!((fv - f.df_dsd).abs() < 1e-6 * (1.0 + f.df_dsd.abs()), "{fv} {}", f.df_dsd);
        }
    }
}
