//! Human labels and the blind exports they are made from (`audit_labels`, `audit_exports`;
//! `agora audit export` and `agora audit import`).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::{has_table, make, CoderKeyRef, EXPORTS, LABELS};

/// An export as `audit_exports` records it.
#[derive(Clone, Debug)]
pub struct ExportRecord<'a> {
    /// The export id.
    pub export_id: &'a str,
    /// The sample's seed, as text.
    pub seed: String,
    /// Responses sampled per model.
    pub sample: i64,
    /// The machine coder and its codebook.
    pub key: CoderKeyRef<'a>,
    /// The models, a JSON list.
    pub models_json: String,
    /// Whether the export hides the coder's codes.
    pub blind: bool,
    /// Sentences exported.
    pub sentences: i64,
    /// Responses exported.
    pub responses: i64,
}

/// Records an export in `audit_exports` in one transaction, keeping the first record of an
/// export drawn again. Returns the time the store gave it.
pub fn record_export(conn: &mut Connection, e: &ExportRecord<'_>) -> rusqlite::Result<String> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, EXPORTS)?;
    tx.execute(
        "INSERT OR IGNORE INTO audit_exports (export_id, seed, sample, coder, codebook, codebook_version,
            codebook_sha256, models_json, blind, sentences, responses)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            e.export_id,
            e.seed,
            e.sample,
            e.key.coder,
            e.key.codebook,
            e.key.version,
            e.key.sha256,
            e.models_json,
            e.blind,
            e.sentences,
            e.responses,
        ],
    )?;
    let created: String =
        tx.query_row("SELECT created FROM audit_exports WHERE export_id = ?1", [e.export_id], |r| r.get(0))?;
    tx.commit()?;
    Ok(created)
}

/// A coded response an export samples from: (run key, run id, seat, slot, model, environment,
/// cell).
pub type SampledResponse = (String, i64, i64, i64, String, String, String);

/// The responses with pre-action reasoning coded by a coder with a codebook, in run, seat and
/// slot order.
pub fn reasoning_responses(conn: &Connection, key: CoderKeyRef<'_>) -> rusqlite::Result<Vec<SampledResponse>> {
    let mut st = conn.prepare(
        "SELECT r.run_key, a.run_id, a.seat, a.slot, a.model, a.environment, a.cell
         FROM audit_responses a JOIN runs r ON r.run_id = a.run_id
         WHERE a.coder = ?1 AND a.codebook = ?2 AND a.codebook_version = ?3 AND a.codebook_sha256 = ?4
           AND a.reasoning_present = 1
         ORDER BY a.run_id, a.seat, a.slot",
    )?;
    st.query_map(params![key.coder, key.codebook, key.version, key.sha256], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
    })
    .and_then(Iterator::collect)
}

/// The reasoning sentences of one response (run id, seat, slot) as a coder coded them with a
/// codebook: (sentence index, text, code), in order.
pub fn reasoning_sentences(
    conn: &Connection,
    (run_id, seat, slot): (i64, i64, i64),
    key: CoderKeyRef<'_>,
) -> rusqlite::Result<Vec<(i64, String, Option<String>)>> {
    let mut st = conn.prepare_cached(
        "SELECT sentence_index, text, code FROM audit_sentences
         WHERE run_id = ?1 AND seat = ?2 AND slot = ?3 AND coder = ?4 AND codebook = ?5 AND codebook_version = ?6
           AND codebook_sha256 = ?7 AND segment = 'reasoning'
         ORDER BY sentence_index",
    )?;
    st.query_map(params![run_id, seat, slot, key.coder, key.codebook, key.version, key.sha256], |x| {
        Ok((x.get(0)?, x.get(1)?, x.get(2)?))
    })
    .and_then(Iterator::collect)
}

/// A stored reasoning or post-hoc sentence, as an import checks a label against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSentence {
    /// The run's row id.
    pub run_id: i64,
    /// Its segment's kind.
    pub segment: String,
    /// Its text.
    pub text: String,
}

/// A sentence by its response's run key: (run key, seat, slot, sentence index).
pub type SentenceAt = (String, i64, i64, i64);

