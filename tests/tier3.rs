//! Tier 3 end to end: scripted agents whose stated reasoning drives their action reach Tier 3
//! for `ultimatum-offer`; the same agents with decorative reasoning stay at Tier 2, stopped by
//! the dependency condition.
//!
//! Three fake models of three families (one fake server, told apart by the request's `model`
//! field, which also enters the hash each reply draws from) play the ultimatum game at the
//! baseline (C0, three runs), under the divergent payoffs (C3, three runs) and in one cell of
//! each level (persona-table, step-by-step; two runs each). Every reply writes a `reasoning`
//! field before its answer. A proposer draws, from the SHA-256 of the request body (sampling
//! seed included, so a replicate draws afresh), whether it states fairness (a sentence the
//! default lexicon codes `fairness`). The driving fake offers 42 % of the pie when it stated
//! fairness and 38 % when it did not (± 1 % noise), so offers average 40 %, inside the anchor's
//! 0.40 ± 0.05, and the within-prompt dependency of the offer share on fairness is 0.04. The
//! decorative fake states fairness on the same draw but offers 42 % or 38 % on an independent
//! draw: the same offers and the same statements, without dependency. Responders accept and
//! state nothing but the task.
//!
//! The pipeline is the one a user runs: `agora run`, `agora audit replicates`, `agora audit`,
//! `agora audit export`, two human coders' labels (the true code of each sentence, computed
//! here from its text) through `agora audit import`, `agora audit` again (the κ gate now
//! validates the lexicon coder) and `agora analyze`; the verdicts are read from analysis.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{FakeReply, FakeServer};
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;
use common::{agora, text};

const OPENING: &str = "I am deciding on an offer.";
const FAIRNESS: &str = "Splitting the points evenly seems right.";
const RESPONDER: &str = "I am looking at the offer on the table.";
/// (name, family, served id) of the three fake models.
const MODELS: [(&str, &str, &str); 3] =
    [("fake-a", "FakeA", "fake-a-1"), ("fake-b", "FakeB", "fake-b-1"), ("fake-c", "FakeC", "fake-c-1")];

