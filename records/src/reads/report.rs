//! What the HTML report reads of a run store: the figures' series, the studies, the models and
//! their replies, the naming and tipping runs' interactions, and the models' own decisions.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

/// One row of `studies`.
#[derive(Serialize, Deserialize)]
pub struct Study {
    /// The study's name.
    pub study: String,
    /// The SHA-256 of its plan.
    pub plan_hash: String,
    /// Its master seed.
    pub master_seed: String,
    /// Its runs.
    pub runs: i64,
}

/// A recorded model reply.
#[derive(Serialize, Deserialize)]
pub struct Excerpt {
    /// The model that replied.
    pub model: String,
    /// The seat's role.
    pub role: String,
    /// How the reply parsed.
    pub parse_status: String,
    /// The reply as received.
    pub raw_reply: String,
}

/// A model with its serving facts as the study declared them, and the calls it made.
#[derive(Serialize, Deserialize)]
pub struct Model {
    /// The model's name in the study.
    pub name: String,
    /// Its family.
    pub family: String,
    /// The id it was served under.
    pub served_id: String,
    /// Its endpoints.
    pub endpoints: String,
    /// Its quantisation.
    pub quantisation: String,
    /// Notes on it.
    pub notes: String,
    /// How its output was structured.
    pub structured: String,
    /// Its sampling temperature.
    #[serde(deserialize_with = "crate::rows::not_null")]
    pub temperature: f64,
    /// Its token limit per reply.
    pub max_tokens: i64,
    /// The calls it made (its transcripts).
    pub calls: i64,
}

/// A model's recognition probes: how many named the paradigm, of how many.
#[derive(Serialize, Deserialize)]
pub struct Probes {
    /// The model.
    pub model: String,
    /// Probes that named the paradigm.
    pub recognised: i64,
    /// Probes.
    pub probes: i64,
}

/// One naming-game interaction: who met whom, the names they proposed, whether they matched.
pub use crate::run_records::InteractionRecord as Meeting;

/// A naming-game run for the drill-down, with its first interactions.
#[derive(Serialize, Deserialize)]
pub struct NamingRun {
    /// The roster that played.
    pub roster: String,
    /// The payoff variant.
    pub variant: String,
    /// The perturbation cell.
    pub cell: String,
    /// The arm.
    pub arm: String,
    /// The committed fraction; negative when the run is not part of a sweep.
    #[serde(deserialize_with = "crate::rows::not_null")]
    pub sweep: f64,
    /// The run's index in its cell.
    pub run_index: i64,
    /// Its steps.
    pub steps: i64,
    /// Its first interactions (`interactions`, read apart).
    #[serde(skip_deserializing)]
    pub meetings: Vec<Meeting>,
}

/// A tipping run's meetings, and the interaction at which the alternative name carried.
pub struct TippingRun {
    /// The run's agents.
    pub agents: usize,
    /// Its committed agents.
    pub committed: usize,
    /// The name the committed minority proposes.
    pub alternative: u32,
    /// All its interactions.
    pub meetings: Vec<Meeting>,
    /// The interaction at which the minority's name took over, if it did.
    pub tipped_at: Option<u32>,
}

fn triples(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<(String, f64, f64)>> {
    let mut st = conn.prepare(sql)?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    rows.collect()
}

/// Public goods: mean contribution (share of the endowment) by round, per roster and arm, as
/// (roster · arm, round, mean) rows in that order.
pub fn contribution_by_round(conn: &Connection) -> rusqlite::Result<Vec<(String, f64, f64)>> {
    triples(
        conn,
        "SELECT r.roster || ' · ' || r.arm, d.round, AVG(d.value / d.scale) FROM decisions d JOIN runs r USING (run_id)
         WHERE d.role = 'contributor' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2 ORDER BY 1, 2",
    )
}

/// Naming game: share of matching interactions per roster, in bins of 50 interactions, as
/// (roster, bin centre, share) rows in that order.
pub fn matching_over_time(conn: &Connection) -> rusqlite::Result<Vec<(String, f64, f64)>> {
    triples(
        conn,
        "SELECT r.roster, ((i.t - 1) / 50) * 50 + 25, AVG(i.matched) FROM interactions i JOIN runs r USING (run_id)
         WHERE r.arm IN ('baseline', 'shuffled-pool') AND r.variant = 'C0' AND r.cell = 'baseline' AND i.t <= 3000 GROUP BY 1, 2 ORDER BY 1, 2",
    )
}

/// The 11–20 game: per roster, the count of each request offset (request − 11, as stored) in
/// baseline C0 runs, as (roster, offset, count) rows.
pub fn request_counts(conn: &Connection) -> rusqlite::Result<Vec<(String, i64, f64)>> {
    let mut st = conn.prepare(
        "SELECT r.roster, CAST(d.value - d.context AS INTEGER), COUNT(*) FROM decisions d JOIN runs r USING (run_id)
         WHERE d.role = 'requester' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as f64)))?;
    rows.collect()
}

