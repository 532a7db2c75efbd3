//! The LLM coder of `agora audit --coder llm:MODEL` end to end against the fake server: a small
//! study of the audited model `fake`, whose step-by-step reasoning is made of sentences with a
//! known code (and a post-hoc reason the coder must never see), then audits by coder models
//! that answer correctly (computed from the request's sentences), with the wrong number of
//! codes, with an unknown code, with no list at all on a first try or on every try, and with
//! `understanding` for everything. Checked: the codes and the recorded errors (nothing
//! repaired, nothing asked again but an unparsable reply), the refusal of a coder that is an
//! audited model, the coder's frozen identity in `audit_coders`, another version's rows beside
//! the first's, replay without a server giving identical rows, and the κ gate judging an LLM
//! coder like the lexicon coder.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agora_test_support::{Asked, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;

/// The coder gate's floor lowered to nothing: this store is smaller than the gate as shipped
/// needs (100 responses, 200 sentences a model), and this test is about something else.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{
    agora, count, fake_model, label_blind, run_fake, s, seat_and_round, study_text, text, write_study_file, FakeRun,
    VALUES,
};

/// The post-hoc reason of every reply: never coded, never sent to a coder.
const POST_HOC: &str = "Staying ahead of the other participant is all that matters.";

/// The true code of a sentence the audited model writes.
fn truth(sentence: &str) -> &'static str {
    if sentence.starts_with("This is round ") {
        return "understanding";
    }
    VALUES.iter().find(|(s, _)| *s == sentence).map(|(_, c)| *c).unwrap_or_else(|| panic!("unknown: {sentence}"))
}

/// The audited model's reply: reasoning by round and seat, the answer, a post-hoc reason.
fn audited_reply(body: &Value) -> FakeReply {
    let asked = Asked::of(body);
    let (field, label) = (asked.field(), asked.label(0));
    assert!(asked.reasoning(), "the study asks for reasoning first");
    let (seat, round) = seat_and_round(body);
    let i = (round - 1) * 2 + seat;
    let opening = format!("This is round {round} of four and I am participant {}.", ["A", "B"][seat]);
    let reasoning = [opening.as_str(), VALUES[i % 8].0, VALUES[(i + 3) % 8].0].join(" ");
    FakeReply::Content(serde_json::json!({"reasoning": reasoning, field: label, "reason": POST_HOC}).to_string())
}

/// The sentences of a coder request, from its numbered lines.
fn coder_sentences(body: &Value) -> Vec<String> {
    let user = body["messages"][1]["content"].as_str().expect("user message");
    user.lines()
        .skip(1)
        .enumerate()
        .map(|(i, l)| l.strip_prefix(&format!("({}) ", i + 1)).expect("a numbered sentence").to_string())
        .collect()
}

/// What the fake server saw: coder request bodies by served id.
type Seen = Arc<Mutex<BTreeMap<String, Vec<Value>>>>;

/// The fake server's behaviour: the audited model, and the coder models by served id.
fn behaviour(seen: Seen) -> agora_test_support::Behaviour {
    let flaky_seen: Arc<Mutex<HashSet<String>>> = Arc::default();
    Arc::new(move |_, body| {
        let model = body["model"].as_str().expect("model").to_string();
        if model == "fake-1" {
            return audited_reply(body);
        }
        seen.lock().expect("lock").entry(model.clone()).or_default().push(body.clone());
        let truth: Vec<&str> = coder_sentences(body).iter().map(|s| truth(s)).collect();
        let codes = |codes: Vec<&str>| FakeReply::Content(serde_json::json!({ "codes": codes }).to_string());
        match model.as_str() {
            "good-1" => codes(truth),
            "short-1" => codes(truth[..truth.len() - 1].to_vec()),
            "unknown-1" => codes(std::iter::once("greed").chain(truth[1..].iter().copied()).collect()),
            "poor-1" => codes(vec!["understanding"; truth.len()]),
            "garbage-1" => FakeReply::Content("These sentences are mostly about points.".into()),
            "flaky-1" => {
                let user = body["messages"][1]["content"].as_str().expect("user").to_string();
                if flaky_seen.lock().expect("lock").insert(user) {
                    FakeReply::Content("Sure! Here are the codes you asked for.".into())
                } else {
                    // A bare list in a code fence after a think block: read, not repaired.
                    FakeReply::Content(format!("<think>Easy.</think>\n```json\n{}\n```", serde_json::json!(truth)))
                }
            }
            other => panic!("no coder model {other}"),
        }
    })
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 4), model_rosters: true, rosters: [],
              cells: ["step-by-step"], cell_runs: 1)"#;
    let study = study_text("coder-fake", 3, 1, &[fake_model("fake", "Fake", endpoint, "fake-1", "")], &[block]);
    write_study_file(dir, &["step-by-step"], "coder.ron", &study)
}

