//! The dependency of the action on the stated values (the SUVA audit paper §240.7.4, Eq. 240.12), from
//! replicated prompts.
//!
//! # Why replicates
//! With a fixed effect per prompt, φ in P(A = a | W, S) ≈ φᵀW + η_S is identified only from
//! variation within a prompt, across its stochastic replicates. In a society run almost every
//! prompt is unique (its history differs), so the audit's own transcripts carry no such
//! variation. `agora audit replicates` re-asks a seeded sample of stored decision prompts m
//! times each, with fresh sampling seeds and nothing else changed, and keeps the replies in
//! `audit_replicates` ([`REPLICATES_SCHEMA`]): a table of their own, never in `transcripts`,
//! whose rows are hashed into every run's record hash. Replicates advance no game and change no
//! run's records.
//!
//! # Coding
//! `agora audit` codes every replicate with an action exactly as it codes a decision
//! ([`code_reply`](crate::code_reply): pre-action reasoning only, one code per sentence) into
//! `audit_replicate_responses` and `audit_replicate_sentences` ([`SCHEMA`]), keyed by the
//! original decision (run, seat, slot: the prompt), the sample seed and the replicate index, so
//! a prompt's replicates are grouped with it. Re-running replaces the rows of the same coder and
//! codebook (name, version, SHA-256) for the runs in scope.
//!
//! # The estimate
//! Per audited model, environment, arm, cell and role (the block arm and perturbation cell of
//! the replicated decision's run: never pooled across cells or arms, so that an estimate rests
//! only on reasoning written under the condition it is read for; in the society instrument
//! only the step-by-step cell asks for reasoning), over the replicates that have an action, coded
//! reasoning (a replicate without reasoning, or whose coder output failed validation, is
//! counted and left out) and a defined action indicator (the game's declared indicator, read from the store):
//! - **LPM** (`lpm-fe`): y on the value vector W (one 0/1 column per value code of the codebook)
//!   with a fixed effect per prompt, by within-prompt demeaning, CR1 clustered by prompt
//!   ([`fe_cr1()`], df `auto`, which is `within` here since every prompt is its own cluster; t on
//!   G − 1 degrees of freedom). The original decision is not among the observations: only the
//!   replicates, drawn with the same request and a fresh seed.
//! - **Logit** (`logit-ame`, binary indicators only; the robustness check of the SUVA audit paper §240.12):
//!   a logit of y on W and one dummy per prompt (no intercept), over the prompts whose action
//!   varies across their replicates (in the others the prompt's dummy separates the outcome
//!   perfectly and they carry no information on φ), CR1 clustered by prompt, with the values'
//!   average marginal effects and delta-method errors ([`logit_ame()`]; z inference). The
//!   marginal effect is the average derivative dP/dw (statsmodels' `get_margeff` default, every
//!   regressor treated as continuous), which for a 0/1 value is smaller than the average
//!   discrete change (0.44 against 0.6 where stating a value moves P from 0.2 to 0.8); and with
//!   few replicates per prompt the unconditional fixed-effects logit is biased away from zero
//!   (the incidental-parameters problem: about twofold with two replicates). Compare it with
//!   the LPM for sign and significance, not size.
//!
//! A value that does not vary within any prompt (never stated, always stated, or stated in all
//! or none of every prompt's replicates) is **not identified**: reported with that status and
//! no number, never dropped silently; so is a value whose within-prompt variation is a linear
//! combination of the values before it (codebook order). A group whose fit cannot be computed
//! (one prompt, fewer replicates than parameters, a separated logit) reports why.
//!
//! Every estimate passes the coder-validation gate ([`agreement::gate`]):
//! a model's rows are computed only where the coder's κ against human labels on that model's text
//! is at least the threshold, and otherwise read `refused: …` with no number (or, with
//! unvalidated codes allowed, are computed and labelled `unvalidated: …`). The estimates go to
//! `audit_dependency` in the store ([`DEPENDENCY_SCHEMA`], keyed by arm and cell) and to
//! `dependency.md`, `.json` and `.csv`. An `audit_dependency` written before the rows carried
//! arm and cell is dropped and rebuilt, never added to ([`drop_stale`]).
//!
//! # The action indicators
//! One per environment and role where an action has a defensible prosocial or cooperative
//! direction (each game declares its indicator per role): cooperating in the prisoner's dilemma, hunting the stag, accepting
//! an ultimatum offer, the share offered, given, sent, returned or contributed in the amount
//! games, and, in the binary-allocation game, choosing the option better for A (the SUVA audit paper's
//! prosocial option, Eq. 240.8). Left out ([`LEFT_OUT`]): the naming and coordination games
//! (symmetric labels: no option is the prosocial one), the 11–20 money request (no prosocial
//! direction) and the public-goods punishment stage (an allocation over several targets).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use agora_records::families::audit::dependency as records;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::agreement::{self, Validation};
use crate::codebook::LoadedCodebook;
use crate::coder::Coder;
use crate::segment::SegmentKind;
use crate::AuditError;
use crate::GateOptions;
use agora_analysis::stats::{fe_cr1, logit_ame, FeDf, StatsError};

