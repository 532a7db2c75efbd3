//! The audit run's reads and writes: the decision transcripts it codes, and its codebooks,
//! coders, segments, coded responses and sentences (`agora audit`).

use rusqlite::{params, Connection};

use super::{make, STUDY_SCOPE, TABLES};

/// A decision transcript as the audit reads it, with its run's study, environment, arm, cell
/// and spec.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct DecisionRow {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The seat's decision slot.
    pub slot: i64,
    /// The attempt.
    pub attempt: i64,
    /// The model's name in the study.
    pub model: String,
    /// The reply as the model wrote it.
    pub raw_reply: String,
    /// The parsed action (encoded), if any.
    pub action: Option<String>,
    /// `ok`, `truncated`, `fallback`, …
    pub parse_status: String,
    /// The request's messages, as JSON.
    pub messages_json: String,
    /// The run's study.
    pub study: String,
    /// The run's environment.
    pub environment: String,
    /// The run's arm.
    pub arm: String,
    /// The run's cell.
    pub cell: String,
    /// The run's spec, as JSON.
    pub spec_json: String,
}

/// Whether the store holds `table` as a table or a view.
pub fn has_table_or_view(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1",
        [table],
        |r| r.get(0),
    )?;
    Ok(n != 0)
}

/// The decision transcripts of the store's model endpoints (of `study` only, when given), in
/// run, seat, slot and attempt order; `human` is the endpoint of human participants, left out.
pub fn decisions(conn: &Connection, study: Option<&str>, human: &str) -> rusqlite::Result<Vec<DecisionRow>> {
    let mut st = conn.prepare(
        "SELECT t.run_id, t.seat, t.slot, t.attempt, t.model, t.raw_reply, t.action, t.parse_status, t.messages_json,
                r.study, r.environment, r.arm, r.cell, r.spec_json
         FROM transcripts t JOIN runs r ON r.run_id = t.run_id
         WHERE t.kind = 'decision' AND t.endpoint <> ?2 AND (?1 IS NULL OR r.study = ?1)
         ORDER BY t.run_id, t.seat, t.slot, t.attempt",
    )?;
    crate::rows::by_name(&mut st, params![study, human])
}

/// A machine coder as `audit_coders` keeps it.
#[derive(Clone, Copy, Debug)]
pub struct CoderRecord<'a> {
    /// The id its rows carry.
    pub id: &'a str,
    /// Its frozen identity, JSON.
    pub identity_json: &'a str,
    /// How it was served, JSON.
    pub serving_json: &'a str,
}

/// A codebook as the audit's rows name it (`audit_codebooks` keeps its text).
#[derive(Clone, Copy, Debug)]
pub struct CodebookRecord<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its version.
    pub version: u32,
    /// The SHA-256 of its text.
    pub sha256: &'a str,
    /// Its text.
    pub source: &'a str,
}

/// One segment of an audited reply (`audit_segments`).
#[derive(Clone, Copy, Debug)]
pub struct SegmentRecord<'a> {
    /// Its index in the reply's segments.
    pub segment_index: usize,
    /// `reasoning`, `action` or `post_hoc`.
    pub kind: &'a str,
    /// Where it came from.
    pub source: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// One sentence of an audited response (`audit_sentences`).
#[derive(Clone, Copy, Debug)]
pub struct SentenceRecord<'a> {
    /// Its index in the response.
    pub sentence_index: usize,
    /// Its segment's index.
    pub segment_index: usize,
    /// Its segment's kind.
    pub segment: &'a str,
    /// Its segment's source.
    pub source: &'a str,
    /// The sentence.
    pub text: &'a str,
    /// Its code (none for a post-hoc sentence).
    pub code: Option<&'a str>,
    /// What gave the code.
    pub evidence: Option<&'a str>,
}

/// What is written of one audited decision: its row of `audit_responses`, its segments and its
/// sentences.
#[derive(Clone, Debug)]
pub struct ResponseRecord<'a> {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The attempt that decided the slot.
    pub attempt: i64,
    /// The model.
    pub model: &'a str,
    /// The run's study.
    pub study: &'a str,
    /// The run's environment.
    pub environment: &'a str,
    /// The run's arm.
    pub arm: &'a str,
    /// The run's cell.
    pub cell: &'a str,
    /// `ok` or `truncated`.
    pub parse_status: &'a str,
    /// The parsed action.
    pub action: &'a str,
    /// The answer field asked for.
    pub answer_field: &'a str,
    /// The JSON key the answer was read from.
    pub answer_key: Option<&'a str>,
    /// Whether the located answer agrees with the action.
    pub answer_agrees: Option<bool>,
    /// How the reply was written.
    pub reply_form: &'a str,
    /// Whether it has pre-action reasoning.
    pub reasoning_present: bool,
    /// The reasoning segments' sources.
    pub reasoning_sources: String,
    /// Whether it has a post-hoc rationale.
    pub post_hoc_present: bool,
    /// Reasoning sentences.
    pub n_sentences: usize,
    /// Reasoning sentences coded with the residual code.
    pub n_residual: usize,
    /// Post-hoc sentences.
    pub n_post_hoc_sentences: usize,
    /// The coder's error, if its output failed validation.
    pub coder_error: Option<&'a str>,
    /// The value vector, a JSON object (none where nothing was coded).
    pub values_json: Option<String>,
    /// The segments.
    pub segments: Vec<SegmentRecord<'a>>,
    /// The sentences.
    pub sentences: Vec<SentenceRecord<'a>>,
}

