//! One audited response and its sentences, as the audit run, its tables and its summary
//! share them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::segment::{SegmentKind, Segmentation};

/// One sentence of a response, coded (reasoning) or only kept (post hoc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sentence {
    /// Index of its segment in the reply's segments.
    pub segment_index: usize,
    /// Index of the sentence in the response (reasoning and post-hoc sentences counted together).
    pub sentence_index: usize,
    /// The segment's kind: reasoning or post hoc.
    pub kind: SegmentKind,
    /// The segment's source (`think`, `field:reasoning`, …).
    pub source: String,
    /// The sentence.
    pub text: String,
    /// Its code; none for a post-hoc sentence, which is never coded.
    pub code: Option<String>,
    /// What gave the code (the lexicon rule and pattern).
    pub evidence: Option<String>,
}

/// One audited decision: a terminal transcript, segmented and coded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Response {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The seat's decision slot.
    pub slot: i64,
    /// The attempt that decided the slot.
    pub attempt: i64,
    /// The model's name in the study.
    pub model: String,
    /// The run's study.
    pub study: String,
    /// The run's environment.
    pub environment: String,
    /// The run's arm.
    pub arm: String,
    /// The run's cell.
    pub cell: String,
    /// `ok` or `truncated`.
    pub parse_status: String,
    /// The parsed action (encoded).
    pub action: String,
    /// The answer field the request asked for.
    pub answer_field: String,
    /// Whether the located answer agrees with the parsed action (amounts and allocations only).
    pub answer_agrees: Option<bool>,
    /// The reply's segments.
    pub segmentation: Segmentation,
    /// Reasoning sentences (coded) and post-hoc sentences (kept), in reply order.
    pub sentences: Vec<Sentence>,
    /// A coder error for this response (its output failed validation): recorded, nothing coded.
    pub coder_error: Option<String>,
    /// Per value code of the codebook (every code but the residual, in the codebook's order):
    /// stated at least once.
    pub values: Vec<bool>,
}

impl Response {
    /// Whether the response's reasoning was coded (it has reasoning and no coder error).
    pub fn coded(&self) -> bool {
        self.segmentation.has_reasoning() && self.coder_error.is_none()
    }

    /// Number of reasoning sentences.
    pub fn reasoning_sentences(&self) -> usize {
        self.sentences.iter().filter(|s| s.kind == SegmentKind::Reasoning).count()
    }
}

/// Where fallbacks were skipped: (model, environment, cell) → count.
pub type Skipped = BTreeMap<(String, String, String), usize>;
