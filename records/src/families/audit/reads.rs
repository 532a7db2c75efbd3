//! The audit's reads of the run store: the runs, transcripts, decisions and reply cache it
//! audits, asks again or estimates over.

use std::collections::BTreeSet;

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

/// The distinct (model, served id) of the decision transcripts of the store's model endpoints
/// (of `study` only, when given; `human` is the endpoint of human participants, left out).
pub fn decision_models(conn: &Connection, study: Option<&str>, human: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = conn.prepare(
        "SELECT DISTINCT t.model, t.served_id FROM transcripts t JOIN runs r ON r.run_id = t.run_id
             WHERE t.kind = 'decision' AND t.endpoint <> ?2 AND (?1 IS NULL OR r.study = ?1) ORDER BY 1, 2",
    )?;
    st.query_map(params![study, human], |r| Ok((r.get(0)?, r.get(1)?))).and_then(Iterator::collect)
}

/// The decision slots of `environment`'s runs that ended in a `fallback` transcript: (run id,
/// seat, slot).
pub fn fallback_slots(conn: &Connection, environment: &str) -> rusqlite::Result<BTreeSet<(i64, i64, i64)>> {
    let mut fallbacks = BTreeSet::new();
    let mut st = conn.prepare(
        "SELECT t.run_id, t.seat, t.slot FROM transcripts t JOIN runs r USING (run_id)
         WHERE r.environment = ?1 AND t.kind = 'decision' AND t.parse_status = 'fallback'",
    )?;
    for row in st.query_map([environment], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        fallbacks.insert(row?);
    }
    Ok(fallbacks)
}

/// A dictator's decision with its run's condition: (run id, roster, variant, cell, arm, seat,
/// value, context).
pub type DictatorDecision = (i64, String, String, String, String, i64, f64, Option<f64>);

/// The dictators' decisions of `environment`'s runs, run by run, seat by seat, in step order.
pub fn dictator_decisions(conn: &Connection, environment: &str) -> rusqlite::Result<Vec<DictatorDecision>> {
    let mut st = conn.prepare(
        "SELECT r.run_id, r.roster, r.variant, r.cell, r.arm, d.seat, d.value, d.context
         FROM decisions d JOIN runs r USING (run_id)
         WHERE r.environment = ?1 AND d.role = 'dictator' ORDER BY r.run_id, d.seat, d.step",
    )?;
    let rows = st.query_map([environment], |r| DictatorDecision::try_from(r))?;
    rows.collect()
}

/// Whether the store's reply cache holds `key`.
pub fn cached(conn: &Connection, key: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT 1 FROM llm_cache WHERE key = ?1", [key], |_| Ok(())).optional().map(|x| x.is_some())
}
