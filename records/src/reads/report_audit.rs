//! The transcript audit's tables as the report reads them: the coder keys, the stored
//! codebooks, the coded responses, the dependency, agreement and requirement rows, and the
//! coded paths of a prompt's replicates or of a condition's responses.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::evidence::CoderKey;

/// The distinct coder keys of an audit table (`audit_responses`, `audit_replicate_responses`),
/// in order.
pub fn keys(conn: &Connection, table: &str) -> rusqlite::Result<Vec<CoderKey>> {
    let mut st = conn.prepare(&format!(
        "SELECT DISTINCT coder, codebook, codebook_version, codebook_sha256 FROM {table} ORDER BY 1, 2, 3, 4"
    ))?;
    let rows = st.query_map([], |r| CoderKey::read(r, 0))?;
    rows.collect()
}

/// The source of a key's codebook as `audit_codebooks` stored it, if it did.
pub fn codebook_source(conn: &Connection, k: &CoderKey) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT source FROM audit_codebooks WHERE name = ?1 AND version = ?2 AND sha256 = ?3",
        params![k.codebook, k.version, k.sha256],
        |r| r.get(0),
    )
    .optional()
}

/// A key's responses as (model, values JSON where the coder output validated), by model, run,
/// seat and slot.
pub fn coded_values(conn: &Connection, k: &CoderKey) -> rusqlite::Result<Vec<(String, Option<String>)>> {
    let mut st = conn.prepare(
        "SELECT model, values_json FROM audit_responses
             WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4
             ORDER BY model, run_id, seat, slot",
    )?;
    let rows = st.query_map(params![k.coder, k.codebook, k.version, k.sha256], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The rows of `audit_dependency` (none where the table is absent), by scope, coder, codebook,
/// model, environment, arm, cell, role, estimator and value: its one reader.
pub use crate::families::audit::dependency::{stored as dependency, StoredEstimate as Dependency};

/// One row of `audit_agreement` as stored, its JSON columns undecoded.
#[derive(Deserialize)]
pub struct AgreementRow {
    /// The codebook's name.
    pub codebook: String,
    /// Its version.
    pub codebook_version: i64,
    /// The model whose text was labelled.
    pub model: String,
    /// `human` (a pair of labellers) or a machine coder's kind.
    pub kind: String,
    /// The reference labelling.
    pub reference: String,
    /// The coder or labeller compared with it.
    pub coder: String,
    /// Sentences compared.
    pub n: i64,
    /// κ.
    pub kappa: Option<f64>,
    /// Lower end of its interval.
    pub ci_low: Option<f64>,
    /// Upper end of its interval.
    pub ci_high: Option<f64>,
    /// The threshold.
    pub min_kappa: Option<f64>,
    /// The verdict.
    pub verdict: Option<String>,
    /// A note.
    pub note: Option<String>,
    /// The labels (JSON).
    pub labels_json: String,
    /// The confusion matrix (JSON).
    pub confusion_json: String,
    /// The support per label (JSON).
    pub support_json: String,
    /// The recall per label (JSON).
    pub recall_json: String,
}

/// The rows of `audit_agreement` (the table must exist): human pairs first, then machine coders.
pub fn agreement(conn: &Connection) -> rusqlite::Result<Vec<AgreementRow>> {
    let mut st = conn.prepare(
        "SELECT codebook, codebook_version, model, kind, reference, coder, n, kappa, ci_low, ci_high, min_kappa, verdict,
                note, labels_json, confusion_json, support_json, recall_json
         FROM audit_agreement ORDER BY codebook, codebook_version, kind DESC, model, coder, reference",
    )?;
    crate::rows::by_name(&mut st, [])
}

/// One row of `audit_requirements`.
#[derive(Serialize, Deserialize)]
pub struct Requirement {
    /// The requirement.
    pub requirement: String,
    /// The model.
    pub model: String,
    /// Its kind.
    pub kind: String,
    /// The estimate.
    pub estimate: Option<f64>,
    /// Lower end of its interval.
    pub low: Option<f64>,
    /// Upper end of its interval.
    pub high: Option<f64>,
    /// The bound it is held to.
    pub bound: Option<f64>,
    /// The verdict (empty where none is stored).
    pub verdict: String,
    /// Why (empty where nothing is stored).
    pub reason: String,
    /// The sample it rests on.
    pub n: Option<i64>,
    /// The sample planned.
    pub planned_n: Option<i64>,
}

/// The rows of `audit_requirements` (the table must exist), by requirement and model.
pub fn requirements(conn: &Connection) -> rusqlite::Result<Vec<Requirement>> {
    let mut st = conn.prepare(
        "SELECT requirement, model, kind, estimate, low, high, bound, COALESCE(verdict, '') AS verdict,
                COALESCE(reason, '') AS reason, n, planned_n
         FROM audit_requirements ORDER BY requirement, model",
    )?;
    crate::rows::by_name(&mut st, [])
}

/// One coded sentence of a path: (response, its action, the sentence's code where it has one),
/// in response and sentence order.
pub type PathRow = ((String, i64), String, Option<String>);

/// A prompt with its replicates: run, seat, slot, model, `environment · role`, replicates.
pub type ReplicatedPrompt = (i64, i64, i64, String, String, i64);

/// The prompt with most replicates under a key (`chosen`, as (run, seat, slot), or else ties to
/// the smallest run, seat and slot): run, seat, slot, model, `environment · role`, replicates.
pub fn replicated_prompt(
    conn: &Connection,
    k: &CoderKey,
    chosen: Option<(i64, i64, i64)>,
) -> rusqlite::Result<Option<ReplicatedPrompt>> {
    conn.query_row(
        "SELECT run_id, seat, slot, model, environment || ' · ' || role, COUNT(*) FROM audit_replicate_responses
                     WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4
                       AND (?5 IS NULL OR (run_id = ?5 AND seat = ?6 AND slot = ?7))
                     GROUP BY run_id, seat, slot ORDER BY COUNT(*) DESC, run_id, seat, slot LIMIT 1",
        params![
            k.coder,
            k.codebook,
            k.version,
            k.sha256,
            chosen.map(|c| c.0),
            chosen.map(|c| c.1),
            chosen.map(|c| c.2)
        ],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
    )
    .optional()
}

/// The coded reasoning of a prompt's replicates under a key, by sample seed, replicate and
/// sentence (a response is its sample seed and replicate).
pub fn replicate_paths(conn: &Connection, prompt: (i64, i64, i64), k: &CoderKey) -> rusqlite::Result<Vec<PathRow>> {
    let (run, seat, slot) = prompt;
    let mut st = conn.prepare(
        "SELECT r.sample_seed, r.replicate, r.action, s.code FROM audit_replicate_responses r
                     LEFT JOIN audit_replicate_sentences s ON s.run_id = r.run_id AND s.seat = r.seat AND s.slot = r.slot
                       AND s.sample_seed = r.sample_seed AND s.replicate = r.replicate AND s.coder = r.coder
                       AND s.codebook = r.codebook AND s.codebook_version = r.codebook_version
                       AND s.codebook_sha256 = r.codebook_sha256 AND s.segment = 'reasoning'
                     WHERE r.run_id = ?1 AND r.seat = ?2 AND r.slot = ?3 AND r.coder = ?4 AND r.codebook = ?5
                       AND r.codebook_version = ?6 AND r.codebook_sha256 = ?7
                     ORDER BY r.sample_seed, r.replicate, s.sentence_index",
    )?;
    let rows = st.query_map(params![run, seat, slot, k.coder, k.codebook, k.version, k.sha256], |r| {
        Ok(((r.get(0)?, r.get(1)?), r.get(2)?, r.get(3)?))
    })?;
    rows.collect()
}

/// The condition (model, environment, cell) with most coded responses under a key (ties by
/// name), with their number.
pub fn largest_condition(conn: &Connection, k: &CoderKey) -> rusqlite::Result<Option<(String, String, String, i64)>> {
    conn.query_row(
        "SELECT model, environment, cell, COUNT(*) FROM audit_responses
             WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4 AND values_json IS NOT NULL
             GROUP BY model, environment, cell ORDER BY COUNT(*) DESC, model, environment, cell LIMIT 1",
        params![k.coder, k.codebook, k.version, k.sha256],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .optional()
}

/// The coded reasoning of every coded response of a condition (model, environment, cell) under
/// a key, by run, seat, slot and sentence (a response is `run:seat` and its slot).
pub fn condition_paths(
    conn: &Connection,
    condition: (&str, &str, &str),
    k: &CoderKey,
) -> rusqlite::Result<Vec<PathRow>> {
    let (model, environment, cell) = condition;
    let mut st = conn.prepare(
        "SELECT r.run_id || ':' || r.seat, r.slot, r.action, s.code FROM audit_responses r
         LEFT JOIN audit_sentences s ON s.run_id = r.run_id AND s.seat = r.seat AND s.slot = r.slot AND s.coder = r.coder
           AND s.codebook = r.codebook AND s.codebook_version = r.codebook_version
           AND s.codebook_sha256 = r.codebook_sha256 AND s.segment = 'reasoning'
         WHERE r.model = ?1 AND r.environment = ?2 AND r.cell = ?3 AND r.coder = ?4 AND r.codebook = ?5
           AND r.codebook_version = ?6 AND r.codebook_sha256 = ?7 AND r.values_json IS NOT NULL
         ORDER BY r.run_id, r.seat, r.slot, s.sentence_index",
    )?;
    let rows = st.query_map(params![model, environment, cell, k.coder, k.codebook, k.version, k.sha256], |r| {
        Ok(((r.get(0)?, r.get(1)?), r.get(2)?, r.get(3)?))
    })?;
    rows.collect()
}
