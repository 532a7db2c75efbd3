//! The transcript audit's tables as the certification ladder reads them: the coded responses
//! (`audit_responses`) with their seats' roles (`decisions`), the coder-validation gate
//! (`audit_gate`), and the dependency and intervention estimates (`audit_dependency`,
//! `audit_faithfulness`). The audit writes them; these are only reads.

use rusqlite::{params, Connection};
use serde::Deserialize;

use super::{has_column, has_columns, has_table};

/// The columns of `audit_gate` that record the human labellers (their number, their κ with
/// each other, the sentences two or more labelled and those without a majority, and the
/// thresholds applied): a store written before Agora recorded them lacks them.
pub const GATE_HUMAN_COLUMNS: [&str; 6] =
    ["labellers", "human_kappa", "human_sentences", "human_disagreements", "min_human_kappa", "max_human_disagreement"];

pub use crate::families::audit::gate::{CoderAgreement, GateRow};
pub use crate::families::audit::{CoderKey, CoderKeyRef};

/// The stored gate decisions of a coder and codebook, by model, each made into a `T` by `f`
/// (whose error ends the read, as a row's own error does); none where the store has no
/// `audit_gate`. The columns [`GATE_HUMAN_COLUMNS`] a store lacks read NULL.
pub fn gate<T>(
    conn: &Connection,
    key: CoderKeyRef<'_>,
    f: impl FnMut(GateRow) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    if !has_table(conn, "audit_gate")? {
        return Ok(Vec::new());
    }
    let mut humans = Vec::new();
    for c in GATE_HUMAN_COLUMNS {
        humans.push(if has_column(conn, "audit_gate", c)? { c.to_string() } else { format!("NULL AS {c}") });
    }
    let mut st = conn.prepare(&format!(
        "SELECT model, status, kappa, n, responses, min_kappa, recall_json, coder_failed, coder_of, reason, {}
         FROM audit_gate
         WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4
         ORDER BY model",
        humans.join(", ")
    ))?;
    let rows: Vec<GateRow> = crate::rows::by_name(&mut st, params![key.coder, key.codebook, key.version, key.sha256])?;
    rows.into_iter().map(f).collect()
}

/// The roles of each audited seat's decisions, in step order, by (run, seat): the decisions of
/// the runs `audit_responses` holds; none where the store has no `decisions`.
pub fn audited_roles(conn: &Connection) -> rusqlite::Result<Vec<(i64, i64, String)>> {
    if !has_table(conn, "decisions")? {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT d.run_id, d.seat, d.role FROM decisions d
             WHERE d.run_id IN (SELECT DISTINCT run_id FROM audit_responses) ORDER BY d.run_id, d.seat, d.step",
    )?;
    let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)))?;
    rows.collect()
}

/// One coded response of `audit_responses` (one whose coder output validated).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CodedRow {
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The arm.
    pub arm: String,
    /// The perturbation cell.
    pub cell: String,
    /// The run.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The seat's decision it answers (0-based, in step order).
    pub slot: i64,
    /// The coder and codebook.
    #[serde(flatten)]
    pub key: CoderKey,
    /// The codes it states, as stored (a JSON object of code to 0 or 1).
    pub values_json: String,
}

