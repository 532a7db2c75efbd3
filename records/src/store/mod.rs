//! The embedded run store: one SQLite file in WAL mode.
//!
//! A run is written in one transaction when it completes, so a store never holds half a run;
//! an interrupted study resumes by skipping the run keys already present. A store is opened one
//! way, through SQLite only (`store/open.rs`): [`Store::open`] to write,
//! [`Store::open_read`] to read; a command that writes runs holds the store's [`Claim`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

pub use crate::error::StoreError;
use crate::request_parts;
use crate::run_records::RunRecords;

mod cache;
mod checkpoint;
mod claim;
mod conflict;
mod counts;
pub mod deposit;
mod merge;
mod open;
mod upgrade;
mod verify;

pub use claim::Claim;
pub use conflict::Conflict;
pub use counts::transcript_counts;

pub use verify::{Mismatch, Verification};

pub use cache::{SqliteCache, FLUSH_AFTER, FLUSH_AT};
pub use merge::{MergeReport, MergeSource};

/// Bytes a page of a store this build creates (an existing store keeps its own).
pub const PAGE_SIZE: i64 = 8192;

/// `PRAGMA application_id` of an Agora store ("AGOR").
pub const APPLICATION_ID: i32 = 0x4147_4f52;
/// Version of the table layout and of the record hash's definition (8: a model call's latency
/// and endpoint are kept beside the record, out of its hash; 9: the deposits a plan was frozen
/// in and each run's provenance, [`deposit`]).
pub const SCHEMA_VERSION: i32 = 9;

/// The columns of what a model call came to, in order: what was made of the reply, the call's
/// latency and the tokens reported. A fragment of the DDL of `transcript_calls` and of the
/// audit's replicates.
macro_rules! call_outcome_columns {
    () => {
        "    action TEXT,
    reason TEXT,
    parse_status TEXT NOT NULL,
    detail TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
"
    };
}
pub(crate) use call_outcome_columns;

