//! Every SQL query the report runs, each returning typed rows. The store is opened read-only.

use std::path::Path;

use rusqlite::Connection;

/// Opens the store read-only, refusing one whose product tables (profile, session, audit) are of
/// a newer version than this build reads.
pub fn open(store: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    for family in agora_records::families::ALL {
        agora_records::families::check(&conn, family)
            .map_err(|e| anyhow::Error::new(e).context(store.display().to_string()))?;
    }
    Ok(conn)
}

/// A named series of (x, y) points for a line chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One row of `studies`.
pub struct Study {
    pub study: String,
    pub plan_hash: String,
    pub master_seed: String,
    pub runs: i64,
}

/// A recorded model reply.
pub struct Excerpt {
    pub model: String,
    pub role: String,
    pub parse_status: String,
    pub raw_reply: String,
}

/// A model with its serving facts as the study declared them, and the calls it made.
pub struct Model {
    pub name: String,
    pub family: String,
    pub served_id: String,
    pub endpoints: String,
    pub quantisation: String,
    pub notes: String,
    pub structured: String,
    pub temperature: f64,
    pub max_tokens: i64,
    pub calls: i64,
}

/// A model's recognition probes: how many named the paradigm, of how many.
pub struct Probes {
    pub model: String,
    pub recognised: i64,
    pub probes: i64,
}

/// One naming-game interaction: who met whom, the names they proposed, whether they matched.
#[derive(Clone, Copy)]
pub struct Meeting {
    pub t: u32,
    pub a: usize,
    pub b: usize,
    pub name_a: u32,
    pub name_b: u32,
    pub matched: bool,
}

/// A naming-game run for the drill-down, with its first interactions.
pub struct NamingRun {
    pub roster: String,
    pub variant: String,
    pub cell: String,
    pub arm: String,
    /// The committed fraction; negative when the run is not part of a sweep.
    pub sweep: f64,
    pub run_index: i64,
    pub steps: i64,
    pub meetings: Vec<Meeting>,
}

/// A tipping run's meetings, and the interaction at which the alternative name carried.
pub struct TippingRun {
    pub agents: usize,
    pub committed: usize,
    pub alternative: u32,
    pub meetings: Vec<Meeting>,
    pub tipped_at: Option<u32>,
}

/// One roster's 11–20 choices as shares of requests 11..=20.
pub struct RequestDistribution {
    pub roster: String,
    pub shares: Vec<f64>,
}

/// Runs a query of (series name, x, y) rows and groups them into series in order of first
/// appearance.
fn series(conn: &Connection, sql: &str) -> anyhow::Result<Vec<Series>> {
    let mut st = conn.prepare(sql)?;
    let rows: Vec<(String, f64, f64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
    let mut out: Vec<Series> = Vec::new();
    for (name, x, y) in rows {
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => out.push(Series { name, points: vec![(x, y)] }),
        }
    }
    Ok(out)
}

/// Public goods: mean contribution (share of the endowment) by round, per roster and arm.
pub fn contribution_by_round(conn: &Connection) -> anyhow::Result<Vec<Series>> {
    series(
        conn,
        "SELECT r.roster || ' · ' || r.arm, d.round, AVG(d.value / d.scale) FROM decisions d JOIN runs r USING (run_id)
         WHERE d.role = 'contributor' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2 ORDER BY 1, 2",
    )
}

/// Naming game: share of matching interactions per roster, in bins of 50 interactions.
pub fn matching_over_time(conn: &Connection) -> anyhow::Result<Vec<Series>> {
    series(
        conn,
        "SELECT r.roster, ((i.t - 1) / 50) * 50 + 25, AVG(i.matched) FROM interactions i JOIN runs r USING (run_id)
         WHERE r.arm IN ('baseline', 'shuffled-pool') AND r.variant = 'C0' AND r.cell = 'baseline' AND i.t <= 3000 GROUP BY 1, 2 ORDER BY 1, 2",
    )
}

