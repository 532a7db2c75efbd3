//! Errors of the store: what SQLite reported, and files that are not (or not yet, or no
//! longer) a store this build can use.

use std::path::PathBuf;

/// What went wrong while opening, reading or writing a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store could not be read or written.
    #[error("store {}: {source}", path.display())]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The store file is not an Agora store, is truncated or is corrupt; it is not used.
    #[error("store {}: {message}", path.display())]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A command that reads a store was given a path where there is no file.
    #[error("store {} does not exist", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// The file is empty (no page, or no table): nothing has been stored in it, and a command
    /// that reads leaves it as it is.
    #[error("store {}: an empty file, not an Agora store (nothing has been written to it; `agora run` makes a store)", path.display())]
    Empty {
        /// The store file.
        path: PathBuf,
    },
    /// Another command is writing runs to the store ([`crate::store::Claim`]).
    #[error(
        "store {} is being written by {holder}; wait for it to end, or write to another store and \
         combine them with `agora merge`",
        path.display()
    )]
    Claimed {
        /// The store file.
        path: PathBuf,
        /// The command, process and machine that hold the store.
        holder: String,
    },
    /// A record holds a value the store cannot keep (a non-finite number).
    #[error("run {run}: {message}")]
    Unstorable {
        /// The run key.
        run: String,
        /// What cannot be stored.
        message: String,
    },
}

impl StoreError {
    /// Whether the store was refused as given (not a store, missing, empty, or held by another
    /// writing command) rather than failing while it was read or written: a command reports it
    /// as bad input (exit 2).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            StoreError::Corrupt { .. }
                | StoreError::Missing { .. }
                | StoreError::Empty { .. }
                | StoreError::Claimed { .. }
        )
    }
}
