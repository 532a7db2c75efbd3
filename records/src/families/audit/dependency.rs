//! The dependency estimate's reads and writes: the replicates asked again (`audit_replicates`,
//! as `agora audit replicates` wrote them), their codes (`audit_replicate_responses`,
//! `audit_replicate_sentences`) and the estimates (`audit_dependency`).

use rusqlite::{params, Connection, Params, ToSql};
use serde::{Deserialize, Serialize};

use super::coding::{drop_if_lacking, CodebookRecord};
use super::{has_table, make, DEPENDENCY, REPLICATE_CODES, STUDY_SCOPE};
use super::{CoderKey, CoderKeyRef, Position};
use crate::families::has_column;

/// A value's estimated coefficient: φ̂ (the LPM slope, or the logit's average marginal effect)
/// with its inference; each part none where it was not estimated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coefficient {
    /// φ̂.
    pub coef: Option<f64>,
    /// Its CR1 standard error.
    pub se: Option<f64>,
    /// t (LPM, on G − 1 df) or z (logit).
    pub stat: Option<f64>,
    /// Two-sided p.
    pub p: Option<f64>,
    /// Lower end of the 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of the 95 % interval.
    pub ci_high: Option<f64>,
}

/// One estimate of one value, by one estimator, for one model, environment, arm, cell and role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DependencyRow {
    /// The model, environment, arm and cell of the replicated decisions, and their role.
    #[serde(flatten)]
    pub position: Position,
    /// The action indicator's name.
    pub indicator: String,
    /// `lpm-fe` (the linear probability model with prompt fixed effects) or `logit-ame`.
    pub estimator: String,
    /// The value code.
    pub value: String,
    /// `estimated`, `not identified`, `not estimated` or `refused`.
    pub status: String,
    /// Why a row has no estimate (empty for an estimate).
    pub reason: String,
    /// The estimate (none where there is no estimate).
    #[serde(flatten)]
    pub fit: Coefficient,
    /// Prompts (fixed effects and clusters) in the fit.
    pub n_prompts: usize,
    /// Replicates (observations) in the fit.
    pub n_replicates: usize,
    /// Prompts within which the value varies across replicates (none where refused).
    pub prompts_varying: Option<usize>,
    /// The validation gate's decision for the model (`validated: …`, `refused: …`).
    pub validation: String,
}

/// A replicate as the dependency estimate reads it, with its run's environment, arm and cell.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ReplicateRow {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The sample's seed.
    pub sample_seed: String,
    /// The replicate's number.
    pub replicate: i64,
    /// The original decision's response id.
    pub response_id: String,
    /// The model, the run's environment, arm and cell, and the role.
    #[serde(flatten)]
    pub position: Position,
    /// The reply.
    pub raw_reply: String,
    /// The parsed action, if any.
    pub action: Option<String>,
    /// How it parsed.
    pub parse_status: String,
    /// The answer field asked for.
    pub answer_field: String,
    /// The action space, JSON.
    pub space_json: String,
}

/// The replicates of the runs of `study` (every run where none), in run, seat, slot, sample
/// and replicate order.
pub fn read_replicates(conn: &Connection, study: Option<&str>) -> rusqlite::Result<Vec<ReplicateRow>> {
    let mut st = conn.prepare(
        "SELECT q.run_id, q.seat, q.slot, q.sample_seed, q.replicate, q.response_id, q.model, r.environment, r.arm,
                r.cell, q.role, q.raw_reply, q.action, q.parse_status, q.answer_field, q.space_json
         FROM audit_replicates q JOIN runs r ON r.run_id = q.run_id
         WHERE (?1 IS NULL OR r.study = ?1)
         ORDER BY q.run_id, q.seat, q.slot, q.sample_seed, q.replicate",
    )?;
    crate::rows::by_name(&mut st, [study])
}

/// The columns an `audit_dependency` of the current layout has and an older one lacks.
pub const KEYED_BY: [&str; 2] = ["arm", "cell"];

