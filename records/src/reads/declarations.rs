//! The games' declarations of their outcomes, as the store records them (`declarations`).

use rusqlite::Connection;

/// The stored declarations' JSON, by environment; none where the store has no `declarations`
/// table (a store written before declarations were recorded).
pub fn declaration_texts(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    if !super::has_table(conn, "declarations")? {
        return Ok(Vec::new());
    }
    super::first_column(conn, "SELECT declaration_json FROM declarations ORDER BY environment")
}

/// The environments of the stored runs, in order.
pub fn run_environments(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    super::first_column(conn, "SELECT DISTINCT environment FROM runs ORDER BY environment")
}
