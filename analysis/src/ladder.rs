//! The certification ladder: one verdict per claim.
//!
//! - Tier 1 (exploratory): the claim holds at baseline in at least one model (for an arm
//!   contrast, the punishment contrast is significant after Holm in the human direction; for a
//!   critical mass, a tipping sweep's bracket overlaps the human range).
//! - Tier 2 (robust): in at least three model families, a model where it holds keeps the human
//!   sign (or keeps holding) in at least 80 % of the cells at both perturbation levels, and is
//!   not reversed under the divergent payoffs (C3).
//! - Tier 3 (transferable): equivalence with a point anchor and a transcript audit consistent
//!   with the human mechanism; no audit exists yet, so no claim reaches it.
//!
//! A verdict names the first condition of the next tier that is not met.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind};
use crate::common::{fmt, mean, median, values, Index};
use crate::contrasts::ContrastRow;
use crate::outcomes::RunOutcome;
use crate::perturbation::{sign_kept, LEVELS};
use crate::stats;
use crate::summary::TippingCurve;

/// The name of each tier, by number.
pub const TIER_NAMES: [&str; 4] = ["not exploratory", "Tier 1 exploratory", "Tier 2 robust", "Tier 3 transferable"];

/// Sign stability a level's cells need for Tier 2.
const STABLE: f64 = 0.8;
/// Model families a claim must be robust in for Tier 2.
const FAMILIES_NEEDED: usize = 3;

/// The ladder's verdict on one claim.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Id of the claim.
    pub claim: String,
    /// The claim in words.
    pub text: String,
    /// 0: not even exploratory; 1 exploratory; 2 robust; 3 transferable.
    pub tier: u8,
    /// Name of the tier reached.
    pub tier_name: String,
    /// Lines of evidence gathered on the way up the ladder, one per model, curve or level.
    pub evidence: Vec<String>,
    /// The first condition of the next tier that is not met.
    pub first_unmet: Option<String>,
}

fn verdict(claim: &Claim, tier: u8, evidence: Vec<String>, unmet: Option<String>) -> Verdict {
    Verdict {
        claim: claim.id.clone(),
        text: claim.text.clone(),
        tier,
        tier_name: TIER_NAMES[tier as usize].into(),
        evidence,
        first_unmet: unmet,
    }
}

/// Does a claim hold for these runs? `None` when it cannot be evaluated (too few runs, no metric).
fn holds(claim: &Claim, runs: &[&RunOutcome], anchors: &AnchorTable) -> Option<bool> {
    let v = values(runs, &claim.metric);
    if v.is_empty() {
        return None;
    }
    let anchor = anchors.get(claim.kind.anchor())?;
    match &claim.kind {
        ClaimKind::Equivalence { .. } => {
            let (AnchorValue::Point(theta), Some(margin)) = (&anchor.value, anchor.margin) else { return None };
            stats::tost(&v, *theta, margin, 0.05).ok().map(|t| t.equivalent)
        }
        ClaimKind::Direction { sign, margin, .. } => median(&v).map(|m| m * sign >= *margin),
        ClaimKind::Range { .. } => {
            let AnchorValue::Range { low, high } = anchor.value else { return None };
            mean(&v).map(|m| m >= low && m <= high)
        }
        ClaimKind::Majority { .. } => mean(&v).map(|m| m > 0.5),
        ClaimKind::ArmContrast { .. } | ClaimKind::CriticalMass { .. } => None,
    }
}

/// Whether the claim's direction is reversed in these runs (divergent payoffs).
fn reversed(claim: &Claim, runs: &[&RunOutcome]) -> Option<bool> {
    let v = values(runs, &claim.metric);
    match &claim.kind {
        ClaimKind::Direction { sign, margin, .. } => median(&v).map(|m| m * sign <= -margin),
        ClaimKind::Majority { .. } => mean(&v).map(|m| m < 0.5),
        _ => None,
    }
}

