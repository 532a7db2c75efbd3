//! The policy trait.

use std::future::Future;
use std::pin::Pin;

use agora_environments::{Action, EnvKind, Feedback, Observation};
use rand::RngCore;

use crate::error::AgentError;

/// A decision that will be available later (an LLM call in flight).
pub type DecisionFuture = Pin<Box<dyn Future<Output = Result<Action, AgentError>> + Send>>;

/// A policy's answer to one observation.
pub enum Decision {
    /// The action, now.
    Ready(Action),
    /// The action once the future resolves; the engine awaits it together with every other
    /// deferred decision of every live run.
    Deferred(DecisionFuture),
}

impl std::fmt::Debug for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Ready(a) => f.debug_tuple("Ready").field(a).finish(),
            Decision::Deferred(_) => f.write_str("Deferred(..)"),
        }
    }
}

/// What a policy is, for listings and records.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyMeta {
    /// Name used in study files and the store.
    pub name: &'static str,
    /// Model family; classical agents form a family of their own.
    pub family: &'static str,
    /// Interactions remembered, `None` when unbounded.
    pub memory_depth: Option<u32>,
    /// Whether it draws on the random stream, so that its play varies with the seed.
    pub stochastic: bool,
    /// Environments the policy has a rule for.
    pub environments: &'static [EnvKind],
    /// What it does, in one sentence.
    pub description: &'static str,
    /// Where it comes from.
    pub reference: &'static str,
}

/// One seat's decision rule.
///
/// Two methods are required; the rest have defaults. Randomness comes from the stream the
/// engine passes in, never from ambient state, so the same seed gives the same play.
pub trait Policy: Send + Sync {
    /// What this policy is.
    fn meta(&self) -> &'static PolicyMeta;
    /// Chooses an action for `obs`; the action must lie in `obs.space`.
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision;
    /// Learns from the outcome of a stage the agent took part in.
    fn update(&mut self, _feedback: &Feedback) {}
    /// Forgets everything learnt, returning to the state after construction.
    fn reset(&mut self) {}
}
