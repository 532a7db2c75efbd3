//! The profile's tables (`agora profile`): one row per scheduled slot with its adopted answer or
//! its missing status, every attempt with its raw reply and cache key, each distinct question
//! text once under its SHA-256, the version files' hashes a study ran with, the models'
//! settings, each pass over the slots, and General Robustness's slots.
//!
//! Every read and write of these tables is here; the profile crate gives and takes rows.
//!
//! Versions: 1, the tables as first written; 2, `profile_gr.support` (the wording GR's review
//! read the adopted answer from), NULL on the rows of an earlier build.

use std::collections::{HashMap, HashSet};

use agora_agents::llm::ModelSpec;
use rusqlite::{params, Connection, Transaction};

use super::{add_column, Family, Step};

/// The tables of version 2.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS profile_studies (
    study TEXT PRIMARY KEY, master_seed INTEGER NOT NULL, responses INTEGER NOT NULL, gr_responses INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS profile_versions (
    study TEXT NOT NULL, task TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (study, task)
);
CREATE TABLE IF NOT EXISTS profile_prompts (sha256 TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS profile_responses (
    study TEXT NOT NULL, model TEXT NOT NULL, served_id TEXT NOT NULL, task TEXT NOT NULL,
    version TEXT NOT NULL, presentation TEXT NOT NULL, level TEXT NOT NULL, point TEXT NOT NULL,
    branch TEXT NOT NULL, direction TEXT NOT NULL, round INTEGER NOT NULL, slot INTEGER NOT NULL,
    scored INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, value TEXT, score REAL,
    prompt_sha256 TEXT NOT NULL, slot_key TEXT NOT NULL,
    PRIMARY KEY (study, model, task, version, presentation, level, point, branch, direction, round, slot)
);
CREATE TABLE IF NOT EXISTS profile_attempts (
    study TEXT NOT NULL, model TEXT NOT NULL, slot_key TEXT NOT NULL, attempt INTEGER NOT NULL,
    status TEXT NOT NULL, reply TEXT NOT NULL, cache_key TEXT NOT NULL, PRIMARY KEY (study, model, slot_key, attempt)
);
CREATE TABLE IF NOT EXISTS profile_settings (
    study TEXT NOT NULL, model TEXT NOT NULL, settings_json TEXT NOT NULL, PRIMARY KEY (study, model)
);
CREATE TABLE IF NOT EXISTS profile_passes (
    study TEXT NOT NULL, model TEXT NOT NULL, pass INTEGER NOT NULL, kind TEXT NOT NULL,
    settings_json TEXT NOT NULL, changed_json TEXT NOT NULL, slots INTEGER NOT NULL, outcome TEXT NOT NULL,
    PRIMARY KEY (study, model, pass)
);
CREATE TABLE IF NOT EXISTS profile_gr (
    study TEXT NOT NULL, model TEXT NOT NULL, served_id TEXT NOT NULL, condition TEXT NOT NULL,
    format TEXT NOT NULL, class TEXT NOT NULL, slot INTEGER NOT NULL, status TEXT NOT NULL,
    attempts INTEGER NOT NULL, value TEXT, strict INTEGER NOT NULL, prompt_sha256 TEXT NOT NULL,
    slot_key TEXT NOT NULL, support TEXT, PRIMARY KEY (study, model, condition, slot)
);
";

fn gr_support(conn: &Connection) -> rusqlite::Result<()> {
    add_column(conn, "profile_gr", "support", "TEXT")
}

/// The profile's family.
pub const PROFILE: Family = Family {
    name: "profile",
    version: 2,
    tables: &[
        "profile_studies",
        "profile_versions",
        "profile_prompts",
        "profile_responses",
        "profile_attempts",
        "profile_settings",
        "profile_passes",
        "profile_gr",
    ],
    schema: SCHEMA,
    steps: &[Step { to: 2, what: "profile_gr gains support, the wording an answer was read from", apply: gr_support }],
};

/// One scheduled slot's record: a row of `profile_responses` as the scores read it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResponseRow {
    /// Task name (`dictator`, `b4`, `lotteries`).
    pub task: String,
    /// `Q00` … `Q10`.
    pub version: String,
    /// `reference` or the check's operation (`answer-field`).
    pub presentation: String,
    /// `low`, `middle` or `high`.
    pub level: String,
    /// The decision point (`offer-20`, `p-40`, `P1-XY`; B4: `round-8`).
    pub point: String,
    /// B1–B3's history (`after`, `comparison`); empty elsewhere.
    pub branch: String,
    /// B4's switch direction; empty elsewhere.
    pub direction: String,
    /// B4's round (1–12); 0 elsewhere.
    pub round: u32,
    /// The response slot (B4: the episode), 0-based.
    pub slot: u32,
    /// Whether the point is scored (the responder's unscored curve is not).
    pub scored: bool,
    /// The decoded economic value; `None` when the slot has no valid answer.
    pub value: Option<String>,
    /// The score on the task's scale; `None` when missing.
    pub score: Option<f64>,
}

