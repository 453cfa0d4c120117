//! Coordinate partitioning (002 §2.2, eqs. 13–15): Gaussian elimination with full pivoting on
//! Φ_z chooses the dependent coordinates (the pivot columns) and the independent ones (the rest);
//! R_z = [−(Φ_z^d)⁻¹ Φ_z^i; I] maps ż^i to ż.

use nalgebra::{DMatrix, DVector};

/// Dependent and independent coordinate indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Pivot columns of Φ_z (m of them).
    pub dependent: Vec<usize>,
    /// The other n − m columns, increasing.
    pub independent: Vec<usize>,
}

impl Partition {
    /// Full-pivoting elimination of Φ_z (m × n, m < n). Errors at a (near-)singular Φ_z.
    pub fn choose(phi_z: &DMatrix<f64>) -> Result<Self, String> {
        let (m, n) = phi_z.shape();
        let mut a = phi_z.clone();
        let mut rows: Vec<usize> = (0..m).collect();
        let mut cols: Vec<usize> = (0..n).collect();
        let scale = a.amax().max(f64::MIN_POSITIVE);
        for k in 0..m {
            // Largest remaining entry.
            let (mut bi, mut bj, mut best) = (k, k, -1.0);
            for i in k..m {
                for j in k..n {
                    let v = a[(rows[i], cols[j])].abs();
                    if v > best {
                        (bi, bj, best) = (i, j, v);
                    }
                }
            }
            if best <= 1e-12 * scale {
                return Err(format!("constraint Jacobian is singular at elimination step {k} (pivot {best:e})"));
            }
            rows.swap(k, bi);
            cols.swap(k, bj);
            let (pr, pc) = (rows[k], cols[k]);
            for &r in &rows[k + 1..] {
                let f = a[(r, pc)] / a[(pr, pc)];
                for &c in &cols[k..] {
                    let v = a[(pr, c)];
                    a[(r, c)] -= f * v;
                }
            }
        }
        let dependent = cols[..m].to_vec();
        let mut independent = cols[m..].to_vec();
        independent.sort_unstable();
        Ok(Self { dependent, independent })
    }

    /// Φ_z^d (m × m) and Φ_z^i (m × (n − m)).
    pub fn split(&self, phi_z: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
        (phi_z.select_columns(&self.dependent), phi_z.select_columns(&self.independent))
    }

    /// R_z (n × (n − m)), eq. 13: rows of dependent coordinates −(Φ_z^d)⁻¹Φ_z^i, the others I.
    pub fn r_z(&self, phi_z: &DMatrix<f64>) -> Result<DMatrix<f64>, String> {
        let (d, i) = self.split(phi_z);
        let lu = d.lu();
        let x = lu.solve(&(-i)).ok_or("dependent block of the constraint Jacobian is singular")?;
        let n = phi_z.ncols();
        let ni = self.independent.len();
        let mut r = DMatrix::zeros(n, ni);
        for (row, &k) in self.dependent.iter().enumerate() {
            r.row_mut(k).copy_from(&x.row(row));
        }
        for (c, &k) in self.independent.iter().enumerate() {
            r[(k, c)] = 1.0;
        }
        Ok(r)
    }

    /// Scatter dependent/independent values back to a full vector.
    pub fn join(&self, zd: &DVector<f64>, zi: &DVector<f64>) -> DVector<f64> {
        let mut z = DVector::zeros(self.dependent.len() + self.independent.len());
        for (k, &i) in self.dependent.iter().enumerate() {
            z[i] = zd[k];
        }
        for (k, &i) in self.independent.iter().enumerate() {
            z[i] = zi[k];
        }
        z
    }
}
