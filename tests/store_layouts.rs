//! The store's layouts: a truncated or foreign file is refused, and every older schema a
//! build may meet (versions 1, 2, 4 and 6, an older page size) is upgraded in place keeping
//! every run, its metrics and record hashes that the store alone verifies.

use std::path::Path;

use agora_engine::{record_hash, RunWorld, RunnerOptions, Store, StoreError};
use agora_scenarios::Plan;

mod common;
use common::{run_plan_into, shipped_plan};

#[test]
fn truncated_or_foreign_store_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    let store = run_plan_into(
        dir.path(),
        "good.sqlite",
        &Plan { study: "x".into(), master_seed: 0, runs: p.runs[..3].to_vec(), models: vec![], reference: None },
        &RunnerOptions::default(),
    );
    let good = store.path().to_path_buf();
    drop(store);
    // Fold the WAL into the main file so truncation hits real data.
    {
        let c = rusqlite::Connection::open(&good).expect("open");
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).expect("checkpoint");
    }
    let bytes = std::fs::read(&good).expect("read");
    let truncated = dir.path().join("truncated.sqlite");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).expect("write");
    assert!(matches!(Store::open(&truncated), Err(StoreError::Corrupt { .. })), "truncated store refused");
    let foreign = dir.path().join("notes.sqlite");
    std::fs::write(&foreign, "these are my notes, not a database").expect("write");
    let err = Store::open(&foreign).err().expect("refused");
    assert!(err.to_string().contains("not a SQLite database"), "{err}");
    let other_db = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other_db)
        .expect("open")
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .expect("create");
    let err = Store::open(&other_db).err().expect("refused");
    assert!(err.to_string().contains("not an Agora store"), "{err}");
    assert!(Store::open(&good).is_ok());
}

#[test]
fn a_version_1_store_gains_the_models_table_and_keeps_its_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v1.sqlite");
    let p = shipped_plan("classical.ron", 1);
    drop(run_plan_into(dir.path(), "v1.sqlite", &p, &RunnerOptions::default()));
    downgrade(&path, 2);
    {
        // Make it what version 1 wrote: no models table.
        let c = rusqlite::Connection::open(&path).expect("open");
        c.execute_batch("DROP TABLE models; PRAGMA user_version = 1;").expect("downgrade");
    }
    let store = Store::open(&path).expect("a version-1 store opens");
    assert_eq!(store.completed_keys().expect("keys").len(), p.runs.len(), "runs kept");
    drop(store);
    let c = rusqlite::Connection::open(&path).expect("open");
    let version: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
    assert_eq!(version, agora_engine::store::SCHEMA_VERSION);
    let models: i64 = c.query_row("SELECT COUNT(*) FROM models", [], |r| r.get(0)).expect("models table");
    assert_eq!(models, 0);
}

/// Makes a store what schema version 2 wrote: no metrics table, and record hashes of an
/// earlier definition (here a stand-in: the upgrade recomputes them from the store).
fn downgrade(path: &Path, version: i32) {
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute("UPDATE runs SET record_hash = 'a hash of schema 2'", []).expect("old hash");
    c.execute_batch(&format!("DROP TABLE metrics; PRAGMA user_version = {version};")).expect("downgrade");
}

fn metrics_rows(path: &Path) -> Vec<(String, String, f64)> {
    let c = rusqlite::Connection::open(path).expect("open");
    let mut st = c
        .prepare("SELECT r.run_key, m.name, m.value FROM metrics m JOIN runs r USING (run_id) ORDER BY 1, 2")
        .expect("metrics table");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("query").map(|r| r.expect("row")).collect()
}

#[test]
fn a_version_2_store_gains_the_metrics_of_each_run_and_the_same_record_hashes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    let fresh = run_plan_into(dir.path(), "fresh.sqlite", &p, &RunnerOptions::default());
    let digest = fresh.records_digest().expect("digest");
    drop(fresh);
    let want = metrics_rows(&dir.path().join("fresh.sqlite"));
    assert!(want.len() > p.runs.len(), "every run reports metrics");
    drop(run_plan_into(dir.path(), "v2.sqlite", &p, &RunnerOptions::default()));
    let path = dir.path().join("v2.sqlite");
    downgrade(&path, 2);
    let store = Store::open(&path).expect("a version-2 store opens and is upgraded");
    assert_eq!(store.records_digest().expect("digest"), digest, "upgraded hashes equal a fresh store's");
    drop(store);
    assert_eq!(metrics_rows(&path), want, "the upgrade computes what a live run records");
}

