//! Equivalence with human anchors: TOST at the canonical baseline (the 90 % interval of the
//! mean inside the margin), for every claim that matches a value: a point anchor at its margin
//! (the anchor's, fixed in advance, or the claim's where the paper deposited none), a range
//! (its midpoint, at half its width: the interval inside the range), and each share of a
//! type-share claim. An anchor whose value is not on record gives the verdict `anchor value not
//! on record` rather than a test.

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind};
use crate::common::{mean, values, Index, MIN_RUNS};
use crate::stats;

/// Verdict of a test against an anchor whose value is not on record.
pub const NOT_ON_RECORD: &str = "anchor value not on record";

/// TOST equivalence of one model with one anchor value at the canonical baseline.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EquivalenceRow {
    /// Id of the claim tested.
    pub claim: String,
    /// The model (roster) whose runs are tested.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Environment of the claim.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// The run-level metric tested.
    pub metric: String,
    /// The anchor's value θ (a range's midpoint); NaN when the value is not on record.
    pub anchor: f64,
    /// Equivalence margin ε (a range's half-width).
    pub margin: f64,
    /// Baseline runs of the model with the metric.
    pub runs: usize,
    /// Mean of the metric over the runs; absent below three runs.
    pub mean: Option<f64>,
    /// The mean as tested against the anchor; absent below three runs or without an anchor value.
    pub estimate: Option<f64>,
    /// Lower end of the 90 % t-interval of the mean; absent when no test is made.
    pub ci_low: Option<f64>,
    /// Upper end of the 90 % t-interval of the mean; absent when no test is made.
    pub ci_high: Option<f64>,
    /// TOST p value, the larger of the two one-sided p values; absent when no test is made.
    pub p: Option<f64>,
    /// `equivalent`, `not equivalent`, `absent (n < 3)` or `anchor value not on record`.
    pub verdict: String,
}

/// One value a claim is tested against: (metric, θ or none when not on record, margin).
pub(crate) type Target = (String, Option<f64>, f64);

