//! The dependency estimate's reads and writes: the replicates asked again (`audit_replicates`,
//! as `agora audit replicates` wrote them), their codes (`audit_replicate_responses`,
//! `audit_replicate_sentences`) and the estimates (`audit_dependency`).

use rusqlite::{params, Connection};
use serde::Serialize;

use super::coding::{drop_if_lacking, CodebookRecord};
use super::{has_table, make, DEPENDENCY, REPLICATE_CODES, STUDY_SCOPE};

/// One estimate of one value, by one estimator, for one model, environment, arm, cell and role.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DependencyRow {
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The block arm of the replicated decisions (`baseline`, `punishment`, …).
    pub arm: String,
    /// The perturbation cell of the replicated decisions (`baseline`, `step-by-step`, …).
    pub cell: String,
    /// The role.
    pub role: String,
    /// The action indicator's name.
    pub indicator: String,
    /// `lpm-fe` (the linear probability model with prompt fixed effects) or `logit-ame`.
    pub estimator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, `not identified`, `not estimated` or `refused`.
    pub status: String,
    /// Why a row has no estimate (empty for an estimate).
    pub reason: String,
    /// φ̂ (the LPM slope, or the logit's average marginal effect).
    pub coef: Option<f64>,
    /// Its CR1 standard error.
    pub se: Option<f64>,
    /// t (LPM, on G − 1 df) or z (logit).
    pub stat: Option<f64>,
    /// Two-sided p.
    pub p: Option<f64>,
    /// Lower end of the 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of the 95 % interval.
    pub ci_high: Option<f64>,
    /// Prompts (fixed effects and clusters) in the fit.
    pub n_prompts: usize,
    /// Replicates (observations) in the fit.
    pub n_replicates: usize,
    /// Prompts within which the value varies across replicates (none where refused).
    pub prompts_varying: Option<usize>,
    /// The validation gate's decision for the model (`validated: …`, `refused: …`).
    pub validation: String,
}

/// A replicate as the dependency estimate reads it, with its run's environment, arm and cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicateRow {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The sample's seed.
    pub sample_seed: String,
    /// The replicate's number.
    pub replicate: i64,
    /// The original decision's response id.
    pub response_id: String,
    /// The model.
    pub model: String,
    /// The role.
    pub role: String,
    /// The run's environment.
    pub environment: String,
    /// The run's arm.
    pub arm: String,
    /// The run's cell.
    pub cell: String,
    /// The reply.
    pub raw_reply: String,
    /// The parsed action, if any.
    pub action: Option<String>,
    /// How it parsed.
    pub parse_status: String,
    /// The answer field asked for.
    pub answer_field: String,
    /// The action space, JSON.
    pub space_json: String,
}

/// The replicates of the runs of `study` (every run where none), in run, seat, slot, sample
/// and replicate order.
pub fn read_replicates(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Vec<ReplicateRow>> {
    let mut st = conn.prepare(
        "SELECT q.run_id, q.seat, q.slot, q.sample_seed, q.replicate, q.response_id, q.model, q.role, r.environment,
                r.arm, r.cell, q.raw_reply, q.action, q.parse_status, q.answer_field, q.space_json
         FROM audit_replicates q JOIN runs r ON r.run_id = q.run_id
         WHERE (?1 IS NULL OR r.study = ?1)
         ORDER BY q.run_id, q.seat, q.slot, q.sample_seed, q.replicate",
    )?;
    let rows = st.query_map([study], |r| {
        Ok(ReplicateRow {
            run_id: r.get(0)?,
            seat: r.get(1)?,
            slot: r.get(2)?,
            sample_seed: r.get(3)?,
            replicate: r.get(4)?,
            response_id: r.get(5)?,
            model: r.get(6)?,
            role: r.get(7)?,
            environment: r.get(8)?,
            arm: r.get(9)?,
            cell: r.get(10)?,
            raw_reply: r.get(11)?,
            action: r.get(12)?,
            parse_status: r.get(13)?,
            answer_field: r.get(14)?,
            space_json: r.get(15)?,
        })
    })?;
    rows.collect()
}

/// The columns an `audit_dependency` of the current layout has and an older one lacks.
pub const KEYED_BY: [&str; 2] = ["arm", "cell"];

/// Drops an `audit_dependency` written before its rows were kept apart per arm and cell (it
/// lacks those columns). Returns whether it dropped one.
pub fn drop_stale(conn: &Connection) -> rusqlite::Result<bool> {
    drop_if_lacking(conn, "audit_dependency", &KEYED_BY)
}

/// One sentence of a coded replicate (`audit_replicate_sentences`).
#[derive(Clone, Copy, Debug)]
pub struct ReplicateSentenceRecord<'a> {
    /// Its index in the replicate.
    pub sentence_index: usize,
    /// Its segment's kind.
    pub segment: &'a str,
    /// Its segment's source.
    pub source: &'a str,
    /// The sentence.
    pub text: &'a str,
    /// Its code.
    pub code: Option<&'a str>,
}

