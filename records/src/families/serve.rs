//! The tables of `agora serve`, a session with people: participants (opaque id, the code's
//! hash, the pool id's keyed hash, consent, stage, seat, payoff, completion code), every answer
//! as it is given, every decision that timed out with the stand-in's play, and the societies
//! that have started. No name, address or pool id is ever stored.
//!
//! Versions: 1, participants, answers and starts; 2, `serve_timeouts` (a decision that timed
//! out is stored as played by the stand-in, so that a restart replays exactly the history
//! people saw). A store of version 1 has no timed-out decision on record; its sessions
//! resume as that build would have resumed them.

use std::collections::{HashMap, HashSet};

use agora_environments::Action;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

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

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Where a participant is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Shown the consent page.
    Consent,
    /// Agreed; shown the instructions and the comprehension questions.
    Instructions,
    /// Passed; waiting for a society to fill.
    Waiting,
    /// Seated in a society that plays.
    Playing,
    /// The society's run is stored.
    Done,
    /// Left without playing (declined consent, or failed the questions); the reason.
    Released(String),
}

impl Stage {
    /// The stage's name in the store.
    pub fn as_str(&self) -> &str {
        match self {
            Stage::Consent => "consent",
            Stage::Instructions => "instructions",
            Stage::Waiting => "waiting",
            Stage::Playing => "playing",
            Stage::Done => "done",
            Stage::Released(_) => "released",
        }
    }
}

/// One participant.
#[derive(Clone, Debug)]
pub struct Participant {
    /// Opaque id: the only name the records use.
    pub id: String,
    /// SHA-256 of the session code (the code itself is never stored).
    pub code_hash: String,
    /// Keyed hash (HMAC-SHA256) of a participant pool's id, where the link carried one.
    pub pool_hash: Option<String>,
    /// Unix seconds after which the code no longer works.
    pub expires: u64,
    /// The stage.
    pub stage: Stage,
    /// Wrong comprehension answers so far.
    pub tries: u32,
    /// (society, seat) once seated.
    pub seat: Option<(usize, usize)>,
    /// Points earned in the run.
    pub payoff: Option<f64>,
    /// The completion code shown at the end.
    pub completion: Option<String>,
}

/// A participant's answer to one decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Submitted {
    /// The action.
    pub action: Action,
    /// The form as submitted (JSON).
    pub raw: String,
    /// Milliseconds from the page being posted to the answer.
    pub response_ms: f64,
    /// The version of the page answered.
    pub page_version: String,
}

/// A decision whose time ran out: the stand-in played it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedOut {
    /// The stand-in's action, as played.
    pub action: Action,
    /// Milliseconds from the page being posted to the decision being taken back.
    pub latency_ms: f64,
    /// The version of the page the participant was shown and did not answer.
    pub page_version: String,
}

/// What became of a decision posted to a participant.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The participant answered.
    Answered(Submitted),
    /// The time ran out and the stand-in played.
    TimedOut(TimedOut),
}

impl Outcome {
    /// The version of the page the participant was shown.
    pub fn page_version(&self) -> &str {
        match self {
            Outcome::Answered(a) => &a.page_version,
            Outcome::TimedOut(t) => &t.page_version,
        }
    }
}

/// Writes a new participant.
pub fn insert(conn: &Connection, study: &str, p: &Participant) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO serve_participants (participant_id, code_hash, pool_hash, study, created_at, expires_at, stage)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![p.id, p.code_hash, p.pool_hash, study, now() as i64, p.expires as i64, p.stage.as_str()],
    )?;
    Ok(())
}

/// Writes a participant's stage, seat, tries, payoff and completion code.
pub fn update(conn: &Connection, p: &Participant, run_key: Option<&str>) -> rusqlite::Result<()> {
    let released = match &p.stage {
        Stage::Released(r) => Some(r.as_str()),
        _ => None,
    };
    conn.execute(
        "UPDATE serve_participants SET stage = ?2, released_reason = ?3, comprehension_tries = ?4,
             run_key = COALESCE(?5, run_key), seat = COALESCE(?6, seat), payoff = ?7, completion_code = ?8
         WHERE participant_id = ?1",
        params![
            p.id,
            p.stage.as_str(),
            released,
            p.tries,
            run_key,
            p.seat.map(|(_, s)| s as i64),
            p.payoff,
            p.completion
        ],
    )?;
    Ok(())
}

/// Records a participant's consent to the text with this SHA-256.
pub fn consent(conn: &Connection, id: &str, text_sha256: &str) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE serve_participants SET consent_at = ?2, consent_sha256 = ?3 WHERE participant_id = ?1",
        params![id, now() as i64, text_sha256],
    )?;
    Ok(())
}