/// Grades one claim on the ladder.
pub(crate) fn ladder(
    claim: &Claim,
    idx: &Index,
    models: &[(String, String)],
    contrasts: &[ContrastRow],
    curves: &[TippingCurve],
    anchors: &AnchorTable,
) -> Verdict {
    let mut evidence = Vec::new();
    // Tier 1: holds at baseline in at least one model.
    let holding = match &claim.kind {
        ClaimKind::CriticalMass { anchor } => {
            let Some(AnchorValue::Range { low, high }) = anchors.get(anchor).map(|a| a.value.clone()) else {
                return verdict(claim, 0, evidence, Some("anchor has no range".into()));
            };
            bracket_overlaps(low, high, curves, &mut evidence)
        }
        ClaimKind::ArmContrast { sign, .. } => contrast_significant(*sign, models, contrasts, &mut evidence),
        _ => holds_at_baseline(claim, idx, models, anchors, &mut evidence),
    };
    if evidence.is_empty() {
        let unmet = format!("no runs of {} / {} in the store", claim.environment, claim.arm);
        return verdict(claim, 0, evidence, Some(unmet));
    }
    if holding.is_empty() {
        let unmet = match &claim.kind {
            ClaimKind::CriticalMass { .. } => "the tipping bracket overlaps the human critical mass in no model",
            ClaimKind::ArmContrast { .. } => {
                "the contrast is significant in the human direction (after Holm) in no model"
            }
            _ => "holds at baseline in no model",
        };
        return verdict(claim, 0, evidence, Some(unmet.into()));
    }
    // Tier 2: sign stability >= 0.8 across cells at both levels in >= 3 families, not reversed
    // under C3.
    let (stable_families, first_gap) = robust_families(claim, idx, anchors, &holding, &mut evidence);
    if stable_families.len() < FAMILIES_NEEDED {
        let unmet = first_gap.unwrap_or_else(|| {
            format!(
                "robust in {} model famil{} ({}); three are needed",
                stable_families.len(),
                if stable_families.len() == 1 { "y" } else { "ies" },
                stable_families.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        });
        return verdict(claim, 1, evidence, Some(unmet));
    }
    // Tier 3: equivalence with the anchor, and a transcript audit consistent with the human
    // mechanism.
    if !matches!(claim.kind, ClaimKind::Equivalence { .. }) {
        let unmet = "equivalence with a point anchor: this claim's anchor is a direction or a range";
        return verdict(claim, 2, evidence, Some(unmet.into()));
    }
    let unmet = "transcript audit consistent with the human mechanism: no audit has been run";
    verdict(claim, 2, evidence, Some(unmet.into()))
}

/// Tier 1 of a critical-mass claim: the rosters whose tipping bracket (largest fraction held,
/// smallest overturning) overlaps the human range `low`–`high`; one line of evidence per curve.
fn bracket_overlaps(low: f64, high: f64, curves: &[TippingCurve], evidence: &mut Vec<String>) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for c in curves {
        let line = match (c.largest_failure, c.critical) {
            (Some(f), Some(s)) => {
                let hit = s >= low && f <= high;
                if hit {
                    holding.push((c.roster.clone(), "classical".into()));
                }
                format!(
                    "{}: held at {f:.3}, overturned from {s:.3} (human {low}-{high}){}",
                    c.roster,
                    if hit { ": overlaps" } else { "" }
                )
            }
            (None, Some(s)) => format!("{}: overturned already at the smallest fraction tested, {s:.3}", c.roster),
            _ => format!("{}: never overturned in the fractions tested", c.roster),
        };
        evidence.push(line);
    }
    holding
}

/// Tier 1 of an arm contrast: the models whose punishment contrast is significant after Holm
/// with a difference of sign `sign`; one line of evidence per contrast.
fn contrast_significant(
    sign: f64,
    models: &[(String, String)],
    contrasts: &[ContrastRow],
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for c in contrasts.iter().filter(|c| c.family_of_tests == "punishment") {
        let ok = c.significant && c.delta.is_some_and(|d| d * sign > 0.0);
        evidence.push(format!(
            "{}: Δ = {}, Cliff's δ = {}, Holm p = {}{}",
            c.model,
            fmt(c.delta),
            fmt(c.cliffs_delta),
            fmt(c.p_holm),
            c.excluded.as_ref().map(|e| format!(" (excluded: {e})")).unwrap_or_default()
        ));
        if ok {
            let fam = models.iter().find(|m| m.0 == c.model).map(|m| m.1.clone()).unwrap_or_default();
            holding.push((c.model.clone(), fam));
        }
    }
    holding
}

