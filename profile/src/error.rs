//! What stops `agora profile`: the user's input (a file, a field, a setting changed under a
//! study already asked), which the command line reports with exit status 2 and after which
//! nothing has been written, or a failure of the store, a file or a model server (exit 1;
//! nothing recorded from a failed call).

use agora_engine::CommandError;

/// What stopped the profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The user's input: nothing was written.
    #[error("{0}")]
    BadInput(String),
    /// The store, the model session or an output failed, or was refused.
    #[error(transparent)]
    Command(CommandError),
    /// A models or cell file does not read or validate.
    #[error(transparent)]
    Scenario(#[from] agora_scenarios::ScenarioError),
    /// SQLite failed while reading or writing the profile's tables.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// A file could not be written (the error names it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The inputs lock could not be written.
    #[error(transparent)]
    Ron(#[from] ron::Error),
    /// A model's questions stopped, or some stayed unanswered: what was answered is recorded,
    /// no profile was written, and the same command resumes.
    #[error("{0}")]
    Stopped(String),
}

agora_engine::from_command_errors!(Error);

impl Error {
    /// Whether the error is the user's input (exit 2) rather than a failure while working.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::BadInput(_) | Error::Scenario(_) => true,
            Error::Command(e) => e.is_bad_input(),
            _ => false,
        }
    }

    /// An error writing the file or directory at `path`.
    pub(crate) fn write(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + '_ {
        move |e| Error::Command(CommandError::write(path)(e))
    }

    /// The runtime that asks the models failed: `what` it was doing.
    pub(crate) fn runtime(what: String) -> Error {
        Error::Command(CommandError::Runtime(what))
    }
}

/// The result of the profile's work.
pub type Result<T, E = Error> = std::result::Result<T, E>;
