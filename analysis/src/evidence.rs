//! The transcript audit's evidence as the store holds it: the tables the certification ladder
//! reads to grade Tier 3 ([`crate::mechanism`]). The audit (the `agora-audit` crate, `agora
//! audit`) writes them; the instrument only reads them, and never imports the audit.
//!
//! - [`TABLES_SCHEMA`]: the audit run's tables (codebooks, coders, segments, coded responses and
//!   sentences);
//! - [`GATE_SCHEMA`]: `audit_gate`, the coder-validation gate's decision per coder, codebook and
//!   audited model, with the default gate (κ ≥ 0.8 against human labels on the model's own text,
//!   the floors of responses, sentences and coder errors; the docs chapter "The transcript
//!   audit"). The audit writes it whenever the codes or the human labels it rests on change
//!   (`agora audit`, `agora audit import`), so a stored decision is the current one;
//! - the dependency and intervention estimates ([`crate::mechanism::DEPENDENCY_SCHEMA`],
//!   [`crate::mechanism::FAITHFULNESS_SCHEMA`]).

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

/// Fewest human-referenced sentences of a code a Tier-3 claim relies on (30): with 30, the 95 %
/// Wilson interval of a recall of 0.8 spans about ±0.15; with fewer the recall "Auditing LLM
/// Behavior with SUVA: From Stated Values to Actions" asks to report beside the effect is
/// hardly measured.
pub const MIN_CODE_SUPPORT: u64 = 30;

/// Whether a coder's codes on a model's text count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// κ at least the threshold: the codes count.
    Validated,
    /// Below the threshold or not validated, shown because unvalidated codes were allowed.
    Unvalidated,
    /// Below the threshold or not validated: the codes are refused for every statistic.
    Refused,
}

impl Status {
    /// `validated`, `unvalidated` or `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Validated => "validated",
            Status::Unvalidated => "unvalidated",
            Status::Refused => "refused",
        }
    }

    /// The status a stored `as_str` names.
    pub fn parse(s: &str) -> Option<Status> {
        [Status::Validated, Status::Unvalidated, Status::Refused].into_iter().find(|x| x.as_str() == s)
    }
}

/// The gate's decision for one coder on one model's text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validation {
    /// The audited model.
    pub model: String,
    /// The machine coder.
    pub coder: String,
    /// The decision.
    pub status: Status,
    /// κ against the human reference, if it could be computed.
    pub kappa: Option<f64>,
    /// Sentences it rests on.
    pub n: usize,
    /// Responses those sentences come from.
    pub responses: usize,
    /// The threshold.
    pub min_kappa: f64,
    /// Per code of the reference: the code, its human-referenced sentences, and the coder's
    /// recall on them.
    pub recall: Vec<(String, u64, Option<f64>)>,
    /// Responses with reasoning the coder failed on, of the model's responses with reasoning.
    pub coder_errors: (usize, usize),
    /// Why: `κ = 0.650 < 0.8 (40 sentences)`, `no human labels`, ….
    pub reason: String,
}

impl Validation {
    /// Whether the codes may be shown (validated, or unvalidated codes allowed).
    pub fn shown(&self) -> bool {
        self.status != Status::Refused
    }

    /// The decision as reports print it: `refused: κ = 0.650 < 0.8 (40 sentences)`.
    pub fn label(&self) -> String {
        format!("{}: {}", self.status.as_str(), self.reason)
    }

    /// Human-referenced sentences of `code` on the model's text (0 when the code has none).
    pub fn support(&self, code: &str) -> u64 {
        self.recall.iter().find(|(c, _, _)| c == code).map_or(0, |(_, n, _)| *n)
    }

    /// The coder's recall of `code` against the human reference, where the reference uses it.
    pub fn recall_of(&self, code: &str) -> Option<f64> {
        self.recall.iter().find(|(c, _, _)| c == code).and_then(|(_, _, r)| *r)
    }

    /// Per-code recall as reports print it: `altruism 0.600 (40), fairness 1.000 (31)`.
    pub fn recall_text(&self) -> String {
        let parts: Vec<String> = self
            .recall
            .iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(c, n, r)| format!("{c} {} ({n})", r.map_or_else(|| "-".into(), |r| format!("{r:.3}"))))
            .collect();
        parts.join(", ")
    }
}

