//! Dense linear algebra of the implicit methods, in place (no allocation after construction):
//! LU with partial pivoting, its solve, and the weighted RMS norm.

// Matrix and difference-table code reads best with indices.
#![allow(clippy::needless_range_loop)]

/// Factors the row-major `n`×`n` matrix `a` in place (L below the diagonal, unit diagonal
/// implied; U on and above), the row exchanges in `piv`. False when a pivot is zero or not
/// finite (the matrix is singular to working precision).
pub(super) fn lu_factor(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    for k in 0..n {
        let mut p = k;
        let mut best = a[k * n + k].abs();
        for i in k + 1..n {
            let v = a[i * n + k].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        if best == 0.0 || !best.is_finite() {
            return false;
        }
        piv[k] = p;
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
        }
        let pivot = a[k * n + k];
        for i in k + 1..n {
            let l = a[i * n + k] / pivot;
            a[i * n + k] = l;
            if l != 0.0 {
                for j in k + 1..n {
                    a[i * n + j] -= l * a[k * n + j];
                }
            }
        }
    }
    true
}

/// Solves A x = b in place with the factors of [`lu_factor`].
pub(super) fn lu_solve(lu: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for i in 0..n {
        let mut s = b[i];
        for j in 0..i {
            s -= lu[i * n + j] * b[j];
        }
        b[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= lu[i * n + j] * b[j];
        }
        b[i] = s / lu[i * n + i];
    }
}

/// The root mean square of v / scale (0 for no element): CVODE's weighted RMS norm with
/// weights 1 / (atol + rtol |x|).
pub(super) fn rms(v: &[f64], scale: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let s: f64 = v.iter().zip(scale).map(|(v, s)| (v / s) * (v / s)).sum();
    (s / v.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_solves_a_system_that_needs_pivoting() {
        // [[0, 2, 1], [1, 1, 0], [3, 0, 1]] x = [7, 3, 6]: x = [1, 2, 3] (a zero first pivot).
        let mut a = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let x = [1.0, 2.0, 3.0];
        let mut b = [2.0 * 2.0 + 3.0, 1.0 + 2.0, 3.0 + 3.0];
        let mut piv = [0; 3];
        assert!(lu_factor(&mut a, 3, &mut piv));
        lu_solve(&a, 3, &piv, &mut b);
        for (b, x) in b.iter().zip(x) {
            assert!((b - x).abs() < 1e-14, "{b} vs {x}");
        }
        let mut singular = [1.0, 2.0, 2.0, 4.0];
        assert!(!lu_factor(&mut singular, 2, &mut [0; 2]));
    }
}
