//! What `agora export` reads: a table's declared columns and its rows, value by value.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// A table's (or view's) columns as (name, declared type), in order; a view's computed column
/// declares no type (an empty string).
pub fn declared_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut info = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = info.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
    rows.collect()
}

/// Hands each row of `table` (all its columns, in SQLite's order) to `f` as its first `columns`
/// values; returns the rows read.
pub fn for_each_row(
    conn: &Connection,
    table: &str,
    columns: usize,
    mut f: impl FnMut(&[ValueRef<'_>]),
) -> rusqlite::Result<usize> {
    let mut st = conn.prepare(&format!("SELECT * FROM {table}"))?;
    let mut rows = st.query([])?;
    let mut n = 0usize;
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(columns);
        for i in 0..columns {
            values.push(row.get_ref(i)?);
        }
        f(&values);
        n += 1;
    }
    Ok(n)
}