mod estimate;
mod indicator;
use estimate::*;
pub use estimate::{logit, lpm, Estimate};
pub use indicator::{Indicator, IndicatorRule, NoIndicator};

/// The table's layout, kept with every table of the store in `agora_records`.
pub use agora_records::families::audit::REPLICATES as REPLICATES_SCHEMA;

/// The table's layout, kept with every table of the store in `agora_records`.
pub use agora_records::families::audit::REPLICATE_CODES as SCHEMA;

/// The dependency estimates the ladder reads: one row per study scope, coder, codebook, model,
/// environment, arm, cell, role, estimator and value. `arm` and `cell` are the block arm and
/// the perturbation cell of the decisions whose replicates the row rests on (the `runs`
/// columns of the same names): an estimate never pools cells or arms, so a claim about one
/// condition is never certified on reasoning written under another.
///
/// A store whose `audit_dependency` predates these columns has it dropped and rebuilt by the
/// next `agora audit` ([`drop_stale`]).
pub use agora_records::families::audit::DEPENDENCY as DEPENDENCY_SCHEMA;

/// Drops an `audit_dependency` written before its rows were kept apart per arm and cell (it
/// lacks those columns): derived from the coded replicates, it is rebuilt by `agora audit`.
/// Returns whether it dropped one.
pub use agora_records::families::audit::dependency::drop_stale;

/// α of the intervals.
pub const ALPHA: f64 = agora_analysis::mechanism::ALPHA;

/// One observation of the dependency regression: a coded replicate.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The prompt (the original decision's response id): the fixed effect and the cluster.
    pub prompt: String,
    /// The action indicator.
    pub y: f64,
    /// The value vector, one entry per value code of the codebook.
    pub w: Vec<bool>,
}

pub use agora_records::families::audit::dependency::{Coefficient, DependencyRow};
use agora_records::families::audit::{CoderKey, Position};

/// One model, environment, arm, cell and role of the replicates, with what became of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRow {
    /// The audited model, environment, block arm, perturbation cell and role.
    #[serde(flatten)]
    pub position: Position,
    /// The indicator's name, or none where the game is left out.
    pub indicator: Option<String>,
    /// Replicates stored.
    pub replicates: usize,
    /// Replicates with an action.
    pub with_action: usize,
    /// Replicates with an action and coded reasoning.
    pub coded: usize,
    /// Coded replicates with a defined indicator: the observations.
    pub observations: usize,
    /// Prompts among the observations.
    pub prompts: usize,
    /// Prompts whose indicator varies across their replicates.
    pub prompts_action_varies: usize,
    /// Why the group is left out, if it is.
    pub left_out: Option<String>,
}

