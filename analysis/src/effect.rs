//! The canonical human effect of a claim in one cell: its statistic (the mean of the effect's
//! metric over the cell's runs; for an arm contrast, the difference of the two arms' means) and
//! whether it lies on the human side of the reference. Descriptive: it is read from cell means
//! and works in the one-shot games' two-run cells.

use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, values, Index};

/// The effect's statistic in one cell and the runs it rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CellEffect {
    /// The statistic: a mean, or a difference of two arms' means.
    pub value: f64,
    /// Runs it rests on (for an arm contrast, the smaller arm's).
    pub runs: usize,
}

/// The effect's statistic for `model` in `cell` under `variant`; `None` when the cell holds no
/// run with the metric, or when the claim's effect is not read per cell (a critical mass).
pub(crate) fn cell_effect(claim: &Claim, idx: &Index, model: &str, cell: &str, variant: &str) -> Option<CellEffect> {
    let metric = claim.effect_metric();
    let arm_values = |arm: &str| values(&idx.select(model, &claim.environment, arm, cell, variant), metric);
    match &claim.kind {
        ClaimKind::CriticalMass { .. } => None,
        ClaimKind::ArmContrast { versus, .. } => {
            let (a, b) = (arm_values(&claim.arm), arm_values(versus));
            Some(CellEffect { value: mean(&a)? - mean(&b)?, runs: a.len().min(b.len()) })
        }
        _ => {
            let v = arm_values(&claim.arm);
            Some(CellEffect { value: mean(&v)?, runs: v.len() })
        }
    }
}

/// Whether `value` lies on the human side of the reference: sign × (value − reference) > 0.
pub(crate) fn kept(claim: &Claim, value: f64) -> bool {
    claim.effect.sign * (value - claim.effect.reference) > 0.0
}

/// Whether `value` lies on the other side of the reference: sign × (value − reference) < 0.
pub(crate) fn reversed(claim: &Claim, value: f64) -> bool {
    claim.effect.sign * (value - claim.effect.reference) < 0.0
}
