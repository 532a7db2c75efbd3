//! Human anchors computed from a store's own human runs (`agora anchors --from-store`), and the
//! test of a model against them.
//!
//! The instrument's shipped anchors are summary numbers from other people's experiments; a lab
//! that runs the same games with its own participants (`agora serve`) can compare its models
//! with the distribution of its own human runs instead. A human run is a run in which every seat
//! was a person's and every decision was made by that person (no stand-in decision); runs with
//! a stand-in are left out and counted. For each claim whose test matches a value (a point
//! anchor by TOST, a range by its midpoint and half-width, each share of a type-share claim),
//! the anchor holds the run-level values of the claim's metric at the canonical baseline (C0,
//! the `baseline` cell), their mean and 95 % t-interval, and its provenance: the study, the
//! hash of its plan, the date it was computed and the runs left out.
//!
//! Grading against them is an explicit opt-in (`agora analyze --human-anchors FILE`): where a
//! claim has a human anchor, its equivalence test becomes the two-sample Welch TOST of the
//! model's baseline runs against the human runs, at the claim's own margin (the 90 % interval
//! of the difference of the means inside it), at Tier 1 and at Tier 3 alike; every other claim
//! keeps its published anchor. Without the option nothing changes.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::anchors::AnchorTable;
use crate::claims::{Claim, ClaimKind, ClaimTable};
use crate::common::{fmt, values, Index, MIN_RUNS};
use crate::equivalence::Match;
use crate::error::AnalysisError;
use crate::outcomes::{open, run_outcomes};

/// The file format's version.
pub const VERSION: u32 = 1;

/// Human anchors computed from a store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanAnchors {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// One per claim (and metric) with human runs.
    pub anchors: Vec<HumanAnchor>,
}

/// A claim's outcome in a lab's own human runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanAnchor {
    /// The claim.
    pub claim: String,
    /// The environment.
    pub environment: String,
    /// The arm.
    pub arm: String,
    /// The run-level metric.
    pub metric: String,
    /// The claim's margin (fixed in advance by the claim or its published anchor).
    pub margin: f64,
    /// Human runs.
    pub n: usize,
    /// Mean of the metric over them.
    pub mean: f64,
    /// Lower end of the 95 % t-interval of the mean (NaN below two runs).
    pub ci_low: f64,
    /// Upper end of the 95 % t-interval of the mean.
    pub ci_high: f64,
    /// The run-level values, in run-key order.
    pub values: Vec<f64>,
    /// Runs with human seats left out because a stand-in played some decision.
    pub excluded: usize,
    /// The study the runs belong to.
    pub study: String,
    /// The SHA-256 of the study's plan (the store's `studies.plan_hash`).
    pub study_hash: String,
    /// The day the anchor was computed (UTC, YYYY-MM-DD).
    pub date: String,
}

