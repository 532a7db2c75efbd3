//! The certification ladder: one verdict per claim, as the paper ("Benchmarking large language
//! model agent societies against human behavioural distributions") defines it:
//!
//! > "A claim reaches Tier 1, exploratory, if it holds at baseline in at least one model. It
//! > reaches Tier 2, robust, if it additionally survives the perturbation library — sign
//! > stability of at least 0.8 across cells in at least three model families — and is not
//! > reversed under the divergent-payoff variant. It reaches Tier 3, transferable, only if it
//! > additionally matches the human anchor by the equivalence test rather than merely in
//! > direction, and if the transcript audit is consistent with the mechanism recorded in the
//! > human experiment."
//!
//! How Agora reads it:
//! - Tier 1 (exploratory): the claim's own test at the canonical baseline (C0), in at least
//!   one model with at least three baseline runs: inside the corridor (a range claim: the mean
//!   in the anchor's range), within the equivalence margin (a "matches" claim: TOST, the 90 %
//!   interval inside the margin; a distance claim: the bootstrap upper end below its bound),
//!   the directional margin (the median run-level effect clearing 0.10), majority formation (a
//!   rate claim), a significant arm contrast in the human direction after Holm, or a critical
//!   mass inside the human bracket.
//! - Tier 2 (robust): additionally, in at least three model families, a model where the claim
//!   holds keeps its environment's canonical human effect ([`crate::claims::CanonicalEffect`])
//!   in at least 80 % of the baseline and the cells of BOTH levels (representation and
//!   design), each cell with at least three runs, and the effect is not reversed under the
//!   divergent payoffs (C3, its baseline cell with at least three runs). The paper names a
//!   canonical effect for public goods, the repeated dilemma and the naming game only; the
//!   bargaining battery and the 11–20 game hold two runs per perturbation cell, "reported as
//!   descriptive throughout, because two runs cannot support an inferential test", so their
//!   claims stop at Tier 1 and say so. The paper does not say whether S is counted over the
//!   models where the claim holds or over every model; Agora counts it over those where the
//!   claim holds (a claim survives where it exists), and the replay of the paper's results
//!   (`agora replicate --verdicts`) reproduces the printed verdicts under this reading.
//! - Tier 3 (transferable): additionally, equivalence with the anchor on the claim's outcome
//!   in a robust model, and a transcript audit consistent with the human mechanism
//!   ([`crate::mechanism`]: every try of the claim's family counted, Holm). Where Tier 1's
//!   test was already that equivalence (an equivalence or distance claim, or any claim graded
//!   against the lab's own people), the verdict says the condition is Tier 1's own test. A
//!   direction claim climbs through equivalence with a human value where one is on record (the
//!   lab's own people, or the claim's `equivalent` point anchor); where none is, the verdict
//!   says "not tested: no human value on record" — never an invented value. A critical mass
//!   matches when the whole interval the sweep pins it to lies inside the human bracket.
//! - A claim nothing could be tested on (its anchor's value is not on record, too few runs)
//!   reads "not tested: …", never "holds in no model".
//!
//! Classical rosters are not models: they are graded apart, in a family of their own (one
//! family suffices there), and never counted towards the three model families.
//!
//! A verdict names the first condition of the next tier that is not met.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{CanonicalEffect, Claim, ClaimKind};
use crate::common::{fmt, is_classical, mean, median, values, Index, LEVELS, MIN_RUNS};
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
    /// The lab's own human anchors, where the analysis was asked to grade against them.
    pub human: Option<&'a crate::human_anchors::HumanAnchors>,
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
        _ => holds_at_baseline(claim, inputs, rosters, &mut evidence),
    };
    if holding.is_empty() {
        let untested: Vec<&String> = evidence
            .iter()
            .filter(|e| e.contains(NOT_TESTED_AT_BASELINE) || e.contains(": absent at baseline ("))
            .collect();
        let unmet = if evidence.is_empty() {
            absent_reason(claim, inputs.idx, rosters)
        } else if untested.len() == evidence.len() {
            // Nothing was tested (the anchor's value is not on record, say): that is its own
            // reason, never "holds in no model".
            let why = untested
                .iter()
                .find_map(|e| e.split_once(NOT_TESTED_AT_BASELINE).map(|(_, w)| w.strip_suffix(')').unwrap_or(w)))
                .or_else(|| {
                    untested[0]
                        .split_once(": absent at baseline (")
                        .map(|(_, w)| w.strip_suffix(')').unwrap_or(w))
                        .map(|w| if w.contains(" runs < ") { "too few baseline runs" } else { w })
                })
                .unwrap_or("");
            format!("not tested: {why}")
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
    // Tier 2: the environment's canonical effect keeps its sign in >= 0.8 of the baseline and
    // the cells at both levels and is not reversed under C3, in enough families.
    let Some(effect) = inputs.idx.declared().effect(&claim.environment) else {
        return grade_of(1, evidence, Some(no_canonical_effect(claim, inputs.idx, &holding)));
    };
    let (robust, first_gap) = robust(effect, inputs.idx, &holding, &mut evidence);
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
    let mechanism = match &claim.mechanism {
        Some(crate::claims::Mechanism::Dynamics { control_arm, time_metric, max_speed_ratio, .. }) => {
            dynamics_condition(
                claim,
                &carriers,
                inputs,
                rosters,
                (control_arm, time_metric, *max_speed_ratio),
                &mut evidence,
            )
        }
        _ => crate::mechanism::audit_condition(claim, &carriers, inputs.idx.declared(), inputs.audit, &mut evidence),
    };
    match mechanism {
        Ok(()) => grade_of(3, evidence, None),
        Err(unmet) => grade_of(2, evidence, Some(unmet)),
    }
}

/// How an evidence line says that a roster's baseline could not be tested.
const NOT_TESTED_AT_BASELINE: &str = ": not tested at baseline (";

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
        _ => format!("absent: no {whose}run of {} / {} records `{}`", claim.environment, claim.arm, claim.metric),
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

/// Tier 1 of every other claim: the rosters in which the claim's own test holds at the
/// canonical baseline; one line of evidence per roster whose baseline records the metric.
fn holds_at_baseline(
    claim: &Claim,
    inputs: &Inputs,
    rosters: &Rosters,
    evidence: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut holding = Vec::new();
    for (model, family) in &rosters.list {
        let v = values(&inputs.idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), &claim.metric);
        if v.is_empty() {
            continue;
        }
        if v.len() < MIN_RUNS {
            evidence.push(format!("{model}: absent at baseline ({} runs < {MIN_RUNS})", v.len()));
            continue;
        }
        let human = inputs.human.map(|h| h.of(&claim.id)).filter(|h| !h.is_empty());
        let test = match &claim.kind {
            // A claim with the lab's own human anchor is tested against its runs, whatever its kind.
            _ if human.is_some() => anchor_test(claim, inputs, model),
            ClaimKind::Direction { sign, margin, .. } => {
                let m = median(&v).unwrap_or(0.0);
                let text =
                    format!("median run-level effect {} against a margin of {}", fmt(Some(m)), fmt(Some(*margin)));
                if m * sign >= *margin {
                    Match::Yes(text)
                } else {
                    Match::No(text)
                }
            }
            ClaimKind::Majority { .. } => {
                let held = v.iter().filter(|x| **x >= 0.5).count();
                let text = format!("in {held} of {} runs", v.len());
                if 2 * held > v.len() {
                    Match::Yes(text)
                } else {
                    Match::No(text)
                }
            }
            ClaimKind::Range { anchor } => match inputs.anchors.get(anchor).map(|a| &a.value) {
                Some(AnchorValue::Range { low, high }) => {
                    let m = mean(&v).unwrap_or(f64::NAN);
                    let text = format!("mean {} against the corridor {low}-{high}", fmt(Some(m)));
                    if (*low..=*high).contains(&m) {
                        Match::Yes(text)
                    } else {
                        Match::No(text)
                    }
                }
                _ => Match::Absent(format!("the anchor {anchor} is not a range on record")),
            },
            _ => anchor_test(claim, inputs, model),
        };
        match test {
            Match::Yes(t) => {
                holding.push((model.clone(), family.clone()));
                evidence.push(format!("{model}: holds at baseline ({t}, {} runs)", v.len()));
            }
            Match::No(t) => evidence.push(format!("{model}: does not hold at baseline ({t}, {} runs)", v.len())),
            Match::Absent(t) => evidence.push(format!("{model}{NOT_TESTED_AT_BASELINE}{t})")),
        }
    }
    holding
}

