//! The replicate side query and the dependency estimate end to end, against the fake server.
//!
//! A small prisoner's-dilemma study of one fake model whose every reply draws three numbers
//! from a hash of the request (so a replicate, whose request differs from the original only by
//! its sampling seed, draws afresh): it states fairness with probability ½, competition with
//! probability ½ independently, and cooperates with probability 0.8 when it stated fairness and
//! 0.2 when it did not. The true within-prompt dependency on fairness is therefore 0.6 and on
//! competition 0. The test samples the study's decisions, asks replicates, checks that no run's
//! records or record hash moved, that the original requests' cache keys are reproduced, that a
//! replay without a server writes the same rows byte for byte, that bad input exits 2 naming
//! the flag, and that `agora audit` refuses the estimate without human labels and recovers the
//! dependency once the coder is validated, equal to a within regression computed here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{Behaviour, FakeReply};
use rusqlite::Connection;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;

/// The coder gate's floor lowered to nothing: this store is smaller than the gate as shipped
/// needs (100 responses, 200 sentences a model), and this test is about something else.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{
    agora, assert_every_slot_accounted, count, draw, draw_fairness, fake_model, label_blind, reasoned_reply,
    record_hashes, replicates, rows, run_fake, s, study_text, text, write_models, write_study_file, FakeRun,
    COMPETITION, FAIRNESS, OPENING,
};

/// P(cooperate) without and with stated fairness.
const BASE: f64 = 0.2;
const LIFT: f64 = 0.6;

/// The reply to one request: draws from the SHA-256 of the body as sent (seed included).
fn reply(body: &Value) -> FakeReply {
    let d = draw_fairness(body, BASE, LIFT);
    reasoned_reply(body, &d.reasoning, usize::from(!d.cooperate))
}

fn model(endpoint: &str, name: &str) -> String {
    fake_model(name, "Fake", endpoint, "fake-1", "")
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 10), model_rosters: true, rosters: [])"#;
    let study = study_text("replicates-fake", 17, 2, &[model(endpoint, "fake")], &[block]);
    write_study_file(dir, &[], "replicates.ron", &study)
}

const REPLICATES: &str = "SELECT * FROM audit_replicates ORDER BY run_id, seat, slot, sample_seed, replicate";
const TRANSCRIPTS: &str = "SELECT * FROM transcripts ORDER BY run_id, seat, slot, kind, attempt";

/// The policy's cache key (`agora_agents::llm::cache_key`), computed here independently.
fn cache_key(model: &str, request_json: &str, slot: &str) -> String {
    let mut h = Sha256::new();
    for part in [model, request_json, slot] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Rows of a CSV file as maps from column to cell (the cells the test reads hold no commas).
fn csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("csv");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    lines
        .map(|l| {
            // Quoted cells (reasons) are skipped whole: split on commas outside quotes.
            let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
            for c in l.chars() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => cells.push(std::mem::take(&mut cell)),
                    c => cell.push(c),
                }
            }
            cells.push(cell);
            header.iter().cloned().zip(cells).collect()
        })
        .collect()
}

fn row<'a>(rows: &'a [BTreeMap<String, String>], estimator: &str, value: &str) -> &'a BTreeMap<String, String> {
    rows.iter()
        .find(|r| r["estimator"] == estimator && r["value"] == value)
        .unwrap_or_else(|| panic!("no {estimator} row for {value}"))
}

fn num(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k} of {r:?}"))
}

