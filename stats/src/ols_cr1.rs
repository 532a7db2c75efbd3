//! Ordinary least squares with cluster-robust (CR1) standard errors.
//!
//! # Formula
//! β̂ = (XᵀX)⁻¹Xᵀy (Householder QR), residuals û = y − Xβ̂, and for G clusters, N observations
//! and K columns of X
//!
//! V̂_CR1 = G/(G−1) · (N−1)/(N−K) · (XᵀX)⁻¹ [Σ_g X_gᵀ û_g û_gᵀ X_g] (XᵀX)⁻¹
//!
//! (the SUVA audit paper, Eq. 240.6). Standard errors are √diag V̂; t = β̂/se is referred to Student's t
//! on G − 1 degrees of freedom (two-sided p; the 100(1−α) % interval β̂ ± t_{1−α/2, G−1}·se),
//! as Cameron & Miller recommend and statsmodels does with `use_t=True`. At least two clusters
//! and N > K are required; collinear columns are refused (no pseudo-inverse), naming the first
//! column that is a linear combination of the ones before it.
//!
//! # References
//! Liang & Zeger (1986) Biometrika 73:13–22; Cameron & Miller (2015) "A practitioner's guide to
//! cluster-robust inference", J. Hum. Resour. 50:317–372 (CR1, §II.C); Leng & Yuan (2024) "Do
//! LLM agents exhibit social behavior?" (clustering by payoff configuration). statsmodels:
//! `OLS(y, X).fit(cov_type='cluster', cov_kwds={'groups': g}, use_t=True)`.

use serde::Serialize;

use super::dist::{t_cdf, t_ppf};
use super::linalg::{self, LeastSquares};
use super::{check, StatsError};

/// A least-squares fit with CR1 cluster-robust inference; the vectors are aligned with `names`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterFit {
    /// The column names (`intercept` first when one was added; `x1`, `x2`, … by default).
    pub names: Vec<String>,
    /// Coefficients β̂.
    pub coef: Vec<f64>,
    /// CR1 standard errors.
    pub se: Vec<f64>,
    /// t = β̂ / se.
    pub t: Vec<f64>,
    /// Two-sided p values from t on `df` degrees of freedom.
    pub p: Vec<f64>,
    /// Lower ends of the 100(1−α) % intervals.
    pub ci_low: Vec<f64>,
    /// Upper ends of the 100(1−α) % intervals.
    pub ci_high: Vec<f64>,
    /// The CR1 covariance matrix of β̂.
    pub cov: Vec<Vec<f64>>,
    /// Number of observations N.
    pub n: usize,
    /// K in the correction (N−1)/(N−K): the columns of X, plus absorbed effects where counted.
    pub k: usize,
    /// Number of clusters G.
    pub clusters: usize,
    /// Degrees of freedom of the t reference, G − 1.
    pub df: f64,
    /// The finite-sample factor G/(G−1)·(N−1)/(N−K).
    pub correction: f64,
    /// α of the intervals.
    pub alpha: f64,
}

/// Regresses `y` on the rows of `x` (plus a leading intercept column when `intercept`) with
/// CR1 standard errors clustered by `clusters` (any ordered labels; one per observation).
/// `names` names the columns of `x` (default `x1`, `x2`, …).
pub fn ols_cr1<C: Ord>(
    x: &[Vec<f64>],
    y: &[f64],
    clusters: &[C],
    intercept: bool,
    names: Option<&[String]>,
    alpha: f64,
) -> Result<ClusterFit, StatsError> {
    let (mut cols, mut labels) = columns(x, y, names)?;
    if intercept {
        cols.insert(0, vec![1.0; y.len()]);
        labels.insert(0, "intercept".to_string());
    }
    if cols.is_empty() {
        return Err(StatsError::OutOfRange("x", "no regressor: give `x` a column or keep the intercept".into()));
    }
    let (idx, g) = cluster_index(clusters, y.len())?;
    check_alpha(alpha)?;
    let k = cols.len();
    fit(&cols, y, &labels, &idx, g, k, alpha)
}

