//! `agora profile` end to end against the fake server: every task of categories A–D and General
//! Robustness on a reduced protocol (one response per input, two per GR condition, opted in),
//! the ranges written, the records checked against the plan and recomputed from the store,
//! every request an isolated single user message, every answer decoded to its economic
//! meaning, replay reproducing the records, and bad input refused with exit code 2.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agora_test_support::{legal_answer, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, text};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write_study(dir: &Path, endpoint: &str, name: &str, extra: &str) -> PathBuf {
    let models = dir.join("models.ron");
    std::fs::write(
        &models,
        format!(
            r#"Models(version: 1, models: [Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                concurrency: 8, structured: JsonSchema, max_attempts: 2, backoff_ms: 1)])"#
        ),
    )
    .expect("models");
    let study = dir.join(format!("{name}.ron"));
    std::fs::write(
        &study,
        format!(
            r#"ProfileStudy(version: 1, name: "{name}", master_seed: 7, include_models: Some("models.ron"),
                responses: 1, gr_responses: 2, reduced_protocol: true{extra})"#
        ),
    )
    .expect("study");
    study
}

type Seen = Arc<Mutex<Vec<Value>>>;

fn start(rt: &tokio::runtime::Runtime, seen: Seen) -> FakeServer {
    rt.block_on(FakeServer::start(Arc::new(move |_, body| {
        seen.lock().expect("lock").push(body.clone());
        FakeReply::Content(legal_answer(body))
    })))
    .expect("server")
}

fn profile(store: &Path, out: &Path, study: &Path, extra: &[&str]) -> std::process::Output {
    let mut args =
        vec!["profile", study.to_str().unwrap(), "--store", store.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    agora(&args)
}

/// Every profile record in a fixed order, for comparisons.
fn records(store: &Path) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT task || '|' || version || '|' || presentation || '|' || level || '|' || point || '|' || branch || '|' ||
             direction || '|' || round || '|' || slot || '|' || status || '|' || IFNULL(value, '-') || '|' || IFNULL(score, '-')
             FROM profile_responses ORDER BY 1",
        )
        .expect("query");
    let mut out: Vec<String> = st.query_map([], |r| r.get(0)).expect("rows").map(|r| r.expect("row")).collect();
    let mut st = c
        .prepare(
            "SELECT condition || '|' || slot || '|' || IFNULL(value, '-') || '|' || strict FROM profile_gr ORDER BY 1",
        )
        .expect("query");
    out.extend(st.query_map([], |r| r.get::<_, String>(0)).expect("rows").map(|r| r.expect("row")));
    out
}

