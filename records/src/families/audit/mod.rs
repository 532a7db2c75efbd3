//! The transcript audit's tables (`agora audit` and its subcommands), read by the ladder and
//! the report: the coding run's codebooks, coders, segments, coded responses and sentences; the
//! coder gate's decisions; human labels and the blind exports they were made from; agreement;
//! the replicates and their codes; the dependency estimates; the prefill interventions and the
//! faithfulness estimates; the requirements tested.
//!
//! Each table is made by the command that first writes it ([`make`]), not with the others: a
//! table's presence says that step of the audit has run. Derived tables whose layout changed
//! (the dependency and faithfulness estimates, gaining `arm` and `cell`; the gate, gaining the
//! human labellers' columns) are rebuilt whole by the command that writes them, which drops an
//! older layout first; until then a reader reads their absence as "not estimated" or "not
//! recorded".
//!
//! Versions: 1, the audit's tables as first versioned; 2, `audit_labels.export_id` (the blind
//! export each label was made from), NULL on labels imported before: such labels do not count
//! for the gate.
//!
//! Every read and write of these tables (and the audit's reads of the run store) is here, one
//! submodule per step of the audit; the audit crate gives and takes rows.

use rusqlite::Connection;
use serde::Serialize;

pub use super::has_table;
use super::{add_column, ensure, Family, Step};
use crate::store::call_outcome_columns;

pub mod agreement;
pub mod coding;
pub mod dependency;
pub mod faithfulness;
pub mod gate;
pub mod labels;
pub mod prefill;
pub mod reads;
pub mod replicates;
pub mod requirements;

/// A coder and the codebook it coded with, as the audit's rows name them (serialised with the
/// names of their columns).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct CoderKey {
    /// The coder's id.
    pub coder: String,
    /// The codebook's name.
    pub codebook: String,
    /// The codebook's version.
    #[serde(rename = "codebook_version")]
    pub version: u32,
    /// The codebook's SHA-256.
    #[serde(rename = "codebook_sha256")]
    pub sha256: String,
}

impl CoderKey {
    /// The key read from four columns of `r` from `first` on (coder, codebook, version,
    /// SHA-256).
    pub(crate) fn read(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<CoderKey> {
        Ok(CoderKey {
            coder: r.get(first)?,
            codebook: r.get(first + 1)?,
            version: r.get(first + 2)?,
            sha256: r.get(first + 3)?,
        })
    }

    /// The key borrowed, as the rows to write carry it.
    pub fn borrowed(&self) -> CoderKeyRef<'_> {
        CoderKeyRef { coder: &self.coder, codebook: &self.codebook, version: self.version, sha256: &self.sha256 }
    }
}

/// A [`CoderKey`] borrowed: the coder and codebook a row to write names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoderKeyRef<'a> {
    /// The coder's id.
    pub coder: &'a str,
    /// The codebook's name.
    pub codebook: &'a str,
    /// The codebook's version.
    pub version: u32,
    /// The codebook's SHA-256.
    pub sha256: &'a str,
}

impl CoderKeyRef<'_> {
    /// The key owned.
    pub fn owned(self) -> CoderKey {
        CoderKey {
            coder: self.coder.to_string(),
            codebook: self.codebook.to_string(),
            version: self.version,
            sha256: self.sha256.to_string(),
        }
    }
}

/// Where an audited decision stands in the design: the model, the environment, the block arm,
/// the perturbation cell and the role. The estimates are made and kept per position.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct Position {
    /// The audited model.
    pub model: String,
    /// The environment.
    pub environment: String,
    /// The block arm (`baseline`, `punishment`, …).
    pub arm: String,
    /// The perturbation cell (`baseline`, `step-by-step`, …).
    pub cell: String,
    /// The role.
    pub role: String,
}