/// Computes the human anchors of the shipped claims from the human runs of `path` (of one
/// study, or of every study with human runs).
pub fn from_store(path: &Path, study: Option<&str>) -> Result<HumanAnchors, AnalysisError> {
    let conn = open(path)?;
    let sql = |source| AnalysisError::Store { path: path.to_path_buf(), source };
    // Runs every seat of which is a person's; those where a stand-in played some decision.
    let all_human = agora_records::reads::runs::all_human_runs(&conn).map_err(sql)?;
    let stood_in = agora_records::reads::runs::stood_in_runs(&conn).map_err(sql)?;
    let outcomes = run_outcomes(path, study)?;
    let (kept, left): (Vec<_>, Vec<_>) = outcomes
        .into_iter()
        .filter(|r| all_human.contains(&r.run_id) && r.cell == "baseline" && r.variant == "C0")
        .partition(|r| !stood_in.contains(&r.run_id));
    let anchors_table = AnchorTable::shipped();
    let mut anchors = Vec::new();
    // The day, in UTC, as SQLite gives it.
    let date: String = agora_records::reads::runs::today(&conn).map_err(sql)?;
    // An arm contrast is a test between two arms, not a value; the others as equivalence reads them.
    for claim in ClaimTable::shipped().claims.iter().filter(|c| !matches!(c.kind, ClaimKind::ArmContrast { .. })) {
        // The metrics the claim's equivalence test reads, at its margins (a range's half-width).
        // A direction claim's human value is its run-level effect, tested by equivalence at the
        // claim's directional margin (Agora's choice: no margin was deposited for a size).
        let targets = match &claim.kind {
            ClaimKind::Direction { margin, .. } => vec![(claim.metric.clone(), None, *margin)],
            _ => crate::equivalence::targets(claim, anchors_table),
        };
        for (metric, _, margin) in targets {
            let mine: Vec<&crate::RunOutcome> =
                kept.iter().filter(|r| r.environment == claim.environment && r.arm == claim.arm).collect();
            let v = values(&mine, &metric);
            if v.is_empty() {
                continue;
            }
            let studies: BTreeSet<&str> = mine.iter().map(|r| r.study.as_str()).collect();
            let study_name = studies.into_iter().collect::<Vec<_>>().join(", ");
            let hash: String = agora_records::reads::runs::plan_hash(&conn, &study_name).unwrap_or_default();
            let (mean, ci_low, ci_high) = crate::stats::t_interval(&v, 0.95).unwrap_or((
                v.iter().sum::<f64>() / v.len() as f64,
                f64::NAN,
                f64::NAN,
            ));
            anchors.push(HumanAnchor {
                claim: claim.id.clone(),
                environment: claim.environment.clone(),
                arm: claim.arm.clone(),
                metric,
                margin,
                n: v.len(),
                mean,
                ci_low,
                ci_high,
                values: v,
                excluded: left.iter().filter(|r| r.environment == claim.environment && r.arm == claim.arm).count(),
                study: study_name,
                study_hash: hash,
                date: date.clone(),
            });
        }
    }
    Ok(HumanAnchors { version: VERSION, anchors })
}

impl HumanAnchors {
    /// Reads an anchors file written by `agora anchors --from-store`.
    pub fn parse(text: &str) -> Result<HumanAnchors, String> {
        let a: HumanAnchors = ron::from_str(text).map_err(|e| e.to_string())?;
        if a.version != VERSION {
            return Err(format!("version: expected {VERSION}, got {}", a.version));
        }
        for h in &a.anchors {
            let Some(claim) = ClaimTable::shipped().claims.iter().find(|c| c.id == h.claim) else {
                return Err(format!("anchor for claim `{}`: no such claim", h.claim));
            };
            let whose = format!("anchor for claim `{}`", h.claim);
            if !h.environment.is_empty() && h.environment != claim.environment {
                return Err(format!(
                    "{whose}: environment `{}` is not the claim's (`{}`)",
                    h.environment, claim.environment
                ));
            }
            if !h.arm.is_empty() && h.arm != claim.arm {
                return Err(format!("{whose}: arm `{}` is not the claim's (`{}`)", h.arm, claim.arm));
            }
            if h.values.len() != h.n || h.values.iter().any(|v| !v.is_finite()) {
                return Err(format!("{whose}: n and values disagree"));
            }
            if !(h.margin.is_finite() && h.margin > 0.0) {
                return Err(format!("{whose}: margin must be positive"));
            }
            // The summary must be the values' own: a mean or interval that contradicts them is
            // refused rather than one of the two silently believed.
            if !h.values.is_empty() {
                let (mean, low, high) = crate::stats::t_interval(&h.values, 0.95).unwrap_or((
                    h.values.iter().sum::<f64>() / h.values.len() as f64,
                    f64::NAN,
                    f64::NAN,
                ));
                let close = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * (1.0 + b.abs());
                if !close(h.mean, mean) {
                    return Err(format!("{whose}: mean {} contradicts its values (their mean is {mean})", h.mean));
                }
                if !(close(h.ci_low, low) && close(h.ci_high, high)) {
                    return Err(format!(
                        "{whose}: interval [{}, {}] contradicts its values (their 95 % t-interval is [{low}, {high}])",
                        h.ci_low, h.ci_high
                    ));
                }
            }
        }
        Ok(a)
    }

