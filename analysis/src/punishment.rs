//! Punishment in the public-goods game: across models, Spearman's ρ between punishment spending
//! and the change in contributions; and per model, the punishment effect on final-round
//! contributions beside the arm contrast of the audit grid (family `punishment`).

use serde::Serialize;

use crate::common::{is_classical, left_out_aside, mean, values, Index, Options, MIN_RUNS};
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

/// At most one row: Spearman across the models that ran the punishment arm with at least three
/// runs (the classical rosters only when `options` asks for them).
pub(crate) fn punishment(idx: &Index, models: &[(String, String)], options: &Options) -> Vec<PunishmentRow> {
    let mut punishment = Vec::new();
    let mut pts = Vec::new();
    let (mut ran, mut kept_out, mut thin) = (false, 0usize, 0usize);
    for (model, family) in models {
        let runs = arm(idx, model, "punishment");
        let (p, c) = (values(&runs, "punishment_points"), values(&runs, "contribution_change"));
        if p.is_empty() || c.is_empty() {
            continue;
        }
        ran = true;
        if is_classical(family) && !options.classical_in_cross_model {
            kept_out += 1;
        } else if p.len() < MIN_RUNS || c.len() < MIN_RUNS {
            thin += 1;
        } else if let (Some(p), Some(c)) = (mean(&p), mean(&c)) {
            pts.push((model.clone(), p, c));
        }
    }
    let aside = left_out_aside(kept_out, thin);
    if pts.is_empty() && ran {
        punishment.push(PunishmentRow {
            models: 0,
            note: format!("no model to correlate{aside}"),
            ..PunishmentRow::default()
        });
    }
    if !pts.is_empty() {
        let xs: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.2).collect();
        let sp = stats::spearman(&xs, &ys);
        let note = match &sp {
            Ok(_) => "Spearman's rho across models".to_string(),
            Err(e) => format!("not computed: {e} (one value per model)"),
        } + &aside;
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

/// One row per model with final-round contributions in at least three runs of both arms, with
/// the arm contrast (after Holm) from `contrasts` beside them.
pub(crate) fn punishment_effect(
    idx: &Index,
    models: &[(String, String)],
    contrasts: &[ContrastRow],
) -> Vec<PunishmentEffectRow> {
    let mut punishment_effect = Vec::new();
    for (model, family) in models {
        let b = values(&arm(idx, model, "baseline"), "contribution_last");
        let p = values(&arm(idx, model, "punishment"), "contribution_last");
        if b.len() < MIN_RUNS || p.len() < MIN_RUNS {
            continue;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, Place};

    #[test]
    fn spearman_leaves_classical_rosters_and_thin_models_out_unless_asked_for() {
        let mut out = Vec::new();
        let at = |m, f| Place::base(m, f, "public-goods", "punishment");
        for (m, f, p, c, n) in [
            ("a", "fa", 1.0, -0.1, 3),
            ("b", "fb", 2.0, -0.2, 3),
            ("c", "fc", 3.0, -0.3, 3),
            ("thin", "fd", 4.0, -0.4, 2),
            ("cc", "classical", 0.5, 0.0, 3),
        ] {
            for _ in 0..n {
                run(&mut out, at(m, f), &[("punishment_points", p), ("contribution_change", c)]);
            }
        }
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = punishment(&idx, &idx.models(), &Options::default());
        assert_eq!(rows[0].models, 3);
        assert!((rows[0].rho.expect("rho") + 1.0).abs() < 1e-12);
        assert!(
            rows[0].note.contains("1 classical roster(s) kept out") && rows[0].note.contains("1 model(s) with fewer")
        );
        let rows = punishment(&idx, &idx.models(), &Options { classical_in_cross_model: true });
        assert_eq!(rows[0].models, 4);
    }

    #[test]
    fn the_effect_of_a_model_with_fewer_than_three_runs_in_an_arm_is_absent() {
        let mut out = Vec::new();
        let at = |m, arm| Place::base(m, "f", "public-goods", arm);
        for (m, n) in [("full", 3), ("thin", 2)] {
            for i in 0..n {
                run(&mut out, at(m, "baseline"), &[("contribution_last", 0.1 * f64::from(i))]);
            }
            for i in 0..3 {
                run(&mut out, at(m, "punishment"), &[("contribution_last", 0.5 + 0.1 * f64::from(i))]);
            }
        }
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let models = idx.models();
        let contrasts = crate::contrasts::contrasts(&idx, &models);
        let rows = punishment_effect(&idx, &models, &contrasts);
        assert_eq!(rows.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(), ["full"]);
    }
}
