//! What the benchmark harness (`agora-bench`) reads of the stores it times, and the layout it
//! times the store against: schema 4's, a row per decision, payoff and interaction, kept here
//! only as the benchmark's point of comparison (no command reads or writes it).

use rusqlite::{params, Connection};

use crate::run_records::RunRecords;

/// Makes schema 4's run tables in a fresh file, with the store's settings (write-ahead log,
/// synchronous NORMAL, SQLite's default pages).
pub fn row_per_record_layout(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE runs (run_id INTEGER PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, record_hash TEXT NOT NULL);
         CREATE TABLE decisions (run_id INTEGER NOT NULL REFERENCES runs(run_id), step INTEGER NOT NULL,
             round INTEGER NOT NULL, seat INTEGER NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
             value REAL NOT NULL, scale REAL NOT NULL, context REAL, PRIMARY KEY (run_id, step, seat)) WITHOUT ROWID;
         CREATE TABLE payoffs (run_id INTEGER NOT NULL REFERENCES runs(run_id), step INTEGER NOT NULL,
             round INTEGER NOT NULL, seat INTEGER NOT NULL, payoff REAL NOT NULL,
             PRIMARY KEY (run_id, step, seat)) WITHOUT ROWID;
         CREATE TABLE interactions (run_id INTEGER NOT NULL REFERENCES runs(run_id), t INTEGER NOT NULL,
             a INTEGER NOT NULL, b INTEGER NOT NULL, name_a INTEGER NOT NULL, name_b INTEGER NOT NULL,
             matched INTEGER NOT NULL, PRIMARY KEY (run_id, t)) WITHOUT ROWID;",
    )
}

/// Writes one run in schema 4's layout, in one transaction, through prepared statements.
pub fn write_row_per_record(conn: &mut Connection, rec: &RunRecords, hash: &str) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute("INSERT INTO runs (run_key, record_hash) VALUES (?1, ?2)", [&rec.key, hash])?;
    let run_id = tx.last_insert_rowid();
    {
        let mut st = tx.prepare_cached(
            "INSERT INTO decisions (run_id, step, round, seat, role, action, value, scale, context)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for d in &rec.decisions {
            st.execute(params![
                run_id,
                d.step,
                d.round,
                d.seat,
                d.role,
                d.action.encode(),
                d.value,
                d.scale,
                d.context
            ])?;
        }
        let mut st =
            tx.prepare_cached("INSERT INTO payoffs (run_id, step, round, seat, payoff) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for p in &rec.payoffs {
            st.execute(params![run_id, p.step, p.round, p.seat, p.payoff])?;
        }
        let mut st = tx.prepare_cached(
            "INSERT INTO interactions (run_id, t, a, b, name_a, name_b, matched) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for i in &rec.interactions {
            st.execute(params![run_id, i.t, i.a, i.b, i.name_a, i.name_b, i.matched])?;
        }
    }
    tx.commit()
}

/// Decisions, payoffs and interactions stored, together.
pub fn records_stored(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT SUM(json_array_length(decisions) + json_array_length(payoffs) + json_array_length(interactions))
         FROM run_rows",
        [],
        |r| r.get(0),
    )
}

/// Runs stored (a store of any schema: the table has always been there).
pub fn run_count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
}

/// What the LLM store benchmark measures of a store: its log written into the file first, then
/// the model calls, the bytes of every request in full, and the bytes of the transcripts' and
/// the reply cache's tables and indexes (SQLite's `dbstat`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallSizes {
    /// Model calls stored.
    pub calls: f64,
    /// The requests' bytes in full (the transcripts view).
    pub requests: f64,
    /// Bytes of `transcript_calls`, `prompt_parts` and its index.
    pub transcripts: f64,
    /// Bytes of `llm_cache` and its index.
    pub cache: f64,
}

/// The store's [`CallSizes`], after a truncating checkpoint.
pub fn call_sizes(conn: &Connection) -> rusqlite::Result<CallSizes> {
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let bytes = |names: &[&str]| -> rusqlite::Result<f64> {
        let list = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        Ok(conn.query_row(&format!("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN ({list})"), [], |r| {
            r.get::<_, i64>(0)
        })? as f64)
    };
    Ok(CallSizes {
        calls: conn.query_row("SELECT COUNT(*) FROM transcript_calls", [], |r| r.get::<_, i64>(0))? as f64,
        requests: conn.query_row("SELECT SUM(length(messages_json)) FROM transcripts", [], |r| r.get::<_, i64>(0))?
            as f64,
        transcripts: bytes(&["transcript_calls", "prompt_parts", "sqlite_autoindex_prompt_parts_1"])?,
        cache: bytes(&["llm_cache", "sqlite_autoindex_llm_cache_1"])?,
    })
}
