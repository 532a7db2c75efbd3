//! The audit's tables in the store. The analysis crate owns them: they are created here with
//! `CREATE TABLE IF NOT EXISTS` in the store the audit was pointed at, beside the engine's
//! tables, which the audit only reads.
//!
//! - `audit_codebooks`: each codebook used, by name, version and SHA-256, with its text.
//! - `audit_coders`: each machine coder used, by the id its rows carry (`coder`), with its
//!   frozen identity ([`Coder::identity`], JSON: the lexicon coder's version; an LLM coder's
//!   model, served id, quantisation, sampling parameters and prompt-template hash) and how it
//!   was served ([`Coder::serving`], JSON: an LLM coder's endpoints; `null` for the lexicon).
//!   One row per distinct (id, identity, serving); rows are never removed.
//! - `audit_segments`: each audited reply's segments (reasoning, action, post_hoc), coder-free.
//! - `audit_responses`: one row per audited decision and (coder, codebook): whether it has
//!   pre-action reasoning, its sentence counts and its value vector as a JSON object.
//! - `audit_sentences`: one row per sentence of a response's reasoning (coded) and of its
//!   post-hoc rationale (kept, `code` NULL).
//! - `audit_labels` ([`labels`](super::labels)): human coders' labels of reasoning sentences,
//!   one row per sentence, human coder and codebook (name and version); written by
//!   `agora audit import`.
//! - `audit_agreement` ([`agreement`](super::agreement)): Cohen's κ between human coders and of
//!   each machine coder against the human reference, per model, with the confusion matrix and
//!   per-code recall; written by `agora audit agreement`.
//!
//! A write replaces, in one transaction, the segments of the runs in scope and the rows of the
//! same coder and codebook (name, version, SHA-256) for those runs; rows of other coders and
//! codebooks stay. A response whose coder output failed validation keeps its row in
//! `audit_responses` with the error in `coder_error` and no value vector, and its sentences
//! with no code: the error is recorded, never repaired.

use rusqlite::{params, Connection};

use crate::codebook::LoadedCodebook;
use crate::coder::Coder;
use crate::response::Response;
use crate::segment::SEGMENTER_VERSION;

/// The audit's store tables (`agora_records::families::audit::TABLES`: the ladder reads them too).
pub use agora_records::families::audit::TABLES as SCHEMA;

/// Writes the audit's rows of `coder` (see the [module documentation](self)); returns the
/// SHA-256 of other codebooks of the same name and version audited before in this store (a
/// codebook edited without a new version).
pub fn write(
    conn: &mut Connection,
    codebook: &LoadedCodebook,
    coder: &dyn Coder,
    study: Option<&str>,
    responses: &[Response],
) -> rusqlite::Result<Vec<String>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    agora_records::families::audit::make(&tx, SCHEMA)?;
    let id = coder.id();
    tx.execute(
        "INSERT OR IGNORE INTO audit_coders (coder, identity_json, serving_json) VALUES (?1, ?2, ?3)",
        params![id, coder.identity().to_string(), coder.serving().to_string()],
    )?;
    let coder = id.as_str();
    let cb = &codebook.codebook;
    let earlier: Vec<String> = {
        let mut st = tx.prepare(
            "SELECT sha256 FROM audit_codebooks WHERE name = ?1 AND version = ?2 AND sha256 <> ?3 ORDER BY sha256",
        )?;
        let rows = st.query_map(params![cb.name, cb.version, codebook.sha256], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    tx.execute(
        "INSERT OR IGNORE INTO audit_codebooks (name, version, sha256, source) VALUES (?1, ?2, ?3, ?4)",
        params![cb.name, cb.version, codebook.sha256, codebook.source],
    )?;
    let scope = "(?1 IS NULL OR run_id IN (SELECT run_id FROM runs WHERE study = ?1))";
    tx.execute(&format!("DELETE FROM audit_segments WHERE {scope}"), params![study])?;
    let same = "coder = ?2 AND codebook = ?3 AND codebook_version = ?4 AND codebook_sha256 = ?5";
    for table in ["audit_responses", "audit_sentences"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE {scope} AND {same}"),
            params![study, coder, cb.name, cb.version, codebook.sha256],
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
            let s = &r.segmentation;
            for (i, g) in s.segments.iter().enumerate() {
                seg.execute(params![
                    r.run_id,
                    r.seat,
                    r.slot,
                    r.attempt,
                    i,
                    SEGMENTER_VERSION,
                    g.kind.as_str(),
                    g.source,
                    g.text
                ])?;
            }
            let reasoning = r.reasoning_sentences();
            let residual = r.sentences.iter().filter(|x| x.code.as_deref() == Some(cb.residual.as_str())).count();
            let values_json = r.coded().then(|| {
                let m: serde_json::Map<String, serde_json::Value> = cb
                    .values()
                    .zip(&r.values)
                    .map(|(c, v)| (c.name.clone(), serde_json::json!(u8::from(*v))))
                    .collect();
                serde_json::Value::Object(m).to_string()
            });
            resp.execute(params![
                r.run_id,
                r.seat,
                r.slot,
                r.attempt,
                coder,
                cb.name,
                cb.version,
                codebook.sha256,
                r.model,
                r.study,
                r.environment,
                r.arm,
                r.cell,
                r.parse_status,
                r.action,
                r.answer_field,
                s.answer_key,
                r.answer_agrees,
                s.form.as_str(),
                s.has_reasoning(),
                s.reasoning_sources(),
                s.has_post_hoc(),
                reasoning,
                residual,
                r.sentences.len() - reasoning,
                r.coder_error,
                values_json
            ])?;
            for x in &r.sentences {
                sent.execute(params![
                    r.run_id,
                    r.seat,
                    r.slot,
                    coder,
                    cb.name,
                    cb.version,
                    codebook.sha256,
                    x.sentence_index,
                    x.segment_index,
                    x.kind.as_str(),
                    x.source,
                    x.text,
                    x.code,
                    x.evidence
                ])?;
            }
        }
    }
    // The gate's decisions change with the codes: recorded with them.
    crate::agreement::write_gates(&tx)?;
    tx.commit()?;
    Ok(earlier)
}

/// Drops `table` where the store holds it without every one of `columns`: an older layout of a
/// table derived from other rows (the dependency and intervention estimates), which the
/// current code must neither read as if it had the columns nor add rows to beside rows of
/// another meaning. Returns whether it dropped the table; the caller rebuilds it or says which
/// command does.
pub fn drop_if_lacking(conn: &Connection, table: &str, columns: &[&str]) -> rusqlite::Result<bool> {
    if !crate::labels::has_table(conn, table)? {
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
        assert!(!crate::labels::has_table(&conn, "t").expect("gone"));
    }
}
