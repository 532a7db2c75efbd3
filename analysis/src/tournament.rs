//! The score table of a round-robin tournament (a block whose rosters are the pairs `A vs B` of
//! its strategies): per strategy, over its matches against the other strategies, the mean
//! payoff per round, its wins, draws and losses (a match won is one it ended with the larger
//! total payoff), and its cooperation (the prisoner's dilemma's share of cooperative decisions,
//! choice 0, as played: with noise, after the flip);
//! its payoff per round against a copy of itself beside them. Strategies are ranked by mean
//! payoff, as Axelrod's tournaments rank them by score. One table per study, block and cell
//! (the baseline and each noise level).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::AnalysisError;
use crate::outcomes::open;

/// The separator of a tournament pair's roster name.
const VS: &str = " vs ";

/// One strategy's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Score {
    /// Rank by mean payoff, 1 the highest.
    pub rank: usize,
    /// The strategy's label (its policy's name).
    pub strategy: String,
    /// Matches against the other strategies.
    pub matches: u64,
    /// Mean payoff per round over those matches.
    pub mean_payoff: f64,
    /// Matches it ended with the larger total payoff.
    pub wins: u64,
    /// Matches ended level.
    pub draws: u64,
    /// Matches it ended with the smaller total payoff.
    pub losses: u64,
    /// Share of its decisions that cooperate (prisoner's dilemma only).
    pub cooperation: Option<f64>,
    /// Mean payoff per round against a copy of itself, where it played one.
    pub self_payoff: Option<f64>,
}

/// One tournament's table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// The study.
    pub study: String,
    /// The block.
    pub block: String,
    /// The cell (`baseline`, `noise-0.05` …).
    pub cell: String,
    /// The game.
    pub environment: String,
    /// Runs (matches) in the table, self-play included.
    pub runs: u64,
    /// The rows, best first.
    pub rows: Vec<Score>,
}

#[derive(Default)]
struct Tally {
    matches: u64,
    payoff: f64,
    rounds: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    cooperative: f64,
    decisions: u64,
    self_payoff: f64,
    self_rounds: u64,
}

/// The tournament tables of a store (of one study, or of all): blocks whose runs are all
/// two-seat pairs named `A vs B`.
pub fn tables(path: &Path, study: Option<&str>) -> Result<Vec<Table>, AnalysisError> {
    let conn = open(path)?;
    let sql = |source| AnalysisError::Store { path: path.to_path_buf(), source };
    // Per run and seat: total payoff, rounds paid, mean decision value, decisions.
    type Seat = (i64, f64, i64, f64, i64);
    let mut runs: BTreeMap<(String, String, String, String), BTreeMap<String, (String, i64, Vec<Seat>)>> =
        BTreeMap::new();
    let mut not_pairs: std::collections::BTreeSet<(String, String)> = Default::default();
    for r in agora_records::reads::tournament::seats(&conn, study).map_err(sql)? {
        let (study, block, cell, env) = (r.study, r.block, r.cell, r.environment);
        let (roster, key, population) = (r.roster, r.run_key, r.population);
        if population != 2 || !roster.contains(VS) {
            not_pairs.insert((study.clone(), block.clone()));
        }
        let seat: Seat = (r.seat, r.total, r.rounds, r.cooperative, r.decisions);
        runs.entry((study, block, cell, env))
            .or_default()
            .entry(key)
            .or_insert_with(|| (roster, population, Vec::new()))
            .2
            .push(seat);
    }
    let mut out = Vec::new();
    for ((study, block, cell, environment), by_run) in runs {
        if not_pairs.contains(&(study.clone(), block.clone())) {
            continue;
        }
        let dilemma = environment == "prisoners-dilemma";
        let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
        for (roster, _, seats) in by_run.values() {
            let Some((a, b)) = roster.split_once(VS) else { continue };
            let [(_, pa, ra, ca, na), (_, pb, rb, cb, nb)] = seats[..] else { continue };
            if a == b {
                let t = tally.entry(a.to_string()).or_default();
                t.self_payoff += pa + pb;
                t.self_rounds += (ra + rb) as u64;
                continue;
            }
            for (me, (p, rounds, c, n), other) in [(a, (pa, ra, ca, na), pb), (b, (pb, rb, cb, nb), pa)] {
                let t = tally.entry(me.to_string()).or_default();
                t.matches += 1;
                t.payoff += p;
                t.rounds += rounds as u64;
                t.cooperative += c;
                t.decisions += n as u64;
                match p.partial_cmp(&other) {
                    Some(std::cmp::Ordering::Greater) => t.wins += 1,
                    Some(std::cmp::Ordering::Less) => t.losses += 1,
                    _ => t.draws += 1,
                }
            }
        }
        let mut rows: Vec<Score> = tally
            .into_iter()
            .map(|(strategy, t)| Score {
                rank: 0,
                strategy,
                matches: t.matches,
                mean_payoff: if t.rounds > 0 { t.payoff / t.rounds as f64 } else { f64::NAN },
                wins: t.wins,
                draws: t.draws,
                losses: t.losses,
                cooperation: (dilemma && t.decisions > 0).then(|| t.cooperative / t.decisions as f64),
                self_payoff: (t.self_rounds > 0).then(|| t.self_payoff / t.self_rounds as f64),
            })
            .collect();
        rows.sort_by(|x, y| y.mean_payoff.total_cmp(&x.mean_payoff).then_with(|| x.strategy.cmp(&y.strategy)));
        for (i, r) in rows.iter_mut().enumerate() {
            r.rank = i + 1;
        }
        out.push(Table { study, block, cell, environment, runs: by_run.len() as u64, rows });
    }
    Ok(out)
}

/// A table as text, for the terminal.
pub fn render(t: &Table) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ =
        writeln!(s, "== tournament {} / {} ({}, {}, {} matches) ==", t.block, t.cell, t.study, t.environment, t.runs);
    let _ = writeln!(
        s,
        "{:>4}  {:<24} {:>7} {:>9} {:>6} {:>6} {:>6} {:>11} {:>9}",
        "rank", "strategy", "matches", "payoff", "wins", "draws", "losses", "cooperation", "vs self"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    for r in &t.rows {
        let _ = writeln!(
            s,
            "{:>4}  {:<24} {:>7} {:>9.3} {:>6} {:>6} {:>6} {:>11} {:>9}",
            r.rank,
            r.strategy,
            r.matches,
            r.mean_payoff,
            r.wins,
            r.draws,
            r.losses,
            opt(r.cooperation),
            opt(r.self_payoff)
        );
    }
    s
}
