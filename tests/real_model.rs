//! A small LLM study against a real model served by llama.cpp's OpenAI-compatible server
//! (`scripts/llm-server.sh start`, which `.ci/run` runs first). The test needs that server and
//! the variable AGORA_LLM_MODELS naming a models file for it, so it is ignored by a plain
//! `cargo test` (which reports it as ignored, with the reason) and run by `.ci/run` with
//! `-- --include-ignored`; run without the variable, it fails and says what to start.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;

mod common;
use agora_test_support::{Asked, FakeReply};
use common::{
    agora, assert_every_slot_accounted, count, fake_server, profile_measure, record_hashes, run_study, s, text,
    write_study_file,
};

/// The models file of the running model server that AGORA_LLM_MODELS names (relative to the
/// repository root).
fn real_models() -> PathBuf {
    let models = std::env::var("AGORA_LLM_MODELS").expect(
        "AGORA_LLM_MODELS names the models file of a running server (scripts/llm-server.sh start; \
         AGORA_LLM_MODELS=scenarios/models/local-gemma.ron)",
    );
    Path::new(env!("CARGO_MANIFEST_DIR")).join(models)
}

/// Writes `text` to `path`; returns the path.
fn write_file(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

#[test]
#[ignore = "needs a model server: scripts/llm-server.sh start, then AGORA_LLM_MODELS=scenarios/models/local-gemma.ron cargo test --test real_model -- --ignored"]
fn small_study_with_a_real_model_then_replay_without_a_server() {
    let models = real_models();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("real.sqlite");
    let study = "scenarios/studies/llm-smoke.ron";
    let out = agora(&["run", study, "--models", s(&models), "--store", s(&store)]);
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
    let text_models = std::fs::read_to_string(&models).expect("models file");
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
    let out = agora(&["run", study, "--models", s(&dead), "--store", s(&replayed), "--replay", "--cache", s(&store)]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        record_hashes(&store),
        record_hashes(&replayed),
        "replay reproduces every record hash, transcripts included"
    );
}

/// The LLM coder against the real small model: it codes reasoning written by another source
/// (scripted replies of a fake server, so coder and audited model differ). Every response ends
/// coded or with its coder error recorded (a small model often answers badly: recorded, never
/// repaired), and a replay from the reply cache reproduces the audit's rows.
#[test]
#[ignore = "needs a model server: scripts/llm-server.sh start, then AGORA_LLM_MODELS=scenarios/models/local-gemma.ron cargo test --test real_model -- --ignored"]
fn the_llm_coder_codes_another_sources_reasoning_with_the_real_model() {
    let models = real_models();
    // The audited source: scripted step-by-step replies with two stated values each.
    let (_rt, server) = fake_server(Arc::new(|_, body| {
        let asked = Asked::of(body);
        // Different reasoning per decision (round and seat), so the coder is asked once per
        // response rather than once for identical text.
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let i = user.len() % 4;
        let reasoning = [
            "Splitting the points evenly seems right. Cooperating gives me the most points.",
            "I prefer to stay ahead of the other participant.",
            "The other participant would be better off if we both cooperate. This is the first round.",
            "They defected last round, so they do not deserve my help.",
        ][i];
        FakeReply::Content(serde_json::json!({"reasoning": reasoning, asked.field(): asked.label(0)}).to_string())
    }));
    let dir = tempfile::tempdir().expect("tempdir");
    let study = format!(
        r#"Study(version: 1, name: "source", master_seed: 2, runs: 1,
    models: [Model(name: "scripted", family: "Scripted", endpoints: ["{}"], served_id: "scripted-1", backoff_ms: 5)],
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 2), model_rosters: true, rosters: [],
                   cells: ["step-by-step"], cell_runs: 1)],
)"#,
        server.endpoint()
    );
    let study = write_study_file(dir.path(), &["step-by-step"], "source.ron", &study);
    let store = dir.path().join("source.sqlite");
    run_study(&study, &store);
    let audit = |out_dir: &str, replay: bool| {
        let out_dir = dir.path().join(out_dir);
        let mut args = vec![
            "audit",
            "--store",
            s(&store),
            "--coder",
            "llm:gemma-3-270m",
            "--models",
            s(&models),
            "--allow-unvalidated",
            "--out",
            s(&out_dir),
        ];
        if replay {
            args.push("--replay");
        }
        agora(&args)
    };
    let rows = || -> Vec<String> {
        let c = Connection::open(&store).expect("open");
        let mut st = c
            .prepare(
                "SELECT run_id, seat, slot, coder, coalesce(coder_error, ''), coalesce(values_json, '') FROM audit_responses
                 WHERE coder LIKE 'llm/%' ORDER BY 1, 2, 3",
            )
            .expect("query");
        st.query_map([], |r| {
            Ok(format!(
                "{}|{}|{}|{}|{}|{}",
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?
            ))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
    };
    let out = audit("live", false);
    assert!(out.status.success(), "{}", text(&out));
    println!("{}", text(&out));
    let live = rows();
    // 2 rounds x 2 seats, each coded or carrying its recorded coder error.
    assert_eq!(live.len(), 4, "{live:?}");
    let distinct: std::collections::BTreeSet<String> = {
        let c = Connection::open(&store).expect("open");
        let mut st = c.prepare("SELECT messages_json FROM transcripts WHERE kind = 'decision'").expect("query");
        st.query_map([], |r| r.get::<_, String>(0)).expect("rows").map(|r| r.expect("row")).collect()
    };
    assert!(distinct.len() >= 2, "the source's decisions differ");
    for r in &live {
        let f: Vec<&str> = r.split('|').collect();
        assert!(!f[4].is_empty() || !f[5].is_empty(), "neither codes nor an error: {r}");
    }
    server.stop();
    let out = audit("replayed", true);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rows(), live, "a replay from the reply cache reproduces the rows");
}