/// Tier 1 of every other claim: the models in which it holds at the canonical baseline; one
/// line of evidence per model where it can be evaluated.
fn holds_at_baseline(
    claim: &Claim,
    idx: &Index,
    models: &[(String, String)],
    anchors: &AnchorTable,
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for (model, family) in models {
        let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
        match holds(claim, &runs, anchors) {
            Some(true) => {
                holding.push((model.clone(), family.clone()));
                evidence.push(format!("{model}: holds at baseline ({} runs)", runs.len()));
            }
            Some(false) => evidence.push(format!("{model}: does not hold at baseline ({} runs)", runs.len())),
            None => {}
        }
    }
    holding
}

/// Tier 2: the families of the `holding` models that keep the sign (or keep holding) in at
/// least 80 % of the cells at each level and are not reversed under C3, and the first gap met.
fn robust_families(
    claim: &Claim,
    idx: &Index,
    anchors: &AnchorTable,
    holding: &[(String, String)],
    evidence: &mut Vec<String>,
) -> (BTreeSet<String>, Option<String>) {
    let mut stable_families = BTreeSet::new();
    let mut first_gap: Option<String> = None;
    for (model, family) in holding {
        let mut ok = true;
        for level in LEVELS {
            let cells: Vec<String> = idx
                .cells(model, &claim.environment, &claim.arm)
                .into_iter()
                .filter(|(_, l)| l == level)
                .map(|(c, _)| c)
                .collect();
            let judged: Vec<bool> = cells
                .iter()
                .filter_map(|c| {
                    let runs = idx.select(model, &claim.environment, &claim.arm, c, "C0");
                    sign_kept(claim, &runs).or_else(|| holds(claim, &runs, anchors))
                })
                .collect();
            if judged.is_empty() {
                ok = false;
                first_gap.get_or_insert(format!("sign stability across {level}-level cells: none run for {model}"));
                break;
            }
            let s = judged.iter().filter(|k| **k).count() as f64 / judged.len() as f64;
            evidence.push(format!("{model}: sign stability {s:.2} over {} {level}-level cells", judged.len()));
            if s < STABLE {
                ok = false;
                first_gap.get_or_insert(format!("sign stability {s:.2} < 0.8 at the {level} level for {model}"));
            }
        }
        let c3 = idx.select(model, &claim.environment, &claim.arm, "baseline", "C3");
        if reversed(claim, &c3) == Some(true) {
            ok = false;
            evidence.push(format!("{model}: reversed under divergent payoffs (C3)"));
            first_gap.get_or_insert(format!("reversed under C3 for {model}"));
        }
        if ok {
            stable_families.insert(family.clone());
        }
    }
    (stable_families, first_gap)
}

#[cfg(test)]
mod tests {
    //! The ladder on hand-built outcomes: each tier's conditions, and the first unmet one the
    //! verdict names.

    use std::collections::BTreeMap;

    use super::*;
    use crate::claims::ClaimTable;

