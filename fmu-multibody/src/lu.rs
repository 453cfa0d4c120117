//! LU factorization with partial pivoting of small fixed-size matrices (the Newton and projection
//! matrices), factored once and solved several times.

use nalgebra::{SMatrix, SVector};

/// P A = L U, stored in place.
#[derive(Debug, Clone)]
pub struct Lu<const N: usize> {
    lu: SMatrix<f64, N, N>,
    piv: [usize; N],
    /// 1/u_kk: elimination and back substitution multiply instead of dividing (a chain of N
    /// divisions is the slowest part of a solve).
    inv_diag: [f64; N],
}

impl<const N: usize> Lu<N> {
    /// Factors `a`; `None` when a pivot is zero or not finite (singular matrix).
    pub fn new(mut a: SMatrix<f64, N, N>) -> Option<Self> {
        let mut piv = [0usize; N];
        let mut inv_diag = [0.0; N];
        for k in 0..N {
            let mut p = k;
            let mut best = a[(k, k)].abs();
            for r in k + 1..N {
                let v = a[(r, k)].abs();
                if v > best {
                    best = v;
                    p = r;
                }
            }
            if !(best > 0.0 && best.is_finite()) {
                return None;
            }
            piv[k] = p;
            if p != k {
                a.swap_rows(k, p);
            }
            inv_diag[k] = 1.0 / a[(k, k)];
            for r in k + 1..N {
                let l = a[(r, k)] * inv_diag[k];
                a[(r, k)] = l;
                if l != 0.0 {
                    for c in k + 1..N {
                        a[(r, c)] -= l * a[(k, c)];
                    }
                }
            }
        }
        Some(Self { lu: a, piv, inv_diag })
    }

    /// Solves A x = b.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        let mut x = *b;
        for k in 0..N {
            x.swap_rows(k, self.piv[k]);
        }
        for r in 1..N {
            let mut s = x[r];
            for c in 0..r {
                s -= self.lu[(r, c)] * x[c];
            }
            x[r] = s;
        }
        for r in (0..N).rev() {
            let mut s = x[r];
            for c in r + 1..N {
                s -= self.lu[(r, c)] * x[c];
            }
            x[r] = s * self.inv_diag[r];
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_system_that_needs_pivoting() {
        let a = SMatrix::<f64, 3, 3>::new(0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0);
        let x = SVector::<f64, 3>::new(1.0, -2.0, 0.5);
        let lu = Lu::new(a).unwrap();
        assert!((lu.solve(&(a * x)) - x).amax() < 1e-14);
        assert!(Lu::new(SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 4.0)).is_none());
    }
}