/// Every decision, payoff and interaction of a store, by run key, as SQL lists them.
fn bulk_rows(path: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(path).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT r.run_key, d.step, d.round, d.seat, d.role, d.action, d.value, d.scale, d.context, typeof(d.value)
         FROM decisions d JOIN runs r USING (run_id) ORDER BY r.run_key, d.step, d.seat",
        "SELECT r.run_key, p.step, p.round, p.seat, p.payoff, typeof(p.payoff)
         FROM payoffs p JOIN runs r USING (run_id) ORDER BY r.run_key, p.step, p.seat",
        "SELECT r.run_key, i.t, i.a, i.b, i.name_a, i.name_b, i.matched
         FROM interactions i JOIN runs r USING (run_id) ORDER BY r.run_key, i.t",
    ] {
        let mut st = c.prepare(sql).expect("query");
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                (0..n)
                    .map(|i| r.get_ref(i).map(|v| format!("{v:?}")))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|v| v.join("|"))
            })
            .expect("rows");
        out.extend(rows.map(|r| r.expect("row")));
    }
    out
}

#[test]
fn a_schema_4_store_keeps_every_row_when_its_runs_become_one_value_per_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    let store = run_plan_into(dir.path(), "s.sqlite", &p, &RunnerOptions::default());
    let digest = store.records_digest().expect("digest");
    drop(store);
    let path = dir.path().join("s.sqlite");
    let before = bulk_rows(&path);
    assert!(before.iter().any(|r| r.contains("Real(")), "decisions carry real values");
    assert!(before.len() > 1000, "{} rows", before.len());
    {
        // What schema 4 wrote: a row per record in three tables.
        let c = rusqlite::Connection::open(&path).expect("open");
        c.execute_batch(
            "CREATE TABLE d4 (run_id INTEGER NOT NULL, step INTEGER NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,
                 role TEXT NOT NULL, action TEXT NOT NULL, value REAL NOT NULL, scale REAL NOT NULL, context REAL,
                 PRIMARY KEY (run_id, step, seat)) WITHOUT ROWID;
             INSERT INTO d4 SELECT * FROM decisions;
             CREATE TABLE p4 (run_id INTEGER NOT NULL, step INTEGER NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,
                 payoff REAL NOT NULL, PRIMARY KEY (run_id, step, seat)) WITHOUT ROWID;
             INSERT INTO p4 SELECT * FROM payoffs;
             CREATE TABLE i4 (run_id INTEGER NOT NULL, t INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL,
                 name_a INTEGER NOT NULL, name_b INTEGER NOT NULL, matched INTEGER NOT NULL, PRIMARY KEY (run_id, t)) WITHOUT ROWID;
             INSERT INTO i4 SELECT * FROM interactions;
             DROP VIEW decisions; DROP VIEW payoffs; DROP VIEW interactions; DROP TABLE run_rows;
             ALTER TABLE d4 RENAME TO decisions; ALTER TABLE p4 RENAME TO payoffs; ALTER TABLE i4 RENAME TO interactions;
             PRAGMA user_version = 4;",
        )
        .expect("downgrade");
        assert_eq!(bulk_rows(&path), before, "the schema-4 tables hold the same rows");
    }
    let store = Store::open(&path).expect("a schema-4 store opens and is upgraded");
    assert_eq!(store.records_digest().expect("digest"), digest);
    drop(store);
    assert_eq!(bulk_rows(&path), before, "every row reads back with its value and type");
    let c = rusqlite::Connection::open(&path).expect("open");
    let version: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
    assert_eq!(version, agora_engine::store::SCHEMA_VERSION);
    let runs: i64 = c.query_row("SELECT COUNT(*) FROM run_rows", [], |r| r.get(0)).expect("run_rows");
    assert_eq!(runs as usize, p.runs.len(), "one value per run");
}

