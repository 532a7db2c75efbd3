//! The store's reads, as the crates above the engine make them: the analysis and its ladder,
//! the report, the binary and the bindings.
//!
//! Each submodule holds one concern's queries and the plain rows they return; the crates that
//! read the store name these functions and convert the rows into their own types. Every
//! function takes an open connection and leaves its errors as SQLite's, for the caller to
//! place (a store's path, a message).

use rusqlite::types::FromSql;
use rusqlite::Connection;

pub mod bench;
pub mod declarations;
pub mod deposits;
pub mod evidence;
pub mod export;
pub mod report;
pub mod report_audit;
pub mod runs;
pub mod summary;
pub mod tournament;

pub use crate::families::{has_column, has_table};

/// The first column of every row `sql` (a query without parameters) selects, in the order
/// selected, collected into `C` (a list, a set).
pub fn first_column<T: FromSql, C: FromIterator<T>>(conn: &Connection, sql: &str) -> rusqlite::Result<C> {
    let mut st = conn.prepare(sql)?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Whether `table` has every one of `columns` (each read as [`has_column`]).
pub fn has_columns(conn: &Connection, table: &str, columns: &[&str]) -> rusqlite::Result<bool> {
    for c in columns {
        if !has_column(conn, table, c)? {
            return Ok(false);
        }
    }
    Ok(true)
}
