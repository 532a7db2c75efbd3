//! The coder-validation gate's reads (the human labels, the machine codes and the coder errors
//! it weighs) and its decisions (`audit_gate`).

use std::collections::BTreeMap;

use rusqlite::{params, Connection};

use super::agreement::{HumanLabel, MachineCode};
use super::{has_table, make, CoderKey, CoderKeyRef, GATE};
use crate::families::has_column;

/// (model, coder, codebook SHA-256) → (responses with reasoning the coder failed on, responses
/// with reasoning).
pub type CoderErrors = BTreeMap<(String, String, String), (usize, usize)>;

/// Per model, coder and codebook SHA-256 of a codebook (name and version): the responses with
/// reasoning the coder failed on, of the responses with reasoning.
pub fn load_coder_errors(conn: &Connection, codebook: &str, version: u32) -> rusqlite::Result<CoderErrors> {
    if !has_table(conn, "audit_responses")? {
        return Ok(BTreeMap::new());
    }
    let mut st = conn.prepare(
        "SELECT model, coder, codebook_sha256, SUM(coder_error IS NOT NULL), COUNT(*) FROM audit_responses
         WHERE codebook = ?1 AND codebook_version = ?2 AND reasoning_present = 1
         GROUP BY model, coder, codebook_sha256",
    )?;
    let rows = st.query_map(params![codebook, version], |r| {
        Ok(((r.get(0)?, r.get(1)?, r.get(2)?), (r.get::<_, i64>(3)? as usize, r.get::<_, i64>(4)? as usize)))
    })?;
    rows.collect()
}

