//! Real inputs that follow the polynomial given by `fmi2SetRealInputDerivatives` inside a step.

/// Highest input derivative order accepted by `fmi2SetRealInputDerivatives`.
pub const MAX_INPUT_ORDER: usize = 4;

/// A real input: its value at the start of the communication step and, optionally, its time
/// derivatives there. Inside the step the model reads [`InputSignal::at`], the Taylor polynomial
///
/// u(t_n + τ) = u + u'τ + u''τ²/2 + u'''τ³/6 + u''''τ⁴/24,
///
/// which is exactly the polynomial a master sets with `fmi2SetRealInputDerivatives` (FMI 2.0
/// §4.2.2). With no derivatives set the input is held (zero-order hold).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InputSignal {
    /// Value at the start of the step.
    pub value: f64,
    /// Derivatives of order 1..=4 at the start of the step.
    pub derivatives: [f64; MAX_INPUT_ORDER],
}

impl InputSignal {
    /// A held input with this value.
    pub const fn new(value: f64) -> Self {
        Self { value, derivatives: [0.0; MAX_INPUT_ORDER] }
    }

    /// Value at `tau` seconds after the start of the communication step.
    #[inline]
    pub fn at(&self, tau: f64) -> f64 {
        let d = &self.derivatives;
        // Horner form of the Taylor polynomial.
        self.value + tau * (d[0] + tau * (d[1] / 2.0 + tau * (d[2] / 6.0 + tau * d[3] / 24.0)))
    }

    /// First time derivative at `tau` seconds after the start of the step.
    #[inline]
    pub fn rate_at(&self, tau: f64) -> f64 {
        let d = &self.derivatives;
        d[0] + tau * (d[1] + tau * (d[2] / 2.0 + tau * d[3] / 6.0))
    }

    /// Whether any derivative is set.
    pub fn is_held(&self) -> bool {
        self.derivatives.iter().all(|d| *d == 0.0)
    }

    /// Moves the expansion point to the end of a step of length `h` and forgets the derivatives:
    /// the input is then held at the value it reached, until the master sets new values.
    pub fn end_step(&mut self, h: f64) {
        self.value = self.at(h);
        self.derivatives = [0.0; MAX_INPUT_ORDER];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomial_matches_taylor_series_of_exp() {
        // u = e^t at t = 0: every derivative is 1.
        let u = InputSignal { value: 1.0, derivatives: [1.0; 4] };
        let tau: f64 = 0.1;
        let taylor = 1.0 + tau + tau.powi(2) / 2.0 + tau.powi(3) / 6.0 + tau.powi(4) / 24.0;
        assert!((u.at(tau) - taylor).abs() < 1e-15);
        assert!((u.at(tau) - tau.exp()).abs() < 1e-7);
        assert!((u.rate_at(tau) - (1.0 + tau + tau * tau / 2.0 + tau.powi(3) / 6.0)).abs() < 1e-15);
    }

    #[test]
    fn end_step_holds_the_reached_value() {
        let mut u = InputSignal { value: 2.0, derivatives: [3.0, 0.0, 0.0, 0.0] };
        u.end_step(0.5);
        assert_eq!(u.value, 3.5);
        assert!(u.is_held());
        assert_eq!(u.at(10.0), 3.5);
    }
}