impl Position {
    /// The position read from five columns of `r` from `first` on, in [`Position`]'s order.
    fn read(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Position> {
        Ok(Position {
            model: r.get(first)?,
            environment: r.get(first + 1)?,
            arm: r.get(first + 2)?,
            cell: r.get(first + 3)?,
            role: r.get(first + 4)?,
        })
    }
}

/// A position of the tests: environment `pd`, role `player`.
#[cfg(test)]
pub(crate) fn at(model: &str, arm: &str, cell: &str) -> Position {
    let (environment, role) = ("pd".into(), "player".into());
    Position { model: model.into(), environment, arm: arm.into(), cell: cell.into(), role }
}

/// The columns of a [`CoderKey`] in the audit's tables, in order: a fragment of their DDL.
macro_rules! coder_key_columns {
    () => {
        "    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    codebook_sha256 TEXT NOT NULL,
"
    };
}

/// The columns that key a coded replicate in both its tables, in order: the replicate (its
/// decision, sample seed and number) and the [`CoderKey`] that coded it.
macro_rules! coded_replicate_key_columns {
    () => {
        concat!(
            "    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    sample_seed TEXT NOT NULL,
    replicate INTEGER NOT NULL,
",
            coder_key_columns!(),
        )
    };
}

/// The columns of an estimate's [`Position`] (model, environment, arm, cell and role), in
/// order: a fragment of the estimates' DDL.
macro_rules! position_columns {
    () => {
        "    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    arm TEXT NOT NULL,
    cell TEXT NOT NULL,
    role TEXT NOT NULL,
"
    };
}

/// The audit's tables.
///
/// The audit run (the audit crate) writes them; the ladder reads the coded responses and the
/// codebooks from them, and the coder gate the sentences and labels.
pub const TABLES: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_codebooks (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (name, version, sha256)
);
CREATE TABLE IF NOT EXISTS audit_coders (
    coder TEXT NOT NULL,
    identity_json TEXT NOT NULL,
    serving_json TEXT NOT NULL,
    PRIMARY KEY (coder, identity_json, serving_json)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_segments (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    segment_index INTEGER NOT NULL,
    segmenter_version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (run_id, seat, slot, segment_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_responses (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
",
    coder_key_columns!(),
    "    model TEXT NOT NULL,
    study TEXT NOT NULL,
    environment TEXT NOT NULL,
    arm TEXT NOT NULL,
    cell TEXT NOT NULL,
    parse_status TEXT NOT NULL,
    action TEXT NOT NULL,
    answer_field TEXT NOT NULL,
    answer_key TEXT,
    answer_agrees INTEGER,
    reply_form TEXT NOT NULL,
    reasoning_present INTEGER NOT NULL,
    reasoning_sources TEXT NOT NULL,
    post_hoc_present INTEGER NOT NULL,
    n_sentences INTEGER NOT NULL,
    n_residual INTEGER NOT NULL,
    n_post_hoc_sentences INTEGER NOT NULL,
    coder_error TEXT,
    values_json TEXT,
    PRIMARY KEY (run_id, seat, slot, coder, codebook, codebook_version, codebook_sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_sentences (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
",
    coder_key_columns!(),
    "    sentence_index INTEGER NOT NULL,
    segment_index INTEGER NOT NULL,
    segment TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    code TEXT,
    evidence TEXT,
    PRIMARY KEY (run_id, seat, slot, coder, codebook, codebook_version, codebook_sha256, sentence_index)
) WITHOUT ROWID;
",
);

/// The coder-validation gate's decisions (written by the audit, read by the ladder).
pub const GATE: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_gate (
",
    coder_key_columns!(),
    "    model TEXT NOT NULL,
    status TEXT NOT NULL,
    kappa REAL,
    n INTEGER NOT NULL,
    responses INTEGER NOT NULL,
    min_kappa REAL NOT NULL,
    recall_json TEXT NOT NULL,
    coder_failed INTEGER NOT NULL,
    coder_of INTEGER NOT NULL,
    reason TEXT NOT NULL,
    labellers INTEGER NOT NULL,
    human_kappa REAL,
    human_sentences INTEGER NOT NULL,
    human_disagreements INTEGER NOT NULL,
    min_human_kappa REAL NOT NULL,
    max_human_disagreement REAL NOT NULL,
    PRIMARY KEY (coder, codebook, codebook_version, codebook_sha256, model)
) WITHOUT ROWID;
",
);

/// The store table of dependency estimates the ladder reads (written by `agora audit`, the
/// audit crate's dependency estimate).
pub const DEPENDENCY: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_dependency (
    scope TEXT NOT NULL,
",
    coder_key_columns!(),
    position_columns!(),
    "    indicator TEXT NOT NULL,
    estimator TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    coef REAL,
    se REAL,
    stat REAL,
    p REAL,
    ci_low REAL,
    ci_high REAL,
    n_prompts INTEGER NOT NULL,
    n_replicates INTEGER NOT NULL,
    prompts_varying INTEGER,
    validation TEXT NOT NULL,
    PRIMARY KEY (scope, coder, codebook, codebook_version, codebook_sha256, model, environment, arm, cell, role,
                 estimator, value)
) WITHOUT ROWID;
",
);

/// The store table of intervention estimates the ladder reads (written by `agora audit
/// prefill`): one row per sample seed, coder, codebook, model, environment, role and value.
pub const FAITHFULNESS: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_faithfulness (
    sample_seed TEXT NOT NULL,
",
    coder_key_columns!(),
    position_columns!(),
    "    design TEXT NOT NULL,
    indicator TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    n_decisions INTEGER NOT NULL,
    n_deleted INTEGER NOT NULL,
    n_inserted INTEGER NOT NULL,
    tau REAL,
    se REAL,
    ci_low REAL,
    ci_high REAL,
    phi REAL,
    phi_ci_low REAL,
    phi_ci_high REAL,
    disagreement TEXT NOT NULL,
    validation TEXT NOT NULL,
    n_states INTEGER NOT NULL,
    PRIMARY KEY (sample_seed, coder, codebook, codebook_version, codebook_sha256, model, environment, arm, cell, role,
                 design, value)
) WITHOUT ROWID;
",
);

/// The agreement table.
pub const AGREEMENT: &str = "
CREATE TABLE IF NOT EXISTS audit_agreement (
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    reference TEXT NOT NULL,
    coder TEXT NOT NULL,
    coder_codebook_sha256 TEXT NOT NULL,
    n INTEGER NOT NULL,
    p_o REAL,
    p_e REAL,
    kappa REAL,
    se REAL,
    ci_low REAL,
    ci_high REAL,
    min_kappa REAL,
    verdict TEXT,
    excluded_disagreements INTEGER NOT NULL,
    excluded_text_changed INTEGER NOT NULL,
    note TEXT,
    labels_json TEXT NOT NULL,
    confusion_json TEXT NOT NULL,
    support_json TEXT NOT NULL,
    recall_json TEXT NOT NULL,
    precision_json TEXT NOT NULL,
    PRIMARY KEY (codebook, codebook_version, model, kind, reference, coder, coder_codebook_sha256)
) WITHOUT ROWID;
";

/// The replicates table, written by `agora audit replicates` (see the [module
/// documentation](self)): one row per replicate of an original decision (run, seat, slot), per
/// sample seed and replicate index, with the request as sent, its cache key and the original's,
/// the action space the reply was read against, the reply and what was made of it.
pub const REPLICATES: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_replicates (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    original_attempt INTEGER NOT NULL,
    sample_seed TEXT NOT NULL,
    replicate INTEGER NOT NULL,
    model TEXT NOT NULL,
    served_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    round INTEGER NOT NULL,
    role TEXT NOT NULL,
    request_seed INTEGER,
    messages_json TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    original_cache_key TEXT NOT NULL,
    answer_field TEXT NOT NULL,
    space_json TEXT NOT NULL,
    raw_reply TEXT NOT NULL,
    finish_reason TEXT,
",
    call_outcome_columns!(),
    "    PRIMARY KEY (run_id, seat, slot, sample_seed, replicate)
) WITHOUT ROWID;
"
);

/// The coded replicates and the estimates (see the [module documentation](self)).
pub const REPLICATE_CODES: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_replicate_responses (
",
    coded_replicate_key_columns!(),
    "    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    role TEXT NOT NULL,
    parse_status TEXT NOT NULL,
    action TEXT NOT NULL,
    reasoning_present INTEGER NOT NULL,
    reasoning_sources TEXT NOT NULL,
    n_sentences INTEGER NOT NULL,
    coder_error TEXT,
    values_json TEXT,
    PRIMARY KEY (run_id, seat, slot, sample_seed, replicate, coder, codebook, codebook_version, codebook_sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_replicate_sentences (
",
    coded_replicate_key_columns!(),
    "    sentence_index INTEGER NOT NULL,
    segment TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    code TEXT,
    PRIMARY KEY (run_id, seat, slot, sample_seed, replicate, coder, codebook, codebook_version, codebook_sha256,
                 sentence_index)
) WITHOUT ROWID;
",
);

/// The table of prefilled calls: one row per call (`edit`: `insert`, `replace` or `delete`,
/// [`Edit`]; `arm` and `cell`: the decision's block arm and perturbation cell). The estimates
/// are in [`FAITHFULNESS_SCHEMA`].
pub const PREFILL: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_prefill (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    sample_seed TEXT NOT NULL,
    value TEXT NOT NULL,
    edit TEXT NOT NULL,
    replicate INTEGER NOT NULL,
",
    coder_key_columns!(),
    "    model TEXT NOT NULL,
    served_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    environment TEXT NOT NULL,
    arm TEXT NOT NULL,
    cell TEXT NOT NULL,
    role TEXT NOT NULL,
    stated INTEGER NOT NULL,
    prefill TEXT NOT NULL,
    request_seed INTEGER,
    messages_json TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    continuation TEXT NOT NULL,
    finish_reason TEXT,
    action TEXT,
    parse_status TEXT NOT NULL,
    detail TEXT NOT NULL,
    indicator REAL,
    latency_ms REAL NOT NULL,
    PRIMARY KEY (run_id, seat, slot, sample_seed, value, edit, replicate, coder, codebook, codebook_version,
                 codebook_sha256)
) WITHOUT ROWID;
",
);

/// The labels table (see the [module documentation](self)).
pub const LABELS: &str = "
CREATE TABLE IF NOT EXISTS audit_labels (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    sentence_index INTEGER NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    code TEXT NOT NULL,
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    line INTEGER NOT NULL,
    export_id TEXT,
    PRIMARY KEY (run_id, seat, slot, sentence_index, coder, codebook, codebook_version)
) WITHOUT ROWID;
";

/// The exports table: one row per distinct export (see [The export id](self#the-export-id)).
pub const EXPORTS: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS audit_exports (
    export_id TEXT NOT NULL PRIMARY KEY,
    seed TEXT NOT NULL,
    sample INTEGER NOT NULL,
",
    coder_key_columns!(),
    "    models_json TEXT NOT NULL,
    blind INTEGER NOT NULL,
    sentences INTEGER NOT NULL,
    responses INTEGER NOT NULL,
    created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) WITHOUT ROWID;
",
);