/// The human labels of a codebook (name and version) in the store, with their models: those
/// imported from a recorded blind export (an export id); none where the store has no labels or
/// only labels of before exports were recorded.
pub fn load_labels(conn: &Connection, codebook: &str, version: u32) -> rusqlite::Result<Vec<HumanLabel>> {
    if !has_table(conn, "audit_labels")? || !has_column(conn, "audit_labels", "export_id")? {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT l.run_id, l.seat, l.slot, l.sentence_index, l.coder, l.code, l.text,
                COALESCE((SELECT a.model FROM audit_responses a
                          WHERE a.run_id = l.run_id AND a.seat = l.seat AND a.slot = l.slot LIMIT 1), '')
         FROM audit_labels l WHERE l.codebook = ?1 AND l.codebook_version = ?2 AND l.export_id IS NOT NULL
         ORDER BY l.run_id, l.seat, l.slot, l.sentence_index, l.coder",
    )?;
    let rows = st.query_map(params![codebook, version], |r| {
        Ok(HumanLabel {
            key: (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
            coder: r.get(4)?,
            code: r.get(5)?,
            text: r.get(6)?,
            model: r.get(7)?,
        })
    })?;
    rows.collect()
}

/// The labels of a codebook (name and version) imported before Agora recorded exports (no export
/// id).
pub fn labels_without_export(conn: &Connection, codebook: &str, version: u32) -> rusqlite::Result<usize> {
    if !has_table(conn, "audit_labels")? {
        return Ok(0);
    }
    let missing = if has_column(conn, "audit_labels", "export_id")? { "export_id IS NULL" } else { "1" };
    conn.query_row(
        &format!("SELECT COUNT(*) FROM audit_labels WHERE codebook = ?1 AND codebook_version = ?2 AND {missing}"),
        params![codebook, version],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| usize::try_from(n).unwrap_or(0))
}

/// The machine codes of a codebook's reasoning sentences in the store (of one coder and
/// codebook SHA-256 when given), with their models; a sentence of a response whose coder
/// output failed validation reads `coder_error`.
pub fn load_machine(
    conn: &Connection,
    codebook: &str,
    version: u32,
    only: Option<(&str, &str)>,
    coder_error: &str,
) -> rusqlite::Result<Vec<MachineCode>> {
    if !has_table(conn, "audit_sentences")? || !has_table(conn, "audit_responses")? {
        return Ok(Vec::new());
    }
    let (coder, sha) = only.map_or((None, None), |(c, s)| (Some(c), Some(s)));
    let mut st = conn.prepare(
        "SELECT s.run_id, s.seat, s.slot, s.sentence_index, a.model, s.coder, s.codebook_sha256,
                COALESCE(s.code, ?5), s.text
         FROM audit_sentences s JOIN audit_responses a
           ON a.run_id = s.run_id AND a.seat = s.seat AND a.slot = s.slot AND a.coder = s.coder
          AND a.codebook = s.codebook AND a.codebook_version = s.codebook_version AND a.codebook_sha256 = s.codebook_sha256
         WHERE s.codebook = ?1 AND s.codebook_version = ?2 AND s.segment = 'reasoning'
           AND (?3 IS NULL OR s.coder = ?3) AND (?4 IS NULL OR s.codebook_sha256 = ?4)
         ORDER BY s.run_id, s.seat, s.slot, s.sentence_index, s.coder",
    )?;
    let rows = st.query_map(params![codebook, version, coder, sha, coder_error], |r| {
        Ok(MachineCode {
            key: (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
            model: r.get(4)?,
            coder: r.get(5)?,
            codebook_sha256: r.get(6)?,
            code: r.get(7)?,
            text: r.get(8)?,
        })
    })?;
    rows.collect()
}

/// A coder key → the audited models coded.
pub type CodedKeys = BTreeMap<CoderKey, Vec<String>>;

/// The coders and codebooks (coder, name, version, SHA-256) the store's coded responses name,
/// each with the audited models it coded.
pub fn coded_keys(conn: &Connection) -> rusqlite::Result<CodedKeys> {
    let mut keys = CodedKeys::new();
    if !has_table(conn, "audit_responses")? {
        return Ok(keys);
    }
    let mut st = conn.prepare(
        "SELECT DISTINCT coder, codebook, codebook_version, codebook_sha256, model FROM audit_responses
         ORDER BY coder, codebook, codebook_version, codebook_sha256, model",
    )?;
    let rows = st.query_map([], |r| Ok((CoderKey::read(r, 0)?, r.get::<_, String>(4)?)))?;
    for row in rows {
        let (key, model) = row?;
        keys.entry(key).or_default().push(model);
    }
    Ok(keys)
}

/// The text of a codebook (name, version, SHA-256) as `audit_codebooks` keeps it; none where
/// the store has no such codebook.
pub fn codebook_source(conn: &Connection, name: &str, version: u32, sha256: &str) -> rusqlite::Result<Option<String>> {
    Ok(if has_table(conn, "audit_codebooks")? {
        conn.query_row(
            "SELECT source FROM audit_codebooks WHERE name = ?1 AND version = ?2 AND sha256 = ?3",
            params![name, version, sha256],
            |r| r.get(0),
        )
        .ok()
    } else {
        None
    })
}

/// The machine coder's agreement with the human reference on one model's text, and the
/// threshold it is held to: the columns `kappa` to `coder_of` of `audit_gate`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct CoderAgreement {
    /// κ against the human reference, if it could be computed.
    pub kappa: Option<f64>,
    /// Sentences it rests on.
    pub n: i64,
    /// Responses those sentences come from.
    pub responses: i64,
    /// The threshold.
    pub min_kappa: f64,
    /// The coder's recall per code of the reference (JSON).
    pub recall_json: String,
    /// Responses with reasoning the coder failed on.
    pub coder_failed: i64,
    /// The model's responses with reasoning.
    pub coder_of: i64,
}

/// One row of `audit_gate`: a coder's decision on one model's text, as the audit writes it and
/// the ladder reads it (under its coder and codebook, which the table keys it by). The human
/// labellers' columns are `None` only as read from a store written before they were recorded;
/// the current layout declares them NOT NULL, so a row written with one `None` is refused by
/// SQLite, not stored.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct GateRow {
    /// The audited model.
    pub model: String,
    /// The decision as stored (`validated`, `refused`, …).
    pub status: String,
    /// The coder's agreement with the human reference.
    #[serde(flatten)]
    pub agreement: CoderAgreement,
    /// Why.
    pub reason: String,
    /// The human labellers' number (`None`: a store written before they were recorded).
    pub labellers: Option<i64>,
    /// Their κ with each other.
    pub human_kappa: Option<f64>,
    /// The sentences two or more of them labelled.
    pub human_sentences: Option<i64>,
    /// Those without a majority.
    pub human_disagreements: Option<i64>,
    /// The least κ between the labellers the decision applied.
    pub min_human_kappa: Option<f64>,
    /// The largest share of sentences without a majority it applied.
    pub max_human_disagreement: Option<f64>,
}

