//! Punishment in the public-goods game: across models, Spearman's ρ between punishment spending
//! and the change in contributions; and per model, the punishment effect on final-round
//! contributions beside the arm contrast of the audit grid (family `punishment`).

use serde::Serialize;

use crate::common::{mean, values, Index};
use crate::contrasts::ContrastRow;
use crate::outcomes::RunOutcome;
use crate::stats;

/// Spearman's ρ across models between punishment spending and the change in contributions.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PunishmentRow {
    /// Models that ran the punishment arm.
    pub models: usize,
    /// (model, mean punishment points per agent and round, mean contribution change).
    pub points: Vec<(String, f64, f64)>,
    /// Spearman's ρ across models; none when it cannot be computed.
    pub rho: Option<f64>,
    /// Two-sided p value of ρ; none when ρ cannot be computed.
    pub p: Option<f64>,
    /// How ρ was computed, or why it was not.
    pub note: String,
}

/// The punishment effect on final-round contributions, per model: the baseline arm beside
/// the punishment arm (mean share of the endowment with a 95 % t interval), and the arm
/// contrast's Cliff's δ and Holm-adjusted p (family `punishment`).
#[derive(Clone, Debug, Serialize)]
pub struct PunishmentEffectRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Baseline-arm runs with a final-round contribution.
    pub runs_without: usize,
    /// Punishment-arm runs with a final-round contribution.
    pub runs_with: usize,
    /// Final-round contribution in the baseline arm (share of the endowment).
    pub without: MeanInterval,
    /// Final-round contribution in the punishment arm (share of the endowment).
    pub with: MeanInterval,
    /// Cliff's δ of the arm contrast, punishment against baseline.
    pub cliffs_delta: Option<f64>,
    /// Holm-adjusted p value of the arm contrast within the `punishment` family.
    pub p_holm: Option<f64>,
    /// Whether the arm contrast is significant at 0.05 after Holm.
    pub significant: bool,
    /// Why the arm contrast carries no test, if it does not.
    pub excluded: Option<String>,
}

/// A mean with its two-sided 95 % Student-t interval (absent with fewer than two values).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MeanInterval {
    /// The sample mean.
    pub mean: f64,
    /// Lower end of the interval; none with fewer than two values.
    pub low: Option<f64>,
    /// Upper end of the interval; none with fewer than two values.
    pub high: Option<f64>,
}

impl MeanInterval {
    /// `None` for an empty sample.
    pub fn of(v: &[f64]) -> Option<MeanInterval> {
        match stats::t_interval(v, 0.95) {
            Ok((mean, low, high)) => Some(MeanInterval { mean, low: Some(low), high: Some(high) }),
            Err(_) => mean(v).map(|mean| MeanInterval { mean, low: None, high: None }),
        }
    }
}

/// Runs of a model's public-goods arm at the baseline cell under C0.
fn arm<'a>(idx: &Index<'a>, model: &str, arm: &str) -> Vec<&'a RunOutcome> {
    idx.select(model, "public-goods", arm, "baseline", "C0")
}

/// At most one row: Spearman across the models that ran the punishment arm.
pub(crate) fn punishment(idx: &Index, models: &[(String, String)]) -> Vec<PunishmentRow> {
    let mut punishment = Vec::new();
    let mut pts = Vec::new();
    for (model, _) in models {
        let runs = arm(idx, model, "punishment");
        if let (Some(p), Some(c)) =
            (mean(&values(&runs, "punishment_points")), mean(&values(&runs, "contribution_change")))
        {
            pts.push((model.clone(), p, c));
        }
    }
    if !pts.is_empty() {
        let xs: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.2).collect();
        let sp = stats::spearman(&xs, &ys);
        let note = match &sp {
            Ok(_) => "Spearman's rho across models".to_string(),
            Err(e) => format!("not computed: {e} (one value per model)"),
        };
        punishment.push(PunishmentRow {
            models: pts.len(),
            rho: sp.as_ref().ok().map(|s| s.rho),
            p: sp.as_ref().ok().map(|s| s.p),
            points: pts,
            note,
        });
    }
    punishment
}

/// One row per model with final-round contributions in both arms, with the arm contrast (after
/// Holm) from `contrasts` beside them.
pub(crate) fn punishment_effect(
    idx: &Index,
    models: &[(String, String)],
    contrasts: &[ContrastRow],
) -> Vec<PunishmentEffectRow> {
    let mut punishment_effect = Vec::new();
    for (model, family) in models {
        let b = values(&arm(idx, model, "baseline"), "contribution_last");
        let p = values(&arm(idx, model, "punishment"), "contribution_last");
        let (Some(without), Some(with)) = (MeanInterval::of(&b), MeanInterval::of(&p)) else { continue };
        let c = contrasts.iter().find(|c| c.family_of_tests == "punishment" && &c.model == model);
        punishment_effect.push(PunishmentEffectRow {
            model: model.clone(),
            family: family.clone(),
            runs_without: b.len(),
            runs_with: p.len(),
            without,
            with,
            cliffs_delta: c.and_then(|c| c.cliffs_delta),
            p_holm: c.and_then(|c| c.p_holm),
            significant: c.is_some_and(|c| c.significant),
            excluded: c.and_then(|c| c.excluded.clone()),
        });
    }
    punishment_effect
}