/// The store table of verdicts.
pub const REQUIREMENTS: &str = "
CREATE TABLE IF NOT EXISTS audit_requirements (
    requirement TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    estimate REAL,
    low REAL,
    high REAL,
    bound REAL,
    verdict TEXT NOT NULL,
    reason TEXT NOT NULL,
    n INTEGER,
    planned_n INTEGER
);
";

fn label_exports(conn: &Connection) -> rusqlite::Result<()> {
    add_column(conn, "audit_labels", "export_id", "TEXT")
}

/// The audit's family. Its schema is empty: each table is made by [`make`] when first written.
pub const AUDIT: Family = Family {
    name: "audit",
    version: 2,
    tables: &[
        "audit_codebooks",
        "audit_coders",
        "audit_segments",
        "audit_responses",
        "audit_sentences",
        "audit_gate",
        "audit_labels",
        "audit_exports",
        "audit_agreement",
        "audit_replicates",
        "audit_replicate_responses",
        "audit_replicate_sentences",
        "audit_dependency",
        "audit_prefill",
        "audit_faithfulness",
        "audit_requirements",
    ],
    schema: "",
    steps: &[Step {
        to: 2,
        what: "audit_labels gains export_id, the blind export a label was made from",
        apply: label_exports,
    }],
};

/// Brings the audit's family to this build's version (refusing a newer one), then makes the
/// tables of `schema` where absent. A newer family is reported as SQLite's
/// `ToSqlConversionFailure` carrying the [`super::FamilyError`], so that callers working in
/// `rusqlite::Result` pass it on with its message.
pub fn make(conn: &Connection, schema: &str) -> rusqlite::Result<()> {
    ensure(conn, &AUDIT).map_err(|e| match e {
        super::FamilyError::Sql(e) => e,
        e => rusqlite::Error::ToSqlConversionFailure(Box::new(e)),
    })?;
    conn.execute_batch(schema)
}