/// The behavioural profile (the profile methods) of the real small model on a reduced protocol (one
/// response per input, opted in): the dictator task under its eleven versions and their
/// scheduled checks, and General Robustness's 23 conditions once each. Every slot ends with a
/// final status — a valid answer decoded to the amount given, or missing after the declared
/// attempts, never filled in — the table is written with its coverage, and a replay from the
/// reply cache without a server reproduces every record.
#[test]
#[ignore = "needs a model server: scripts/llm-server.sh start, then AGORA_LLM_MODELS=scenarios/models/local-gemma.ron cargo test --test real_model -- --ignored"]
fn a_small_profile_of_the_real_model_then_replay_without_a_server() {
    let models = real_models();
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_file(
        &dir.path().join("profile.ron"),
        r#"ProfileStudy(version: 1, name: "real-profile", master_seed: 5, tasks: ["dictator"],
            responses: 1, gr_responses: 1, reduced_protocol: true)"#,
    );
    let store = dir.path().join("real.sqlite");
    let out_dir = dir.path().join("out");
    let run = |store: &Path, models: &Path, out: &Path, extra: &[&str]| {
        let mut args = vec!["profile", s(&study), "--models", s(models), "--store", s(store), "--out", s(out)];
        args.extend_from_slice(extra);
        agora(&args)
    };
    let o = run(&store, &models, &out_dir, &[]);
    assert!(o.status.success(), "{}", text(&o));
    println!("{}", text(&o));
    let c = Connection::open(&store).expect("open");
    // 3 conditions × 11 versions + A-S1's 25 checks, one response each; 23 GR conditions.
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses"), 33 + 25);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_gr"), 23);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status NOT IN ('valid', 'missing')"), 0);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing' AND value IS NOT NULL"), 0);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid' AND (score < 0 OR score > 100)"),
        0
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE reply = ''"), 0, "raw replies kept");
    let valid = count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid'");
    println!("real model: {valid} of 58 dictator slots valid");
    let line = profile_measure(&out_dir, "a:dictator").expect("line");
    assert_eq!(line["coverage"]["reference_slots"], 33);
    assert_eq!(
        line["coverage"]["reference_valid"].as_i64(),
        Some(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid' AND presentation = 'reference'"))
    );
    let status = line["status"].as_str().expect("status");
    assert!(status == "available" || status.starts_with("unavailable"), "{line}");
    let all_valid = line["coverage"]["reference_valid"] == 33 && line["coverage"]["check_valid"] == 25;
    assert_eq!(line["centre"].is_number(), all_valid, "a result only with every scheduled slot valid: {line}");
    drop(c);

    // Replay into a fresh copy of the cache with the endpoint pointing nowhere.
    let replayed = dir.path().join("replayed.sqlite");
    std::fs::copy(&store, &replayed).expect("copy");
    Connection::open(&replayed)
        .expect("open")
        .execute_batch("DELETE FROM profile_responses; DELETE FROM profile_gr; DELETE FROM profile_attempts;")
        .expect("clear");
    let o = run(&replayed, &models, &dir.path().join("out2"), &["--replay"]);
    assert!(o.status.success(), "{}", text(&o));
    let rows = |p: &Path| -> Vec<String> {
        let c = Connection::open(p).expect("open");
        let mut st = c
            .prepare("SELECT task||version||presentation||level||slot||status||IFNULL(value,'-') FROM profile_responses ORDER BY 1")
            .expect("q");
        let v = st.query_map([], |r| r.get(0)).expect("rows").map(|r| r.expect("row")).collect();
        v
    };
    assert_eq!(rows(&store), rows(&replayed));
    assert_eq!(
        std::fs::read_to_string(out_dir.join("profile.csv")).expect("csv"),
        std::fs::read_to_string(dir.path().join("out2/profile.csv")).expect("csv")
    );
}

