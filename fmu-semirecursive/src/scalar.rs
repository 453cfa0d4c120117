//! The number type the mechanism is written in: `f64`, or a forward-mode dual number
//! a + b ε (ε² = 0) whose ε part carries an exact directional derivative. Evaluating the
//! residual of Pub I eq. 41 in [`Dual`] along each coordinate gives the columns of the tangent
//! of eq. 42 without truncation error (the "analytic" tangent of this crate).

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

/// What the mechanism code needs of a number.
pub trait Scalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + std::fmt::Debug
{
    /// A constant.
    fn cst(v: f64) -> Self;
    /// The value (real part).
    fn re(self) -> f64;
    /// sin.
    fn sin(self) -> Self;
    /// cos.
    fn cos(self) -> Self;
    /// √.
    fn sqrt(self) -> Self;
    /// tanh.
    fn tanh(self) -> Self;
    /// |x| (the derivative of the branch the value is on).
    fn abs(self) -> Self {
        if self.re() < 0.0 {
            -self
        } else {
            self
        }
    }
}

impl Scalar for f64 {
    #[inline]
    fn cst(v: f64) -> Self {
        v
    }
    #[inline]
    fn re(self) -> f64 {
        self
    }
    #[inline]
    fn sin(self) -> Self {
        f64::sin(self)
    }
    #[inline]
    fn cos(self) -> Self {
        f64::cos(self)
    }
    #[inline]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline]
    fn tanh(self) -> Self {
        f64::tanh(self)
    }
}

/// a + b ε with ε² = 0: `v` the value, `d` the derivative along the seeded direction.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Dual {
    /// Value.
    pub v: f64,
    /// Directional derivative.
    pub d: f64,
}

impl Dual {
    /// v + d ε.
    pub fn new(v: f64, d: f64) -> Self {
        Self { v, d }
    }
}

impl Add for Dual {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self::new(self.v + o.v, self.d + o.d)
    }
}
impl Sub for Dual {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self::new(self.v - o.v, self.d - o.d)
    }
}
impl Mul for Dual {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self::new(self.v * o.v, self.d * o.v + self.v * o.d)
    }
}
impl Div for Dual {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        Self::new(self.v / o.v, (self.d * o.v - self.v * o.d) / (o.v * o.v))
    }
}
impl Neg for Dual {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self::new(-self.v, -self.d)
    }
}
impl AddAssign for Dual {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl SubAssign for Dual {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl Scalar for Dual {
    #[inline]
    fn cst(v: f64) -> Self {
        Self::new(v, 0.0)
    }
    #[inline]
    fn re(self) -> f64 {
        self.v
    }
    #[inline]
    fn sin(self) -> Self {
        Self::new(self.v.sin(), self.d * self.v.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        Self::new(self.v.cos(), -self.d * self.v.sin())
    }
    #[inline]
    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        Self::new(r, self.d / (2.0 * r))
    }
    #[inline]
    fn tanh(self) -> Self {
        let t = self.v.tanh();
        Self::new(t, self.d * (1.0 - t * t))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn dual_derivatives_match_calculus() {
        let x = Dual::new(0.7, 1.0);
        let f = x.sin() * x.cos() + x.sqrt() / (x * x) - x.tanh();
        let d = (2.0 * 0.7f64).cos() + (-1.5) * 0.7f64.powf(-2.5) - (1.0 - 0.7f64.tanh().powi(2));
        assert!((f.d - d).abs() < 1e-12, "{} vs {d}", f.d);
        assert_eq!(Dual::new(-2.0, 3.0).abs(), Dual::new(2.0, -3.0));
    }
}
