//! Requests kept by their parts (schema 4): every transcript reads back through the
//! `transcripts` view byte for byte as it was sent; the static text of the prompts is stored
//! once, not once per call; merging shards, upgrading a schema-3 store and exporting all keep
//! every message whole.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agora_test_support::{FakeReply, FakeServer};
use rusqlite::Connection;

mod common;
use common::{agora, count, record_hashes, study_text, text};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn write_study(dir: &Path, endpoint: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("studies")).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 8, timeout_s: 120.0, max_retries: 2, backoff_ms: 5)"#
    );
    let study = study_text(
        "parts",
        5,
        3,
        &[model],
        &[
            r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 6), model_rosters: true, rosters: [])"#,
            r#"Block(name: "pgg", environment: PublicGoods(rounds: 4), model_rosters: true, rosters: [])"#,
            r#"Block(name: "naming", environment: NamingGame(population: 4, cap: 12, window: 4), model_rosters: true, rosters: [], runs: 1)"#,
        ],
    );
    let path = dir.join("studies/parts.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

/// Every transcript row, full request included, by run key.
fn transcripts(store: &Path) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT r.run_key, t.seat, t.slot, t.kind, t.attempt, t.messages_json, t.raw_reply, t.action, t.parse_status
             FROM transcripts t JOIN runs r USING (run_id) ORDER BY 1, 2, 3, 4, 5",
        )
        .expect("query");
    st.query_map([], |r| {
        Ok(format!(
            "{}|{}|{}|{}|{}|{}|{}|{:?}|{}",
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, String>(6)?,
            r.get::<_, Option<String>>(7)?,
            r.get::<_, String>(8)?
        ))
    })
    .expect("rows")
    .map(|r| r.expect("row"))
    .collect()
}

