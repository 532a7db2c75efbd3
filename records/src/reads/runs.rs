//! The stored runs: their identity, outcomes (`metrics`), seats and provenance.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Deserialize;

/// One run's identity and outcomes.
#[derive(Clone, Debug, PartialEq, Deserialize)]
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
    /// Run-level outcomes the game stored, by metric name (`metrics`, read apart).
    #[serde(skip)]
    pub metrics: BTreeMap<String, f64>,
}

/// Every run's identity and stored metrics (of one study, or of all), in run-key order.
///
/// Run-key order, not the order runs were committed in: threads commit runs in any order, and
/// every analysis downstream (float sums, the seeded bootstrap's draws) must see the same runs
/// in the same order for the same study.
pub fn run_outcomes(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Vec<RunOutcome>> {
    let mut st = conn.prepare(
        "SELECT run_id, run_key, study, block, environment, arm, variant, cell, level, roster, family,
                    sweep_value AS sweep, committed, population,
                    CASE WHEN sweep_value IS NULL THEN sweep_name END AS point
             FROM runs WHERE (?1 IS NULL OR study = ?1) ORDER BY run_key",
    )?;
    let mut runs: Vec<RunOutcome> = crate::rows::by_name(&mut st, [study])?;
    let position: std::collections::HashMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.run_id, i)).collect();
    let mut st = conn.prepare(
        "SELECT m.run_id, m.name, m.value FROM metrics m JOIN runs r USING (run_id)
             WHERE (?1 IS NULL OR r.study = ?1)",
    )?;
    let mut rows = st.query([study])?;
    while let Some(r) = rows.next()? {
        let run_id: i64 = r.get(0)?;
        if let Some(i) = position.get(&run_id) {
            runs[*i].metrics.insert(r.get(1)?, r.get(2)?);
        }
    }
    Ok(runs)
}

fn run_ids(conn: &Connection, query: &str) -> rusqlite::Result<std::collections::BTreeSet<i64>> {
    super::first_column(conn, query)
}

/// The runs every seat of which is a person's (`agents.policy` is `human` for each).
pub fn all_human_runs(conn: &Connection) -> rusqlite::Result<std::collections::BTreeSet<i64>> {
    run_ids(conn, "SELECT run_id FROM agents GROUP BY run_id HAVING SUM(policy <> 'human') = 0")
}

/// The runs where a stand-in played some decision (a `stand-in:` model in `transcripts`).
pub fn stood_in_runs(conn: &Connection) -> rusqlite::Result<std::collections::BTreeSet<i64>> {
    run_ids(conn, "SELECT DISTINCT run_id FROM transcripts WHERE kind = 'decision' AND model LIKE 'stand-in:%'")
}

/// The day, in UTC, as SQLite gives it (`date('now')`, YYYY-MM-DD).
pub fn today(conn: &Connection) -> rusqlite::Result<String> {
    conn.query_row("SELECT date('now')", [], |r| r.get(0))
}

/// The SHA-256 of a study's plan (`studies.plan_hash`).
pub fn plan_hash(conn: &Connection, study: &str) -> rusqlite::Result<String> {
    conn.query_row("SELECT plan_hash FROM studies WHERE study = ?1", [study], |r| r.get(0))
}

/// A row of the store's runs with its provenance (`run_provenance`), where recorded.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ProvenancedRun {
    /// Row id of the run in the store.
    pub run_id: i64,
    /// The run's key.
    pub key: String,
    /// Its study (the deposit's study or one of its versions).
    pub study: String,
    /// Its environment.
    pub environment: String,
    /// When it started, where recorded.
    pub started: Option<String>,
    /// The deposit it ran under, where recorded.
    pub deposit: Option<String>,
    /// The deviation it declared, where recorded.
    pub deviation: Option<String>,
}

/// The runs of `study` and of its versions (`NAME@2`, …, and any study the `LIKE` matches), in
/// row order, with their provenance where the store has `run_provenance`.
pub fn provenanced_runs(conn: &Connection, study: &str) -> rusqlite::Result<Vec<ProvenancedRun>> {
    let provenance = super::has_table(conn, "run_provenance")?;
    let sql = if provenance {
        "SELECT r.run_id, r.run_key AS key, r.study, r.environment, p.started, p.deposit, p.deviation FROM runs r \
         LEFT JOIN run_provenance p ON p.run_key = r.run_key WHERE r.study = ?1 OR r.study LIKE ?1 || '@%' \
         ORDER BY r.run_id"
    } else {
        "SELECT run_id, run_key AS key, study, environment, NULL AS started, NULL AS deposit, NULL AS deviation FROM runs WHERE study = ?1 OR study LIKE ?1 || '@%' \
         ORDER BY run_id"
    };
    let mut st = conn.prepare(sql)?;
    crate::rows::by_name(&mut st, [study])
}

/// The runs of the store with row id `run_id` (0 or 1).
pub fn runs_with_id(conn: &Connection, run_id: i64) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COUNT(*) FROM runs WHERE run_id = ?1", [run_id], |r| r.get(0))
}

/// The studies the store records (`studies`), by name.
pub fn study_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    super::first_column(conn, "SELECT DISTINCT study FROM studies ORDER BY study")
}

/// The studies whose runs the store holds, in the order their first run was stored.
pub fn studies_in_run_order(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    super::first_column(conn, "SELECT study FROM runs GROUP BY study ORDER BY MIN(run_id)")
}
