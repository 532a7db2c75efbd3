//! What a decision of a task is, as the catalogue builds it and the item files fill it in: the
//! input with its facts, the form of its answer, the options listed on lines and the supplied
//! history.

use super::{Level, Task};

/// One fully specified decision of a task (a seed-000 "decision point" at one condition, and
/// for B1–B3 one of its two supplied histories).
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The task.
    pub task: Task,
    /// The condition.
    pub level: Level,
    /// The decision point within the condition (empty where the condition has one): `offer-10`,
    /// `p-40`, `known-50-red`, `r100-immediate`, `P1-XY`, `G2`, …
    pub point: String,
    /// B1–B3: which supplied history (`after` is the measure's first history, `comparison`
    /// the other); empty elsewhere.
    pub branch: String,
    /// Whether the point is scored (the responder's full curve is kept but unscored, §A5).
    pub scored: bool,
    /// The values a version's placeholders take (`total` → `1000`).
    pub facts: Vec<(String, String)>,
    /// What the answer is.
    pub answer: Answer,
    /// The options listed as lines (menus of C and D), each with its own facts; empty where the
    /// options are named only in the text and the answer format.
    pub listed: Vec<ListedOption>,
    /// The supplied history (B1–B3), oldest round first.
    pub history: Vec<Round>,
}

/// What an answer is: a whole amount or one of named options.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A whole number from 0 to `max`, meaning the task's economic quantity (the version says
    /// whether the model states it directly or its complement, e.g. what it keeps).
    Amount {
        /// The largest legal amount.
        max: i64,
    },
    /// One of these options, by their economic keys, in the reference display order.
    Options(Vec<&'static str>),
}

/// An option listed on its own line, with the facts its template fills in.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedOption {
    /// Its economic key (`a`, `unknown`, `later`, `X`).
    pub key: &'static str,
    /// The version template that describes it (`lottery`, `known`, `unknown`, `payment`).
    pub template: &'static str,
    /// Its facts.
    pub facts: Vec<(String, String)>,
}

/// One round of a supplied or live history: the actions as option keys or amounts, and the
/// payoffs.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// 1-based round number.
    pub round: u32,
    /// The focal player's action: an option key or an amount.
    pub own: String,
    /// The other player's (or, in B1, each other player's) action.
    pub other: String,
    /// The focal player's payoff.
    pub own_payoff: String,
    /// The other player's (each other player's) payoff.
    pub other_payoff: String,
}
