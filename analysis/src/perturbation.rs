//! The perturbation library per level: the range of cell means (Δmax) and the sign stability S
//! of each environment's canonical human effect ([`crate::claims::CanonicalEffect`]).
//!
//! The paper: "Δmax is the range of cell means over the baseline and the cells of one level,
//! and S is the share of those cells in which the canonical human effect keeps its sign. Both
//! are reported separately for representation-level and design-level cells." Both range over
//! the same set: the baseline and the level's cells, each resting on at least [`MIN_RUNS`] runs
//! ("every table entry that would rest on fewer than three runs is shown as absent"), so the
//! one-shot games' two-run cells enter neither. Δmax is read on the effect's own metric (the
//! cell means of the run-level changes, or the formation rate). Presentation and contamination
//! cells never enter either. Primary outcomes of environments without a canonical effect get
//! Δmax alone.

use serde::Serialize;

use crate::claims::CanonicalEffect;
use crate::common::{mean, values, Index, LEVELS, MIN_RUNS};
use crate::effect::{cell_effect, kept};

/// Robustness of one model's outcome across the baseline and the cells of one perturbation level.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerturbationRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// The canonical human effect S reads, in words; `-` for a primary outcome it does not
    /// read (Δmax only).
    pub claim: String,
    /// Environment of the outcome.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Metric of the outcome (the canonical effect's metric).
    pub metric: String,
    /// Perturbation level: `representation` or `design`.
    pub level: String,
    /// Cells of the level the model ran.
    pub cells: usize,
    /// Cells of the level with at least three runs, whose means enter Δmax beside the baseline's.
    pub cells_in_delta: usize,
    /// Range of the means over the baseline and the level's cells with at least three runs;
    /// absent when the baseline or every cell rests on fewer.
    pub delta_max: Option<f64>,
    /// Cells of the level with at least three runs, whose sign enters S beside the baseline's.
    pub cells_judged: usize,
    /// Share of the baseline and the judged cells in which the canonical effect keeps its sign;
    /// absent without a canonical effect, a baseline of three runs or a judged cell.
    pub sign_stability: Option<f64>,
}

/// S and Δmax of one canonical effect for one model at one level.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LevelSummary {
    /// Cells of the level the model ran.
    pub cells: usize,
    /// Cells with at least [`MIN_RUNS`] runs (entering Δmax and S).
    pub in_delta: usize,
    /// Δmax over the baseline and those cells.
    pub delta_max: Option<f64>,
    /// Cells with at least [`MIN_RUNS`] runs judged for S (the same as `in_delta`).
    pub judged: usize,
    /// Members of 𝒞_E (baseline included) judged, and those keeping the sign.
    pub members: usize,
    /// Members keeping the sign.
    pub kept: usize,
    /// S; absent without a baseline of [`MIN_RUNS`] runs or without a judged cell of the level.
    pub s: Option<f64>,
}

/// The range of `means`; absent with fewer than two.
fn range(means: &[f64]) -> Option<f64> {
    if means.len() < 2 {
        return None;
    }
    let (lo, hi) = means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| (a.min(*m), b.max(*m)));
    Some(hi - lo)
}

/// S and Δmax of `effect` for `model` over the baseline and the cells of `level`, each with
/// at least [`MIN_RUNS`] runs.
pub(crate) fn level_summary(effect: &CanonicalEffect, idx: &Index, model: &str, level: &str) -> LevelSummary {
    let cells = idx.cells_at(model, &effect.environment, &effect.arm, level);
    let mut out = LevelSummary { cells: cells.len(), ..LevelSummary::default() };
    let Some(base) = cell_effect(effect, idx, model, "baseline", "C0").filter(|b| b.runs >= MIN_RUNS) else {
        return out;
    };
    let mean_of =
        |cell: &str| mean(&values(&idx.select(model, &effect.environment, &effect.arm, cell, "C0"), &effect.metric));
    out.members = 1;
    out.kept = usize::from(kept(effect, base.value));
    let mut means: Vec<f64> = mean_of("baseline").into_iter().collect();
    for c in &cells {
        let Some(e) = cell_effect(effect, idx, model, c, "C0").filter(|e| e.runs >= MIN_RUNS) else { continue };
        out.judged += 1;
        out.in_delta += 1;
        out.members += 1;
        out.kept += usize::from(kept(effect, e.value));
        means.extend(mean_of(c));
    }
    if out.judged > 0 {
        out.delta_max = range(&means);
        out.s = Some(out.kept as f64 / out.members as f64);
    }
    out
}

/// Δmax alone, of a primary outcome no claim reads.
fn primary_delta(
    idx: &Index,
    model: &str,
    env: &str,
    arm: &str,
    metric: &str,
    level: &str,
) -> (usize, usize, Option<f64>) {
    let cells = idx.cells_at(model, env, arm, level);
    let mean_of = |cell: &str| {
        let v = values(&idx.select(model, env, arm, cell, "C0"), metric);
        (v.len() >= MIN_RUNS).then(|| mean(&v)).flatten()
    };
    let mut means: Vec<f64> = cells.iter().filter_map(|c| mean_of(c)).collect();
    let in_delta = means.len();
    let delta = match mean_of("baseline") {
        Some(b) if in_delta > 0 => {
            means.push(b);
            range(&means)
        }
        _ => None,
    };
    (cells.len(), in_delta, delta)
}