/// Drops an `audit_dependency` written before its rows were kept apart per arm and cell (it
/// lacks those columns). Returns whether it dropped one.
pub fn drop_stale(conn: &Connection) -> rusqlite::Result<bool> {
    drop_if_lacking(conn, "audit_dependency", &KEYED_BY)
}

/// One sentence of a coded replicate (`audit_replicate_sentences`).
#[derive(Clone, Copy, Debug)]
pub struct ReplicateSentenceRecord<'a> {
    /// Its index in the replicate.
    pub sentence_index: usize,
    /// Its segment's kind.
    pub segment: &'a str,
    /// Its segment's source.
    pub source: &'a str,
    /// The sentence.
    pub text: &'a str,
    /// Its code.
    pub code: Option<&'a str>,
}

/// What is written of one coded replicate (`audit_replicate_responses`, with its sentences).
#[derive(Clone, Debug)]
pub struct CodedReplicateRecord<'a> {
    /// The run's row id.
    pub run_id: i64,
    /// The seat.
    pub seat: i64,
    /// The slot.
    pub slot: i64,
    /// The sample's seed.
    pub sample_seed: &'a str,
    /// The replicate's number.
    pub replicate: i64,
    /// The model.
    pub model: &'a str,
    /// The run's environment.
    pub environment: &'a str,
    /// The role.
    pub role: &'a str,
    /// How it parsed.
    pub parse_status: &'a str,
    /// The parsed action, if any.
    pub action: Option<&'a str>,
    /// Whether it has pre-action reasoning.
    pub reasoning_present: bool,
    /// The reasoning segments' sources.
    pub reasoning_sources: String,
    /// Reasoning sentences.
    pub n_sentences: usize,
    /// The coder's error, if its output failed validation.
    pub coder_error: Option<&'a str>,
    /// The value vector, a JSON object (none where nothing was coded).
    pub values_json: Option<String>,
    /// The sentences.
    pub sentences: Vec<ReplicateSentenceRecord<'a>>,
}

/// The parameters of a row that starts with `key`'s columns and goes on with `rest`'s.
fn keyed<'a>(key: &'a [&'a dyn ToSql], rest: &'a [&'a dyn ToSql]) -> impl Params + 'a {
    rusqlite::params_from_iter(key.iter().chain(rest))
}

/// Writes the codes of the replicates of `study` (every run where none) by `coder` with
/// `codebook`, replacing that coder's and codebook's, in one transaction; an `audit_dependency`
/// of an older layout is dropped and the current one made.
pub fn write_coded<'a>(
    conn: &mut Connection,
    codebook: CodebookRecord<'_>,
    coder: &str,
    study: Option<&str>,
    coded: impl IntoIterator<Item = CodedReplicateRecord<'a>>,
) -> rusqlite::Result<()> {
    let cb = codebook;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REPLICATE_CODES)?;
    drop_stale(&tx)?;
    make(&tx, DEPENDENCY)?;
    let scope = STUDY_SCOPE;
    let same = "coder = ?2 AND codebook = ?3 AND codebook_version = ?4 AND codebook_sha256 = ?5";
    for table in ["audit_replicate_responses", "audit_replicate_sentences"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE {scope} AND {same}"),
            params![study, coder, cb.name, cb.version, cb.sha256],
        )?;
    }
    {
        let mut resp = tx.prepare(
            "INSERT INTO audit_replicate_responses (run_id, seat, slot, sample_seed, replicate, coder, codebook,
                codebook_version, codebook_sha256, model, environment, role, parse_status, action, reasoning_present,
                reasoning_sources, n_sentences, coder_error, values_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )?;
        let mut sent = tx.prepare(
            "INSERT INTO audit_replicate_sentences (run_id, seat, slot, sample_seed, replicate, coder, codebook,
                codebook_version, codebook_sha256, sentence_index, segment, source, text, code)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for r in coded {
            // The replicate's key and the coder's: the first columns of both tables.
            let key =
                params![r.run_id, r.seat, r.slot, r.sample_seed, r.replicate, coder, cb.name, cb.version, cb.sha256];
            resp.execute(keyed(
                key,
                params![
                    r.model,
                    r.environment,
                    r.role,
                    r.parse_status,
                    r.action,
                    r.reasoning_present,
                    r.reasoning_sources,
                    r.n_sentences,
                    r.coder_error,
                    r.values_json
                ],
            ))?;
            for x in &r.sentences {
                sent.execute(keyed(key, params![x.sentence_index, x.segment, x.source, x.text, x.code]))?;
            }
        }
    }
    tx.commit()
}

