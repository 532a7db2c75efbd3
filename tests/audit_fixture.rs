//! Committed human labels (issue 12, "real parts"): a small deterministic store — one fake
//! model playing a two-round prisoner's dilemma with step-by-step reasoning against the fake
//! server, sixteen fixed reasoning sentences in all — audited with the default codebook and
//! exported with a fixed seed; the labels two human coders gave that export, committed in
//! `tests/fixtures/audit/` in the import formats (`labels-ana.jsonl`: the exported JSONL records
//! with a `label` field, as Argilla gives them back; `labels-ben.csv`: `response_id`,
//! `sentence_index`, `text`, `label`, as Label Studio's CSV export), imported; and the κ values
//! `agora audit agreement` computes checked against κ computed by hand from the fixture, with
//! the gate's verdict. A bad committed fixture (`labels-bad.jsonl`, an unknown code) is refused
//! naming the file, line and field, and writes nothing.
//!
//! The response ids in the fixture are `{run_key}:{seat}:{slot}`, and a run key is the SHA-256
//! of the run's canonical specification (study, model, cell, seed…, not the fake server's
//! address), so they are the same on every machine; the test checks that the export still
//! matches the fixture's records sentence for sentence, so a change to the run keys, the
//! sentence splitter or the lexicon shows here as a failed comparison, not as wrong κ.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, text};

/// The reasoning of response i = (round - 1) * 2 + seat: four fixed sentences each, the first
/// restating the task. The codes the human coders gave them, and the lexicon's, are in the test.
const REASONING: [[&str; 3]; 4] = [
    [
        "Cooperating gives me the most points.",
        "Splitting the points evenly seems right.",
        "A good total for the two of us would also keep things even.",
    ],
    [
        "Option J gives the largest total for the two of us.",
        "It matters to me that my partner does well.",
        "I prefer to stay ahead of the other participant.",
    ],
    [
        "The other participant cooperated last round, so I should return the favor.",
        "To be fair, cooperating again gives me the most points.",
        "The other participant would be better off if we both cooperate.",
    ],
    [
        "They defected last round, so they do not deserve my help.",
        "We share a hometown, so helping a fellow member makes sense.",
        "Whatever I choose, the game ends after this round.",
    ],
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// The reply to one request: the reasoning depends on the round and the seat.
fn reply(body: &Value) -> FakeReply {
    let schema = &body["response_format"]["json_schema"]["schema"];
    let required: Vec<&str> = schema["required"].as_array().expect("schema").iter().filter_map(Value::as_str).collect();
    let field = *required.iter().find(|f| **f != "reasoning").expect("answer field");
    let label = schema["properties"][field]["enum"][0].clone();
    if !required.contains(&"reasoning") {
        return FakeReply::Content(serde_json::json!({ field: label }).to_string());
    }
    let user = body["messages"][1]["content"].as_str().expect("user message");
    let seat = if user.starts_with("You are participant A") { 0 } else { 1 };
    let at = user.rfind("Round ").expect("round line") + "Round ".len();
    let round: usize = user[at..].split(' ').next().and_then(|r| r.parse().ok()).expect("round number");
    let opening = format!("This is round {round} of two and I am participant {}.", ["A", "B"][seat]);
    let mut sentences = vec![opening.as_str()];
    sentences.extend(REASONING[(round - 1) * 2 + seat]);
    FakeReply::Content(serde_json::json!({"reasoning": sentences.join(" "), field: label}).to_string())
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let cells = dir.join("cells");
    std::fs::create_dir_all(&cells).expect("mkdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells/step-by-step.ron");
    std::fs::copy(src, cells.join("step-by-step.ron")).expect("copy cell");
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    let study = format!(
        r#"Study(
    version: 1, name: "labels-fixture", master_seed: 12, runs: 1,
    models: [Model(name: "plain", family: "Fake", endpoints: ["{endpoint}"], served_id: "plain-1",
                   concurrency: 2, timeout_s: 5.0, max_attempts: 2, max_retries: 2, backoff_ms: 5)],
    blocks: [
        Block(name: "pd", environment: PrisonersDilemma(rounds: 2), model_rosters: true, rosters: [],
              cells: ["step-by-step"], cell_runs: 1),
    ],
)"#
    );
    let path = studies.join("fixture.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit").join(name)
}

#[test]
fn committed_fixture_export() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start(Arc::new(|_, body| reply(body)))).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    let out = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(out.status.success(), "{}", text(&out));
    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    let sample = dir.path().join("sample.jsonl");
    let out = agora(&["audit", "export", "--store", s(&store), "--sample", "10", "--seed", "12", "--format", "jsonl", "--out", s(&sample)]);
    assert!(out.status.success(), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    eprintln!("{}", count(&c, "SELECT COUNT(*) FROM runs"));
    eprintln!("EXPORT\n{}", std::fs::read_to_string(&sample).expect("sample"));
}
