//! The behavioural profile's tasks (the profile methods, categories A–E and General Robustness): isolated,
//! fully specified single decisions, each a module of its own data — its three conditions, its
//! decision points, the facts a question version's wording fills in, the options and their
//! economic meaning, and the score of one decoded answer.
//!
//! A task is not a society game: nothing is played between agents. The counterparts are
//! hypothetical (dictator, proposer, one-shot games, menus), scripted (the trustee's investor,
//! the responder's proposer, the third-party game's allocator and recipient), supplied as a
//! history (B1–B3) or programmed (B4's opponent). The wording is data (question versions,
//! [`versions`]); the presentation checks are operations on the rendered question
//! ([`render`]); the schedules saying which check runs where are data too ([`schedule`]).
//!
//! - [`catalogue`]: the catalogue of inputs per task (the profile methods §A0–§D3).
//! - [`versions`]: question version files Q00–Q10, their eligibility records and content hash.
//! - [`schedule`]: the additional-check schedules A-S1, A-S2, B-S1, C-S1 and D-S1.
//! - [`render`]: one input, one version, one presentation → the question text, and the
//!   decoding of a displayed answer back to its economic meaning.
//! - [`gr`]: General Robustness's 23 conditions (§GR); [`gr_review`], its full-answer review
//!   (§GR3), with [`gr_prose`] reading the decisions a reply states in sentences.
//! - [`decimal`]: C3's later amounts at 50-digit precision.
//! - [`items`]: Category E's item files — Agora's adaptations of the IPIP-50 (E1–E5, shipped)
//!   and a lab's own pairs file for E6–E9 (never shipped) — with the keys and anchors of E-S2.

pub mod catalogue;
pub mod decimal;
pub mod gr;
pub mod gr_prose;
pub mod gr_review;
pub mod input;
pub mod items;
pub mod render;
pub mod schedule;
pub mod version;
pub mod versions;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a profile file or request is refused: the file, the field (a path into it) and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: `{field}`: {reason}")]
pub struct ProfileInputError {
    /// The file (or the data source) at fault.
    pub file: String,
    /// The offending field, as a path into the file.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ProfileInputError {
    /// An error about `field` of `file`.
    pub fn new(file: impl Into<String>, field: impl Into<String>, reason: impl Into<String>) -> Self {
        ProfileInputError { file: file.into(), field: field.into(), reason: reason.into() }
    }
}

/// The profile's tasks of categories A–E. Category A has nine tasks, combined into A1–A5;
/// B1–B4 are one task each; C1–C4 use three (C3 and C4 share the dated payments); D1–D3 share
/// one menu task of lotteries; E1–E9 are one questionnaire measure each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// A1: giving a share (dictator game).
    Dictator,
    /// A1: proposing a share (ultimatum game, proposer).
    UltimatumProposer,
    /// A2: one-shot prisoner's dilemma.
    PrisonersDilemma,
    /// A2: one-shot stag hunt.
    StagHunt,
    /// A2: one-shot public goods.
    PublicGoods,
    /// A3: trust game, investor.
    TrustInvestor,
    /// A4: trust game, returning player after a scripted investor's transfer.
    TrustTrustee,
    /// A5: ultimatum game, responder to a scripted proposal.
    UltimatumResponder,
    /// A5: third-party intervention after a scripted allocation.
    ThirdParty,
    /// B1: conditional cooperation after a supplied public-goods history.
    B1,
    /// B2: retaliation after a supplied prisoner's-dilemma history.
    B2,
    /// B3: forgiveness after a supplied prisoner's-dilemma history.
    B3,
    /// B4: adaptation in a live twelve-round coordination game.
    B4,
    /// C1: paired lotteries (Holt–Laury).
    Risk,
    /// C2: known and unknown urns (Ellsberg).
    Urns,
    /// C3 and C4: dated payments.
    Dated,
    /// D1–D3: menus of lotteries.
    Lotteries,
    /// E1: sociability, ten statements adapted from the IPIP-50's Extraversion items.
    E1,
    /// E2: consideration (IPIP-50 Agreeableness).
    E2,
    /// E3: organization and care (IPIP-50 Conscientiousness).
    E3,
    /// E4: calmness of tone (IPIP-50 Emotional Stability).
    E4,
    /// E5: openness to ideas (IPIP-50 Intellect/Imagination).
    E5,
    /// E6: reserved or outgoing, eight pairs from a user-supplied item file (never shipped).
    E6,
    /// E7: details or possibilities (user-supplied pairs).
    E7,
    /// E8: analysis or personal values (user-supplied pairs).
    E8,
    /// E9: planning or flexibility (user-supplied pairs).
    E9,
}

