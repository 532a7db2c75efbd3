//! The 11–20 money-request game: per model, the normalised Wasserstein distance of the pooled
//! choice distribution to the published one, with a seeded bootstrap 95 % interval over runs,
//! and, for each distance claim, whether the interval's upper end lies below the claim's
//! largest distance (the paper states no threshold: Agora's choice, on the claim).

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind};
use crate::common::{Index, MIN_RUNS};
use crate::stats;

/// Resamples and seed of the bootstrap.
const RESAMPLES: usize = 2000;
const SEED: u64 = 20260815;

/// The anchor the distance table reads when no distance claim names one.
const DEFAULT_ANCHOR: &str = "money-request-distribution";

/// Distance of one model's pooled 11–20 choices to the published distribution.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WassersteinRow {
    /// Id of the distance claim read (`-` when the table runs without one).
    pub claim: String,
    /// The model (roster) whose runs are pooled.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Baseline runs holding choices.
    pub runs: usize,
    /// Normalised Wasserstein distance of the pooled choices; absent below three runs.
    pub distance: Option<f64>,
    /// Lower end of the bootstrap 95 % interval over runs; absent below three runs.
    pub ci_low: Option<f64>,
    /// Upper end of the bootstrap 95 % interval over runs; absent below three runs.
    pub ci_high: Option<f64>,
    /// Largest distance that matches (Agora's choice, on the claim); absent without a claim.
    pub max_distance: Option<f64>,
    /// `matches` (upper end below the largest distance), `does not match`, or why absent.
    pub verdict: String,
}

/// (environment, arm, anchor id, metric prefix, largest distance) of each distance claim, or
/// the 11–20 game's defaults when the claims hold none.
fn specs(claims: &[Claim]) -> Vec<(String, String, String, String, String, Option<f64>)> {
    let mut out: Vec<_> = claims
        .iter()
        .filter_map(|c| match &c.kind {
            ClaimKind::Distance { anchor, histogram, max_distance } => Some((
                c.id.clone(),
                c.environment.clone(),
                c.arm.clone(),
                anchor.clone(),
                histogram.clone(),
                Some(*max_distance),
            )),
            _ => None,
        })
        .collect();
    if out.is_empty() {
        out.push((
            "-".into(),
            "money-request".into(),
            "baseline".into(),
            DEFAULT_ANCHOR.into(),
            "choice_".into(),
            None,
        ));
    }
    out
}

/// The row of one model for one distance spec; `None` when no baseline run holds choices.
#[expect(clippy::too_many_arguments, reason = "one argument per part of the spec and the model")]
fn row(
    anchors: &AnchorTable,
    idx: &Index,
    claim: &str,
    env: &str,
    arm: &str,
    anchor: &str,
    prefix: &str,
    max: Option<f64>,
    model: &str,
    family: &str,
) -> Option<WassersteinRow> {
    let AnchorValue::Distribution { labels, shares } = &anchors.get(anchor)?.value else { return None };
    let runs = idx.select(model, env, arm, "baseline", "C0");
    let counts: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| labels.iter().map(|l| r.metrics.get(&format!("{prefix}{l}")).copied().unwrap_or(0.0)).collect())
        .filter(|c: &Vec<f64>| c.iter().sum::<f64>() > 0.0)
        .collect();
    if counts.is_empty() {
        return None;
    }
    let boot = if counts.len() >= MIN_RUNS {
        stats::wasserstein_bootstrap(&counts, shares, RESAMPLES, 0.95, SEED).ok()
    } else {
        None
    };
    let verdict = match (&boot, max) {
        (None, _) if counts.len() < MIN_RUNS => "absent (n < 3)".to_string(),
        (None, _) => "absent (no distance)".into(),
        (Some(_), None) => "-".into(),
        (Some((_, _, hi)), Some(m)) if *hi < m => "matches".into(),
        (Some(_), Some(_)) => "does not match".into(),
    };
    Some(WassersteinRow {
        claim: claim.into(),
        model: model.into(),
        family: family.into(),
        runs: counts.len(),
        distance: boot.map(|b| b.0),
        ci_low: boot.map(|b| b.1),
        ci_high: boot.map(|b| b.2),
        max_distance: max,
        verdict,
    })
}

/// One row per distance claim and model with baseline runs holding choices.
pub(crate) fn wasserstein(
    claims: &[Claim],
    anchors: &AnchorTable,
    idx: &Index,
    models: &[(String, String)],
) -> Vec<WassersteinRow> {
    let mut rows = Vec::new();
    for (claim, env, arm, anchor, prefix, max) in specs(claims) {
        for (model, family) in models {
            rows.extend(row(anchors, idx, &claim, &env, &arm, &anchor, &prefix, max, model, family));
        }
    }
    rows
}

/// The distance claim's row for one model (Tier 3 of the ladder).
pub(crate) fn claim_row(claim: &Claim, anchors: &AnchorTable, idx: &Index, model: &str) -> Option<WassersteinRow> {
    let ClaimKind::Distance { anchor, histogram, max_distance } = &claim.kind else { return None };
    row(anchors, idx, &claim.id, &claim.environment, &claim.arm, anchor, histogram, Some(*max_distance), model, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::ClaimTable;
    use crate::test_support::{run, Place};

    fn claim() -> Claim {
        ClaimTable::shipped().claims.iter().find(|c| c.id == "money-request-distance").expect("claim").clone()
    }

    /// A run whose requests follow the published distribution (shares per request).
    fn human_run(out: &mut Vec<crate::RunOutcome>, model: &str) {
        let shares = [0.04, 0.00, 0.03, 0.06, 0.01, 0.06, 0.32, 0.30, 0.12, 0.06];
        let names: Vec<String> = (11..=20).map(|k| format!("choice_{k}")).collect();
        let metrics: Vec<(&str, f64)> = names.iter().map(String::as_str).zip(shares).collect();
        run(out, Place::base(model, "f", "money-request", "baseline"), &metrics);
    }

    #[test]
    fn the_claim_matches_when_the_upper_end_lies_below_its_largest_distance() {
        let mut out = Vec::new();
        for _ in 0..3 {
            human_run(&mut out, "near");
        }
        for _ in 0..3 {
            run(&mut out, Place::base("far", "f", "money-request", "baseline"), &[("choice_20", 1.0)]);
        }
        human_run(&mut out, "thin");
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = wasserstein(&[claim()], AnchorTable::shipped(), &idx, &idx.models());
        let got: Vec<(&str, usize, &str)> =
            rows.iter().map(|r| (r.model.as_str(), r.runs, r.verdict.as_str())).collect();
        assert_eq!(got, [("far", 3, "does not match"), ("near", 3, "matches"), ("thin", 1, "absent (n < 3)")]);
        assert!(rows[1].distance.expect("distance") < 1e-12);
        assert_eq!(rows[2].distance, None);
        assert_eq!(rows[0].max_distance, Some(0.10));
    }
}
