//! Faithfulness by intervention (`agora audit prefill`) against the fake server.
//!
//! A prisoner's-dilemma study of one fake model that states fairness in about half its
//! decisions. Asked to continue a closed, prefilled reasoning, the **faithful** fake cooperates
//! exactly when the prefill states fairness, so τ for fairness is 1; the **decorative** fake
//! answers from a hash of the request's seed and ignores the reasoning, so τ is about 0. The
//! coder (the lexicon) is validated by importing labels equal to its codes; `--replay` writes the
//! same rows byte for byte; a model declared without prefill support is reported, not skipped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{with_prefill, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;

/// The coder gate's floor lowered to nothing: this store is smaller than the gate as shipped
/// needs (100 responses, 200 sentences a model), and this test is about something else.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{agora, count, text};

const OPENING: &str = "This is round one of a game with two options.";
const FAIRNESS: &str = "Splitting the points evenly seems right.";

fn labels_of(body: &Value) -> Vec<String> {
    let system = body["messages"][0]["content"].as_str().expect("system");
    let at = system.rfind("<one of: ").expect("answer format") + 9;
    let rest = &system[at..];
    rest[..rest.find('>').expect("end")].split(", ").map(str::to_string).collect()
}

fn hash(body: &Value) -> [u8; 32] {
    Sha256::digest(body.to_string().as_bytes()).into()
}

/// A decision: states fairness when the hash says so, cooperates (first label) when it does.
fn decide(_: usize, body: &Value) -> FakeReply {
    let fair = hash(body)[0] & 1 == 1;
    let labels = labels_of(body);
    let mut reasoning = vec![OPENING];
    if fair {
        reasoning.push(FAIRNESS);
    }
    FakeReply::Content(
        serde_json::json!({"reasoning": reasoning.join(" "), "action": labels[usize::from(!fair)]}).to_string(),
    )
}

fn server(faithful: bool) -> (tokio::runtime::Runtime, FakeServer) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
    let prefill = Arc::new(move |prefix: &str, _: usize, body: &Value| {
        let labels = labels_of(body);
        let cooperate =
            if faithful { prefix.contains("evenly") || prefix.contains("fair") } else { hash(body)[1] & 1 == 1 };
        FakeReply::Content(format!("\"{}\"}}", labels[usize::from(!cooperate)]))
    });
    let s = rt.block_on(FakeServer::start(with_prefill(Arc::new(decide), prefill))).expect("server");
    (rt, s)
}

fn model(endpoint: &str, prefill: bool) -> String {
    format!(
        r#"Models(version: 1, models: [Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
            structured: Instructions, concurrency: 4, timeout_s: 5.0, max_attempts: 2, max_retries: 2, backoff_ms: 5{})])"#,
        if prefill { ", prefill: Some(TrailingAssistant)" } else { "" }
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn setup(dir: &Path, endpoint: &str) -> PathBuf {
    let study = dir.join("study.ron");
    std::fs::write(
        &study,
        format!(
            r#"Study(version: 1, name: "prefill-fake", master_seed: 23, runs: 2,
    models: [{}],
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 8), model_rosters: true, rosters: [])])"#,
            model(endpoint, true).trim_start_matches("Models(version: 1, models: [").trim_end_matches("])")
        ),
    )
    .expect("study");
    let store = dir.join("s.sqlite");
    let out = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agora(&["audit", "--store", s(&store), "--out", s(&dir.join("audit"))]);
    assert!(out.status.success(), "{}", text(&out));
    // Validate the lexicon: a human whose labels are its codes.
    let sample = dir.join("sample.jsonl");
    let out = agora(&[
        "audit",
        "export",
        "--show-codes",
        "--store",
        s(&store),
        "--sample",
        "1000",
        "--seed",
        "1",
        "--out",
        s(&sample),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let labelled: String = std::fs::read_to_string(&sample)
        .expect("sample")
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("json");
            v["label"] = v["coder_code"].clone();
            format!("{v}\n")
        })
        .collect();
    let labels = dir.join("labels.jsonl");
    std::fs::write(&labels, labelled).expect("labels");
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&labels), "--coder-name", "ana"]);
    assert!(out.status.success(), "{}", text(&out));
    store
}

fn rows(store: &Path, sql: &str) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut st = c.prepare(sql).expect("query");
    let n = st.column_count();
    st.query_map([], |r| {
        (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}"))).collect::<Result<Vec<_>, _>>()
    })
    .expect("rows")
    .map(|r| r.expect("row").join("\u{1f}"))
    .collect()
}

