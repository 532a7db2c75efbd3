//! A participant's answer to one decision, as the desk hands it to the seat and the store
//! keeps it.

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