/// The within (prompt fixed effects) slopes of y on (fairness, competition), computed here.
fn within_slopes(store: &Path) -> (f64, f64, usize, usize) {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT q.response_id, p.action, p.values_json FROM audit_replicate_responses p
             JOIN audit_replicates q USING (run_id, seat, slot, sample_seed, replicate)
             WHERE p.values_json IS NOT NULL",
        )
        .expect("query");
    let obs: Vec<(String, f64, f64, f64)> = st
        .query_map([], |r| {
            let (id, action, values): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let v: Value = serde_json::from_str(&values).expect("values");
            Ok((
                id,
                f64::from(u8::from(action == "c0")),
                v["fairness"].as_f64().expect("fairness"),
                v["competition"].as_f64().expect("competition"),
            ))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let mut sums: BTreeMap<&str, (f64, f64, f64, f64)> = BTreeMap::new();
    for (id, y, a, b) in &obs {
        let e = sums.entry(id.as_str()).or_default();
        *e = (e.0 + y, e.1 + a, e.2 + b, e.3 + 1.0);
    }
    let (mut saa, mut sab, mut sbb, mut say, mut sby) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (id, y, a, b) in &obs {
        let (sy, sa, sb, n) = sums[id.as_str()];
        let (y, a, b) = (y - sy / n, a - sa / n, b - sb / n);
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        say += a * y;
        sby += b * y;
    }
    let det = saa * sbb - sab * sab;
    ((sbb * say - sab * sby) / det, (saa * sby - sab * say) / det, sums.len(), obs.len())
}

#[test]
fn replicates_recover_the_dependency_without_touching_the_runs() {
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), write_study);
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), 2);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE kind = 'decision' AND parse_status = 'ok'"), 40);
    drop(c);
    let hashes = record_hashes(&store);
    let transcripts = rows(&store, TRANSCRIPTS);
    let models = dir.path().join("models.ron");
    write_models(&models, &[model(&server.endpoint(), "fake")]);

    // Bad input exits 2 naming the flag, and writes nothing.
    let base = ["audit", "replicates", "--store", s(&store), "--models", s(&models), "--seed", "3"];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        agora(&a)
    };
    let other = dir.path().join("other.ron");
    write_models(&other, &[model(&server.endpoint(), "other")]);
    for (out, needle) in [
        (with(&["--sample", "0", "--m", "5"]), "--sample"),
        (with(&["--sample", "5", "--m", "1"]), "--m must be at least 2"),
        (with(&["--sample", "5", "--m", "5", "--model", "nosuch"]), "--model `nosuch`"),
        (with(&["--sample", "5", "--m", "5", "--study", "nosuch"]), "--study"),
        (
            with(&["--sample", "5", "--m", "5", "--environment", "public-goods"]),
            "--environment `public-goods`: no decision transcript in scope has it (the store has: prisoners-dilemma)",
        ),
        (with(&["--sample", "5", "--m", "5", "--variant", "C3"]), "--variant `C3`"),
        (with(&["--sample", "5", "--m", "5", "--with-reasoning"]), "has not been audited (run `agora audit` first)"),
        (replicates(&store, &other, &["--seed", "3", "--sample", "5", "--m", "5"]), "--models"),
    ] {
        assert_eq!(out.status.code(), Some(2), "{needle}: {}", text(&out));
        assert!(text(&out).contains(needle), "{needle}: {}", text(&out));
    }
    let c = Connection::open(&store).expect("open");
    let has = |c: &Connection| count(c, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_replicates'");
    assert_eq!(has(&c), 0, "nothing written");
    drop(c);

    // The replicates: every decision (40 < 50), 12 times each.
    let before = server.requests.load(std::sync::atomic::Ordering::Relaxed);
    // Aimed at the game, cell, condition and role the store holds: the same 40 prompts.
    let out = with(&[
        "--sample",
        "50",
        "--m",
        "12",
        "--environment",
        "prisoners-dilemma",
        "--cell",
        "baseline",
        "--variant",
        "C0",
        "--role",
        "player",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("480 replicates of 40 prompts"), "{}", text(&out));
    assert!(text(&out).contains("0 from the reply cache, 480 requests sent"), "{}", text(&out));
    assert!(text(&out).contains("their cache keys found in the reply cache: 40 of 40"), "{}", text(&out));
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::Relaxed) - before, 480);

    // No run's records, record hash or transcripts moved; every slot is still accounted for.
    assert_eq!(record_hashes(&store), hashes);
    assert_eq!(rows(&store, TRANSCRIPTS), transcripts);
    assert_every_slot_accounted(&store);

    // Each replicate is its original request with a fresh seed, and each original's cache key,
    // computed here from its stored request, is the one in the reply cache.
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_replicates"), 480);
    assert_eq!(count(&c, "SELECT COUNT(DISTINCT request_seed) FROM audit_replicates"), 480);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_replicates WHERE parse_status = 'ok'"), 480);
    let mut st = c
        .prepare(
            "SELECT q.messages_json, q.original_cache_key, q.cache_key, t.messages_json, r.run_key, t.seat, t.slot,
                    t.attempt, q.request_seed
             FROM audit_replicates q JOIN transcripts t ON t.run_id = q.run_id AND t.seat = q.seat AND t.slot = q.slot
                 AND t.kind = 'decision' AND t.attempt = q.original_attempt
             JOIN runs r ON r.run_id = q.run_id",
        )
        .expect("query");
    type Joined = (String, String, String, String, String, i64, i64, i64, i64);
    let joined: Vec<Joined> = st
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    drop(st);
    assert_eq!(joined.len(), 480);
    for (replicate, original_key, key, original, run_key, seat, slot, attempt, seed) in &joined {
        let mut a: Value = serde_json::from_str(replicate).expect("json");
        let b: Value = serde_json::from_str(original).expect("json");
        assert_ne!(a["seed"], b["seed"]);
        assert_eq!(a["seed"], serde_json::json!(seed));
        a["seed"] = b["seed"].clone();
        assert_eq!(a, b, "same messages, schema, temperature and token budget");
        let want = cache_key("fake|fake-1", original, &format!("{run_key}/{seat}/{slot}/decision/{attempt}"));
        assert_eq!(original_key, &want);
        assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM llm_cache WHERE key = '{want}'")), 1);
        assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM llm_cache WHERE key = '{key}'")), 1);
    }

    // Replay without a server: the same rows, byte for byte, into a copy without them.
    let copy = dir.path().join("copy.sqlite");
    c.execute("VACUUM INTO ?1", [s(&copy)]).expect("copy");
    drop(c);
    let live = rows(&store, REPLICATES);
    Connection::open(&copy).expect("open").execute("DELETE FROM audit_replicates", []).expect("delete");
    server.stop();
    let replay = |store: &Path, seed: &str| {
        replicates(store, &models, &["--seed", seed, "--sample", "50", "--m", "12", "--replay"])
    };
    let out = replay(&copy, "3");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("480 from the reply cache, 0 requests sent"), "{}", text(&out));
    assert_eq!(rows(&copy, REPLICATES), live);
    let out = replay(&copy, "4");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("replay: no cached reply"), "{}", text(&out));
    assert_eq!(rows(&copy, REPLICATES), live, "nothing written");

    // The audit codes the replicates; without human labels the gate refuses the estimate.
    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("dependency: 480 replicates, 480 coded"), "{}", text(&out));
    let dep = csv(&report.join("dependency.csv"));
    assert_eq!(dep.len(), 2 * 8, "the LPM and the logit, eight values each");
    for r in &dep {
        assert_eq!((r["status"].as_str(), r["validation"].as_str()), ("refused", "refused: no human labels"), "{r:?}");
        assert!(r["coef"].is_empty() && r["se"].is_empty() && r["p"].is_empty(), "{r:?}");
    }
    let c = Connection::open(&store).expect("open");
    for (sentence, code) in [(OPENING, "understanding"), (FAIRNESS, "fairness"), (COMPETITION, "competition")] {
        assert_eq!(
            count(
                &c,
                &format!(
                    "SELECT COUNT(*) FROM audit_replicate_sentences WHERE text = '{sentence}' AND code IS NOT '{code}'"
                )
            ),
            0,
            "{sentence} is coded {code}"
        );
    }
    drop(c);

    // Human labels (two coders, agreeing with the lexicon on these sentences) validate it.
    label_blind(&store, dir.path(), &["--sample", "100", "--seed", "1"], &["ana", "ben"], |r| r["coder_code"].clone());
    let out = agora(&[&["audit", "--store", s(&store), "--out", s(&report)][..], &FLOOR].concat());
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("gate on lexicon/1 for model fake: validated"), "{}", text(&out));
    assert_eq!(record_hashes(&store), hashes, "the audit changes no run either");

    let dep = csv(&report.join("dependency.csv"));
    let fair = row(&dep, "lpm-fe", "fairness");
    assert_eq!(fair["status"], "estimated", "{fair:?}");
    assert_eq!((fair["n_prompts"].as_str(), fair["n_replicates"].as_str()), ("40", "480"));
    assert!((num(fair, "coef") - LIFT).abs() < 0.15, "fairness moves the action by about 0.6: {fair:?}");
    assert!(num(fair, "ci_low") > 0.0 && num(fair, "p") < 0.001, "{fair:?}");
    let comp = row(&dep, "lpm-fe", "competition");
    assert_eq!(comp["status"], "estimated");
    assert!(num(comp, "coef").abs() < 0.15, "competition does not move it: {comp:?}");
    let (b_fair, b_comp, prompts, n) = within_slopes(&store);
    assert_eq!((prompts, n), (40, 480));
    assert!((num(fair, "coef") - b_fair).abs() < 1e-5, "{b_fair} {fair:?}");
    assert!((num(comp, "coef") - b_comp).abs() < 1e-5, "{b_comp} {comp:?}");
    for value in ["altruism", "self_interest", "positive_reciprocity"] {
        let r = row(&dep, "lpm-fe", value);
        assert_eq!(r["status"], "not identified", "{r:?}");
        assert!(r["reason"].contains("does not vary within any prompt"), "{r:?}");
        assert!(r["coef"].is_empty() && r["prompts_varying"] == "0", "{r:?}");
    }
    let logit = row(&dep, "logit-ame", "fairness");
    assert_eq!(logit["status"], "estimated", "{logit:?}");
    assert!(num(logit, "coef") > 0.3 && num(logit, "ci_low") > 0.0, "{logit:?}");
    assert!(num(row(&dep, "logit-ame", "competition"), "coef").abs() < 0.2);

    // The same estimates in the store and in the JSON report.
    let c = Connection::open(&store).expect("open");
    let stored: f64 = c
        .query_row(
            "SELECT coef FROM audit_dependency WHERE estimator = 'lpm-fe' AND value = 'fairness' AND scope = ''",
            [],
            |r| r.get(0),
        )
        .expect("stored estimate");
    assert!((stored - b_fair).abs() < 1e-12);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM audit_dependency WHERE status = 'not identified' AND estimator = 'lpm-fe'"),
        6
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("dependency.json")).expect("json")).expect("json");
    assert_eq!(json["validation"][0]["status"], "validated");
    assert_eq!(json["groups"][0]["indicator"], "cooperate");
    assert!(std::fs::read_to_string(report.join("dependency.md"))
        .expect("md")
        .contains("| fake | prisoners-dilemma | baseline | baseline | player | cooperate | lpm-fe | fairness |"));
}