/// The coded responses (of one study, or of all), by run, seat, slot, coder and codebook.
pub fn coded_responses(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Vec<CodedRow>> {
    let mut st = conn.prepare(
        "SELECT a.model, a.environment, a.arm, a.run_id, a.seat, a.slot, a.coder, a.codebook, a.codebook_version,
                a.codebook_sha256, a.values_json, a.cell
         FROM audit_responses a
         WHERE a.values_json IS NOT NULL AND (?1 IS NULL OR a.study = ?1)
         ORDER BY a.run_id, a.seat, a.slot, a.coder, a.codebook, a.codebook_version, a.codebook_sha256",
    )?;
    crate::rows::by_name(&mut st, params![study])
}

/// One `lpm-fe` row of `audit_dependency`.
#[derive(Clone, Debug, PartialEq)]
pub struct DependencyEstimate {
    /// The coder and codebook.
    pub key: CoderKey,
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The arm of the decisions it rests on (`None`: a store written before rows carried it).
    pub arm: Option<String>,
    /// The cell of the decisions it rests on (`None`: a store written before rows carried it).
    pub cell: Option<String>,
    /// The role.
    pub role: String,
    /// The indicator's name.
    pub indicator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, `not identified`, `not estimated` or `refused`.
    pub status: String,
    /// Why a row has no estimate.
    pub reason: String,
    /// The slope.
    pub coef: Option<f64>,
    /// Lower end of its 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub ci_high: Option<f64>,
    /// Its two-sided p.
    pub p: Option<f64>,
    /// Prompts in the fit.
    pub n_prompts: usize,
}

/// The `lpm-fe` dependency estimates of a study's scope (or of all) and of the whole store, the
/// study's first, then by coder, codebook, model, environment, role and value; `None` where the
/// store has no `audit_dependency`. Read through the table's one reader
/// ([`crate::families::audit::dependency::stored`]).
pub fn dependency(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Option<Vec<DependencyEstimate>>> {
    if !has_table(conn, "audit_dependency")? {
        return Ok(None);
    }
    let scope = study.unwrap_or("");
    let mut stored: Vec<_> = crate::families::audit::dependency::stored(conn)?
        .into_iter()
        .filter(|e| e.row.estimator == "lpm-fe" && (study.is_none() || e.scope == scope || e.scope.is_empty()))
        .collect();
    // The study's own estimates first.
    type Order<'e> = (bool, &'e str, &'e str, &'e str, &'e str, &'e str, &'e str);
    fn order<'e>(e: &'e crate::families::audit::dependency::StoredEstimate, scope: &str) -> Order<'e> {
        let (k, r, p) = (&e.key, &e.row, &e.row.position);
        (e.scope != scope, &k.coder, &k.codebook, &p.model, &p.environment, &p.role, &r.value)
    }
    stored.sort_by(|a, b| order(a, scope).cmp(&order(b, scope)));
    let rows = stored
        .into_iter()
        .map(|e| {
            let (d, placed) = (e.row, e.placed);
            let p = d.position;
            DependencyEstimate {
                key: e.key,
                model: p.model,
                environment: p.environment,
                arm: placed.then_some(p.arm),
                cell: placed.then_some(p.cell),
                role: p.role,
                indicator: d.indicator,
                value: d.value,
                status: d.status,
                reason: d.reason,
                coef: d.fit.coef,
                ci_low: d.fit.ci_low,
                ci_high: d.fit.ci_high,
                p: d.fit.p,
                n_prompts: d.n_prompts,
            }
        })
        .collect();
    Ok(Some(rows))
}

/// One estimate of `audit_faithfulness`: the intervention effect τ of a value on the indicator.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct InterventionEstimate {
    /// The sample seed of `agora audit prefill` that wrote it.
    pub sample_seed: String,
    /// The coder and codebook.
    #[serde(flatten)]
    pub key: CoderKey,
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The arm of the decisions it rests on (`None`: a store written before rows carried it).
    pub arm: Option<String>,
    /// The cell of the decisions it rests on (`None`: a store written before rows carried it).
    pub cell: Option<String>,
    /// The insert arm's design: `source` (the model's reasoning kept, one sentence inserted) or
    /// `replace` (its own sentences of the value replaced by one); `None` before rows carried it.
    pub design: Option<String>,
    /// The role.
    pub role: String,
    /// The indicator's name.
    pub indicator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, or why there is no estimate (`no prefill`, `refused: …`, …).
    pub status: String,
    /// τ: the indicator's mean with the value inserted minus with it deleted.
    pub tau: Option<f64>,
    /// Its standard error over states.
    pub se: Option<f64>,
    /// Lower end of its 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub ci_high: Option<f64>,
    /// States (prompts) with an answer in both arms.
    pub n_states: usize,
}

/// Every stored intervention estimate (every sample seed), by sample seed, coder, codebook,
/// model, environment, role and value; `None` where the store has no `audit_faithfulness`.
pub fn intervention(conn: &Connection) -> rusqlite::Result<Option<Vec<InterventionEstimate>>> {
    if !has_table(conn, "audit_faithfulness")? {
        return Ok(None);
    }
    let restricted = has_columns(conn, "audit_faithfulness", &["arm", "cell", "design"])?;
    let cols = if restricted { "arm, cell, design" } else { "NULL AS arm, NULL AS cell, NULL AS design" };
    let mut st = conn.prepare(&format!(
        "SELECT coder, codebook, codebook_version, codebook_sha256, model, environment, role, indicator, value,
                    status, tau, ci_low, ci_high, sample_seed, se, MAX(n_states, 0) AS n_states, {cols}
             FROM audit_faithfulness
             ORDER BY sample_seed, coder, codebook, model, environment, role, value"
    ))?;
    crate::rows::by_name(&mut st, []).map(Some)
}
