//! The certification ladder: one verdict per claim, as the paper defines it.
//!
//! - Tier 1 (exploratory): the claim holds at baseline in at least one model: its canonical
//!   human effect lies on the human side at the canonical baseline (a direction claim: the
//!   directional rule, the median run-level effect clearing the margin; a majority claim: more
//!   than half the runs; an arm contrast: significant after Holm in the human direction; a
//!   critical mass: inside the human bracket). Every baseline resting on fewer than three runs
//!   is absent.
//! - Tier 2 (robust): additionally, in at least three model families, a model where it holds
//!   keeps the human effect's sign in at least 80 % of the baseline and the cells of BOTH
//!   levels (representation and design; the sign read from cell means, in every cell with at
//!   least two runs), and is not reversed under the divergent payoffs (C3). The same rule for
//!   every claim kind: the anchor match is not re-tested per cell.
//! - Tier 3 (transferable): additionally, equivalence with the anchor on the claim's outcome
//!   in a robust model, and a transcript audit consistent with the human mechanism
//!   ([`crate::mechanism`]): in a robust model that matches the anchor, a coder validated on
//!   that model's text finds a value of the claim's mechanism stated, and the action depends on
//!   it (the dependency estimate has the mechanism's sign, its 95 % bound clear of zero). A
//!   store without the audit's tables names the audit as missing; a claim without a mechanism
//!   says so.
//!
//! Classical rosters are not models: they are graded apart, in a family of their own (one
//! family suffices there), and never counted towards the three model families.
//!
//! A verdict names the first condition of the next tier that is not met.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind};
use crate::common::{fmt, is_classical, mean, median, values, Index, LEVELS, MIN_RUNS, SIGN_MIN_RUNS};
use crate::contrasts::ContrastRow;
use crate::effect::{cell_effect, reversed};
use crate::equivalence::{tost_match, Match};
use crate::mechanism::AuditEvidence;
use crate::perturbation::level_summary;
use crate::tipping::CriticalMassRow;

/// The name of each tier, by number.
pub const TIER_NAMES: [&str; 4] = ["not exploratory", "Tier 1 exploratory", "Tier 2 robust", "Tier 3 transferable"];

/// Sign stability each level needs for Tier 2.
pub const STABLE: f64 = 0.8;
/// Model families a claim must be robust in for Tier 2.
pub const FAMILIES_NEEDED: usize = 3;

pub use crate::mechanism::AUDIT_MISSING;

/// One set of rosters graded on the ladder.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Grade {
    /// 0: not even exploratory; 1 exploratory; 2 robust; 3 transferable.
    pub tier: u8,
    /// Name of the tier reached.
    pub tier_name: String,
    /// Lines of evidence gathered on the way up the ladder.
    pub evidence: Vec<String>,
    /// The first condition of the next tier that is not met.
    pub first_unmet: Option<String>,
}

/// The ladder's verdict on one claim.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Id of the claim.
    pub claim: String,
    /// The claim in words.
    pub text: String,
    /// 0: not even exploratory; 1 exploratory; 2 robust; 3 transferable (the models' grade).
    pub tier: u8,
    /// Name of the tier reached.
    pub tier_name: String,
    /// Lines of evidence gathered on the way up the ladder, one per model, curve or level.
    pub evidence: Vec<String>,
    /// The first condition of the next tier that is not met.
    pub first_unmet: Option<String>,
    /// The classical rosters, graded apart in a family of their own; absent when none ran the
    /// claim's arm.
    pub classical: Option<Grade>,
}

/// What the ladder reads besides the runs.
pub(crate) struct Inputs<'a> {
    pub idx: &'a Index<'a>,
    pub models: &'a [(String, String)],
    pub contrasts: &'a [ContrastRow],
    pub critical_mass: &'a [CriticalMassRow],
    pub anchors: &'a AnchorTable,
    /// The transcript audit's evidence, where the store holds an audit.
    pub audit: Option<&'a AuditEvidence>,
}

/// The rosters graded together: the models (three families needed) or the classical rosters
/// (their own family).
struct Rosters<'a> {
    list: Vec<&'a (String, String)>,
    families_needed: usize,
    /// `model` or `classical roster`, as the evidence names them.
    noun: &'static str,
}

fn grade_of(tier: u8, evidence: Vec<String>, unmet: Option<String>) -> Grade {
    Grade { tier, tier_name: TIER_NAMES[tier as usize].into(), evidence, first_unmet: unmet }
}