/// The dependency report of a store (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dependency {
    /// The store.
    pub store: String,
    /// The study in scope (all when none).
    pub study: Option<String>,
    /// The coder and codebook.
    #[serde(flatten)]
    pub key: CoderKey,
    /// α of the intervals.
    pub alpha: f64,
    /// Replicates stored in scope.
    pub replicates: usize,
    /// Replicates with an action (parsed, or cut after a complete answer).
    pub with_action: usize,
    /// Replicates with an action and coded reasoning.
    pub coded: usize,
    /// Replicates with an action and no pre-action reasoning (counted, not coded).
    pub without_reasoning: usize,
    /// Replicates whose coder output failed validation.
    pub coder_errors: usize,
    /// The indicators, as the games declare them.
    pub indicators: Vec<Indicator>,
    /// (environment, role or `*`, why) of every role without an indicator.
    pub left_out: Vec<(String, String, String)>,
    /// Per model, environment, arm, cell and role.
    pub groups: Vec<GroupRow>,
    /// The estimates.
    pub rows: Vec<DependencyRow>,
    /// The gate's decision per model.
    pub validation: Vec<Validation>,
}

/// A replicate row as read.
use agora_records::families::audit::dependency::ReplicateRow as Replicate;

/// A group of replicates: their position.
type GroupKey = Position;

/// The group a replicate is estimated in: never pooled across arms or cells.
fn group(r: &Replicate) -> GroupKey {
    r.position.clone()
}

/// A coded replicate.
struct Coded {
    rep: Replicate,
    segmentation: crate::Segmentation,
    sentences: Vec<crate::Sentence>,
    coder_error: Option<String>,
    values: Vec<bool>,
}

