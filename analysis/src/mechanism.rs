//! Tier 3's transcript audit: whether the transcripts show the human mechanism a claim names.
//!
//! A claim names its mechanism as stated values ([`Mechanism`]). The evidence is read from the
//! audit's tables in the store, only where `agora audit` wrote them (a store without
//! `audit_responses` has no audit, and the ladder says so):
//! - the coder-validation gate's decision (`audit_gate`, [`crate::evidence`]: κ ≥ 0.8 against
//!   human labels on the model's own text, the refusal the default), per coder, codebook and
//!   model, as the audit recorded it when the codes or the labels last changed;
//! - the occurrence of each value: the share of the model's coded responses in the claim's
//!   environment, arm and role (the role of the response's seat in `decisions`) that state it,
//!   with its 95 % Wilson interval;
//! - the dependency of the role's action indicator on the value (`audit_dependency`, the
//!   linear probability model with prompt fixed effects, CR1 by prompt, from replicates).
//!
//! - the intervention effect τ of the value on the indicator (`audit_faithfulness`, written by
//!   `agora audit prefill`: the model's own reasoning prefilled with the value inserted against
//!   deleted).
//!
//! A model that carries the claim (robust, and matching the anchor) shows the mechanism when
//! one validated coder finds a value of the mechanism stated (occurrence share above zero with
//! its Wilson lower bound above zero), the dependency of the indicator on such a value has the
//! mechanism's sign with its 95 % bound on that side clear of zero, and the intervention on
//! that value moves the indicator the same way, its 95 % interval excluding zero. The dependency
//! alone does not suffice: "Auditing LLM Behavior with SUVA: From Stated Values to Actions"
//! shows that one hidden cause setting both the stated value and the action (its Model D)
//! produces the same dependency as reasoning that drives the action; only an intervention on the
//! reasoning tells them apart. Tier 3 needs one such model; otherwise the verdict names the
//! first unmet condition of the model that came closest.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{params, Connection};

use crate::claims::{Claim, Mechanism};
use crate::common::fmt;
use crate::declared::Declared;
use crate::error::AnalysisError;
use crate::evidence::{has_table, read_gate, Status, Validation, MIN_CODE_SUPPORT};
use crate::outcomes::open;

/// The Tier 3 condition no claim meets when the store holds no transcript audit.
pub const AUDIT_MISSING: &str =
    "transcript audit consistent with the human mechanism: missing (no transcript audit in the store; run `agora audit`)";

/// A coder and the codebook it coded with, as the audit's rows name them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CoderKey {
    /// The coder's id.
    pub coder: String,
    /// The codebook's name.
    pub codebook: String,
    /// The codebook's version.
    pub version: u32,
    /// The codebook's SHA-256.
    pub sha256: String,
}

/// One coded response as the mechanism reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct CodedResponse {
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The arm.
    pub arm: String,
    /// The role of the response's seat, where `decisions` records one.
    pub role: Option<String>,
    /// The coder and codebook.
    pub key: CoderKey,
    /// The value codes the response states.
    pub stated: Vec<String>,
}

/// The level of the audit's intervals: 95 % (the dependency estimate, its Wilson bounds).
pub const ALPHA: f64 = 0.05;

/// The store table of dependency estimates the ladder reads (written by `agora audit`, the
/// audit crate's dependency estimate).
pub const DEPENDENCY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_dependency (
    scope TEXT NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    role TEXT NOT NULL,
    indicator TEXT NOT NULL,
    estimator TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    coef REAL,
    se REAL,
    stat REAL,
    p REAL,
    ci_low REAL,
    ci_high REAL,
    n_prompts INTEGER NOT NULL,
    n_replicates INTEGER NOT NULL,
    prompts_varying INTEGER,
    validation TEXT NOT NULL,
    PRIMARY KEY (scope, coder, codebook, codebook_version, codebook_sha256, model, environment, role, estimator, value)
) WITHOUT ROWID;
";

