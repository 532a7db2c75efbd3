//! Tier 3 end to end: scripted agents whose stated reasoning drives their action reach Tier 3
//! for `pgg-round1-human` (first-round public-goods contributions match humans); agents in
//! which one hidden cause sets both the statement and the action (Model D of "Auditing LLM
//! Behavior with SUVA: From Stated Values to Actions") stay at Tier 2, stopped by the
//! intervention; agents whose reasoning is decorative stay at Tier 2, stopped by the dependency.
//!
//! Three fake models of three families (one fake server, told apart by the request's `model`
//! field, which also enters the hash each reply draws from) play public goods at the baseline
//! (C0, six runs), under the divergent payoffs (C3) and in one cell of each level
//! (persona-table, step-by-step), three runs each: the claim holds at baseline and the
//! environment's canonical effect (contributions decline) keeps its sign in every cell. Every
//! reply writes a `reasoning` field before its answer. A contributor draws, from the SHA-256 of
//! the request body (sampling seed included, so a replicate draws afresh), whether it states
//! reciprocity (a sentence the default lexicon codes `positive_reciprocity`). Contributions start
//! at half the endowment and fall by a point every two rounds; two points are added:
//! - faithful: when the reasoning states reciprocity — its own, or the reasoning prefilled by
//!   `agora audit prefill` with the value inserted or deleted;
//! - hidden cause: on the same draw that made it state reciprocity, so its replicates show the
//!   same dependency, but a prefilled reasoning does not move it: its answer to a prefill is
//!   drawn from the decision's prompt alone (not the edited reasoning, not the call's seed), so
//!   every edit of one decision gets the same answer and τ is exactly 0 (a draw per call would
//!   give a τ whose 95 % interval excludes 0 in one sample of twenty);
//! - decorative: on an independent draw: the same statements, no dependency.
//!
//! The pipeline is the one a user runs: `agora run`, `agora audit replicates`, `agora audit`,
//! `agora audit export`, two human coders' labels (the true code of each sentence, computed
//! here from its text) through `agora audit import`, `agora audit` again (the κ gate now
//! validates the lexicon coder), `agora audit prefill` and `agora analyze`; the verdicts are
//! read from analysis.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{with_prefill, Asked, FakeReply};
use serde_json::Value;

mod common;
use common::{agora_ok, draw, fake_model, run_fake, s, study_text, write_models, write_study_file, FakeRun};

const OPENING: &str = "I am deciding on a contribution.";
const RECIPROCITY: &str = "I want to return the favor to the group.";
/// (name, family, served id) of the three fake models.
const MODELS: [(&str, &str, &str); 3] =
    [("fake-a", "FakeA", "fake-a-1"), ("fake-b", "FakeB", "fake-b-1"), ("fake-c", "FakeC", "fake-c-1")];

/// The true code of a reasoning sentence the fakes write.
fn true_code(sentence: &str) -> &'static str {
    match sentence {
        RECIPROCITY => "positive_reciprocity",
        OPENING => "understanding",
        other => panic!("a sentence the fakes do not write: {other:?}"),
    }
}

/// How a fake's two extra points follow its reasoning.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fake {
    /// The reasoning drives the action.
    Faithful,
    /// One draw sets both the statement and the action.
    HiddenCause,
    /// The statement and the action are drawn apart.
    Decorative,
}

/// The round of a request, from its last user message ("Round 3 of 10.").
fn round_of(body: &Value) -> i64 {
    let messages = body["messages"].as_array().expect("messages");
    let text = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("");
    let at = text.rfind("Round ").expect("the round line");
    text[at + 6..].split(' ').next().and_then(|n| n.parse().ok()).expect("a round number")
}

/// Half the endowment in round 1 on average (9 + the two points half the time), a point less
/// every two rounds, ± 1 from the hash.
fn points(body: &Value, h: &[u8], generous: bool) -> i64 {
    (9 - (round_of(body) - 1) / 2 + if generous { 2 } else { 0 } + i64::from(h[2] % 3) - 1).clamp(0, ENDOWMENT)
}

/// The public-goods endowment (the game's default).
const ENDOWMENT: i64 = 20;

/// The reply to one request.
fn reply(body: &Value, fake: Fake) -> FakeReply {
    let h = draw(body);
    let asked = Asked::of(body);
    let field = asked.field();
    assert_eq!(asked.property()["maximum"].as_i64(), Some(ENDOWMENT));
    let reciprocal = h[0] & 1 == 1;
    let generous = if fake == Fake::Decorative { h[1] & 1 == 1 } else { reciprocal };
    let mut reasoning = vec![OPENING];
    if reciprocal {
        reasoning.push(RECIPROCITY);
    }
    let answer = points(body, &h, generous);
    FakeReply::Content(serde_json::json!({"reasoning": reasoning.join(" "), field: answer}).to_string())
}

/// The continuation of a prefilled reasoning (`{"reasoning": "…", "contribution": `).
fn continuation(prefix: &str, body: &Value, fake: Fake) -> FakeReply {
    let h = if fake == Fake::HiddenCause {
        // The hidden cause is the decision's: the prompt without the prefilled turn and seed.
        let mut prompt = body.clone();
        if let Some(m) = prompt["messages"].as_array_mut() {
            m.pop();
        }
        prompt["seed"] = Value::Null;
        draw(&prompt)
    } else {
        draw(body)
    };
    let generous = match fake {
        Fake::Faithful => prefix.contains("return the favor"),
        Fake::HiddenCause => h[0] & 1 == 1,
        Fake::Decorative => h[1] & 1 == 1,
    };
    FakeReply::Content(format!("{}}}", points(body, &h, generous)))
}

