//! Run-level outcomes, one row per stored run.
//!
//! Each game computes its own outcomes when a run ends, and the engine stores them in the
//! `metrics` table in the run's transaction; the analysis reads them and never re-derives a
//! game's rules (convention windows, payoff tables) from the records.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::AnalysisError;

/// One run's identity and outcomes.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// Row id of the run in the store.
    pub run_id: i64,
    /// Key identifying the run across stores (unique in a store).
    pub run_key: String,
    /// Study the run belongs to.
    pub study: String,
    /// Block of the study the run belongs to.
    pub block: String,
    /// Environment played (e.g. `public-goods`).
    pub environment: String,
    /// Arm of the environment (e.g. `baseline`, `punishment`).
    pub arm: String,
    /// Payoff variant (C0–C3).
    pub variant: String,
    /// Cell of the perturbation library, or `baseline`.
    pub cell: String,
    /// Level of the cell (representation, design or contamination).
    pub level: String,
    /// Roster that played: a model or a classical roster.
    pub roster: String,
    /// Family of the roster (`classical` for classical rosters).
    pub family: String,
    /// Value of the swept parameter (e.g. the committed fraction), if the run belongs to a sweep.
    pub sweep: Option<f64>,
    /// The point of a `Grid` or `Zip` sweep the run belongs to (`rounds=5 memory=1`), if any.
    pub point: Option<String>,
    /// Number of committed agents in the run.
    pub committed: i64,
    /// Number of agents in the run.
    pub population: i64,
    /// Run-level outcomes the game stored, by metric name.
    pub metrics: BTreeMap<String, f64>,
}

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
    let sql = |source| AnalysisError::Store { path: path.to_path_buf(), source };
    let mut runs: Vec<RunOutcome> = Vec::new();
    let mut st = conn
        .prepare(
            "SELECT run_id, run_key, study, block, environment, arm, variant, cell, level, roster, family,
                    sweep_value, committed, population, CASE WHEN sweep_value IS NULL THEN sweep_name END
             FROM runs WHERE (?1 IS NULL OR study = ?1) ORDER BY run_key",
        )
        .map_err(sql)?;
    let mut rows = st.query([study]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        runs.push(RunOutcome {
            run_id: r.get(0).map_err(sql)?,
            run_key: r.get(1).map_err(sql)?,
            study: r.get(2).map_err(sql)?,
            block: r.get(3).map_err(sql)?,
            environment: r.get(4).map_err(sql)?,
            arm: r.get(5).map_err(sql)?,
            variant: r.get(6).map_err(sql)?,
            cell: r.get(7).map_err(sql)?,
            level: r.get(8).map_err(sql)?,
            roster: r.get(9).map_err(sql)?,
            family: r.get(10).map_err(sql)?,
            sweep: r.get(11).map_err(sql)?,
            committed: r.get(12).map_err(sql)?,
            population: r.get(13).map_err(sql)?,
            point: r.get(14).map_err(sql)?,
            metrics: BTreeMap::new(),
        });
    }
    let position: std::collections::HashMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.run_id, i)).collect();
    let mut st = conn
        .prepare(
            "SELECT m.run_id, m.name, m.value FROM metrics m JOIN runs r USING (run_id)
             WHERE (?1 IS NULL OR r.study = ?1)",
        )
        .map_err(sql)?;
    let mut rows = st.query([study]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let run_id: i64 = r.get(0).map_err(sql)?;
        if let Some(i) = position.get(&run_id) {
            runs[*i].metrics.insert(r.get(1).map_err(sql)?, r.get(2).map_err(sql)?);
        }
    }
    Ok(runs)
}