/// Grades one claim on the ladder.
pub(crate) fn ladder(claim: &Claim, inputs: &Inputs) -> Verdict {
    let (classical, models): (Vec<_>, Vec<_>) = inputs.models.iter().partition(|(_, f)| is_classical(f));
    let g = grade(claim, inputs, &Rosters { list: models, families_needed: FAMILIES_NEEDED, noun: "model" });
    let c = (!classical.is_empty())
        .then(|| grade(claim, inputs, &Rosters { list: classical, families_needed: 1, noun: "classical roster" }))
        .filter(|c| !c.evidence.is_empty());
    Verdict {
        claim: claim.id.clone(),
        text: claim.text.clone(),
        tier: g.tier,
        tier_name: g.tier_name,
        evidence: g.evidence,
        first_unmet: g.first_unmet,
        classical: c,
    }
}

/// Grades one set of rosters.
fn grade(claim: &Claim, inputs: &Inputs, rosters: &Rosters) -> Grade {
    let mut evidence = Vec::new();
    // Tier 1: holds at baseline in at least one roster.
    let holding = match &claim.kind {
        ClaimKind::CriticalMass { .. } => inside_bracket(claim, rosters, inputs.critical_mass, &mut evidence),
        ClaimKind::ArmContrast { sign, .. } => contrast_significant(claim, *sign, rosters, inputs, &mut evidence),
        _ => holds_at_baseline(claim, inputs.idx, rosters, &mut evidence),
    };
    if holding.is_empty() {
        let unmet = if evidence.is_empty() {
            absent_reason(claim, inputs.idx, rosters)
        } else {
            match &claim.kind {
                ClaimKind::CriticalMass { .. } => {
                    format!("the critical mass falls inside the human bracket in no {}", rosters.noun)
                }
                ClaimKind::ArmContrast { .. } => {
                    format!("the contrast is significant in the human direction (after Holm) in no {}", rosters.noun)
                }
                _ => format!("holds at baseline in no {}", rosters.noun),
            }
        };
        return grade_of(0, evidence, Some(unmet));
    }
    // Tier 2: sign stability >= 0.8 at both levels and not reversed under C3, in enough families.
    let (robust, first_gap) = robust(claim, inputs.idx, &holding, &mut evidence);
    let families: BTreeSet<&str> = robust.iter().map(|(_, f)| f.as_str()).collect();
    if families.len() < rosters.families_needed {
        let unmet = match (&first_gap, families.is_empty()) {
            (Some(gap), true) => gap.clone(),
            _ => {
                let list = families.iter().copied().collect::<Vec<_>>().join(", ");
                let gap = first_gap.map(|g| format!("; first gap: {g}")).unwrap_or_default();
                format!(
                    "robust in {} model famil{} ({list}); three are needed{gap}",
                    families.len(),
                    if families.len() == 1 { "y" } else { "ies" }
                )
            }
        };
        return grade_of(1, evidence, Some(unmet));
    }
    // Tier 3: equivalence with the anchor in a robust roster, and a consistent transcript audit.
    let carriers = match matches_anchor(claim, inputs, &robust, rosters.noun, &mut evidence) {
        Ok(carriers) => carriers,
        Err(unmet) => return grade_of(2, evidence, Some(unmet)),
    };
    match crate::mechanism::audit_condition(claim, &carriers, inputs.audit, &mut evidence) {
        Ok(()) => grade_of(3, evidence, None),
        Err(unmet) => grade_of(2, evidence, Some(unmet)),
    }
}

/// Why no roster could be graded at Tier 1: no runs of the arm, or no run recording the metric.
fn absent_reason(claim: &Claim, idx: &Index, rosters: &Rosters) -> String {
    let ran = idx.all().iter().any(|r| {
        r.environment == claim.environment && r.arm == claim.arm && rosters.list.iter().any(|(m, _)| *m == r.roster)
    });
    let whose = if rosters.noun == "model" { "model " } else { "classical " };
    if !ran {
        return format!("no {whose}runs of {} / {} in the store", claim.environment, claim.arm);
    }
    match &claim.kind {
        ClaimKind::CriticalMass { .. } => "absent: no tipping sweep of this arm".into(),
        _ => format!(
            "absent: no {whose}run of {} / {} records `{}`",
            claim.environment,
            claim.arm,
            claim.effect_metric()
        ),
    }
}