/// The values a claim matches by TOST; empty for a claim that does not match a value by TOST
/// (a direction, a majority, a critical mass, a distance).
pub(crate) fn targets(claim: &Claim, anchors: &AnchorTable) -> Vec<Target> {
    let Some(anchor) = anchors.get(claim.kind.anchor()) else { return Vec::new() };
    match (&claim.kind, &anchor.value) {
        (ClaimKind::Equivalence { .. }, value) => {
            let Some(margin) = claim.margin(anchors) else { return Vec::new() };
            let theta = match value {
                AnchorValue::Point(x) => Some(*x),
                _ => None,
            };
            vec![(claim.metric.clone(), theta, margin)]
        }
        (ClaimKind::Range { .. } | ClaimKind::ArmContrast { .. }, AnchorValue::Range { low, high }) => {
            vec![(claim.metric.clone(), Some((low + high) / 2.0), (high - low) / 2.0)]
        }
        (ClaimKind::TypeShares { shares, margin, .. }, AnchorValue::Distribution { labels, shares: human }) => shares
            .iter()
            .filter_map(|s| {
                let i = labels.iter().position(|l| *l == s.label)?;
                Some((s.metric.clone(), Some(human[i]), *margin))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The row of one model against one target; `None` when no run records the metric.
fn row(claim: &Claim, model: &str, family: &str, idx: &Index, target: &Target) -> Option<EquivalenceRow> {
    let (metric, theta, margin) = target;
    let v = values(&idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), metric);
    if v.is_empty() {
        return None;
    }
    let enough = v.len() >= MIN_RUNS;
    let t = match theta {
        Some(theta) if enough => stats::tost(&v, *theta, *margin, 0.05).ok(),
        _ => None,
    };
    let verdict = match (theta, &t) {
        (_, _) if !enough => "absent (n < 3)".to_string(),
        (None, _) => NOT_ON_RECORD.to_string(),
        (Some(_), Some(t)) if t.test.equivalent => "equivalent".into(),
        (Some(_), Some(_)) => "not equivalent".into(),
        (Some(_), None) => "absent (no test)".into(),
    };
    let theta_v = theta.unwrap_or(f64::NAN);
    Some(EquivalenceRow {
        claim: claim.id.clone(),
        model: model.into(),
        family: family.into(),
        environment: claim.environment.clone(),
        arm: claim.arm.clone(),
        metric: metric.clone(),
        anchor: theta_v,
        margin: *margin,
        runs: v.len(),
        mean: if enough { mean(&v) } else { None },
        estimate: t.as_ref().map(|t| t.mean),
        ci_low: t.as_ref().map(|t| t.test.ci_low + theta_v),
        ci_high: t.as_ref().map(|t| t.test.ci_high + theta_v),
        p: t.as_ref().map(|t| t.test.p),
        verdict,
    })
}

/// One row per claim target and model with baseline runs recording the metric.
pub(crate) fn equivalence(
    claims: &[Claim],
    anchors: &AnchorTable,
    idx: &Index,
    models: &[(String, String)],
) -> Vec<EquivalenceRow> {
    let mut rows = Vec::new();
    for claim in claims.iter().filter(|c| !matches!(c.kind, ClaimKind::ArmContrast { .. })) {
        for target in targets(claim, anchors) {
            for (model, family) in models {
                rows.extend(row(claim, model, family, idx, &target));
            }
        }
    }
    rows
}

/// How one model's baseline matches the claim's anchor by TOST.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Match {
    /// Every target is equivalent; the evidence in words.
    Yes(String),
    /// Tested, and some target is not equivalent.
    No(String),
    /// No test could be made; why.
    Absent(String),
}

/// Whether `model`'s baseline matches the claim's anchor by TOST (every target equivalent);
/// `None` when the claim does not match by TOST.
pub(crate) fn tost_match(claim: &Claim, anchors: &AnchorTable, idx: &Index, model: &str) -> Option<Match> {
    let targets = targets(claim, anchors);
    if targets.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let mut all = true;
    for target in &targets {
        let Some(r) = row(claim, model, "", idx, target) else {
            return Some(Match::Absent(format!("no baseline run records `{}`", target.0)));
        };
        match r.verdict.as_str() {
            NOT_ON_RECORD => {
                return Some(Match::Absent(format!("the anchor value is not on record ({})", claim.kind.anchor())))
            }
            "equivalent" | "not equivalent" => {
                all &= r.verdict == "equivalent";
                parts.push(format!(
                    "{} {} (90 % CI [{}, {}] against {} ± {})",
                    r.metric,
                    r.verdict,
                    crate::common::fmt(r.ci_low),
                    crate::common::fmt(r.ci_high),
                    crate::common::fmt(Some(r.anchor)),
                    crate::common::fmt(Some(r.margin)),
                ));
            }
            other => return Some(Match::Absent(format!("`{}` {other}", r.metric))),
        }
    }
    let text = parts.join("; ");
    Some(if all { Match::Yes(text) } else { Match::No(text) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::ClaimTable;
    use crate::test_support::{runs, Place};

    fn claim(id: &str) -> Claim {
        ClaimTable::shipped().claims.iter().find(|c| c.id == id).expect("claim").clone()
    }

    fn table(out: &[crate::RunOutcome], ids: &[&str]) -> Vec<EquivalenceRow> {
        let idx = Index::new(out, crate::declared::tests::shipped());
        let claims: Vec<Claim> = ids.iter().map(|id| claim(id)).collect();
        equivalence(&claims, AnchorTable::shipped(), &idx, &idx.models())
    }

    #[test]
    fn round_10_says_the_anchor_value_is_not_on_record() {
        let mut out = Vec::new();
        runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_r10", &[0.1, 0.2, 0.3]);
        let rows = table(&out, &["pgg-round10-human"]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.verdict, NOT_ON_RECORD);
        assert!(r.anchor.is_nan());
        assert_eq!((r.estimate, r.ci_low, r.p), (None, None, None));
        assert!((r.mean.expect("mean") - 0.2).abs() < 1e-12);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        assert_eq!(
            tost_match(&claim("pgg-round10-human"), AnchorTable::shipped(), &idx, "m"),
            Some(Match::Absent("the anchor value is not on record (pgg-round10)".into()))
        );
    }

    #[test]
    fn a_claim_whose_metric_has_no_runs_gives_no_row_and_fewer_than_three_runs_are_absent() {
        let mut out = Vec::new();
        runs(&mut out, Place::base("m", "f", "bargaining", "ultimatum"), "offer", &[0.4, 0.4]);
        let rows = table(&out, &["ultimatum-offer", "ultimatum-rejection"]);
        assert_eq!(rows.len(), 1, "no run records `rejection`: {rows:?}");
        assert_eq!((rows[0].verdict.as_str(), rows[0].mean, rows[0].estimate), ("absent (n < 3)", None, None));
    }

    #[test]
    fn rejection_and_slope_use_agoras_margins_and_type_shares_one_row_per_type() {
        let mut out = Vec::new();
        runs(&mut out, Place::base("m", "f", "bargaining", "ultimatum"), "rejection", &[0.15, 0.16, 0.17]);
        let pgg = Place::base("m", "f", "public-goods", "baseline");
        for (c, f) in [(0.5, 0.3), (0.52, 0.28), (0.48, 0.31)] {
            crate::test_support::run(&mut out, pgg, &[("cc_conditional_share", c), ("cc_free_rider_share", f)]);
        }
        // No shipped claim reads the type shares (the strategy method's types are not measured
        // by play); a claim table of a user's may.
        let types = ClaimTable::parse(
            "ClaimTable(version: 4, claims: [Claim(id: \"cc-types\", text: \"t\", \
             environment: \"public-goods\", arm: \"baseline\", metric: \"cc_conditional_share\", \
             kind: TypeShares(anchor: \"cc-types\", margin: 0.10, shares: [\
             TypeShare(label: \"conditional cooperators\", metric: \"cc_conditional_share\"), \
             TypeShare(label: \"free riders\", metric: \"cc_free_rider_share\")]))])",
        )
        .expect("parses");
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let claims = [claim("ultimatum-rejection"), types.claims[0].clone()];
        let rows = equivalence(&claims, AnchorTable::shipped(), &idx, &idx.models());
        let got: Vec<(&str, f64, f64, &str)> =
            rows.iter().map(|r| (r.metric.as_str(), r.anchor, r.margin, r.verdict.as_str())).collect();
        assert_eq!(
            got,
            [
                ("rejection", 0.16, 0.05, "equivalent"),
                ("cc_conditional_share", 0.50, 0.10, "equivalent"),
                ("cc_free_rider_share", 0.295, 0.10, "equivalent"),
            ]
        );
    }

    #[test]
    fn a_range_is_tested_as_its_midpoint_at_half_its_width() {
        let mut out = Vec::new();
        runs(&mut out, Place::base("m", "f", "prisoners-dilemma", "baseline"), "cooperation", &[0.34, 0.35, 0.36]);
        let rows = table(&out, &["pd-corridor"]);
        assert_eq!(rows.len(), 1);
        assert!((rows[0].anchor - 0.35).abs() < 1e-12 && (rows[0].margin - 0.15).abs() < 1e-12);
        assert_eq!(rows[0].verdict, "equivalent");
    }
}
