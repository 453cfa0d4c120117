//! The restart system [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; c] of a mechanism (the constrained equations
//! of motion), factored by LU with partial pivoting: on the stack up to [`KKT_CAPACITY`]
//! unknowns, on the heap beyond. Used by the solver's restart ([`crate::solver`]) and by the
//! interface model of [`crate::mechanism`], so it sits below both.

use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// Largest N + M whose restart system [M Φ_qᵀ; Φ_q 0] is factored on the stack.
pub const KKT_CAPACITY: usize = 12;

/// The restart system [M Φ_qᵀ; Φ_q 0] factored as P A = L U (partial pivoting) in a
/// fixed-capacity array: the matrix dimension N + M is not a type-level constant.
pub(crate) struct Kkt<const N: usize, const M: usize> {
    lu: [[f64; KKT_CAPACITY]; KKT_CAPACITY],
    piv: [usize; KKT_CAPACITY],
}

impl<const N: usize, const M: usize> Kkt<N, M> {
    const DIM: usize = N + M;

    /// Assembles and factors; `None` when a pivot is zero or not finite.
    pub(crate) fn new(mm: &SMatrix<f64, N, N>, j: &SMatrix<f64, M, N>) -> Option<Self> {
        let n = Self::DIM;
        let mut a = [[0.0; KKT_CAPACITY]; KKT_CAPACITY];
        for r in 0..N {
            for c in 0..N {
                a[r][c] = mm[(r, c)];
            }
            for c in 0..M {
                a[r][N + c] = j[(c, r)];
                a[N + c][r] = j[(c, r)];
            }
        }
        let mut piv = [0usize; KKT_CAPACITY];
        for k in 0..n {
            let mut p = k;
            let mut best = a[k][k].abs();
            for (r, row) in a.iter().enumerate().take(n).skip(k + 1) {
                if row[k].abs() > best {
                    best = row[k].abs();
                    p = r;
                }
            }
            if !(best > 0.0 && best.is_finite()) {
                return None;
            }
            piv[k] = p;
            a.swap(k, p);
            let pivot_row = a[k];
            for row in a.iter_mut().take(n).skip(k + 1) {
                let l = row[k] / pivot_row[k];
                row[k] = l;
                if l != 0.0 {
                    for c in k + 1..n {
                        row[c] -= l * pivot_row[c];
                    }
                }
            }
        }
        Some(Self { lu: a, piv })
    }

    /// Solves A x = b.
    pub(crate) fn solve(&self, b: &[f64; KKT_CAPACITY]) -> [f64; KKT_CAPACITY] {
        let n = Self::DIM;
        let mut x = *b;
        for k in 0..n {
            x.swap(k, self.piv[k]);
        }
        for r in 1..n {
            let mut s = x[r];
            for (l, xc) in self.lu[r][..r].iter().zip(&x[..r]) {
                s -= l * xc;
            }
            x[r] = s;
        }
        for r in (0..n).rev() {
            let mut s = x[r];
            for (u, xc) in self.lu[r][r + 1..n].iter().zip(&x[r + 1..n]) {
                s -= u * xc;
            }
            x[r] = s / self.lu[r][r];
        }
        x
    }

    /// Solves [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; c] with one step of iterative refinement (the
    /// residual from the blocks).
    pub(crate) fn solve_refined(
        &self,
        mm: &SMatrix<f64, N, N>,
        j: &SMatrix<f64, M, N>,
        q: &SVector<f64, N>,
        c: &SVector<f64, M>,
    ) -> (SVector<f64, N>, SVector<f64, M>) {
        let mut b = [0.0; KKT_CAPACITY];
        b[..N].copy_from_slice(q.as_slice());
        b[N..N + M].copy_from_slice(c.as_slice());
        let mut x = self.solve(&b);
        let qdd = SVector::<f64, N>::from_fn(|r, _| x[r]);
        let lambda = SVector::<f64, M>::from_fn(|r, _| x[N + r]);
        let r_dyn = q - mm * qdd - j.transpose() * lambda;
        let r_con = c - j * qdd;
        let mut r = [0.0; KKT_CAPACITY];
        r[..N].copy_from_slice(r_dyn.as_slice());
        r[N..N + M].copy_from_slice(r_con.as_slice());
        let dx = self.solve(&r);
        for (xi, di) in x.iter_mut().zip(dx.iter()).take(N + M) {
            *xi += di;
        }
        (SVector::<f64, N>::from_fn(|r, _| x[r]), SVector::<f64, M>::from_fn(|r, _| x[N + r]))
    }
}

/// [`Kkt::solve_refined`] for mechanisms beyond [`KKT_CAPACITY`], with a heap matrix.
pub(crate) fn kkt_solve_heap<const N: usize, const M: usize>(
    mm: &SMatrix<f64, N, N>,
    j: &SMatrix<f64, M, N>,
    q: &SVector<f64, N>,
    c: &SVector<f64, M>,
) -> Option<(SVector<f64, N>, SVector<f64, M>)> {
    let mut a = DMatrix::<f64>::zeros(N + M, N + M);
    let mut b = DVector::<f64>::zeros(N + M);
    for r in 0..N {
        for k in 0..N {
            a[(r, k)] = mm[(r, k)];
        }
        for k in 0..M {
            a[(r, N + k)] = j[(k, r)];
            a[(N + k, r)] = j[(k, r)];
        }
        b[r] = q[r];
    }
    for k in 0..M {
        b[N + k] = c[k];
    }
    let lu = a.clone().lu();
    let mut x = lu.solve(&b)?;
    let r = &b - &a * &x;
    x += lu.solve(&r)?;
    Some((SVector::<f64, N>::from_fn(|r, _| x[r]), SVector::<f64, M>::from_fn(|r, _| x[N + r])))
}
