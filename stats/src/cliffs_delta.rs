//! Cliff's δ, the dominance effect size.
//!
//! # Formula
//! δ = (#{(i, j): xᵢ > yⱼ} − #{(i, j): xᵢ < yⱼ}) / (n₁n₂) = 2U/(n₁n₂) − 1.
//!
//! # References
//! Cliff (1993) Psychol. Bull. 114:494–509. Reference values: 2·U/(n₁n₂) − 1 with U from
//! `scipy.stats.mannwhitneyu(x, y).statistic`.

use super::{check, StatsError};

/// Cliff's δ of `x` over `y`, computed by sorting (O((n₁+n₂) log n)).
pub fn cliffs_delta(x: &[f64], y: &[f64]) -> Result<f64, StatsError> {
    check("x", x, 1)?;
    check("y", y, 1)?;
    let mut ys = y.to_vec();
    ys.sort_by(f64::total_cmp);
    let mut dominance: i64 = 0;
    for v in x {
        let below = ys.partition_point(|w| w < v) as i64;
        let not_above = ys.partition_point(|w| w <= v) as i64;
        let above = ys.len() as i64 - not_above;
        dominance += below - above;
    }
    Ok(dominance as f64 / (x.len() * y.len()) as f64)
}