/// One attempt's record (`profile_attempts`).
#[derive(Clone, Debug)]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    /// `ok`, `unparsable`, `illegal`, `truncated` or `error`.
    pub status: String,
    /// The reply text (or the failure).
    pub reply: String,
    /// The reply cache key.
    pub cache_key: String,
}

/// What is written of one slot of a task: its row, its key, the question as asked and every
/// attempt.
#[derive(Clone, Copy, Debug)]
pub struct SlotRecord<'a> {
    /// The analysis row.
    pub row: &'a ResponseRow,
    /// The slot's key: the store's resume key and the reply cache's slot.
    pub slot_key: &'a str,
    /// The question as asked (empty for a B4 round after its episode ended).
    pub prompt: &'a str,
    /// The attempts.
    pub attempts: &'a [Attempt],
}

/// What is written of one General Robustness slot.
#[derive(Clone, Copy, Debug)]
pub struct GrSlotRecord<'a> {
    /// The condition's identifier.
    pub condition: &'a str,
    /// `open` or `binary`.
    pub format: &'a str,
    /// `reference`, `core` or `secondary`.
    pub class: &'a str,
    /// 0-based slot.
    pub slot: u32,
    /// The slot's key.
    pub slot_key: &'a str,
    /// The economic value.
    pub value: Option<&'a str>,
    /// Whether the adopted answer matches the requested format exactly.
    pub strict: bool,
    /// The wording of the adopted reply the value was read from.
    pub support: Option<&'a str>,
    /// The question as asked.
    pub prompt: &'a str,
    /// The attempts.
    pub attempts: &'a [Attempt],
}

/// A GR row as read back: (condition, format, class, value, strict, support).
pub type GrRow = (String, String, String, Option<String>, bool, Option<String>);