/// A decision posted to a participant: the run (its key), the seat and the slot, and the
/// participant it was posted to.
#[derive(Clone, Copy, Debug)]
pub struct PostedDecision<'a> {
    /// The run's key.
    pub run_key: &'a str,
    /// The seat.
    pub seat: usize,
    /// The seat's decision slot.
    pub slot: u64,
    /// The participant the decision was posted to.
    pub participant: &'a str,
}

impl PostedDecision<'_> {
    /// Writes what became of the decision as a row of `table` (the decision, the participant,
    /// `rest` and the time now) unless `table` or `other` already holds the decision: whether
    /// it was written.
    fn record(&self, conn: &Connection, table: &str, other: &str, rest: &[&dyn ToSql]) -> rusqlite::Result<bool> {
        let (seat, slot, now) = (self.seat as i64, self.slot as i64, now() as i64);
        let mut values: Vec<&dyn ToSql> = vec![&self.run_key, &seat, &slot, &self.participant];
        values.extend(rest);
        values.push(&now);
        let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
        let n = conn.execute(
            &format!(
                "INSERT OR IGNORE INTO {table}
         SELECT {}
         WHERE NOT EXISTS (SELECT 1 FROM {other} WHERE run_key = ?1 AND seat = ?2 AND slot = ?3)",
                placeholders.join(", ")
            ),
            params_from_iter(values),
        )?;
        Ok(n == 1)
    }
}

/// Records an answer; false (and nothing written) when the decision already has an answer or
/// timed out.
pub fn answer(conn: &Connection, posted: PostedDecision<'_>, a: &Submitted) -> rusqlite::Result<bool> {
    posted.record(
        conn,
        "serve_answers",
        "serve_timeouts",
        &[&a.action.encode(), &a.raw, &a.response_ms, &a.page_version],
    )
}

/// Records a decision that timed out with the stand-in's play; false (and nothing written)
/// when the decision already has an answer or a timeout.
pub fn timeout(conn: &Connection, posted: PostedDecision<'_>, t: &TimedOut) -> rusqlite::Result<bool> {
    posted.record(conn, "serve_timeouts", "serve_answers", &[&t.action.encode(), &t.latency_ms, &t.page_version])
}

/// Records that a society's run has started: a restart plays it on with the seats it started
/// with, rather than opening its waiting room again.
pub fn started(conn: &Connection, run_key: &str) -> rusqlite::Result<()> {
    conn.execute("INSERT OR IGNORE INTO serve_starts VALUES (?1, ?2)", params![run_key, now() as i64])?;
    Ok(())
}

/// The run keys of the societies that have started.
pub fn load_started(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    crate::reads::first_column(conn, "SELECT run_key FROM serve_starts")
}

/// A decision of a run: (run key, seat, slot).
pub type DecisionKey = (String, usize, u64);

fn action_column(r: &rusqlite::Row<'_>, i: usize, name: &str) -> rusqlite::Result<Action> {
    let text: String = r.get(i)?;
    decode(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, name.to_string().into())
    })
}

fn decision_key(r: &rusqlite::Row<'_>) -> rusqlite::Result<DecisionKey> {
    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize, r.get::<_, i64>(2)? as u64))
}

/// What became of every decision posted so far (answers and timeouts), for a restart.
pub fn load_outcomes(conn: &Connection) -> rusqlite::Result<HashMap<DecisionKey, Outcome>> {
    let mut out = HashMap::new();
    let answers =
        outcomes(conn, "SELECT run_key, seat, slot, action, raw, response_ms, page_version FROM serve_answers", |r| {
            Ok(Outcome::Answered(Submitted {
                action: action_column(r, 3, "serve_answers.action")?,
                raw: r.get(4)?,
                response_ms: r.get(5)?,
                page_version: r.get(6)?,
            }))
        })?;
    for (k, v) in answers {
        out.insert(k, v);
    }
    let timeouts =
        outcomes(conn, "SELECT run_key, seat, slot, action, latency_ms, page_version FROM serve_timeouts", |r| {
            Ok(Outcome::TimedOut(TimedOut {
                action: action_column(r, 3, "serve_timeouts.action")?,
                latency_ms: r.get(4)?,
                page_version: r.get(5)?,
            }))
        })?;
    for (k, v) in timeouts {
        out.entry(k).or_insert(v);
    }
    Ok(out)
}

/// The decisions `sql` selects, each its key (the first three columns) and the outcome `read`
/// makes of the rest of its row, in the order read.
fn outcomes(
    conn: &Connection,
    sql: &str,
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<Outcome>,
) -> rusqlite::Result<Vec<(DecisionKey, Outcome)>> {
    let mut st = conn.prepare(sql)?;
    let rows = st.query_map([], |r| Ok((decision_key(r)?, read(r)?)))?;
    rows.collect()
}