/// The store's studies, by name.
pub fn studies(conn: &Connection) -> rusqlite::Result<Vec<Study>> {
    let mut st = conn.prepare("SELECT study, plan_hash, master_seed, runs FROM studies ORDER BY study")?;
    crate::rows::by_name(&mut st, [])
}

/// The first 30 recorded replies of models (not people's form submissions), in run, seat, slot
/// and attempt order.
pub fn excerpts(conn: &Connection) -> rusqlite::Result<Vec<Excerpt>> {
    let mut st = conn.prepare(
        "SELECT t.model, t.role, t.parse_status, t.raw_reply FROM transcripts t WHERE t.endpoint <> ?1
         ORDER BY t.run_id, t.seat, t.slot, t.attempt LIMIT 30",
    )?;
    crate::rows::by_name(&mut st, [agora_agents::HUMAN_ENDPOINT])
}

/// The study's models with their serving facts and calls, by name and served id.
pub fn models(conn: &Connection) -> rusqlite::Result<Vec<Model>> {
    let mut st = conn.prepare(
        "SELECT m.name, m.family, m.served_id, m.endpoints, m.quantisation, m.notes, m.structured, m.temperature,
                m.max_tokens, (SELECT COUNT(*) FROM transcripts t WHERE t.model = m.name) AS calls
         FROM models m ORDER BY m.name, m.served_id",
    )?;
    crate::rows::by_name(&mut st, [])
}

/// Per model, how often the recognition probe named the paradigm.
pub fn probes(conn: &Connection) -> rusqlite::Result<Vec<Probes>> {
    let mut st = conn.prepare(
        "SELECT model, SUM(parse_status = 'recognised') AS recognised, COUNT(*) AS probes FROM transcripts
         WHERE kind = 'probe' GROUP BY model ORDER BY model",
    )?;
    crate::rows::by_name(&mut st, [])
}

/// A run's interactions in order: the first 200 for the drill-down, or all of them.
fn meetings(conn: &Connection, run_id: i64, first_200: bool) -> rusqlite::Result<Vec<Meeting>> {
    let mut st = conn.prepare_cached(if first_200 {
        "SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t LIMIT 200"
    } else {
        "SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t"
    })?;
    crate::rows::by_name(&mut st, [run_id])
}

/// The first 40 naming-game runs, each with its first 200 interactions.
pub fn naming_runs(conn: &Connection) -> rusqlite::Result<Vec<NamingRun>> {
    let mut st = conn.prepare(
        "SELECT run_id, roster, variant, cell, arm, COALESCE(sweep_value, -1) AS sweep, run_index, steps FROM runs
         WHERE environment = 'naming-game' ORDER BY roster, arm, variant, cell, sweep_value, run_index LIMIT 40",
    )?;
    /// A run's row: its id, to read its interactions by, and the run.
    #[derive(Deserialize)]
    struct Stored {
        run_id: i64,
        #[serde(flatten)]
        run: NamingRun,
    }
    let runs: Vec<Stored> = crate::rows::by_name(&mut st, [])?;
    runs.into_iter()
        .map(|Stored { run_id, mut run }| {
            run.meetings = meetings(conn, run_id, true)?;
            Ok(run)
        })
        .collect()
}