/// Records the study and its version files' hashes, (task, SHA-256); a study resumed with other settings or other
/// version files is refused (its records would mix two instruments).
pub fn record_study(
    conn: &Connection,
    study: &str,
    seed: u64,
    responses: u32,
    gr: u32,
    versions: &[(&str, &str)],
) -> Result<(), String> {
    let existing: Option<(i64, i64, i64)> = conn
        .query_row("SELECT master_seed, responses, gr_responses FROM profile_studies WHERE study = ?1", [study], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .ok();
    if let Some((s, r, g)) = existing {
        if (s as u64, r as u32, g as u32) != (seed, responses, gr) {
            return Err(format!(
                "profile study `{study}` was recorded with master_seed {s}, responses {r}, gr_responses {g}; the study file now says {seed}, {responses}, {gr}: use another name or store"
            ));
        }
    } else {
        conn.execute(
            "INSERT INTO profile_studies (study, master_seed, responses, gr_responses) VALUES (?1, ?2, ?3, ?4)",
            params![study, seed as i64, responses, gr],
        )
        .map_err(|e| e.to_string())?;
    }
    for &(task, sha256) in versions {
        record_version(conn, study, task, sha256, |o| {
            format!(
                "profile study `{study}` ran task `{task}` with version file {o}; the frozen file is now {sha256}: use another name or store"
            )
        })?;
    }
    Ok(())
}

/// Records `sha256` as the hash of the study's input `task` (a version file or another input)
/// in `profile_versions`, where none is recorded; where another is, the error `changed` makes
/// of the recorded hash, and nothing is written.
fn record_version(
    conn: &Connection,
    study: &str,
    task: &str,
    sha256: &str,
    changed: impl FnOnce(&str) -> String,
) -> Result<(), String> {
    let old: Option<String> = conn
        .query_row("SELECT sha256 FROM profile_versions WHERE study = ?1 AND task = ?2", params![study, task], |r| {
            r.get(0)
        })
        .ok();
    match old {
        Some(o) if o != sha256 => Err(changed(&o)),
        Some(_) => Ok(()),
        None => conn
            .execute(
                "INSERT INTO profile_versions (study, task, sha256) VALUES (?1, ?2, ?3)",
                params![study, task, sha256],
            )
            .map(|_| ())
            .map_err(|e| e.to_string()),
    }
}

/// Records the hashes of a study's other inputs (schedules, GR wording, the cells the checks
/// reuse) beside its version files' in `profile_versions`; a study resumed under other inputs is
/// refused, naming the input.
pub fn record_inputs(
    conn: &Connection,
    study: &str,
    inputs: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    for (name, sha) in inputs {
        record_version(conn, study, name, sha, |o| {
            format!("profile study `{study}` ran with {name} {o}; it is now {sha}: use another name or store")
        })?;
    }
    Ok(())
}

/// The model settings a profile's answers depend on, as recorded with it: the served model, the
/// sampling temperature, the token limit, the output mode, the chat-template arguments
/// (deliberation among them), the attempt limit and whether a seed is sent.
pub fn settings(spec: &ModelSpec) -> serde_json::Value {
    serde_json::json!({
        "served_id": spec.served_id,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "structured": spec.structured,
        "chat_template_kwargs": spec.template_kwargs(),
        "max_attempts": spec.max_attempts,
        "send_seed": spec.send_seed,
    })
}

/// The settings `--retry-missing` may change (and records): more attempts and a larger token
/// limit, the profile methods' recovery passes ("staged output caps").
pub const RETRY_MAY_CHANGE: [&str; 2] = ["max_attempts", "max_tokens"];

/// The fields of `now` that differ from `then`, as (field, then, now).
pub fn changed(then: &serde_json::Value, now: &serde_json::Value) -> Vec<(String, String, String)> {
    let (Some(a), Some(b)) = (then.as_object(), now.as_object()) else { return Vec::new() };
    let mut out = Vec::new();
    for (k, v) in b {
        let old = a.get(k).cloned().unwrap_or(serde_json::Value::Null);
        if old != *v {
            out.push((k.clone(), old.to_string(), v.to_string()));
        }
    }
    out
}

/// Records a model's settings with the profile the first time it runs and checks them on every
/// later run: a plain resume must keep them all; `--retry-missing` may change only
/// [`RETRY_MAY_CHANGE`]. Returns the fields changed (recorded with the pass).
pub fn check_settings(
    conn: &Connection,
    study: &str,
    spec: &ModelSpec,
    retry_missing: bool,
) -> Result<Vec<(String, String, String)>, String> {
    let now = settings(spec);
    let recorded: Option<String> = conn
        .query_row(
            "SELECT settings_json FROM profile_settings WHERE study = ?1 AND model = ?2",
            params![study, spec.name],
            |r| r.get(0),
        )
        .ok();
    let Some(recorded) = recorded else {
        conn.execute(
            "INSERT INTO profile_settings (study, model, settings_json) VALUES (?1, ?2, ?3)",
            params![study, spec.name, now.to_string()],
        )
        .map_err(|e| e.to_string())?;
        return Ok(Vec::new());
    };
    let then: serde_json::Value = serde_json::from_str(&recorded).map_err(|e| e.to_string())?;
    let changed = changed(&then, &now);
    for (field, old, new) in &changed {
        if retry_missing && RETRY_MAY_CHANGE.contains(&field.as_str()) {
            let raised = match (old.parse::<f64>(), new.parse::<f64>()) {
                (Ok(a), Ok(b)) => b >= a,
                _ => false,
            };
            if !raised {
                return Err(format!(
                    "model `{}`: `{field}` was {old} when profile study `{study}` was recorded; a recovery pass may raise it, not lower it to {new}",
                    spec.name
                ));
            }
            continue;
        }
        {
            return Err(format!(
                "model `{}`: `{field}` was {old} when profile study `{study}` was recorded and is {new} now; a resumed profile keeps its settings{} (or give the study another name for a new profile)",
                spec.name,
                if retry_missing { ": --retry-missing may raise only max_attempts and max_tokens" } else { "; --retry-missing may raise max_attempts and max_tokens for a recovery pass" }
            ));
        }
    }
    Ok(changed)
}

/// Records one pass over a model's slots: `initial` (or a plain resume) or `retry-missing`, with
/// its settings, the fields changed from the recorded ones, the slots it asked and how it ended.
pub fn record_pass(
    conn: &Connection,
    study: &str,
    spec: &ModelSpec,
    kind: &str,
    changed: &[(String, String, String)],
    slots: usize,
    outcome: &str,
) -> rusqlite::Result<()> {
    let pass: i64 = conn.query_row(
        "SELECT COALESCE(MAX(pass), 0) + 1 FROM profile_passes WHERE study = ?1 AND model = ?2",
        params![study, spec.name],
        |r| r.get(0),
    )?;
    let changed: Vec<serde_json::Value> =
        changed.iter().map(|(f, a, b)| serde_json::json!({"field": f, "was": a, "now": b})).collect();
    conn.execute(
        "INSERT INTO profile_passes (study, model, pass, kind, settings_json, changed_json, slots, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            study,
            spec.name,
            pass,
            kind,
            settings(spec).to_string(),
            serde_json::Value::Array(changed).to_string(),
            slots as i64,
            outcome
        ],
    )?;
    Ok(())
}

