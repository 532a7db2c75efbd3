//! The intervention estimate's reads and writes: the observational estimates τ̂ is read
//! beside (`audit_dependency`), the prefill calls (`audit_prefill`, `agora audit prefill`) and
//! the estimates (`audit_faithfulness`).

use std::collections::BTreeMap;

use rusqlite::{params, Connection};
use serde::Serialize;

use super::coding::drop_if_lacking;
use super::{has_table, make, CoderKeyRef, Position, FAITHFULNESS, PREFILL};

/// The observational estimate beside which τ̂ is read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observational {
    /// φ̂.
    pub phi: f64,
    /// Lower end of its 95 % interval.
    pub ci_low: f64,
    /// Upper end of its 95 % interval.
    pub ci_high: f64,
}

/// The design of τ's insert arm (both are estimated; the ladder reads [`Design::Source`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// The source's (§240.10.3: "the reasoning with one sentence of the target code
    /// inserted"): the model's natural reasoning kept identical, with one sentence of the value
    /// appended.
    Source,
    /// This project's earlier variant: the model's own sentences of the value replaced by one
    /// sentence of the codebook's, so that the arms differ by that sentence alone.
    Replace,
}

impl Design {
    /// Both designs, in the order rows are written.
    pub const ALL: [Design; 2] = [Design::Source, Design::Replace];

    /// The design's name in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Design::Source => "source",
            Design::Replace => "replace",
        }
    }
}

/// The key of an observational estimate: (its position, value).
pub type ObservationalKey = (Position, String);

/// Drops an `audit_faithfulness` or `audit_prefill` of an older layout (without arm, cell and
/// design, or edit). Returns the tables dropped.
pub fn drop_stale(conn: &Connection) -> rusqlite::Result<Vec<&'static str>> {
    let mut dropped = Vec::new();
    for (table, columns) in
        [("audit_faithfulness", &["arm", "cell", "design"][..]), ("audit_prefill", &["edit", "arm", "cell"][..])]
    {
        if drop_if_lacking(conn, table, columns)? {
            dropped.push(table);
        }
    }
    Ok(dropped)
}

/// The store's LPM dependency estimates of a coder and codebook: (position, value) → φ̂ with its interval (estimated rows only; the first scope in order).
/// An `audit_dependency` of the older layout, without arm and cell, gives none.
pub fn observational(
    conn: &Connection,
    key: CoderKeyRef<'_>,
) -> rusqlite::Result<BTreeMap<ObservationalKey, Observational>> {
    let mut out = BTreeMap::new();
    if !has_table(conn, "audit_dependency")? {
        return Ok(out);
    }
    let keyed: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('audit_dependency') WHERE name IN ('arm', 'cell')",
        [],
        |r| r.get(0),
    )?;
    if keyed < 2 {
        return Ok(out);
    }
    let mut st = conn.prepare(
        "SELECT model, environment, arm, cell, role, value, coef, ci_low, ci_high FROM audit_dependency
         WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3 AND codebook_sha256 = ?4
           AND estimator = 'lpm-fe' AND status = 'estimated' AND coef IS NOT NULL
         ORDER BY scope, model, environment, arm, cell, role, value",
    )?;
    let rows = st.query_map(params![key.coder, key.codebook, key.version, key.sha256], |r| {
        Ok((
            (Position::read(r, 0)?, r.get(5)?),
            Observational { phi: r.get(6)?, ci_low: r.get(7)?, ci_high: r.get(8)? },
        ))
    })?;
    for row in rows {
        let (k, o) = row?;
        out.entry(k).or_insert(o);
    }
    Ok(out)
}

/// Makes `audit_prefill` and `audit_faithfulness` where absent.
pub fn make_tables(conn: &Connection) -> rusqlite::Result<()> {
    make(conn, PREFILL)?;
    make(conn, FAITHFULNESS)
}

/// The run an estimate belongs to: its sample seed, coder and codebook.
#[derive(Clone, Copy, Debug)]
pub struct EstimateOf<'a> {
    /// The sample's seed.
    pub sample_seed: u64,
    /// The coder and codebook.
    pub key: CoderKeyRef<'a>,
}

