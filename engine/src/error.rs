//! Errors of the engine: a game's, a decision's, the runtime's, and the store's
//! ([`agora_records::StoreError`]).

use agora_agents::AgentError;
use agora_environments::EnvError;

/// What went wrong while running or storing a study.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The environment rejected a parameter or an action.
    #[error("run {run}: {source}")]
    Environment {
        /// The run's key.
        run: String,
        /// What the environment rejected.
        source: EnvError,
    },
    /// A deferred decision failed for good.
    #[error("run {run}, seat {seat}: {source}")]
    Decision {
        /// The run's key.
        run: String,
        /// The seat whose decision failed.
        seat: usize,
        /// Why it failed.
        source: AgentError,
    },
    /// The store could not be opened, read or written.
    #[error(transparent)]
    Store(#[from] agora_records::StoreError),
    /// The async runtime could not be started.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}
