//! Errors of environment construction and resolution.

/// What went wrong in an environment.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum EnvError {
    /// A parameter is outside what the game allows; the message names the field.
    #[error("invalid parameter `{field}`: {reason}")]
    InvalidParameter {
        /// The offending parameter, as spelled in study files.
        field: &'static str,
        /// Why the value is rejected.
        reason: String,
    },
    /// An action was outside the legal space of its decision.
    #[error("agent {agent} chose {action}, which is not a legal action here")]
    IllegalAction {
        /// The seat that chose it.
        agent: usize,
        /// The action, in its encoded form.
        action: String,
    },
    /// The actions did not match the open requests.
    #[error("expected actions for agents {expected:?}, got {got:?}")]
    ActionMismatch {
        /// The seats of the open requests, in request order.
        expected: Vec<usize>,
        /// The seats the actions came from.
        got: Vec<usize>,
    },
    /// A game's variants file shipped in assets/environments/ is malformed.
    #[error("variants file assets/environments/{file}: {message}")]
    VariantTable {
        /// The file name.
        file: String,
        /// What is wrong.
        message: String,
    },
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> EnvError {
    EnvError::InvalidParameter { field, reason: reason.into() }
}
