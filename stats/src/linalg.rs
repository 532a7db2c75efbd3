//! Dense least squares for the regression statistics: Householder QR, the inverse of R, and
//! the cluster-robust sandwich. Small problems (K up to a few dozen), so plain loops.
//!
//! # Formula
//! X = QR with R upper triangular; β̂ = R⁻¹Qᵀy and (XᵀX)⁻¹ = R⁻¹R⁻ᵀ. A column whose
//! remaining norm after the Householder steps on the columns before it, |R_jj|, is at most
//! 10⁻¹⁰ of its own norm is (numerically) a linear combination of those columns, and the fit
//! is refused rather than resolved by a pseudo-inverse. The sandwich with cluster sums
//! S_g = Σ_{i∈g} s_i of per-observation scores s_i is c·B [Σ_g S_g S_gᵀ] B with bread B.
//!
//! # References
//! Golub & Van Loan (2013) Matrix Computations, 4th ed., §5.2–5.3; Cameron & Miller (2015)
//! J. Hum. Resour. 50:317–372.

/// Relative size of |R_jj| below which column j counts as dependent on the ones before it.
pub(crate) const RANK_TOL: f64 = 1e-10;

/// A least-squares solution: coefficients and R⁻¹ (upper triangular, k × k).
pub(crate) struct LeastSquares {
    pub(crate) coef: Vec<f64>,
    pub(crate) r_inv: Vec<Vec<f64>>,
}

impl LeastSquares {
    /// (XᵀX)⁻¹ = R⁻¹R⁻ᵀ.
    pub(crate) fn bread(&self) -> Vec<Vec<f64>> {
        let k = self.r_inv.len();
        let mut b = vec![vec![0.0; k]; k];
        for (i, bi) in b.iter_mut().enumerate() {
            for (j, bij) in bi.iter_mut().enumerate() {
                // R⁻¹ is upper triangular: row i is zero left of i, row j left of j.
                *bij = (i.max(j)..k).map(|l| self.r_inv[i][l] * self.r_inv[j][l]).sum();
            }
        }
        b
    }
}

/// Least squares of `y` on the columns `cols` (each of length n, n ≥ k). Err(j): column j is
/// a linear combination of columns 0..j (or zero).
pub(crate) fn least_squares(cols: &[Vec<f64>], y: &[f64]) -> Result<LeastSquares, usize> {
    let k = cols.len();
    let n = y.len();
    let mut a: Vec<Vec<f64>> = cols.to_vec();
    let mut b = y.to_vec();
    let norms: Vec<f64> = a.iter().map(|c| norm(c)).collect();
    let mut r = vec![vec![0.0; k]; k];
    for j in 0..k {
        let alpha = norm(&a[j][j..]);
        if alpha <= RANK_TOL * norms[j] || alpha == 0.0 {
            return Err(j);
        }
        let sign = if a[j][j] >= 0.0 { 1.0 } else { -1.0 };
        let mut v: Vec<f64> = a[j][j..].to_vec();
        v[0] += sign * alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        let reflect = |c: &mut [f64]| {
            let d: f64 = v.iter().zip(c.iter()).map(|(p, q)| p * q).sum::<f64>() * 2.0 / vv;
            for (ci, vi) in c.iter_mut().zip(&v) {
                *ci -= d * vi;
            }
        };
        for col in a.iter_mut().skip(j + 1) {
            reflect(&mut col[j..n]);
        }
        reflect(&mut b[j..n]);
        r[j][j] = -sign * alpha;
        for (l, col) in a.iter().enumerate().skip(j + 1) {
            r[j][l] = col[j];
        }
    }
    // R⁻¹ by back substitution, one unit vector e_c at a time.
    let mut r_inv = vec![vec![0.0; k]; k];
    for c in 0..k {
        let mut x = vec![0.0; k];
        for i in (0..=c).rev() {
            let rhs = if i == c { 1.0 } else { 0.0 };
            let s: f64 = (i + 1..=c).map(|l| r[i][l] * x[l]).sum();
            x[i] = (rhs - s) / r[i][i];
        }
        for (row, v) in r_inv.iter_mut().zip(x) {
            row[c] = v;
        }
    }
    let coef = (0..k).map(|i| (i..k).map(|l| r_inv[i][l] * b[l]).sum()).collect();
    Ok(LeastSquares { coef, r_inv })
}

/// Euclidean norm, scaled against overflow.
pub(crate) fn norm(v: &[f64]) -> f64 {
    let m = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if m == 0.0 {
        return 0.0;
    }
    m * v.iter().map(|x| (x / m).powi(2)).sum::<f64>().sqrt()
}

/// The cluster-robust sandwich c·B [Σ_g S_g S_gᵀ] B, with S_g the sum of `scores` (one row of
/// k per observation) over the observations whose `cluster` index is g (0..g_count).
pub(crate) fn sandwich(
    bread: &[Vec<f64>],
    scores: &[Vec<f64>],
    cluster: &[usize],
    g_count: usize,
    c: f64,
) -> Vec<Vec<f64>> {
    let k = bread.len();
    let mut sums = vec![vec![0.0; k]; g_count];
    for (s, g) in scores.iter().zip(cluster) {
        for (acc, v) in sums[*g].iter_mut().zip(s) {
            *acc += v;
        }
    }
    // B S_g for each cluster, then the sum of their outer products.
    let mut v = vec![vec![0.0; k]; k];
    for s in &sums {
        let bs: Vec<f64> = bread.iter().map(|row| row.iter().zip(s).map(|(a, b)| a * b).sum()).collect();
        for (vi, bi) in v.iter_mut().zip(&bs) {
            for (vij, bj) in vi.iter_mut().zip(&bs) {
                *vij += bi * bj;
            }
        }
    }
    for row in v.iter_mut() {
        for x in row.iter_mut() {
            *x *= c;
        }
    }
    v
}

/// Maps labels to dense indices 0..G in sorted order; returns the indices and G.
pub(crate) fn index<L: Ord>(labels: &[L]) -> (Vec<usize>, usize) {
    let mut sorted: Vec<&L> = labels.iter().collect();
    sorted.sort();
    sorted.dedup();
    let idx = labels.iter().map(|l| sorted.binary_search(&l).unwrap_or(0)).collect();
    (idx, sorted.len())
}
