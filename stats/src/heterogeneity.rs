//! Between-model heterogeneity: Cochran's Q, I², τ² and the between-model standard deviation
//! of baseline means.
//!
//! # Formula
//! With model means mᵢ and their variances vᵢ = sᵢ²/nᵢ, weights wᵢ = 1/vᵢ, the fixed-effect
//! mean m̄ = Σwᵢmᵢ/Σwᵢ, Q = Σwᵢ(mᵢ − m̄)², df = k − 1, I² = max(0, (Q − df)/Q);
//! τ² (DerSimonian–Laird) = max(0, (Q − df)/(Σwᵢ − Σwᵢ²/Σwᵢ)). The between-model standard
//! deviation is the sample standard deviation of the mᵢ — reported beside I², which saturates
//! whenever model means differ and within-model variance is small.
//!
//! # References
//! Higgins & Thompson (2002) Stat. Med. 21:1539–1558; DerSimonian & Laird (1986) Control.
//! Clin. Trials 7:177–188. statsmodels:
//! `statsmodels.stats.meta_analysis.combine_effects(means, variances, method_re="dl")`.

use serde::Serialize;

use super::{check, StatsError};

/// Heterogeneity of k model means.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heterogeneity {
    /// Number of model means.
    pub k: usize,
    /// Cochran's Q.
    pub q: f64,
    /// Degrees of freedom of Q, k − 1.
    pub df: f64,
    /// I² = max(0, (Q − df)/Q).
    pub i2: f64,
    /// Between-model variance τ² (DerSimonian–Laird).
    pub tau2: f64,
    /// Sample standard deviation of the model means.
    pub sd_between: f64,
}

/// From per-model means and the variances of those means.
pub fn i_squared(means: &[f64], variances: &[f64]) -> Result<Heterogeneity, StatsError> {
    check("means", means, 2)?;
    check("variances", variances, 2)?;
    if means.len() != variances.len() {
        return Err(StatsError::Mismatch("means", "variances", means.len(), variances.len()));
    }
    if variances.iter().any(|v| *v <= 0.0) {
        return Err(StatsError::OutOfRange(
            "variances",
            "must be positive (a model with constant runs has no variance to weigh)".into(),
        ));
    }
    let k = means.len();
    let w: Vec<f64> = variances.iter().map(|v| 1.0 / v).collect();
    let sw: f64 = w.iter().sum();
    let mbar = w.iter().zip(means).map(|(w, m)| w * m).sum::<f64>() / sw;
    let q: f64 = w.iter().zip(means).map(|(w, m)| w * (m - mbar).powi(2)).sum();
    let df = (k - 1) as f64;
    let i2 = if q > 0.0 { ((q - df) / q).max(0.0) } else { 0.0 };
    let c = sw - w.iter().map(|w| w * w).sum::<f64>() / sw;
    let tau2 = ((q - df) / c).max(0.0);
    let mean = means.iter().sum::<f64>() / k as f64;
    let sd_between = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / df).sqrt();
    Ok(Heterogeneity { k, q, df, i2, tau2, sd_between })
}