/// What is written of one coded replicate (`audit_replicate_responses`, with its sentences).
#[derive(Clone, Debug)]
pub struct CodedReplicateRecord<'a> {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The sample's seed.
    pub sample_seed: &'a str,
    /// The replicate's number.
    pub replicate: i64,
    /// The model.
    pub model: &'a str,
    /// The run's environment.
    pub environment: &'a str,
    /// The role.
    pub role: &'a str,
    /// How it parsed.
    pub parse_status: &'a str,
    /// The parsed action, if any.
    pub action: Option<&'a str>,
    /// Whether it has pre-action reasoning.
    pub reasoning_present: bool,
    /// The reasoning segments' sources.
    pub reasoning_sources: String,
    /// Reasoning sentences.
    pub n_sentences: usize,
    /// The coder's error, if its output failed validation.
    pub coder_error: Option<&'a str>,
    /// The value vector, a JSON object (none where nothing was coded).
    pub values_json: Option<String>,
    /// The sentences.
    pub sentences: Vec<ReplicateSentenceRecord<'a>>,
}

/// Writes the codes of the replicates of `study` (every run where none) by `coder` with
/// `codebook`, replacing that coder's and codebook's, in one transaction; an `audit_dependency`
/// of an older layout is dropped and the current one made.
pub fn write_coded<'a>(
    conn: &mut Connection,
    codebook: CodebookRecord<'_>,
    coder: &str,
    study: Option<&str>,
    coded: impl IntoIterator<Item = CodedReplicateRecord<'a>>,
) -> rusqlite::Result<()> {
    let cb = codebook;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REPLICATE_CODES)?;
    drop_stale(&tx)?;
    make(&tx, DEPENDENCY)?;
    let scope = STUDY_SCOPE;
    let same = "coder = ?2 AND codebook = ?3 AND codebook_version = ?4 AND codebook_sha256 = ?5";
    for table in ["audit_replicate_responses", "audit_replicate_sentences"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE {scope} AND {same}"),
            params![study, coder, cb.name, cb.version, cb.sha256],
        )?;
    }
    {
        let mut resp = tx.prepare(
            "INSERT INTO audit_replicate_responses (run_id, seat, slot, sample_seed, replicate, coder, codebook,
                codebook_version, codebook_sha256, model, environment, role, parse_status, action, reasoning_present,
                reasoning_sources, n_sentences, coder_error, values_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )?;
        let mut sent = tx.prepare(
            "INSERT INTO audit_replicate_sentences (run_id, seat, slot, sample_seed, replicate, coder, codebook,
                codebook_version, codebook_sha256, sentence_index, segment, source, text, code)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for r in coded {
            resp.execute(params![
                r.run_id,
                r.seat,
                r.slot,
                r.sample_seed,
                r.replicate,
                coder,
                cb.name,
                cb.version,
                cb.sha256,
                r.model,
                r.environment,
                r.role,
                r.parse_status,
                r.action,
                r.reasoning_present,
                r.reasoning_sources,
                r.n_sentences,
                r.coder_error,
                r.values_json
            ])?;
            for x in &r.sentences {
                sent.execute(params![
                    r.run_id,
                    r.seat,
                    r.slot,
                    r.sample_seed,
                    r.replicate,
                    coder,
                    cb.name,
                    cb.version,
                    cb.sha256,
                    x.sentence_index,
                    x.segment,
                    x.source,
                    x.text,
                    x.code
                ])?;
            }
        }
    }
    tx.commit()
}

