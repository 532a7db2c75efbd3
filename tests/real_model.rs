//! A small LLM study against a real model served by llama.cpp's OpenAI-compatible server
//! (`scripts/llm-server.sh start`, which `.ci/run` runs first). The test needs that server and
//! the variable AGORA_LLM_MODELS naming a models file for it, so it is ignored by a plain
//! `cargo test` (which reports it as ignored, with the reason) and run by `.ci/run` with
//! `-- --include-ignored`; run without the variable, it fails and says what to start.

use std::path::Path;

use rusqlite::Connection;

mod common;
use common::{agora, assert_every_slot_accounted, count, record_hashes, text};

#[test]
#[ignore = "needs a model server: scripts/llm-server.sh start, then AGORA_LLM_MODELS=scenarios/models/local-gemma.ron cargo test --test real_model -- --ignored"]
fn small_study_with_a_real_model_then_replay_without_a_server() {
    let models = std::env::var("AGORA_LLM_MODELS").expect(
        "AGORA_LLM_MODELS names the models file of a running server (scripts/llm-server.sh start; \
         AGORA_LLM_MODELS=scenarios/models/local-gemma.ron)",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("real.sqlite");
    let study = "scenarios/studies/llm-smoke.ron";
    let out = agora(&["run", study, "--models", &models, "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    println!("{t}");
    assert!(t.contains("== LLM calls ==") && t.contains("parsed") && t.contains("fallback"), "rates reported: {t}");
    assert_every_slot_accounted(&store);
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), 7);
    assert!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE kind = 'probe'") > 0, "the recognition probe was asked");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE raw_reply = '' AND parse_status <> 'fallback'"), 0);
    let levels = count(&c, "SELECT COUNT(DISTINCT level) FROM runs");
    assert_eq!(levels, 4, "baseline and one cell of each level");
    drop(c);

    // Replay into a fresh store with every endpoint pointing nowhere: any call would fail.
    let dead = dir.path().join("dead.ron");
    let text_models =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&models)).expect("models file");
    let rewired: String = text_models
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("endpoints:") {
                "            endpoints: [\"http://127.0.0.1:9/v1\"],".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&dead, rewired).expect("write");
    let replayed = dir.path().join("replayed.sqlite");
    let out = agora(&[
        "run",
        study,
        "--models",
        dead.to_str().expect("utf8"),
        "--store",
        replayed.to_str().expect("utf8"),
        "--replay",
        "--cache",
        store.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        record_hashes(&store),
        record_hashes(&replayed),
        "replay reproduces every record hash, transcripts included"
    );
}