/// The sentences audited with a codebook (name and version), by (run key, seat, slot,
/// sentence index).
pub fn audited_sentences(
    conn: &Connection,
    codebook: &str,
    version: u32,
) -> rusqlite::Result<Vec<(SentenceAt, StoredSentence)>> {
    let mut st = conn.prepare(
        "SELECT DISTINCT r.run_key, s.run_id, s.seat, s.slot, s.sentence_index, s.segment, s.text
         FROM audit_sentences s JOIN runs r ON r.run_id = s.run_id
         WHERE s.codebook = ?1 AND s.codebook_version = ?2",
    )?;
    st.query_map(params![codebook, version], |r| {
        Ok((
            (r.get(0)?, r.get(2)?, r.get(3)?, r.get(4)?),
            StoredSentence { run_id: r.get(1)?, segment: r.get(5)?, text: r.get(6)? },
        ))
    })
    .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
}

/// A recorded export, as an import checks a label's `export_id` against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedExport {
    /// Whether it hid the coder's codes.
    pub blind: bool,
    /// The codebook's name.
    pub codebook: String,
    /// Its version.
    pub version: u32,
}

/// The exports the store recorded (none where it has no `audit_exports`).
pub fn recorded_exports(conn: &Connection) -> rusqlite::Result<HashMap<String, RecordedExport>> {
    if !has_table(conn, "audit_exports")? {
        return Ok(HashMap::new());
    }
    let mut st = conn.prepare("SELECT export_id, blind, codebook, codebook_version FROM audit_exports")?;
    let rows = st.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, RecordedExport { blind: r.get(1)?, codebook: r.get(2)?, version: r.get(3)? }))
    })?;
    rows.collect()
}

/// A label to write (one that passed every check of an import).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRecord {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The sentence's index.
    pub sentence_index: i64,
    /// The code.
    pub code: String,
    /// The sentence's text.
    pub text: String,
    /// The label file's line.
    pub line: usize,
    /// The export it was made from.
    pub export_id: String,
}

/// What writing labels changed: labels that replaced one of another code, labels that replaced
/// one of the same code, and the coder's labels of the codebook now held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Replaced with another code.
    pub changed: usize,
    /// Replaced with the same code.
    pub unchanged: usize,
    /// The coder's labels of the codebook in the store.
    pub total: i64,
}

/// Writes one human coder's labels of a codebook (name and version) from the file `source`, in
/// one transaction, a label replacing the coder's earlier label of the sentence; `also` (the
/// gate's decisions) runs inside the same transaction.
pub fn write_labels(
    conn: &mut Connection,
    coder: &str,
    codebook: &str,
    version: u32,
    source: &str,
    labels: &[LabelRecord],
    also: impl FnOnce(&Connection) -> rusqlite::Result<usize>,
) -> rusqlite::Result<Written> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Labels imported before Agora recorded exports lack `export_id`: the family's upgrade adds
    // it, NULL for them.
    make(&tx, LABELS)?;
    let (mut changed, mut unchanged) = (0usize, 0usize);
    {
        let mut before = tx.prepare(
            "SELECT code FROM audit_labels WHERE run_id = ?1 AND seat = ?2 AND slot = ?3 AND sentence_index = ?4
                 AND coder = ?5 AND codebook = ?6 AND codebook_version = ?7",
        )?;
        let mut put = tx.prepare(
            "INSERT OR REPLACE INTO audit_labels (run_id, seat, slot, sentence_index, coder, codebook, codebook_version,
                    code, text, source, line, export_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        for c in labels {
            let earlier: Option<String> = before
                .query_row(params![c.run_id, c.seat, c.slot, c.sentence_index, coder, codebook, version], |r| r.get(0))
                .optional()?;
            match earlier {
                Some(e) if e == c.code => unchanged += 1,
                Some(_) => changed += 1,
                None => {}
            }
            put.execute(params![
                c.run_id,
                c.seat,
                c.slot,
                c.sentence_index,
                coder,
                codebook,
                version,
                c.code,
                c.text,
                source,
                c.line,
                c.export_id
            ])?;
        }
    }
    let total: i64 = tx.query_row(
        "SELECT COUNT(*) FROM audit_labels WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3",
        params![coder, codebook, version],
        |r| r.get(0),
    )?;
    also(&tx)?;
    tx.commit()?;
    Ok(Written { changed, unchanged, total })
}