/// Validates `x` (N rows of equal width) against `y` and `names`; returns the columns and
/// their names.
pub(crate) fn columns(
    x: &[Vec<f64>],
    y: &[f64],
    names: Option<&[String]>,
) -> Result<(Vec<Vec<f64>>, Vec<String>), StatsError> {
    check("y", y, 1)?;
    if x.len() != y.len() {
        return Err(StatsError::Mismatch("x", "y", x.len(), y.len()));
    }
    let width = x[0].len();
    for (i, row) in x.iter().enumerate() {
        if row.len() != width {
            return Err(StatsError::OutOfRange(
                "x",
                format!("row {i} has {} values, row 0 has {width}: every row needs one value per regressor", row.len()),
            ));
        }
        if row.iter().any(|v| !v.is_finite()) {
            return Err(StatsError::NotFinite("x"));
        }
    }
    let labels = match names {
        Some(n) if n.len() != width => {
            return Err(StatsError::OutOfRange("names", format!("{} names for {width} columns of `x`", n.len())))
        }
        Some(n) => n.to_vec(),
        None => (1..=width).map(|j| format!("x{j}")).collect(),
    };
    let cols = (0..width).map(|j| x.iter().map(|row| row[j]).collect()).collect();
    Ok((cols, labels))
}

/// Dense cluster indices; refuses a length mismatch and fewer than two clusters.
pub(crate) fn cluster_index<C: Ord>(clusters: &[C], n: usize) -> Result<(Vec<usize>, usize), StatsError> {
    if clusters.len() != n {
        return Err(StatsError::Mismatch("clusters", "y", clusters.len(), n));
    }
    let (idx, g) = linalg::index(clusters);
    if g < 2 {
        return Err(StatsError::OutOfRange(
            "clusters",
            format!("needs at least two clusters, got {g}: a cluster-robust variance needs G − 1 > 0"),
        ));
    }
    Ok((idx, g))
}

pub(crate) fn check_alpha(alpha: f64) -> Result<(), StatsError> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::OutOfRange("alpha", format!("must lie in (0, 1), got {alpha}")));
    }
    Ok(())
}

/// Solves the least-squares problem, naming the first collinear column.
pub(crate) fn solve(cols: &[Vec<f64>], y: &[f64], names: &[String]) -> Result<LeastSquares, StatsError> {
    linalg::least_squares(cols, y).map_err(|j| {
        StatsError::OutOfRange(
            "x",
            format!(
                "column `{}` is a linear combination of the columns before it (or zero): the regressors are collinear",
                names[j]
            ),
        )
    })
}

/// The CR1 fit of `y` on `cols` with `k_dof` as K in (N−1)/(N−K).
pub(crate) fn fit(
    cols: &[Vec<f64>],
    y: &[f64],
    names: &[String],
    cluster: &[usize],
    g: usize,
    k_dof: usize,
    alpha: f64,
) -> Result<ClusterFit, StatsError> {
    let n = y.len();
    if n <= k_dof {
        return Err(StatsError::TooFew("y", k_dof + 1));
    }
    let ls = solve(cols, y, names)?;
    let resid: Vec<f64> =
        (0..n).map(|i| y[i] - cols.iter().zip(&ls.coef).map(|(c, b)| c[i] * b).sum::<f64>()).collect();
    let scores: Vec<Vec<f64>> = (0..n).map(|i| cols.iter().map(|c| c[i] * resid[i]).collect()).collect();
    let (nf, kf, gf) = (n as f64, k_dof as f64, g as f64);
    let correction = gf / (gf - 1.0) * (nf - 1.0) / (nf - kf);
    let cov = linalg::sandwich(&ls.bread(), &scores, cluster, g, correction);
    let df = gf - 1.0;
    let q = t_ppf(1.0 - alpha / 2.0, df);
    let se: Vec<f64> = (0..cols.len()).map(|j| cov[j][j].max(0.0).sqrt()).collect();
    let t: Vec<f64> = ls.coef.iter().zip(&se).map(|(b, s)| b / s).collect();
    let p = t.iter().map(|t| if t.is_nan() { f64::NAN } else { 2.0 * t_cdf(-t.abs(), df) }).collect();
    Ok(ClusterFit {
        names: names.to_vec(),
        ci_low: ls.coef.iter().zip(&se).map(|(b, s)| b - q * s).collect(),
        ci_high: ls.coef.iter().zip(&se).map(|(b, s)| b + q * s).collect(),
        coef: ls.coef,
        se,
        t,
        p,
        cov,
        n,
        k: k_dof,
        clusters: g,
        df,
        correction,
        alpha,
    })
}
