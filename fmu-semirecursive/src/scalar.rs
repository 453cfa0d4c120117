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

/// a + Σ b_k ε_k with ε_i ε_j = 0: the value and `K` directional derivatives in one pass (all
/// columns of a Jacobian at once).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualN<const K: usize> {
    /// Value.
    pub v: f64,
    /// Derivatives along the K seeded directions.
    pub d: [f64; K],
}

impl<const K: usize> Default for DualN<K> {
    fn default() -> Self {
        Self { v: 0.0, d: [0.0; K] }
    }
}

impl<const K: usize> DualN<K> {
    /// v + d ε.
    pub fn new(v: f64, d: [f64; K]) -> Self {
        Self { v, d }
    }

    /// v with derivative `c` along direction `k` only.
    pub fn seed(v: f64, k: usize, c: f64) -> Self {
        let mut d = [0.0; K];
        if k < K {
            d[k] = c;
        }
        Self { v, d }
    }

    #[inline]
    fn chain(self, v: f64, slope: f64) -> Self {
        let mut d = self.d;
        for x in &mut d {
            *x *= slope;
        }
        Self { v, d }
    }
}

impl<const K: usize> Add for DualN<K> {
    type Output = Self;
    #[inline]
    fn add(mut self, o: Self) -> Self {
        self.v += o.v;
        for k in 0..K {
            self.d[k] += o.d[k];
        }
        self
    }
}
impl<const K: usize> Sub for DualN<K> {
    type Output = Self;
    #[inline]
    fn sub(mut self, o: Self) -> Self {
        self.v -= o.v;
        for k in 0..K {
            self.d[k] -= o.d[k];
        }
        self
    }
}
impl<const K: usize> Mul for DualN<K> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        let mut d = [0.0; K];
        for k in 0..K {
            d[k] = self.d[k] * o.v + self.v * o.d[k];
        }
        Self { v: self.v * o.v, d }
    }
}
impl<const K: usize> Div for DualN<K> {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        let inv = 1.0 / o.v;
        let q = self.v * inv;
        let mut d = [0.0; K];
        for k in 0..K {
            d[k] = (self.d[k] - q * o.d[k]) * inv;
        }
        Self { v: q, d }
    }
}
impl<const K: usize> Neg for DualN<K> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self.chain(-self.v, -1.0)
    }
}
impl<const K: usize> AddAssign for DualN<K> {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl<const K: usize> SubAssign for DualN<K> {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl<const K: usize> Scalar for DualN<K> {
    #[inline]
    fn cst(v: f64) -> Self {
        Self { v, d: [0.0; K] }
    }
    #[inline]
    fn re(self) -> f64 {
        self.v
    }
    #[inline]
    fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        self.chain(self.v.cos(), -self.v.sin())
    }
    #[inline]
    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        self.chain(r, 0.5 / r)
    }
    #[inline]
    fn tanh(self) -> Self {
        let t = self.v.tanh();
        self.chain(t, 1.0 - t * t)
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

    #[test]
    fn multi_lane_dual_equals_single_lane_duals() {
        let f = |x: DualN<2>, y: DualN<2>| (x * y).sin() / (x + y).sqrt() - (x / y).tanh().cos();
        let g = |x: Dual, y: Dual| (x * y).sin() / (x + y).sqrt() - (x / y).tanh().cos();
        let r = f(DualN::seed(0.7, 0, 1.0), DualN::seed(1.3, 1, 1.0));
        let (dx, dy) = (g(Dual::new(0.7, 1.0), Dual::new(1.3, 0.0)), g(Dual::new(0.7, 0.0), Dual::new(1.3, 1.0)));
        assert!((r.v - dx.v).abs() < 1e-15 && (r.d[0] - dx.d).abs() < 1e-14 && (r.d[1] - dy.d).abs() < 1e-14);
    }
}
