//! Errors of study and cell files.

use std::path::PathBuf;

/// What is wrong with a study or cell file. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid RON for its format (malformed, unknown field or variant).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line of the error, 1-based.
        line: usize,
        /// Column of the error, 1-based.
        column: usize,
        /// What the parser expected or found.
        message: String,
    },
    /// The file parsed but a value is impossible; `field` is the path to it.
    #[error("{}: `{field}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Path to the value, e.g. `blocks[0].rosters[1].members`.
        field: String,
        /// What is wrong with the value.
        message: String,
    },
    /// A block refers to a cell that does not exist.
    #[error("{}: `{field}`: unknown cell `{name}` (looked for {})", path.display(), looked.display())]
    UnknownCell {
        /// The study file.
        path: PathBuf,
        /// Path to the reference, e.g. `blocks[0].cells[2]`.
        field: String,
        /// The cell name referred to.
        name: String,
        /// The cell file that was looked for.
        looked: PathBuf,
    },
    /// A shard specification is malformed.
    #[error("invalid shard `{0}`: expected i/N with 1 <= i <= N")]
    Shard(String),
}

impl ScenarioError {
    pub(crate) fn invalid(path: &std::path::Path, field: impl Into<String>, message: impl std::fmt::Display) -> Self {
        ScenarioError::Invalid { path: path.to_path_buf(), field: field.into(), message: message.to_string() }
    }

    pub(crate) fn parse(path: &std::path::Path, e: ron::error::SpannedError) -> Self {
        ScenarioError::Parse {
            path: path.to_path_buf(),
            line: e.span.start.line,
            column: e.span.start.col,
            message: e.code.to_string(),
        }
    }
}