const SCHEMA: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS declarations (
    environment TEXT PRIMARY KEY,
    declaration_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS studies (
    study TEXT NOT NULL,
    plan_hash TEXT NOT NULL,
    master_seed TEXT NOT NULL,
    runs INTEGER NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (study, plan_hash)
);
CREATE TABLE IF NOT EXISTS models (
    name TEXT NOT NULL,
    family TEXT NOT NULL,
    served_id TEXT NOT NULL,
    endpoints TEXT NOT NULL,
    quantisation TEXT NOT NULL,
    notes TEXT NOT NULL,
    structured TEXT NOT NULL,
    temperature REAL NOT NULL,
    max_tokens INTEGER NOT NULL,
    PRIMARY KEY (name, served_id, endpoints)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY,
    run_key TEXT NOT NULL UNIQUE,
    study TEXT NOT NULL,
    block TEXT NOT NULL,
    environment TEXT NOT NULL,
    arm TEXT NOT NULL,
    variant TEXT NOT NULL,
    cell TEXT NOT NULL,
    level TEXT NOT NULL,
    roster TEXT NOT NULL,
    family TEXT NOT NULL,
    sweep_name TEXT,
    sweep_value REAL,
    run_index INTEGER NOT NULL,
    seed TEXT NOT NULL,
    population INTEGER NOT NULL,
    committed INTEGER NOT NULL,
    steps INTEGER NOT NULL,
    record_hash TEXT NOT NULL,
    spec_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agents (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    seat INTEGER NOT NULL,
    policy TEXT NOT NULL,
    family TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (run_id, seat)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_rows (
    run_id INTEGER PRIMARY KEY REFERENCES runs(run_id),
    decisions TEXT NOT NULL,
    payoffs TEXT NOT NULL,
    interactions TEXT NOT NULL
);
CREATE VIEW IF NOT EXISTS decisions AS
    SELECT r.run_id AS run_id,
           CAST(json_extract(j.value, '$[0]') AS INTEGER) AS step,
           CAST(json_extract(j.value, '$[1]') AS INTEGER) AS round,
           CAST(json_extract(j.value, '$[2]') AS INTEGER) AS seat,
           json_extract(j.value, '$[3]') AS role,
           json_extract(j.value, '$[4]') AS action,
           CAST(json_extract(j.value, '$[5]') AS REAL) AS value,
           CAST(json_extract(j.value, '$[6]') AS REAL) AS scale,
           CAST(json_extract(j.value, '$[7]') AS REAL) AS context
    FROM run_rows r, json_each(r.decisions) j;
CREATE VIEW IF NOT EXISTS payoffs AS
    SELECT r.run_id AS run_id,
           CAST(json_extract(j.value, '$[0]') AS INTEGER) AS step,
           CAST(json_extract(j.value, '$[1]') AS INTEGER) AS round,
           CAST(json_extract(j.value, '$[2]') AS INTEGER) AS seat,
           CAST(json_extract(j.value, '$[3]') AS REAL) AS payoff
    FROM run_rows r, json_each(r.payoffs) j;
CREATE TABLE IF NOT EXISTS prompt_parts (
    part_id INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS transcript_calls (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    kind TEXT NOT NULL,
    round INTEGER NOT NULL,
    role TEXT NOT NULL,
    model TEXT NOT NULL,
    served_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    request TEXT NOT NULL,
    raw_reply TEXT NOT NULL,
",
    call_outcome_columns!(),
    "    PRIMARY KEY (run_id, seat, slot, kind, attempt)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS transcripts AS
    SELECT c.run_id, c.seat, c.slot, c.attempt, c.kind, c.round, c.role, c.model, c.served_id, c.endpoint,
           coalesce((SELECT group_concat(x, '') FROM (
               SELECT coalesce(p.text, j.value) AS x FROM json_each(c.request) j
               LEFT JOIN prompt_parts p ON j.type = 'integer' AND p.part_id = j.value ORDER BY j.key)), '') AS messages_json,
           c.raw_reply, c.action, c.reason, c.parse_status, c.detail, c.latency_ms, c.prompt_tokens, c.completion_tokens
    FROM transcript_calls c;
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    reply_json TEXT NOT NULL
);
CREATE VIEW IF NOT EXISTS interactions AS
    SELECT r.run_id AS run_id,
           CAST(json_extract(j.value, '$[0]') AS INTEGER) AS t,
           CAST(json_extract(j.value, '$[1]') AS INTEGER) AS a,
           CAST(json_extract(j.value, '$[2]') AS INTEGER) AS b,
           CAST(json_extract(j.value, '$[3]') AS INTEGER) AS name_a,
           CAST(json_extract(j.value, '$[4]') AS INTEGER) AS name_b,
           CAST(json_extract(j.value, '$[5]') AS INTEGER) AS matched
    FROM run_rows r, json_each(r.interactions) j;
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deposits (
    hash TEXT PRIMARY KEY,
    study TEXT NOT NULL,
    created TEXT NOT NULL,
    doi TEXT,
    files TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_provenance (
    run_key TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    deposit TEXT,
    deviation TEXT
);
"
);

/// The declared types of the views' computed columns, as the tables they replace declared
/// them (SQLite reports no type for a view column that is an expression).
pub const VIEW_COLUMN_TYPES: &[(&str, &str, &str)] = &[
    ("decisions", "step", "INTEGER"),
    ("decisions", "round", "INTEGER"),
    ("decisions", "seat", "INTEGER"),
    ("decisions", "role", "TEXT"),
    ("decisions", "action", "TEXT"),
    ("decisions", "value", "REAL"),
    ("decisions", "scale", "REAL"),
    ("decisions", "context", "REAL"),
    ("payoffs", "step", "INTEGER"),
    ("payoffs", "round", "INTEGER"),
    ("payoffs", "seat", "INTEGER"),
    ("payoffs", "payoff", "REAL"),
    ("interactions", "t", "INTEGER"),
    ("interactions", "a", "INTEGER"),
    ("interactions", "b", "INTEGER"),
    ("interactions", "name_a", "INTEGER"),
    ("interactions", "name_b", "INTEGER"),
    ("interactions", "matched", "INTEGER"),
    ("transcripts", "messages_json", "TEXT"),
];

/// The tables an export writes, in order (`transcripts` is the view that joins each request
/// back from its parts, so an export holds every message in full).
pub const TABLES: [&str; 9] =
    ["studies", "models", "runs", "agents", "decisions", "payoffs", "interactions", "metrics", "transcripts"];

/// What the store keeps of a study a run of `agora run` worked from.
#[derive(Clone, Debug)]
pub struct StudyRecord<'a> {
    /// The study's name.
    pub study: &'a str,
    /// Hash of every run key of the plan, in order.
    pub plan_hash: String,
    /// The study's master seed.
    pub master_seed: u64,
    /// Runs in the plan.
    pub runs: usize,
    /// The language models its rosters use, with their serving facts.
    pub models: &'a [agora_agents::llm::ModelSpec],
}

/// A finished run with its encoded rows (and its record hash, unless the thread that writes it
/// is to compute it), ready to be written.
pub struct PreparedRun {
    /// The run's records; their decisions, payoffs and interactions are let go of once hashed.
    rec: RunRecords,
    decisions: usize,
    /// `None` until hashed.
    hash: Option<String>,
    rows: crate::run_rows::RowValues,
}

impl PreparedRun {
    /// Hashes and encodes a run's records (the work of a commit that does not touch SQLite),
    /// on the thread that played the run; the decisions, payoffs and interactions are let go
    /// of once hashed, their memory kept for the runs that follow (whichever thread plays them).
    pub fn new(rec: RunRecords) -> Result<PreparedRun, StoreError> {
        let mut run = PreparedRun::unhashed(rec)?;
        run.parts();
        Ok(run)
    }

    /// Encodes a run's records, leaving the record hash to the thread that writes it (where
    /// one thread plays and another writes: the two then share a run's work more evenly).
    pub fn unhashed(rec: RunRecords) -> Result<PreparedRun, StoreError> {
        let rows = crate::run_rows::encode(&rec.decisions, &rec.payoffs, &rec.interactions)
            .map_err(|message| StoreError::Unstorable { run: rec.key.clone(), message })?;
        let decisions = rec.decisions.len();
        Ok(PreparedRun { rec, decisions, hash: None, rows })
    }

    /// The records, the record hash and the rows, the hash computed first if it is not yet
    /// (the decisions, payoffs and interactions are then let go of, their memory kept for the
    /// runs that follow).
    fn parts(&mut self) -> (&RunRecords, &str, &crate::run_rows::RowValues) {
        let PreparedRun { rec, hash, rows, .. } = self;
        let hash = hash.get_or_insert_with(|| {
            let hash = crate::record_hash::with_rows(rec, rows);
            rec.let_go_of_lists();
            hash
        });
        (rec, hash, rows)
    }

    /// The run's key.
    pub fn key(&self) -> &str {
        &self.rec.key
    }

    /// Decisions the run recorded.
    pub fn decisions(&self) -> usize {
        self.decisions
    }
}

/// An open store.
pub struct Store {
    /// Declared first, so that it stops before the connection closes (which then checkpoints
    /// what is left, as the last connection to a store does).
    checkpoints: checkpoint::Checkpointer,
    conn: Connection,
    path: PathBuf,
    /// What other SQLite readers open ([`Store::reader_path`]).
    reader: PathBuf,
    /// Whether the connection may write.
    write: bool,
    parts: Parts,
    /// Environments whose declaration this writer has stored (see [`declare`]).
    declared: HashSet<agora_environments::EnvKind>,
}

/// Writes prompt parts, each once per store; the ids of the parts met so far are kept in
/// memory (forgotten whenever a transaction that may have written some fails).
/// The map is keyed by the part's text: a part met before is found without hashing it with
/// SHA-256 (the content hash is computed only for a part this writer has not met).
#[derive(Default)]
struct Parts {
    ids: HashMap<Box<str>, i64>,
}

/// Ids remembered before the map is emptied (parts are lines of prompts: about 30 MB).
const PARTS_REMEMBERED: usize = 1 << 18;

impl Parts {
    /// The id of the part with this text, written if the store lacks it.
    fn id(&mut self, conn: &Connection, text: &str) -> Result<i64, rusqlite::Error> {
        if let Some(id) = self.ids.get(text) {
            return Ok(*id);
        }
        let h = request_parts::part_hash(text);
        let found: Option<(i64, String)> = conn
            .prepare_cached("SELECT part_id, text FROM prompt_parts WHERE hash = ?1")?
            .query_row([&h[..]], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let id = match found {
            Some((id, stored)) if stored == text => id,
            Some((id, _)) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    format!("prompt part {id} has the content hash of a different text").into(),
                ))
            }
            None => {
                conn.prepare_cached("INSERT INTO prompt_parts (hash, text) VALUES (?1, ?2)")?
                    .execute(params![&h[..], text])?;
                conn.last_insert_rowid()
            }
        };
        if self.ids.len() >= PARTS_REMEMBERED {
            self.ids.clear();
        }
        self.ids.insert(text.into(), id);
        Ok(id)
    }

    /// The list of parts a transcript row stores for a request.
    fn list(&mut self, conn: &Connection, request_json: &str) -> Result<String, rusqlite::Error> {
        request_parts::encode_request(request_json, |t| self.id(conn, t))
    }
}

/// Records what a game declares about its outcomes ([`agora_environments::Declaration`]: its
/// metrics, headline outcomes, canonical human effect, C3 reading and action indicators) with
/// the runs of its environment, so that the analysis reads them from the store. The first
/// declaration of an environment stands (`INSERT OR IGNORE`), as for the studies and models.
pub(crate) fn declare(conn: &Connection, kind: agora_environments::EnvKind) -> Result<(), rusqlite::Error> {
    let json = serde_json::to_string(&agora_environments::declaration(kind))
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    conn.prepare_cached("INSERT OR IGNORE INTO declarations (environment, declaration_json) VALUES (?1, ?2)")?
        .execute(params![kind.as_str(), json])?;
    Ok(())
}

impl Store {
    /// Opens a store to write, creating it if the file does not exist (and making an empty file
    /// a store). A file that exists but is not an intact Agora store is refused with
    /// [`StoreError::Corrupt`], never silently used; a store an earlier build wrote is upgraded.
    /// Every check is SQLite's, on the connection kept (`store/open.rs`).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let checked = open::open_write(path)?;
        Ok(Store::with(checked, path, true))
    }

    /// Opens an existing store to read, on a connection that cannot write: a missing file
    /// ([`StoreError::Missing`]), an empty one ([`StoreError::Empty`], left as it is) and a
    /// file that is not an intact Agora store are refused. A store in a directory this process
    /// cannot write opens too ([`Store::reader_path`] then names it for other readers).
    pub fn open_read(path: &Path) -> Result<Store, StoreError> {
        let checked = open::open_read(path)?;
        Ok(Store::with(checked, path, false))
    }

    fn with(checked: open::Checked, path: &Path, write: bool) -> Store {
        Store {
            checkpoints: checkpoint::Checkpointer::new(path),
            conn: checked.conn,
            path: path.to_path_buf(),
            reader: checked.name,
            write,
            parts: Parts::default(),
            declared: HashSet::new(),
        }
    }

    /// What another SQLite reader of this store opens (an analysis, a report): the path, or,
    /// for a store read in a directory this process cannot write, a `file:` URI that opens it
    /// read-only and immutable.
    pub fn reader_path(&self) -> &Path {
        &self.reader
    }

    /// Another connection to this store, with the store's access (read or write), for code
    /// that keeps tables of its own beside the runs: no check is repeated, and no file is
    /// opened but through SQLite.
    pub fn connect(&self) -> Result<Connection, StoreError> {
        open::reconnect(&self.reader, &self.path, self.write)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying connection, for readers.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// Keys of every run already stored.
    pub fn completed_keys(&self) -> Result<HashSet<String>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT run_key FROM runs").map_err(|e| self.sql(e))?;
        let keys = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.sql(e))?;
        keys.collect::<Result<HashSet<_>, _>>().map_err(|e| self.sql(e))
    }

    /// Notes the study and plan a run of `agora run` worked from.
    pub fn record_study(&mut self, study: &StudyRecord<'_>, source: &str) -> Result<(), StoreError> {
        let plan = study;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO studies (study, plan_hash, master_seed, runs, source) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![plan.study, plan.plan_hash, plan.master_seed.to_string(), plan.runs as i64, source],
            )
            .map_err(|e| self.sql(e))?;
        // The model declarations with their serving facts (never an API key: only the name of
        // the variable that holds it is in a declaration, and it is not stored).
        for m in plan.models {
            self.conn
                .execute(
                    "INSERT OR IGNORE INTO models (name, family, served_id, endpoints, quantisation, notes, structured,
                        temperature, max_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        m.name,
                        m.family,
                        m.served_id,
                        m.endpoints.join(" "),
                        m.quantisation,
                        m.notes,
                        format!("{:?}", m.structured),
                        m.temperature,
                        m.max_tokens
                    ],
                )
                .map_err(|e| self.sql(e))?;
        }
        Ok(())
    }

    /// The source a study was recorded with ([`Store::record_study`]), or `None` when the store
    /// holds no such study.
    pub fn study_source(&self, study: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT source FROM studies WHERE study = ?1", [study], |r| r.get::<_, String>(0))
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Writes one completed run, encoded beforehand ([`PreparedRun::new`] or
    /// [`PreparedRun::unhashed`], on the thread that played it), in a single transaction,
    /// hashing it first if it is not yet hashed. A run key already present is left as it is
    /// (the run is deterministic, so the records would be the same).
    pub fn commit_prepared(&mut self, run: &mut PreparedRun) -> Result<bool, StoreError> {
        let (rec, hash, rows) = run.parts();
        self.commit_encoded(rec, hash, rows)
    }

    fn commit_encoded(
        &mut self,
        rec: &RunRecords,
        hash: &str,
        rows: &crate::run_rows::RowValues,
    ) -> Result<bool, StoreError> {
        let result = self.commit_run_once(rec, hash, rows);
        if result.is_err() {
            self.parts.ids.clear();
        }
        result
    }

    fn commit_run_once(
        &mut self,
        rec: &RunRecords,
        hash: &str,
        rows: &crate::run_rows::RowValues,
    ) -> Result<bool, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        // Immediate: take the write lock up front. A deferred transaction that reads first
        // fails at once (SQLITE_BUSY, no waiting) when the reply cache's connection wrote in
        // between, which happens when replies and commits interleave.
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM runs WHERE run_key = ?1)")
            .and_then(|mut st| st.query_row([&rec.key], |r| r.get(0)))
            .map_err(sql)?;
        if exists {
            return Ok(false);
        }
        let s = &rec.spec;
        let (sweep_name, sweep_value) = s.sweep_columns();
        tx.prepare_cached(
            "INSERT INTO runs (run_key, study, block, environment, arm, variant, cell, level, roster, family,
                               sweep_name, sweep_value, run_index, seed, population, committed, steps, record_hash, spec_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )
        .and_then(|mut st| {
            st.execute(params![
                rec.key,
                s.study,
                s.block,
                s.environment.kind().as_str(),
                s.arm(),
                s.variant.as_str(),
                s.cell,
                s.level.as_str(),
                s.roster,
                s.family,
                sweep_name,
                sweep_value,
                s.run_index,
                s.seed.to_string(),
                s.seats.len() as i64,
                s.committed.len() as i64,
                rec.steps,
                hash,
                s.canonical_json(),
            ])
        })
        .map_err(sql)?;
        let run_id = tx.last_insert_rowid();
        let kind = s.environment.kind();
        let declares = !self.declared.contains(&kind);
        if declares {
            declare(&tx, kind).map_err(sql)?;
        }
        {
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO agents (run_id, seat, policy, family, committed) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql)?;
            for a in &rec.agents {
                st.execute(params![run_id, a.seat, a.policy, a.family, a.committed]).map_err(sql)?;
            }
            tx.prepare_cached(
                "INSERT INTO run_rows (run_id, decisions, payoffs, interactions) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(sql)?
            .execute(params![run_id, rows.decisions, rows.payoffs, rows.interactions])
            .map_err(sql)?;
            let mut st =
                tx.prepare_cached("INSERT INTO metrics (run_id, name, value) VALUES (?1, ?2, ?3)").map_err(sql)?;
            for (name, value) in &rec.metrics {
                st.execute(params![run_id, name, value]).map_err(sql)?;
            }
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO transcript_calls (run_id, seat, slot, attempt, kind, round, role, model, served_id, endpoint,
                        request, raw_reply, action, reason, parse_status, detail, latency_ms, prompt_tokens,
                        completion_tokens)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
                )
                .map_err(sql)?;
            for t in &rec.transcripts {
                let request = self.parts.list(&tx, &t.messages_json).map_err(sql)?;
                st.execute(params![
                    run_id,
                    t.seat,
                    t.slot as i64,
                    t.attempt,
                    t.kind,
                    t.round,
                    t.role,
                    t.model,
                    t.served_id,
                    t.endpoint,
                    request,
                    t.raw_reply,
                    t.action,
                    t.reason,
                    t.parse_status,
                    t.detail,
                    t.latency_ms,
                    t.prompt_tokens.map(|x| x as i64),
                    t.completion_tokens.map(|x| x as i64)
                ])
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        if declares {
            self.declared.insert(kind);
        }
        let written = rows.decisions.len()
            + rows.payoffs.len()
            + rows.interactions.len()
            + rec.transcripts.iter().map(|t| t.messages_json.len() + t.raw_reply.len()).sum::<usize>();
        self.checkpoints.wrote(&self.conn, written as u64);
        Ok(true)
    }

    /// One digest of every stored run's record hash, in run-key order: two stores with the same
    /// runs and the same records give the same digest, whatever order the runs were written in.
    pub fn records_digest(&self) -> Result<String, StoreError> {
        let mut stmt =
            self.conn.prepare("SELECT run_key, record_hash FROM runs ORDER BY run_key").map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok(format!("{}:{}", r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(crate::seed::hex_digest(rows.join("\n").as_bytes()))
    }

    /// Number of stored runs.
    pub fn run_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.sql(e))
    }
}
