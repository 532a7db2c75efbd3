//! Agents of Agora: the [`Policy`] trait and the classical policies.
//!
//! A policy is one seat's decision rule. Classical policies answer synchronously; a policy
//! backed by a language model answers with a [`Decision::Deferred`] future, which the engine
//! gathers with every other pending decision of every live run and resolves together. Both
//! are interchangeable in a roster.

pub mod classical;
pub mod error;
pub mod llm;
pub mod policy;
pub mod spec;

pub use error::AgentError;
pub use policy::{Decision, DecisionFuture, Policy, PolicyMeta};
pub use spec::{PolicySpec, PythonPolicy, HUMAN, HUMAN_ENDPOINT, PYTHON};

/// Convenient imports for users of this crate.
pub mod prelude {
    pub use crate::{AgentError, Decision, Policy, PolicyMeta, PolicySpec};
}
