//! The perturbation library per level: the range of cell means (Δmax) and the sign stability S
//! of the human effect across the level's cells.

use serde::Serialize;

use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, median, values, Index, PRIMARY};
use crate::outcomes::RunOutcome;

/// The perturbation levels summarised, in order.
pub(crate) const LEVELS: [&str; 2] = ["representation", "design"];

/// Robustness of one model's primary outcome across the cells of one perturbation level.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerturbationRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Environment of the primary outcome.
    pub environment: String,
    /// Metric of the primary outcome.
    pub metric: String,
    /// Perturbation level: `representation` or `design`.
    pub level: String,
    /// Cells of the level the model ran.
    pub cells: usize,
    /// Range of cell means over the baseline and the level's cells.
    pub delta_max: f64,
    /// Share of the level's cells in which the human effect keeps its sign (when the
    /// environment has one).
    pub sign_stability: Option<f64>,
}

/// One row per primary outcome, model with baseline runs, and level with cells.
pub(crate) fn perturbation(claims: &[Claim], idx: &Index, models: &[(String, String)]) -> Vec<PerturbationRow> {
    let mut perturbation = Vec::new();
    for (env, arm, metric) in PRIMARY {
        let effect = claims.iter().find(|c| {
            c.environment == env
                && c.arm == arm
                && matches!(c.kind, ClaimKind::Direction { .. } | ClaimKind::Majority { .. })
        });
        for (model, _) in models {
            let base = idx.select(model, env, arm, "baseline", "C0");
            let Some(bm) = mean(&values(&base, metric)) else { continue };
            for level in LEVELS {
                let cells: Vec<String> =
                    idx.cells(model, env, arm).into_iter().filter(|(_, l)| l == level).map(|(c, _)| c).collect();
                if cells.is_empty() {
                    continue;
                }
                let mut means = vec![bm];
                let mut kept = 0usize;
                let mut judged = 0usize;
                for c in &cells {
                    let runs = idx.select(model, env, arm, c, "C0");
                    if let Some(m) = mean(&values(&runs, metric)) {
                        means.push(m);
                    }
                    if let Some(claim) = effect {
                        if let Some(h) = sign_kept(claim, &runs) {
                            judged += 1;
                            kept += usize::from(h);
                        }
                    }
                }
                let (lo, hi) =
                    means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| (a.min(*m), b.max(*m)));
                perturbation.push(PerturbationRow {
                    model: model.clone(),
                    environment: env.into(),
                    metric: metric.into(),
                    level: level.into(),
                    cells: cells.len(),
                    delta_max: hi - lo,
                    sign_stability: (judged > 0).then(|| kept as f64 / judged as f64),
                });
            }
        }
    }
    perturbation
}

/// Whether the human effect keeps its sign in these runs (direction and majority claims).
pub(crate) fn sign_kept(claim: &Claim, runs: &[&RunOutcome]) -> Option<bool> {
    let v = values(runs, &claim.metric);
    match &claim.kind {
        ClaimKind::Direction { sign, .. } => median(&v).map(|m| m * sign > 0.0),
        ClaimKind::Majority { .. } => mean(&v).map(|m| m > 0.5),
        _ => None,
    }
}
