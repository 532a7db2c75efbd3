//! Errors of the engine and the store.

use std::path::PathBuf;

use agora_agents::AgentError;
use agora_environments::EnvError;

/// What went wrong while running or storing a study.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The environment rejected a parameter or an action.
    #[error("run {run}: {source}")]
    Environment { run: String, source: EnvError },
    /// A deferred decision failed for good.
    #[error("run {run}, seat {seat}: {source}")]
    Decision { run: String, seat: usize, source: AgentError },
    /// The store could not be read or written.
    #[error("store {}: {source}", path.display())]
    Store { path: PathBuf, source: rusqlite::Error },
    /// The store file is not an Agora store, is truncated or is corrupt; it is not used.
    #[error("store {}: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// The async runtime could not be started.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}