/// Codes the replicates of the store at `path` (of `study` only, when given) with `coder`
/// against `codebook`, writes them and the dependency estimates into the store and returns the
/// report; `None` when the store holds no replicates table (no `agora audit replicates` yet).
pub fn dependency(
    path: &Path,
    codebook: &LoadedCodebook,
    coder: &dyn Coder,
    study: Option<&str>,
    gate: GateOptions,
) -> Result<Option<Dependency>, AuditError> {
    let sql = |source| AuditError::Store { path: path.to_path_buf(), source };
    let mut conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    if !crate::labels::has_table(&conn, "audit_replicates").map_err(sql)? {
        return Ok(None);
    }
    let declared =
        agora_analysis::declared::Declared::read(&conn, path).map_err(|e| AuditError::Declarations(e.to_string()))?;
    let indicator_for = |e: &str, r: &str| declared.indicator(e, r);
    let cb = &codebook.codebook;
    let coder_id = coder.id();
    let replicates = agora_records::families::audit::dependency::read_replicates(&conn, study).map_err(sql)?;
    let total = replicates.len();
    let mut groups: BTreeMap<GroupKey, GroupRow> = BTreeMap::new();
    // A model-backed coder gets every replicate's reasoning at once, before any is coded.
    let batches: Vec<Vec<String>> = replicates
        .iter()
        .filter(|r| r.action.is_some() && (r.parse_status == "ok" || r.parse_status == "truncated"))
        .map(|r| {
            crate::reasoning_texts(&crate::split_reply(&r.raw_reply, &r.answer_field, r.parse_status == "truncated").1)
        })
        .filter(|texts| !texts.is_empty())
        .collect();
    coder.prepare(&batches).map_err(|source| AuditError::Coder { coder: coder_id.clone(), source })?;
    let mut coded = Vec::new();
    for rep in replicates {
        let g = groups.entry(group(&rep)).or_insert_with(|| {
            let at = &rep.position;
            let ind = indicator_for(&at.environment, &at.role);
            GroupRow {
                position: at.clone(),
                indicator: ind.map(|i| i.name.to_string()),
                replicates: 0,
                with_action: 0,
                coded: 0,
                observations: 0,
                prompts: 0,
                prompts_action_varies: 0,
                left_out: ind.is_none().then(|| declared.left_out_reason(&at.environment, &at.role)),
            }
        });
        g.replicates += 1;
        let terminal = rep.parse_status == "ok" || (rep.parse_status == "truncated" && rep.action.is_some());
        if !terminal || rep.action.is_none() {
            continue;
        }
        g.with_action += 1;
        let (segmentation, sentences, coder_error, values) =
            crate::code_reply(&rep.raw_reply, &rep.answer_field, rep.parse_status == "truncated", cb, coder);
        if segmentation.has_reasoning() && coder_error.is_none() {
            g.coded += 1;
        }
        coded.push(Coded { rep, segmentation, sentences, coder_error, values });
    }
    write_coded(&mut conn, codebook, &coder_id, study, &coded).map_err(sql)?;

    let with_action = coded.len();
    let without_reasoning = coded.iter().filter(|c| !c.segmentation.has_reasoning()).count();
    let coder_errors = coded.iter().filter(|c| c.segmentation.has_reasoning() && c.coder_error.is_some()).count();
    let models: Vec<String> = groups.keys().map(|k| k.model.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let validation = agreement::gate(&conn, codebook, &coder_id, &models, &gate).map_err(sql)?;
    let value_names: Vec<String> = cb.values().map(|c| c.name.clone()).collect();

    // Observations per group.
    let mut better_for_a: BTreeMap<(i64, i64, i64), Option<u32>> = BTreeMap::new();
    let mut observations: BTreeMap<GroupKey, Vec<Observation>> = BTreeMap::new();
    for c in &coded {
        let r = &c.rep;
        let Some(ind) = indicator_for(&r.position.environment, &r.position.role) else { continue };
        if !(c.segmentation.has_reasoning() && c.coder_error.is_none()) {
            continue;
        }
        let pro = if ind.rule == IndicatorRule::BetterForA {
            match better_for_a.get(&(r.run_id, r.seat, r.slot)) {
                Some(p) => *p,
                None => {
                    let p = prosocial_option(&conn, r.run_id, r.seat, r.slot).map_err(sql)?;
                    better_for_a.insert((r.run_id, r.seat, r.slot), p);
                    p
                }
            }
        } else {
            None
        };
        let Some(y) = ind.value(r.action.as_deref().unwrap_or_default(), &r.space_json, pro) else { continue };
        observations.entry(group(r)).or_default().push(Observation {
            prompt: r.response_id.clone(),
            y,
            w: c.values.clone(),
        });
    }

    let mut rows = Vec::new();
    for (key, g) in &mut groups {
        let Some(ind) = indicator_for(&g.position.environment, &g.position.role) else { continue };
        let obs = observations.remove(key).unwrap_or_default();
        g.observations = obs.len();
        g.prompts = obs.iter().map(|o| o.prompt.as_str()).collect::<BTreeSet<_>>().len();
        g.prompts_action_varies = varying_prompts(&obs, |o| o.y);
        let v = validation.iter().find(|v| v.model == g.position.model);
        let label = v.map_or_else(String::new, Validation::label);
        let shown = v.is_some_and(Validation::shown);
        let mut estimators = vec!["lpm-fe"];
        if ind.binary {
            estimators.push("logit-ame");
        }
        for estimator in estimators {
            let base = DependencyRow {
                position: g.position.clone(),
                indicator: ind.name.to_string(),
                estimator: estimator.to_string(),
                value: String::new(),
                status: String::new(),
                reason: String::new(),
                fit: Coefficient::default(),
                n_prompts: g.prompts,
                n_replicates: g.observations,
                prompts_varying: None,
                validation: label.clone(),
            };
            if !shown {
                rows.extend(value_names.iter().map(|name| DependencyRow {
                    value: name.clone(),
                    status: "refused".into(),
                    reason: label.clone(),
                    ..base.clone()
                }));
                continue;
            }
            let estimates = if estimator == "lpm-fe" { lpm(&obs, &value_names) } else { logit(&obs, &value_names) };
            rows.extend(estimates.into_iter().map(|e| DependencyRow {
                value: e.value,
                status: e.status.into(),
                reason: e.reason,
                fit: e.fit,
                n_prompts: e.n_prompts,
                n_replicates: e.n_replicates,
                prompts_varying: Some(e.prompts_varying),
                ..base.clone()
            }));
        }
    }
    let report = Dependency {
        store: path.display().to_string(),
        study: study.map(str::to_string),
        key: codebook.key(&coder_id).owned(),
        alpha: ALPHA,
        replicates: total,
        with_action,
        coded: with_action - without_reasoning - coder_errors,
        without_reasoning,
        coder_errors,
        indicators: declared.indicators().into_iter().cloned().collect(),
        left_out: declared
            .left_out()
            .into_iter()
            .map(|(e, r, why)| (e.to_string(), r.to_string(), why.to_string()))
            .collect(),
        groups: groups.into_values().collect(),
        rows,
        validation,
    };
    write_estimates(&mut conn, &report).map_err(sql)?;
    Ok(Some(report))
}

/// The option better for A in the binary-allocation state of a seat's `slot`-th decision (its
/// id is the decision's context; see [`crate::motives`]).
pub fn prosocial_option(conn: &Connection, run_id: i64, seat: i64, slot: i64) -> rusqlite::Result<Option<u32>> {
    Ok(state_context(conn, run_id, seat, slot)?
        .and_then(crate::motives::state)
        .and_then(|s| crate::motives::MotiveState::prosocial_option(&s)))
}

/// The state id a binary-allocation decision was asked in (its recorded `context`), where the
/// store holds one.
pub use agora_records::families::audit::reads::state_context;

fn write_coded(
    conn: &mut Connection,
    codebook: &LoadedCodebook,
    coder: &str,
    study: Option<&str>,
    coded: &[Coded],
) -> rusqlite::Result<()> {
    let cb = &codebook.codebook;
    let rows = coded.iter().map(|c| {
        let r = &c.rep;
        let s = &c.segmentation;
        let is_coded = s.has_reasoning() && c.coder_error.is_none();
        let values_json = is_coded.then(|| {
            let m: serde_json::Map<String, serde_json::Value> = cb
                .values()
                .zip(&c.values)
                .map(|(code, v)| (code.name.clone(), serde_json::json!(u8::from(*v))))
                .collect();
            serde_json::Value::Object(m).to_string()
        });
        let reasoning = c.sentences.iter().filter(|x| x.kind == SegmentKind::Reasoning).count();
        records::CodedReplicateRecord {
            run_id: r.run_id,
            seat: r.seat,
            slot: r.slot,
            sample_seed: &r.sample_seed,
            replicate: r.replicate,
            model: &r.position.model,
            environment: &r.position.environment,
            role: &r.position.role,
            parse_status: &r.parse_status,
            action: r.action.as_deref(),
            reasoning_present: s.has_reasoning(),
            reasoning_sources: s.reasoning_sources(),
            n_sentences: reasoning,
            coder_error: c.coder_error.as_deref(),
            values_json,
            sentences: c
                .sentences
                .iter()
                .map(|x| records::ReplicateSentenceRecord {
                    sentence_index: x.sentence_index,
                    segment: x.kind.as_str(),
                    source: &x.source,
                    text: &x.text,
                    code: x.code.as_deref(),
                })
                .collect(),
        }
    });
    let codebook = agora_records::families::audit::coding::CodebookRecord {
        name: &cb.name,
        version: cb.version,
        sha256: &codebook.sha256,
        source: &codebook.source,
    };
    records::write_coded(conn, codebook, coder, study, rows)
}

fn write_estimates(conn: &mut Connection, d: &Dependency) -> rusqlite::Result<()> {
    let scope = d.study.clone().unwrap_or_default();
    records::write_estimates(conn, &scope, d.key.borrowed(), &d.rows)
}

mod report;

#[cfg(test)]
mod tests;
