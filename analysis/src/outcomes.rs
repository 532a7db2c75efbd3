//! Run-level outcomes, one row per stored run.
//!
//! Each game computes its own outcomes when a run ends, and the engine stores them in the
//! `metrics` table in the run's transaction; the analysis reads them and never re-derives a
//! game's rules (convention windows, payoff tables) from the records.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::AnalysisError;

/// One run's identity and outcomes (the store's row, read by [`agora_records::reads::runs`]).
pub use agora_records::reads::runs::RunOutcome;

/// Opens a store read-only.
pub fn open(path: &Path) -> Result<Connection, AnalysisError> {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|source| AnalysisError::Store { path: path.to_path_buf(), source })
}

/// Reads every run's identity and stored metrics (of one study, or of all), in run-key order.
///
/// Run-key order, not the order runs were committed in: threads commit runs in any order, and
/// every analysis downstream (float sums, the seeded bootstrap's draws) must see the same runs
/// in the same order for the same study.
pub fn run_outcomes(path: &Path, study: Option<&str>) -> Result<Vec<RunOutcome>, AnalysisError> {
    let conn = open(path)?;
    agora_records::reads::runs::run_outcomes(&conn, study)
        .map_err(|source| AnalysisError::Store { path: path.to_path_buf(), source })
}