/// One `lpm-fe` row of `audit_dependency`.
#[derive(Clone, Debug, PartialEq)]
pub struct DependencyEstimate {
    /// The coder and codebook.
    pub key: CoderKey,
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The role.
    pub role: String,
    /// The indicator's name.
    pub indicator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, `not identified`, `not estimated` or `refused`.
    pub status: String,
    /// Why a row has no estimate.
    pub reason: String,
    /// The slope.
    pub coef: Option<f64>,
    /// Lower end of its 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub ci_high: Option<f64>,
    /// Prompts in the fit.
    pub n_prompts: usize,
}

/// The store table of intervention estimates the ladder reads (written by `agora audit
/// prefill`): one row per sample seed, coder, codebook, model, environment, role and value.
pub const FAITHFULNESS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_faithfulness (
    sample_seed TEXT NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    role TEXT NOT NULL,
    indicator TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    n_decisions INTEGER NOT NULL,
    n_deleted INTEGER NOT NULL,
    n_inserted INTEGER NOT NULL,
    tau REAL,
    se REAL,
    ci_low REAL,
    ci_high REAL,
    phi REAL,
    phi_ci_low REAL,
    phi_ci_high REAL,
    disagreement TEXT NOT NULL,
    validation TEXT NOT NULL,
    n_states INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sample_seed, coder, codebook, codebook_version, codebook_sha256, model, environment, role, value)
) WITHOUT ROWID;
";

/// One estimate of `audit_faithfulness`: the intervention effect τ of a value on the indicator.
#[derive(Clone, Debug, PartialEq)]
pub struct InterventionEstimate {
    /// The coder and codebook.
    pub key: CoderKey,
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The role.
    pub role: String,
    /// The indicator's name.
    pub indicator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, or why there is no estimate (`no prefill`, `refused: …`, …).
    pub status: String,
    /// τ: the indicator's mean with the value inserted minus with it deleted.
    pub tau: Option<f64>,
    /// Lower end of its 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub ci_high: Option<f64>,
}

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
    if has_table(conn, "decisions")? {
        let mut st = conn.prepare(
            "SELECT d.run_id, d.seat, d.role FROM decisions d
             WHERE d.run_id IN (SELECT DISTINCT run_id FROM audit_responses) ORDER BY d.run_id, d.seat, d.step",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)))?;
        for row in rows {
            let (run, seat, role) = row?;
            roles.entry((run, seat)).or_default().push(role);
        }
    }
    let mut st = conn.prepare(
        "SELECT a.model, a.environment, a.arm, a.run_id, a.seat, a.slot, a.coder, a.codebook, a.codebook_version,
                a.codebook_sha256, a.values_json
         FROM audit_responses a
         WHERE a.values_json IS NOT NULL AND (?1 IS NULL OR a.study = ?1)
         ORDER BY a.run_id, a.seat, a.slot, a.coder, a.codebook, a.codebook_version, a.codebook_sha256",
    )?;
    let rows = st.query_map(params![study], |r| {
        let values: String = r.get(10)?;
        let stated = serde_json::from_str::<BTreeMap<String, i64>>(&values)
            .map(|m| m.into_iter().filter(|(_, v)| *v != 0).map(|(k, _)| k).collect())
            .unwrap_or_default();
        let (run, seat, slot): (i64, i64, i64) = (r.get(3)?, r.get(4)?, r.get(5)?);
        let role = roles.get(&(run, seat)).and_then(|v| usize::try_from(slot).ok().and_then(|k| v.get(k))).cloned();
        Ok(CodedResponse {
            model: r.get(0)?,
            environment: r.get(1)?,
            arm: r.get(2)?,
            role,
            key: CoderKey { coder: r.get(6)?, codebook: r.get(7)?, version: r.get(8)?, sha256: r.get(9)? },
            stated,
        })
    })?;
    ev.responses = rows.collect::<rusqlite::Result<_>>()?;
    let keys: std::collections::BTreeSet<CoderKey> = ev.responses.iter().map(|r| r.key.clone()).collect();
    for key in keys {
        let gate = read_gate(conn, &key.coder, &key.codebook, key.version, &key.sha256)?;
        ev.gates.insert(key, gate);
    }
    if has_table(conn, "audit_dependency")? {
        let mut st = conn.prepare(
            "SELECT coder, codebook, codebook_version, codebook_sha256, model, environment, role, indicator, value,
                    status, reason, coef, ci_low, ci_high, n_prompts
             FROM audit_dependency
             WHERE estimator = 'lpm-fe' AND (?1 IS NULL OR scope = ?1 OR scope = '')
             ORDER BY CASE WHEN scope = COALESCE(?1, '') THEN 0 ELSE 1 END, coder, codebook, model, environment, role, value",
        )?;
        let rows = st.query_map(params![study], |r| {
            Ok(DependencyEstimate {
                key: CoderKey { coder: r.get(0)?, codebook: r.get(1)?, version: r.get(2)?, sha256: r.get(3)? },
                model: r.get(4)?,
                environment: r.get(5)?,
                role: r.get(6)?,
                indicator: r.get(7)?,
                value: r.get(8)?,
                status: r.get(9)?,
                reason: r.get(10)?,
                coef: r.get(11)?,
                ci_low: r.get(12)?,
                ci_high: r.get(13)?,
                n_prompts: r.get::<_, i64>(14)? as usize,
            })
        })?;
        ev.dependency = rows.collect::<rusqlite::Result<_>>()?;
    }
    if has_table(conn, "audit_faithfulness")? {
        let mut st = conn.prepare(
            "SELECT coder, codebook, codebook_version, codebook_sha256, model, environment, role, indicator, value,
                    status, tau, ci_low, ci_high
             FROM audit_faithfulness
             ORDER BY CASE WHEN status = 'estimated' THEN 0 ELSE 1 END, sample_seed, coder, codebook, model,
                      environment, role, value",
        )?;
        let rows = st.query_map([], |r| {
            Ok(InterventionEstimate {
                key: CoderKey { coder: r.get(0)?, codebook: r.get(1)?, version: r.get(2)?, sha256: r.get(3)? },
                model: r.get(4)?,
                environment: r.get(5)?,
                role: r.get(6)?,
                indicator: r.get(7)?,
                value: r.get(8)?,
                status: r.get(9)?,
                tau: r.get(10)?,
                ci_low: r.get(11)?,
                ci_high: r.get(12)?,
            })
        })?;
        ev.intervention = rows.collect::<rusqlite::Result<_>>()?;
    }
    Ok(Some(ev))
}

