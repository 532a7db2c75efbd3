//! The audit's tables in the store. Their layout, version and every read and write are
//! `agora_records::families::audit`'s: each is made where absent in the store the audit was
//! pointed at, beside the engine's tables, which the audit only reads; this module hands the
//! records the audit's rows.
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

use agora_records::families::audit::coding as records;
use rusqlite::Connection;

use crate::codebook::LoadedCodebook;
use crate::coder::Coder;
use crate::response::Response;
use crate::segment::SEGMENTER_VERSION;

/// The audit's store tables (`agora_records::families::audit::TABLES`: the ladder reads them too).
pub use agora_records::families::audit::TABLES as SCHEMA;

/// Drops `table` where the store holds it without every one of `columns`: an older layout of a
/// table derived from other rows (the dependency and intervention estimates), which the
/// current code must neither read as if it had the columns nor add rows to beside rows of
/// another meaning. Returns whether it dropped the table; the caller rebuilds it or says which
/// command does.
pub use records::drop_if_lacking;

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
    let id = coder.id();
    let (identity, serving) = (coder.identity().to_string(), coder.serving().to_string());
    let cb = &codebook.codebook;
    let rows = responses.iter().map(|r| {
        let s = &r.segmentation;
        let reasoning = r.reasoning_sentences();
        let residual = r.sentences.iter().filter(|x| x.code.as_deref() == Some(cb.residual.as_str())).count();
        let values_json = r.coded().then(|| {
            let m: serde_json::Map<String, serde_json::Value> =
                cb.values().zip(&r.values).map(|(c, v)| (c.name.clone(), serde_json::json!(u8::from(*v)))).collect();
            serde_json::Value::Object(m).to_string()
        });
        records::ResponseRecord {
            run_id: r.run_id,
            seat: r.seat,
            slot: r.slot,
            attempt: r.attempt,
            model: &r.model,
            study: &r.study,
            environment: &r.environment,
            arm: &r.arm,
            cell: &r.cell,
            parse_status: &r.parse_status,
            action: &r.action,
            answer_field: &r.answer_field,
            answer_key: s.answer_key.as_deref(),
            answer_agrees: r.answer_agrees,
            reply_form: s.form.as_str(),
            reasoning_present: s.has_reasoning(),
            reasoning_sources: s.reasoning_sources(),
            post_hoc_present: s.has_post_hoc(),
            n_sentences: reasoning,
            n_residual: residual,
            n_post_hoc_sentences: r.sentences.len() - reasoning,
            coder_error: r.coder_error.as_deref(),
            values_json,
            segments: s
                .segments
                .iter()
                .enumerate()
                .map(|(i, g)| records::SegmentRecord {
                    segment_index: i,
                    kind: g.kind.as_str(),
                    source: &g.source,
                    text: &g.text,
                })
                .collect(),
            sentences: r
                .sentences
                .iter()
                .map(|x| records::SentenceRecord {
                    sentence_index: x.sentence_index,
                    segment_index: x.segment_index,
                    segment: x.kind.as_str(),
                    source: &x.source,
                    text: &x.text,
                    code: x.code.as_deref(),
                    evidence: x.evidence.as_deref(),
                })
                .collect(),
        }
    });
    records::write(
        conn,
        records::CodebookRecord {
            name: &cb.name,
            version: cb.version,
            sha256: &codebook.sha256,
            source: &codebook.source,
        },
        records::CoderRecord { id: &id, identity_json: &identity, serving_json: &serving },
        SEGMENTER_VERSION,
        study,
        rows,
        // The gate's decisions change with the codes: recorded with them.
        crate::agreement::write_gates,
    )
}