/// The coder models' declarations (and two that are the audited model under another name or
/// served id).
fn write_models(dir: &Path, endpoint: &str) -> PathBuf {
    let model = |name: &str, served: &str| {
        fake_model(name, "Coder", endpoint, served, r#", quantisation: "Q8_0", max_tokens: 200"#)
    };
    let models: Vec<String> = ["good", "short", "unknown", "poor", "garbage", "flaky"]
        .iter()
        .map(|n| model(n, &format!("{n}-1")))
        .chain([model("twin", "fake-1"), model("fake", "fake-2")])
        .collect();
    let path = dir.join("coders.ron");
    std::fs::write(&path, format!("Models(version: 1, models: [{}])", models.join(",\n"))).expect("write models");
    path
}

/// The coder id an audit printed (`coder llm/NAME@VERSION: ...`).
fn printed_coder(out: &str, name: &str) -> String {
    let at = out.find(&format!("coder llm/{name}@")).unwrap_or_else(|| panic!("no coder line for {name}: {out}"));
    out[at + "coder ".len()..].split(':').next().expect("id").to_string()
}

/// Every audit row of one coder, as text, in key order.
fn rows_of(c: &Connection, coder: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (table, order) in [
        ("audit_responses", "run_id, seat, slot, codebook, codebook_version, codebook_sha256"),
        ("audit_sentences", "run_id, seat, slot, codebook, codebook_version, codebook_sha256, sentence_index"),
    ] {
        let mut st = c.prepare(&format!("SELECT * FROM {table} WHERE coder = ?1 ORDER BY {order}")).expect("query");
        let n = st.column_count();
        let rows = st
            .query_map([coder], |r| {
                (0..n)
                    .map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}")))
                    .collect::<Result<Vec<_>, _>>()
            })
            .expect("rows");
        out.extend(rows.map(|r| format!("{table}: {}", r.expect("row").join(" | "))));
    }
    out
}

struct Setup {
    _rt: tokio::runtime::Runtime,
    server: FakeServer,
    seen: Seen,
    dir: tempfile::TempDir,
    store: PathBuf,
    models: PathBuf,
}

fn setup() -> Setup {
    let seen: Seen = Arc::default();
    let mut models = PathBuf::new();
    let FakeRun { rt, server, dir, store, .. } = run_fake(behaviour(seen.clone()), |dir, endpoint| {
        models = write_models(dir, endpoint);
        write_study(dir, endpoint)
    });
    Setup { _rt: rt, server, seen, dir, store, models }
}

impl Setup {
    fn audit(&self, out: &str, extra: &[&str]) -> std::process::Output {
        let out = self.dir.path().join(out);
        let mut args = vec!["audit", "--store", s(&self.store), "--out", s(&out), "--models", s(&self.models)];
        args.extend_from_slice(extra);
        args.extend_from_slice(&FLOOR);
        agora(&args)
    }

    fn requests(&self, served: &str) -> usize {
        self.seen.lock().expect("lock").get(served).map_or(0, Vec::len)
    }
}

