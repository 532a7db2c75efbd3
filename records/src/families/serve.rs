//! The tables of `agora serve`, a session with people: participants (opaque id, the code's
//! hash, the pool id's keyed hash, consent, stage, seat, payoff, completion code), every answer
//! as it is given, every decision that timed out with the stand-in's play, and the societies
//! that have started. No name, address or pool id is ever stored.
//!
//! Versions: 1, participants, answers and starts; 2, `serve_timeouts` (a decision that timed
//! out is stored as played by the stand-in, so that a restart replays exactly the history
//! people saw). A store of version 1 has no timed-out decision on record; its sessions
//! resume as that build would have resumed them.

use rusqlite::Connection;

use super::{Family, Step};

/// The tables of version 2.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS serve_participants (
    participant_id TEXT PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    pool_hash TEXT,
    study TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    stage TEXT NOT NULL,
    released_reason TEXT,
    consent_at INTEGER,
    consent_sha256 TEXT,
    comprehension_tries INTEGER NOT NULL DEFAULT 0,
    run_key TEXT,
    seat INTEGER,
    payoff REAL,
    completion_code TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS serve_answers (
    run_key TEXT NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    participant_id TEXT NOT NULL,
    action TEXT NOT NULL,
    raw TEXT NOT NULL,
    response_ms REAL NOT NULL,
    page_version TEXT NOT NULL,
    answered_at INTEGER NOT NULL,
    PRIMARY KEY (run_key, seat, slot)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS serve_timeouts (
    run_key TEXT NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    participant_id TEXT NOT NULL,
    action TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    page_version TEXT NOT NULL,
    timed_out_at INTEGER NOT NULL,
    PRIMARY KEY (run_key, seat, slot)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS serve_starts (
    run_key TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL
) WITHOUT ROWID;
";

fn timeouts(_: &Connection) -> rusqlite::Result<()> {
    // The schema makes `serve_timeouts`; nothing of version 1 changes.
    Ok(())
}

/// The session's family.
pub const SERVE: Family = Family {
    name: "serve",
    version: 2,
    tables: &["serve_participants", "serve_answers", "serve_timeouts", "serve_starts"],
    schema: SCHEMA,
    steps: &[Step {
        to: 2,
        what: "serve_timeouts: decisions that timed out, with the stand-in's play",
        apply: timeouts,
    }],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Version 1: the session's tables before `serve_timeouts`.
    const V1: &str = "
        CREATE TABLE serve_participants (participant_id TEXT PRIMARY KEY, code_hash TEXT NOT NULL UNIQUE,
            pool_hash TEXT, study TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
            stage TEXT NOT NULL, released_reason TEXT, consent_at INTEGER, consent_sha256 TEXT,
            comprehension_tries INTEGER NOT NULL DEFAULT 0, run_key TEXT, seat INTEGER, payoff REAL,
            completion_code TEXT) WITHOUT ROWID;
        CREATE TABLE serve_answers (run_key TEXT NOT NULL, seat INTEGER NOT NULL, slot INTEGER NOT NULL,
            participant_id TEXT NOT NULL, action TEXT NOT NULL, raw TEXT NOT NULL, response_ms REAL NOT NULL,
            page_version TEXT NOT NULL, answered_at INTEGER NOT NULL, PRIMARY KEY (run_key, seat, slot)) WITHOUT ROWID;
        CREATE TABLE serve_starts (run_key TEXT PRIMARY KEY, started_at INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO serve_answers VALUES ('k', 0, 1, 'p', 'C', '{}', 812.5, 'v', 1);";

    #[test]
    fn a_session_store_of_version_1_gains_the_timeouts_and_keeps_its_answers() {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(V1).expect("version 1");
        assert_eq!(super::super::stored_version(&conn, &SERVE).expect("read"), Some(1));
        assert_eq!(super::super::ensure(&conn, &SERVE).expect("upgraded"), Some(1));
        assert_eq!(super::super::stored_version(&conn, &SERVE).expect("read"), Some(2));
        let timeouts: i64 = conn
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'serve_timeouts'", [], |r| r.get(0))
            .expect("listed");
        assert_eq!(timeouts, 1);
        let kept: (String, f64) = conn
            .query_row("SELECT action, response_ms FROM serve_answers", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("kept");
        assert_eq!(kept, ("C".to_string(), 812.5));
    }
}
