//! The deposits a plan was frozen in before its runs (`agora prereg`), and each run's
//! provenance: when the `agora run` that made it began, the deposit it was run under, and the
//! reason it gives for deviating from it.
//!
//! - `deposits`: one row per deposit used in this store, by the SHA-256 of its manifest, with its
//!   study, its self-attested time of creation, the registry's identifier where one was
//!   recorded (shown, never checked), and its files (a JSON object of path to text), so that an
//!   analysis compares against what was deposited without the deposit's directory.
//! - `run_provenance`: one row per run made by a build that keeps it, by run key (a key, not a
//!   row id, so that the row means the same run in any store that holds it). `started` is the
//!   time, by this machine's clock (UTC, to the second), at which the command that made the run
//!   began; `deposit` the deposit's hash (NULL: run without one); `deviation` the reason given
//!   with `--deviate` (NULL: the plan is the deposit's).

use rusqlite::{params, Connection, OptionalExtension};

use super::Store;
use crate::error::StoreError;
use crate::families::has_table;

/// A deposit as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepositRow {
    /// SHA-256 of the deposit's manifest: the deposit's name.
    pub hash: String,
    /// The study the deposit fixes the plan of.
    pub study: String,
    /// When the deposit was made, by the clock of the machine that made it (self-attested).
    pub created: String,
    /// The registry's identifier (a DOI), where the user recorded one.
    pub doi: Option<String>,
    /// The deposited files: a JSON object of path to text.
    pub files: String,
}

/// The time now, UTC, to the second (`2026-08-15T07:02:00Z`), by this machine's clock: as a
/// run's provenance and a deposit record it.
pub fn now_utc() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// What the store keeps of how a run came to be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// When the `agora run` that made the run began (UTC).
    pub started: String,
    /// The deposit the run was made under, if any.
    pub deposit: Option<String>,
    /// Why the run's plan differs from its deposit, where it does.
    pub deviation: Option<String>,
}

impl Store {
    /// Records a deposit a plan is run under. The first row of a hash stands (its files and time
    /// are those of the deposit, which the hash names); a registry identifier given later is
    /// added to it.
    pub fn record_deposit(&mut self, d: &DepositRow) -> Result<(), StoreError> {
        let sql = |e| StoreError::Sqlite { path: self.path.clone(), source: e };
        self.conn
            .execute(
                "INSERT OR IGNORE INTO deposits (hash, study, created, doi, files) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![d.hash, d.study, d.created, d.doi, d.files],
            )
            .map_err(sql)?;
        if let Some(doi) = &d.doi {
            self.conn.execute("UPDATE deposits SET doi = ?1 WHERE hash = ?2", params![doi, d.hash]).map_err(sql)?;
        }
        Ok(())
    }

    /// Records the provenance of runs just made (each run key once: a run made again, which a
    /// store never does, keeps its first row).
    pub fn record_provenance(&mut self, keys: &[String], p: &Provenance) -> Result<(), StoreError> {
        let sql = |e| StoreError::Sqlite { path: self.path.clone(), source: e };
        let tx = self.conn.unchecked_transaction().map_err(sql)?;
        {
            let mut st = tx
                .prepare(
                    "INSERT OR IGNORE INTO run_provenance (run_key, started, deposit, deviation) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql)?;
            for k in keys {
                st.execute(params![k, p.started, p.deposit, p.deviation]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }
}

/// The deposits a store holds, by hash.
pub fn read_deposits(conn: &Connection) -> Result<Vec<DepositRow>, rusqlite::Error> {
    if !has_table(conn, "deposits")? {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare("SELECT hash, study, created, doi, files FROM deposits ORDER BY study, created, hash")?;
    let rows = st.query_map([], |r| {
        Ok(DepositRow { hash: r.get(0)?, study: r.get(1)?, created: r.get(2)?, doi: r.get(3)?, files: r.get(4)? })
    })?;
    rows.collect()
}

/// A run's provenance, where the store keeps one.
pub fn read_provenance(conn: &Connection, run_key: &str) -> Result<Option<Provenance>, rusqlite::Error> {
    if !has_table(conn, "run_provenance")? {
        return Ok(None);
    }
    conn.query_row("SELECT started, deposit, deviation FROM run_provenance WHERE run_key = ?1", [run_key], |r| {
        Ok(Provenance { started: r.get(0)?, deposit: r.get(1)?, deviation: r.get(2)? })
    })
    .optional()
}

#[cfg(test)]
mod tests {
    #[test]
    fn now_is_an_iso_8601_utc_time_to_the_second() {
        let before = chrono::Utc::now().timestamp();
        let now = super::now_utc();
        let after = chrono::Utc::now().timestamp();
        assert_eq!(now.len(), 20, "{now}");
        let read = chrono::NaiveDateTime::parse_from_str(&now, "%Y-%m-%dT%H:%M:%SZ").expect("it reads back").and_utc();
        assert!((before..=after).contains(&read.timestamp()), "{now}");
    }
}