/// The true code of a reasoning sentence the fakes write.
fn true_code(sentence: &str) -> &'static str {
    match sentence {
        FAIRNESS => "fairness",
        OPENING | RESPONDER => "understanding",
        other => panic!("a sentence the fakes do not write: {other:?}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// The reply to one request. `driving`: the offer depends on the stated fairness.
fn reply(body: &Value, driving: bool) -> FakeReply {
    let h = Sha256::digest(body.to_string().as_bytes());
    let schema = &body["response_format"]["json_schema"]["schema"];
    let field = schema["required"]
        .as_array()
        .expect("schema")
        .iter()
        .filter_map(Value::as_str)
        .find(|f| *f != "reasoning")
        .expect("answer field")
        .to_string();
    let prop = &schema["properties"][&field];
    if prop["type"] == "integer" {
        // The proposer: the offer, a share of the pie.
        let pie = prop["maximum"].as_i64().expect("the pie");
        let fair = h[0] & 1 == 1;
        let generous = if driving { fair } else { h[1] & 1 == 1 };
        let noise = i64::from(h[2] % 3) - 1;
        let percent = if generous { 42 } else { 38 } + noise;
        let offer = (pie * percent + 50) / 100;
        let mut reasoning = vec![OPENING];
        if fair {
            reasoning.push(FAIRNESS);
        }
        FakeReply::Content(serde_json::json!({"reasoning": reasoning.join(" "), field: offer}).to_string())
    } else {
        // The responder accepts (the first label).
        let labels = prop["enum"].as_array().expect("labels");
        FakeReply::Content(serde_json::json!({"reasoning": RESPONDER, field: labels[0].clone()}).to_string())
    }
}

fn models(endpoint: &str) -> String {
    MODELS
        .iter()
        .map(|(name, family, served)| {
            format!(
                r#"Model(name: "{name}", family: "{family}", endpoints: ["{endpoint}"], served_id: "{served}",
                   concurrency: 4, timeout_s: 5.0, max_attempts: 2, max_retries: 2, backoff_ms: 5)"#
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    let cells = dir.join("cells");
    std::fs::create_dir_all(&cells).expect("mkdir");
    for c in ["persona-table", "step-by-step"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells").join(format!("{c}.ron"));
        std::fs::copy(src, cells.join(format!("{c}.ron"))).expect("copy cell");
    }
    let study = format!(
        r#"Study(
    version: 1, name: "tier3", master_seed: 23, runs: 3,
    models: [{}],
    blocks: [
        Block(name: "ug", environment: Bargaining(game: Ultimatum, games: 4), variants: [C0, C3],
              model_rosters: true, rosters: [],
              cells: ["baseline", "persona-table", "step-by-step"], cell_runs: 2),
    ],
)"#,
        models(endpoint)
    );
    let path = studies.join("tier3.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn ok(args: &[&str]) -> String {
    let out = agora(args);
    assert!(out.status.success(), "agora {}: {}", args.join(" "), text(&out));
    text(&out)
}

/// Runs the whole pipeline against a fake whose reasoning drives (or decorates) its offers,
/// and returns `ultimatum-offer`'s verdict from analysis.json.
fn verdict(driving: bool) -> Value {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start(Arc::new(move |_, body| reply(body, driving)))).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    ok(&["run", s(&study), "--store", s(&store)]);
    let models_file = dir.path().join("models.ron");
    std::fs::write(&models_file, format!("Models(version: 1, models: [{}])", models(&server.endpoint())))
        .expect("models");

    // Replicates of a sample of each model's decisions (proposers and responders alike).
    let out = ok(&[
        "audit",
        "replicates",
        "--store",
        s(&store),
        "--models",
        s(&models_file),
        "--seed",
        "5",
        "--sample",
        "30",
        "--m",
        "6",
    ]);
    assert!(out.contains("540 replicates of 90 prompts"), "{out}");

    // Code the transcripts and replicates, export a sample, and label it as two humans would.
    let report = dir.path().join("audit");
    ok(&["audit", "--store", s(&store), "--out", s(&report)]);
    let sample = dir.path().join("sample.jsonl");
    ok(&["audit", "export", "--store", s(&store), "--sample", "40", "--seed", "1", "--out", s(&sample)]);
    let records: Vec<Value> = std::fs::read_to_string(&sample)
        .expect("sample")
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    for (model, _, _) in MODELS {
        for code in ["fairness", "understanding"] {
            assert!(
                records.iter().any(|r| r["model"] == model && true_code(r["text"].as_str().expect("text")) == code),
                "the sample holds {code} sentences of {model}"
            );
        }
    }
    let labels: String = records
        .iter()
        .map(|r| {
            let label = true_code(r["text"].as_str().expect("text"));
            format!(
                "{}\n",
                serde_json::json!({"response_id": r["response_id"], "sentence_index": r["sentence_index"], "label": label})
            )
        })
        .collect();
    for coder in ["ana", "bob"] {
        let file = dir.path().join(format!("{coder}.jsonl"));
        std::fs::write(&file, &labels).expect("labels");
        ok(&["audit", "import", "--store", s(&store), "--labels", s(&file), "--coder-name", coder]);
    }

    // The audit again: the gate validates the lexicon coder on each model's text.
    let out = ok(&["audit", "--store", s(&store), "--out", s(&report)]);
    for (model, _, _) in MODELS {
        assert!(out.contains(&format!("gate on lexicon/1 for model {model}: validated")), "{out}");
    }

    let analysis = dir.path().join("analysis");
    ok(&["analyze", "--store", s(&store), "--out", s(&analysis)]);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(analysis.join("analysis.json")).expect("analysis.json"))
            .expect("json");
    server.stop();
    json["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["claim"] == "ultimatum-offer")
        .expect("the ultimatum-offer verdict")
        .clone()
}

fn evidence(v: &Value) -> String {
    v["evidence"].as_array().expect("evidence").iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
}

#[test]
fn reasoning_that_drives_the_offer_reaches_tier_3() {
    let v = verdict(true);
    assert_eq!(v["tier"], 3, "{v:#}");
    assert_eq!(v["tier_name"], "Tier 3 transferable", "{v:#}");
    assert!(v["first_unmet"].is_null(), "{v:#}");
    let ev = evidence(&v);
    assert!(ev.contains("matches the anchor: offer equivalent"), "{ev}");
    assert!(ev.contains("mechanism shown: lexicon/1"), "{ev}");
    assert!(ev.contains("dependency of offer_share on fairness"), "{ev}");
}

#[test]
fn decorative_reasoning_stays_at_tier_2() {
    let v = verdict(false);
    assert_eq!(v["tier"], 2, "{v:#}");
    let unmet = v["first_unmet"].as_str().expect("a first unmet condition");
    assert!(unmet.starts_with("transcript audit consistent with the human mechanism: "), "{unmet}");
    assert!(unmet.contains("coder lexicon/1: dependency of offer_share on fairness"), "{unmet}");
    assert!(unmet.contains("not positive") || unmet.contains("its lower bound ≤ 0"), "{unmet}");
    let ev = evidence(&v);
    assert!(ev.contains("matches the anchor: offer equivalent"), "{ev}");
    assert!(!ev.contains("mechanism shown"), "{ev}");
}
