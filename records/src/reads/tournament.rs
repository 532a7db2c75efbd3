//! What the tournament tables read: per run and seat, the payoffs and the decisions.

use rusqlite::Connection;
use serde::Deserialize;

/// One seat of one run, as the tournament tables read it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TournamentSeat {
    /// The run's study.
    pub study: String,
    /// Its block.
    pub block: String,
    /// Its cell.
    pub cell: String,
    /// Its environment.
    pub environment: String,
    /// Its roster (`A vs B` for a pair).
    pub roster: String,
    /// Its key.
    pub run_key: String,
    /// Its number of agents.
    pub population: i64,
    /// The seat.
    pub seat: i64,
    /// The seat's total payoff.
    #[serde(deserialize_with = "crate::rows::not_null")]
    pub total: f64,
    /// The rounds it was paid.
    pub rounds: i64,
    /// Its decisions of value 0 (cooperation in the dilemma).
    #[serde(deserialize_with = "crate::rows::not_null")]
    pub cooperative: f64,
    /// Its decisions.
    pub decisions: i64,
}

/// Per run and seat with payoffs (of one study, or of all): total payoff, rounds paid,
/// cooperative decisions, decisions; by study, block, cell, run key and seat.
pub fn seats(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Vec<TournamentSeat>> {
    let mut st = conn.prepare(
        "WITH pay AS (SELECT run_id, seat, SUM(payoff) AS total, COUNT(*) AS rounds FROM payoffs GROUP BY run_id, seat),
                  dec AS (SELECT run_id, seat, SUM(CASE WHEN value = 0 THEN 1.0 ELSE 0.0 END) AS coop, COUNT(*) AS n
                          FROM decisions GROUP BY run_id, seat)
             SELECT r.study, r.block, r.cell, r.environment, r.roster, r.run_key, r.population,
                    p.seat, p.total, p.rounds, IFNULL(d.coop, 0) AS cooperative, IFNULL(d.n, 0) AS decisions
             FROM runs r JOIN pay p USING (run_id) LEFT JOIN dec d ON d.run_id = r.run_id AND d.seat = p.seat
             WHERE (?1 IS NULL OR r.study = ?1)
             ORDER BY r.study, r.block, r.cell, r.run_key, p.seat",
    )?;
    crate::rows::by_name(&mut st, [study])
}
