//! Coding the transcripts (the SUVA audit paper §240.6–240.7.1): every terminal decision reply
//! split into reasoning, action and post-hoc segments, the reasoning into sentences, each coded
//! once against the codebook, and the audit run that writes the `audit_*` tables and
//! summarises what each model states ([`audit`]).

pub use crate::response::{Response, Sentence, Skipped};
use crate::{agreement, validate_output, Codebook, CodebookError, Coder, CoderError, GateOptions, LoadedCodebook};
use crate::{segment, tables};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agora_records::families::audit::coding as records;
use rusqlite::{Connection, OpenFlags};

pub use crate::report::{Audit, CoderGate, OccurrenceRow, ReasoningRow};
pub use crate::segment::{segment_reply, ReplyForm, Segment, SegmentKind, Segmentation};
pub use crate::sentence::split_sentences;

/// What stopped an audit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The codebook cannot be used.
    #[error(transparent)]
    Codebook(#[from] CodebookError),
    /// The store's game declarations are missing or do not read.
    #[error("{0}")]
    Declarations(String),
    /// The store could not be opened, read or written.
    #[error("store {}: {source}", path.display())]
    Store {
        /// Path of the store.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The store lacks a table the audit reads.
    #[error("store {}: no `{table}` table; is it an Agora store?", path.display())]
    MissingTable {
        /// Path of the store.
        path: PathBuf,
        /// The table.
        table: &'static str,
    },
    /// `--study` names a study the store does not hold.
    #[error("store {}: no study `{study}`", path.display())]
    UnknownStudy {
        /// Path of the store.
        path: PathBuf,
        /// The study asked for.
        study: String,
    },
    /// The coder could not prepare its codes ([`Coder::prepare`]): nothing was written.
    #[error("coder `{coder}`: {source}; nothing written")]
    Coder {
        /// The coder's id.
        coder: String,
        /// What failed.
        source: CoderError,
    },
}

impl AuditError {
    /// Whether the error is the user's input (a codebook, a study name, a store that is not an
    /// Agora store) rather than a failure while auditing.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, AuditError::Store { .. } | AuditError::Coder { .. })
    }
}

/// Segments one reply and splits its reasoning and post-hoc segments into sentences, none
/// coded yet.
pub fn split_reply(raw: &str, answer_field: &str, cut: bool) -> (Segmentation, Vec<Sentence>) {
    let segmentation = segment_reply(raw, answer_field, cut);
    let mut sentences = Vec::new();
    for (si, seg) in segmentation.segments.iter().enumerate() {
        if seg.kind == SegmentKind::Action {
            continue;
        }
        for text in split_sentences(&seg.text) {
            sentences.push(Sentence {
                segment_index: si,
                sentence_index: sentences.len(),
                kind: seg.kind,
                source: seg.source.clone(),
                text,
                code: None,
                evidence: None,
            });
        }
    }
    (segmentation, sentences)
}

/// The texts of a response's reasoning sentences, in order: what a coder sees.
pub fn reasoning_texts(sentences: &[Sentence]) -> Vec<String> {
    sentences.iter().filter(|s| s.kind == SegmentKind::Reasoning).map(|s| s.text.clone()).collect()
}

/// Codes the reasoning sentences of one response in place with `coder`, its output checked
/// by [`validate_output`]; returns the coder error (nothing coded) and the value vector.
fn code_sentences(sentences: &mut [Sentence], codebook: &Codebook, coder: &dyn Coder) -> (Option<String>, Vec<bool>) {
    let texts = reasoning_texts(sentences);
    let mut coder_error = None;
    if !texts.is_empty() {
        match coder.code(&texts).and_then(|coded| validate_output(codebook, texts.len(), &coded).map(|()| coded)) {
            Ok(coded) => {
                for (s, c) in sentences.iter_mut().filter(|s| s.kind == SegmentKind::Reasoning).zip(coded) {
                    s.code = Some(c.code);
                    s.evidence = c.evidence;
                }
            }
            Err(e) => coder_error = Some(e.0),
        }
    }
    let values =
        codebook.values().map(|v| sentences.iter().any(|s| s.code.as_deref() == Some(v.name.as_str()))).collect();
    (coder_error, values)
}

/// Segments and codes one reply.
pub fn code_reply(
    raw: &str,
    answer_field: &str,
    cut: bool,
    codebook: &Codebook,
    coder: &dyn Coder,
) -> (Segmentation, Vec<Sentence>, Option<String>, Vec<bool>) {
    let (segmentation, mut sentences) = split_reply(raw, answer_field, cut);
    let (coder_error, values) = code_sentences(&mut sentences, codebook, coder);
    (segmentation, sentences, coder_error, values)
}