#[test]
fn a_reduced_profile_of_every_task_runs_end_to_end_and_writes_the_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let seen: Seen = Arc::default();
    let server = start(&rt, seen.clone());
    let endpoint = format!("http://{}/v1", server.addr);
    let study = write_study(dir.path(), &endpoint, "small", "");
    let store = dir.path().join("store.sqlite");
    let out = dir.path().join("out");

    // The dry run counts what the run then asks.
    let dry = profile(&store, &out, &study, &["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    let said = text(&dry);
    let total: usize = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("total: "))
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect(&said);
    assert!(!store.exists(), "a dry run writes nothing");

    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let c = Connection::open(&store).expect("open");
    let slots = count(&c, "SELECT COUNT(*) FROM profile_responses") + count(&c, "SELECT COUNT(*) FROM profile_gr");
    assert_eq!(slots as usize, total, "one record per planned call");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status <> 'valid'"), 0);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_gr"), 46, "23 conditions × 2");
    assert_eq!(count(&c, "SELECT COUNT(DISTINCT task) FROM profile_responses"), 17);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_versions"), 17, "every frozen version file's hash recorded");
    // The responder's unscored curve: the original version only.
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(DISTINCT version) FROM profile_responses WHERE task = 'ultimatum-responder' AND scored = 0"
        ),
        1
    );
    // B4: 11 versions × 3 payoffs × 2 directions × 1 episode × 12 rounds, and the side queries
    // at rounds 1, 8 and 12 only.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task = 'b4' AND presentation = 'reference'"),
        11 * 3 * 2 * 12
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task = 'b4' AND presentation <> 'reference' AND round NOT IN (1, 8, 12)"), 0);
    // A B4 choice scores 100 exactly when it matches the opponent's script: L in rounds 1–6
    // then R (l-to-r), or the reverse, never disclosed to the model.
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_responses WHERE task = 'b4' AND score <>
             (CASE WHEN value = (CASE WHEN (direction = 'l-to-r') = (round <= 6) THEN 'l' ELSE 'r' END) THEN 100 ELSE 0 END)"
        ),
        0
    );
    // Decoded to the economic meaning whatever the labels and order shown.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task IN ('prisoners-dilemma', 'b2', 'b3') AND value NOT IN ('cooperate', 'defect')"),
        0
    );
    assert!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_responses WHERE presentation IN ('action-labels', 'reversible-labels')"
        ) > 0
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_gr WHERE value NOT IN ('equal', 'self-only') AND format = 'binary'"),
        0
    );

    // Every request: one user message, nothing else; no persona, goal or request for reasons.
    let bodies = seen.lock().expect("lock").clone();
    assert_eq!(bodies.len(), total);
    for b in &bodies {
        let messages = b["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 1, "{b}");
        assert_eq!(messages[0]["role"], "user");
        let t = messages[0]["content"].as_str().expect("content").to_lowercase();
        for banned in ["your goal", "as many points", "reason", "you are a "] {
            assert!(!t.contains(banned), "`{banned}` in {t}");
        }
    }

    // The ranges: every measure available, combined A1–A5 first.
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("profile.json")).expect("json")).expect("parse");
    let measures = json["models"][0]["measures"].as_array().expect("measures");
    let names: Vec<&str> = measures.iter().map(|m| m["measure"].as_str().unwrap()).collect();
    for m in ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "c1", "c2", "c3", "c4", "d1", "d2", "d3"] {
        let line = measures.iter().find(|l| l["measure"] == m).unwrap_or_else(|| panic!("{m} in {names:?}"));
        assert_eq!(line["status"], "available", "{line}");
        let (lo, hi) = (line["outer"][0].as_f64().unwrap(), line["outer"][1].as_f64().unwrap());
        let (ilo, ihi) = (line["inner"][0].as_f64().unwrap(), line["inner"][1].as_f64().unwrap());
        let centre = line["centre"].as_f64().unwrap();
        assert!(lo <= ilo && ilo <= centre && centre <= ihi && ihi <= hi, "{line}");
    }
    assert_eq!(json["models"][0]["reduced_protocol"], true);
    let gr = &json["models"][0]["general_robustness"];
    assert_eq!(gr["comparisons"].as_array().expect("comparisons").len(), 21);
    assert_eq!(gr["strict_denominator"], 46);
    assert!(std::fs::read_to_string(out.join("profile.md")).expect("md").contains("| a1 |"));

    // The dictator's centre recomputed from the stored rows by hand: u_q is the mean of the
    // three condition scores of version q's reference rows, M their mean.
    let mut st = c
        .prepare("SELECT version, AVG(score) FROM profile_responses WHERE task = 'dictator' AND presentation = 'reference' GROUP BY version")
        .expect("query");
    let u: Vec<f64> = st.query_map([], |r| r.get(1)).expect("rows").map(|r| r.expect("row")).collect();
    assert_eq!(u.len(), 11);
    let centre = u.iter().sum::<f64>() / 11.0;
    let line = measures.iter().find(|l| l["measure"] == "a:dictator").expect("dictator");
    assert!((line["centre"].as_f64().unwrap() - centre).abs() < 1e-9, "{line} vs {centre}");

    // Replay: the same records from the reply cache, without a server.
    let before = records(&store);
    let replayed = dir.path().join("replayed.sqlite");
    std::fs::copy(&store, &replayed).expect("copy");
    {
        let r = Connection::open(&replayed).expect("open");
        r.execute_batch("DELETE FROM profile_responses; DELETE FROM profile_gr; DELETE FROM profile_attempts;")
            .expect("clear");
    }
    drop(server);
    let o = profile(&replayed, &dir.path().join("out2"), &study, &["--replay"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(records(&replayed), before);
    assert_eq!(
        std::fs::read_to_string(out.join("profile.csv")).unwrap(),
        std::fs::read_to_string(dir.path().join("out2/profile.csv")).unwrap()
    );
}

#[test]
fn invalid_answers_stay_missing_and_make_the_result_unavailable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    // The model never answers a question that starts with a task identifier (a check of the
    // amount schedule); everything else it answers.
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, body: &Value| {
            let t = body["messages"][0]["content"].as_str().unwrap_or("");
            if t.starts_with("Task ID:") {
                FakeReply::Content("I would rather not say.".into())
            } else {
                FakeReply::Content(legal_answer(body))
            }
        })))
        .expect("server");
    let study = write_study(
        dir.path(),
        &format!("http://{}/v1", server.addr),
        "gaps",
        r#", tasks: ["dictator"], general_robustness: false"#,
    );
    let store = dir.path().join("s.sqlite");
    let out = dir.path().join("out");
    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let c = Connection::open(&store).expect("open");
    let missing = count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing'");
    // A-S1 schedules the task identifier on Q00, Q02, Q04, Q07 and Q09, one condition each.
    assert_eq!(missing, 5, "{}", text(&o));
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing' AND (value IS NOT NULL OR score IS NOT NULL)"), 0, "never filled in");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing' AND presentation <> 'task-identifier'"
        ),
        0
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE status <> 'ok'"),
        missing * 2,
        "two attempts per missing slot, no more"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("profile.json")).expect("json")).expect("parse");
    let line = json["models"][0]["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["measure"] == "a:dictator")
        .cloned()
        .expect("line");
    // §M05: A–D require every scheduled observation, checks included; nothing is filled in.
    assert!(line["centre"].is_null() && line["inner"].is_null() && line["outer"].is_null(), "{line}");
    assert!(line["status"].as_str().unwrap().contains("20 of 25 check slots valid"), "{line}");
    assert_eq!(line["coverage"]["check_slots"], 25);
    assert_eq!(line["coverage"]["check_valid"], 20);
}