/// The slot keys already recorded for a task; with `retry_missing`, those with an answer only
/// (a missing slot, or a B4 round after an episode ended, is asked again).
pub fn done_keys(
    conn: &Connection,
    study: &str,
    model: &str,
    task: &str,
    retry_missing: bool,
) -> rusqlite::Result<HashSet<String>> {
    let mut st = conn.prepare(
        "SELECT slot_key FROM profile_responses WHERE study = ?1 AND model = ?2 AND task = ?3
           AND (?4 = 0 OR status = 'valid')",
    )?;
    let keys = st.query_map(params![study, model, task, retry_missing], |r| r.get(0))?.collect();
    keys
}

/// The missing slots of a model (slot key → the last attempt number recorded there), which
/// `--retry-missing` asks again, continuing their attempt numbers.
pub fn missing(conn: &Connection, study: &str, model: &str) -> rusqlite::Result<HashMap<String, u32>> {
    let mut st = conn.prepare(
        "SELECT slot_key, attempts FROM profile_responses WHERE study = ?1 AND model = ?2 AND status = 'missing'
         UNION ALL SELECT slot_key, attempts FROM profile_gr WHERE study = ?1 AND model = ?2 AND status = 'missing'",
    )?;
    let rows = st.query_map(params![study, model], |r| Ok((r.get(0)?, r.get(1)?)))?.collect();
    rows
}