/// One row per canonical effect, model with baseline runs, and level with cells; then one per
/// primary outcome no canonical effect reads (Δmax only).
pub(crate) fn perturbation(
    effects: &[CanonicalEffect],
    idx: &Index,
    models: &[(String, String)],
) -> Vec<PerturbationRow> {
    let mut rows = Vec::new();
    for effect in effects {
        for (model, family) in models {
            if cell_effect(effect, idx, model, "baseline", "C0").is_none() {
                continue;
            }
            for level in LEVELS {
                let l = level_summary(effect, idx, model, level);
                if l.cells == 0 {
                    continue;
                }
                rows.push(PerturbationRow {
                    model: model.clone(),
                    family: family.clone(),
                    claim: effect.text.clone(),
                    environment: effect.environment.clone(),
                    arm: effect.arm.clone(),
                    metric: effect.metric.clone(),
                    level: level.into(),
                    cells: l.cells,
                    cells_in_delta: l.in_delta,
                    delta_max: l.delta_max,
                    cells_judged: l.judged,
                    sign_stability: l.s,
                });
            }
        }
    }
    for (env, arm, metric) in idx.headline() {
        if effects.iter().any(|e| e.environment == env && e.arm == arm && e.metric == metric) {
            continue;
        }
        for (model, family) in models {
            if values(&idx.select(model, env, arm, "baseline", "C0"), metric).is_empty() {
                continue;
            }
            for level in LEVELS {
                let (cells, in_delta, delta_max) = primary_delta(idx, model, env, arm, metric, level);
                if cells == 0 {
                    continue;
                }
                rows.push(PerturbationRow {
                    model: model.clone(),
                    family: family.clone(),
                    claim: "-".into(),
                    environment: env.into(),
                    arm: arm.into(),
                    metric: metric.into(),
                    level: level.into(),
                    cells,
                    cells_in_delta: in_delta,
                    delta_max,
                    cells_judged: 0,
                    sign_stability: None,
                });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{runs, Place};

    fn effect(env: &str) -> CanonicalEffect {
        crate::declared::tests::shipped().effect(env).expect("a canonical effect").clone()
    }

    #[test]
    fn s_and_delta_max_range_over_the_baseline_and_the_cells_of_one_level_with_three_runs() {
        let mut out = Vec::new();
        let at = |cell, level| Place::new("m", "fam", "public-goods", "baseline", cell, level, "C0");
        runs(&mut out, at("baseline", "baseline"), "contribution_change", &[-0.30, -0.20, -0.25]);
        // Two-run cells enter neither S nor Δmax, whatever their sign.
        runs(&mut out, at("rep-1", "representation"), "contribution_change", &[0.30, 0.30]);
        // Three-run cells enter both: one keeps the decline (median −0.1), one does not (median 0).
        runs(&mut out, at("rep-2", "representation"), "contribution_change", &[-0.10, -0.10, 0.05]);
        runs(&mut out, at("rep-3", "representation"), "contribution_change", &[0.0, 0.0, 0.3]);
        // A presentation cell and the probe enter neither.
        runs(&mut out, at("layout-inline", "presentation"), "contribution_change", &[0.5, 0.5, 0.5]);
        runs(&mut out, at("recognition-probe", "contamination"), "contribution_change", &[0.5, 0.5, 0.5]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let l = level_summary(&effect("public-goods"), &idx, "m", "representation");
        // 𝒞_E = baseline, rep-2, rep-3: the decline keeps its sign in two of three.
        assert_eq!((l.cells, l.judged, l.members, l.kept), (3, 2, 3, 2));
        assert!((l.s.expect("S") - 2.0 / 3.0).abs() < 1e-12);
        // Δmax over the cell means: baseline −0.25, rep-2 −0.05, rep-3 0.10.
        assert!((l.delta_max.expect("Δmax") - 0.35).abs() < 1e-12);
        let rows = perturbation(&[effect("public-goods")], &idx, &idx.models());
        assert_eq!(rows.len(), 1, "no design cells, no presentation level: {rows:?}");
        assert_eq!((rows[0].cells_judged, rows[0].metric.as_str()), (2, "contribution_change"));
    }

    #[test]
    fn a_thin_baseline_or_only_two_run_cells_give_no_s() {
        let mut out = Vec::new();
        let at = |cell, level| Place::new("m", "fam", "naming-game", "baseline", cell, level, "C0");
        runs(&mut out, at("baseline", "baseline"), "convention", &[1.0, 1.0]);
        runs(&mut out, at("des-1", "design"), "convention", &[1.0, 1.0, 1.0]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        assert_eq!(level_summary(&effect("naming-game"), &idx, "m", "design").s, None, "two baseline runs");
        let mut out = Vec::new();
        runs(&mut out, at("baseline", "baseline"), "convention", &[1.0, 1.0, 0.0]);
        runs(&mut out, at("des-1", "design"), "convention", &[1.0, 1.0]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let l = level_summary(&effect("naming-game"), &idx, "m", "design");
        assert_eq!((l.cells, l.judged, l.s), (1, 0, None), "the one design cell holds two runs");
    }

    #[test]
    fn a_rate_keeps_its_sign_in_a_majority_of_runs_and_not_at_one_half() {
        let mut out = Vec::new();
        let at = |cell, level| Place::new("m", "fam", "naming-game", "baseline", cell, level, "C0");
        runs(&mut out, at("baseline", "baseline"), "convention", &[1.0, 1.0, 0.0]);
        runs(&mut out, at("des-1", "design"), "convention", &[1.0, 0.0, 1.0, 0.0]);
        runs(&mut out, at("des-2", "design"), "convention", &[0.0, 0.0, 0.0]);
        runs(&mut out, at("des-3", "design"), "convention", &[1.0, 1.0, 1.0]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let l = level_summary(&effect("naming-game"), &idx, "m", "design");
        assert_eq!((l.members, l.kept), (4, 2), "baseline and des-3 form in a majority; des-1 in half");
    }
}