/// Tier 1 of a critical-mass claim: the rosters whose critical mass in the claim's arm falls
/// inside the human bracket; one line of evidence per curve.
fn inside_bracket(
    claim: &Claim,
    rosters: &Rosters,
    rows: &[CriticalMassRow],
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    let mine: Vec<&CriticalMassRow> = rows
        .iter()
        .filter(|r| r.scope == "model" && r.arm == claim.arm && rosters.list.iter().any(|(m, _)| *m == r.name))
        .collect();
    for r in &mine {
        // A roster swept in several blocks names the block.
        let name = if mine.iter().filter(|o| o.name == r.name).count() > 1 {
            format!("{} ({})", r.name, r.block)
        } else {
            r.name.clone()
        };
        let line = match (r.largest_failure, r.critical) {
            (_, None) => format!("{name}: {}", r.status),
            (Some(f), Some(c)) => format!("{name}: held at {f:.3}, overturned from {c:.3}"),
            (None, Some(c)) => format!("{name}: overturned already at the smallest fraction tested, {c:.3}"),
        };
        let inside = r.inside == Some(true);
        let bracket = format!(" (human {}-{}){}", r.human_low, r.human_high, if inside { ": inside" } else { "" });
        evidence.push(if r.critical.is_some() { line + &bracket } else { line });
        if inside {
            holding.push((r.name.clone(), r.family.clone()));
        }
    }
    holding
}

/// Tier 1 of an arm contrast: the rosters whose contrast (family `punishment`) is significant
/// after Holm with a difference of sign `sign`; one line of evidence per contrast.
fn contrast_significant(
    claim: &Claim,
    sign: f64,
    rosters: &Rosters,
    inputs: &Inputs,
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for c in inputs.contrasts.iter().filter(|c| {
        c.family_of_tests == "punishment"
            && c.arm == claim.arm
            && c.metric == claim.metric
            && rosters.list.iter().any(|(m, _)| *m == c.model)
    }) {
        evidence.push(format!(
            "{}: Δ = {}, Cliff's δ = {}, Holm p = {}{}",
            c.model,
            fmt(c.delta),
            fmt(c.cliffs_delta),
            fmt(c.p_holm),
            c.excluded.as_ref().map(|e| format!(" (excluded: {e})")).unwrap_or_default()
        ));
        if c.significant && c.delta.is_some_and(|d| d * sign > 0.0) {
            holding.push((c.model.clone(), c.model_family.clone()));
        }
    }
    holding
}

/// Tier 1 of every other claim: the rosters in which the human effect holds at the canonical
/// baseline; one line of evidence per roster whose baseline records the effect's metric.
fn holds_at_baseline(
    claim: &Claim,
    idx: &Index,
    rosters: &Rosters,
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for (model, family) in &rosters.list {
        let v = values(&idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), claim.effect_metric());
        if v.is_empty() {
            continue;
        }
        if v.len() < MIN_RUNS {
            evidence.push(format!("{model}: absent at baseline ({} runs < {MIN_RUNS})", v.len()));
            continue;
        }
        let (statistic, holds) = match &claim.kind {
            ClaimKind::Direction { sign, margin, .. } => {
                let m = median(&v).unwrap_or(0.0);
                (format!("median {}", fmt(Some(m))), m * sign >= *margin)
            }
            _ => {
                let m = mean(&v).unwrap_or(0.0);
                (format!("mean {}", fmt(Some(m))), crate::effect::kept(claim, m))
            }
        };
        if holds {
            holding.push((model.clone(), family.clone()));
            evidence.push(format!("{model}: holds at baseline ({statistic}, {} runs)", v.len()));
        } else {
            evidence.push(format!("{model}: does not hold at baseline ({statistic}, {} runs)", v.len()));
        }
    }
    holding
}