/// The binary-allocation game's indicator: person B chose the option better for A, read from
/// the state each decision records; states in which both options give A the same are left out.
#[test]
fn binary_allocation_replicates_use_the_prosocial_option_of_their_state() {
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), |dir, endpoint| {
        let study = format!(
            r#"Study(version: 1, name: "ba-replicates", master_seed: 4, runs: 1, models: [{}],
    blocks: [Block(name: "ba", environment: BinaryAllocation(treatment: Distributional, replicates: 1),
                   model_rosters: true, rosters: [])])"#,
            model(endpoint, "fake")
        );
        write_study_file(dir, &[], "ba.ron", &study)
    });
    let models = dir.path().join("models.ron");
    write_models(&models, &[model(&server.endpoint(), "fake")]);
    let out = replicates(&store, &models, &["--seed", "8", "--sample", "30", "--m", "4"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("120 replicates of 30 prompts"), "{}", text(&out));

    // The replicates whose state has a prosocial option, computed here from the decisions.
    let c = Connection::open(&store).expect("open");
    let mut st = c.prepare("SELECT run_id, seat, slot FROM audit_replicates WHERE action IS NOT NULL").expect("query");
    let slots: Vec<(i64, i64, i64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("rows").map(|r| r.expect("row")).collect();
    let contexts: Vec<Option<f64>> = slots
        .iter()
        .map(|(run, seat, slot)| {
            c.query_row(
                "SELECT context FROM decisions WHERE run_id = ?1 AND seat = ?2 AND role = 'dictator'
                 ORDER BY step LIMIT 1 OFFSET ?3",
                [run, seat, slot],
                |r| r.get(0),
            )
            .expect("the decision")
        })
        .collect();
    drop(st);
    let with_option = contexts
        .iter()
        .filter(|c| {
            agora_audit::motives::MotiveState::prosocial_option(
                &agora_audit::motives::state(c.expect("a state id") as u32).expect("a state"),
            )
            .is_some()
        })
        .count();
    assert!(with_option > 0 && with_option <= 120);
    drop(c);

    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report), "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("dependency.json")).expect("json")).expect("json");
    let g = &json["groups"][0];
    assert_eq!(
        (g["environment"].as_str(), g["role"].as_str(), g["indicator"].as_str()),
        (Some("binary-allocation"), Some("dictator"), Some("prosocial"))
    );
    assert_eq!(g["coded"], 120);
    assert_eq!(g["observations"], with_option);
    let dep = csv(&report.join("dependency.csv"));
    let fair = row(&dep, "lpm-fe", "fairness");
    assert_eq!(fair["status"], "estimated", "{fair:?}");
    assert!(fair["validation"].starts_with("unvalidated"), "{fair:?}");
    assert_eq!(fair["n_replicates"], with_option.to_string());
}