/// The scope of a study's runs in a `WHERE` clause: every run where `?1` is NULL.
const STUDY_SCOPE: &str = "(?1 IS NULL OR run_id IN (SELECT run_id FROM runs WHERE study = ?1))";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{check, has_column, stored_version, FamilyError};

    /// Version 1: labels without the export they were made from.
    const V1_LABELS: &str = "
        CREATE TABLE audit_labels (run_id INTEGER NOT NULL, seat INTEGER NOT NULL, slot INTEGER NOT NULL,
            sentence_index INTEGER NOT NULL, coder TEXT NOT NULL, codebook TEXT NOT NULL,
            codebook_version INTEGER NOT NULL, code TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL,
            line INTEGER NOT NULL,
            PRIMARY KEY (run_id, seat, slot, sentence_index, coder, codebook, codebook_version)) WITHOUT ROWID;
        INSERT INTO audit_labels VALUES (1, 0, 2, 0, 'ann', 'default', 1, 'fairness', 'Fair.', 'l.csv', 2);";

    #[test]
    fn labels_of_version_1_gain_their_export_column_null_and_keep_their_codes() {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(V1_LABELS).expect("version 1");
        assert_eq!(stored_version(&conn, &AUDIT).expect("read"), Some(1));
        make(&conn, LABELS).expect("upgraded");
        assert_eq!(stored_version(&conn, &AUDIT).expect("read"), Some(2));
        assert!(has_column(&conn, "audit_labels", "export_id").expect("info"));
        let (code, export): (String, Option<String>) = conn
            .query_row("SELECT code, export_id FROM audit_labels", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("kept");
        assert_eq!((code.as_str(), export), ("fairness", None));
        // Made one table at a time: the gate is not made by the labels' writer.
        let gate: i64 = conn
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_gate'", [], |r| r.get(0))
            .expect("listed");
        assert_eq!(gate, 0);
    }

    #[test]
    fn a_newer_audit_family_stops_a_writer_with_its_versions() {
        let conn = Connection::open_in_memory().expect("db");
        make(&conn, LABELS).expect("made");
        conn.execute("UPDATE table_families SET version = 3 WHERE family = 'audit'", []).expect("newer");
        let e = make(&conn, TABLES).expect_err("refused");
        let inner = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<FamilyError>());
        assert!(matches!(inner, Some(FamilyError::Newer { found: 3, supported: 2, .. })), "{e}");
        assert!(check(&conn, &AUDIT).is_err());
        let made: i64 = conn
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_responses'", [], |r| r.get(0))
            .expect("listed");
        assert_eq!(made, 0, "nothing written to a newer family");
    }
}