impl Task {
    /// Every task, in the profile's order.
    pub const ALL: [Task; 26] = [
        Task::Dictator,
        Task::UltimatumProposer,
        Task::PrisonersDilemma,
        Task::StagHunt,
        Task::PublicGoods,
        Task::TrustInvestor,
        Task::TrustTrustee,
        Task::UltimatumResponder,
        Task::ThirdParty,
        Task::B1,
        Task::B2,
        Task::B3,
        Task::B4,
        Task::Risk,
        Task::Urns,
        Task::Dated,
        Task::Lotteries,
        Task::E1,
        Task::E2,
        Task::E3,
        Task::E4,
        Task::E5,
        Task::E6,
        Task::E7,
        Task::E8,
        Task::E9,
    ];

    /// The questionnaire tasks whose items Agora ships (the IPIP-50 adaptations, E1–E5).
    pub const SHIPPED_QUESTIONNAIRE: [Task; 5] = [Task::E1, Task::E2, Task::E3, Task::E4, Task::E5];

    /// The questionnaire tasks whose items a lab supplies in its own file (E6–E9): a study runs
    /// them only when it names them and gives the file.
    pub const USER_QUESTIONNAIRE: [Task; 4] = [Task::E6, Task::E7, Task::E8, Task::E9];

    /// The tasks a study runs when it names none: categories A–E without the user-supplied
    /// E6–E9.
    pub fn defaults() -> Vec<Task> {
        Task::ALL.into_iter().filter(|t| !t.user_items()).collect()
    }

    /// Whether the task is a questionnaire (Category E): one rated item per question.
    pub fn questionnaire(self) -> bool {
        self.category() == 'E'
    }

    /// Whether the task's items come from a user-supplied file (E6–E9).
    pub fn user_items(self) -> bool {
        Task::USER_QUESTIONNAIRE.contains(&self)
    }