#[test]
fn a_new_store_has_8_kib_pages_and_an_older_one_keeps_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    let page_size = |path: &Path| -> i64 {
        rusqlite::Connection::open(path).expect("open").query_row("PRAGMA page_size", [], |r| r.get(0)).expect("pragma")
    };
    let fresh = run_plan_into(dir.path(), "fresh.sqlite", &p, &RunnerOptions::default());
    assert_eq!(page_size(&dir.path().join("fresh.sqlite")), agora_engine::store::PAGE_SIZE);
    assert_eq!(agora_engine::store::PAGE_SIZE, 8192);
    // A store as earlier builds made it, with SQLite's 4 KiB pages: half the plan written
    // there, then the rest by this build, which leaves its pages as they are.
    let older = dir.path().join("older.sqlite");
    let half = Plan { runs: p.runs[..p.runs.len() / 2].to_vec(), ..p.clone() };
    drop(run_plan_into(dir.path(), "older.sqlite", &half, &RunnerOptions::default()));
    {
        let c = rusqlite::Connection::open(&older).expect("open");
        c.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM; PRAGMA journal_mode = WAL;")
            .expect("4 KiB pages");
    }
    assert_eq!(page_size(&older), 4096);
    let resumed = run_plan_into(dir.path(), "older.sqlite", &p, &RunnerOptions::default());
    assert_eq!(page_size(&older), 4096);
    assert_eq!(resumed.records_digest().expect("digest"), fresh.records_digest().expect("digest"));
}

/// Every stored run's record hash, by run key.
fn stored_hashes(path: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(path).expect("open");
    let mut st = c.prepare("SELECT run_key, record_hash FROM runs ORDER BY run_key").expect("runs");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("query").map(|r| r.expect("row")).collect()
}

#[test]
fn the_record_hash_is_recomputed_from_the_store_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.sqlite");
    let p = shipped_plan("classical.ron", 1);
    let store = run_plan_into(dir.path(), "s.sqlite", &p, &RunnerOptions::default());
    let v = store.verify().expect("verifies");
    assert_eq!((v.runs, v.mismatches.len()), (p.runs.len() as u64, 0), "{:?}", v.mismatches.first());
    drop(store);
    // The hash a live run computes is the one its stored values give.
    let stored = stored_hashes(&path);
    for spec in p.runs.iter().step_by(7) {
        let rec = RunWorld::new(spec).expect("world").run_to_end().expect("runs");
        let want = &stored.iter().find(|(k, _)| *k == rec.key).expect("stored").1;
        assert_eq!(&record_hash::of_run(&rec).expect("hash"), want, "{}", rec.key);
    }
    // Any stored value changed is found, naming the run.
    let c = rusqlite::Connection::open(&path).expect("open");
    let first: (i64, String) = c
        .query_row("SELECT run_id, run_key FROM runs ORDER BY run_id LIMIT 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("a run");
    c.execute("UPDATE run_rows SET payoffs = replace(payoffs, ',', ', ') WHERE run_id = ?1", [first.0])
        .expect("altered");
    c.execute("UPDATE metrics SET value = value + 1e-9 WHERE run_id = (SELECT max(run_id) FROM runs)", [])
        .expect("altered");
    drop(c);
    let v = Store::open(&path).expect("opens").verify().expect("verifies");
    assert_eq!(v.mismatches.len(), 2, "{:?}", v.mismatches);
    assert_eq!(v.mismatches[0].run_key, first.1);
}

#[test]
fn a_schema_6_store_is_rehashed_from_its_stored_values_and_then_verifies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("tipping.ron", 1);
    drop(run_plan_into(dir.path(), "fresh.sqlite", &p, &RunnerOptions::default()));
    let fresh = stored_hashes(&dir.path().join("fresh.sqlite"));
    let path = dir.path().join("v6.sqlite");
    drop(run_plan_into(dir.path(), "v6.sqlite", &p, &RunnerOptions::default()));
    {
        // What schema 6 kept: the same values, hashed by the earlier definition.
        let c = rusqlite::Connection::open(&path).expect("open");
        c.execute_batch("UPDATE runs SET record_hash = 'schema 6: ' || record_hash; PRAGMA user_version = 6;")
            .expect("downgrade");
    }
    let store = Store::open(&path).expect("a schema-6 store opens and is upgraded");
    assert_eq!(store.verify().expect("verifies").mismatches, vec![]);
    drop(store);
    assert_eq!(stored_hashes(&path), fresh, "the upgraded hashes are a fresh store's");
    // A store merged from it holds the same hashes and verifies too.
    let mut merged = Store::open(&dir.path().join("merged.sqlite")).expect("opens");
    merged.merge_from(&path).expect("merges");
    assert_eq!(merged.verify().expect("verifies").mismatches, vec![]);
    drop(merged);
    assert_eq!(stored_hashes(&dir.path().join("merged.sqlite")), fresh);
}
