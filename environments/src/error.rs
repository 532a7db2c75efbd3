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

/// Refuses a count that must be at least one (rounds, games, memory, a window, a cap).
pub(crate) fn at_least_one(field: &'static str, value: u32) -> Result<(), EnvError> {
    if value == 0 {
        return Err(invalid(field, "must be at least 1"));
    }
    Ok(())
}

/// Refuses a count of seats that must be at least two (a population, a group).
pub(crate) fn at_least_two(field: &'static str, value: usize) -> Result<(), EnvError> {
    if value < 2 {
        return Err(invalid(field, format!("must be at least 2, got {value}")));
    }
    Ok(())
}

/// Refuses an optional payoff that is set but not a finite number.
pub(crate) fn finite(field: &'static str, value: Option<f64>) -> Result<(), EnvError> {
    match value.filter(|v| !v.is_finite()) {
        Some(v) => Err(invalid(field, format!("must be a finite number, got {v}"))),
        None => Ok(()),
    }
}
