//! The 11–20 money-request game: per model, the normalised Wasserstein distance of the pooled
//! choice distribution to the published one, with a seeded bootstrap 95 % interval.

use crate::anchors::{AnchorTable, AnchorValue};
use crate::common::Index;
use crate::stats;

/// (model, distance, interval low, interval high); serialised as a four-element array.
pub type WassersteinRow = (String, f64, f64, f64);

/// Resamples and seed of the bootstrap.
const RESAMPLES: usize = 2000;
const SEED: u64 = 20260815;

/// One row per model with baseline 11–20 runs holding choices, when the anchor table has the
/// published distribution.
pub(crate) fn wasserstein(anchors: &AnchorTable, idx: &Index, models: &[(String, String)]) -> Vec<WassersteinRow> {
    let mut wasserstein = Vec::new();
    if let Some(AnchorValue::Distribution { shares, .. }) =
        anchors.get("money-request-distribution").map(|a| a.value.clone())
    {
        for (model, _) in models {
            let runs = idx.select(model, "money-request", "baseline", "baseline", "C0");
            let counts: Vec<Vec<f64>> = runs
                .iter()
                .map(|r| (11..=20).map(|k| r.metrics.get(&format!("choice_{k:02}")).copied().unwrap_or(0.0)).collect())
                .filter(|c: &Vec<f64>| c.iter().sum::<f64>() > 0.0)
                .collect();
            if let Ok((d, lo, hi)) = stats::wasserstein_bootstrap(&counts, &shares, RESAMPLES, 0.95, SEED) {
                wasserstein.push((model.clone(), d, lo, hi));
            }
        }
    }
    wasserstein
}
