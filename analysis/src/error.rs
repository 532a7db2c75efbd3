//! Errors of the analysis.

use std::path::PathBuf;

/// What went wrong reading or analysing a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The store could not be opened or queried.
    #[error("store {}: {source}", path.display())]
    Store {
        /// Path of the store.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The store's game declarations are missing or do not read.
    #[error("store {}: declarations: {message}", path.display())]
    Declarations {
        /// Path of the store.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A stored run specification could not be read.
    #[error("store {}: run {run}: {message}", path.display())]
    Spec {
        /// Path of the store.
        path: PathBuf,
        /// Key of the run whose specification could not be read.
        run: String,
        /// What is wrong with the specification.
        message: String,
    },
}
