//! The profile's tables in the store file: one row per scheduled slot with its adopted answer
//! (or its missing status), every attempt with its raw reply and cache key, each distinct
//! question text once under its SHA-256, and the version files' hashes a study ran with. Their
//! layout, version and every read and write are `agora_records::families::profile`'s; this
//! module hands it the profile's records.

use std::collections::{HashMap, HashSet};

use agora_agents::llm::ModelSpec;
use agora_records::families::profile as records;
use rusqlite::Connection;

use super::ask::Attempt;
use super::gr::GrRecorded;
use super::run::Recorded;
use super::ProfileStudy;
use crate::tasks::versions::Loaded;

pub use records::{
    check_settings, done_gr, done_keys, missing, profiled_models, read_gr, read_rows, record_inputs, record_pass,
};

/// Makes the profile's tables, or brings those of an earlier build to this one's
/// ([`agora_records::families::PROFILE`]); a store whose profile tables are newer is refused.
pub fn create(conn: &Connection) -> Result<(), agora_records::families::FamilyError> {
    agora_records::families::ensure(conn, &agora_records::families::PROFILE).map(|_| ())
}

/// Records `study` (its name, master seed and numbers of responses) and its version files'
/// hashes; a study resumed with other settings or other version files is refused (its records
/// would mix two instruments).
pub fn record_study(conn: &Connection, study: &ProfileStudy, loaded: &[Loaded]) -> Result<(), String> {
    let versions: Vec<(&str, &str)> = loaded.iter().map(|l| (l.task.name(), l.sha256.as_str())).collect();
    records::record_study(conn, &study.name, study.master_seed, study.responses, study.gr_responses, &versions)
}

/// The B4 episodes of a model with a missing slot ([`super::run::episode_id`]).
pub fn episodes_missing(conn: &Connection, study: &str, model: &str) -> rusqlite::Result<HashSet<String>> {
    records::episodes_missing(conn, study, model, super::run::episode_id)
}

/// The recorded attempts of the answered B4 slots of the episodes in `redo`, by slot key.
pub fn kept_b4(
    conn: &Connection,
    study: &str,
    model: &str,
    redo: &HashSet<String>,
) -> rusqlite::Result<HashMap<String, Vec<Attempt>>> {
    records::kept_b4(conn, study, model, redo, super::run::episode_id)
}

/// Writes records of a task in one transaction.
pub fn write_rows<'a>(
    conn: &mut Connection,
    study: &str,
    spec: &ModelSpec,
    rows: impl IntoIterator<Item = &'a Recorded>,
) -> rusqlite::Result<()> {
    let rows = rows.into_iter().map(|r| records::SlotRecord {
        row: &r.row,
        slot_key: &r.slot_key,
        prompt: &r.prompt,
        attempts: &r.asked.attempts,
    });
    records::write_rows(conn, study, spec, rows)
}

/// Writes GR's records in one transaction.
pub fn write_gr(conn: &mut Connection, study: &str, spec: &ModelSpec, rows: &[GrRecorded]) -> rusqlite::Result<()> {
    let rows = rows.iter().map(|r| records::GrSlotRecord {
        condition: r.condition,
        format: r.format,
        class: r.class,
        slot: r.slot,
        slot_key: &r.slot_key,
        value: r.value.as_deref(),
        strict: r.strict,
        support: r.support.as_deref(),
        prompt: &r.prompt,
        attempts: &r.asked.attempts,
    });
    records::write_gr(conn, study, spec, rows)
}

#[cfg(test)]
mod tests {
    use super::super::ask::{Answer, Asked, Attempt};
    use super::*;

    /// `profile_gr` as stores before the support was recorded wrote it.
    const GR_BEFORE_SUPPORT: &str = "
        CREATE TABLE profile_gr (
            study TEXT NOT NULL, model TEXT NOT NULL, served_id TEXT NOT NULL, condition TEXT NOT NULL,
            format TEXT NOT NULL, class TEXT NOT NULL, slot INTEGER NOT NULL, status TEXT NOT NULL,
            attempts INTEGER NOT NULL, value TEXT, strict INTEGER NOT NULL, prompt_sha256 TEXT NOT NULL,
            slot_key TEXT NOT NULL, PRIMARY KEY (study, model, condition, slot)
        );
        INSERT INTO profile_gr VALUES ('s', 'm', 'served', 'OE-REF', 'open', 'reference', 0, 'valid', 1, '5', 1, 'h', 'k0');";

    fn spec() -> ModelSpec {
        ron::from_str(r#"Model(name: "m", family: "f", endpoints: ["http://127.0.0.1:1/v1"], served_id: "served")"#)
            .expect("spec")
    }

    #[test]
    fn a_store_written_before_the_support_reads_it_as_absent_and_gains_the_column() {
        let mut conn = Connection::open_in_memory().expect("open");
        conn.execute_batch(GR_BEFORE_SUPPORT).expect("old table");
        // Read as it is, before the profile opens it again.
        let rows = read_gr(&conn, "s", "m").expect("read");
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].3.as_deref(), rows[0].5.as_deref()), (Some("5"), None));
        // Opened by the profile: the column is added, the old row keeps its value, support absent.
        create(&conn).expect("create");
        create(&conn).expect("create is idempotent");
        assert!(agora_records::families::has_column(&conn, "profile_gr", "support").expect("column"));
        let family = &agora_records::families::PROFILE;
        assert_eq!(agora_records::families::stored_version(&conn, family).expect("version"), Some(2));
        assert_eq!(read_gr(&conn, "s", "m").expect("read")[0].5, None);
        // A slot written now keeps the wording its value was read from.
        let reply = "Keeping all 10 dollars would leave them nothing, so I give $5.";
        let recorded = GrRecorded {
            condition: "OE-REF",
            format: "open",
            class: "reference",
            slot: 1,
            slot_key: "k1".into(),
            value: Some("5".into()),
            strict: false,
            support: Some("I give $5".into()),
            prompt: "How many dollars do you give?".into(),
            asked: Asked {
                answer: Some(Answer::Amount(5)),
                attempts: vec![Attempt { attempt: 1, status: "ok".into(), reply: reply.into(), cache_key: "c".into() }],
            },
        };
        write_gr(&mut conn, "s", &spec(), &[recorded]).expect("write");
        let rows = read_gr(&conn, "s", "m").expect("read");
        assert_eq!(rows.iter().map(|r| r.5.as_deref()).collect::<Vec<_>>(), [None, Some("I give $5")]);
    }
}
