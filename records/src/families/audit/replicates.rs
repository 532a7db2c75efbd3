//! The replicates' reads and writes (`agora audit replicates`): the decisions it samples and
//! the replies it records (`audit_replicates`).

use agora_agents::llm::cache::CachedReply;
use rusqlite::{params, Connection};

use super::{has_table, make, REPLICATES};

/// A decision transcript the replicates may sample, as read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct SampledDecision {
    /// The run's row id.
    pub run_id: i64,
    /// The run's key.
    pub run_key: String,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The attempt.
    pub attempt: i64,
    /// The model.
    pub model: String,
    /// The served id.
    pub served_id: String,
    /// The round.
    pub round: i64,
    /// The role.
    pub role: String,
    /// The request's messages, JSON.
    pub messages_json: String,
    /// The reply.
    pub raw_reply: String,
    /// The parsed action.
    pub action: String,
    /// `ok` or `truncated`.
    pub parse_status: String,
    /// The run's spec, JSON.
    pub spec_json: String,
    /// The run's variant.
    pub variant: String,
    /// The run's environment.
    pub environment: String,
    /// The run's cell.
    pub cell: String,
    /// Whether `agora audit` found pre-action reasoning in the original reply (none when the
    /// store was not audited).
    pub reasoning: Option<bool>,
}

/// The decision transcripts with an action of the store's model endpoints (of `study` only,
/// when given; `human` is the endpoint of human participants, left out), in run, seat, slot and
/// attempt order.
pub fn decisions(conn: &Connection, study: Option<&str>, human: &str) -> rusqlite::Result<Vec<SampledDecision>> {
    let reasoning = if has_table(conn, "audit_responses")? {
        "(SELECT MAX(a.reasoning_present) FROM audit_responses a WHERE a.run_id = t.run_id AND a.seat = t.seat AND a.slot = t.slot) = 1 AS reasoning"
    } else {
        "NULL AS reasoning"
    };
    let mut st = conn.prepare(&format!(
        "SELECT t.run_id, r.run_key, t.seat, t.slot, t.attempt, t.model, t.served_id, t.round, t.role, t.messages_json,
                t.raw_reply, t.action, t.parse_status, r.spec_json, r.variant, r.environment, r.cell, {reasoning}
         FROM transcripts t JOIN runs r ON r.run_id = t.run_id
         WHERE t.kind = 'decision' AND t.action IS NOT NULL
           AND (t.parse_status = 'ok' OR t.parse_status = 'truncated') AND (?1 IS NULL OR r.study = ?1)
           AND t.endpoint <> ?2
         ORDER BY t.run_id, t.seat, t.slot, t.attempt"
    ))?;
    crate::rows::by_name(&mut st, params![study, human])
}

/// One replicate's reply as `audit_replicates` keeps it.
#[derive(Clone, Debug)]
pub struct ReplicateRecord<'a> {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The original decision's response id.
    pub response_id: &'a str,
    /// The original decision's attempt.
    pub original_attempt: i64,
    /// The sample's seed, as text.
    pub sample_seed: String,
    /// The replicate's number.
    pub replicate: i64,
    /// The model.
    pub model: &'a str,
    /// The served id.
    pub served_id: &'a str,
    /// The round.
    pub round: i64,
    /// The role.
    pub role: &'a str,
    /// The request's seed, if one was sent.
    pub request_seed: Option<i64>,
    /// The request, JSON.
    pub messages_json: &'a str,
    /// The reply cache key.
    pub cache_key: &'a str,
    /// The original decision's cache key.
    pub original_cache_key: &'a str,
    /// The answer field asked for.
    pub answer_field: &'a str,
    /// The action space, JSON.
    pub space_json: String,
    /// The reply.
    pub reply: &'a CachedReply,
    /// The parsed action, if any.
    pub action: Option<String>,
    /// The reason given, if any.
    pub reason: Option<String>,
    /// How it parsed.
    pub parse_status: String,
    /// What failed, if anything.
    pub detail: String,
}

/// Writes the replicates' replies in one transaction (a reply of the same decision, sample,
/// replicate replaces the one written before).
pub fn write(conn: &mut Connection, replicates: &[ReplicateRecord<'_>]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REPLICATES)?;
    {
        let mut st = tx.prepare(
            "INSERT OR REPLACE INTO audit_replicates (run_id, seat, slot, response_id, original_attempt, sample_seed,
                replicate, model, served_id, endpoint, round, role, request_seed, messages_json, cache_key,
                original_cache_key, answer_field, space_json, raw_reply, finish_reason, action, reason, parse_status,
                detail, latency_ms, prompt_tokens, completion_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27)",
        )?;
        for r in replicates {
            st.execute(params![
                r.run_id,
                r.seat,
                r.slot,
                r.response_id,
                r.original_attempt,
                r.sample_seed,
                r.replicate,
                r.model,
                r.served_id,
                r.reply.endpoint,
                r.round,
                r.role,
                r.request_seed,
                r.messages_json,
                r.cache_key,
                r.original_cache_key,
                r.answer_field,
                r.space_json,
                r.reply.content,
                r.reply.finish_reason,
                r.action,
                r.reason,
                r.parse_status,
                r.detail,
                r.reply.latency_ms,
                r.reply.prompt_tokens.map(|n| n as i64),
                r.reply.completion_tokens.map(|n| n as i64)
            ])?;
        }
    }
    tx.commit()
}
