//! The semi-empirical orifice law of Publication III (Rahikainen, González, Naya 2019; eqs.
//! 26–27) with the laminar band of Publication II §3.1.1: the flow through a valve edge or the
//! throttle is C √|Δp| sgn(Δp), linear in Δp for |Δp| < Δp_L. Used by [`crate::lumped3`] and,
//! through it, by the quasi-steady solution of [`crate::sp`].

/// Semi-empirical orifice law without its coefficient (eqs. 26–27): sgn(Δp) √|Δp| (√Pa) for
/// |Δp| ≥ Δp_L; inside the laminar region |Δp| < Δp_L the line through zero and the turbulent
/// value at ±Δp_L (Publication II §3.1.1: "computed at Δp = 2 bar … interpolated between zero
/// and the computed value"), Δp/√Δp_L. Continuous at ±Δp_L; zero at Δp = 0.
pub fn orifice(dp: f64, dp_lam: f64) -> f64 {
    if dp.abs() < dp_lam {
        dp / dp_lam.sqrt()
    } else if dp > 0.0 {
        dp.sqrt()
    } else {
        -(-dp).sqrt()
    }
}

/// d/dΔp of [`orifice`] (1/√Pa): 1/√Δp_L inside the laminar region, 1/(2√|Δp|) outside; finite
/// everywhere for Δp_L > 0 (it jumps by a factor 2 at ±Δp_L).
pub fn orifice_slope(dp: f64, dp_lam: f64) -> f64 {
    if dp.abs() < dp_lam {
        1.0 / dp_lam.sqrt()
    } else {
        0.5 / dp.abs().sqrt()
    }
}

/// [`orifice`] and [`orifice_slope`] with √Δp_L evaluated once: the same arithmetic, so the same
/// values bit for bit, with one square root per valve edge instead of up to three.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Orifice {
    /// Δp_L (Pa).
    pub(crate) dp_lam: f64,
    /// √Δp_L (√Pa).
    sqrt_dp_lam: f64,
    /// 1/√Δp_L (1/√Pa): the laminar slope.
    laminar_slope: f64,
}

impl Orifice {
    pub(crate) fn new(dp_lam: f64) -> Self {
        let sqrt_dp_lam = dp_lam.sqrt();
        Self { dp_lam, sqrt_dp_lam, laminar_slope: 1.0 / sqrt_dp_lam }
    }

    /// g(Δp), [`orifice`].
    #[inline]
    pub(crate) fn g(&self, dp: f64) -> f64 {
        if dp.abs() < self.dp_lam {
            dp / self.sqrt_dp_lam
        } else if dp > 0.0 {
            dp.sqrt()
        } else {
            -(-dp).sqrt()
        }
    }

    /// (g(Δp), dg/dΔp), [`orifice`] and [`orifice_slope`] sharing √|Δp|.
    #[inline]
    pub(crate) fn g_and_slope(&self, dp: f64) -> (f64, f64) {
        if dp.abs() < self.dp_lam {
            (dp / self.sqrt_dp_lam, self.laminar_slope)
        } else {
            let root = dp.abs().sqrt();
            (if dp > 0.0 { root } else { -root }, 0.5 / root)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orifice_law_is_continuous_and_odd() {
        let l = 2e5;
        for side in [-1.0, 1.0] {
            let edge = side * l;
            let inside = orifice(edge * (1.0 - 1e-12), l);
            let outside = orifice(edge * (1.0 + 1e-12), l);
            // Value at the edge: ±√(2 bar) = ±447.21 √Pa from both sides.
            assert!((inside - side * l.sqrt()).abs() < 1e-6, "{inside}");
            assert!((outside - side * l.sqrt()).abs() < 1e-6, "{outside}");
            assert!((orifice(edge, l) - side * 447.213_595_5).abs() < 1e-6);
            // Slopes finite on both sides: 1/√Δp_L inside, 1/(2√Δp_L) outside.
            let (si, so) = (orifice_slope(edge * 0.999, l), orifice_slope(edge * 1.001, l));
            assert!((si - 1.0 / l.sqrt()).abs() < 1e-12 && si.is_finite());
            assert!((so - 0.5 / (1.001 * l).sqrt()).abs() < 1e-12 && so.is_finite());
        }
        assert_eq!(orifice(0.0, l), 0.0);
        assert!((orifice_slope(0.0, l) - 2.236_068e-3).abs() < 1e-9);
        for dp in [1.0, 1e5, 1.99e5, 2e5, 3e6, 7.5e6] {
            assert_eq!(orifice(-dp, l), -orifice(dp, l));
            assert_eq!(orifice_slope(-dp, l), orifice_slope(dp, l));
        }
        // Turbulent region: √Δp.
        assert!((orifice(3e6, l) - 1_732.050_807_6).abs() < 1e-6);
    }
}