/// Tier 2: the `holding` rosters that keep the sign in at least 80 % of the baseline and the
/// cells of each level and are not reversed under C3, and the first gap met.
fn robust(
    claim: &Claim,
    idx: &Index,
    holding: &[(String, String)],
    evidence: &mut Vec<String>,
) -> (Vec<(String, String)>, Option<String>) {
    let mut robust = Vec::new();
    let mut first_gap: Option<String> = None;
    for (model, family) in holding {
        let mut ok = true;
        for level in LEVELS {
            let l = level_summary(claim, idx, model, level);
            let Some(s) = l.s else {
                ok = false;
                let short = if l.cells == 0 {
                    format!("no {level}-level cell run")
                } else {
                    format!("no {level}-level cell with {SIGN_MIN_RUNS} runs")
                };
                evidence.push(format!("{model}: {short}"));
                first_gap.get_or_insert(format!("sign stability at the {level} level: {short} for {model}"));
                continue;
            };
            evidence
                .push(format!("{model}: sign stability {s:.2} over the baseline and {} {level}-level cells", l.judged));
            if s < STABLE {
                ok = false;
                first_gap.get_or_insert(format!("sign stability {s:.2} < 0.8 at the {level} level for {model}"));
            }
        }
        match cell_effect(claim, idx, model, "baseline", "C3").filter(|e| e.runs >= SIGN_MIN_RUNS) {
            None => {
                ok = false;
                evidence.push(format!("{model}: not run under the divergent payoffs (C3)"));
                first_gap.get_or_insert(format!("not reversed under C3: not tested for {model}"));
            }
            Some(e) if reversed(claim, e.value) => {
                ok = false;
                evidence.push(format!("{model}: reversed under divergent payoffs (C3): {}", fmt(Some(e.value))));
                first_gap.get_or_insert(format!("reversed under C3 for {model}"));
            }
            Some(_) => {}
        }
        if ok {
            robust.push((model.clone(), family.clone()));
        }
    }
    (robust, first_gap)
}

/// Tier 3's first condition: a robust roster matches the anchor on the claim's outcome; the
/// rosters that do (those that carry the claim).
fn matches_anchor(
    claim: &Claim,
    inputs: &Inputs,
    robust: &[(String, String)],
    noun: &str,
    evidence: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let anchor = claim.kind.anchor();
    let value = inputs.anchors.get(anchor).map(|a| &a.value);
    if matches!(value, Some(AnchorValue::Unrecorded)) {
        return Err(format!("equivalence with the anchor: the anchor value is not on record ({anchor})"));
    }
    let mut reasons = Vec::new();
    let mut carriers = Vec::new();
    for (model, _) in robust {
        let m = match &claim.kind {
            ClaimKind::Direction { .. } => {
                return Err(format!("equivalence with the anchor: the anchor ({anchor}) is a direction, not a value"));
            }
            // The anchor of a rate claim says what always happens in people (a convention
            // always forms): matched when it happened in every baseline run.
            ClaimKind::Majority { .. } => {
                let v =
                    values(&inputs.idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), &claim.metric);
                let held = v.iter().filter(|x| **x >= 0.5).count();
                if v.len() < MIN_RUNS {
                    Match::Absent(format!("{} baseline runs < {MIN_RUNS}", v.len()))
                } else if held == v.len() {
                    Match::Yes(format!("in all {} baseline runs, as in the anchor (always)", v.len()))
                } else {
                    Match::No(format!("in {held} of {} baseline runs; the anchor: always", v.len()))
                }
            }
            // The bracket was Tier 1's test: a robust roster is inside it.
            ClaimKind::CriticalMass { .. } => Match::Yes("the critical mass falls inside the human bracket".into()),
            ClaimKind::Distance { max_distance, .. } => {
                match crate::wasserstein::claim_row(claim, inputs.anchors, inputs.idx, model) {
                    Some(r) => {
                        let text = format!(
                            "distance {} (95 % CI [{}, {}]) against at most {}",
                            fmt(r.distance),
                            fmt(r.ci_low),
                            fmt(r.ci_high),
                            fmt(Some(*max_distance))
                        );
                        match r.verdict.as_str() {
                            "matches" => Match::Yes(text),
                            "does not match" => Match::No(text),
                            other => Match::Absent(other.into()),
                        }
                    }
                    None => Match::Absent("no baseline run holds choices".into()),
                }
            }
            _ => tost_match(claim, inputs.anchors, inputs.idx, model)
                .unwrap_or_else(|| Match::Absent("no value to test against".into())),
        };
        match m {
            Match::Yes(t) => {
                carriers.push(model.clone());
                evidence.push(format!("{model}: matches the anchor: {t}"));
            }
            Match::No(t) => {
                evidence.push(format!("{model}: does not match the anchor: {t}"));
                reasons.push(model.clone());
            }
            Match::Absent(t) => {
                evidence.push(format!("{model}: no match with the anchor tested: {t}"));
                reasons.push(model.clone());
            }
        }
    }
    if !carriers.is_empty() {
        Ok(carriers)
    } else {
        Err(format!("equivalence with the anchor in a robust {noun}: none of {} matches", reasons.join(", ")))
    }
}

#[cfg(test)]
mod tests;
