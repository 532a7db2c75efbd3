//! Record hashes recomputed from what a store holds: every run's hash is SHA-256 over its
//! stored values ([`crate::record_hash`]), so a store can be checked, and a store of an
//! earlier schema brought to this one's hash, from the store alone (a schema-7 store's runs
//! checked against the hash they were stored with first).

use rusqlite::{params, Connection};

use super::Store;
use crate::error::StoreError;
use crate::record_hash::{record_hash, v7, AgentRow, CallRow, RowsText};

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
/// with its endpoint and latency last: the record hash leaves them out, schema 7's hashed them.
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
    String,
    f64,
);

/// What a store holds of one run's society: the values its record hash is computed from.
pub(super) struct StoredRun {
    key: String,
    agents: Vec<(u32, String, String, bool)>,
    rows: (String, String, String),
    calls: Vec<StoredCall>,
    metrics: Vec<(String, f64)>,
}

impl StoredRun {
    fn agent_rows(&self) -> Vec<AgentRow<'_>> {
        self.agents
            .iter()
            .map(|(seat, policy, family, committed)| AgentRow { seat: *seat, policy, family, committed: *committed })
            .collect()
    }

    fn call_rows(&self) -> Vec<(CallRow<'_>, v7::Served<'_>)> {
        self.calls
            .iter()
            .map(|c| {
                let call = CallRow {
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
                };
                (call, v7::Served { endpoint: &c.16, latency_ms: c.17 })
            })
            .collect()
    }

    fn metric_rows(&self) -> Vec<(&str, f64)> {
        self.metrics.iter().map(|(n, v)| (n.as_str(), *v)).collect()
    }

    fn rows_text(&self) -> RowsText<'_> {
        RowsText { decisions: &self.rows.0, payoffs: &self.rows.1, interactions: &self.rows.2 }
    }

    /// The run's record hash ([`crate::record_hash`]).
    pub(super) fn hash(&self) -> String {
        let calls: Vec<CallRow> = self.call_rows().into_iter().map(|(c, _)| c).collect();
        record_hash(&self.key, &self.agent_rows(), self.rows_text(), &calls, &self.metric_rows())
    }

    /// The hash schema 7 gave the run ([`v7`]): for the upgrade from schema 7 only.
    pub(super) fn hash_v7(&self) -> String {
        v7::record_hash(&self.key, &self.agent_rows(), self.rows_text(), &self.call_rows(), &self.metric_rows())
    }
}

/// Calls `each(run_id, stored_hash, run)` for every stored run, in run order.
pub(super) fn each_stored(
    conn: &Connection,
    mut each: impl FnMut(i64, &str, &StoredRun) -> Result<(), rusqlite::Error>,
) -> Result<(), rusqlite::Error> {
    let runs: Vec<(i64, String, String)> = conn
        .prepare("SELECT run_id, run_key, record_hash FROM runs ORDER BY run_id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut agents = conn.prepare("SELECT seat, policy, family, committed FROM agents WHERE run_id = ?1")?;
    let mut rows = conn.prepare("SELECT decisions, payoffs, interactions FROM run_rows WHERE run_id = ?1")?;
    let mut calls = conn.prepare(
        "SELECT seat, slot, kind, attempt, round, role, model, served_id, messages_json, raw_reply,
                action, reason, parse_status, detail, prompt_tokens, completion_tokens, endpoint, latency_ms
         FROM transcripts WHERE run_id = ?1",
    )?;
    let mut metrics = conn.prepare("SELECT name, value FROM metrics WHERE run_id = ?1")?;
    for (run_id, key, stored) in runs {
        let agents: Vec<(u32, String, String, bool)> = agents
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let rows: (String, String, String) =
            rows.query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).or_else(|e| match e {
                // A run with no row of records recorded none.
                rusqlite::Error::QueryReturnedNoRows => Ok(("[]".into(), "[]".into(), "[]".into())),
                e => Err(e),
            })?;
        let calls: Vec<StoredCall> = calls
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
                    r.get(16)?,
                    r.get(17)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let metrics: Vec<(String, f64)> =
            metrics.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        each(run_id, &stored, &StoredRun { key, agents, rows, calls, metrics })?;
    }
    Ok(())
}