/// How far one model got towards showing the mechanism, and what stopped it.
struct Shortfall {
    /// 0: no audit of its text; 1: no validated coder; 2: no value stated; 3: no dependency;
    /// 4: no intervention effect.
    stage: u8,
    condition: String,
}

/// Tier 3's audit condition for a claim carried by `carriers` (robust models that match the
/// anchor): `Ok` when one of them shows the mechanism, with a line of evidence per carrier.
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
        Some(Mechanism::Values { role, values, sign, .. }) => (role, values, *sign),
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
    let mut best: Option<Shortfall> = None;
    for model in carriers {
        match model_shows(claim, model, role, indicator, values, sign, audit) {
            Ok(line) => {
                evidence.push(format!("{model}: mechanism shown: {line}"));
                return Ok(());
            }
            Err(s) => {
                evidence.push(format!("{model}: mechanism not shown: {}", s.condition));
                if best.as_ref().is_none_or(|b| s.stage > b.stage) {
                    best = Some(s);
                }
            }
        }
    }
    Err(format!("{HEAD}: {}", best.map_or_else(|| "no model carries the claim".into(), |b| b.condition)))
}

/// Whether `model` shows the mechanism: the evidence line, or how far it got.
fn model_shows(
    claim: &Claim,
    model: &str,
    role: &str,
    indicator: &str,
    values: &[String],
    sign: f64,
    audit: &AuditEvidence,
) -> Result<String, Shortfall> {
    let mine: Vec<&CodedResponse> = audit
        .responses
        .iter()
        .filter(|r| {
            r.model == model
                && r.environment == claim.environment
                && r.arm == claim.arm
                && r.role.as_deref().is_none_or(|x| x == role)
        })
        .collect();
    if mine.is_empty() {
        return Err(Shortfall {
            stage: 0,
            condition: format!(
                "no audit in the store of {model}'s {role} text in {} / {}",
                claim.environment, claim.arm
            ),
        });
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
        return Err(Shortfall { stage: 1, condition: format!("coder not validated for {model} ({})", why.join("; ")) });
    }
    let mut best: Option<Shortfall> = None;
    let mut keep = |s: Shortfall| {
        if best.as_ref().is_none_or(|b| s.stage > b.stage) {
            best = Some(s);
        }
    };
    for (key, v) in validated {
        let coded: Vec<&&CodedResponse> = mine.iter().filter(|r| r.key == *key).collect();
        let n = coded.len() as u64;
        let mut stated = Vec::new();
        let mut shares = Vec::new();
        for value in values {
            let k = coded.iter().filter(|r| r.stated.contains(value)).count() as u64;
            let (low, high) = crate::stats::wilson(k, n, ALPHA).unwrap_or((0.0, 1.0));
            shares.push(format!("{value} in {k} of {n} coded responses (Wilson 95 % [{low:.3}, {high:.3}])"));
            if k > 0 && low > 0.0 {
                stated.push(value.clone());
            }
        }
        if stated.is_empty() {
            keep(Shortfall {
                stage: 2,
                condition: format!("value not stated in {model}'s reasoning by {} ({})", key.coder, shares.join("; ")),
            });
            continue;
        }
        // The coder's recall of a value the mechanism relies on must be measured: enough
        // human-referenced sentences of that code on the model's text (the gate's per-code floor).
        let floor = MIN_CODE_SUPPORT;
        let (measured, unmeasured): (Vec<String>, Vec<String>) =
            stated.into_iter().partition(|value| v.support(value) >= floor);
        if measured.is_empty() {
            let why: Vec<String> = unmeasured
                .iter()
                .map(|value| format!("{value} has {} (fewer than {floor})", v.support(value)))
                .collect();
            keep(Shortfall {
                stage: 2,
                condition: format!(
                    "{}'s recall of the mechanism's values on {model}'s text is not measured: human-referenced sentences: {}",
                    key.coder,
                    why.join("; ")
                ),
            });
            continue;
        }
        let stated = measured;
        let mut gaps = Vec::new();
        let mut intervention_gaps = Vec::new();
        for value in &stated {
            let row = audit.dependency.iter().find(|d| {
                d.key == *key
                    && d.model == model
                    && d.environment == claim.environment
                    && d.role == role
                    && d.value == *value
            });
            let Some(d) = row else {
                gaps.push(format!("dependency not estimated for {value} (no {indicator} row in audit_dependency)"));
                continue;
            };
            let (Some(coef), Some(lo), Some(hi)) = (d.coef, d.ci_low, d.ci_high) else {
                gaps.push(format!("dependency not estimated for {value} ({}: {})", d.status, d.reason));
                continue;
            };
            let bound = if sign > 0.0 { lo } else { -hi };
            let interval = format!(
                "dependency of {} on {value} {} (95 % CI [{}, {}], CR1 by prompt, {} prompts)",
                d.indicator,
                fmt(Some(coef)),
                fmt(Some(lo)),
                fmt(Some(hi)),
                d.n_prompts
            );
            if coef * sign <= 0.0 {
                gaps.push(format!("{} not {}", interval, if sign > 0.0 { "positive" } else { "negative" }));
            } else if bound <= 0.0 {
                gaps.push(format!(
                    "{interval}: its {} bound {} 0",
                    if sign > 0.0 { "lower" } else { "upper" },
                    if sign > 0.0 { "≤" } else { "≥" }
                ));
            } else {
                match intervened(audit, key, model, &claim.environment, role, value, sign) {
                    Ok(tau) => {
                        return Ok(format!(
                            "{} ({}) finds {}; {interval}; {tau}",
                            key.coder,
                            v.label(),
                            shares.join("; ")
                        ))
                    }
                    Err(gap) => intervention_gaps.push(format!("{interval}, but {gap}")),
                }
            }
        }
        if !intervention_gaps.is_empty() {
            keep(Shortfall {
                stage: 4,
                condition: format!("{model}, coder {}: {}", key.coder, intervention_gaps.join("; ")),
            });
            continue;
        }
        keep(Shortfall { stage: 3, condition: format!("{model}, coder {}: {}", key.coder, gaps.join("; ")) });
    }
    Err(best.unwrap_or(Shortfall { stage: 1, condition: format!("coder not validated for {model}") }))
}

