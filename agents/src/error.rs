//! Errors of policy construction and decision.

use agora_environments::EnvKind;

/// What went wrong with a policy.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentError {
    /// The policy has no rule for this environment.
    #[error("agent `{policy}` cannot play {env}; it plays: {supported}")]
    Unsupported {
        /// The policy's registry name.
        policy: &'static str,
        /// The environment it was asked to play.
        env: &'static str,
        /// The environments it does play, comma-separated.
        supported: String,
    },
    /// A policy parameter is out of range; the message names the field.
    #[error("agent `{policy}`: invalid parameter `{field}`: {reason}")]
    InvalidParameter {
        /// The policy's registry name.
        policy: &'static str,
        /// The offending parameter, as spelled in study files.
        field: &'static str,
        /// Why the value is rejected, with the value itself.
        reason: String,
    },
    /// An asynchronous decision failed for good (after the policy's own retries).
    #[error("decision failed: {0}")]
    Failed(String),
    /// The model's server gave no reply (its transport retries spent, or the request refused):
    /// not an answer. The run cannot go on now; asked again later, its calls already answered
    /// come from the reply cache.
    #[error("decision not made: {0}")]
    Server(String),
}

impl AgentError {
    pub(crate) fn unsupported(policy: &'static str, env: EnvKind, supported: &[EnvKind]) -> Self {
        let list: Vec<&str> = supported.iter().map(|e| e.as_str()).collect();
        AgentError::Unsupported { policy, env: env.as_str(), supported: list.join(", ") }
    }
}