/// A reduced Category E profile of the real small model: E1's first two items (its two check
/// anchors) under the eleven instructions, one response each, and E-S1's checks at the anchors
/// — 2 × 11 + 30 = 52 calls (the full E1–E5 protocol is 10,500). Every slot ends valid (a
/// position 1–5 scored 0–100 in the item's direction) or missing, and the table shows E1 with
/// its centre, ranges and checks, or says why not.
#[test]
#[ignore = "needs a model server: scripts/llm-server.sh start, then AGORA_LLM_MODELS=scenarios/models/local-gemma.ron cargo test --test real_model -- --ignored"]
fn a_reduced_questionnaire_profile_of_the_real_model() {
    let models = real_models();
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_file(
        &dir.path().join("profile-e.ron"),
        r#"ProfileStudy(version: 1, name: "real-profile-e", master_seed: 5, tasks: ["e1"], responses: 1,
            general_robustness: false, reduced_protocol: true, questionnaire_items: Some(2))"#,
    );
    let store = dir.path().join("real-e.sqlite");
    let out_dir = dir.path().join("out");
    let o = agora(&["profile", s(&study), "--models", s(&models), "--store", s(&store), "--out", s(&out_dir)]);
    assert!(o.status.success(), "{}", text(&o));
    println!("{}", text(&o));
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses"), 2 * 11 + 30);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status NOT IN ('valid', 'missing')"), 0);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid' AND value NOT IN ('r1', 'r2', 'r3', 'r4', 'r5')"),
        0,
        "answers decoded to positions"
    );
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid' AND score NOT IN (0, 25, 50, 75, 100)"
        ),
        0
    );
    let valid = count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'valid'");
    println!("real model: {valid} of 52 E1 slots valid");
    let line = profile_measure(&out_dir, "e1").expect("the e1 line");
    assert_eq!(line["coverage"]["reference_slots"], 22);
    assert_eq!(line["coverage"]["check_slots"], 30);
    let status = line["status"].as_str().expect("status");
    if line["centre"].is_number() {
        assert!(status.contains("reduced: 2 of 10 items"), "{line}");
        let (ilo, ihi) = (line["inner"][0].as_f64().unwrap(), line["inner"][1].as_f64().unwrap());
        let centre = line["centre"].as_f64().unwrap();
        assert!(ilo <= centre && centre <= ihi, "{line}");
        if let (Some(lo), Some(hi)) = (line["outer"][0].as_f64(), line["outer"][1].as_f64()) {
            assert!(lo <= ilo && ihi <= hi && line["checks"].as_u64() > Some(0), "{line}");
        } else {
            assert!(status.starts_with("outer unavailable"), "{line}");
        }
    } else {
        assert!(status.starts_with("unavailable"), "{line}");
    }
    assert!(std::fs::read_to_string(out_dir.join("profile.md")).expect("md").contains("| e1 |"));
}
