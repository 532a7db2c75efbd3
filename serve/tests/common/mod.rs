//! A session served in-process on loopback, and a scripted participant that goes through the
//! pages over HTTP as a browser would (consent, questions, the waiting room, each decision).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agora_serve::{prepare, serve, App, ServeOptions};
pub use agora_test_support::people::{client, state};
use agora_test_support::{FakeReply, FakeServer};
use serde_json::Value;

/// The admin token the tests use.
pub const TOKEN: &str = "test-admin-token-0123456789";

/// A study file with `block` and the participant pages (one comprehension question, answer 1).
pub fn study(dir: &Path, name: &str, models: &str, blocks: &str, wait: u64, decision: u64) -> PathBuf {
    let text = format!(
        r#"Study(
    version: 1, name: "{name}", master_seed: 11, runs: 1, models: [{models}],
    blocks: [{blocks}],
    participants: Participants(
        consent: "You take part in a study of decisions.\n\nYour answers are stored under an opaque id.",
        instructions: "You play a game with other participants.\n\nRead each page and answer.",
        comprehension: [Question(text: "Who decides for you?", options: ["The computer", "You"], answer: 1)],
        retries: 1,
        wait_seconds: {wait},
        decision_seconds: {decision},
    ),
)"#
    );
    let path = dir.join(format!("{name}.ron"));
    std::fs::write(&path, text).expect("study");
    path
}

/// A block of the repeated dilemma of `rounds` rounds between two people (tit-for-tat standing in).
pub fn people_dilemma(rounds: u32) -> String {
    format!(
        r#"Block(name: "pd", environment: PrisonersDilemma(rounds: {rounds}),
            rosters: [Roster(name: "people", members: [Member(policy: Human(TitForTat))])])"#
    )
}

/// [`people_dilemma`] played `runs` times (a society a pair of people).
pub fn people_dilemma_runs(rounds: u32, runs: u32) -> String {
    format!(
        r#"Block(name: "pd", environment: PrisonersDilemma(rounds: {rounds}), runs: {runs},
            rosters: [Roster(name: "people", members: [Member(policy: Human(TitForTat))])])"#
    )
}

/// A served session.
pub struct Served {
    pub app: Arc<App>,
    pub base: String,
    pub rt: tokio::runtime::Runtime,
    pub store: PathBuf,
}

/// Prepares and serves `study` into `store` on a loopback port.
pub fn start(study: &Path, store: &Path) -> Served {
    start_behind(study, store, None)
}

/// As [`start`], with `proxy_header` as the trusted proxy's header.
pub fn start_behind(study: &Path, store: &Path, proxy_header: Option<&str>) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let app = prepare(&ServeOptions {
        study: study.to_path_buf(),
        store: store.to_path_buf(),
        cells: None,
        models: None,
        admin_token: Some(TOKEN.into()),
        pool_key: Some(b"pool-key".to_vec()),
        proxy_header: proxy_header.map(str::to_string),
    })
    .expect("prepare");
    let (addr, _task) = rt.block_on(serve(app.clone(), "127.0.0.1:0".parse().expect("addr"))).expect("serve");
    Served { app, base: format!("http://{addr}"), rt, store: store.to_path_buf() }
}

/// A session of [`people_dilemma`] of `rounds` rounds (`wait` and `decision` seconds, as in
/// [`study`]), served as [`serve_study`] serves it.
pub fn serve_people(
    name: &str,
    rounds: u32,
    wait: u64,
    decision: u64,
    proxy_header: Option<&str>,
) -> (tempfile::TempDir, Served) {
    serve_study(name, "", &people_dilemma(rounds), wait, decision, proxy_header)
}

/// The [`study`] of `models` and `blocks`, its file and store in a fresh temporary directory
/// (returned: keep it), served as [`start_behind`] serves it.
pub fn serve_study(
    name: &str,
    models: &str,
    blocks: &str,
    wait: u64,
    decision: u64,
    proxy_header: Option<&str>,
) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = study(dir.path(), name, models, blocks, wait, decision);
    let served = start_behind(&study, &dir.path().join("s.sqlite"), proxy_header);
    (dir, served)
}

/// A fake model server on `rt` answering every request legally, and the declaration of its
/// model `fake` for a study's `models`.
pub fn fake_model_server(rt: &tokio::runtime::Runtime) -> (FakeServer, String) {
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("fake server");
    let models = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{}"], served_id: "fake", concurrency: 4, timeout_s: 120.0, max_attempts: 2, max_retries: 2, backoff_ms: 5)"#,
        server.endpoint()
    );
    (server, models)
}

/// Creates `n` session codes through the admin API.
pub async fn codes(base: &str, n: usize) -> Vec<String> {
    agora_test_support::people::codes(base, TOKEN, n).await
}

/// Consents and answers the question right.
pub async fn enter(base: &str, code: &str) {
    let c = client();
    let page = c.get(format!("{base}/p/{code}")).send().await.expect("get").text().await.expect("text");
    assert!(page.contains("You take part in a study of decisions.") && page.contains("I agree"), "{page}");
    let r = c.post(format!("{base}/p/{code}/consent")).form(&[("agree", "yes")]).send().await.expect("consent");
    assert_eq!(r.status(), 303);
    let page = c.get(format!("{base}/p/{code}")).send().await.expect("get").text().await.expect("text");
    assert!(page.contains("Who decides for you?"), "{page}");
    let r = c.post(format!("{base}/p/{code}/comprehension")).form(&[("q0", "1")]).send().await.expect("questions");
    assert_eq!(r.status(), 303);
}

/// Plays every decision with `choose(form, slot)` (the form's fields) until the end; returns
/// the fields submitted, in order.
pub async fn play(
    base: &str,
    code: &str,
    choose: impl Fn(&Value, u64) -> Vec<(String, String)>,
) -> Vec<Vec<(String, String)>> {
    let c = client();
    let mut sent = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        assert!(std::time::Instant::now() < deadline, "the session did not end");
        let s = state(base, code).await;
        if s["stage"] == "done" {
            return sent;
        }
        let Some(d) = s["decision"].as_object() else {
            // Well under the rate limit (200 requests a participant in 10 s), however long the wait.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut fields = choose(&d["form"], d["slot"].as_u64().expect("slot"));
        fields.push(("nonce".into(), d["nonce"].as_str().expect("nonce").into()));
        let r = c.post(format!("{base}/p/{code}/act")).form(&fields).send().await.expect("act");
        assert_eq!(r.status(), 303, "{}", r.text().await.unwrap_or_default());
        fields.pop();
        sent.push(fields);
    }
}

/// A count from the store.
pub fn count(store: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(store).expect("store");
    c.query_row(sql, [], |r| r.get(0)).expect("count")
}

/// The rows of a query on the store, each read by `read`.
pub fn rows<T>(
    store: impl AsRef<Path>,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Vec<T> {
    let c = rusqlite::Connection::open(store).expect("store");
    let mut st = c.prepare(sql).expect("query");
    st.query_map(params, read).expect("rows").collect::<Result<_, _>>().expect("rows read")
}
