//! The audit's reads of the run store: the runs, transcripts, decisions and reply cache it
//! audits, asks again or estimates over.

use rusqlite::{params, Connection, OptionalExtension};

/// How many runs of `study` the store holds.
pub fn study_runs(conn: &Connection, study: &str) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COUNT(*) FROM runs WHERE study = ?1", [study], |r| r.get(0))
}

/// The state id a binary-allocation decision was asked in (its recorded `context`), where the
/// store holds one: the seat's `slot`-th decision as the dictator.
pub fn state_context(conn: &Connection, run_id: i64, seat: i64, slot: i64) -> rusqlite::Result<Option<u32>> {
    let context: Option<Option<f64>> = conn
        .query_row(
            "SELECT context FROM decisions WHERE run_id = ?1 AND seat = ?2 AND role = 'dictator'
             ORDER BY step LIMIT 1 OFFSET ?3",
            params![run_id, seat, slot],
            |r| r.get(0),
        )
        .optional()?;
    Ok(context.flatten().filter(|c| c.fract() == 0.0 && *c >= 0.0 && *c < f64::from(u32::MAX)).map(|c| c as u32))
}

/// A run's condition: (environment, cell, arm, variant, roster).
pub type RunCondition = (String, String, String, String, String);

/// The distinct conditions of the store's runs.
pub fn run_conditions(conn: &Connection) -> rusqlite::Result<Vec<RunCondition>> {
    let mut st = conn.prepare("SELECT DISTINCT environment, cell, arm, variant, roster FROM runs")?;
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))).and_then(Iterator::collect)
}
