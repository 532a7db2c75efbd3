//! Directional agreement at the canonical baseline, one rule everywhere: the median run-level
//! effect must clear the claim's margin in the human direction (for a majority claim, the
//! share of runs where the outcome holds must exceed one half).

use serde::Serialize;

use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, median, values, Index};

/// Directional agreement of one model with one direction or majority claim at the canonical baseline.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DirectionalRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Id of the claim.
    pub claim: String,
    /// The claim's run-level metric.
    pub metric: String,
    /// Baseline runs of the model with the metric.
    pub runs: usize,
    /// Median run-level effect (for a rate outcome, the share of runs where it holds).
    pub effect: f64,
    /// Direction of the human effect: +1 or −1 (+1 for a majority claim).
    pub human_sign: f64,
    /// Margin the effect must clear in the human direction (0 for a majority claim).
    pub margin: f64,
    /// Whether the effect clears the margin in the human direction (a majority: the share exceeds one half).
    pub agrees: bool,
}

/// One row per direction or majority claim and model with baseline runs.
pub(crate) fn directional(claims: &[Claim], idx: &Index, models: &[(String, String)]) -> Vec<DirectionalRow> {
    let mut directional = Vec::new();
    for claim in claims {
        let (sign, margin) = match &claim.kind {
            ClaimKind::Direction { sign, margin, .. } => (*sign, *margin),
            ClaimKind::Majority { .. } => (1.0, 0.0),
            _ => continue,
        };
        for (model, family) in models {
            let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
            let v = values(&runs, &claim.metric);
            if v.is_empty() {
                continue;
            }
            let (effect, agrees) = match &claim.kind {
                ClaimKind::Majority { .. } => {
                    let share = mean(&v).unwrap_or(0.0);
                    (share, share > 0.5)
                }
                _ => {
                    let m = median(&v).unwrap_or(0.0);
                    (m, m * sign >= margin)
                }
            };
            directional.push(DirectionalRow {
                model: model.clone(),
                family: family.clone(),
                claim: claim.id.clone(),
                metric: claim.metric.clone(),
                runs: v.len(),
                effect,
                human_sign: sign,
                margin,
                agrees,
            });
        }
    }
    directional
}
