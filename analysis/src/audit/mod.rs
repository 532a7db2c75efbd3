//! The part of the transcript audit the certification ladder uses to compute the coder gate
//! from a store: the codebook, the coders, human labels and the gate itself. The audit run,
//! its segmentation and tables and every estimator are in the audit crate (`agora_audit`).
//!
//! The transcript audit (`agora audit`): what models state before they act, coded sentence by
//! sentence against a codebook (the SUVA audit paper §240.6–240.7.1, SUVA).
//!
//! For every terminal decision transcript of a store (status `ok`, or `truncated` with an
//! action; fallbacks are counted and skipped) the audit
//! 1. splits the reply into reasoning, action and post-hoc segments ([`segment`]): only text
//!    written before the action is reasoning;
//! 2. splits the reasoning into sentences ([`sentence`]) and has a [`Coder`] give each exactly
//!    one code of the [`Codebook`], checked by [`validate_output`] (a model-backed coder first
//!    gets every response's sentences at once, [`Coder::prepare`]; an output that fails the
//!    check is recorded as the response's coder error, nothing coded, never repaired);
//!    post-hoc sentences are kept, labelled `post_hoc`, and never coded; a response without
//!    reasoning is counted, not coded;
//! 3. records each response's value vector (which value codes appear at least once), writes
//!    the `audit_*` tables into the store ([`tables`]) and summarises the occurrence of each
//!    stated value per model, environment and cell ([`report`]);
//! 4. passes every number computed from the codes through the coder-validation gate
//!    ([`agreement`]): a coder's codes count on a model's text only where its Cohen's κ against
//!    human labels on that text is at least the threshold (0.8); the labels come from a seeded
//!    sample exported for labelling and imported back ([`labels`]).
//!
//! The audit reads only the store's tables (runs, transcripts) and writes its own, created
//! here with `CREATE TABLE IF NOT EXISTS`; re-running it replaces the rows of the same coder and
//! codebook (name, version and SHA-256) for the runs in scope, in one transaction.

pub mod agreement;
pub mod codebook;
pub mod coder;
mod csv;
pub mod labels;
mod sha256;
pub mod statements;

pub use agreement::{Agreement, AgreementRow, GateOptions, Status, Validation, DEFAULT_MIN_KAPPA};
pub use codebook::{Codebook, CodebookError, LoadedCodebook};
pub use coder::{validate_output, Coded, Coder, CoderError, LexiconCoder};
pub use labels::{ExportOptions, Format, Imported, LabelsError};
pub use sha256::hex_digest;

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