    /// The file's text.
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).expect("invariant: anchors serialise")
    }

    /// The human anchors of `claim`, one per metric.
    pub fn of(&self, claim: &str) -> Vec<&HumanAnchor> {
        self.anchors.iter().filter(|a| a.claim == claim).collect()
    }
}

/// One model's baseline against a claim's human anchors: the Welch TOST of its runs against
/// the human runs on every metric (all must be equivalent).
pub(crate) fn human_match(human: &[&HumanAnchor], claim: &Claim, idx: &Index, model: &str) -> Match {
    let mut parts = Vec::new();
    let mut all = true;
    for h in human {
        if h.n < MIN_RUNS {
            return Match::Absent(format!("{} human runs of `{}` (fewer than {MIN_RUNS})", h.n, h.metric));
        }
        let v = values(&idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), &h.metric);
        if v.len() < MIN_RUNS {
            return Match::Absent(format!("`{}` absent (n < {MIN_RUNS})", h.metric));
        }
        let Ok(t) = crate::stats::tost_welch(&v, &h.values, h.margin, 0.05) else {
            return Match::Absent(format!("`{}`: no test", h.metric));
        };
        all &= t.test.equivalent;
        parts.push(format!(
            "{} {} to the lab's human runs (difference {}, 90 % CI [{}, {}] within ± {}; {} model runs, {} human runs of {}, {})",
            h.metric,
            if t.test.equivalent { "equivalent" } else { "not equivalent" },
            fmt(Some(t.difference)),
            fmt(Some(t.test.ci_low)),
            fmt(Some(t.test.ci_high)),
            fmt(Some(h.margin)),
            t.n_x,
            t.n_y,
            h.study,
            h.date
        ));
    }
    let text = parts.join("; ");
    if all {
        Match::Yes(text)
    } else {
        Match::No(text)
    }
}

/// A file of one anchor of `claim` on `metric` (in `place`, an environment and arm) computed
/// from the human runs' `values` of a study `lab`, for the tests.
#[cfg(test)]
pub(crate) fn lab_anchor(claim: &str, place: (&str, &str), metric: &str, margin: f64, values: &[f64]) -> HumanAnchors {
    let (mean, ci_low, ci_high) = crate::stats::t_interval(values, 0.95).expect("interval");
    HumanAnchors {
        version: VERSION,
        anchors: vec![HumanAnchor {
            claim: claim.into(),
            environment: place.0.into(),
            arm: place.1.into(),
            metric: metric.into(),
            margin,
            n: values.len(),
            mean,
            ci_low,
            ci_high,
            values: values.to_vec(),
            excluded: 0,
            study: "lab".into(),
            study_hash: "h".into(),
            date: "2026-12-06".into(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(values: &[f64]) -> HumanAnchors {
        lab_anchor("ultimatum-offer", ("bargaining", "ultimatum"), "offer", 0.05, values)
    }

    /// A file whose summary contradicts its values, or whose anchor names another game or arm
    /// than its claim's, is refused; the consistent file reads back.
    #[test]
    fn contradictory_anchor_files_are_refused() {
        let good = file(&[0.38, 0.41, 0.40, 0.42, 0.39]);
        assert_eq!(HumanAnchors::parse(&good.to_ron()).expect("consistent"), good);
        let mut bad = good.clone();
        bad.anchors[0].mean = 0.25;
        let e = HumanAnchors::parse(&bad.to_ron()).expect_err("mean against values");
        assert!(e.contains("mean 0.25 contradicts its values"), "{e}");
        let mut bad = good.clone();
        bad.anchors[0].ci_high = 0.9;
        assert!(HumanAnchors::parse(&bad.to_ron()).expect_err("interval").contains("interval"));
        let mut bad = good.clone();
        bad.anchors[0].environment = "public-goods".into();
        let e = HumanAnchors::parse(&bad.to_ron()).expect_err("another game");
        assert!(e.contains("environment `public-goods` is not the claim's (`bargaining`)"), "{e}");
        let mut bad = good;
        bad.anchors[0].arm = "dictator".into();
        assert!(HumanAnchors::parse(&bad.to_ron()).expect_err("another arm").contains("arm `dictator`"));
    }
}
