//! What the summary tables read beside the runs' outcomes: the studies and their blocks.

use rusqlite::Connection;

/// Each study's name and source, in the order the store recorded them.
pub fn study_sources(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = conn.prepare("SELECT study, source FROM studies ORDER BY rowid")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The distinct (study, block) pairs of the stored runs, in SQLite's order.
pub fn run_blocks(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = conn.prepare("SELECT DISTINCT study, block FROM runs")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