fn models(endpoint: &str) -> Vec<String> {
    MODELS
        .iter()
        .map(|(name, family, served)| fake_model(name, family, endpoint, served, ", prefill: Some(TrailingAssistant)"))
        .collect()
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let block = r#"Block(name: "pgg", environment: PublicGoods(), variants: [C0, C3],
              model_rosters: true, rosters: [],
              cells: ["baseline", "persona-table", "step-by-step"], cell_runs: 3)"#;
    let study = study_text("tier3", 23, 6, &models(endpoint), &[block]);
    write_study_file(dir, &["persona-table", "step-by-step"], "tier3.ron", &study)
}

/// Runs the whole pipeline against a fake and returns `pgg-round1-human`'s verdict from
/// analysis.json.
fn verdict(fake: Fake) -> Value {
    let behaviour = with_prefill(
        Arc::new(move |_, body: &Value| reply(body, fake)),
        Arc::new(move |prefix: &str, _, body: &Value| continuation(prefix, body, fake)),
    );
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(behaviour, write_study);
    let models_file = dir.path().join("models.ron");
    write_models(&models_file, &models(&server.endpoint()));

    // Replicates of a sample of each model's decisions.
    let out = agora_ok(&[
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
    agora_ok(&["audit", "--store", s(&store), "--out", s(&report)]);
    let sample = dir.path().join("sample.jsonl");
    agora_ok(&["audit", "export", "--store", s(&store), "--sample", "150", "--seed", "1", "--out", s(&sample)]);
    let records: Vec<Value> = std::fs::read_to_string(&sample)
        .expect("sample")
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    for (model, _, _) in MODELS {
        for code in ["positive_reciprocity", "understanding"] {
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
                serde_json::json!({"response_id": r["response_id"], "sentence_index": r["sentence_index"], "label": label, "export_id": r["export_id"]})
            )
        })
        .collect();
    for coder in ["ana", "bob"] {
        let file = dir.path().join(format!("{coder}.jsonl"));
        std::fs::write(&file, &labels).expect("labels");
        agora_ok(&["audit", "import", "--store", s(&store), "--labels", s(&file), "--coder-name", coder]);
    }

    // The audit again: the gate validates the lexicon coder on each model's text.
    let out = agora_ok(&["audit", "--store", s(&store), "--out", s(&report)]);
    for (model, _, _) in MODELS {
        assert!(out.contains(&format!("gate on lexicon/1 for model {model}: validated")), "{out}");
    }

    // The intervention: each sampled decision's reasoning prefilled with reciprocity inserted
    // and deleted.
    let out = agora_ok(&[
        "audit",
        "prefill",
        "--store",
        s(&store),
        "--models",
        s(&models_file),
        "--sample",
        "16",
        "--seed",
        "5",
        "--m",
        "2",
        "--value",
        "positive_reciprocity",
        "--out",
        s(&report),
    ]);
    assert!(!out.contains("refused"), "{out}");

    let analysis = dir.path().join("analysis");
    agora_ok(&["analyze", "--store", s(&store), "--out", s(&analysis)]);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(analysis.join("analysis.json")).expect("analysis.json"))
            .expect("json");
    server.stop();
    json["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["claim"] == "pgg-round1-human")
        .expect("the pgg-round1-human verdict")
        .clone()
}

fn evidence(v: &Value) -> String {
    v["evidence"].as_array().expect("evidence").iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
}

#[test]
fn reasoning_that_drives_the_contribution_reaches_tier_3() {
    let v = verdict(Fake::Faithful);
    assert_eq!(v["tier"], 3, "{v:#}");
    assert_eq!(v["tier_name"], "Tier 3 transferable", "{v:#}");
    assert!(v["first_unmet"].is_null(), "{v:#}");
    let ev = evidence(&v);
    assert!(ev.contains("matches the anchor: contribution_r1 equivalent"), "{ev}");
    assert!(ev.contains("mechanism shown: lexicon/1"), "{ev}");
    assert!(ev.contains("dependency of contribution_share on positive_reciprocity"), "{ev}");
    assert!(ev.contains("intervention effect τ of positive_reciprocity on contribution_share"), "{ev}");
}

#[test]
fn one_hidden_cause_behind_statement_and_action_stays_at_tier_2() {
    let v = verdict(Fake::HiddenCause);
    assert_eq!(v["tier"], 2, "{v:#}");
    let unmet = v["first_unmet"].as_str().expect("a first unmet condition");
    assert!(unmet.starts_with("transcript audit consistent with the human mechanism: "), "{unmet}");
    assert!(unmet.contains("dependency of contribution_share on positive_reciprocity"), "{unmet}");
    assert!(unmet.contains("does not exclude zero in the mechanism's direction"), "{unmet}");
    assert!(!evidence(&v).contains("mechanism shown"), "{v:#}");
}

#[test]
fn decorative_reasoning_stays_at_tier_2() {
    let v = verdict(Fake::Decorative);
    assert_eq!(v["tier"], 2, "{v:#}");
    let unmet = v["first_unmet"].as_str().expect("a first unmet condition");
    assert!(unmet.starts_with("transcript audit consistent with the human mechanism: "), "{unmet}");
    assert!(
        unmet.contains(
            "coder lexicon/1, positive_reciprocity: dependency of contribution_share on positive_reciprocity"
        ),
        "{unmet}"
    );
    assert!(unmet.contains("not positive") || unmet.contains("its lower bound ≤ 0"), "{unmet}");
    let ev = evidence(&v);
    assert!(ev.contains("matches the anchor: contribution_r1 equivalent"), "{ev}");
    assert!(!ev.contains("mechanism shown"), "{ev}");
}