/// A stored participant with the (run key, seat) they were given.
pub type Restored = (Participant, Option<(String, usize)>);

/// The stored participants of `study`, each with the (run key, seat) they were given; the
/// participant's own `seat` (society index, seat) is for the caller to set from it.
pub fn load_participants(conn: &Connection, study: &str) -> rusqlite::Result<Vec<Restored>> {
    let mut st = conn.prepare(
        "SELECT participant_id, code_hash, pool_hash, expires_at, stage, released_reason, comprehension_tries,
                run_key, seat, payoff, completion_code
         FROM serve_participants WHERE study = ?1 ORDER BY created_at, participant_id",
    )?;
    let rows = st.query_map([study], |r| {
        let stage: String = r.get(4)?;
        let stage = match stage.as_str() {
            "consent" => Stage::Consent,
            "instructions" => Stage::Instructions,
            "waiting" => Stage::Waiting,
            "playing" => Stage::Playing,
            "done" => Stage::Done,
            _ => Stage::Released(r.get::<_, Option<String>>(5)?.unwrap_or_default()),
        };
        let seat: Option<i64> = r.get(8)?;
        Ok((
            Participant {
                id: r.get(0)?,
                code_hash: r.get(1)?,
                pool_hash: r.get(2)?,
                expires: r.get::<_, i64>(3)? as u64,
                stage,
                tries: r.get(6)?,
                seat: None,
                payoff: r.get(9)?,
                completion: r.get(10)?,
            },
            r.get::<_, Option<String>>(7)?.zip(seat.map(|s| s as usize)),
        ))
    })?;
    rows.collect()
}

/// The points each seat of a stored run earned.
pub fn payoffs(conn: &Connection, run_key: &str) -> rusqlite::Result<HashMap<usize, f64>> {
    let run: Option<i64> =
        conn.query_row("SELECT run_id FROM runs WHERE run_key = ?1", [run_key], |r| r.get(0)).optional()?;
    let Some(run) = run else { return Ok(HashMap::new()) };
    let mut st = conn.prepare("SELECT seat, SUM(payoff) FROM payoffs WHERE run_id = ?1 GROUP BY seat")?;
    let rows = st.query_map([run], |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, f64>(1)?)))?;
    rows.collect()
}

/// An action from its stored form (`c1`, `a17`, `[0,3,0]`).
pub fn decode(s: &str) -> Option<Action> {
    if let Some(i) = s.strip_prefix('c') {
        return i.parse().ok().map(Action::Choice);
    }
    if let Some(a) = s.strip_prefix('a') {
        return a.parse().ok().map(Action::Amount);
    }
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Action::Allocation(Vec::new()));
    }
    inner.split(',').map(|x| x.parse().ok()).collect::<Option<Vec<i64>>>().map(Action::Allocation)
}

/// Gives a participant a new code (a lost code reissued for the same pool id): its hash replaces
/// the old one.
pub fn set_code_hash(conn: &Connection, participant: &str, code_hash: &str) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE serve_participants SET code_hash = ?1 WHERE participant_id = ?2",
        params![code_hash, participant],
    )?;
    Ok(())
}

/// One participant as the admin export lists them: no code, no pool id.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Exported {
    /// The opaque id.
    pub participant: String,
    /// The stage reached.
    pub stage: String,
    /// When consent was given (Unix seconds).
    pub consent_at: Option<i64>,
    /// Comprehension questions tried.
    pub comprehension_tries: i64,
    /// The run they were seated in.
    pub run_key: Option<String>,
    /// Their seat in it.
    pub seat: Option<i64>,
    /// Their points.
    pub payoff: Option<f64>,
    /// Their completion code.
    pub completion_code: Option<String>,
}

/// The participants of `study` in the order they joined, for the admin export.
pub fn exported(conn: &Connection, study: &str) -> rusqlite::Result<Vec<Exported>> {
    let mut st = conn.prepare(
        "SELECT participant_id AS participant, stage, consent_at, comprehension_tries, run_key, seat, payoff, completion_code
         FROM serve_participants WHERE study = ?1 ORDER BY created_at, participant_id",
    )?;
    crate::rows::by_name(&mut st, [study])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_decode_what_encode_writes() {
        for a in [Action::Choice(3), Action::Amount(-2), Action::Amount(17), Action::Allocation(vec![0, 3, 10])] {
            assert_eq!(decode(&a.encode()), Some(a));
        }
        assert_eq!(decode("x1"), None);
        assert_eq!(decode("[1,x]"), None);
    }

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
