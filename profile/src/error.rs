//! What stops `agora profile`: the user's input (a file, a field, a setting changed under a
//! study already asked), which the command line reports with exit status 2 and after which
//! nothing has been written, or a failure of the store, a file or a model server (exit 1;
//! nothing recorded from a failed call).

use std::path::PathBuf;

use agora_agents::llm::CallError;
use agora_engine::llm_seats::PrepareError;
use agora_engine::{EngineError, StoreError};
use agora_records::families::FamilyError;

/// What stopped the profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The user's input: nothing was written.
    #[error("{0}")]
    BadInput(String),
    /// The store could not be opened, or was refused.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store's profile tables are of a version this build cannot use.
    #[error(transparent)]
    Family(#[from] FamilyError),
    /// A models or cell file does not read or validate.
    #[error(transparent)]
    Scenario(#[from] agora_scenarios::ScenarioError),
    /// SQLite failed while reading or writing the store.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// An output file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be written (the error names it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A model server failed, or did not answer: nothing of the call was recorded.
    #[error(transparent)]
    Server(#[from] CallError),
    /// The engine failed while preparing the model session.
    #[error(transparent)]
    Engine(EngineError),
    /// A result could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The inputs lock could not be written.
    #[error(transparent)]
    Ron(#[from] ron::Error),
    /// A model's questions stopped, or some stayed unanswered: what was answered is recorded,
    /// no profile was written, and the same command resumes.
    #[error("{0}")]
    Stopped(String),
    /// The runtime that asks the models failed.
    #[error("{0}")]
    Runtime(String),
}

impl Error {
    /// Whether the error is the user's input (exit 2) rather than a failure while working.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::BadInput(_) | Error::Scenario(_) => true,
            Error::Store(e) => e.is_refusal(),
            Error::Family(e) => e.is_refusal(),
            _ => false,
        }
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

/// The result of the profile's work.
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
