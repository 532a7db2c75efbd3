//! Level claims are graded by their own test, not against the game-theoretic prediction: three
//! deterministic models of three families that always pick the first listed option and offer a
//! fifth of any amount, run on the instrument's prisoner's-dilemma and ultimatum blocks at
//! their shipped run counts, reach no level claim above Tier 0. (Graded on "above the
//! prediction", cooperation 1.00 was "in the human corridor" and offers of 0.20 "matched the
//! meta-analytic mean", both at Tier 2.)

use std::path::Path;
use std::sync::Arc;

use agora_test_support::{FakeReply, FakeServer};
use serde_json::Value;

mod common;
use common::{agora, text};

const MODELS: [(&str, &str); 3] = [("first-a", "FamA"), ("first-b", "FamB"), ("first-c", "FamC")];

/// The first listed option, or a fifth of the largest amount.
fn first_option(body: &Value) -> FakeReply {
    let schema = &body["response_format"]["json_schema"]["schema"];
    let Some(required) = schema["required"].as_array() else {
        // A question without an answer schema (the recognition probe): plain text.
        return FakeReply::Content("I do not know this game.".into());
    };
    let mut answer = serde_json::Map::new();
    for field in required.iter().filter_map(Value::as_str) {
        let prop = &schema["properties"][field];
        let value = if let Some(labels) = prop["enum"].as_array() {
            labels[0].clone()
        } else if prop["type"] == "integer" {
            let max = prop["maximum"].as_i64().expect("a maximum");
            Value::from(max / 5)
        } else {
            Value::from("I pick the first option.")
        };
        answer.insert(field.to_string(), value);
    }
    FakeReply::Content(Value::Object(answer).to_string())
}

/// The instrument's block `name`, as its study file writes it.
fn instrument_block(name: &str) -> String {
    let study = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies/instrument.ron"))
        .expect("the instrument study");
    let start = study.find(&format!("name: \"{name}\"")).expect("the block");
    let open = study[..start].rfind("Block(").expect("its opening");
    let close = open + study[open..].find("\n        ),").expect("its end") + "\n        )".len();
    study[open..close].to_string()
}

#[test]
fn first_option_models_reach_no_level_claim_above_tier_0() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = rt.block_on(FakeServer::start(Arc::new(|_, body| first_option(body)))).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let (studies, cells) = (dir.path().join("studies"), dir.path().join("cells"));
    std::fs::create_dir_all(&studies).expect("mkdir");
    std::fs::create_dir_all(&cells).expect("mkdir");
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells")).expect("cells") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, cells.join(path.file_name().expect("name"))).expect("copy cell");
    }
    let models = MODELS
        .iter()
        .map(|(name, family)| {
            format!(
                r#"Model(name: "{name}", family: "{family}", endpoints: ["{}"], served_id: "{name}",
                   concurrency: 64, timeout_s: 120.0, max_attempts: 2, max_retries: 2, backoff_ms: 5)"#,
                server.endpoint()
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let study = format!(
        "Study(version: 1, name: \"first-option\", master_seed: 20260815, runs: 30, models: [{models}],\n    blocks: [\n        {},\n        {},\n    ],\n)",
        instrument_block("pd"),
        instrument_block("ultimatum")
    );
    let path = studies.join("first-option.ron");
    std::fs::write(&path, study).expect("study");
    let store = dir.path().join("s.sqlite");
    let out = agora(&["run", path.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let analysis = dir.path().join("analysis");
    let out = agora(&["analyze", "--store", store.to_str().expect("utf8"), "--out", analysis.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    server.stop();
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(analysis.join("analysis.json")).expect("analysis.json"))
            .expect("json");
    let verdict = |id: &str| {
        json["verdicts"].as_array().expect("verdicts").iter().find(|v| v["claim"] == id).expect("verdict").clone()
    };
    for id in ["pd-corridor", "ultimatum-offer", "ultimatum-rejection"] {
        let v = verdict(id);
        assert_eq!(v["tier"], 0, "{id}: {v:#}");
        assert_eq!(v["first_unmet"], "holds at baseline in no model", "{id}: {v:#}");
    }
    let corridor = verdict("pd-corridor");
    let evidence = corridor["evidence"].as_array().expect("evidence");
    assert_eq!(evidence.len(), 3, "{corridor:#}");
    assert!(
        evidence.iter().all(|e| e.as_str().is_some_and(
            |e| e.contains("does not hold at baseline (mean 1.000 against the corridor 0.2-0.5, 30 runs)")
        )),
        "{corridor:#}"
    );
    let offer = verdict("ultimatum-offer");
    assert!(
        offer["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .all(|e| e.as_str().is_some_and(|e| e.contains("offer not equivalent"))),
        "{offer:#}"
    );
}