/// Audits the store at `path`: reads its decision transcripts (of `study` only, when given),
/// segments and codes them with `coder` against `codebook`, writes the `audit_*` tables,
/// passes the codes through the validation gate (`gate`) against the store's human labels and
/// returns the summary.
pub fn audit(
    path: &Path,
    codebook: &LoadedCodebook,
    coder: &dyn Coder,
    study: Option<&str>,
    gate: GateOptions,
) -> Result<Audit, AuditError> {
    let sql = |source| AuditError::Store { path: path.to_path_buf(), source };
    let mut conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    for table in ["runs", "transcripts"] {
        if !records::has_table_or_view(&conn, table).map_err(sql)? {
            return Err(AuditError::MissingTable { path: path.to_path_buf(), table });
        }
    }
    if let Some(s) = study {
        let n = agora_records::families::audit::reads::study_runs(&conn, s).map_err(sql)?;
        if n == 0 {
            return Err(AuditError::UnknownStudy { path: path.to_path_buf(), study: s.to_string() });
        }
    }
    let rows = records::decisions(&conn, study, agora_agents::HUMAN_ENDPOINT).map_err(sql)?;
    let cb = &codebook.codebook;
    let mut skipped: Skipped = BTreeMap::new();
    let mut split = Vec::new();
    for r in rows {
        if r.parse_status == "fallback" {
            *skipped.entry((r.model, r.environment, r.cell)).or_default() += 1;
            continue;
        }
        let terminal = r.parse_status == "ok" || (r.parse_status == "truncated" && r.action.is_some());
        let Some(action) = r.action.clone().filter(|_| terminal) else { continue };
        let answer_field = segment::asked_answer_field(&r.messages_json, &r.spec_json);
        let (segmentation, sentences) = split_reply(&r.raw_reply, &answer_field, r.parse_status == "truncated");
        split.push((r, action, answer_field, segmentation, sentences));
    }
    let batches: Vec<Vec<String>> =
        split.iter().map(|x| reasoning_texts(&x.4)).filter(|texts| !texts.is_empty()).collect();
    coder.prepare(&batches).map_err(|source| AuditError::Coder { coder: coder.id(), source })?;
    let mut responses = Vec::new();
    for (r, action, answer_field, segmentation, mut sentences) in split {
        let (coder_error, values) = code_sentences(&mut sentences, cb, coder);
        let answer_agrees = segmentation.answer.as_ref().and_then(|a| segment::answer_agrees(a, &action));
        responses.push(Response {
            run_id: r.run_id,
            seat: r.seat,
            slot: r.slot,
            attempt: r.attempt,
            model: r.model,
            study: r.study,
            environment: r.environment,
            arm: r.arm,
            cell: r.cell,
            parse_status: r.parse_status,
            action,
            answer_field,
            answer_agrees,
            segmentation,
            sentences,
            coder_error,
            values,
        });
    }
    let earlier = tables::write(&mut conn, codebook, coder, study, &responses).map_err(sql)?;
    let models: Vec<String> =
        responses.iter().map(|r| r.model.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let validation = agreement::gate(&conn, codebook, &coder.id(), &models, &gate).map_err(sql)?;
    let gate = CoderGate {
        coder: coder.id(),
        min_kappa: gate.min_kappa,
        rule: gate.describe(),
        allow_unvalidated: gate.allow_unvalidated,
        validation,
    };
    Ok(Audit::new(path, study, codebook, responses, &skipped, &earlier, gate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Coded, LexiconCoder};

    #[test]
    fn a_reply_is_coded_from_its_reasoning_only() {
        let cb = LoadedCodebook::default_codebook();
        let coder = LexiconCoder::new(&cb.codebook);
        let raw = r#"{"reasoning": "I choose between Option J and Option F. Option J gives the largest total for the two of us.", "action": "Option J", "reason": "B1 gives me the most points. To be fair, it is equal."}"#;
        let (seg, sentences, err, values) = code_reply(raw, "action", false, &cb.codebook, &coder);
        assert!(err.is_none() && seg.has_reasoning());
        let coded: Vec<(SegmentKind, Option<&str>)> = sentences.iter().map(|s| (s.kind, s.code.as_deref())).collect();
        assert_eq!(
            coded,
            [
                (SegmentKind::Reasoning, Some("understanding")),
                (SegmentKind::Reasoning, Some("social_welfare")),
                (SegmentKind::PostHoc, None),
                (SegmentKind::PostHoc, None),
            ]
        );
        let stated: Vec<&str> =
            cb.codebook.values().zip(&values).filter(|(_, v)| **v).map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(stated, ["social_welfare"], "the post-hoc reason's self-interest and fairness are not coded");
    }

    struct Broken;
    impl Coder for Broken {
        fn id(&self) -> String {
            "broken/0".into()
        }
        fn code(&self, _: &[String]) -> Result<Vec<Coded>, CoderError> {
            Ok(vec![Coded { code: "greed".into(), evidence: None }])
        }
    }

    #[test]
    fn a_coder_output_that_fails_validation_is_recorded_not_repaired() {
        let cb = LoadedCodebook::default_codebook();
        let raw = r#"{"reasoning": "One. Two.", "action": 3}"#;
        let (_, sentences, err, values) = code_reply(raw, "action", false, &cb.codebook, &Broken);
        assert_eq!(err.as_deref(), Some("1 codes for 2 sentences"));
        assert!(sentences.iter().all(|s| s.code.is_none()));
        assert!(values.iter().all(|v| !v));
    }
}