/// The runs of a schema-7 store that kept their stored hash through the upgrade: it was not
/// the hash of their stored values under schema 7's definition either, so they were altered
/// after they were written (or hashed by something other than an Agora build).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct KeptStale {
    /// Runs the upgrade read.
    pub(super) runs: u64,
    /// Runs whose hash was kept.
    pub(super) kept: u64,
    /// The keys of the first [`KeptStale::NAMED`] of them, in run order.
    pub(super) first: Vec<String>,
}

impl KeptStale {
    /// How many runs a warning names (`agora verify` names every one).
    pub(super) const NAMED: usize = 3;
}

/// Brings every run's record hash to this schema's ([`crate::record_hash`]), in one
/// transaction that also sets the store's version to `to`, so that no other process sees the
/// new hashes under the old version (and checks them against schema 7's definition again).
///
/// A store of schema 6 or earlier never had this kind of hash: each run's hash is recomputed
/// from what the store holds, so a run altered by hand before such an upgrade verifies after
/// it. A run of a schema-7 store is first checked against schema 7's definition
/// ([`crate::record_hash::v7`]): where its stored hash is the hash of its stored values under
/// that definition it is replaced by this schema's hash, and where it is not it is kept, stale,
/// so that `agora verify` names the run and `agora merge` refuses the store after the upgrade
/// as the build that wrote it would have before. Those runs are returned. A run whose stored
/// hash is this schema's hash of its values already is left as it is, whatever the schema.
pub(super) fn upgrade_hashes(conn: &Connection, from: i32, to: i32) -> Result<KeptStale, rusqlite::Error> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let mut kept = KeptStale::default();
        // Another process may have upgraded the store between our look and our lock.
        let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version >= to {
            return Ok(kept);
        }
        let mut update = conn.prepare("UPDATE runs SET record_hash = ?1 WHERE run_id = ?2")?;
        each_stored(conn, |run_id, stored, run| {
            kept.runs += 1;
            let hash = run.hash();
            if hash == stored {
                // Already this schema's hash: a build before this one set the version after
                // the hashes' transaction, so a store can hold them under version 7.
                return Ok(());
            }
            if from == 7 && run.hash_v7() != stored {
                kept.kept += 1;
                if kept.first.len() < KeptStale::NAMED {
                    kept.first.push(run.key.clone());
                }
                return Ok(());
            }
            update.execute(params![hash, run_id]).map(drop)
        })?;
        drop(update);
        conn.pragma_update(None, "user_version", to)?;
        Ok(kept)
    })();
    match result {
        Ok(kept) => conn.execute_batch("COMMIT").map(|()| kept),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl Store {
    /// Recomputes every stored run's record hash from what the store holds and lists the runs
    /// whose stored hash differs: a store nobody has altered verifies with no mismatch.
    pub fn verify(&self) -> Result<Verification, StoreError> {
        let mut v = Verification::default();
        each_stored(&self.conn, |_, stored, run| {
            v.runs += 1;
            let recomputed = run.hash();
            if stored != recomputed {
                v.mismatches.push(Mismatch { run_key: run.key.clone(), stored: stored.to_string(), recomputed });
            }
            Ok(())
        })
        .map_err(|source| StoreError::Sqlite { path: self.path.clone(), source })?;
        Ok(v)
    }

    /// Every stored run's key and the record hash schema 7 gave its stored values
    /// ([`crate::record_hash::v7`]), in run order: what a schema-7 build would have stored for
    /// them. For the upgrade from schema 7 and its tests; nothing is stored under this hash.
    pub fn schema_7_hashes(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut hashes = Vec::new();
        each_stored(&self.conn, |_, _, run| {
            hashes.push((run.key.clone(), run.hash_v7()));
            Ok(())
        })
        .map_err(|source| StoreError::Sqlite { path: self.path.clone(), source })?;
        Ok(hashes)
    }
}
