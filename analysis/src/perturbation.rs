//! The perturbation library per level: the range of cell means (Δmax) and the sign stability S
//! of each claim's canonical human effect.
//!
//! Both range over the baseline and the cells of one level (representation or design; the
//! paper's 𝒞_E): S is the share of them in which the human effect keeps its sign, read from
//! cell means in every cell with at least [`SIGN_MIN_RUNS`] runs (the one-shot games' two-run
//! cells included); Δmax is the range of the means resting on at least [`MIN_RUNS`] runs, as
//! every reported value. Presentation and contamination cells never enter either.

use serde::Serialize;

use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, values, Index, LEVELS, MIN_RUNS, PRIMARY, SIGN_MIN_RUNS};
use crate::effect::{cell_effect, kept};

/// Robustness of one model's outcome across the baseline and the cells of one perturbation level.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerturbationRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// The claim whose human effect S reads; `-` for a primary outcome no claim reads (Δmax only).
    pub claim: String,
    /// Environment of the outcome.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Metric of the outcome (the claim's effect metric).
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
    /// Cells of the level with at least two runs, whose sign enters S beside the baseline's.
    pub cells_judged: usize,
    /// Share of the baseline and the judged cells in which the human effect keeps its sign;
    /// absent without a claim or without a judged cell.
    pub sign_stability: Option<f64>,
}

/// S and Δmax of one claim for one model at one level.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LevelSummary {
    /// Cells of the level the model ran.
    pub cells: usize,
    /// Cells with at least [`MIN_RUNS`] runs (entering Δmax).
    pub in_delta: usize,
    /// Δmax over the baseline and those cells.
    pub delta_max: Option<f64>,
    /// Cells with at least [`SIGN_MIN_RUNS`] runs (entering S).
    pub judged: usize,
    /// Members of 𝒞_E (baseline included) judged, and those keeping the sign.
    pub members: usize,
    /// Members keeping the sign.
    pub kept: usize,
    /// S; absent without a judged cell of the level.
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

/// S and Δmax of `claim`'s human effect for `model` over the baseline and the cells of `level`.
pub(crate) fn level_summary(claim: &Claim, idx: &Index, model: &str, level: &str) -> LevelSummary {
    let cells = idx.cells_at(model, &claim.environment, &claim.arm, level);
    let base = cell_effect(claim, idx, model, "baseline", "C0");
    let mut out = LevelSummary { cells: cells.len(), ..LevelSummary::default() };
    let mut means = Vec::new();
    let judge = |e: &crate::effect::CellEffect, out: &mut LevelSummary| {
        out.members += 1;
        out.kept += usize::from(kept(claim, e.value));
    };
    if let Some(b) = base.filter(|b| b.runs >= SIGN_MIN_RUNS) {
        judge(&b, &mut out);
    }
    for c in &cells {
        let Some(e) = cell_effect(claim, idx, model, c, "C0") else { continue };
        if e.runs >= SIGN_MIN_RUNS {
            out.judged += 1;
            judge(&e, &mut out);
        }
        if e.runs >= MIN_RUNS {
            out.in_delta += 1;
            means.push(e.value);
        }
    }
    if let Some(b) = base.filter(|b| b.runs >= MIN_RUNS) {
        if out.in_delta > 0 {
            means.push(b.value);
            out.delta_max = range(&means);
        }
    }
    out.s = (out.judged > 0).then(|| out.kept as f64 / out.members as f64);
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

/// One row per claim read per cell (every kind but the critical mass), model with baseline
/// runs, and level with cells; then one per primary outcome no claim reads.
pub(crate) fn perturbation(claims: &[Claim], idx: &Index, models: &[(String, String)]) -> Vec<PerturbationRow> {
    let mut rows = Vec::new();
    for claim in claims.iter().filter(|c| !matches!(c.kind, ClaimKind::CriticalMass { .. })) {
        for (model, family) in models {
            if cell_effect(claim, idx, model, "baseline", "C0").is_none() {
                continue;
            }
            for level in LEVELS {
                let l = level_summary(claim, idx, model, level);
                if l.cells == 0 {
                    continue;
                }
                rows.push(PerturbationRow {
                    model: model.clone(),
                    family: family.clone(),
                    claim: claim.id.clone(),
                    environment: claim.environment.clone(),
                    arm: claim.arm.clone(),
                    metric: claim.effect_metric().into(),
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
    for (env, arm, metric) in PRIMARY {
        if claims.iter().any(|c| c.environment == env && c.arm == arm && c.effect_metric() == metric) {
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
    use crate::claims::ClaimTable;
    use crate::test_support::{runs, Place};

    fn claim(id: &str) -> Claim {
        ClaimTable::shipped().claims.iter().find(|c| c.id == id).expect("claim").clone()
    }

    #[test]
    fn s_and_delta_max_range_over_the_baseline_and_the_cells_of_one_level() {
        let mut out = Vec::new();
        let at = |cell, level| Place::new("m", "fam", "bargaining", "ultimatum", cell, level, "C0");
        runs(&mut out, at("baseline", "baseline"), "offer", &[0.40, 0.40, 0.40]);
        // Two-run cells: their sign enters S, their mean does not enter Δmax.
        runs(&mut out, at("rep-1", "representation"), "offer", &[0.30, 0.30]);
        runs(&mut out, at("rep-2", "representation"), "offer", &[0.0, 0.0]);
        // A three-run cell enters both.
        runs(&mut out, at("rep-3", "representation"), "offer", &[0.10, 0.10, 0.10]);
        // A presentation cell and the probe enter neither.
        runs(&mut out, at("layout-inline", "presentation"), "offer", &[0.0, 0.0, 0.0]);
        runs(&mut out, at("recognition-probe", "contamination"), "offer", &[0.0, 0.0, 0.0]);
        let idx = Index::new(&out);
        let l = level_summary(&claim("ultimatum-offer"), &idx, "m", "representation");
        // 𝒞_E = baseline, rep-1, rep-2, rep-3: offers above zero in three of four.
        assert_eq!((l.cells, l.judged, l.members, l.kept), (3, 3, 4, 3));
        assert_eq!(l.s, Some(0.75));
        // Δmax over the baseline (0.40) and rep-3 (0.10) only.
        assert_eq!(l.in_delta, 1);
        assert!((l.delta_max.expect("Δmax") - 0.30).abs() < 1e-12);
        let rows = perturbation(&[claim("ultimatum-offer")], &idx, &idx.models());
        assert_eq!(rows.len(), 1, "no design cells, no presentation level: {rows:?}");
        assert_eq!((rows[0].cells_judged, rows[0].sign_stability), (3, Some(0.75)));
    }

    #[test]
    fn one_run_cells_are_not_judged_and_a_thin_baseline_gives_no_delta_max() {
        let mut out = Vec::new();
        let at = |cell, level| Place::new("m", "fam", "bargaining", "dictator", cell, level, "C0");
        runs(&mut out, at("baseline", "baseline"), "giving", &[0.2, 0.3]);
        runs(&mut out, at("des-1", "design"), "giving", &[0.1]);
        runs(&mut out, at("des-2", "design"), "giving", &[0.1, 0.2, 0.3]);
        let idx = Index::new(&out);
        let l = level_summary(&claim("dictator-giving"), &idx, "m", "design");
        assert_eq!((l.judged, l.members, l.s), (1, 2, Some(1.0)));
        assert_eq!(l.delta_max, None, "the baseline rests on two runs");
    }
}
