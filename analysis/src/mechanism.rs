//! Tier 3's transcript audit: whether the transcripts show the human mechanism a claim names.
//!
//! A claim names its mechanism as stated values ([`Mechanism`]). The evidence is read from the
//! audit's tables in the store, only where `agora audit` wrote them (a store without
//! `audit_responses` has no audit, and the ladder says so), and only from the claim's own
//! environment, arm and cell ([`CLAIM_CELL`]: claims hold at the baseline; reasoning elicited
//! in another cell, such as step-by-step, is another condition):
//! - the coder-validation gate's decision (`audit_gate`, [`crate::evidence`]), per coder,
//!   codebook and model, as the audit recorded it when the codes or the labels last changed;
//! - the occurrence of each value: the share of the model's coded responses in the claim's
//!   environment, arm, cell and role (the role of the response's seat in `decisions`) that
//!   state it, with its 95 % Wilson interval;
//! - the dependency φ of the role's action indicator on the value (`audit_dependency`, the
//!   linear probability model with prompt fixed effects, CR1 by prompt, from replicates), the
//!   row of the claim's arm and cell;
//! - the intervention effect τ of the value on the indicator (`audit_faithfulness`, written by
//!   `agora audit prefill`, design [`DESIGN_READ`]: the model's own reasoning kept, one
//!   sentence of the value inserted, against every sentence of it deleted), every stored
//!   estimate of the claim's arm and cell, whatever its sample seed.
//!
//! # The rule
//! A **try** is one carrier model (robust, and matching the anchor), one validated coder, one
//! value of the mechanism (only the claim's `primary` value where it declares one) and one
//! stored intervention estimate (or none). A try meets the mechanism when
//! 1. the value is stated: the Wilson 95 % lower bound of its share of the coded responses
//!    reaches [`MIN_STATED_SHARE`], and the coder's recall of it rests on at least
//!    [`MIN_CODE_SUPPORT`] human-referenced sentences;
//! 2. φ has the mechanism's sign with its 95 % bound on that side clear of zero;
//! 3. τ has the same sign with its 95 % bound on that side clear of zero;
//! 4. τ agrees with φ in size: τ's 95 % interval reaches [φ̂ / [`SIZE_RATIO`], φ̂ · `SIZE_RATIO`];
//! 5. its p — the larger of φ's and τ's one-sided p (an intersection–union test of "both
//!    move the indicator") — stays at or below [`ALPHA_FAMILY`] after Holm's adjustment over
//!    every try of the claim's family (a try stopped before a test counts with p = 1).
//!
//! Tier 3 needs one try that meets all five. The dependency alone does not suffice: "Auditing
//! LLM Behavior with SUVA: From Stated Values to Actions" shows that one hidden cause setting
//! both the stated value and the action (its Model D) produces the same dependency as reasoning
//! that drives the action; only an intervention on the reasoning tells them apart, and its
//! faithful model has the two estimates agree "in sign and roughly in size". Without the Holm
//! family, a model with no mechanism passes by chance whenever one of many tries clears its
//! own level. Otherwise the verdict names the unmet condition of the try that came closest.

use std::collections::BTreeMap;
use std::path::Path;

use agora_records::reads::evidence as reads;
use rusqlite::Connection;

use crate::claims::{Claim, Mechanism};
use crate::common::fmt;
use crate::declared::Declared;
use crate::error::AnalysisError;
use crate::evidence::{has_table, read_gate, Status, Validation, MIN_CODE_SUPPORT};
use crate::outcomes::open;

/// The Tier 3 condition no claim meets when the store holds no transcript audit.
pub const AUDIT_MISSING: &str =
    "transcript audit consistent with the human mechanism: missing (no transcript audit in the store; run `agora audit`)";

pub use agora_records::reads::evidence::CoderKey;

/// One coded response as the mechanism reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct CodedResponse {
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The arm.
    pub arm: String,
    /// The perturbation cell.
    pub cell: String,
    /// The role of the response's seat, where `decisions` records one.
    pub role: Option<String>,
    /// The coder and codebook.
    pub key: CoderKey,
    /// The value codes the response states.
    pub stated: Vec<String>,
}

