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
    /// The matrix is diagonal (a mass matrix of point masses and centroidal inertias): the
    /// solution is b_i/a_ii, which the substitutions reach too (every product with an
    /// off-diagonal zero is zero) after a chain of 2N dependent steps.
    diagonal: bool,
}

impl<const N: usize> Lu<N> {
    /// Factors `a`; `None` when a pivot is zero or not finite (singular matrix).
    pub fn new(mut a: SMatrix<f64, N, N>) -> Option<Self> {
        let diagonal = (0..N).all(|c| (0..N).all(|r| r == c || a[(r, c)] == 0.0));
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
        Some(Self { lu: a, piv, inv_diag, diagonal })
    }

    /// Solves A x = b.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        if self.diagonal {
            return SVector::<f64, N>::from_fn(|r, _| b[r] * self.inv_diag[r]);
        }
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

    /// A diagonal matrix is solved by b_i/a_ii with the same values the substitutions give.
    #[test]
    fn diagonal_shortcut_equals_the_substitutions() {
        let a = SMatrix::<f64, 4, 4>::from_diagonal(&SVector::<f64, 4>::new(700.0, 3.0, 16.6667, -0.1));
        let b = SVector::<f64, 4>::new(1.0, -9000.0, 0.37, 1e-3);
        let lu = Lu::new(a).unwrap();
        assert!(lu.diagonal);
        let general = Lu { diagonal: false, ..lu.clone() };
        assert_eq!(lu.solve(&b), general.solve(&b));
        assert!(!Lu::new(a + SMatrix::<f64, 4, 4>::from_element(1e-3)).unwrap().diagonal);
    }
}
