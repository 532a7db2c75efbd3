//! Bringing a store written by an earlier schema up to this one, in place, one transaction per
//! step: metrics (schema 3), requests by their parts (4), a run's records as one value (5).

use rusqlite::{params, Connection};

use super::{Parts, SCHEMA};
use crate::families::has_table;

/// Runs `step` in one immediate transaction: committed whole, or rolled back on an error, so
/// that a store is upgraded whole or not at all.
fn in_transaction<E: From<rusqlite::Error>>(conn: &Connection, step: impl FnOnce() -> Result<(), E>) -> Result<(), E> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match step() {
        Ok(()) => Ok(conn.execute_batch("COMMIT")?),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// A decision row of a schema-4 store: step, round, seat, role, action, value, scale, context.
type StoredDecision = (u32, u32, u32, String, String, f64, f64, Option<f64>);

/// Why an upgrade stopped.
pub(super) enum Upgrade {
    Sql(rusqlite::Error),
    Spec(String, String),
}

impl From<rusqlite::Error> for Upgrade {
    fn from(e: rusqlite::Error) -> Self {
        Upgrade::Sql(e)
    }
}

/// Fills the metrics table of a store written before it existed: each run's game computes its
/// outcomes from the stored records, exactly as it does at the end of a live run (the record
/// hashes are recomputed afterwards, with every other upgrade's). One transaction: a store is
/// upgraded whole or not.
pub(super) fn upgrade_metrics(conn: &Connection) -> Result<(), Upgrade> {
    use agora_environments::game::{RecordedDecision, RecordedInteraction};
    in_transaction(conn, || -> Result<(), Upgrade> {
        let runs: Vec<(i64, String, String, String)> = conn
            .prepare("SELECT run_id, run_key, variant, spec_json FROM runs ORDER BY run_id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let mut decisions = conn.prepare(
            "SELECT round, seat, role, value, scale, context FROM decisions WHERE run_id = ?1 ORDER BY step, seat",
        )?;
        let mut interactions =
            conn.prepare("SELECT t, name_a, matched FROM interactions WHERE run_id = ?1 ORDER BY t")?;
        for (run_id, key, variant, spec_json) in runs {
            let spec: serde_json::Value =
                serde_json::from_str(&spec_json).map_err(|e| Upgrade::Spec(key.clone(), e.to_string()))?;
            let env: agora_environments::EnvSpec = serde_json::from_value(spec["environment"].clone())
                .map_err(|e| Upgrade::Spec(key.clone(), e.to_string()))?;
            let variant = agora_environments::Variant::ALL
                .into_iter()
                .find(|v| v.as_str() == variant)
                .ok_or_else(|| Upgrade::Spec(key.clone(), format!("unknown variant {variant}")))?;
            let rows: Vec<(u32, u32, String, f64, f64, Option<f64>)> = decisions
                .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
                .collect::<Result<_, _>>()?;
            let ds: Vec<RecordedDecision> = rows
                .iter()
                .map(|(round, seat, role, value, scale, context)| RecordedDecision {
                    round: *round,
                    seat: *seat,
                    role,
                    value: *value,
                    scale: *scale,
                    context: *context,
                })
                .collect();
            let is: Vec<RecordedInteraction> = interactions
                .query_map([run_id], |r| {
                    let (t, name, matched): (u32, u32, bool) = (r.get(0)?, r.get(1)?, r.get(2)?);
                    Ok(RecordedInteraction { t, matched: matched.then_some(name) })
                })?
                .collect::<Result<_, _>>()?;
            let factors: Vec<crate::spec::Factor> = serde_json::from_value(spec["factors"].clone()).unwrap_or_default();
            let reversed = factors.contains(&crate::spec::Factor::ReversedActionOrder);
            let metrics = crate::run_records::outcomes(&env, variant, reversed, &ds, &is);
            for (name, value) in &metrics {
                conn.execute(
                    "INSERT INTO metrics (run_id, name, value) VALUES (?1, ?2, ?3)",
                    params![run_id, name, value],
                )?;
            }
        }
        Ok(())
    })
}

/// Moves the decisions, payoffs and interactions of a store written before schema 5 into
/// `run_rows`, one value per run and table, encoded as a live run encodes them; the views then
/// list the same rows. One transaction.
pub(super) fn upgrade_rows(conn: &Connection) -> Result<(), Upgrade> {
    use crate::run_records::{InteractionRecord, PayoffRecord};
    if !has_table(conn, "decisions")? {
        return Ok(());
    }
    in_transaction(conn, || -> Result<(), Upgrade> {
        conn.execute_batch(
            "ALTER TABLE decisions RENAME TO decisions_before_rows;
             ALTER TABLE payoffs RENAME TO payoffs_before_rows;
             ALTER TABLE interactions RENAME TO interactions_before_rows;",
        )?;
        conn.execute_batch(SCHEMA)?;
        let runs: Vec<(i64, String)> = conn
            .prepare("SELECT run_id, run_key FROM runs ORDER BY run_id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut d = conn.prepare(
            "SELECT step, round, seat, role, action, value, scale, context FROM decisions_before_rows WHERE run_id = ?1",
        )?;
        let mut p = conn.prepare("SELECT step, round, seat, payoff FROM payoffs_before_rows WHERE run_id = ?1")?;
        let mut i =
            conn.prepare("SELECT t, a, b, name_a, name_b, matched FROM interactions_before_rows WHERE run_id = ?1")?;
        for (run_id, key) in runs {
            let raw: Vec<StoredDecision> = d
                .query_map([run_id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
                })?
                .collect::<Result<_, _>>()?;
            let ds: Vec<crate::run_rows::DecisionRow<'_>> = raw
                .iter()
                .map(|(step, round, seat, role, action, value, scale, context)| crate::run_rows::DecisionRow {
                    step: *step,
                    round: *round,
                    seat: *seat,
                    role,
                    action: crate::run_rows::ActionText::Text(action),
                    value: *value,
                    scale: *scale,
                    context: *context,
                })
                .collect();
            let ps: Vec<PayoffRecord> = p
                .query_map([run_id], |r| {
                    Ok(PayoffRecord { step: r.get(0)?, round: r.get(1)?, seat: r.get(2)?, payoff: r.get(3)? })
                })?
                .collect::<Result<_, _>>()?;
            let is: Vec<InteractionRecord> = crate::rows::by_name(&mut i, [run_id])?;
            let rows = crate::run_rows::encode_rows(&ds, &ps, &is).map_err(|m| Upgrade::Spec(key.clone(), m))?;
            conn.execute(
                "INSERT INTO run_rows (run_id, decisions, payoffs, interactions) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, rows.decisions, rows.payoffs, rows.interactions],
            )?;
        }
        drop((d, p, i));
        conn.execute_batch(
            "DROP TABLE decisions_before_rows; DROP TABLE payoffs_before_rows; DROP TABLE interactions_before_rows;",
        )?;
        Ok(())
    })
}

/// Moves the transcripts of a store written before requests were kept by their parts into
/// `transcript_calls`, each request cut into parts exactly as a live run cuts it; the
/// `transcripts` view then reads every row back as it was. One transaction.
pub(super) fn upgrade_transcripts(conn: &Connection) -> Result<(), rusqlite::Error> {
    if !has_table(conn, "transcripts")? {
        return Ok(());
    }
    in_transaction(conn, || -> Result<(), rusqlite::Error> {
        conn.execute_batch("ALTER TABLE transcripts RENAME TO transcripts_before_parts")?;
        conn.execute_batch(SCHEMA)?;
        let mut parts = Parts::default();
        let mut read = conn.prepare(
            "SELECT run_id, seat, slot, attempt, kind, round, role, model, served_id, endpoint, messages_json, raw_reply,
                    action, reason, parse_status, detail, latency_ms, prompt_tokens, completion_tokens
             FROM transcripts_before_parts ORDER BY run_id, seat, slot, kind, attempt",
        )?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let mut values: Vec<rusqlite::types::Value> = (0..19).map(|i| r.get(i)).collect::<Result<_, _>>()?;
            let rusqlite::types::Value::Text(json) = &values[10] else {
                return Err(rusqlite::Error::InvalidColumnType(
                    10,
                    "messages_json".into(),
                    rusqlite::types::Type::Null,
                ));
            };
            values[10] = rusqlite::types::Value::Text(parts.list(conn, json)?);
            conn.prepare_cached(
                "INSERT INTO transcript_calls (run_id, seat, slot, attempt, kind, round, role, model, served_id, endpoint,
                    request, raw_reply, action, reason, parse_status, detail, latency_ms, prompt_tokens, completion_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            )?
            .execute(rusqlite::params_from_iter(values))?;
        }
        drop(rows);
        drop(read);
        conn.execute_batch("DROP TABLE transcripts_before_parts")
    })
}

/// Records the declaration of every environment a stored run played (schema version 6).
pub(super) fn upgrade_declarations(conn: &Connection) -> Result<(), rusqlite::Error> {
    let names: Vec<String> = crate::reads::first_column(conn, "SELECT DISTINCT environment FROM runs")?;
    for name in names {
        if let Some(kind) = agora_environments::EnvKind::ALL.iter().find(|k| k.as_str() == name) {
            super::declare(conn, *kind)?;
        }
    }
    Ok(())
}
