//! [`Divisor`]: division by a parameter that stays fixed over many divisions (the mass in every
//! RK4 stage of a step), with exactly the bits of `x / d` but cheaper where that is exact: by
//! 1 nothing, by another power of two a multiplication by the reciprocal (a division's latency
//! is 3–4 multiplications', and in the stage chain of RK4 nothing else hides it).

/// `x / d` for a fixed `d`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Divisor {
    /// d = 1: x / 1 = x.
    One,
    /// d = 2^e with 1/d a normal number: x / d = x · (1/d) exactly (both round the same real
    /// number x · 2^−e).
    Reciprocal(f64),
    /// Any other d: a true division.
    Divide(f64),
}

impl Divisor {
    /// The divisor `d`.
    pub fn new(d: f64) -> Self {
        const MANTISSA: u64 = (1 << 52) - 1;
        let r = 1.0 / d;
        if d == 1.0 {
            Self::One
        } else if d.is_normal() && r.is_normal() && d.to_bits() & MANTISSA == 0 {
            Self::Reciprocal(r)
        } else {
            Self::Divide(d)
        }
    }

    /// `x / d`, bit for bit.
    #[inline(always)]
    pub fn divide(self, x: f64) -> f64 {
        match self {
            Self::One => x,
            Self::Reciprocal(r) => x * r,
            Self::Divide(d) => x / d,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numerators over the whole range: signed zeros, subnormals, normals of every magnitude,
    /// the largest finite values and infinities (a xorshift sequence of bit patterns plus edges).
    fn numerators() -> Vec<f64> {
        let mut v = vec![0.0, -0.0, f64::MIN_POSITIVE, -f64::MIN_POSITIVE, 5e-324, -5e-324, f64::MAX, f64::MIN];
        v.extend([f64::INFINITY, f64::NEG_INFINITY, 1.0, -1.0, 3.0, 0.1, 1e300, 1e-300]);
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = f64::from_bits(s);
            if !x.is_nan() {
                v.push(x);
            }
        }
        v
    }

    #[test]
    fn divides_with_the_bits_of_a_true_division() {
        let mut divisors = vec![1.0, -1.0, 2.0, 0.5, -4.0, 1024.0, 2f64.powi(-1022), 2f64.powi(1023), 2f64.powi(-1074)];
        divisors.extend([3.0, 0.1, 10.0, 1000.0, -7.5, 1e-12, f64::MAX, f64::MIN_POSITIVE / 3.0]);
        for d in divisors {
            let q = Divisor::new(d);
            for x in numerators() {
                assert_eq!(q.divide(x).to_bits(), (x / d).to_bits(), "{x:e} / {d:e} with {q:?}");
            }
        }
    }

    #[test]
    fn uses_the_cheap_forms_only_where_exact() {
        assert_eq!(Divisor::new(1.0), Divisor::One);
        assert_eq!(Divisor::new(4.0), Divisor::Reciprocal(0.25));
        assert_eq!(Divisor::new(-0.5), Divisor::Reciprocal(-2.0));
        // 2^1023's reciprocal is subnormal: left to a true division (no mass is that large).
        assert_eq!(Divisor::new(2f64.powi(1023)), Divisor::Divide(2f64.powi(1023)));
        assert_eq!(Divisor::new(3.0), Divisor::Divide(3.0));
        assert_eq!(Divisor::new(1000.0), Divisor::Divide(1000.0));
    }
}