/// One estimate of τ for one value, model, environment, arm, cell, role and design.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaithfulnessRow {
    /// The model, environment, block arm and perturbation cell of the decisions, and their role.
    #[serde(flatten)]
    pub position: Position,
    /// The insert arm's design.
    pub design: Design,
    /// The action indicator's name.
    pub indicator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, `not estimated`, `refused` or `no prefill`.
    pub status: String,
    /// Why a row has no estimate (empty for an estimate).
    pub reason: String,
    /// States in the estimate (the clusters).
    pub n_states: usize,
    /// Decisions in the estimate.
    pub n_decisions: usize,
    /// Of them, decisions whose own reasoning stated the value (the delete arm took their own
    /// sentences out).
    pub n_deleted: usize,
    /// Of them, decisions whose reasoning did not state it (the arms differ by the inserted
    /// sentence alone, in both designs).
    pub n_inserted: usize,
    /// τ̂.
    pub tau: Option<f64>,
    /// Its standard error.
    pub se: Option<f64>,
    /// Lower end of the 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of the 95 % interval.
    pub ci_high: Option<f64>,
    /// The observational estimate, where the store holds one.
    pub observational: Option<Observational>,
    /// Where the two disagree (empty where they agree or cannot be compared).
    pub disagreement: String,
    /// The validation gate's decision for the model.
    pub validation: String,
}

impl FaithfulnessRow {
    /// The row of a position, a design, an indicator and a value before anything is counted,
    /// estimated or compared: no states, no estimate, no observational estimate, every text
    /// empty.
    pub fn empty(position: Position, design: Design, indicator: &str, value: &str) -> FaithfulnessRow {
        FaithfulnessRow {
            position,
            design,
            indicator: indicator.to_string(),
            value: value.to_string(),
            status: String::new(),
            reason: String::new(),
            n_states: 0,
            n_decisions: 0,
            n_deleted: 0,
            n_inserted: 0,
            tau: None,
            se: None,
            ci_low: None,
            ci_high: None,
            observational: None,
            disagreement: String::new(),
            validation: String::new(),
        }
    }
}

/// Writes estimates into `audit_faithfulness` (replacing rows of the same seed, coder,
/// codebook, model, environment, arm, cell, role, design and value), making the tables where
/// absent. The caller has dropped an older layout ([`drop_stale`]).
pub fn write<'a>(
    conn: &Connection,
    of: EstimateOf<'_>,
    rows: impl IntoIterator<Item = &'a FaithfulnessRow>,
) -> rusqlite::Result<()> {
    make_tables(conn)?;
    let mut st = conn.prepare(
        "INSERT OR REPLACE INTO audit_faithfulness (sample_seed, coder, codebook, codebook_version, codebook_sha256,
            model, environment, arm, cell, role, design, indicator, value, status, reason, n_decisions, n_deleted,
            n_inserted, tau, se, ci_low, ci_high, phi, phi_ci_low, phi_ci_high, disagreement, validation, n_states)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            ?23, ?24, ?25, ?26, ?27, ?28)",
    )?;
    for r in rows {
        st.execute(params![
            of.sample_seed.to_string(),
            of.key.coder,
            of.key.codebook,
            of.key.version,
            of.key.sha256,
            r.position.model,
            r.position.environment,
            r.position.arm,
            r.position.cell,
            r.position.role,
            r.design.as_str(),
            r.indicator,
            r.value,
            r.status,
            r.reason,
            r.n_decisions as i64,
            r.n_deleted as i64,
            r.n_inserted as i64,
            r.tau,
            r.se,
            r.ci_low,
            r.ci_high,
            r.observational.as_ref().map(|o| o.phi),
            r.observational.as_ref().map(|o| o.ci_low),
            r.observational.as_ref().map(|o| o.ci_high),
            r.disagreement,
            r.validation,
            r.n_states as i64
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_serialises_its_position_first_among_its_columns() {
        let position = crate::families::audit::at("a", "baseline", "step-by-step");
        let row = FaithfulnessRow {
            status: "estimated".into(),
            n_states: 3,
            tau: Some(0.5),
            observational: Some(Observational { phi: 0.25, ci_low: 0.0, ci_high: 0.5 }),
            validation: "validated".into(),
            ..FaithfulnessRow::empty(position, Design::Source, "cooperate", "care")
        };
        let json = serde_json::to_string(&row).expect("json");
        assert_eq!(
            json,
            "{\"model\":\"a\",\"environment\":\"pd\",\"arm\":\"baseline\",\"cell\":\"step-by-step\",\"role\":\"player\",\
             \"design\":\"source\",\"indicator\":\"cooperate\",\"value\":\"care\",\"status\":\"estimated\",\"reason\":\"\",\
             \"n_states\":3,\"n_decisions\":0,\"n_deleted\":0,\"n_inserted\":0,\"tau\":0.5,\"se\":null,\"ci_low\":null,\
             \"ci_high\":null,\"observational\":{\"phi\":0.25,\"ci_low\":0.0,\"ci_high\":0.5},\"disagreement\":\"\",\
             \"validation\":\"validated\"}"
        );
    }
}
