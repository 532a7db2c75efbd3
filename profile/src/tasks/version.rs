//! The question-version file's format: a task's eleven versions, each with its wording, its
//! labels and templates, and its eligibility record (the profile methods §M02–§M03). Reading and checking
//! the files is [`super::versions`]; rendering a version is [`super::render`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The version files' format version.
pub const FORMAT: u32 = 1;

/// The thirteen eligibility rules: Layer 1's six neutrality principles and Layer 2's seven
/// default rules (§M03).
pub const RULES: [&str; 13] = [
    "neutral-orientation",
    "neutral-intervention",
    "neutral-priming",
    "neutral-manipulation",
    "neutral-selection",
    "neutral-whole-condition",
    "no-persona",
    "no-proxy",
    "no-goal",
    "no-background",
    "no-special-use",
    "no-prefill",
    "no-reasons",
];

/// A task's version file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskVersions {
    /// Must equal [`FORMAT`].
    pub version: u32,
    /// The task's name.
    pub task: String,
    /// Q00–Q10, in order.
    pub versions: Vec<Version>,
}

/// One question version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Version {
    /// `Q00` … `Q10`.
    pub id: String,
    /// The opening sentence.
    pub opening: String,
    /// The task's sentences, with `{placeholders}` for facts and labels.
    pub text: Vec<String>,
    /// The question.
    pub question: String,
    /// What the answer is and in which field it is asked.
    pub answer: AnswerWording,
    /// The options' and players' labels, by key.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Alternative labels for the action-label and reversible-label checks, by key.
    #[serde(default)]
    pub alt_labels: BTreeMap<String, String>,
    /// Named templates: `round` (a history round as a sentence), and one per listed option kind
    /// (`lottery`, `known`, `unknown`, `payment`).
    #[serde(default)]
    pub templates: BTreeMap<String, String>,
    /// The history table's column headers (round, own action, other's action, own payoff,
    /// other's payoff), for the history-table check.
    #[serde(default)]
    pub table: Vec<String>,
    /// The eligibility record: every rule once.
    pub eligibility: Vec<Judgement>,
}

/// How a version asks for its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnswerWording {
    /// A whole amount in `field`; `states` says what it is.
    Amount {
        /// The JSON field asked for.
        field: String,
        /// Whether the amount stated is the measured quantity or its complement.
        states: Stated,
    },
    /// One of the labelled options in `field`.
    Choice {
        /// The JSON field asked for.
        field: String,
    },
}

impl AnswerWording {
    /// The field asked for.
    pub fn field(&self) -> &str {
        match self {
            AnswerWording::Amount { field, .. } | AnswerWording::Choice { field } => field,
        }
    }
}

/// What a stated amount means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stated {
    /// The measured quantity itself (what is given, offered, contributed, sent, returned).
    Given,
    /// Its complement: what the model keeps; decoded as the maximum minus the answer.
    Kept,
}

/// One rule's verdict on a version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judgement {
    /// The rule (one of [`RULES`]).
    pub rule: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, with the relevant text.
    pub reason: String,
}

/// Eligible or excluded (§M03).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Meets the rule.
    Eligible,
    /// Breaks it.
    Excluded,
}