/// The level of the audit's intervals: 95 % (the dependency estimate, its Wilson bounds).
pub const ALPHA: f64 = 0.05;

pub use agora_records::reads::evidence::{DependencyEstimate, InterventionEstimate};

/// The audit's evidence in a store, as Tier 3 reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuditEvidence {
    /// Coded responses (those whose coder output validated).
    pub responses: Vec<CodedResponse>,
    /// The gate's decision per coder and codebook, per model.
    pub gates: BTreeMap<CoderKey, Vec<Validation>>,
    /// The dependency estimates.
    pub dependency: Vec<DependencyEstimate>,
    /// The intervention estimates (`agora audit prefill`), where the store holds any.
    pub intervention: Vec<InterventionEstimate>,
}

/// Reads the audit's evidence from a store (of one study, or of all); `None` where the store
/// holds no audit (no `audit_responses` table).
pub fn read(path: &Path, study: Option<&str>) -> Result<Option<AuditEvidence>, AnalysisError> {
    let conn = open(path)?;
    read_conn(&conn, study).map_err(|source| AnalysisError::Store { path: path.to_path_buf(), source })
}

fn read_conn(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Option<AuditEvidence>> {
    if !has_table(conn, "audit_responses")? {
        return Ok(None);
    }
    let mut ev = AuditEvidence::default();
    // Each response's role is the role of its own decision: the seat's slot-th decision in step
    // order (a seat changes role between the games of the bargaining battery).
    let mut roles: BTreeMap<(i64, i64), Vec<String>> = BTreeMap::new();
    for (run, seat, role) in reads::audited_roles(conn)? {
        roles.entry((run, seat)).or_default().push(role);
    }
    ev.responses = reads::coded_responses(conn, study)?
        .into_iter()
        .map(|r| {
            let stated = serde_json::from_str::<BTreeMap<String, i64>>(&r.values_json)
                .map(|m| m.into_iter().filter(|(_, v)| *v != 0).map(|(k, _)| k).collect())
                .unwrap_or_default();
            let (run, seat, slot) = (r.run_id, r.seat, r.slot);
            let role = roles.get(&(run, seat)).and_then(|v| usize::try_from(slot).ok().and_then(|k| v.get(k))).cloned();
            CodedResponse {
                model: r.model,
                environment: r.environment,
                arm: r.arm,
                cell: r.cell,
                role,
                key: r.key,
                stated,
            }
        })
        .collect();
    let keys: std::collections::BTreeSet<CoderKey> = ev.responses.iter().map(|r| r.key.clone()).collect();
    for key in keys {
        let gate = read_gate(conn, key.borrowed())?;
        ev.gates.insert(key, gate);
    }
    if let Some(dependency) = reads::dependency(conn, study)? {
        ev.dependency = dependency;
    }
    // Every stored estimate is read (every sample seed): each is a try of the claim's family.
    if let Some(intervention) = reads::intervention(conn)? {
        ev.intervention = intervention;
    }
    Ok(Some(ev))
}

/// The cell a claim is graded in: claims hold at the canonical baseline, and Tier 3's evidence
/// comes from that cell only (reasoning elicited in another cell is another condition: the SUVA
/// audit paper reports that removing reasoning changes preferences in model-specific ways).
pub const CLAIM_CELL: &str = "baseline";

/// The one-sided level of Tier 3's audit, familywise: every try the ladder makes for a claim
/// (model × mechanism value × validated coder × stored intervention estimate) is one hypothesis
/// of a Holm family, and a try passes only with its Holm-adjusted p at or below this level (the
/// one-sided 2.5 % of a 95 % interval's bound).
pub const ALPHA_FAMILY: f64 = 0.025;

/// The least share of the coded responses in the claim's cell that must state a value before
/// it counts as stated: the Wilson 95 % lower bound of the share must reach it (Agora's choice;
/// the SUVA audit paper reads occurrence as a share, not as one mention).
pub const MIN_STATED_SHARE: f64 = 0.05;

/// How far τ may sit from φ and still "agree in size": τ's 95 % interval must reach the band
/// [φ̂ / SIZE_RATIO, φ̂ · SIZE_RATIO] (Agora's criterion for the SUVA audit paper's "in sign and
/// roughly in size").
pub const SIZE_RATIO: f64 = 2.0;

/// The intervention design the ladder reads: the source's insert arm (the model's own reasoning
/// kept identical, one sentence of the value inserted) against every sentence of it deleted.
pub const DESIGN_READ: &str = "source";

/// How far one try got towards showing the mechanism, and what stopped it.
#[derive(Clone, Debug)]
struct Shortfall {
    /// 0: no audit of its text in the claim's cell; 1: no validated coder; 2: no value stated;
    /// 3: no dependency; 4: no intervention effect; 5: τ and φ differ in size; 6: not
    /// significant once the tries are counted.
    stage: u8,
    condition: String,
}

/// One try of the family: a model, coder, value and (where one is stored) intervention estimate.
struct Try {
    model: String,
    /// Everything but the familywise level met: the evidence line; or what stopped it.
    met: Result<String, Shortfall>,
    /// The intersection–union p of the try (the larger of φ's and τ's one-sided p); 1 where a
    /// test could not be made.
    p: f64,
}

/// Tier 3's audit condition for a claim carried by `carriers` (robust models that match the
/// anchor): `Ok` when a try shows the mechanism at the familywise level, with a line of evidence
/// per carrier.
pub(crate) fn audit_condition(
    claim: &Claim,
    carriers: &[String],
    declared: &Declared,
    audit: Option<&AuditEvidence>,
    evidence: &mut Vec<String>,
) -> Result<(), String> {
    const HEAD: &str = "transcript audit consistent with the human mechanism";
    let (role, values, sign) = match &claim.mechanism {
        None => return Err(format!("{HEAD}: the claim names no mechanism as stated values")),
        Some(Mechanism::Unnamed { why }) => return Err(format!("{HEAD}: the claim names no mechanism ({why})")),
        Some(Mechanism::Dynamics { .. }) => {
            return Err(format!("{HEAD}: the claim names its mechanism as dynamics, not as stated values"))
        }
        Some(Mechanism::Values { role, values, sign, primary, .. }) => {
            // A value declared for the claim narrows the family to it; models and coders stay.
            let tried: Vec<String> = match primary {
                Some(p) => vec![p.clone()],
                None => values.clone(),
            };
            (role, tried, *sign)
        }
    };
    let Some(indicator) = declared.indicator(&claim.environment, role) else {
        return Err(format!(
            "{HEAD}: {} / {role} has no action indicator ({})",
            claim.environment,
            declared.left_out_reason(&claim.environment, role)
        ));
    };
    let indicator = indicator.name.as_str();
    let Some(audit) = audit else { return Err(AUDIT_MISSING.into()) };
    let mut tries = Vec::new();
    for model in carriers {
        tries.extend(model_tries(claim, model, role, indicator, &values, sign, audit));
    }
    let k = tries.len();
    let ps: Vec<f64> = tries.iter().map(|t| t.p).collect();
    let adjusted = crate::stats::holm::holm(&ps).unwrap_or_else(|_| vec![1.0; k]);
    let family = format!("{k} tr{} in the claim's family", if k == 1 { "y" } else { "ies" });
    let mut best: Option<Shortfall> = None;
    let mut shown = None;
    for (t, adj) in tries.iter().zip(&adjusted) {
        match &t.met {
            Ok(line) if *adj <= ALPHA_FAMILY => {
                evidence.push(format!(
                    "{}: mechanism shown: {line}; Holm-adjusted p {} ≤ {ALPHA_FAMILY} over {family}",
                    t.model,
                    fmt(Some(*adj))
                ));
                shown.get_or_insert(());
            }
            Ok(line) => {
                let s = Shortfall {
                    stage: 6,
                    condition: format!(
                        "{}: {line}; but not significant once every try is counted: Holm-adjusted p {} > {ALPHA_FAMILY} \
                         over {family}",
                        t.model,
                        fmt(Some(*adj))
                    ),
                };
                evidence.push(format!("{}: mechanism not shown: {}", t.model, s.condition));
                keep(&mut best, s);
            }
            Err(s) => {
                evidence.push(format!("{}: mechanism not shown: {}", t.model, s.condition));
                keep(&mut best, s.clone());
            }
        }
    }
    if shown.is_some() {
        return Ok(());
    }
    Err(format!("{HEAD}: {}", best.map_or_else(|| "no model carries the claim".into(), |b| b.condition)))
}

fn keep(best: &mut Option<Shortfall>, s: Shortfall) {
    if best.as_ref().is_none_or(|b| s.stage > b.stage) {
        *best = Some(s);
    }
}

fn stop(model: &str, stage: u8, condition: String) -> Try {
    Try { model: model.into(), met: Err(Shortfall { stage, condition }), p: 1.0 }
}

/// Every try of `model` for the claim: one per validated coder, value and stored intervention
/// estimate (one with p = 1 where an earlier condition stops it), each with its evidence.
fn model_tries(
    claim: &Claim,
    model: &str,
    role: &str,
    indicator: &str,
    values: &[String],
    sign: f64,
    audit: &AuditEvidence,
) -> Vec<Try> {
    let of_claim = |r: &&CodedResponse| {
        r.model == model
            && r.environment == claim.environment
            && r.arm == claim.arm
            && r.role.as_deref().is_none_or(|x| x == role)
    };
    let elsewhere: std::collections::BTreeSet<&str> =
        audit.responses.iter().filter(of_claim).filter(|r| r.cell != CLAIM_CELL).map(|r| r.cell.as_str()).collect();
    let mine: Vec<&CodedResponse> = audit.responses.iter().filter(of_claim).filter(|r| r.cell == CLAIM_CELL).collect();
    if mine.is_empty() {
        let condition = if elsewhere.is_empty() {
            format!("no audit in the store of {model}'s {role} text in {} / {}", claim.environment, claim.arm)
        } else {
            format!(
                "no reasoning elicited in the claim's cell ({CLAIM_CELL}) for {model} in {} / {}: its coded reasoning \
                 is from {} only, another condition",
                claim.environment,
                claim.arm,
                elsewhere.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
        return vec![stop(model, 0, condition)];
    }
    let mut keys: Vec<&CoderKey> = Vec::new();
    for r in &mine {
        if !keys.contains(&&r.key) {
            keys.push(&r.key);
        }
    }
    keys.sort();
    let validation = |k: &CoderKey| audit.gates.get(k).and_then(|g| g.iter().find(|v| v.model == model)).cloned();
    let validated: Vec<(&CoderKey, Validation)> =
        keys.iter().filter_map(|k| validation(k).filter(|v| v.status == Status::Validated).map(|v| (*k, v))).collect();
    if validated.is_empty() {
        let why: Vec<String> = keys
            .iter()
            .map(|k| {
                format!(
                    "{}: {}",
                    k.coder,
                    validation(k)
                        .map_or_else(|| "no gate decision in the store; rerun `agora audit`".into(), |v| v.label())
                )
            })
            .collect();
        return vec![stop(model, 1, format!("coder not validated for {model} ({})", why.join("; ")))];
    }
    let mut tries = Vec::new();
    for (key, v) in validated {
        let coded: Vec<&&CodedResponse> = mine.iter().filter(|r| r.key == *key).collect();
        let n = coded.len() as u64;
        let mut shares = Vec::new();
        let mut stated = Vec::new();
        for value in values {
            let k = coded.iter().filter(|r| r.stated.contains(value)).count() as u64;
            let (low, high) = crate::stats::wilson(k, n, ALPHA).unwrap_or((0.0, 1.0));
            shares.push(format!(
                "{value} in {k} of {n} coded responses in the {CLAIM_CELL} cell (Wilson 95 % [{low:.3}, {high:.3}])"
            ));
            stated.push((value, low >= MIN_STATED_SHARE));
        }
        let shares = shares.join("; ");
        for (value, is_stated) in stated {
            let head = format!("{model}, coder {}, {value}", key.coder);
            if !is_stated {
                tries.push(stop(
                    model,
                    2,
                    format!(
                        "{head}: value not stated in a share of at least {MIN_STATED_SHARE} of {model}'s reasoning \
                         ({shares})"
                    ),
                ));
                continue;
            }
            // The coder's recall of a value the mechanism relies on must be measured: enough
            // human-referenced sentences of that code on the model's text (the gate's per-code floor).
            if v.support(value) < MIN_CODE_SUPPORT {
                tries.push(stop(
                    model,
                    2,
                    format!(
                        "{}'s recall of the mechanism's values on {model}'s text is not measured: human-referenced \
                         sentences: {value} has {} (fewer than {MIN_CODE_SUPPORT})",
                        key.coder,
                        v.support(value)
                    ),
                ));
                continue;
            }
            let found = format!("{} ({}) finds {shares}", key.coder, v.label());
            match dependency(audit, key, model, claim, role, value, sign, indicator) {
                Err(gap) => tries.push(stop(model, 3, format!("{head}: {gap}"))),
                Ok((phi, p_phi, line)) => {
                    let estimates: Vec<&InterventionEstimate> = audit
                        .intervention
                        .iter()
                        .filter(|t| {
                            t.key == *key
                                && t.model == model
                                && t.environment == claim.environment
                                && t.role == role
                                && t.value == *value
                                && t.arm.as_deref() == Some(claim.arm.as_str())
                                && t.cell.as_deref() == Some(CLAIM_CELL)
                                && t.design.as_deref() == Some(DESIGN_READ)
                        })
                        .collect();
                    if estimates.is_empty() {
                        let old = audit
                            .intervention
                            .iter()
                            .any(|t| t.key == *key && t.model == model && t.value == *value && t.cell.is_none());
                        let why = if old {
                            format!(
                                "the intervention on {value} in the store carries no cell, arm or design (written \
                                 before they were recorded): rerun `agora audit prefill`"
                            )
                        } else {
                            format!(
                                "no intervention on {value} in {} / {} / {CLAIM_CELL} in the store (run `agora audit \
                                 prefill --environment {} --cell {CLAIM_CELL}`): a dependency alone cannot tell \
                                 reasoning that drives the action from one hidden cause behind both",
                                claim.environment, claim.arm, claim.environment
                            )
                        };
                        tries.push(stop(model, 4, format!("{head}: {line}, but {why}")));
                        continue;
                    }
                    for t in estimates {
                        tries.push(intervention_try(model, &head, &found, &line, phi, p_phi, t, sign));
                    }
                }
            }
        }
    }
    tries
}

/// The dependency of the indicator on `value` in the claim's environment, arm and cell: its
/// coefficient, one-sided p in the mechanism's direction and evidence line when its 95 % bound
/// on that side is clear of zero, or what is missing.
#[allow(clippy::too_many_arguments)]
fn dependency(
    audit: &AuditEvidence,
    key: &CoderKey,
    model: &str,
    claim: &Claim,
    role: &str,
    value: &str,
    sign: f64,
    indicator: &str,
) -> Result<(f64, f64, String), String> {
    let same = |d: &&DependencyEstimate| {
        d.key == *key && d.model == model && d.environment == claim.environment && d.role == role && d.value == value
    };
    let row = audit
        .dependency
        .iter()
        .filter(same)
        .find(|d| d.arm.as_deref() == Some(claim.arm.as_str()) && d.cell.as_deref() == Some(CLAIM_CELL));
    let Some(d) = row else {
        if audit.dependency.iter().filter(same).any(|d| d.cell.is_none()) {
            return Err(format!(
                "the dependency on {value} in the store carries no cell or arm (written before they were recorded): \
                 rerun `agora audit`"
            ));
        }
        return Err(format!(
            "dependency not estimated for {value} (no {indicator} row of {} / {} / {CLAIM_CELL} in audit_dependency)",
            claim.environment, claim.arm
        ));
    };
    let (Some(coef), Some(lo), Some(hi)) = (d.coef, d.ci_low, d.ci_high) else {
        return Err(format!("dependency not estimated for {value} ({}: {})", d.status, d.reason));
    };
    let interval = format!(
        "dependency of {} on {value} {} (95 % CI [{}, {}], CR1 by prompt, {} prompts)",
        d.indicator,
        fmt(Some(coef)),
        fmt(Some(lo)),
        fmt(Some(hi)),
        d.n_prompts
    );
    let bound = if sign > 0.0 { lo } else { -hi };
    if coef * sign <= 0.0 {
        return Err(format!("{interval} not {}", if sign > 0.0 { "positive" } else { "negative" }));
    }
    if bound <= 0.0 {
        return Err(format!(
            "{interval}: its {} bound {} 0",
            if sign > 0.0 { "lower" } else { "upper" },
            if sign > 0.0 { "≤" } else { "≥" }
        ));
    }
    // The one-sided p in the mechanism's direction, from the stored two-sided p (the sign is
    // the mechanism's, checked above); 0 where the fit is exact.
    let p = d.p.filter(|p| p.is_finite()).map_or(0.0, |p| (p / 2.0).clamp(0.0, 1.0));
    Ok((coef, p, interval))
}

/// One try on a stored intervention estimate: its evidence line when τ has the mechanism's sign,
/// clears zero on that side at 95 %, and agrees with φ in size; with the try's p.
#[allow(clippy::too_many_arguments)]
fn intervention_try(
    model: &str,
    head: &str,
    found: &str,
    dependency_line: &str,
    phi: f64,
    p_phi: f64,
    t: &InterventionEstimate,
    sign: f64,
) -> Try {
    let (Some(tau), Some(lo), Some(hi)) = (t.tau, t.ci_low, t.ci_high) else {
        return stop(
            model,
            4,
            format!(
                "{head}: {dependency_line}, but the intervention on {} (seed {}) has no estimate ({})",
                t.value, t.sample_seed, t.status
            ),
        );
    };
    let line = format!(
        "intervention effect τ of {} on {} {} (95 % CI [{}, {}], seed {}, {} states)",
        t.value,
        t.indicator,
        fmt(Some(tau)),
        fmt(Some(lo)),
        fmt(Some(hi)),
        t.sample_seed,
        t.n_states
    );
    let bound = if sign > 0.0 { lo } else { -hi };
    if tau * sign <= 0.0 || bound <= 0.0 {
        return stop(
            model,
            4,
            format!(
                "{head}: {dependency_line}, but {line} does not exclude zero in the mechanism's direction ({})",
                if sign > 0.0 { "above zero" } else { "below zero" }
            ),
        );
    }
    let (band_lo, band_hi) = size_band(phi);
    if hi < band_lo || lo > band_hi {
        return stop(
            model,
            5,
            format!(
                "{head}: {dependency_line}; {line}: τ does not agree with φ in size (its interval misses [{}, {}], φ̂ \
                 within a factor of {SIZE_RATIO})",
                fmt(Some(band_lo)),
                fmt(Some(band_hi))
            ),
        );
    }
    let p_tau = tau_p(tau, t.se, t.n_states, sign);
    Try {
        model: model.into(),
        met: Ok(format!("{found}; {dependency_line}; {line}, agreeing with φ in size")),
        p: p_phi.max(p_tau),
    }
}

/// The band τ must reach to agree with φ in size: φ̂ / SIZE_RATIO to φ̂ · SIZE_RATIO (ordered).
pub fn size_band(phi: f64) -> (f64, f64) {
    let (a, b) = (phi / SIZE_RATIO, phi * SIZE_RATIO);
    (a.min(b), a.max(b))
}

/// τ's one-sided p in the mechanism's direction: the t statistic τ / se on (states − 1) degrees
/// of freedom, as the estimate's interval is built; 0 where se is 0 and τ has the sign.
pub fn tau_p(tau: f64, se: Option<f64>, n_states: usize, sign: f64) -> f64 {
    let t = match se {
        Some(se) if se > 0.0 => sign * tau / se,
        _ => return if tau * sign > 0.0 { 0.0 } else { 1.0 },
    };
    if n_states < 2 {
        return 1.0;
    }
    crate::stats::dist::t_sf(t, (n_states - 1) as f64).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests;
