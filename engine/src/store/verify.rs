//! Record hashes recomputed from what a store holds: every run's hash is SHA-256 over its
//! stored values ([`crate::record_hash`]), so a store can be checked, and a store of an
//! earlier schema brought to this one's hash, from the store alone.

use rusqlite::{params, Connection};

use super::Store;
use crate::error::EngineError;
use crate::record_hash::{record_hash, AgentRow, CallRow, RowsText};

/// A stored run whose record hash is not the hash of what the store holds for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The run's key.
    pub run_key: String,
    /// The hash the store keeps.
    pub stored: String,
    /// The hash of the stored values.
    pub recomputed: String,
}

/// What a verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verification {
    /// Runs checked.
    pub runs: u64,
    /// Runs whose stored hash differs from the hash of their stored values.
    pub mismatches: Vec<Mismatch>,
}

/// A model call as the `transcripts` view lists it (the request joined back from its parts),
/// less its endpoint and latency, which the record hash leaves out.
type StoredCall = (
    u32,
    u64,
    String,
    u32,
    u32,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    Option<u64>,
    Option<u64>,
);

/// Calls `each(run_id, run_key, stored_hash, recomputed_hash)` for every stored run, in run
/// order.
pub(super) fn each_recomputed(
    conn: &Connection,
    mut each: impl FnMut(i64, &str, &str, String) -> Result<(), rusqlite::Error>,
) -> Result<(), rusqlite::Error> {
    let runs: Vec<(i64, String, String)> = conn
        .prepare("SELECT run_id, run_key, record_hash FROM runs ORDER BY run_id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut agents = conn.prepare("SELECT seat, policy, family, committed FROM agents WHERE run_id = ?1")?;
    let mut rows = conn.prepare("SELECT decisions, payoffs, interactions FROM run_rows WHERE run_id = ?1")?;
    let mut calls = conn.prepare(
        "SELECT seat, slot, kind, attempt, round, role, model, served_id, messages_json, raw_reply,
                action, reason, parse_status, detail, prompt_tokens, completion_tokens
         FROM transcripts WHERE run_id = ?1",
    )?;
    let mut metrics = conn.prepare("SELECT name, value FROM metrics WHERE run_id = ?1")?;
    for (run_id, key, stored) in runs {
        let a: Vec<(u32, String, String, bool)> = agents
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let (d, p, i): (String, String, String) =
            rows.query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).or_else(|e| match e {
                // A run with no row of records recorded none.
                rusqlite::Error::QueryReturnedNoRows => Ok(("[]".into(), "[]".into(), "[]".into())),
                e => Err(e),
            })?;
        let c: Vec<StoredCall> = calls
            .query_map([run_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, i64>(1)? as u64,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                    r.get(10)?,
                    r.get(11)?,
                    r.get(12)?,
                    r.get(13)?,
                    r.get::<_, Option<i64>>(14)?.map(|v| v as u64),
                    r.get::<_, Option<i64>>(15)?.map(|v| v as u64),
                ))
            })?
            .collect::<Result<_, _>>()?;
        let m: Vec<(String, f64)> =
            metrics.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        let agent_rows: Vec<AgentRow> = a
            .iter()
            .map(|(seat, policy, family, committed)| AgentRow { seat: *seat, policy, family, committed: *committed })
            .collect();
        let call_rows: Vec<CallRow> = c
            .iter()
            .map(|c| CallRow {
                seat: c.0,
                slot: c.1,
                kind: &c.2,
                attempt: c.3,
                round: c.4,
                role: &c.5,
                model: &c.6,
                served_id: &c.7,
                request: &c.8,
                raw_reply: &c.9,
                action: c.10.as_deref(),
                reason: c.11.as_deref(),
                parse_status: &c.12,
                detail: &c.13,
                prompt_tokens: c.14,
                completion_tokens: c.15,
            })
            .collect();
        let metric_rows: Vec<(&str, f64)> = m.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let text = RowsText { decisions: &d, payoffs: &p, interactions: &i };
        each(run_id, &key, &stored, record_hash(&key, &agent_rows, text, &call_rows, &metric_rows))?;
    }
    Ok(())
}

/// Sets every run's record hash to the hash of its stored values: the step that brings a
/// store of schema 7 or earlier to this schema's hash ([`crate::record_hash`]). Each hash is
/// recomputed from what the store holds, not checked against the one it held: a store altered
/// by hand before it is upgraded verifies afterwards. One transaction.
pub(super) fn upgrade_hashes(conn: &Connection) -> Result<(), rusqlite::Error> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let mut update = conn.prepare("UPDATE runs SET record_hash = ?1 WHERE run_id = ?2")?;
        each_recomputed(conn, |run_id, _, _, hash| update.execute(params![hash, run_id]).map(drop))
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl Store {
    /// Recomputes every stored run's record hash from what the store holds and lists the runs
    /// whose stored hash differs: a store nobody has altered verifies with no mismatch.
    pub fn verify(&self) -> Result<Verification, EngineError> {
        let mut v = Verification::default();
        each_recomputed(&self.conn, |_, key, stored, recomputed| {
            v.runs += 1;
            if stored != recomputed {
                v.mismatches.push(Mismatch { run_key: key.to_string(), stored: stored.to_string(), recomputed });
            }
            Ok(())
        })
        .map_err(|source| EngineError::Store { path: self.path.clone(), source })?;
        Ok(v)
    }
}