/// Replaces `audit_gate` whole with `decisions`, each under its coder and codebook (inside the
/// caller's transaction where it holds one): a store's older layout is dropped, not altered.
/// Returns the decisions written.
pub fn write_gates<'a>(
    conn: &Connection,
    decisions: impl IntoIterator<Item = (CoderKeyRef<'a>, GateRow)>,
) -> rusqlite::Result<usize> {
    conn.execute_batch("DROP TABLE IF EXISTS audit_gate;")?;
    make(conn, GATE)?;
    let mut written = 0;
    for (key, g) in decisions {
        conn.execute(
            "INSERT INTO audit_gate (coder, codebook, codebook_version, codebook_sha256, model, status, kappa, n,
                responses, min_kappa, recall_json, coder_failed, coder_of, reason, labellers, human_kappa,
                human_sentences, human_disagreements, min_human_kappa, max_human_disagreement)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
            params![
                key.coder,
                key.codebook,
                key.version,
                key.sha256,
                g.model,
                g.status,
                g.agreement.kappa,
                g.agreement.n,
                g.agreement.responses,
                g.agreement.min_kappa,
                g.agreement.recall_json,
                g.agreement.coder_failed,
                g.agreement.coder_of,
                g.reason,
                g.labellers,
                g.human_kappa,
                g.human_sentences,
                g.human_disagreements,
                g.min_human_kappa,
                g.max_human_disagreement,
            ],
        )?;
        written += 1;
    }
    Ok(written)
}

/// Writes the gate's decisions in one transaction of their own, `decide` computing them inside
/// it. Returns the decisions written.
pub fn record_gates(
    conn: &mut Connection,
    decide: impl FnOnce(&Connection) -> rusqlite::Result<usize>,
) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    let written = decide(&tx)?;
    tx.commit()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str, status: &str, kappa: Option<f64>) -> GateRow {
        GateRow {
            model: model.into(),
            status: status.into(),
            agreement: CoderAgreement {
                kappa,
                n: 240,
                responses: 120,
                min_kappa: 0.8,
                recall_json: "[1.0,0.5]".into(),
                coder_failed: 1,
                coder_of: 121,
            },
            reason: format!("{status}: κ"),
            labellers: Some(2),
            human_kappa: Some(0.85),
            human_sentences: Some(240),
            human_disagreements: Some(10),
            min_human_kappa: Some(0.7),
            max_human_disagreement: Some(0.2),
        }
    }

    #[test]
    fn a_decision_reads_back_as_the_row_written_under_its_own_key_only() {
        let conn = Connection::open_in_memory().expect("db");
        let key = CoderKeyRef { coder: "lexicon/1", codebook: "default", version: 1, sha256: "abc" };
        let other = CoderKeyRef { coder: "llm/m", ..key };
        let written = [(key, row("m1", "validated", Some(0.85))), (key, row("m2", "refused", None))];
        let n = write_gates(&conn, written.iter().cloned().chain([(other, row("m1", "refused", Some(0.4)))]))
            .expect("write");
        assert_eq!(n, 3);
        let read = crate::reads::evidence::gate(&conn, key, Ok).expect("read");
        assert_eq!(read, [written[0].1.clone(), written[1].1.clone()], "by model, this key's rows only");
        let read = crate::reads::evidence::gate(&conn, other, Ok).expect("read");
        assert_eq!((read.len(), read[0].status.as_str()), (1, "refused"));
    }
}
