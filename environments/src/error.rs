//! Errors of environment construction and resolution.

/// What went wrong in an environment.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum EnvError {
    /// A parameter is outside what the game allows; the message names the field.
    #[error("invalid parameter `{field}`: {reason}")]
    InvalidParameter { field: &'static str, reason: String },
    /// An action was outside the legal space of its decision.
    #[error("agent {agent} chose {action}, which is not a legal action here")]
    IllegalAction { agent: usize, action: String },
    /// The actions did not match the open requests.
    #[error("expected actions for agents {expected:?}, got {got:?}")]
    ActionMismatch { expected: Vec<usize>, got: Vec<usize> },
    /// The variant table shipped in assets/ is malformed.
    #[error("variant table assets/environments/variants.ron: {0}")]
    VariantTable(String),
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> EnvError {
    EnvError::InvalidParameter { field, reason: reason.into() }
}