#[test]
fn the_llm_coder_codes_records_errors_unrepaired_freezes_its_identity_and_replays() {
    let t = setup();
    let c = Connection::open(&t.store).expect("open");
    let q = |sql: &str| count(&c, sql);
    assert_eq!(q("SELECT COUNT(*) FROM transcripts WHERE kind = 'decision' AND parse_status = 'ok'"), 8);
    // Eight responses of three sentences; the two seats' reasoning differs in every round.
    let distinct = 8;

    // A coder that answers correctly: every reasoning sentence gets its true code.
    let out = t.audit("good", &["--coder", "llm:good", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let good = printed_coder(&text(&out), "good");
    assert!(text(&out).contains(&format!("coder {good}: 0 replies from the reply cache, {distinct} requests sent")));
    assert_eq!(t.requests("good-1"), distinct, "one request per response");
    let mut st = c
        .prepare("SELECT text, code, evidence FROM audit_sentences WHERE coder = ?1 AND segment = 'reasoning'")
        .expect("query");
    let coded: Vec<(String, String, String)> = st
        .query_map([&good], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(coded.len(), 24);
    for (sentence, code, evidence) in &coded {
        assert_eq!(code, truth(sentence), "{sentence}");
        assert!(evidence.starts_with("llm_cache:") && evidence.ends_with(" attempt 1"), "{evidence}");
        let key = &evidence["llm_cache:".len()..evidence.len() - " attempt 1".len()];
        assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM llm_cache WHERE key = '{key}' AND model = 'good'")), 1);
    }
    let n = |sql: &str| count(&c, &sql.replace("{coder}", &good));
    assert_eq!(n("SELECT COUNT(*) FROM audit_responses WHERE coder = '{coder}' AND coder_error IS NULL AND values_json IS NOT NULL"), 8);
    assert_eq!(
        n("SELECT COUNT(*) FROM audit_sentences WHERE coder = '{coder}' AND segment = 'post_hoc' AND code IS NULL"),
        8
    );
    // What the coder was sent: the codebook, the numbered reasoning sentences, the schema, at
    // temperature 0; never the answer or the post-hoc reason.
    let body = t.seen.lock().expect("lock")["good-1"][0].clone();
    let system = body["messages"][0]["content"].as_str().expect("system");
    assert!(system.starts_with("# Task\n") && system.contains("Use `understanding` for sentences that only restate"));
    assert!(system.contains("## fairness\nDefinition: Preferring an equal split or a smaller gap between payoffs.\nExample: B2 splits the points more evenly between us.\n"));
    let user = body["messages"][1]["content"].as_str().expect("user");
    assert!(user.starts_with("# Sentences (3)\n(1) This is round "), "{user}");
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["max_tokens"], 200);
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        (&schema["properties"]["codes"]["minItems"], &schema["properties"]["codes"]["maxItems"]),
        (&Value::from(3), &Value::from(3))
    );
    assert_eq!(schema["properties"]["codes"]["items"]["enum"].as_array().map(Vec::len), Some(9));
    for b in &t.seen.lock().expect("lock")["good-1"] {
        let sent = b.to_string();
        assert!(!sent.contains(POST_HOC) && !sent.contains("\\\"action\\\""), "{sent}");
    }

    // The frozen identity: the id is the name and the first 12 hex digits of the SHA-256 of
    // the identity as stored; the endpoints beside it.
    let (identity, serving): (String, String) = c
        .query_row("SELECT identity_json, serving_json FROM audit_coders WHERE coder = ?1", [&good], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("the coder is recorded");
    let hash = format!("{:x}", Sha256::digest(identity.as_bytes()));
    assert_eq!(good, format!("llm/good@{}", &hash[..12]));
    let id: Value = serde_json::from_str(&identity).expect("json");
    for (field, value) in [
        ("kind", Value::from("llm")),
        ("name", Value::from("good")),
        ("served_id", Value::from("good-1")),
        ("quantisation", Value::from("Q8_0")),
        ("temperature", Value::from(0.0)),
        ("max_tokens", Value::from(200)),
        ("seed", Value::from(0)),
        ("max_attempts", Value::from(2)),
        ("structured", Value::from("JsonSchema")),
    ] {
        assert_eq!(id[field], value, "{field}: {identity}");
    }
    assert_eq!(id["prompt_template_sha256"].as_str().map(str::len), Some(64), "{identity}");
    let serving: Value = serde_json::from_str(&serving).expect("json");
    assert_eq!(serving["endpoints"], serde_json::json!([t.server.endpoint()]));

    // The wrong number of codes: an error recorded as such, nothing coded, never asked again.
    let out = t.audit("short", &["--coder", "llm:short", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let short = printed_coder(&text(&out), "short");
    assert_eq!(t.requests("short-1"), distinct, "a list of codes is final: no second attempt");
    let errors = |coder: &str| -> Vec<String> {
        let mut st = c
            .prepare("SELECT coder_error FROM audit_responses WHERE coder = ?1 ORDER BY run_id, seat, slot")
            .expect("q");
        st.query_map([coder], |r| r.get::<_, Option<String>>(0))
            .expect("rows")
            .map(|r| r.expect("row").expect("an error"))
            .collect()
    };
    let short_errors = errors(&short);
    assert_eq!(short_errors.len(), 8);
    for e in &short_errors {
        assert!(e.starts_with("2 codes for 3 sentences (reply llm_cache:") && e.ends_with(" attempt 1)"), "{e}");
    }
    let nothing_coded = |coder: &str| {
        count(&c, &format!("SELECT COUNT(*) FROM audit_sentences WHERE coder = '{coder}' AND code IS NOT NULL"))
            + count(
                &c,
                &format!("SELECT COUNT(*) FROM audit_responses WHERE coder = '{coder}' AND values_json IS NOT NULL"),
            )
    };
    assert_eq!(nothing_coded(&short), 0, "no code kept, none repaired");
    assert_eq!(
        count(&c, &format!("SELECT COUNT(*) FROM audit_sentences WHERE coder = '{short}' AND segment = 'reasoning'")),
        24,
        "the sentences are kept"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(t.dir.path().join("short/audit.json")).expect("json"))
            .expect("parse");
    assert_eq!(report["total"]["coder_errors"], 8);
    assert_eq!(report["coder"], Value::from(short.as_str()));

    // An unknown code: the same.
    let out = t.audit("unknown", &["--coder", "llm:unknown", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let unknown = printed_coder(&text(&out), "unknown");
    assert_eq!(t.requests("unknown-1"), distinct);
    for e in errors(&unknown) {
        assert!(e.starts_with("sentence 0: unknown code `greed` (reply llm_cache:"), "{e}");
    }
    assert_eq!(nothing_coded(&unknown), 0);

    // No list on the first attempt: asked again (a new attempt, its own cache key), and the
    // second reply's codes kept, with the attempt in the evidence.
    let out = t.audit("flaky", &["--coder", "llm:flaky", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let flaky = printed_coder(&text(&out), "flaky");
    assert_eq!(t.requests("flaky-1"), 2 * distinct);
    let seeds: HashSet<String> =
        t.seen.lock().expect("lock")["flaky-1"].iter().map(|b| b["seed"].to_string()).collect();
    assert_eq!(seeds.len(), 2, "one sampling seed per attempt");
    assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM audit_sentences WHERE coder = '{flaky}' AND segment = 'reasoning' AND evidence LIKE '% attempt 2'")), 24);
    assert_eq!(
        count(&c, &format!("SELECT COUNT(*) FROM audit_responses WHERE coder = '{flaky}' AND coder_error IS NULL")),
        8
    );
    // No list on any attempt: the error after max_attempts (2).
    let out = t.audit("garbage", &["--coder", "llm:garbage", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let garbage = printed_coder(&text(&out), "garbage");
    assert_eq!(t.requests("garbage-1"), 2 * distinct);
    for e in errors(&garbage) {
        assert!(
            e.starts_with("no list of codes in 2 attempts (last reply llm_cache:") && e.contains(": not JSON ("),
            "{e}"
        );
    }
    assert_eq!(nothing_coded(&garbage), 0);

    // Each coder's rows sit beside the others'.
    assert_eq!(q("SELECT COUNT(DISTINCT coder) FROM audit_responses"), 5);
    assert_eq!(q("SELECT COUNT(*) FROM audit_coders"), 5);

    // Another version of the same coder (another temperature) is another coder.
    let out = t.audit("warm", &["--coder", "llm:good", "--coder-temperature", "0.5", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let warm = printed_coder(&text(&out), "good");
    assert_ne!(warm, good);
    assert_eq!(q("SELECT COUNT(*) FROM audit_coders WHERE coder LIKE 'llm/good@%'"), 2);
    assert_eq!(
        count(&c, &format!("SELECT COUNT(*) FROM audit_responses WHERE coder = '{good}'")),
        8,
        "the first version's rows stay"
    );
    assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM audit_responses WHERE coder = '{warm}'")), 8);

    // Replay without a server: the same rows, byte for byte, and the same report.
    let before = rows_of(&c, &good);
    let report_before = std::fs::read_to_string(t.dir.path().join("good/audit.json")).expect("json");
    t.server.stop();
    let out = t.audit("good", &["--coder", "llm:good", "--allow-unvalidated", "--replay"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("coder {good}: {distinct} replies from the reply cache, 0 requests sent")),
        "{}",
        text(&out)
    );
    assert_eq!(rows_of(&c, &good), before);
    assert_eq!(std::fs::read_to_string(t.dir.path().join("good/audit.json")).expect("json"), report_before);
    // A version never run has nothing cached: replay stops with nothing written.
    let out = t.audit("cold", &["--coder", "llm:good", "--coder-temperature", "0.7", "--replay"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("replay: no cached reply") && text(&out).contains("nothing written"), "{}", text(&out));
    assert!(!t.dir.path().join("cold").exists());
    assert_eq!(q("SELECT COUNT(*) FROM audit_coders WHERE coder LIKE 'llm/good@%'"), 2);
    // Without --replay and without a server: no endpoint reachable, nothing written.
    let out = t.audit("down", &["--coder", "llm:good"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!t.dir.path().join("down").exists());
}

#[test]
fn a_coder_that_is_an_audited_model_or_is_not_declared_is_refused() {
    let t = setup();
    let c = Connection::open(&t.store).expect("open");
    // The audited model under another name (its served id), and another model under its name.
    for (coder, why) in
        [("twin", "coder model `twin` (served id `fake-1`)"), ("fake", "coder model `fake` (served id `fake-2`)")]
    {
        let out = t.audit(coder, &["--coder", &format!("llm:{coder}")]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let said = text(&out);
        assert!(said.contains(why) && said.contains("written by `fake` (served id `fake-1`)"), "{said}");
        assert!(!t.dir.path().join(coder).exists());
    }
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_responses'"), 0, "nothing written");
    assert_eq!(t.requests("fake-2") + t.requests("fake-1"), 0);
    // Other bad input: an undeclared model, no models file, an LLM flag with the lexicon
    // coder, a temperature out of range, a coder name that is neither.
    let cases: [(&[&str], &str); 5] = [
        (&["--coder", "llm:nobody"], "declares no model `nobody`"),
        (&["--coder", "llm:good", "--coder-temperature", "3"], "--coder-temperature 3"),
        (&["--replay"], "--models, --replay apply to an LLM coder only"),
        (&["--coder", "gpt"], "`gpt`: name `lexicon` or `llm:MODEL`"),
        (&["--coder", "llm:good", "--coder-max-tokens", "0"], "--coder-max-tokens"),
    ];
    for (args, message) in cases {
        let out = t.audit("bad", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(message), "{args:?}: {}", text(&out));
    }
    let out = agora(&["audit", "--store", s(&t.store), "--out", s(&t.dir.path().join("bad")), "--coder", "llm:good"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--models FILE"), "{}", text(&out));
    assert!(!t.dir.path().join("bad").exists());
}

#[test]
fn the_kappa_gate_judges_an_llm_coder_like_the_lexicon_coder() {
    let t = setup();
    let c = Connection::open(&t.store).expect("open");
    let out = t.audit("good", &["--coder", "llm:good"]);
    assert!(out.status.success(), "{}", text(&out));
    let good = printed_coder(&text(&out), "good");
    assert!(text(&out).contains(&format!("gate on {good} for model fake: refused: no human labels")), "{}", text(&out));

    // Two humans label every sentence of a blind sample drawn from the LLM coder's coded
    // responses with its true code.
    let shown = label_blind(
        &t.store,
        t.dir.path(),
        &["--coder", &good, "--sample", "100", "--seed", "1"],
        &["ana", "ben"],
        |r| {
            assert_eq!(r["coder"], Value::from(good.as_str()));
            Value::from(truth(r["text"].as_str().expect("text")))
        },
    );
    assert_eq!(shown.len(), 24);

    // The correct LLM coder and the lexicon coder pass; the coder that says `understanding` to
    // everything is refused, and its numbers with it.
    let out = t.audit("good", &["--coder", "llm:good"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("gate on {good} for model fake: validated: κ = 1.000 ≥ 0.8 (24 sentences, ")),
        "{}",
        text(&out)
    );
    let out =
        agora(&[&["audit", "--store", s(&t.store), "--out", s(&t.dir.path().join("lexicon"))][..], &FLOOR].concat());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("gate on lexicon/1 for model fake: validated: κ = 1.000 ≥ 0.8 (24 sentences, "),
        "{}",
        text(&out)
    );
    let out = t.audit("poor", &["--coder", "llm:poor"]);
    assert!(out.status.success(), "{}", text(&out));
    let poor = printed_coder(&text(&out), "poor");
    let said = text(&out);
    let line =
        said.lines().find(|l| l.starts_with(&format!("gate on {poor} for model fake: refused: κ = "))).expect(&said);
    assert!(line.contains("< 0.8 (24 sentences, 8 responses); 2 human labellers, κ = 1.000 with each other"), "{line}");
    let occurrence = std::fs::read_to_string(t.dir.path().join("poor/audit_occurrence.csv")).expect("csv");
    let header: Vec<&str> = occurrence.lines().next().expect("header").split(',').collect();
    let share = header.iter().position(|h| *h == "share").expect("share column");
    assert!(occurrence.lines().skip(1).all(|l| l.split(',').nth(share) == Some("")), "{occurrence}");
    // The gate reads each coder's own codes: the refused coder's rows are its own.
    assert_eq!(
        count(&c, &format!("SELECT COUNT(*) FROM audit_sentences WHERE coder = '{poor}' AND code = 'understanding'")),
        24
    );
    // agreement lists both LLM coders beside the lexicon coder.
    let out = agora(&["audit", "agreement", "--store", s(&t.store), "--out", s(&t.dir.path().join("agreement"))]);
    assert!(out.status.success(), "{}", text(&out));
    for coder in [good.as_str(), poor.as_str(), "lexicon/1"] {
        assert!(text(&out).contains(&format!("coder {coder} vs human reference on fake")), "{coder}: {}", text(&out));
    }
}