/// The intervention on `value`: its evidence line when τ has the mechanism's sign and its 95 %
/// interval excludes zero on that side, or what is missing.
fn intervened(
    audit: &AuditEvidence,
    key: &CoderKey,
    model: &str,
    environment: &str,
    role: &str,
    value: &str,
    sign: f64,
) -> Result<String, String> {
    let row = audit.intervention.iter().find(|t| {
        t.key == *key && t.model == model && t.environment == environment && t.role == role && t.value == value
    });
    let Some(t) = row else {
        return Err(format!(
            "no intervention on {value} in the store (run `agora audit prefill`): a dependency alone cannot tell \
             reasoning that drives the action from one hidden cause behind both"
        ));
    };
    let (Some(tau), Some(lo), Some(hi)) = (t.tau, t.ci_low, t.ci_high) else {
        return Err(format!("the intervention on {value} has no estimate ({})", t.status));
    };
    let line = format!(
        "intervention effect τ of {value} on {} {} (95 % CI [{}, {}])",
        t.indicator,
        fmt(Some(tau)),
        fmt(Some(lo)),
        fmt(Some(hi))
    );
    let bound = if sign > 0.0 { lo } else { -hi };
    if tau * sign > 0.0 && bound > 0.0 {
        Ok(line)
    } else {
        Err(format!(
            "{line} does not exclude zero in the mechanism's direction ({})",
            if sign > 0.0 { "above zero" } else { "below zero" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The audit's own schemas, a response, a gate without labels and a dependency row: the
    /// queries read them back (the columns are the audit's).
    #[test]
    fn reads_the_audit_tables_and_none_without_them() {
        let conn = Connection::open_in_memory().expect("db");
        assert_eq!(read_conn(&conn, None).expect("read"), None);
        conn.execute_batch(crate::evidence::TABLES_SCHEMA).expect("schema");
        conn.execute_batch(DEPENDENCY_SCHEMA).expect("schema");
        conn.execute_batch(
            "CREATE TABLE decisions (run_id INTEGER, step INTEGER, round INTEGER, seat INTEGER, role TEXT,
                 action TEXT, value REAL, scale REAL, context REAL);
             INSERT INTO decisions VALUES (1, 0, 0, 0, 'proposer', 'a4', 4, 10, NULL);
             INSERT INTO decisions VALUES (1, 1, 1, 0, 'responder', 'c0', 0, 1, NULL);
             INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version,
                 codebook_sha256, model, study, environment, arm, cell, parse_status, action, answer_field,
                 reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
                 n_post_hoc_sentences, values_json)
             VALUES (1, 0, 0, 1, 'lexicon', 'default', 1, 'abc', 'm1', 's', 'bargaining', 'ultimatum', 'baseline',
                 'parsed', 'a4', 'offer', 'json', 1, 'field:reasoning', 0, 2, 1, 0,
                 '{\"fairness\": 1, \"altruism\": 0}');
             INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version,
                 codebook_sha256, model, study, environment, arm, cell, parse_status, action, answer_field,
                 reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
                 n_post_hoc_sentences, values_json)
             VALUES (1, 0, 1, 1, 'lexicon', 'default', 1, 'abc', 'm1', 's', 'bargaining', 'ultimatum', 'baseline',
                 'parsed', 'c0', 'action', 'json', 1, 'field:reasoning', 0, 1, 1, 0, '{\"fairness\": 0}');
             INSERT INTO audit_dependency VALUES ('', 'lexicon', 'default', 1, 'abc', 'm1', 'bargaining', 'proposer',
                 'offer_share', 'lpm-fe', 'fairness', 'estimated', '', 0.3, 0.1, 3.0, 0.01, 0.1, 0.5, 12, 120, 6,
                 'validated: …');",
        )
        .expect("rows");
        let ev = read_conn(&conn, Some("s")).expect("read").expect("an audit");
        // Regression: a seat that changes role between games (the ultimatum battery) has each
        // response attributed to its own decision's role (the slot-th), not to the seat's first.
        assert_eq!(ev.responses.len(), 2);
        let mut roles: Vec<Option<&str>> = ev.responses.iter().map(|r| r.role.as_deref()).collect();
        roles.sort();
        assert_eq!(roles, [Some("proposer"), Some("responder")]);
        let ev = AuditEvidence {
            responses: ev.responses.into_iter().filter(|r| r.role.as_deref() == Some("proposer")).collect(),
            ..ev
        };
        assert_eq!(
            (ev.responses[0].role.as_deref(), ev.responses[0].stated.as_slice()),
            (Some("proposer"), &["fairness".to_string()][..])
        );
        assert_eq!(ev.dependency.len(), 1);
        assert_eq!((ev.dependency[0].coef, ev.dependency[0].n_prompts), (Some(0.3), 12));
        assert!(ev.intervention.is_empty(), "no audit_faithfulness table: no intervention");
        conn.execute_batch(FAITHFULNESS_SCHEMA).expect("schema");
        conn.execute_batch(
            "INSERT INTO audit_faithfulness VALUES ('5', 'lexicon', 'default', 1, 'abc', 'm1', 'bargaining', 'proposer',
                 'offer_share', 'fairness', 'estimated', '', 24, 12, 12, 0.2, 0.05, 0.1, 0.3, 0.5, 0.2, 0.8, '', 'validated', 20);",
        )
        .expect("faithfulness row");
        let read = read_conn(&conn, Some("s")).expect("read").expect("an audit");
        assert_eq!(read.intervention.len(), 1);
        let t = &read.intervention[0];
        assert_eq!((t.value.as_str(), t.tau, t.ci_low, t.ci_high), ("fairness", Some(0.2), Some(0.1), Some(0.3)));
        // No audit_gate table: no decision is read, and the ladder says so.
        assert_eq!(ev.gates[&ev.responses[0].key], Vec::<Validation>::new());
        conn.execute_batch(crate::evidence::GATE_SCHEMA).expect("schema");
        conn.execute_batch(
            "INSERT INTO audit_gate VALUES ('lexicon', 'default', 1, 'abc', 'm1', 'validated', 0.85, 240, 120, 0.8,
                 '[[\"fairness\", 40, 0.9]]', 1, 120, 'κ = 0.850 ≥ 0.8 (240 sentences, 120 responses)');
             INSERT INTO audit_gate VALUES ('lexicon', 'default', 1, 'other', 'm1', 'refused', NULL, 0, 0, 0.8,
                 '[]', 0, 0, 'no human labels');",
        )
        .expect("gate rows");
        let read = read_conn(&conn, Some("s")).expect("read").expect("an audit");
        let gate = &read.gates[&read.responses[0].key];
        assert_eq!(gate.len(), 1, "only the decision of the coded codebook's SHA-256: {gate:?}");
        assert_eq!(
            (gate[0].status, gate[0].kappa, gate[0].n, gate[0].coder_errors),
            (Status::Validated, Some(0.85), 240, (1, 120))
        );
        assert_eq!((gate[0].support("fairness"), gate[0].recall_of("fairness")), (40, Some(0.9)));
        conn.execute("UPDATE audit_gate SET status = 'maybe'", []).expect("corrupt");
        let e = read_conn(&conn, Some("s")).expect_err("a status the gate never writes");
        assert!(e.to_string().contains("audit_gate.status"), "{e}");
    }
}