/// Why a claim that holds at baseline stops at Tier 1 in an environment without a canonical
/// effect: its perturbation cells hold two runs (the one-shot games), or the paper names no
/// effect for it.
fn no_canonical_effect(claim: &Claim, idx: &Index, holding: &[(String, String)]) -> String {
    let most_runs = holding
        .iter()
        .flat_map(|(model, _)| {
            LEVELS.iter().flat_map(move |level| {
                idx.cells_at(model, &claim.environment, &claim.arm, level).into_iter().map(move |cell| {
                    values(&idx.select(model, &claim.environment, &claim.arm, &cell, "C0"), &claim.metric).len()
                })
            })
        })
        .max();
    match most_runs {
        Some(n) if n < MIN_RUNS => "two runs per cell: descriptive only".into(),
        _ => format!(
            "{} has no canonical human effect for sign stability (the paper names one for public goods, \
             the repeated prisoner's dilemma and the naming game)",
            claim.environment
        ),
    }
}

/// Tier 2: the `holding` rosters in which the environment's canonical effect keeps its sign in
/// at least 80 % of the baseline and the cells of each level (cells of three runs or more) and
/// is not reversed under C3, and the first gap met.
fn robust(
    effect: &CanonicalEffect,
    idx: &Index,
    holding: &[(String, String)],
    evidence: &mut Vec<String>,
) -> (Vec<(String, String)>, Option<String>) {
    let mut robust = Vec::new();
    let mut first_gap: Option<String> = None;
    for (model, family) in holding {
        let mut ok = true;
        for level in LEVELS {
            let l = level_summary(effect, idx, model, level);
            let Some(s) = l.s else {
                ok = false;
                let short = match cell_effect(effect, idx, model, "baseline", "C0") {
                    Some(b) if b.runs >= MIN_RUNS => {
                        if l.cells == 0 {
                            format!("no {level}-level cell run")
                        } else {
                            format!("no {level}-level cell with {MIN_RUNS} runs")
                        }
                    }
                    _ => {
                        format!("the canonical effect ({}) rests on fewer than {MIN_RUNS} baseline runs", effect.metric)
                    }
                };
                evidence.push(format!("{model}: {short}"));
                first_gap.get_or_insert(format!("sign stability at the {level} level: {short} for {model}"));
                continue;
            };
            evidence.push(format!(
                "{model}: {} keeps its sign in {s:.2} of the baseline and {} {level}-level cells",
                effect.text, l.judged
            ));
            if s < STABLE {
                ok = false;
                first_gap.get_or_insert(format!("sign stability {s:.2} < 0.8 at the {level} level for {model}"));
            }
        }
        match cell_effect(effect, idx, model, "baseline", "C3").filter(|e| e.runs >= MIN_RUNS) {
            None => {
                ok = false;
                evidence.push(format!("{model}: not run under the divergent payoffs (C3) with {MIN_RUNS} runs"));
                first_gap.get_or_insert(format!("not reversed under C3: not tested for {model}"));
            }
            Some(e) if reversed(effect, e.value) => {
                ok = false;
                evidence.push(format!(
                    "{model}: {} reversed under divergent payoffs (C3): {}",
                    effect.text,
                    fmt(Some(e.value))
                ));
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

/// The claim's test against its anchor's value for one model at baseline: TOST for a point or
/// a range (the 90 % interval inside the margin or the range), the bootstrap distance for a
/// distribution.
fn anchor_test(claim: &Claim, inputs: &Inputs, model: &str) -> Match {
    if let Some(human) = inputs.human.map(|h| h.of(&claim.id)).filter(|h| !h.is_empty()) {
        return crate::human_anchors::human_match(&human, claim, inputs.idx, model);
    }
    match &claim.kind {
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
    }
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
    let human = inputs.human.map(|h| h.of(&claim.id)).filter(|h| !h.is_empty());
    // Where Tier 1's test of the claim was already equivalence with this anchor, Tier 3's first
    // condition is that same test by the paper's definition: the verdict says so rather than
    // presenting it as a new check.
    let same_as_tier_1 = human.is_some()
        || matches!(
            claim.kind,
            ClaimKind::Equivalence { .. } | ClaimKind::Distance { .. } | ClaimKind::TypeShares { .. }
        );
    let note = if same_as_tier_1 {
        " (Tier 1's own test: for this claim equivalence with the anchor is the claim)"
    } else {
        ""
    };
    for (model, _) in robust {
        let m = match &claim.kind {
            // A direction is equivalent to a human value only where one is on record: the lab's
            // own people (`--human-anchors`), or the claim's `equivalent` anchor with a value.
            ClaimKind::Direction { .. } if human.is_some() => anchor_test(claim, inputs, model),
            ClaimKind::Direction { equivalent: Some(eq), .. } => match inputs.anchors.get(eq).map(|a| &a.value) {
                Some(AnchorValue::Unrecorded) | None => {
                    return Err(format!("equivalence with the anchor: not tested: no human value on record ({eq})"));
                }
                Some(_) => {
                    let as_value =
                        Claim { kind: ClaimKind::Equivalence { anchor: eq.clone(), margin: None }, ..claim.clone() };
                    tost_match(&as_value, inputs.anchors, inputs.idx, model)
                        .unwrap_or_else(|| Match::Absent(format!("the anchor {eq} is not a point value")))
                }
            },
            ClaimKind::Direction { .. } => {
                return Err(format!(
                    "equivalence with the anchor: not tested: no human value on record ({anchor} records a direction \
                     only; a lab's own people, `--human-anchors`, or a claim's `equivalent` anchor would give one)"
                ));
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
            // Tier 1 read the critical mass as a point; equivalence needs the whole interval the
            // sweep pins it to — above the largest fraction that held, up to the smallest that
            // overturned — inside the human bracket.
            ClaimKind::CriticalMass { .. } => critical_mass_interval(claim, model, inputs.critical_mass),
            _ => anchor_test(claim, inputs, model),
        };
        match m {
            Match::Yes(t) => {
                carriers.push(model.clone());
                evidence.push(format!("{model}: matches the anchor: {t}{note}"));
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

/// Tier 3's equivalence for a critical mass: the sweep pins the critical mass to the interval
/// (largest fraction that held, smallest that overturned]; it matches the human bracket when
/// that whole interval lies inside it (up to rounding), and is not tested where the sweep did
/// not bracket it from below.
fn critical_mass_interval(claim: &Claim, model: &str, rows: &[CriticalMassRow]) -> Match {
    const EPS: f64 = 1e-9;
    let Some(r) = rows.iter().find(|r| r.scope == "model" && r.arm == claim.arm && r.name == model) else {
        return Match::Absent("no tipping sweep of this roster".into());
    };
    match (r.largest_failure, r.critical) {
        (Some(f), Some(c)) => {
            let text = format!(
                "the critical mass lies in ({f:.3}, {c:.3}] (held at {f:.3}, overturned from {c:.3}) against the human \
                 bracket {}-{}",
                r.human_low, r.human_high
            );
            if f >= r.human_low - EPS && c <= r.human_high + EPS {
                Match::Yes(format!("{text}: inside"))
            } else {
                Match::No(format!("{text}: not inside"))
            }
        }
        (None, Some(c)) => Match::No(format!(
            "overturned already at the smallest fraction tested, {c:.3}: the sweep does not bracket the critical mass \
             from below"
        )),
        _ => Match::Absent(r.status.clone()),
    }
}

/// Tier 3's mechanism where the claim names it as dynamics (the naming game's negotiation): in
/// a carrier, the outcome still holds in the majority of the control arm's baseline runs, and
/// its median time lies strictly within `ratio` of the classical rosters' median time in the
/// claim's arm. `Ok` when one carrier shows both.
fn dynamics_condition(
    claim: &Claim,
    carriers: &[String],
    inputs: &Inputs,
    rosters: &Rosters,
    (control, time_metric, ratio): (&str, &str, f64),
    evidence: &mut Vec<String>,
) -> Result<(), String> {
    const HEAD: &str = "the mechanism's dynamics";
    if rosters.families_needed == 1 {
        return Err(format!("{HEAD}: the classical rosters are the reference dynamics, not tested against themselves"));
    }
    let idx = inputs.idx;
    let reference: Vec<f64> = idx
        .models()
        .iter()
        .filter(|(_, f)| is_classical(f))
        .flat_map(|(m, _)| values(&idx.select(m, &claim.environment, &claim.arm, "baseline", "C0"), time_metric))
        .collect();
    let Some(classical) = median(&reference) else {
        return Err(format!(
            "{HEAD}: not tested: no classical run of {} / {} records `{time_metric}` in the store to compare the \
             pace with",
            claim.environment, claim.arm
        ));
    };
    let mut first: Option<String> = None;
    for model in carriers {
        let shown = (|| {
            let c = values(&idx.select(model, &claim.environment, control, "baseline", "C0"), &claim.metric);
            if c.len() < MIN_RUNS {
                return Err(format!("{model}: the control arm ({control}) has {} baseline runs < {MIN_RUNS}", c.len()));
            }
            let held = c.iter().filter(|x| **x >= 0.5).count();
            if 2 * held <= c.len() {
                return Err(format!(
                    "{model}: the outcome holds in {held} of {} runs of the control arm ({control}): the shortcut, \
                     not negotiation",
                    c.len()
                ));
            }
            let times = values(&idx.select(model, &claim.environment, &claim.arm, "baseline", "C0"), time_metric);
            let Some(own) = median(&times).filter(|t| *t > 0.0) else {
                return Err(format!("{model}: no baseline run records `{time_metric}`"));
            };
            let r = classical / own;
            let pace = if r >= 1.0 {
                format!("{r:.2} times faster than")
            } else {
                format!("{:.2} times slower than", 1.0 / r)
            };
            let line = format!(
                "{model}: holds in {held} of {} control runs ({control}); median {time_metric} {} against the \
                 classical dynamics' {} ({} runs): {pace} the classical dynamics",
                c.len(),
                fmt(Some(own)),
                fmt(Some(classical)),
                reference.len()
            );
            if r < ratio && r > 1.0 / ratio {
                Ok(line)
            } else {
                Err(format!("{line}, outside a factor of {ratio}"))
            }
        })();
        match shown {
            Ok(line) => {
                evidence.push(format!("mechanism shown: {line}"));
                return Ok(());
            }
            Err(gap) => {
                evidence.push(format!("mechanism not shown: {gap}"));
                first.get_or_insert(gap);
            }
        }
    }
    Err(format!("{HEAD}: {}", first.unwrap_or_else(|| "no model carries the claim".into())))
}
