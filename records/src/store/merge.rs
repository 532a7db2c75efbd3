//! Combining stores: the shards of a plan run on several machines.
//!
//! A source is verified before any of its rows is taken ([`MergeSource::verify`]): every run's
//! record hash is recomputed from what the source holds, and a source with a run whose stored
//! hash is not the hash of its stored values is refused. Without that, a run altered in a
//! source after it was written would be copied under its stale hash, or, where the target
//! holds the run already, counted as already present (issue 40).

use std::path::{Path, PathBuf};

use super::Store;
use crate::error::StoreError;

/// What a merge did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Runs copied in from the other store.
    pub added: u64,
    /// Runs of the other store this one already held with the same records.
    pub already_present: u64,
}

/// A store to merge from, each of whose runs hashes to its stored record hash.
#[derive(Clone, Debug)]
pub struct MergeSource {
    /// The path given.
    path: PathBuf,
    /// What SQLite opens to read it ([`Store::reader_path`]).
    reader: PathBuf,
}

impl MergeSource {
    /// Opens the store at `path` to read and recomputes every run's record hash from what it
    /// holds ([`Store::verify`]); a store with a run whose stored hash differs is refused with
    /// [`StoreError::Corrupt`], naming the file and the first such run. Nothing is written,
    /// except that a store of an earlier schema is upgraded first, as any reader upgrades it.
    pub fn verify(path: &Path) -> Result<MergeSource, StoreError> {
        let store = Store::open_read(path)?;
        let v = store.verify()?;
        if let Some(m) = v.mismatches.first() {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                message: format!(
                    "run {}: its stored record hash is not the hash of its stored values (the run was altered \
                     after it was written; {} of {} runs differ, `agora verify --store {}` names each); \
                     nothing was merged",
                    m.run_key,
                    v.mismatches.len(),
                    v.runs,
                    path.display()
                ),
            });
        }
        Ok(MergeSource { path: path.to_path_buf(), reader: store.reader_path().to_path_buf() })
    }

    /// The path given.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Store {
    /// Verifies the store at `other` ([`MergeSource::verify`]) and merges it
    /// ([`Store::merge_verified`]).
    pub fn merge_from(&mut self, other: &Path) -> Result<MergeReport, StoreError> {
        let source = MergeSource::verify(other)?;
        self.merge_verified(&source)
    }

    /// Copies into this store every run of a verified source whose key it lacks, with all its
    /// rows, the studies table and the reply cache. A run key present in both with different
    /// records is refused: the same key must always record the same thing.
    pub fn merge_verified(&mut self, source: &MergeSource) -> Result<MergeReport, StoreError> {
        // The source was opened as a reader opens it (checked to be an intact Agora store of
        // this schema; a store in a read-only directory is attached immutable).
        let other = source.path.as_path();
        let source = source.reader.as_path();
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let conn = &mut self.conn;
        conn.execute("ATTACH DATABASE ?1 AS src", [source.to_string_lossy().as_ref()]).map_err(sql)?;
        let result = (|| -> Result<MergeReport, StoreError> {
            let conflict: Option<String> = conn
                .query_row(
                    "SELECT s.run_key FROM src.runs s JOIN main.runs m USING (run_key) WHERE s.record_hash <> m.record_hash LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .ok();
            if let Some(key) = conflict {
                return Err(StoreError::Corrupt {
                    path: other.to_path_buf(),
                    message: format!("run {key} is in both stores with different records"),
                });
            }
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
            let present: i64 = tx
                .query_row("SELECT COUNT(*) FROM src.runs WHERE run_key IN (SELECT run_key FROM main.runs)", [], |r| {
                    r.get(0)
                })
                .map_err(sql)?;
            tx.execute_batch(
                "CREATE TEMP TABLE merge_new AS SELECT run_id AS old, run_key FROM src.runs
                     WHERE run_key NOT IN (SELECT run_key FROM main.runs) ORDER BY run_id;
                 INSERT INTO main.runs (run_key, study, block, environment, arm, variant, cell, level, roster, family,
                        sweep_name, sweep_value, run_index, seed, population, committed, steps, record_hash, spec_json)
                     SELECT run_key, study, block, environment, arm, variant, cell, level, roster, family,
                        sweep_name, sweep_value, run_index, seed, population, committed, steps, record_hash, spec_json
                     FROM src.runs WHERE run_id IN (SELECT old FROM merge_new) ORDER BY run_id;
                 CREATE TEMP TABLE merge_map AS SELECT n.old AS old, m.run_id AS new FROM merge_new n JOIN main.runs m USING (run_key);
                 INSERT INTO main.agents SELECT p.new, a.seat, a.policy, a.family, a.committed
                     FROM src.agents a JOIN merge_map p ON a.run_id = p.old;
                 INSERT INTO main.run_rows SELECT p.new, x.decisions, x.payoffs, x.interactions
                     FROM src.run_rows x JOIN merge_map p ON x.run_id = p.old;
                 INSERT INTO main.metrics SELECT p.new, x.name, x.value
                     FROM src.metrics x JOIN merge_map p ON x.run_id = p.old;
                 INSERT OR IGNORE INTO main.prompt_parts (hash, text) SELECT hash, text FROM src.prompt_parts ORDER BY part_id;
                 CREATE TEMP TABLE merge_parts AS
                     SELECT s.part_id AS old, m.part_id AS new FROM src.prompt_parts s JOIN main.prompt_parts m USING (hash);
                 INSERT INTO main.transcript_calls SELECT p.new, t.seat, t.slot, t.attempt, t.kind, t.round, t.role, t.model,
                        t.served_id, t.endpoint,
                        (SELECT json_group_array(x) FROM (
                            SELECT CASE WHEN j.type = 'integer' THEN (SELECT q.new FROM merge_parts q WHERE q.old = j.value)
                                   ELSE j.value END AS x
                            FROM json_each(t.request) j ORDER BY j.key)),
                        t.raw_reply, t.action, t.reason, t.parse_status, t.detail,
                        t.latency_ms, t.prompt_tokens, t.completion_tokens
                     FROM src.transcript_calls t JOIN merge_map p ON t.run_id = p.old;
                 INSERT OR IGNORE INTO main.declarations SELECT * FROM src.declarations;
                 INSERT OR IGNORE INTO main.studies SELECT * FROM src.studies;
                 INSERT OR IGNORE INTO main.models SELECT * FROM src.models;
                 INSERT OR IGNORE INTO main.llm_cache SELECT * FROM src.llm_cache;",
            )
            .map_err(sql)?;
            let added: i64 = tx.query_row("SELECT COUNT(*) FROM merge_new", [], |r| r.get(0)).map_err(sql)?;
            tx.execute_batch("DROP TABLE temp.merge_new; DROP TABLE temp.merge_map; DROP TABLE temp.merge_parts;")
                .map_err(sql)?;
            tx.commit().map_err(sql)?;
            // What SQLite's automatic checkpoint would do after so large a commit (the store's
            // connection leaves checkpoints to a thread once it has written runs).
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            Ok(MergeReport { added: added as u64, already_present: present as u64 })
        })();
        let detach = conn.execute("DETACH DATABASE src", []).map_err(sql);
        let report = result?;
        detach?;
        Ok(report)
    }
}