/// The B4 episodes of a model with a missing slot, each named by `episode_id` (version, level,
/// direction, episode).
pub fn episodes_missing(
    conn: &Connection,
    study: &str,
    model: &str,
    episode_id: fn(&str, &str, &str, u32) -> String,
) -> rusqlite::Result<HashSet<String>> {
    let mut st = conn.prepare(
        "SELECT DISTINCT version, level, direction, slot FROM profile_responses
         WHERE study = ?1 AND model = ?2 AND task = 'b4' AND status = 'missing'",
    )?;
    let rows = st
        .query_map(params![study, model], |r| {
            Ok(episode_id(&r.get::<_, String>(0)?, &r.get::<_, String>(1)?, &r.get::<_, String>(2)?, r.get(3)?))
        })?
        .collect();
    rows
}

/// The recorded attempts of the answered B4 slots of the episodes in `redo`, by slot key: a
/// retried episode keeps their adopted answers ("the first valid answer at that slot is
/// retained") instead of asking them again, even where the retry pass changed a setting.
pub fn kept_b4(
    conn: &Connection,
    study: &str,
    model: &str,
    redo: &HashSet<String>,
    episode_id: fn(&str, &str, &str, u32) -> String,
) -> rusqlite::Result<HashMap<String, Vec<Attempt>>> {
    let mut out: HashMap<String, Vec<Attempt>> = HashMap::new();
    if redo.is_empty() {
        return Ok(out);
    }
    let mut st = conn.prepare(
        "SELECT r.version, r.level, r.direction, r.slot, r.slot_key, a.attempt, a.status, a.reply, a.cache_key
         FROM profile_responses r JOIN profile_attempts a ON a.study = r.study AND a.model = r.model AND a.slot_key = r.slot_key
         WHERE r.study = ?1 AND r.model = ?2 AND r.task = 'b4' AND r.status = 'valid'
         ORDER BY r.slot_key, a.attempt",
    )?;
    let rows = st.query_map(params![study, model], |r| {
        let id = episode_id(&r.get::<_, String>(0)?, &r.get::<_, String>(1)?, &r.get::<_, String>(2)?, r.get(3)?);
        Ok((
            id,
            r.get::<_, String>(4)?,
            Attempt { attempt: r.get(5)?, status: r.get(6)?, reply: r.get(7)?, cache_key: r.get(8)? },
        ))
    })?;
    for row in rows {
        let (id, key, attempt) = row?;
        if redo.contains(&id) {
            out.entry(key).or_default().push(attempt);
        }
    }
    Ok(out)
}

/// The GR slot keys already recorded; with `retry_missing`, those with an answer only.
pub fn done_gr(conn: &Connection, study: &str, model: &str, retry_missing: bool) -> rusqlite::Result<HashSet<String>> {
    let mut st = conn
        .prepare("SELECT slot_key FROM profile_gr WHERE study = ?1 AND model = ?2 AND (?3 = 0 OR status = 'valid')")?;
    let keys = st.query_map(params![study, model, retry_missing], |r| r.get(0))?.collect();
    keys
}

/// The slot's attempts so far: the last attempt's number (a retry pass continues the numbers).
fn last_attempt(attempts: &[Attempt]) -> i64 {
    attempts.last().map_or(0, |a| i64::from(a.attempt))
}

fn status(value_present: bool, attempts: usize) -> &'static str {
    match (value_present, attempts) {
        (true, _) => "valid",
        (false, 0) => "episode-ended",
        (false, _) => "missing",
    }
}