fn run(study: &Path, store: &Path, extra: &[&str]) {
    let mut args = vec!["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    let out = agora(&args);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn requests_are_stored_by_their_parts_and_read_back_whole() {
    let rt = runtime();
    let sent: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let seen = sent.clone();
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |_, body: &serde_json::Value| {
            seen.lock().expect("lock").insert(body["messages"].to_string());
            FakeReply::Legal
        })))
        .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    run(&study, &store, &[]);

    // Each stored request reads back as the messages the server received.
    let c = Connection::open(&store).expect("open");
    let calls = count(&c, "SELECT COUNT(*) FROM transcripts WHERE kind = 'decision'");
    assert!(calls > 100, "{calls} calls");
    let mut st = c.prepare("SELECT messages_json FROM transcripts WHERE kind = 'decision'").expect("query");
    let stored: BTreeSet<String> = st
        .query_map([], |r| r.get::<_, String>(0))
        .expect("rows")
        .map(|j| {
            let v: serde_json::Value = serde_json::from_str(&j.expect("row")).expect("a stored request is JSON");
            v["messages"].to_string()
        })
        .collect();
    drop(st);
    assert_eq!(stored, *sent.lock().expect("lock"), "the requests read back are the requests sent");

    // The static text is stored once: the rules' opening line is in a handful of parts, not
    // in one per call, and the lists are a small fraction of the requests they stand for.
    let opening = "You are taking part in a study of decision making.";
    let with_opening = count(&c, &format!("SELECT COUNT(*) FROM prompt_parts WHERE instr(text, '{opening}') > 0"));
    let requests_with_opening =
        count(&c, &format!("SELECT COUNT(*) FROM transcripts WHERE instr(messages_json, '{opening}') > 0"));
    assert!(requests_with_opening == calls, "every request opens with the study line");
    assert!((1..=6).contains(&with_opening), "{with_opening} parts hold the opening line for {calls} calls");
    let (lists, full): (i64, i64) = c
        .query_row(
            "SELECT (SELECT SUM(length(request)) FROM transcript_calls), (SELECT SUM(length(messages_json)) FROM transcripts)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("sizes");
    assert!(lists * 5 < full, "the lists take {lists} bytes for {full} bytes of requests");

    // The dry run's expected store per call is close to what the calls took.
    let out = agora(&["run", study.to_str().expect("utf8"), "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    let dry = text(&out);
    let line = dry.lines().find(|l| l.starts_with("fake ")).expect("the model's line");
    let cols: Vec<&str> = line.split_whitespace().collect();
    let expected_calls: f64 = cols[2].trim_start_matches("<=").parse().expect("calls");
    let unit = match cols[5] {
        "B" => 1.0,
        "kB" => 1e3,
        "MB" => 1e6,
        other => panic!("unit {other}"),
    };
    let expected = cols[4].trim_start_matches("<=").parse::<f64>().expect("store") * unit / expected_calls;
    let all_calls = count(&c, "SELECT COUNT(*) FROM transcripts") as f64;
    let took: f64 = c
        .query_row(
            "SELECT SUM(pgsize) FROM dbstat WHERE name IN ('transcript_calls', 'prompt_parts',
                 'sqlite_autoindex_prompt_parts_1', 'llm_cache', 'sqlite_autoindex_llm_cache_1')",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("dbstat") as f64
        / all_calls;
    assert!((0.6..1.6).contains(&(expected / took)), "expected {expected:.0} B a call, took {took:.0}: {line}");
    drop(c);

    // Two shards merged hold the same transcripts as the single store, request for request.
    let (a, b, merged) = (dir.path().join("a.sqlite"), dir.path().join("b.sqlite"), dir.path().join("m.sqlite"));
    run(&study, &a, &["--shard", "1/2"]);
    run(&study, &b, &["--shard", "2/2"]);
    let out = agora(&[
        "merge",
        "--into",
        merged.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
        a.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(transcripts(&merged), transcripts(&store), "merged shards read back the same requests");
    // (Record hashes differ between two live runs: they cover each call's latency.)

    // The export writes every message whole.
    let export = dir.path().join("export");
    let out = agora(&[
        "export",
        "--store",
        store.to_str().expect("utf8"),
        "--format",
        "csv",
        "--out",
        export.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let csv = std::fs::read_to_string(export.join("transcripts.csv")).expect("transcripts.csv");
    assert!(csv.lines().next().expect("header").contains("messages_json"), "{}", &csv[..200]);
    assert!(csv.matches(opening).count() as i64 >= calls, "each exported request carries its whole text");
}

/// What schema 3 wrote: the whole request in every transcript row.
fn to_schema_3(path: &Path) {
    let c = Connection::open(path).expect("open");
    c.execute_batch(
        "CREATE TABLE transcripts_full (
            run_id INTEGER NOT NULL REFERENCES runs(run_id), seat INTEGER NOT NULL, slot INTEGER NOT NULL,
            attempt INTEGER NOT NULL, kind TEXT NOT NULL, round INTEGER NOT NULL, role TEXT NOT NULL,
            model TEXT NOT NULL, served_id TEXT NOT NULL, endpoint TEXT NOT NULL, messages_json TEXT NOT NULL,
            raw_reply TEXT NOT NULL, action TEXT, reason TEXT, parse_status TEXT NOT NULL, detail TEXT NOT NULL,
            latency_ms REAL NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER,
            PRIMARY KEY (run_id, seat, slot, kind, attempt)) WITHOUT ROWID;
         INSERT INTO transcripts_full SELECT * FROM transcripts;
         DROP VIEW transcripts; DROP TABLE transcript_calls; DROP TABLE prompt_parts;
         ALTER TABLE transcripts_full RENAME TO transcripts;
         PRAGMA user_version = 3;",
    )
    .expect("downgrade");
}

#[test]
fn a_schema_3_store_moves_its_transcripts_into_parts_unchanged() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    run(&study, &store, &["--runs", "1"]);
    let before = transcripts(&store);
    let hashes = record_hashes(&store);
    assert!(before.len() > 20);
    to_schema_3(&store);
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'prompt_parts'"), 0, "schema 3 now");
    drop(c);
    let opened = agora_engine::Store::open(&store).expect("a schema-3 store opens and is upgraded");
    drop(opened);
    assert_eq!(transcripts(&store), before, "every transcript reads back as it was");
    assert_eq!(record_hashes(&store), hashes);
    let c = Connection::open(&store).expect("open");
    let version: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
    assert_eq!(version, agora_engine::store::SCHEMA_VERSION);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'transcripts' AND type = 'view'"), 1);
    drop(c);
    // The upgraded store resumes: nothing left to run, nothing written twice.
    run(&study, &store, &["--runs", "1"]);
    assert_eq!(transcripts(&store), before);
}