/// Replaces the dependency estimates of a study scope (empty: every run), coder and codebook
/// with `rows`, in one transaction; a non-finite number is written NULL.
pub fn write_estimates(
    conn: &mut Connection,
    scope: &str,
    key: CoderKeyRef<'_>,
    rows: &[DependencyRow],
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, REPLICATE_CODES)?;
    drop_stale(&tx)?;
    make(&tx, DEPENDENCY)?;
    tx.execute(
        "DELETE FROM audit_dependency WHERE scope = ?1 AND coder = ?2 AND codebook = ?3 AND codebook_version = ?4
            AND codebook_sha256 = ?5",
        params![scope, key.coder, key.codebook, key.version, key.sha256],
    )?;
    {
        let mut st = tx.prepare(
            "INSERT INTO audit_dependency (scope, coder, codebook, codebook_version, codebook_sha256, model, environment,
                arm, cell, role, indicator, estimator, value, status, reason, coef, se, stat, p, ci_low, ci_high,
                n_prompts, n_replicates, prompts_varying, validation)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25)",
        )?;
        for r in rows {
            st.execute(params![
                scope,
                key.coder,
                key.codebook,
                key.version,
                key.sha256,
                r.position.model,
                r.position.environment,
                r.position.arm,
                r.position.cell,
                r.position.role,
                r.indicator,
                r.estimator,
                r.value,
                r.status,
                r.reason,
                r.fit.coef.filter(|v| v.is_finite()),
                r.fit.se.filter(|v| v.is_finite()),
                r.fit.stat.filter(|v| v.is_finite()),
                r.fit.p.filter(|v| v.is_finite()),
                r.fit.ci_low.filter(|v| v.is_finite()),
                r.fit.ci_high.filter(|v| v.is_finite()),
                r.n_prompts,
                r.n_replicates,
                r.prompts_varying,
                r.validation
            ])?;
        }
    }
    tx.commit()
}

/// One row of `audit_dependency` as stored: the study scope, coder and codebook it was
/// estimated under, and the estimate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredEstimate {
    /// The study scope (empty: every run).
    pub scope: String,
    /// The coder and codebook.
    #[serde(flatten)]
    pub key: CoderKey,
    /// Whether the row names its arm and cell: a table written before the estimates were kept
    /// apart per arm and cell lacks them, and its rows read them empty.
    #[serde(skip)]
    pub placed: bool,
    /// The estimate.
    #[serde(flatten)]
    pub row: DependencyRow,
}

/// Every row of `audit_dependency` (none where the store has no such table), in scope, coder,
/// codebook, model, environment, arm, cell, role, estimator and value order: the one reader of
/// the table, for the audit, the ladder and the report. A column an older layout lacks reads
/// empty (arm, cell) or unknown (the interval's parts, `prompts_varying`).
pub fn stored(conn: &Connection) -> rusqlite::Result<Vec<StoredEstimate>> {
    if !has_table(conn, "audit_dependency")? {
        return Ok(Vec::new());
    }
    let placed = KEYED_BY
        .iter()
        .try_fold(true, |all, c| Ok::<_, rusqlite::Error>(all && has_column(conn, "audit_dependency", c)?))?;
    let or_null = |column: &'static str| -> rusqlite::Result<String> {
        Ok(if has_column(conn, "audit_dependency", column)? { column.into() } else { format!("NULL AS {column}") })
    };
    let (arm, cell) = if placed { ("arm", "cell") } else { ("'' AS arm", "'' AS cell") };
    let (se, stat, p, varying) = (or_null("se")?, or_null("stat")?, or_null("p")?, or_null("prompts_varying")?);
    let (arm_order, cell_order) = if placed { ("arm", "cell") } else { ("''", "''") };
    let mut st = conn.prepare(&format!(
        "SELECT scope, coder, codebook, codebook_version, codebook_sha256, model, environment, {arm}, {cell}, role,
                indicator, estimator, value, status, reason, coef, {se}, {stat}, {p}, ci_low, ci_high, n_prompts,
                n_replicates, {varying}, validation
         FROM audit_dependency
         ORDER BY scope, coder, codebook, codebook_version, codebook_sha256, model, environment, {arm_order},
              {cell_order}, role, estimator, value"
    ))?;
    let mut rows: Vec<StoredEstimate> = crate::rows::by_name(&mut st, [])?;
    for r in &mut rows {
        r.placed = placed;
    }
    Ok(rows)
}