/// The 11–20 game: per roster, the distribution of requests (11..=20) in baseline C0 runs.
pub fn request_distributions(conn: &Connection) -> anyhow::Result<Vec<RequestDistribution>> {
    let mut st = conn.prepare(
        "SELECT r.roster, CAST(d.value - d.context AS INTEGER), COUNT(*) FROM decisions d JOIN runs r USING (run_id)
         WHERE d.role = 'requester' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2",
    )?;
    let rows: Vec<(String, i64, f64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as f64)))?.collect::<Result<_, _>>()?;
    let mut out: Vec<RequestDistribution> = Vec::new();
    for (roster, k, n) in rows {
        if !(0..10).contains(&k) {
            continue;
        }
        if !out.iter().any(|x| x.roster == roster) {
            out.push(RequestDistribution { roster: roster.clone(), shares: vec![0.0; 10] });
        }
        if let Some(x) = out.iter_mut().find(|x| x.roster == roster) {
            x.shares[k as usize] += n;
        }
    }
    for x in out.iter_mut() {
        let total: f64 = x.shares.iter().sum();
        x.shares.iter_mut().for_each(|v| *v /= total.max(1.0));
    }
    Ok(out)
}

pub fn studies(conn: &Connection) -> anyhow::Result<Vec<Study>> {
    let mut st = conn.prepare("SELECT study, plan_hash, master_seed, runs FROM studies ORDER BY study")?;
    let rows = st
        .query_map([], |r| {
            Ok(Study { study: r.get(0)?, plan_hash: r.get(1)?, master_seed: r.get(2)?, runs: r.get(3)? })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The first 30 recorded replies of models (not people's form submissions), in run, seat, slot
/// and attempt order.
pub fn excerpts(conn: &Connection) -> anyhow::Result<Vec<Excerpt>> {
    let mut st = conn.prepare(
        "SELECT t.model, t.role, t.parse_status, t.raw_reply FROM transcripts t WHERE t.endpoint <> ?1
         ORDER BY t.run_id, t.seat, t.slot, t.attempt LIMIT 30",
    )?;
    let rows = st
        .query_map([agora_agents::HUMAN_ENDPOINT], |r| {
            Ok(Excerpt { model: r.get(0)?, role: r.get(1)?, parse_status: r.get(2)?, raw_reply: r.get(3)? })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

pub fn models(conn: &Connection) -> anyhow::Result<Vec<Model>> {
    let mut st = conn.prepare(
        "SELECT m.name, m.family, m.served_id, m.endpoints, m.quantisation, m.notes, m.structured, m.temperature,
                m.max_tokens, (SELECT COUNT(*) FROM transcripts t WHERE t.model = m.name)
         FROM models m ORDER BY m.name, m.served_id",
    )?;
    let rows = st
        .query_map([], |r| {
            Ok(Model {
                name: r.get(0)?,
                family: r.get(1)?,
                served_id: r.get(2)?,
                endpoints: r.get(3)?,
                quantisation: r.get(4)?,
                notes: r.get(5)?,
                structured: r.get(6)?,
                temperature: r.get(7)?,
                max_tokens: r.get(8)?,
                calls: r.get(9)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Per model, how often the recognition probe named the paradigm.
pub fn probes(conn: &Connection) -> anyhow::Result<Vec<Probes>> {
    let mut st = conn.prepare(
        "SELECT model, SUM(parse_status = 'recognised'), COUNT(*) FROM transcripts WHERE kind = 'probe' GROUP BY model ORDER BY model",
    )?;
    let rows = st
        .query_map([], |r| Ok(Probes { model: r.get(0)?, recognised: r.get(1)?, probes: r.get(2)? }))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// A run's interactions in order: the first 200 for the drill-down, or all of them.
fn meetings(conn: &Connection, run_id: i64, first_200: bool) -> anyhow::Result<Vec<Meeting>> {
    let mut st = conn.prepare_cached(if first_200 {
        "SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t LIMIT 200"
    } else {
        "SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t"
    })?;
    let rows = st
        .query_map([run_id], |r| {
            Ok(Meeting {
                t: r.get(0)?,
                a: r.get(1)?,
                b: r.get(2)?,
                name_a: r.get(3)?,
                name_b: r.get(4)?,
                matched: r.get(5)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The first 40 naming-game runs, each with its first 200 interactions.
pub fn naming_runs(conn: &Connection) -> anyhow::Result<Vec<NamingRun>> {
    let mut st = conn.prepare(
        "SELECT run_id, roster, variant, cell, arm, COALESCE(sweep_value, -1), run_index, steps FROM runs
         WHERE environment = 'naming-game' ORDER BY roster, arm, variant, cell, sweep_value, run_index LIMIT 40",
    )?;
    let runs: Vec<(i64, NamingRun)> = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                NamingRun {
                    roster: r.get(1)?,
                    variant: r.get(2)?,
                    cell: r.get(3)?,
                    arm: r.get(4)?,
                    sweep: r.get(5)?,
                    run_index: r.get(6)?,
                    steps: r.get(7)?,
                    meetings: Vec::new(),
                },
            ))
        })?
        .collect::<Result<_, _>>()?;
    runs.into_iter()
        .map(|(id, mut run)| {
            run.meetings = meetings(conn, id, true)?;
            Ok(run)
        })
        .collect()
}

/// The tipping run whose committed fraction is closest to `fraction`, of the memory-window
/// agent where there is one, with all its interactions; none if the store has no tipping run.
pub fn tipping_run(conn: &Connection, fraction: f64) -> anyhow::Result<Option<TippingRun>> {
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

/// One model's own decisions in one society game and role (baseline cell, C0 payoffs): the
/// model is the one its seat's transcripts name, and a decision whose slot ended in a fallback
/// (no legal answer; the recorded action is a random draw) is counted apart, not averaged.
pub struct SocietyOutcome {
    pub model: String,
    pub served_id: String,
    pub environment: String,
    pub role: String,
    /// Decisions averaged (fallbacks excluded).
    pub decisions: usize,
    /// Decisions left out as fallbacks.
    pub fallbacks: usize,
    /// Runs the averaged decisions come from.
    pub runs: usize,
    /// Mean of value / scale over the averaged decisions.
    pub mean_share: f64,
    /// Mean of value over the averaged decisions.
    pub mean_value: f64,
}

/// Every model's own decisions in the society runs (baseline cell, C0 payoffs), per game and
/// role. The k-th decision of a seat in a run (in step order) is its transcript slot k; a seat
/// without decision transcripts is not a model's.
pub fn society_outcomes(conn: &Connection) -> anyhow::Result<Vec<SocietyOutcome>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut slots: BTreeMap<(i64, i64, i64), (String, String, bool)> = BTreeMap::new();
    let mut st = conn.prepare(
        "SELECT t.run_id, t.seat, t.slot, t.model, t.served_id, t.parse_status = 'fallback' FROM transcripts t
         JOIN runs r USING (run_id)
         WHERE t.kind = 'decision' AND r.cell = 'baseline' AND r.variant = 'C0' AND t.endpoint <> ?1
           AND (t.parse_status IN ('ok', 'fallback') OR (t.parse_status = 'truncated' AND t.action IS NOT NULL))",
    )?;
    for row in st.query_map([agora_agents::HUMAN_ENDPOINT], |r| {
        Ok(((r.get(0)?, r.get(1)?, r.get(2)?), (r.get(3)?, r.get(4)?, r.get(5)?)))
    })? {
        let (k, v) = row?;
        slots.insert(k, v);
    }
    if slots.is_empty() {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT d.run_id, d.seat, r.environment, d.role, d.value, d.scale FROM decisions d JOIN runs r USING (run_id)
         WHERE r.cell = 'baseline' AND r.variant = 'C0' ORDER BY d.run_id, d.seat, d.step",
    )?;
    type Row = (i64, i64, String, String, f64, f64);
    let rows =
        st.query_map([], |r| Ok::<Row, _>((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
    // (model, served id, environment, role) → (share sum, value sum, decisions, fallbacks, runs).
    type Acc = (f64, f64, usize, usize, BTreeSet<i64>);
    let mut acc: BTreeMap<(String, String, String, String), Acc> = BTreeMap::new();
    let mut next: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for row in rows {
        let (run, seat, environment, role, value, scale) = row?;
        let k = next.entry((run, seat)).or_insert(0);
        let slot = *k;
        *k += 1;
        let Some((model, served, fallback)) = slots.get(&(run, seat, slot)) else { continue };
        let a = acc.entry((model.clone(), served.clone(), environment, role)).or_default();
        if *fallback {
            a.3 += 1;
        } else {
            a.0 += if scale != 0.0 { value / scale } else { f64::NAN };
            a.1 += value;
            a.2 += 1;
            a.4.insert(run);
        }
    }
    Ok(acc
        .into_iter()
        .map(|((model, served_id, environment, role), (share, value, n, fallbacks, runs))| SocietyOutcome {
            model,
            served_id,
            environment,
            role,
            decisions: n,
            fallbacks,
            runs: runs.len(),
            mean_share: if n > 0 { share / n as f64 } else { f64::NAN },
            mean_value: if n > 0 { value / n as f64 } else { f64::NAN },
        })
        .collect())
}
