//! What stops an `agora audit` command: the user's input (a file, a field, an option out of
//! range, a store that is not an audited Agora store), which the command line reports with exit
//! status 2 and after which nothing has been written, or a failure of the store, a file or a
//! model server (exit 1; nothing recorded from a failed call).

use std::path::PathBuf;

use agora_agents::llm::{CallError, SessionError};
use agora_engine::llm_seats::PrepareError;
use agora_engine::{EngineError, StoreError};
use agora_records::families::FamilyError;

use crate::{AuditError, LabelsError};

/// What stopped an audit command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The user's input: nothing was written.
    #[error("{0}")]
    BadInput(String),
    /// Coding the transcripts, or an estimate over the codes, stopped.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// A label export, import or the agreement stopped.
    #[error(transparent)]
    Labels(#[from] LabelsError),
    /// The store could not be opened, or was refused.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store's audit tables are of a version this build cannot use.
    #[error(transparent)]
    Family(#[from] FamilyError),
    /// A models file does not read or validate.
    #[error(transparent)]
    Scenario(#[from] agora_scenarios::ScenarioError),
    /// The store's game declarations do not read.
    #[error(transparent)]
    Analysis(#[from] agora_analysis::AnalysisError),
    /// SQLite failed while reading or writing the store.
    #[error("store {}: {source}", path.display())]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// An output file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A stored decision does not read back as the request and action it recorded.
    #[error("decision {decision} (model `{model}`): {message}")]
    Decision {
        /// The decision's response id.
        decision: String,
        /// Its model.
        model: String,
        /// What does not read back.
        message: String,
    },
    /// A model server failed, or did not answer: nothing of the call was recorded.
    #[error(transparent)]
    Server(#[from] CallError),
    /// Replaying, and a call's reply is not in the store's reply cache.
    #[error("replay: no cached reply for {0}; run without --replay to call the server")]
    NotCached(String),
    /// The engine failed while preparing the model session.
    #[error(transparent)]
    Engine(EngineError),
    /// A report could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The runtime that asks the models could not start.
    #[error("starting the runtime: {0}")]
    Runtime(std::io::Error),
}

impl Error {
    /// Whether the error is the user's input (exit 2) rather than a failure while working.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::BadInput(_) | Error::Scenario(_) => true,
            Error::Audit(e) => e.is_bad_input(),
            Error::Labels(e) => e.is_bad_input(),
            Error::Store(e) => e.is_refusal(),
            Error::Family(e) => e.is_refusal(),
            _ => false,
        }
    }

    /// A SQLite error of the store at `path`.
    pub(crate) fn sql(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |source| Error::Sqlite { path: path.to_path_buf(), source }
    }

    /// An error writing the file or directory at `path`.
    pub(crate) fn write(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + '_ {
        move |source| Error::Write { path: path.to_path_buf(), source }
    }
}

impl From<PrepareError> for Error {
    fn from(e: PrepareError) -> Error {
        match e {
            PrepareError::Declaration(m) => Error::BadInput(m),
            PrepareError::Server(e) => Error::Server(e),
            PrepareError::Store(EngineError::Store(e)) => Error::Store(e),
            PrepareError::Store(e) => Error::Engine(e),
        }
    }
}

impl Error {
    /// A session's error for the call described by `what` (model, decision, replicate).
    pub(crate) fn of_call(e: SessionError, what: impl FnOnce() -> String) -> Error {
        match e {
            SessionError::NotCached => Error::NotCached(what()),
            SessionError::Call(e) => Error::Server(e),
            SessionError::UnknownModel(m) => Error::BadInput(format!("no model named `{m}` is declared")),
        }
    }
}

/// The result of an audit command.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_input_is_bad_input_and_a_failure_while_working_is_not() {
        let path = PathBuf::from("s.sqlite");
        let bad = [
            Error::BadInput("--sample must be at least 1".into()),
            Error::Store(StoreError::Missing { path: path.clone() }),
            Error::Store(StoreError::Corrupt { path: path.clone(), message: "not a database".into() }),
            Error::Family(FamilyError::Newer { family: "audit", found: 3, supported: 2 }),
        ];
        for e in &bad {
            assert!(e.is_bad_input(), "{e}");
        }
        let failures = [
            Error::Store(StoreError::Sqlite { path: path.clone(), source: rusqlite::Error::InvalidQuery }),
            Error::Family(FamilyError::Sql(rusqlite::Error::InvalidQuery)),
            Error::Write { path, source: std::io::Error::other("disk full") },
        ];
        for e in &failures {
            assert!(!e.is_bad_input(), "{e}");
        }
    }
}