/// `--with-reasoning` aims the sample at decisions whose original reply has pre-action
/// reasoning to code; a replicate of any other prompt would have nothing for the dependency.
#[test]
fn an_aimed_sample_asks_only_decisions_with_reasoning() {
    // Half the replies (by hash) carry no reasoning field at all.
    let behaviour: Behaviour = Arc::new(|_, body: &Value| match reply(body) {
        FakeReply::Content(c) if draw(body)[7] & 1 == 1 => {
            let mut v: Value = serde_json::from_str(&c).expect("json");
            v.as_object_mut().expect("object").remove("reasoning");
            FakeReply::Content(v.to_string())
        }
        other => other,
    });
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(behaviour, write_study);
    assert!(agora(&["audit", "--store", s(&store), "--out", s(&dir.path().join("audit"))]).status.success());
    let c = Connection::open(&store).expect("open");
    let with = count(&c, "SELECT COUNT(*) FROM audit_responses WHERE reasoning_present = 1");
    assert!(with > 0 && with < 40, "{with} of 40 decisions have reasoning");
    drop(c);
    let models = dir.path().join("models.ron");
    write_models(&models, &[model(&server.endpoint(), "fake")]);
    let out = replicates(&store, &models, &["--seed", "3", "--sample", "50", "--m", "2", "--with-reasoning"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!("{} replicates of {with} prompts", 2 * with)), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM audit_replicates q WHERE NOT EXISTS (SELECT 1 FROM audit_responses a
               WHERE a.run_id = q.run_id AND a.seat = q.seat AND a.slot = q.slot AND a.reasoning_present = 1)"
        ),
        0
    );
}
