//! What the report reads of the store, as typed rows: the queries are
//! `agora_records::reads::report`'s; the store is opened read-only.

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

pub use agora_records::reads::report::{Excerpt, Meeting, Model, NamingRun, Probes, Study, TippingRun};

/// A named series of (x, y) points for a line chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One roster's 11–20 choices as shares of requests 11..=20.
pub struct RequestDistribution {
    pub roster: String,
    pub shares: Vec<f64>,
}

/// Groups (series name, x, y) rows into series in order of first appearance.
fn series(rows: Vec<(String, f64, f64)>) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (name, x, y) in rows {
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => out.push(Series { name, points: vec![(x, y)] }),
        }
    }
    out
}

/// Public goods: mean contribution (share of the endowment) by round, per roster and arm.
pub fn contribution_by_round(conn: &Connection) -> anyhow::Result<Vec<Series>> {
    Ok(series(agora_records::reads::report::contribution_by_round(conn)?))
}

/// Naming game: share of matching interactions per roster, in bins of 50 interactions.
pub fn matching_over_time(conn: &Connection) -> anyhow::Result<Vec<Series>> {
    Ok(series(agora_records::reads::report::matching_over_time(conn)?))
}

/// The 11–20 game: per roster, the distribution of requests (11..=20) in baseline C0 runs.
pub fn request_distributions(conn: &Connection) -> anyhow::Result<Vec<RequestDistribution>> {
    let rows = agora_records::reads::report::request_counts(conn)?;
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

/// The store's studies, by name.
pub fn studies(conn: &Connection) -> anyhow::Result<Vec<Study>> {
    Ok(agora_records::reads::report::studies(conn)?)
}

/// The first 30 recorded replies of models (not people's form submissions), in run, seat, slot
/// and attempt order.
pub fn excerpts(conn: &Connection) -> anyhow::Result<Vec<Excerpt>> {
    Ok(agora_records::reads::report::excerpts(conn)?)
}

/// The study's models with their serving facts and calls.
pub fn models(conn: &Connection) -> anyhow::Result<Vec<Model>> {
    Ok(agora_records::reads::report::models(conn)?)
}

/// Per model, how often the recognition probe named the paradigm.
pub fn probes(conn: &Connection) -> anyhow::Result<Vec<Probes>> {
    Ok(agora_records::reads::report::probes(conn)?)
}

/// The first 40 naming-game runs, each with its first 200 interactions.
pub fn naming_runs(conn: &Connection) -> anyhow::Result<Vec<NamingRun>> {
    Ok(agora_records::reads::report::naming_runs(conn)?)
}

/// The tipping run whose committed fraction is closest to `fraction`, of the memory-window
/// agent where there is one, with all its interactions; none if the store has no tipping run.
pub fn tipping_run(conn: &Connection, fraction: f64) -> anyhow::Result<Option<TippingRun>> {
    Ok(agora_records::reads::report::tipping_run(conn, fraction)?)
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
    for (k, v) in agora_records::reads::report::society_slots(conn)? {
        slots.insert(k, v);
    }
    if slots.is_empty() {
        return Ok(Vec::new());
    }
    let rows = agora_records::reads::report::society_decisions(conn)?;
    // (model, served id, environment, role) → (share sum, value sum, decisions, fallbacks, runs).
    type Acc = (f64, f64, usize, usize, BTreeSet<i64>);
    let mut acc: BTreeMap<(String, String, String, String), Acc> = BTreeMap::new();
    let mut next: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for (run, seat, environment, role, value, scale) in rows {
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