/// Replaces the dependency estimates of a study scope (empty: every run), coder and codebook
/// with `rows`, in one transaction; a non-finite number is written NULL.
pub fn write_estimates(
    conn: &mut Connection,
    scope: &str,
    coder: &str,
    codebook: (&str, u32, &str),
    rows: &[DependencyRow],
) -> rusqlite::Result<()> {
    let (name, version, sha256) = codebook;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REPLICATE_CODES)?;
    drop_stale(&tx)?;
    make(&tx, DEPENDENCY)?;
    tx.execute(
        "DELETE FROM audit_dependency WHERE scope = ?1 AND coder = ?2 AND codebook = ?3 AND codebook_version = ?4
            AND codebook_sha256 = ?5",
        params![scope, coder, name, version, sha256],
    )?;
    {
        let mut st = tx.prepare(
            "INSERT INTO audit_dependency (scope, coder, codebook, codebook_version, codebook_sha256, model, environment,
                arm, cell, role, indicator, estimator, value, status, reason, coef, se, stat, p, ci_low, ci_high,
                n_prompts, n_replicates, prompts_varying, validation)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25)",
        )?;
        for r in rows {
            st.execute(params![
                scope,
                coder,
                name,
                version,
                sha256,
                r.model,
                r.environment,
                r.arm,
                r.cell,
                r.role,
                r.indicator,
                r.estimator,
                r.value,
                r.status,
                r.reason,
                r.coef.filter(|v| v.is_finite()),
                r.se.filter(|v| v.is_finite()),
                r.stat.filter(|v| v.is_finite()),
                r.p.filter(|v| v.is_finite()),
                r.ci_low.filter(|v| v.is_finite()),
                r.ci_high.filter(|v| v.is_finite()),
                r.n_prompts,
                r.n_replicates,
                r.prompts_varying,
                r.validation
            ])?;
        }
    }
    tx.commit()
}

/// The dependency estimates of a study scope (empty: every run), coder and codebook (name,
/// version, SHA-256) in `audit_dependency`, in model, environment, arm, cell, role, estimator
/// and value order; none where the table does not exist.
pub fn read_estimates(
    conn: &Connection,
    scope: &str,
    coder: &str,
    codebook: (&str, u32, &str),
) -> rusqlite::Result<Vec<DependencyRow>> {
    if !has_table(conn, "audit_dependency")? {
        return Ok(Vec::new());
    }
    let (name, version, sha256) = codebook;
    let mut st = conn.prepare(
        "SELECT model, environment, role, indicator, estimator, value, status, reason, coef, se, stat, p, ci_low,
                ci_high, n_prompts, n_replicates, prompts_varying, validation, arm, cell
         FROM audit_dependency
         WHERE scope = ?1 AND coder = ?2 AND codebook = ?3 AND codebook_version = ?4 AND codebook_sha256 = ?5
         ORDER BY model, environment, arm, cell, role, estimator, value",
    )?;
    let rows = st.query_map(params![scope, coder, name, version, sha256], |r| {
        Ok(DependencyRow {
            model: r.get(0)?,
            environment: r.get(1)?,
            role: r.get(2)?,
            indicator: r.get(3)?,
            estimator: r.get(4)?,
            value: r.get(5)?,
            status: r.get(6)?,
            reason: r.get(7)?,
            coef: r.get(8)?,
            se: r.get(9)?,
            stat: r.get(10)?,
            p: r.get(11)?,
            ci_low: r.get(12)?,
            ci_high: r.get(13)?,
            n_prompts: r.get::<_, i64>(14)? as usize,
            n_replicates: r.get::<_, i64>(15)? as usize,
            prompts_varying: r.get::<_, Option<i64>>(16)?.map(|x| x as usize),
            validation: r.get(17)?,
            arm: r.get(18)?,
            cell: r.get(19)?,
        })
    })?;
    rows.collect()
}