/// Stores a slot's question (once per distinct text) and every attempt; returns the question's
/// SHA-256.
fn put_prompt_and_attempts(
    tx: &Transaction<'_>,
    study: &str,
    model: &str,
    slot_key: &str,
    prompt: &str,
    attempts: &[Attempt],
) -> rusqlite::Result<String> {
    let sha = crate::seed::hex_digest(prompt.as_bytes());
    tx.prepare_cached("INSERT OR IGNORE INTO profile_prompts (sha256, text) VALUES (?1, ?2)")?
        .execute(params![sha, prompt])?;
    let mut att = tx.prepare_cached(
        "INSERT OR REPLACE INTO profile_attempts (study, model, slot_key, attempt, status, reply, cache_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for a in attempts {
        att.execute(params![study, model, slot_key, a.attempt, a.status, a.reply, a.cache_key])?;
    }
    Ok(sha)
}

/// Writes records of a task in one transaction.
pub fn write_rows<'a>(
    conn: &mut Connection,
    study: &str,
    spec: &ModelSpec,
    rows: impl IntoIterator<Item = SlotRecord<'a>>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for r in rows {
        let sha = put_prompt_and_attempts(&tx, study, &spec.name, r.slot_key, r.prompt, r.attempts)?;
        let w = r.row;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO profile_responses (study, model, served_id, task, version, presentation, level, point, branch,
             direction, round, slot, scored, status, attempts, value, score, prompt_sha256, slot_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )?
        .execute(params![
            study,
            spec.name,
            spec.served_id,
            w.task,
            w.version,
            w.presentation,
            w.level,
            w.point,
            w.branch,
            w.direction,
            w.round,
            w.slot,
            w.scored,
            status(w.value.is_some(), r.attempts.len()),
            last_attempt(r.attempts),
            w.value,
            w.score,
            sha,
            r.slot_key,
        ])?;
    }
    tx.commit()
}

/// Writes GR's records in one transaction.
pub fn write_gr<'a>(
    conn: &mut Connection,
    study: &str,
    spec: &ModelSpec,
    rows: impl IntoIterator<Item = GrSlotRecord<'a>>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for r in rows {
        let sha = put_prompt_and_attempts(&tx, study, &spec.name, r.slot_key, r.prompt, r.attempts)?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO profile_gr (study, model, served_id, condition, format, class, slot, status, attempts,
             value, strict, prompt_sha256, slot_key, support)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
            study,
            spec.name,
            spec.served_id,
            r.condition,
            r.format,
            r.class,
            r.slot,
            status(r.value.is_some(), r.attempts.len()),
            last_attempt(r.attempts),
            r.value,
            r.strict,
            sha,
            r.slot_key,
            r.support
        ])?;
    }
    tx.commit()
}

/// A model's response rows, in a fixed order.
pub fn read_rows(conn: &Connection, study: &str, model: &str) -> rusqlite::Result<Vec<ResponseRow>> {
    let mut st = conn.prepare(
        "SELECT task, version, presentation, level, point, branch, direction, round, slot, scored, value, score
         FROM profile_responses WHERE study = ?1 AND model = ?2
         ORDER BY task, version, presentation, level, point, branch, direction, round, slot",
    )?;
    crate::rows::by_name(&mut st, params![study, model])
}

/// A model's GR rows; in a store written before the support was recorded, without it.
pub fn read_gr(conn: &Connection, study: &str, model: &str) -> rusqlite::Result<Vec<GrRow>> {
    let support = if super::has_column(conn, "profile_gr", "support")? { "support" } else { "NULL" };
    let mut st = conn.prepare(&format!(
        "SELECT condition, format, class, value, strict, {support} FROM profile_gr WHERE study = ?1 AND model = ?2
         ORDER BY condition, slot"
    ))?;
    let rows = st
        .query_map(params![study, model], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
        .collect();
    rows
}

/// (study, model, served id) of every profiled model.
pub fn profiled_models(conn: &Connection) -> rusqlite::Result<Vec<(String, String, String)>> {
    if !super::has_table(conn, "profile_responses")? {
        return Ok(Vec::new());
    }
    let mut st =
        conn.prepare("SELECT DISTINCT study, model, served_id FROM profile_responses ORDER BY study, model")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect();
    rows
}