/// The dependency estimates of a study scope (empty: every run), coder and codebook in
/// `audit_dependency`, in model, environment, arm, cell, role, estimator and value order; none
/// where the table does not exist.
pub fn read_estimates(conn: &Connection, scope: &str, key: CoderKeyRef<'_>) -> rusqlite::Result<Vec<DependencyRow>> {
    Ok(stored(conn)?.into_iter().filter(|e| e.scope == scope && e.key.borrowed() == key).map(|e| e.row).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str, arm: &str, value: &str) -> DependencyRow {
        DependencyRow {
            position: crate::families::audit::at(model, arm, "baseline"),
            indicator: "cooperate".into(),
            estimator: "lpm-fe".into(),
            value: value.into(),
            status: "estimated".into(),
            reason: String::new(),
            fit: Coefficient {
                coef: Some(0.25),
                se: Some(0.1),
                stat: Some(2.5),
                p: Some(0.02),
                ci_low: Some(0.05),
                ci_high: Some(0.45),
            },
            n_prompts: 8,
            n_replicates: 40,
            prompts_varying: Some(5),
            validation: "validated".into(),
        }
    }

    #[test]
    fn one_reader_gives_every_row_with_its_key_and_the_writers_estimates_back() {
        let mut conn = Connection::open_in_memory().expect("db");
        let cb = CoderKeyRef { coder: "lexicon/1", codebook: "default", version: 1, sha256: "abc" };
        let rows = [row("b", "baseline", "fairness"), row("a", "punishment", "care"), row("a", "baseline", "care")];
        write_estimates(&mut conn, "", cb, &rows).expect("write");
        write_estimates(&mut conn, "s1", cb, &rows[..1]).expect("write");
        let all = stored(&conn).expect("read");
        assert_eq!(all.len(), 4);
        assert!(all.iter().all(|e| e.placed && e.key.coder == "lexicon/1" && e.key.version == 1));
        let order: Vec<(&str, &str, &str)> = all
            .iter()
            .map(|e| (e.scope.as_str(), e.row.position.model.as_str(), e.row.position.arm.as_str()))
            .collect();
        assert_eq!(
            order,
            [("", "a", "baseline"), ("", "a", "punishment"), ("", "b", "baseline"), ("s1", "b", "baseline")]
        );
        assert_eq!(all[0].row, rows[2], "every column read back as written");
        let mine = read_estimates(&conn, "s1", cb).expect("read");
        assert_eq!(mine, [rows[0].clone()]);
        assert!(read_estimates(&conn, "s1", CoderKeyRef { version: 2, ..cb }).expect("read").is_empty());
    }

    #[test]
    fn an_estimate_serialises_its_coefficient_among_its_columns() {
        let json = serde_json::to_string(&row("a", "baseline", "care")).expect("json");
        assert_eq!(
            json,
            "{\"model\":\"a\",\"environment\":\"pd\",\"arm\":\"baseline\",\"cell\":\"baseline\",\"role\":\"player\",\
             \"indicator\":\"cooperate\",\"estimator\":\"lpm-fe\",\"value\":\"care\",\"status\":\"estimated\",\
             \"reason\":\"\",\"coef\":0.25,\"se\":0.1,\"stat\":2.5,\"p\":0.02,\"ci_low\":0.05,\"ci_high\":0.45,\
             \"n_prompts\":8,\"n_replicates\":40,\"prompts_varying\":5,\"validation\":\"validated\"}"
        );
    }

    #[test]
    fn a_coded_replicate_and_its_sentences_carry_its_key_and_the_coders() {
        let mut conn = Connection::open_in_memory().expect("db");
        conn.execute_batch("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, study TEXT)").expect("runs");
        let cb = CodebookRecord { name: "default", version: 2, sha256: "abc", source: "" };
        let sentence = ReplicateSentenceRecord {
            sentence_index: 1,
            segment: "reasoning",
            source: "content",
            text: "Fair.",
            code: Some("fairness"),
        };
        let coded = CodedReplicateRecord {
            run_id: 7,
            seat: 1,
            slot: 3,
            sample_seed: "s",
            replicate: 4,
            model: "m",
            environment: "pd",
            role: "player",
            parse_status: "ok",
            action: Some("C"),
            reasoning_present: true,
            reasoning_sources: "content".into(),
            n_sentences: 1,
            coder_error: None,
            values_json: Some("{}".into()),
            sentences: vec![sentence],
        };
        write_coded(&mut conn, cb, "lexicon/1", None, [coded]).expect("write");
        use rusqlite::types::Value::{Integer, Text};
        let key = |table: &str| -> Vec<rusqlite::types::Value> {
            let columns =
                "run_id, seat, slot, sample_seed, replicate, coder, codebook, codebook_version, codebook_sha256";
            conn.query_row(&format!("SELECT {columns} FROM {table}"), [], |r| (0..9).map(|i| r.get(i)).collect())
                .expect(table)
        };
        let expected = [
            Integer(7),
            Integer(1),
            Integer(3),
            Text("s".into()),
            Integer(4),
            Text("lexicon/1".into()),
            Text("default".into()),
            Integer(2),
            Text("abc".into()),
        ];
        assert_eq!(key("audit_replicate_responses"), expected);
        assert_eq!(key("audit_replicate_sentences"), expected);
        let response: (String, String, Option<String>) = conn
            .query_row("SELECT model, values_json, coder_error FROM audit_replicate_responses", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .expect("response");
        assert_eq!(response, ("m".into(), "{}".into(), None));
        let sentence: (i64, String) = conn
            .query_row("SELECT sentence_index, code FROM audit_replicate_sentences", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("sentence");
        assert_eq!(sentence, (1, "fairness".into()));
    }

    #[test]
    fn a_table_of_the_older_layout_reads_without_place_or_interval_parts() {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(
            "CREATE TABLE audit_dependency (scope TEXT, coder TEXT, codebook TEXT, codebook_version INTEGER,
                codebook_sha256 TEXT, model TEXT, environment TEXT, role TEXT, indicator TEXT, estimator TEXT,
                value TEXT, status TEXT, reason TEXT, coef REAL, ci_low REAL, ci_high REAL, n_prompts INTEGER,
                n_replicates INTEGER, validation TEXT);
             INSERT INTO audit_dependency VALUES ('', 'lexicon/1', 'default', 1, 'abc', 'a', 'pd', 'player',
                'cooperate', 'lpm-fe', 'care', 'estimated', '', 0.2, 0.1, 0.3, 6, 30, 'validated');",
        )
        .expect("old table");
        let all = stored(&conn).expect("read");
        assert_eq!(all.len(), 1);
        let e = &all[0];
        assert!(!e.placed && e.row.position.arm.is_empty() && e.row.position.cell.is_empty());
        assert_eq!((e.row.fit.se, e.row.fit.p, e.row.prompts_varying), (None, None, None));
        assert_eq!((e.row.fit.coef, e.row.n_prompts), (Some(0.2), 6));
        assert!(stored(&Connection::open_in_memory().expect("db")).expect("no table").is_empty());
    }
}