    /// The question-version file the task reads (`versions/<name>.ron`): its own, except the
    /// questionnaire tasks, which share one set of eleven instructions around their items.
    pub fn versions_file(self) -> &'static str {
        if self.questionnaire() {
            "questionnaire"
        } else {
            self.name()
        }
    }

    /// The name written in files and records (`trust-investor`).
    pub fn name(self) -> &'static str {
        match self {
            Task::Dictator => "dictator",
            Task::UltimatumProposer => "ultimatum-proposer",
            Task::PrisonersDilemma => "prisoners-dilemma",
            Task::StagHunt => "stag-hunt",
            Task::PublicGoods => "public-goods",
            Task::TrustInvestor => "trust-investor",
            Task::TrustTrustee => "trust-trustee",
            Task::UltimatumResponder => "ultimatum-responder",
            Task::ThirdParty => "third-party",
            Task::B1 => "b1",
            Task::B2 => "b2",
            Task::B3 => "b3",
            Task::B4 => "b4",
            Task::Risk => "risk",
            Task::Urns => "urns",
            Task::Dated => "dated",
            Task::Lotteries => "lotteries",
            Task::E1 => "e1",
            Task::E2 => "e2",
            Task::E3 => "e3",
            Task::E4 => "e4",
            Task::E5 => "e5",
            Task::E6 => "e6",
            Task::E7 => "e7",
            Task::E8 => "e8",
            Task::E9 => "e9",
        }
    }

    /// The task named `name`.
    pub fn from_name(name: &str) -> Option<Task> {
        Task::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The category: 'A', 'B', 'C', 'D' or 'E'.
    pub fn category(self) -> char {
        match self {
            Task::E1 | Task::E2 | Task::E3 | Task::E4 | Task::E5 | Task::E6 | Task::E7 | Task::E8 | Task::E9 => 'E',
            Task::B1 | Task::B2 | Task::B3 | Task::B4 => 'B',
            Task::Risk | Task::Urns | Task::Dated => 'C',
            Task::Lotteries => 'D',
            _ => 'A',
        }
    }

    /// Which check schedule the task follows (A-S1, A-S2, B-S1, C-S1/D-S1, E-S1).
    pub fn schedule(self) -> ScheduleKind {
        match self {
            Task::Dictator | Task::UltimatumProposer | Task::PublicGoods | Task::TrustInvestor | Task::TrustTrustee => {
                ScheduleKind::AAmount
            }
            Task::PrisonersDilemma | Task::StagHunt | Task::UltimatumResponder | Task::ThirdParty => {
                ScheduleKind::ABinary
            }
            Task::B1 | Task::B2 | Task::B3 | Task::B4 => ScheduleKind::B,
            Task::Risk | Task::Urns | Task::Dated | Task::Lotteries => ScheduleKind::CD,
            _ => ScheduleKind::E,
        }
    }

    /// The measures the task's answers enter.
    pub fn measures(self) -> &'static [&'static str] {
        match self {
            Task::Dictator | Task::UltimatumProposer => &["a1"],
            Task::PrisonersDilemma | Task::StagHunt | Task::PublicGoods => &["a2"],
            Task::TrustInvestor => &["a3"],
            Task::TrustTrustee => &["a4"],
            Task::UltimatumResponder | Task::ThirdParty => &["a5"],
            Task::B1 => &["b1"],
            Task::B2 => &["b2"],
            Task::B3 => &["b3"],
            Task::B4 => &["b4"],
            Task::Risk => &["c1"],
            Task::Urns => &["c2"],
            Task::Dated => &["c3", "c4"],
            Task::Lotteries => &["d1", "d2", "d3"],
            Task::E1 => &["e1"],
            Task::E2 => &["e2"],
            Task::E3 => &["e3"],
            Task::E4 => &["e4"],
            Task::E5 => &["e5"],
            Task::E6 => &["e6"],
            Task::E7 => &["e7"],
            Task::E8 => &["e8"],
            Task::E9 => &["e9"],
        }
    }

    /// The three condition values as the seed's tables write them (§A0, §B0, §C0, §D0); a
    /// questionnaire has no economic condition (its items are asked at `middle` only).
    pub fn condition_values(self) -> [&'static str; 3] {
        match self {
            Task::Dictator | Task::UltimatumProposer | Task::UltimatumResponder => ["100", "1000", "10000"],
            Task::PrisonersDilemma | Task::B2 | Task::B3 => ["35", "45", "55"],
            Task::StagHunt => ["5", "7", "9"],
            Task::PublicGoods | Task::B1 => ["0.3", "0.5", "0.7"],
            Task::TrustInvestor => ["2", "3", "4"],
            Task::TrustTrustee => ["10", "50", "100"],
            Task::ThirdParty => ["1", "5", "10"],
            Task::B4 => ["20", "40", "60"],
            Task::Risk | Task::Lotteries => ["1", "10", "100"],
            Task::Urns => ["100", "1000", "10000"],
            Task::Dated => ["7", "30", "90"],
            _ => ["", "", ""],
        }
    }
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The check schedule a task follows: which operations exist for it (§A-S1, §A-S2, §B-S1,
/// §C-S1, §D-S1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    /// A-S1: amount tasks (DG, UGP, PGG, TGI, TGT).
    AAmount,
    /// A-S2: binary tasks (PD, SH, UGR, TPP).
    ABinary,
    /// B-S1: all four B tasks.
    B,
    /// C-S1 and D-S1 (identical): risk, waiting and menus.
    CD,
    /// E-S1: the questionnaire, checked at its anchor items rather than at a condition.
    E,
}

impl ScheduleKind {
    /// The operations a check of this schedule may apply.
    pub fn operations(self) -> &'static [Operation] {
        use Operation::*;
        match self {
            ScheduleKind::AAmount => {
                &[AnswerField, InlineLayout, SentenceLineBreaks, TaskIdentifier, AlternativeOpening]
            }
            ScheduleKind::ABinary => &[
                AnswerField,
                InlineLayout,
                SentenceLineBreaks,
                TaskIdentifier,
                AlternativeOpening,
                ActionLabels,
                ActionOrder,
            ],
            ScheduleKind::B => &[AnswerField, InlineLayout, HistoryTable, ReversibleLabels, ResponseOrder],
            ScheduleKind::CD | ScheduleKind::E => {
                &[AnswerField, InlineLayout, TableLayout, ReversibleLabels, OptionOrder]
            }
        }
    }

    /// The name written in schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::AAmount => "a-amount",
            ScheduleKind::ABinary => "a-binary",
            ScheduleKind::B => "b",
            ScheduleKind::CD => "c-d",
            ScheduleKind::E => "e",
        }
    }
}

