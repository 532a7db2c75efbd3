//! The fixed-offer ultimatum arm: acceptance functions, thresholds and payoff consistency.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::common::{mean, values, Index, MIN_RUNS};

/// The acceptance function of one model under one payoff variant in the fixed-offer ultimatum arm.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AcceptanceRow {
    /// The model (roster) whose runs are summarised.
    pub model: String,
    /// Payoff variant (C0–C3) the runs were played under.
    pub variant: String,
    /// Fixed-offer runs of the model under the variant.
    pub runs: usize,
    /// (offer, acceptance rate); empty below three runs.
    pub acceptance: Vec<(f64, f64)>,
    /// Smallest offer from which acceptance stays at or above one half; none if never.
    pub threshold: Option<f64>,
    /// Mean share of responses consistent with the variant's payoffs (accept above what
    /// rejection pays, reject below); absent below three runs or when no run records it.
    pub payoff_consistency: Option<f64>,
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
            if runs.len() < MIN_RUNS {
                acceptance.push(AcceptanceRow {
                    model: model.clone(),
                    variant: variant.into(),
                    runs: runs.len(),
                    ..AcceptanceRow::default()
                });
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
                payoff_consistency: mean(&values(&runs, "payoff_consistency")),
            });
        }
    }
    acceptance
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, Place};

    #[test]
    fn fewer_than_three_runs_give_no_acceptance_function() {
        let mut out = Vec::new();
        let at = |m| Place::base(m, "f", "bargaining", "ultimatum-fixed-offer");
        for _ in 0..2 {
            run(&mut out, at("thin"), &[("accept_10", 0.0), ("accept_50", 1.0), ("payoff_consistency", 1.0)]);
        }
        for _ in 0..3 {
            run(&mut out, at("full"), &[("accept_10", 0.0), ("accept_50", 1.0), ("payoff_consistency", 1.0)]);
        }
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = acceptance(&idx, &idx.models());
        assert_eq!(rows[0].model, "full");
        assert_eq!((rows[0].threshold, rows[0].payoff_consistency), (Some(50.0), Some(1.0)));
        assert_eq!(rows[1].model, "thin");
        assert!(rows[1].acceptance.is_empty());
        assert_eq!((rows[1].runs, rows[1].threshold, rows[1].payoff_consistency), (2, None, None));
    }
}
