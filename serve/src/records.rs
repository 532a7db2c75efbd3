//! The session's own tables in the store, beside the runs: participants (opaque id, the code's
//! hash, the pool id's keyed hash, consent, stage, seat, payoff, completion code), every answer
//! as it is given, every decision that timed out with the stand-in's play, and the societies
//! that have started. A restart reads them back to replay each unfinished society exactly as
//! its participants saw it. No name, address or pool id is ever stored; deleting a
//! participant's rows is described in the docs chapter "Sessions with people".

use std::collections::{HashMap, HashSet};

use agora_environments::Action;
use rusqlite::{params, Connection, OptionalExtension};

use crate::answer::{Outcome, Submitted, TimedOut};
use crate::participant::{Participant, Stage};

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A connection for the session's writes, made with the tables, from the store opened (and
/// checked) by [`agora_engine::Store::open`]: the store file is opened through SQLite alone.
pub fn open(store: &agora_engine::Store) -> Result<Connection, crate::ServeError> {
    let conn = store.connect()?;
    agora_records::families::ensure(&conn, &agora_records::families::SERVE)?;
    Ok(conn)
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

/// Records an answer; false (and nothing written) when the decision already has an answer or
/// timed out.
pub fn answer(
    conn: &Connection,
    run_key: &str,
    seat: usize,
    slot: u64,
    participant: &str,
    a: &Submitted,
) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "INSERT OR IGNORE INTO serve_answers
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
         WHERE NOT EXISTS (SELECT 1 FROM serve_timeouts WHERE run_key = ?1 AND seat = ?2 AND slot = ?3)",
        params![
            run_key,
            seat as i64,
            slot as i64,
            participant,
            a.action.encode(),
            a.raw,
            a.response_ms,
            a.page_version,
            now() as i64
        ],
    )?;
    Ok(n == 1)
}

/// Records a decision that timed out with the stand-in's play; false (and nothing written)
/// when the decision already has an answer or a timeout.
pub fn timeout(
    conn: &Connection,
    run_key: &str,
    seat: usize,
    slot: u64,
    participant: &str,
    t: &TimedOut,
) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "INSERT OR IGNORE INTO serve_timeouts
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
         WHERE NOT EXISTS (SELECT 1 FROM serve_answers WHERE run_key = ?1 AND seat = ?2 AND slot = ?3)",
        params![
            run_key,
            seat as i64,
            slot as i64,
            participant,
            t.action.encode(),
            t.latency_ms,
            t.page_version,
            now() as i64
        ],
    )?;
    Ok(n == 1)
}

/// Records that a society's run has started: a restart plays it on with the seats it started
/// with, rather than opening its waiting room again.
pub fn started(conn: &Connection, run_key: &str) -> rusqlite::Result<()> {
    conn.execute("INSERT OR IGNORE INTO serve_starts VALUES (?1, ?2)", params![run_key, now() as i64])?;
    Ok(())
}

/// The run keys of the societies that have started.
pub fn load_started(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    let mut st = conn.prepare("SELECT run_key FROM serve_starts")?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
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
    let mut st =
        conn.prepare("SELECT run_key, seat, slot, action, raw, response_ms, page_version FROM serve_answers")?;
    let answers = st.query_map([], |r| {
        Ok((
            decision_key(r)?,
            Outcome::Answered(Submitted {
                action: action_column(r, 3, "serve_answers.action")?,
                raw: r.get(4)?,
                response_ms: r.get(5)?,
                page_version: r.get(6)?,
            }),
        ))
    })?;
    for row in answers {
        let (k, v) = row?;
        out.insert(k, v);
    }
    let mut st = conn.prepare("SELECT run_key, seat, slot, action, latency_ms, page_version FROM serve_timeouts")?;
    let timeouts = st.query_map([], |r| {
        Ok((
            decision_key(r)?,
            Outcome::TimedOut(TimedOut {
                action: action_column(r, 3, "serve_timeouts.action")?,
                latency_ms: r.get(4)?,
                page_version: r.get(5)?,
            }),
        ))
    })?;
    for row in timeouts {
        let (k, v) = row?;
        out.entry(k).or_insert(v);
    }
    Ok(out)
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
}
