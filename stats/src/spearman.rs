//! Spearman's rank correlation with its p-value.
//!
//! # Formula
//! ρ is Pearson's correlation of the midranks; the two-sided p-value uses
//! t = ρ·√((n − 2)/(1 − ρ²)) on n − 2 degrees of freedom, as scipy does.
//!
//! # References
//! Spearman (1904) Am. J. Psychol. 15:72–101. scipy: `scipy.stats.spearmanr(x, y)`.

use serde::Serialize;

use super::dist::t_cdf;
use super::{check, StatsError};

/// ρ and its two-sided p-value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spearman {
    /// Number of pairs.
    pub n: usize,
    /// Spearman's ρ: Pearson's correlation of the midranks.
    pub rho: f64,
    /// Two-sided p value from t on n − 2 degrees of freedom.
    pub p: f64,
}

fn midranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|a, b| v[*a].total_cmp(&v[*b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && v[idx[j]] == v[idx[i]] {
            j += 1;
        }
        let mid = (i + 1 + j) as f64 / 2.0;
        for k in &idx[i..j] {
            r[*k] = mid;
        }
        i = j;
    }
    r
}

/// Correlates `x` with `y` (at least three pairs of equal length, neither constant).
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Spearman, StatsError> {
    check("x", x, 3)?;
    check("y", y, 3)?;
    if x.len() != y.len() {
        return Err(StatsError::Mismatch("x", "y", x.len(), y.len()));
    }
    let (rx, ry) = (midranks(x), midranks(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let sxy: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum();
    if sxx == 0.0 || syy == 0.0 {
        return Err(StatsError::OutOfRange("x, y", "a constant input has no rank correlation".into()));
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let df = n - 2.0;
    let p = if rho.abs() >= 1.0 {
        0.0
    } else {
        let t = rho * (df / ((1.0 + rho) * (1.0 - rho))).sqrt();
        2.0 * t_cdf(-t.abs(), df)
    };
    Ok(Spearman { n: x.len(), rho, p })
}
