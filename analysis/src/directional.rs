//! Directional agreement at the canonical baseline, one rule everywhere: the median run-level
//! effect must clear the claim's margin in the human direction (for a majority claim, the
//! share of runs where the outcome holds must exceed one half).

use serde::Serialize;

use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, median, values, Index, MIN_RUNS};

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
    /// Median run-level effect (for a rate outcome, the share of runs where it holds); absent
    /// below three runs.
    pub effect: Option<f64>,
    /// Direction of the human effect: +1 or −1 (+1 for a majority claim).
    pub human_sign: f64,
    /// Margin the effect must clear in the human direction (0 for a majority claim).
    pub margin: f64,
    /// Whether the effect clears the margin in the human direction (a majority: the share
    /// exceeds one half); absent below three runs.
    pub agrees: Option<bool>,
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
            let effect = if v.len() < MIN_RUNS {
                None
            } else if matches!(claim.kind, ClaimKind::Majority { .. }) {
                mean(&v)
            } else {
                median(&v)
            };
            let agrees = effect.map(|e| match &claim.kind {
                ClaimKind::Majority { .. } => e > 0.5,
                _ => e * sign >= margin,
            });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::ClaimTable;
    use crate::test_support::{runs, Place};

    #[test]
    fn fewer_than_three_runs_give_an_absent_effect() {
        let mut out = Vec::new();
        let pd = |m| Place::base(m, "f", "prisoners-dilemma", "baseline");
        runs(&mut out, pd("thin"), "defection_endgame_rise", &[0.3, 0.3]);
        runs(&mut out, pd("full"), "defection_endgame_rise", &[0.3, 0.2, 0.0]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let claims: Vec<Claim> =
            ClaimTable::shipped().claims.iter().filter(|c| c.id == "pd-endgame").cloned().collect();
        let rows = directional(&claims, &idx, &idx.models());
        let got: Vec<(&str, usize, Option<f64>, Option<bool>)> =
            rows.iter().map(|r| (r.model.as_str(), r.runs, r.effect, r.agrees)).collect();
        assert_eq!(got, [("full", 3, Some(0.2), Some(true)), ("thin", 2, None, None)]);
    }
}
