//! The requirements' verdicts (`audit_requirements`, `agora audit requirements`).

use rusqlite::{params, Connection};
use serde::Serialize;

use super::{make, REQUIREMENTS};

/// One verdict: a requirement on one model (a row of `audit_requirements`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The requirement's name.
    pub requirement: String,
    /// The model.
    pub model: String,
    /// `at_least`, `at_most` or `equivalent`.
    pub kind: String,
    /// What the statistic is (`share of fairness in prisoners-dilemma`).
    pub statistic: String,
    /// θ̂ (directional) or the difference (invariance).
    pub estimate: Option<f64>,
    /// Its standard error.
    pub se: Option<f64>,
    /// Lower one-sided 1 − α bound (the 1 − 2α interval's lower end).
    pub low: Option<f64>,
    /// Upper one-sided 1 − α bound.
    pub high: Option<f64>,
    /// The bound, or the margin Δ.
    pub bound: f64,
    /// p_TOST (invariance).
    pub p_tost: Option<f64>,
    /// `pass`, `fail`, `not estimable` or `refused`.
    pub verdict: String,
    /// Why, and what it rests on.
    pub reason: String,
    /// Responses (or replicates) it rests on.
    pub n: Option<usize>,
    /// Distinct prompts among them.
    pub prompts: Option<usize>,
    /// Clusters of the standard error.
    pub clusters: Option<usize>,
    /// Responses per arm a next audit needs for this bound (design effect included).
    pub planned_n: Option<u64>,
    /// How the plan was made.
    pub planning: String,
}

/// Writes the verdicts into `audit_requirements`, replacing its rows, in one transaction.
pub fn write(conn: &mut Connection, verdicts: &[Verdict]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REQUIREMENTS)?;
    tx.execute("DELETE FROM audit_requirements", [])?;
    {
        let mut st = tx.prepare(
            "INSERT INTO audit_requirements (requirement, model, kind, estimate, low, high, bound, verdict, reason, n,
                planned_n) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        for v in verdicts {
            st.execute(params![
                v.requirement,
                v.model,
                v.kind,
                v.estimate,
                v.low,
                v.high,
                v.bound,
                v.verdict,
                v.reason,
                v.n.map(|n| n as i64),
                v.planned_n.map(|n| n as i64),
            ])?;
        }
    }
    tx.commit()
}
