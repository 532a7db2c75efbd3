//! The fixed-offer ultimatum arm: acceptance functions, thresholds and payoff consistency.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::common::{mean, values, Index};

/// The acceptance function of one model under one payoff variant in the fixed-offer ultimatum arm.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AcceptanceRow {
    /// The model (roster) whose runs are summarised.
    pub model: String,
    /// Payoff variant (C0–C3) the runs were played under.
    pub variant: String,
    /// Fixed-offer runs of the model under the variant.
    pub runs: usize,
    /// (offer, acceptance rate).
    pub acceptance: Vec<(f64, f64)>,
    /// Smallest offer from which acceptance stays at or above one half; none if never.
    pub threshold: Option<f64>,
    /// Mean share of responses consistent with the variant's payoffs (accept above what rejection pays, reject below).
    pub payoff_consistency: f64,
}

/// One row per model and variant with fixed-offer runs.
pub(crate) fn acceptance(idx: &Index, models: &[(String, String)]) -> Vec<AcceptanceRow> {
    let mut acceptance = Vec::new();
    for (model, _) in models {
        for variant in ["C0", "C1", "C2", "C3"] {
            let runs = idx.select(model, "bargaining", "ultimatum-fixed-offer", "baseline", variant);
            if runs.is_empty() {
                continue;
            }
            let mut offers: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for r in &runs {
                for (k, v) in &r.metrics {
                    if let Some(o) = k.strip_prefix("accept_").and_then(|o| o.parse::<i64>().ok()) {
                        offers.entry(o).or_default().push(*v);
                    }
                }
            }
            let curve: Vec<(f64, f64)> = offers.iter().map(|(o, v)| (*o as f64, mean(v).unwrap_or(0.0))).collect();
            let threshold = curve.iter().position(|_| true).and_then(|_| {
                (0..curve.len()).find(|i| curve[*i..].iter().all(|(_, a)| *a >= 0.5)).map(|i| curve[i].0)
            });
            acceptance.push(AcceptanceRow {
                model: model.clone(),
                variant: variant.into(),
                runs: runs.len(),
                acceptance: curve,
                threshold,
                payoff_consistency: mean(&values(&runs, "payoff_consistency")).unwrap_or(f64::NAN),
            });
        }
    }
    acceptance
}
