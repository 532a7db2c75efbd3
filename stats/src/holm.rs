//! Holm's step-down adjustment within a family of tests.
//!
//! # Formula
//! Sort p ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎; adjusted p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎),
//! returned in the input order.
//!
//! # References
//! Holm (1979) Scand. J. Stat. 6:65–70. statsmodels:
//! `statsmodels.stats.multitest.multipletests(p, method="holm")`.

use super::StatsError;

/// Holm-adjusted p-values, in the order given.
pub fn holm(p: &[f64]) -> Result<Vec<f64>, StatsError> {
    if p.is_empty() {
        return Err(StatsError::TooFew("p", 1));
    }
    if let Some(bad) = p.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(StatsError::OutOfRange("p", format!("{bad} is not a probability")));
    }
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]).then(a.cmp(b)));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, idx) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[*idx]).min(1.0));
        adjusted[*idx] = running;
    }
    Ok(adjusted)
}