/// Writes the audit's rows of `coder` with `codebook` for the runs of `study` (every run where
/// none), in one transaction: the coder and the codebook once, the segments of the runs in
/// scope and the rows of the same coder and codebook replaced, then `also` (the gate's
/// decisions) inside the same transaction. Returns the SHA-256 of other codebooks of the same
/// name and version written before.
pub fn write<'a>(
    conn: &mut Connection,
    codebook: CodebookRecord<'_>,
    coder: CoderRecord<'_>,
    segmenter_version: u32,
    study: Option<&str>,
    responses: impl IntoIterator<Item = ResponseRecord<'a>>,
    also: impl FnOnce(&Connection) -> rusqlite::Result<usize>,
) -> rusqlite::Result<Vec<String>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, TABLES)?;
    tx.execute(
        "INSERT OR IGNORE INTO audit_coders (coder, identity_json, serving_json) VALUES (?1, ?2, ?3)",
        params![coder.id, coder.identity_json, coder.serving_json],
    )?;
    let coder = coder.id;
    let cb = codebook;
    let earlier: Vec<String> = {
        let mut st = tx.prepare(
            "SELECT sha256 FROM audit_codebooks WHERE name = ?1 AND version = ?2 AND sha256 <> ?3 ORDER BY sha256",
        )?;
        let rows = st.query_map(params![cb.name, cb.version, cb.sha256], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    tx.execute(
        "INSERT OR IGNORE INTO audit_codebooks (name, version, sha256, source) VALUES (?1, ?2, ?3, ?4)",
        params![cb.name, cb.version, cb.sha256, cb.source],
    )?;
    let scope = STUDY_SCOPE;
    tx.execute(&format!("DELETE FROM audit_segments WHERE {scope}"), params![study])?;
    let same = "coder = ?2 AND codebook = ?3 AND codebook_version = ?4 AND codebook_sha256 = ?5";
    for table in ["audit_responses", "audit_sentences"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE {scope} AND {same}"),
            params![study, coder, cb.name, cb.version, cb.sha256],
        )?;
    }
    {
        let mut seg = tx.prepare(
            "INSERT INTO audit_segments (run_id, seat, slot, attempt, segment_index, segmenter_version, kind, source, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        let mut resp = tx.prepare(
            "INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version, codebook_sha256,
                model, study, environment, arm, cell, parse_status, action, answer_field, answer_key, answer_agrees,
                reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
                n_post_hoc_sentences, coder_error, values_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27)",
        )?;
        let mut sent = tx.prepare(
            "INSERT INTO audit_sentences (run_id, seat, slot, coder, codebook, codebook_version, codebook_sha256,
                sentence_index, segment_index, segment, source, text, code, evidence)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for r in responses {
            for g in &r.segments {
                seg.execute(params![
                    r.run_id,
                    r.seat,
                    r.slot,
                    r.attempt,
                    g.segment_index,
                    segmenter_version,
                    g.kind,
                    g.source,
                    g.text
                ])?;
            }
            resp.execute(params![
                r.run_id,
                r.seat,
                r.slot,
                r.attempt,
                coder,
                cb.name,
                cb.version,
                cb.sha256,
                r.model,
                r.study,
                r.environment,
                r.arm,
                r.cell,
                r.parse_status,
                r.action,
                r.answer_field,
                r.answer_key,
                r.answer_agrees,
                r.reply_form,
                r.reasoning_present,
                r.reasoning_sources,
                r.post_hoc_present,
                r.n_sentences,
                r.n_residual,
                r.n_post_hoc_sentences,
                r.coder_error,
                r.values_json
            ])?;
            for x in &r.sentences {
                sent.execute(params![
                    r.run_id,
                    r.seat,
                    r.slot,
                    coder,
                    cb.name,
                    cb.version,
                    cb.sha256,
                    x.sentence_index,
                    x.segment_index,
                    x.segment,
                    x.source,
                    x.text,
                    x.code,
                    x.evidence
                ])?;
            }
        }
    }
    also(&tx)?;
    tx.commit()?;
    Ok(earlier)
}

/// Drops `table` where the store holds it without every one of `columns`: an older layout of a
/// table derived from other rows. Returns whether it dropped the table.
pub fn drop_if_lacking(conn: &Connection, table: &str, columns: &[&str]) -> rusqlite::Result<bool> {
    if !super::has_table(conn, table)? {
        return Ok(false);
    }
    let mut st = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let held: Vec<String> = st.query_map([table], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    if columns.iter().all(|c| held.iter().any(|h| h == c)) {
        return Ok(false);
    }
    conn.execute_batch(&format!("DROP TABLE {table}"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_without_the_columns_is_dropped_and_one_with_them_is_kept() {
        let conn = Connection::open_in_memory().expect("db");
        assert!(!drop_if_lacking(&conn, "t", &["arm"]).expect("absent"), "no table: nothing to drop");
        conn.execute_batch("CREATE TABLE t (model TEXT, arm TEXT); INSERT INTO t VALUES ('m', 'a');").expect("t");
        assert!(!drop_if_lacking(&conn, "t", &["arm"]).expect("kept"));
        assert_eq!(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0)).expect("rows"), 1);
        assert!(drop_if_lacking(&conn, "t", &["arm", "cell"]).expect("dropped"));
        let gone: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 't'", [], |r| r.get(0)).expect("listed");
        assert_eq!(gone, 0);
    }
}