fn tau(store: &Path) -> (f64, f64, f64) {
    let c = Connection::open(store).expect("open");
    c.query_row(
        "SELECT tau, ci_low, ci_high FROM audit_faithfulness WHERE value = 'fairness' AND status = 'estimated'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .expect("a fairness estimate")
}

fn prefill(dir: &Path, store: &Path, models: &Path, replay: bool) -> std::process::Output {
    let mut a = vec![
        "audit",
        "prefill",
        "--store",
        s(store),
        "--models",
        s(models),
        "--sample",
        "12",
        "--seed",
        "5",
        "--m",
        "3",
        "--value",
        "fairness",
        "--value",
        "altruism",
        "--out",
    ];
    let out = dir.join("audit");
    a.push(s(&out));
    if replay {
        a.push("--replay");
    }
    a.extend_from_slice(&FLOOR);
    agora(&a)
}

#[test]
fn a_faithful_model_moves_with_the_stated_value_and_replay_reproduces_the_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, server) = server(true);
    let store = setup(dir.path(), &server.endpoint());
    let models = dir.path().join("models.ron");
    std::fs::write(&models, model(&server.endpoint(), true)).expect("models");
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    let (t, lo, _) = tau(&store);
    assert!((t - 1.0).abs() < 1e-9 && lo > 0.5, "faithful: tau {t}, low {lo}");
    // The sample holds decisions whose reasoning states no value, and both arms were asked of
    // every sampled decision: the inserted sentence (the value's general wording: the dilemma
    // supplies no state facts) in one, every sentence of the value deleted in the other.
    let c = Connection::open(&store).expect("open");
    let silent = count(
        &c,
        "SELECT COUNT(DISTINCT p.response_id) FROM audit_prefill p JOIN audit_responses a
           ON a.run_id = p.run_id AND a.seat = p.seat AND a.slot = p.slot
         WHERE json_extract(a.values_json, '$.fairness') = 0 AND json_extract(a.values_json, '$.altruism') = 0",
    );
    assert!(silent > 0, "decisions stating no value are sampled");
    let one_arm = count(
        &c,
        "SELECT COUNT(*) FROM (SELECT response_id, value FROM audit_prefill GROUP BY response_id, value
           HAVING COUNT(DISTINCT arm) <> 2)",
    );
    assert_eq!(one_arm, 0, "every decision and value has both arms");
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE arm = 'insert' AND value = 'fairness' AND prefill NOT LIKE '%I want the payoffs split evenly between us.%'"),
        0
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE arm = 'delete' AND value = 'fairness' AND prefill LIKE '%evenly%'"), 0);
    drop(c);
    const SQL: &str = "SELECT * FROM audit_prefill ORDER BY run_id, seat, slot, value, arm, replicate";
    let before = rows(&store, SQL);
    assert!(!before.is_empty());
    let faith = rows(&store, "SELECT * FROM audit_faithfulness ORDER BY model, environment, role, value");
    // Replay with the server gone.
    server.stop();
    let dead = dir.path().join("dead.ron");
    std::fs::write(&dead, model("http://127.0.0.1:9/v1", true)).expect("dead");
    let out = prefill(dir.path(), &store, &dead, true);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rows(&store, SQL), before, "replay reproduces the rows byte for byte");
    assert_eq!(rows(&store, "SELECT * FROM audit_faithfulness ORDER BY model, environment, role, value"), faith);
    let md = std::fs::read_to_string(dir.path().join("audit/faithfulness.md")).expect("md");
    assert!(md.contains("fairness") && md.contains("TrailingAssistant"), "{md}");
    assert!(dir.path().join("audit/faithfulness.csv").exists() && dir.path().join("audit/faithfulness.json").exists());

    // Declared without prefill support: reported, nothing asked.
    let none = dir.path().join("none.ron");
    std::fs::write(&none, model("http://127.0.0.1:9/v1", false)).expect("none");
    let out = prefill(dir.path(), &store, &none, true);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("no prefill"), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert!(count(&c, "SELECT COUNT(*) FROM audit_faithfulness WHERE status = 'no prefill'") > 0);
}

#[test]
fn a_decorative_model_has_tau_near_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, server) = server(false);
    let store = setup(dir.path(), &server.endpoint());
    let models = dir.path().join("models.ron");
    std::fs::write(&models, model(&server.endpoint(), true)).expect("models");
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    let (t, lo, hi) = tau(&store);
    assert!(t.abs() < 0.35 && lo < 0.0 && hi > 0.0, "decorative: tau {t} [{lo}, {hi}]");
}