/// The tipping run whose committed fraction is closest to `fraction`, of the memory-window
/// agent where there is one, with all its interactions; none if the store has no tipping run.
pub fn tipping_run(conn: &Connection, fraction: f64) -> rusqlite::Result<Option<TippingRun>> {
    let pick: Option<(i64, i64, i64)> = conn
        .query_row(
            "SELECT run_id, population, committed FROM runs WHERE arm LIKE 'tipping%'
             ORDER BY roster <> 'memory-coordination', ABS(sweep_value - ?1), run_index LIMIT 1",
            [fraction],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .ok();
    let Some((run_id, population, committed)) = pick else { return Ok(None) };
    // The name the committed minority always proposes, read off a committed seat's last choice
    // (where the convention formed first, a committed seat played its own policy until then).
    let alternative: Option<u32> = conn
        .query_row(
            "SELECT CAST(SUBSTR(d.action, 2) AS INTEGER) FROM decisions d
             JOIN agents a ON a.run_id = d.run_id AND a.seat = d.seat
             WHERE d.run_id = ?1 AND a.committed = 1 ORDER BY d.step DESC LIMIT 1",
            [run_id],
            |r| r.get(0),
        )
        .ok();
    let Some(alternative) = alternative else { return Ok(None) };
    // When the minority's name took over: the naming game's own outcome, as the run recorded it
    // (counted from the onset where the convention formed first, so the onset is added back).
    let tipped_at: Option<u32> = conn
        .query_row(
            "SELECT CAST(o.value + COALESCE((SELECT c.value FROM metrics c WHERE c.run_id = ?1 AND c.name = 'convention_time'), 0) AS INTEGER)
             FROM metrics o WHERE o.run_id = ?1 AND o.name = 'overturn_time'",
            [run_id],
            |r| r.get(0),
        )
        .ok();
    let meetings = meetings(conn, run_id, false)?;
    Ok(Some(TippingRun {
        agents: population as usize,
        committed: committed as usize,
        alternative,
        meetings,
        tipped_at,
    }))
}

/// One model decision's transcript slot in the society runs (baseline cell, C0 payoffs), keyed
/// by (run, seat, slot): the model, its served id, and whether the slot ended in a fallback.
pub type SocietySlot = ((i64, i64, i64), (String, String, bool));

/// The models' decision slots in the society runs (baseline cell, C0 payoffs; not people's
/// form submissions): those parsed, fallen back, or truncated with an action.
pub fn society_slots(conn: &Connection) -> rusqlite::Result<Vec<SocietySlot>> {
    let mut st = conn.prepare(
        "SELECT t.run_id, t.seat, t.slot, t.model, t.served_id, t.parse_status = 'fallback' FROM transcripts t
         JOIN runs r USING (run_id)
         WHERE t.kind = 'decision' AND r.cell = 'baseline' AND r.variant = 'C0' AND t.endpoint <> ?1
           AND (t.parse_status IN ('ok', 'fallback') OR (t.parse_status = 'truncated' AND t.action IS NOT NULL))",
    )?;
    let rows = st.query_map([agora_agents::HUMAN_ENDPOINT], |r| {
        Ok(((r.get(0)?, r.get(1)?, r.get(2)?), (r.get(3)?, r.get(4)?, r.get(5)?)))
    })?;
    rows.collect()
}

/// One decision of a society run: run, seat, environment, role, value and scale.
pub type SocietyDecision = (i64, i64, String, String, f64, f64);

/// The decisions of the society runs (baseline cell, C0 payoffs), by run, seat and step.
pub fn society_decisions(conn: &Connection) -> rusqlite::Result<Vec<SocietyDecision>> {
    let mut st = conn.prepare(
        "SELECT d.run_id, d.seat, r.environment, d.role, d.value, d.scale FROM decisions d JOIN runs r USING (run_id)
         WHERE r.cell = 'baseline' AND r.variant = 'C0' ORDER BY d.run_id, d.seat, d.step",
    )?;
    let rows = st.query_map([], |r| {
        Ok::<SocietyDecision, _>((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
    })?;
    rows.collect()
}
