//! What became of a decision posted to a participant: their answer, or the stand-in's play
//! when the decision time ran out. The desk hands it to the seat, and the store keeps it so
//! that a restart replays the run exactly as its participants saw it.

use agora_environments::Action;

/// A participant's answer to one decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Submitted {
    /// The action.
    pub action: Action,
    /// The form as submitted (JSON).
    pub raw: String,
    /// Milliseconds from the page being posted to the answer.
    pub response_ms: f64,
    /// The version of the page answered.
    pub page_version: String,
}

/// A decision whose time ran out: the stand-in played it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedOut {
    /// The stand-in's action, as played.
    pub action: Action,
    /// Milliseconds from the page being posted to the decision being taken back.
    pub latency_ms: f64,
    /// The version of the page the participant was shown and did not answer.
    pub page_version: String,
}

/// What became of a decision posted to a participant.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The participant answered.
    Answered(Submitted),
    /// The time ran out and the stand-in played.
    TimedOut(TimedOut),
}

impl Outcome {
    /// The version of the page the participant was shown.
    pub fn page_version(&self) -> &str {
        match self {
            Outcome::Answered(a) => &a.page_version,
            Outcome::TimedOut(t) => &t.page_version,
        }
    }
}