/// The coder-validation gate's decisions (written by the audit, read by the ladder).
pub const GATE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_gate (
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    status TEXT NOT NULL,
    kappa REAL,
    n INTEGER NOT NULL,
    responses INTEGER NOT NULL,
    min_kappa REAL NOT NULL,
    recall_json TEXT NOT NULL,
    coder_failed INTEGER NOT NULL,
    coder_of INTEGER NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (coder, codebook, codebook_version, codebook_sha256, model)
) WITHOUT ROWID;
";

/// Whether the store holds `table`.
pub fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n > 0)
}

/// The stored gate decisions of a coder and codebook (name, version, SHA-256), one per audited
/// model; none where the store has no `audit_gate`.
pub fn read_gate(
    conn: &Connection,
    coder: &str,
    codebook: &str,
    version: u32,
    sha256: &str,
) -> rusqlite::Result<Vec<Validation>> {
    if !has_table(conn, "audit_gate")? {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT model, status, kappa, n, responses, min_kappa, recall_json, coder_failed, coder_of, reason
         FROM audit_gate
         WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4
         ORDER BY model",
    )?;
    let rows = st.query_map(params![coder, codebook, version, sha256], |r| {
        let status: String = r.get(1)?;
        let recall: String = r.get(6)?;
        let bad = |what: &str, col: usize| {
            rusqlite::Error::FromSqlConversionFailure(
                col,
                rusqlite::types::Type::Text,
                format!("audit_gate.{what}: not a stored gate value").into(),
            )
        };
        Ok(Validation {
            model: r.get(0)?,
            coder: coder.to_string(),
            status: Status::parse(&status).ok_or_else(|| bad("status", 1))?,
            kappa: r.get(2)?,
            n: r.get::<_, i64>(3)? as usize,
            responses: r.get::<_, i64>(4)? as usize,
            min_kappa: r.get(5)?,
            recall: serde_json::from_str(&recall).map_err(|_| bad("recall_json", 6))?,
            coder_errors: (r.get::<_, i64>(7)? as usize, r.get::<_, i64>(8)? as usize),
            reason: r.get(9)?,
        })
    })?;
    rows.collect()
}

/// The audit's tables.
///
/// The audit run (the audit crate) writes them; the ladder reads the coded responses and the
/// codebooks from them, and the coder gate the sentences and labels.
pub const TABLES_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_codebooks (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (name, version, sha256)
);
CREATE TABLE IF NOT EXISTS audit_coders (
    coder TEXT NOT NULL,
    identity_json TEXT NOT NULL,
    serving_json TEXT NOT NULL,
    PRIMARY KEY (coder, identity_json, serving_json)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_segments (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    segment_index INTEGER NOT NULL,
    segmenter_version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (run_id, seat, slot, segment_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_responses (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    study TEXT NOT NULL,
    environment TEXT NOT NULL,
    arm TEXT NOT NULL,
    cell TEXT NOT NULL,
    parse_status TEXT NOT NULL,
    action TEXT NOT NULL,
    answer_field TEXT NOT NULL,
    answer_key TEXT,
    answer_agrees INTEGER,
    reply_form TEXT NOT NULL,
    reasoning_present INTEGER NOT NULL,
    reasoning_sources TEXT NOT NULL,
    post_hoc_present INTEGER NOT NULL,
    n_sentences INTEGER NOT NULL,
    n_residual INTEGER NOT NULL,
    n_post_hoc_sentences INTEGER NOT NULL,
    coder_error TEXT,
    values_json TEXT,
    PRIMARY KEY (run_id, seat, slot, coder, codebook, codebook_version, codebook_sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_sentences (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
    sentence_index INTEGER NOT NULL,
    segment_index INTEGER NOT NULL,
    segment TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    code TEXT,
    evidence TEXT,
    PRIMARY KEY (run_id, seat, slot, coder, codebook, codebook_version, codebook_sha256, sentence_index)
) WITHOUT ROWID;
";