    /// Where a run sits: (roster, family, environment, arm, cell, level, variant).
    type Place<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str, &'a str, &'a str);

    /// One run per value of `metric` at `place`.
    fn runs(out: &mut Vec<RunOutcome>, place: Place, metric: &str, vals: &[f64]) {
        let (roster, family, environment, arm, cell, level, variant) = place;
        for v in vals {
            out.push(RunOutcome {
                run_id: out.len() as i64 + 1,
                run_key: format!("k{}", out.len() + 1),
                study: "test".into(),
                block: "main".into(),
                environment: environment.into(),
                arm: arm.into(),
                variant: variant.into(),
                cell: cell.into(),
                level: level.into(),
                roster: roster.into(),
                family: family.into(),
                sweep: None,
                committed: 0,
                population: 4,
                metrics: BTreeMap::from([(metric.to_string(), *v)]),
            });
        }
    }

    /// Tipping runs of a roster: four per (fraction, how many of the four overturned).
    fn sweep(out: &mut Vec<RunOutcome>, roster: &str, points: &[(f64, usize)]) {
        for (fraction, overturned) in points {
            for i in 0..4 {
                runs(
                    out,
                    (roster, "classical", "naming-game", "tipping", "baseline", "baseline", "C0"),
                    "overturned",
                    &[if i < *overturned { 1.0 } else { 0.0 }],
                );
                let last = out.last_mut().expect("a run");
                last.sweep = Some(*fraction);
                last.committed = (fraction * 40.0).round() as i64;
                last.population = 40;
            }
        }
    }

    fn claim(id: &str) -> Claim {
        ClaimTable::shipped().claims.iter().find(|c| c.id == id).expect("a shipped claim").clone()
    }

    /// Grades the claim on the outcomes as `analyze` does.
    fn grade(claim: &Claim, outcomes: &[RunOutcome]) -> Verdict {
        let idx = Index::new(outcomes);
        let models = idx.models();
        let contrasts = crate::contrasts::contrasts(&idx, &models);
        let curves = crate::tipping::tipping(outcomes);
        ladder(claim, &idx, &models, &contrasts, &curves, AnchorTable::shipped())
    }

    fn unmet(v: &Verdict) -> &str {
        v.first_unmet.as_deref().expect("a verdict below Tier 3 names its first unmet condition")
    }

    /// `pgg-decline` (median contribution change at most -0.10) for a model: declining at
    /// baseline, and in each given (cell, level) with the given change.
    fn decline(out: &mut Vec<RunOutcome>, model: &str, family: &str, cells: &[(&str, &str, f64)]) {
        let pgg = |cell, level, variant| (model, family, "public-goods", "baseline", cell, level, variant);
        runs(out, pgg("baseline", "baseline", "C0"), "contribution_change", &[-0.30, -0.25, -0.20]);
        for (cell, level, change) in cells {
            runs(out, pgg(cell, level, "C0"), "contribution_change", &[*change]);
        }
    }

    /// Cells where the decline keeps its sign at both levels.
    const STABLE_CELLS: [(&str, &str, f64); 3] =
        [("rep-1", "representation", -0.2), ("rep-2", "representation", -0.1), ("des-1", "design", -0.15)];

    #[test]
    fn tier_0_without_runs_names_the_missing_arm() {
        let v = grade(&claim("pgg-decline"), &[]);
        assert_eq!((v.tier, v.tier_name.as_str()), (0, "not exploratory"));
        assert_eq!(unmet(&v), "no runs of public-goods / baseline in the store");
        assert!(v.evidence.is_empty());
    }

    #[test]
    fn tier_0_when_the_claim_holds_at_baseline_in_no_model() {
        let mut out = Vec::new();
        let place = ("m", "fam-a", "public-goods", "baseline", "baseline", "baseline", "C0");
        // Median change -0.05: declining, but not by the margin of 0.10.
        runs(&mut out, place, "contribution_change", &[0.0, -0.05, -0.08]);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 0);
        assert_eq!(unmet(&v), "holds at baseline in no model");
        assert_eq!(v.evidence, ["m: does not hold at baseline (3 runs)"]);
    }

    #[test]
    fn tier_0_of_an_arm_contrast_significant_against_the_human_direction() {
        let mut out = Vec::new();
        let pgg = |arm| ("m", "fam-a", "public-goods", arm, "baseline", "baseline", "C0");
        runs(&mut out, pgg("baseline"), "contribution_last", &[0.60, 0.62, 0.64, 0.66, 0.68]);
        runs(&mut out, pgg("punishment"), "contribution_last", &[0.30, 0.32, 0.34, 0.36, 0.38]);
        let v = grade(&claim("punishment-raises"), &out);
        assert_eq!(v.tier, 0);
        assert_eq!(unmet(&v), "the contrast is significant in the human direction (after Holm) in no model");
        // Complete separation of 5 against 5: exact p = 2 / C(10, 5) = 0.0079, one test in the family.
        assert_eq!(v.evidence, ["m: Δ = -0.300, Cliff's δ = -1.000, Holm p = 0.008"]);
    }

    #[test]
    fn tier_0_of_a_critical_mass_bracketing_outside_the_human_range() {
        let mut out = Vec::new();
        sweep(&mut out, "never", &[(0.10, 0), (0.30, 1)]);
        sweep(&mut out, "early", &[(0.10, 3), (0.30, 4)]);
        sweep(&mut out, "late", &[(0.10, 0), (0.30, 0), (0.40, 4)]);
        let v = grade(&claim("critical-mass"), &out);
        assert_eq!(v.tier, 0);
        assert_eq!(unmet(&v), "the tipping bracket overlaps the human critical mass in no model");
        assert_eq!(
            v.evidence,
            [
                "early: overturned already at the smallest fraction tested, 0.100",
                "late: held at 0.300, overturned from 0.400 (human 0.21-0.25)",
                "never: never overturned in the fractions tested",
            ]
        );
    }

    #[test]
    fn tier_0_of_a_critical_mass_claim_whose_anchor_has_no_range() {
        let mut out = Vec::new();
        sweep(&mut out, "r", &[(0.20, 0), (0.25, 4)]);
        let mut c = claim("critical-mass");
        c.kind = ClaimKind::CriticalMass { anchor: "pgg-round1".into() };
        let v = grade(&c, &out);
        assert_eq!((v.tier, unmet(&v)), (0, "anchor has no range"));
        assert!(v.evidence.is_empty());
    }

    #[test]
    fn tier_1_not_2_when_no_cell_of_a_level_was_run() {
        let mut out = Vec::new();
        decline(&mut out, "m", "fam-a", &[]);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!((v.tier, v.tier_name.as_str()), (1, "Tier 1 exploratory"));
        assert_eq!(unmet(&v), "sign stability across representation-level cells: none run for m");
        assert_eq!(v.evidence, ["m: holds at baseline (3 runs)"]);
    }

    #[test]
    fn tier_1_not_2_when_sign_stability_falls_below_four_fifths() {
        let mut out = Vec::new();
        let cells = [("rep-1", "representation", -0.2), ("rep-2", "representation", 0.1), ("des-1", "design", -0.1)];
        decline(&mut out, "m", "fam-a", &cells);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "sign stability 0.50 < 0.8 at the representation level for m");
        assert_eq!(
            v.evidence,
            [
                "m: holds at baseline (3 runs)",
                "m: sign stability 0.50 over 2 representation-level cells",
                "m: sign stability 1.00 over 1 design-level cells",
            ]
        );
    }

    #[test]
    fn tier_1_not_2_when_reversed_under_divergent_payoffs() {
        let mut out = Vec::new();
        decline(&mut out, "m", "fam-a", &STABLE_CELLS);
        let c3 = ("m", "fam-a", "public-goods", "baseline", "baseline", "baseline", "C3");
        runs(&mut out, c3, "contribution_change", &[0.2, 0.3, 0.25]);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "reversed under C3 for m");
        assert_eq!(v.evidence.last().map(String::as_str), Some("m: reversed under divergent payoffs (C3)"));
    }

    #[test]
    fn tier_1_not_2_when_robust_in_fewer_than_three_families() {
        let mut out = Vec::new();
        decline(&mut out, "m1", "fam-a", &STABLE_CELLS);
        decline(&mut out, "m2", "fam-a", &STABLE_CELLS);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "robust in 1 model family (fam-a); three are needed");
        decline(&mut out, "m3", "fam-b", &STABLE_CELLS);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "robust in 2 model families (fam-a, fam-b); three are needed");
    }

    #[test]
    fn the_first_gap_of_any_model_is_named_before_the_family_count() {
        let mut out = Vec::new();
        decline(&mut out, "m1", "fam-a", &STABLE_CELLS);
        decline(&mut out, "m2", "fam-b", &STABLE_CELLS);
        decline(&mut out, "m3", "fam-c", &[("rep-1", "representation", 0.2), ("des-1", "design", -0.1)]);
        decline(&mut out, "m4", "fam-d", &[]);
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "sign stability 0.00 < 0.8 at the representation level for m3");
    }

    #[test]
    fn tier_2_not_3_for_a_direction_claim() {
        let mut out = Vec::new();
        for (m, f) in [("m1", "fam-a"), ("m2", "fam-b"), ("m3", "fam-c")] {
            decline(&mut out, m, f, &STABLE_CELLS);
        }
        let v = grade(&claim("pgg-decline"), &out);
        assert_eq!((v.tier, v.tier_name.as_str()), (2, "Tier 2 robust"));
        assert_eq!(unmet(&v), "equivalence with a point anchor: this claim's anchor is a direction or a range");
        assert_eq!(v.evidence.len(), 3 + 3 * 2);
        assert!(v.evidence.contains(&"m3: sign stability 1.00 over 2 representation-level cells".to_string()));
    }

    #[test]
    fn tier_2_not_3_for_an_equivalence_claim_without_a_transcript_audit() {
        // `pgg-round1-human`: round-1 contributions equivalent to 0.5 within 0.10 (TOST); in
        // cells, where there is no sign to keep, the claim must keep holding.
        let mut out = Vec::new();
        let near = [0.48, 0.50, 0.52, 0.49, 0.51];
        for (m, f) in [("m1", "fam-a"), ("m2", "fam-b"), ("m3", "fam-c")] {
            for (cell, level) in [("baseline", "baseline"), ("rep-1", "representation"), ("des-1", "design")] {
                runs(&mut out, (m, f, "public-goods", "baseline", cell, level, "C0"), "contribution_r1", &near);
            }
        }
        let v = grade(&claim("pgg-round1-human"), &out);
        assert_eq!(v.tier, 2);
        assert_eq!(unmet(&v), "transcript audit consistent with the human mechanism: no audit has been run");
        assert_eq!(v.evidence[0], "m1: holds at baseline (5 runs)");
    }

    #[test]
    fn an_equivalence_claim_with_too_few_cell_runs_has_no_sign_stability() {
        let mut out = Vec::new();
        let near = [0.48, 0.50, 0.52, 0.49, 0.51];
        runs(
            &mut out,
            ("m", "fam-a", "public-goods", "baseline", "baseline", "baseline", "C0"),
            "contribution_r1",
            &near,
        );
        // Two runs: TOST needs three, so the cell cannot be judged.
        runs(
            &mut out,
            ("m", "fam-a", "public-goods", "baseline", "rep-1", "representation", "C0"),
            "contribution_r1",
            &[0.5, 0.5],
        );
        let v = grade(&claim("pgg-round1-human"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "sign stability across representation-level cells: none run for m");
    }

    #[test]
    fn a_critical_mass_overlapping_the_human_range_reaches_tier_1_only() {
        let mut out = Vec::new();
        sweep(&mut out, "r", &[(0.15, 0), (0.20, 1), (0.25, 3), (0.30, 4)]);
        let v = grade(&claim("critical-mass"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(v.evidence[0], "r: held at 0.200, overturned from 0.250 (human 0.21-0.25): overlaps");
        // Sweeps run no perturbation cells, so Tier 2 cannot be met.
        assert_eq!(unmet(&v), "sign stability across representation-level cells: none run for r");
    }

    #[test]
    fn a_significant_arm_contrast_in_the_human_direction_reaches_tier_1_only() {
        let mut out = Vec::new();
        let pgg = |arm| ("m", "fam-a", "public-goods", arm, "baseline", "baseline", "C0");
        runs(&mut out, pgg("baseline"), "contribution_last", &[0.30, 0.32, 0.34, 0.36, 0.38]);
        runs(&mut out, pgg("punishment"), "contribution_last", &[0.60, 0.62, 0.64, 0.66, 0.68]);
        let v = grade(&claim("punishment-raises"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(v.evidence[0], "m: Δ = 0.300, Cliff's δ = 1.000, Holm p = 0.008");
        assert_eq!(unmet(&v), "sign stability across representation-level cells: none run for m");
    }

    #[test]
    fn a_majority_claim_is_reversed_under_c3_when_most_runs_fail() {
        let mut out = Vec::new();
        let ng = |cell, level, variant| ("m", "fam-a", "naming-game", "baseline", cell, level, variant);
        runs(&mut out, ng("baseline", "baseline", "C0"), "convention", &[1.0, 1.0, 0.0]);
        runs(&mut out, ng("rep-1", "representation", "C0"), "convention", &[1.0, 1.0]);
        runs(&mut out, ng("des-1", "design", "C0"), "convention", &[1.0]);
        runs(&mut out, ng("baseline", "baseline", "C3"), "convention", &[0.0, 1.0, 0.0]);
        let v = grade(&claim("convention-forms"), &out);
        assert_eq!(v.tier, 1);
        assert_eq!(unmet(&v), "reversed under C3 for m");
    }
}
