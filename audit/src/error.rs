//! What stops an `agora audit` command: the user's input (a file, a field, an option out of
//! range, a store that is not an audited Agora store), which the command line reports with exit
//! status 2 and after which nothing has been written, or a failure of the store, a file or a
//! model server (exit 1; nothing recorded from a failed call).

use std::path::PathBuf;

use agora_agents::llm::{CallError, SessionError};
use agora_engine::CommandError;

use crate::{AuditError, LabelsError};

/// What stopped an audit command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The user's input: nothing was written.
    #[error("{0}")]
    BadInput(String),
    /// The store, the model session or an output failed, or was refused.
    #[error(transparent)]
    Command(CommandError),
    /// Coding the transcripts, or an estimate over the codes, stopped.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// A label export, import or the agreement stopped.
    #[error(transparent)]
    Labels(#[from] LabelsError),
    /// A models file does not read or validate.
    #[error(transparent)]
    Models(#[from] agora_scenarios::ScenarioError),
    /// The store's game declarations do not read.
    #[error(transparent)]
    Declarations(#[from] agora_analysis::AnalysisError),
    /// SQLite failed while reading or writing the store.
    #[error("store {}: {source}", path.display())]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
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
    /// A model server failed while asked: nothing of the call was recorded.
    #[error(transparent)]
    Server(#[from] CallError),
    /// Replaying, and a call's reply is not in the store's reply cache.
    #[error("replay: no cached reply for {0}; run without --replay to call the server")]
    NotCached(String),
}

agora_engine::from_command_errors!(Error);

impl Error {
    /// Whether the error is the user's input (exit 2) rather than a failure while working.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::BadInput(_) | Error::Models(_) => true,
            Error::Command(e) => e.is_bad_input(),
            Error::Audit(e) => e.is_bad_input(),
            Error::Labels(e) => e.is_bad_input(),
            _ => false,
        }
    }

    /// A SQLite error of the store at `path`.
    pub(crate) fn sql(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |source| Error::Sqlite { path: path.to_path_buf(), source }
    }

    /// An error writing the file or directory at `path`.
    pub(crate) fn write(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + '_ {
        move |e| Error::Command(CommandError::write(path)(e))
    }

    /// A session's error for the call described by `what` (model, decision, replicate).
    pub(crate) fn of_call(e: SessionError, what: impl FnOnce() -> String) -> Error {
        match e {
            SessionError::NotCached => Error::NotCached(what()),
            SessionError::Call(e) => Error::Server(e),
            SessionError::UnknownModel(m) => Error::BadInput(format!("no model named `{m}` is declared")),
        }
    }

    /// The runtime that asks the models could not start.
    pub(crate) fn runtime(e: std::io::Error) -> Error {
        Error::Command(CommandError::Runtime(format!("starting the runtime: {e}")))
    }
}

/// The result of an audit command.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use agora_engine::StoreError;
    use agora_records::families::FamilyError;

    #[test]
    fn the_users_input_is_bad_input_and_a_failure_while_working_is_not() {
        let path = PathBuf::from("s.sqlite");
        let bad = [
            Error::BadInput("--sample must be at least 1".into()),
            Error::from(StoreError::Missing { path: path.clone() }),
            Error::from(StoreError::Corrupt { path: path.clone(), message: "not a database".into() }),
            Error::from(FamilyError::Newer { family: "audit", found: 3, supported: 2 }),
            Error::from(agora_engine::llm_seats::PrepareError::Declaration("key variable not set".into())),
        ];
        for e in &bad {
            assert!(e.is_bad_input(), "{e}");
        }
        let failures = [
            Error::from(StoreError::Sqlite { path: path.clone(), source: rusqlite::Error::InvalidQuery }),
            Error::from(FamilyError::Sql(rusqlite::Error::InvalidQuery)),
            Error::write(&path)(std::io::Error::other("disk full")),
            Error::sql(&path)(rusqlite::Error::InvalidQuery),
        ];
        for e in &failures {
            assert!(!e.is_bad_input(), "{e}");
        }
    }
}
