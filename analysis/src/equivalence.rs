//! Equivalence with human anchors: TOST at the canonical baseline, for every claim with a point
//! anchor and a margin.

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, values, Index};
use crate::stats;

/// TOST equivalence of one model with one point anchor at the canonical baseline.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EquivalenceRow {
    /// The model (roster) whose runs are tested.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Environment of the claim.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// The claim's run-level metric.
    pub metric: String,
    /// The anchor's point value θ.
    pub anchor: f64,
    /// Equivalence margin ε, fixed in advance in the anchor table.
    pub margin: f64,
    /// Baseline runs of the model with the metric.
    pub runs: usize,
    /// Mean of the metric over the runs.
    pub estimate: Option<f64>,
    /// Lower end of the 90 % t-interval of the mean; none below three runs.
    pub ci_low: Option<f64>,
    /// Upper end of the 90 % t-interval of the mean; none below three runs.
    pub ci_high: Option<f64>,
    /// TOST p value, the larger of the two one-sided p values; none below three runs.
    pub p: Option<f64>,
    /// `equivalent`, `not equivalent`, or `absent (n < 3)`.
    pub verdict: String,
}

/// One row per equivalence claim and model with baseline runs.
pub(crate) fn equivalence(
    claims: &[Claim],
    anchors: &AnchorTable,
    idx: &Index,
    models: &[(String, String)],
) -> Vec<EquivalenceRow> {
    let mut equivalence = Vec::new();
    for claim in claims.iter().filter(|c| matches!(c.kind, ClaimKind::Equivalence { .. })) {
        let Some(anchor) = anchors.get(claim.kind.anchor()) else { continue };
        let (AnchorValue::Point(theta), Some(margin)) = (&anchor.value, anchor.margin) else { continue };
        for (model, family) in models {
            let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
            let v = values(&runs, &claim.metric);
            if v.is_empty() {
                continue;
            }
            let t = stats::tost(&v, *theta, margin, 0.05).ok();
            equivalence.push(EquivalenceRow {
                model: model.clone(),
                family: family.clone(),
                environment: claim.environment.clone(),
                arm: claim.arm.clone(),
                metric: claim.metric.clone(),
                anchor: *theta,
                margin,
                runs: v.len(),
                estimate: mean(&v),
                ci_low: t.as_ref().map(|t| t.ci_low + theta),
                ci_high: t.as_ref().map(|t| t.ci_high + theta),
                p: t.as_ref().map(|t| t.p),
                verdict: match &t {
                    Some(t) if t.equivalent => "equivalent".into(),
                    Some(_) => "not equivalent".into(),
                    None => "absent (n < 3)".into(),
                },
            });
        }
    }
    equivalence
}