fn copy_assets(dir: &Path) -> PathBuf {
    let to = dir.join("assets");
    std::fs::create_dir_all(to.join("versions")).expect("mkdir");
    let from = root().join("assets/profile");
    for f in ["versions.lock", "schedules.ron", "gr.ron"] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy");
    }
    for e in std::fs::read_dir(from.join("versions")).expect("dir") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, to.join("versions").join(p.file_name().unwrap())).expect("copy");
    }
    to
}

#[test]
fn bad_input_is_refused_with_the_file_and_field_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), "http://127.0.0.1:9/v1", "bad", "");
    let store = dir.path().join("s.sqlite");
    let out = dir.path().join("out");

    // A version file that claims `no-goal` but carries a goal sentence (even if refrozen, the
    // check at load refuses it).
    let assets = copy_assets(dir.path());
    let file = assets.join("versions/dictator.ron");
    let t = std::fs::read_to_string(&file).unwrap();
    let at = t.find("question:").expect("a question");
    let q = t[at..].find('"').map(|k| at + k + 1).expect("quote");
    std::fs::write(&file, format!("{}Your goal is to earn as many points as you can. {}", &t[..q], &t[q..])).unwrap();
    let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("dictator.ron") && text(&o).contains("eligibility.no-goal"), "{}", text(&o));
    let o = agora(&["profile", "--freeze", "--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "freezing refuses it too: {}", text(&o));

    // A changed file that is not frozen again.
    std::fs::write(&file, t.replacen("question:", "question: ", 1)).unwrap();
    let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("sha256") && text(&o).contains("--freeze"), "{}", text(&o));
    std::fs::write(&file, &t).unwrap();

    // A schedule naming an operation the tasks lack.
    let sched = assets.join("schedules.ron");
    let s = std::fs::read_to_string(&sched).unwrap();
    std::fs::write(&sched, s.replacen("\"task-identifier\"", "\"history-table\"", 1)).unwrap();
    let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("schedules.ron") && text(&o).contains("schedules.a-amount[0].checks"), "{}", text(&o));
    std::fs::write(&sched, s.replacen("condition: \"middle\"", "condition: \"extreme\"", 1)).unwrap();
    let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("condition") && text(&o).contains("extreme"), "{}", text(&o));

    // Fewer responses than the seed's without the opt-in; an unknown task.
    let s2 = dir.path().join("s2.ron");
    std::fs::write(
        &s2,
        r#"ProfileStudy(version: 1, name: "x", master_seed: 1, include_models: Some("models.ron"), responses: 5)"#,
    )
    .unwrap();
    let o = profile(&store, &out, &s2, &["--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("s2.ron") && text(&o).contains("reduced_protocol"), "{}", text(&o));
    std::fs::write(
        &s2,
        r#"ProfileStudy(version: 1, name: "x", master_seed: 1, include_models: Some("models.ron"), tasks: ["poker"])"#,
    )
    .unwrap();
    let o = profile(&store, &out, &s2, &["--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("tasks[0]") && text(&o).contains("poker"), "{}", text(&o));
    assert!(!store.exists(), "nothing written");
}

#[test]
fn the_shipped_study_has_the_seeds_call_counts() {
    let o = agora(&["profile", "scenarios/profiles/profile.ron", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let said = text(&o);
    let n = |c: &str| -> usize {
        said.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("category {c}: ")))
            .and_then(|n| n.parse().ok())
            .expect(&said)
    };
    // The profile methods' protocol: about 11k calls for A and 19k for B per model configuration.
    assert!((10_500..11_500).contains(&n("A")), "{said}");
    assert!((18_000..19_500).contains(&n("B")), "{said}");
    assert!(said.contains("general robustness: 690"), "{said}");
}
