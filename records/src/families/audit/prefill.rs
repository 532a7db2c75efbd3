//! The prefill interventions' reads and writes (`agora audit prefill`): the coded decisions it
//! intervenes on and the calls it records (`audit_prefill`).

use agora_agents::llm::cache::CachedReply;
use rusqlite::{params, Connection};
use serde::Deserialize;

use super::{has_table, CoderKeyRef, Position};

/// Whether the store holds the audit's coded responses and sentences.
pub fn audited(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(has_table(conn, "audit_responses")? && has_table(conn, "audit_sentences")?)
}

/// A coded decision with pre-action reasoning, as the prefill reads it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CodedDecision {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The run's key.
    pub run_key: String,
    /// The model, the environment, block arm and perturbation cell of the decision's run, and
    /// the role.
    #[serde(flatten)]
    pub position: Position,
    /// The served id.
    pub served_id: String,
    /// The answer field asked for.
    pub answer_field: String,
    /// The request's messages, JSON.
    pub messages_json: String,
    /// The run's spec, JSON.
    pub spec_json: String,
    /// The run's variant.
    pub variant: String,
    /// Reasoning sentences with their codes, in order (`audit_sentences`, read apart).
    #[serde(skip)]
    pub sentences: Vec<(String, String)>,
}

/// The decisions coded by a coder with a codebook that have pre-action reasoning and no coder
/// error, in run, seat and slot order, each with its coded reasoning sentences.
pub fn coded_decisions(conn: &Connection, key: CoderKeyRef<'_>) -> rusqlite::Result<Vec<CodedDecision>> {
    let CoderKeyRef { coder, codebook, version, sha256 } = key;
    let mut st = conn.prepare(
        "SELECT a.run_id, a.seat, a.slot, r.run_key, a.model, a.environment, a.arm, a.cell, t.role, t.served_id,
                a.answer_field, t.messages_json, r.spec_json, r.variant
         FROM audit_responses a
         JOIN runs r ON r.run_id = a.run_id
         JOIN transcripts t ON t.run_id = a.run_id AND t.seat = a.seat AND t.slot = a.slot
              AND t.attempt = a.attempt AND t.kind = 'decision'
         WHERE a.coder = ?1 AND a.codebook = ?2 AND a.codebook_version = ?3 AND a.codebook_sha256 = ?4
           AND a.reasoning_present = 1 AND a.coder_error IS NULL
         ORDER BY a.run_id, a.seat, a.slot",
    )?;
    let mut out: Vec<CodedDecision> = crate::rows::by_name(&mut st, params![coder, codebook, version, sha256])?;
    let mut st = conn.prepare(
        "SELECT text, code FROM audit_sentences
         WHERE run_id = ?1 AND seat = ?2 AND slot = ?3 AND coder = ?4 AND codebook = ?5 AND codebook_version = ?6
           AND codebook_sha256 = ?7 AND segment = 'reasoning' AND code IS NOT NULL
         ORDER BY sentence_index",
    )?;
    for d in &mut out {
        d.sentences = st
            .query_map(params![d.run_id, d.seat, d.slot, coder, codebook, version, sha256], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(out)
}

/// One prefill call as `audit_prefill` keeps it.
#[derive(Clone, Debug)]
pub struct PrefillRecord<'a> {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The decision's response id.
    pub response_id: &'a str,
    /// The sample's seed, as text.
    pub sample_seed: String,
    /// The value intervened on.
    pub value: &'a str,
    /// The edit (`insert`, `delete`, …).
    pub edit: &'a str,
    /// The replicate's number.
    pub replicate: i64,
    /// The coder and codebook.
    pub key: CoderKeyRef<'a>,
    /// The decision's position.
    pub position: &'a Position,
    /// The served id.
    pub served_id: &'a str,
    /// Whether the prefilled reasoning states the value.
    pub stated: bool,
    /// The prefilled reasoning.
    pub prefill: &'a str,
    /// The request's seed, if one was sent.
    pub request_seed: Option<i64>,
    /// The request, JSON.
    pub messages_json: &'a str,
    /// The reply cache key.
    pub cache_key: &'a str,
    /// The reply (its endpoint, continuation, finish reason and latency are kept).
    pub reply: &'a CachedReply,
    /// The parsed action, if any.
    pub action: Option<String>,
    /// How it parsed.
    pub parse_status: String,
    /// What failed, if anything.
    pub detail: String,
    /// The action indicator's value, where defined.
    pub indicator: Option<f64>,
}

/// Writes prefill calls into `audit_prefill` (a call of the same decision, seed, value, edit,
/// replicate, coder and codebook replaces the one written before), inside the caller's
/// transaction; the table is made ([`super::faithfulness::make_tables`]).
pub fn write_calls(conn: &Connection, calls: &[PrefillRecord<'_>]) -> rusqlite::Result<()> {
    let mut st = conn.prepare(
        "INSERT OR REPLACE INTO audit_prefill (run_id, seat, slot, response_id, sample_seed, value, edit, replicate,
                coder, codebook, codebook_version, codebook_sha256, model, served_id, endpoint, environment, arm, cell,
                role, stated, prefill, request_seed, messages_json, cache_key, continuation, finish_reason, action,
                parse_status, detail, indicator, latency_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31)",
    )?;
    for c in calls {
        st.execute(params![
            c.run_id,
            c.seat,
            c.slot,
            c.response_id,
            c.sample_seed,
            c.value,
            c.edit,
            c.replicate,
            c.key.coder,
            c.key.codebook,
            c.key.version,
            c.key.sha256,
            c.position.model,
            c.served_id,
            c.reply.endpoint,
            c.position.environment,
            c.position.arm,
            c.position.cell,
            c.position.role,
            c.stated,
            c.prefill,
            c.request_seed,
            c.messages_json,
            c.cache_key,
            c.reply.content,
            c.reply.finish_reason,
            c.action,
            c.parse_status,
            c.detail,
            c.indicator,
            c.reply.latency_ms
        ])?;
    }
    Ok(())
}