/// One presentation operation of an additional check (§A0, §B0, §C0, §D0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// The answer field renamed (the `answer-field` cell).
    AnswerField,
    /// The whole question on one line (the `layout-inline` cell).
    InlineLayout,
    /// One sentence per line (the `layout-sentence-per-line` cell).
    SentenceLineBreaks,
    /// An administrative task identifier first (the `task-id` cell).
    TaskIdentifier,
    /// An alternative opening sentence (the `alt-opening` cell).
    AlternativeOpening,
    /// The actions named by the version's alternative labels, decoded back before scoring.
    ActionLabels,
    /// The actions listed in the opposite order (the `reversed-actions` cell).
    ActionOrder,
    /// The supplied or live history shown as a table instead of sentences.
    HistoryTable,
    /// Reversible relabelling: the version's alternative labels for options or players.
    ReversibleLabels,
    /// The permissible responses listed in the opposite order (the `reversed-actions` cell).
    ResponseOrder,
    /// The options laid out as a table.
    TableLayout,
    /// The options listed in the opposite order (the `reversed-actions` cell).
    OptionOrder,
}

impl Operation {
    /// The name written in files and records.
    pub fn name(self) -> &'static str {
        match self {
            Operation::AnswerField => "answer-field",
            Operation::InlineLayout => "inline-layout",
            Operation::SentenceLineBreaks => "sentence-line-breaks",
            Operation::TaskIdentifier => "task-identifier",
            Operation::AlternativeOpening => "alternative-opening",
            Operation::ActionLabels => "action-labels",
            Operation::ActionOrder => "action-order",
            Operation::HistoryTable => "history-table",
            Operation::ReversibleLabels => "reversible-labels",
            Operation::ResponseOrder => "response-order",
            Operation::TableLayout => "table-layout",
            Operation::OptionOrder => "option-order",
        }
    }

    /// Every operation.
    pub const ALL: [Operation; 12] = [
        Operation::AnswerField,
        Operation::InlineLayout,
        Operation::SentenceLineBreaks,
        Operation::TaskIdentifier,
        Operation::AlternativeOpening,
        Operation::ActionLabels,
        Operation::ActionOrder,
        Operation::HistoryTable,
        Operation::ReversibleLabels,
        Operation::ResponseOrder,
        Operation::TableLayout,
        Operation::OptionOrder,
    ];

    /// The operation named `name`.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Whether the operation renames the displayed options or players (the version must give
    /// alternative labels).
    pub fn relabels(self) -> bool {
        matches!(self, Operation::ActionLabels | Operation::ReversibleLabels)
    }
}

/// Which of a questionnaire measure's two fixed check items a check retests (E-S1, E-S2): the
/// original version retests both, each other version one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Anchor {
    /// Both anchor items.
    Both,
    /// The first anchor item.
    First,
    /// The second anchor item.
    Second,
}

impl Anchor {
    /// Every anchor choice.
    pub const ALL: [Anchor; 3] = [Anchor::Both, Anchor::First, Anchor::Second];

    /// The name written in schedule files.
    pub fn name(self) -> &'static str {
        match self {
            Anchor::Both => "both",
            Anchor::First => "first",
            Anchor::Second => "second",
        }
    }

    /// The anchor items retested, from the measure's (first, second).
    pub fn items(self, anchors: &[String; 2]) -> Vec<&str> {
        match self {
            Anchor::Both => vec![&anchors[0], &anchors[1]],
            Anchor::First => vec![&anchors[0]],
            Anchor::Second => vec![&anchors[1]],
        }
    }
}

/// One of the three conditions: 0 low, 1 middle, 2 high (condition values, not scores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The low condition value.
    Low,
    /// The middle condition value.
    Middle,
    /// The high condition value.
    High,
}

impl Level {
    /// Low, middle, high.
    pub const ALL: [Level; 3] = [Level::Low, Level::Middle, Level::High];

    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Level::Low => 0,
            Level::Middle => 1,
            Level::High => 2,
        }
    }

    /// The name written in files and records.
    pub fn name(self) -> &'static str {
        match self {
            Level::Low => "low",
            Level::Middle => "middle",
            Level::High => "high",
        }
    }
}

/// The eleven question-version identifiers: Q00 is the original question (the seed's BASE),
/// Q01–Q10 its ten eligible versions (the seed's C01–C10; C0–C3 are Agora's payoff variants).
pub const VERSION_IDS: [&str; 11] = ["Q00", "Q01", "Q02", "Q03", "Q04", "Q05", "Q06", "Q07", "Q08", "Q09", "Q10"];
