//! `agora profile` end to end against the fake server: every task of categories A–D and General
//! Robustness on a reduced protocol (one response per input, two per GR condition, opted in),
//! the ranges written, the records checked against the plan and recomputed from the store,
//! every request an isolated single user message, every answer decoded to its economic
//! meaning, replay reproducing the records, and bad input refused with exit code 2.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use agora_test_support::{legal_answer, Behaviour, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, fake_server, profile_measure, read_json, runtime, text, write_seeded_models};

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
    // Categories A–D's seventeen tasks and E1–E5 (E6–E9 need a lab's own item file).
    assert_eq!(count(&c, "SELECT COUNT(DISTINCT task) FROM profile_responses"), 17 + 5);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_versions"),
        22 + 9,
        "every task's frozen version file hash recorded, and the schedules', the GR wording's, the item file's and the six check cells'"
    );
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_versions WHERE task IN ('schedules', 'gr', 'items:ipip50') OR task LIKE 'cell:%'"
        ),
        9
    );
    // E1–E5: ten items each, 11 versions, one response; the checks retest the anchors only.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task LIKE 'e_' AND presentation = 'reference'"),
        50 * 11
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task = 'e1' AND presentation <> 'reference' AND point NOT IN ('BF01', 'BF06')"),
        0
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_responses WHERE task LIKE 'e_' AND value NOT IN ('r1', 'r2', 'r3', 'r4', 'r5')"),
        0,
        "positions decoded whatever the labels and order shown"
    );
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
    let json = read_json(&out.join("profile.json"));
    let measures = json["models"][0]["measures"].as_array().expect("measures");
    let names: Vec<&str> = measures.iter().map(|m| m["measure"].as_str().unwrap()).collect();
    for m in [
        "a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "c1", "c2", "c3", "c4", "d1", "d2", "d3", "e1", "e2",
        "e3", "e4", "e5",
    ] {
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
    let line = profile_measure(&out, "a:dictator").expect("line");
    // §M05: A–D require every scheduled observation, checks included; nothing is filled in.
    assert!(line["centre"].is_null() && line["inner"].is_null() && line["outer"].is_null(), "{line}");
    assert!(line["status"].as_str().unwrap().contains("20 of 25 check slots valid"), "{line}");
    assert_eq!(line["coverage"]["check_slots"], 25);
    assert_eq!(line["coverage"]["check_valid"], 20);
}

fn copy_assets(dir: &Path) -> PathBuf {
    let to = dir.join("assets");
    std::fs::create_dir_all(to.join("versions")).expect("mkdir");
    std::fs::create_dir_all(to.join("items")).expect("mkdir");
    let from = root().join("assets/profile");
    for f in ["versions.lock", "inputs.lock", "schedules.ron", "gr.ron", "items/ipip50.ron"] {
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

    // A valid schedule, or GR wording, changed after freezing: refused, naming it, until frozen.
    for (file, name) in [(sched.clone(), "schedules"), (assets.join("gr.ron"), "gr")] {
        let before = std::fs::read_to_string(&file).unwrap();
        let original = if name == "schedules" { s.clone() } else { before.clone() };
        std::fs::write(&file, format!("// reviewed again\n{original}")).unwrap();
        let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("inputs.lock")
                && text(&o).contains(&format!("`{name}` is "))
                && text(&o).contains("--freeze"),
            "{}",
            text(&o)
        );
        std::fs::write(&file, original).unwrap();
    }
    let o = profile(&store, &out, &study, &["--dry-run", "--assets", assets.to_str().unwrap()]);
    assert!(o.status.success(), "restored: {}", text(&o));

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
    // E1–E5: 50 items × 11 versions × 15 reference slots, and per measure 25 checks (E-S1)
    // retesting 30 anchor cells (both anchors under Q00's five, one under each other's two)
    // × 15: 8,250 + 5 × 450 = 10,500.
    assert_eq!(n("E"), 50 * 11 * 15 + 5 * (5 * 2 + 10 * 2) * 15, "{said}");
    assert!(said.contains("general robustness: 690"), "{said}");
}

/// A legal answer drawn from the request and its sampling seed: an answer given at another
/// attempt (another seed) would differ.
fn seeded_answer(body: &Value) -> String {
    let mut b = body.clone();
    let seed = body["seed"].as_i64().unwrap_or(-1);
    if let Some(t) = b["messages"][0]["content"].as_str() {
        b["messages"][0]["content"] = Value::from(format!("{t} #{seed}"));
    }
    legal_answer(&b)
}

/// A model that answers `reply` to a question `held` picks out (by its text) until the flag
/// returned is set, and [`seeded_answer`] otherwise.
fn held_back(held: fn(&str) -> bool, reply: &'static str) -> (Arc<AtomicBool>, Behaviour) {
    let answer_all = Arc::new(AtomicBool::new(false));
    let flag = answer_all.clone();
    let behaviour: Behaviour = Arc::new(move |_, body: &Value| {
        let t = body["messages"][0]["content"].as_str().unwrap_or("");
        if held(t) && !flag.load(std::sync::atomic::Ordering::SeqCst) {
            FakeReply::Content(reply.into())
        } else {
            FakeReply::Content(seeded_answer(body))
        }
    });
    (answer_all, behaviour)
}

fn statuses(store: &Path) -> Vec<(String, i64)> {
    let c = Connection::open(store).expect("open");
    let mut st =
        c.prepare("SELECT status, COUNT(*) FROM profile_responses GROUP BY status ORDER BY status").expect("q");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
}

#[test]
fn a_server_outage_stops_the_study_and_a_plain_resume_fills_every_slot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let tasks = r#", tasks: ["dictator", "b4"], general_robustness: false"#;
    // The run that never fails.
    let clean = rt.block_on(FakeServer::start(Arc::new(|_, body: &Value| FakeReply::Content(seeded_answer(body)))));
    let clean = clean.expect("server");
    let clean_dir = dir.path().join("clean");
    std::fs::create_dir_all(&clean_dir).expect("mkdir");
    let study = write_study(&clean_dir, &clean.endpoint(), "outage", tasks);
    write_seeded_models(&clean_dir, &clean.endpoint(), "");
    let clean_store = clean_dir.join("s.sqlite");
    let o = profile(&clean_store, &clean_dir.join("out"), &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(statuses(&clean_store).iter().filter(|(s, _)| s == "missing").count(), 0);

    // The same study against a server that fails every request from the 60th on (HTTP 503)
    // until it is brought back.
    let down = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let is_down = down.clone();
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |n, body: &Value| {
            if n >= 60 && is_down.load(std::sync::atomic::Ordering::SeqCst) {
                FakeReply::Status(503)
            } else {
                FakeReply::Content(seeded_answer(body))
            }
        })))
        .expect("server");
    let study = write_study(dir.path(), &server.endpoint(), "outage", tasks);
    write_seeded_models(dir.path(), &server.endpoint(), "");
    let store = dir.path().join("s.sqlite");
    let o = profile(&store, &dir.path().join("out"), &study, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("questions missing after 2 further pass(es)") && text(&o).contains("HTTP 503"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("rerun the same command to retry them"), "{}", text(&o));
    let c = Connection::open(&store).expect("open");
    // A failure at the server is not an answer: nothing missing, no failed attempt recorded.
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status <> 'valid'"), 0);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE status = 'error'"), 0);
    let partial = count(&c, "SELECT COUNT(*) FROM profile_responses");
    let total = records(&clean_store).len() as i64;
    assert!(partial < total, "{partial} of {total} recorded before the outage");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_passes WHERE outcome LIKE 'stopped: %'"), 1);
    drop(c);

    // A recovery pass is refused while questions remain that were never asked.
    let o = profile(&store, &dir.path().join("out"), &study, &["--retry-missing"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("have not been asked yet: run it without --retry-missing first"), "{}", text(&o));

    // A resume while the server is still down stops again, recording nothing false.
    let o = profile(&store, &dir.path().join("out"), &study, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        count(
            &Connection::open(&store).expect("open"),
            "SELECT COUNT(*) FROM profile_responses WHERE status <> 'valid'"
        ),
        0
    );

    // A plain resume, the server up again: every slot filled, the same answers and scores as
    // the run that never failed (the same attempt numbers, seeds and cache keys).
    down.store(false, std::sync::atomic::Ordering::SeqCst);
    let o = profile(&store, &dir.path().join("out"), &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(records(&store), records(&clean_store));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/profile.csv")).expect("csv"),
        std::fs::read_to_string(clean_dir.join("out/profile.csv")).expect("csv")
    );
}

#[test]
fn a_changed_setting_on_resume_is_refused_by_name_and_a_retry_pass_records_what_it_raised() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The model answers a question that starts with a task identifier only once it is let.
    let (answer_all, behaviour) = held_back(|t| t.starts_with("Task ID:"), "I would rather not say.");
    let (_rt, server) = fake_server(behaviour);
    let study =
        write_study(dir.path(), &server.endpoint(), "retry", r#", tasks: ["dictator"], general_robustness: false"#);
    write_seeded_models(dir.path(), &server.endpoint(), "");
    let store = dir.path().join("s.sqlite");
    let out = dir.path().join("out");
    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let c = Connection::open(&store).expect("open");
    let missing = "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing'";
    assert_eq!(count(&c, missing), 5);

    // A plain resume asks nothing again: missing is a recorded final status.
    let before = server.requests.load(std::sync::atomic::Ordering::SeqCst);
    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::SeqCst), before);

    // The same study under other frozen inputs (a GR wording reviewed and refrozen) is refused.
    let assets = copy_assets(dir.path());
    let gr = assets.join("gr.ron");
    std::fs::write(&gr, format!("// reviewed again\n{}", std::fs::read_to_string(&gr).unwrap())).unwrap();
    assert!(agora(&["profile", "--freeze", "--assets", assets.to_str().unwrap()]).status.success());
    let o = profile(&store, &out, &study, &["--assets", assets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("profile study `retry` ran with gr "), "{}", text(&o));

    // A changed setting is refused by name, with exit 2, and nothing is recorded.
    write_seeded_models(dir.path(), &server.endpoint(), ", temperature: 0.2");
    let passes = count(&c, "SELECT COUNT(*) FROM profile_passes");
    let o = profile(&store, &out, &study, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`temperature` was 0.7") && text(&o).contains("is 0.2 now"), "{}", text(&o));
    let o = profile(&store, &out, &study, &["--retry-missing"]);
    assert_eq!(o.status.code(), Some(2), "a retry pass may not change the temperature either: {}", text(&o));
    assert!(text(&o).contains("may raise only max_attempts and max_tokens"), "{}", text(&o));
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_passes"), passes);
    write_seeded_models(dir.path(), &server.endpoint(), ", max_tokens: 512");
    let o = profile(&store, &out, &study, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`max_tokens` was 256") && text(&o).contains("--retry-missing may raise"),
        "{}",
        text(&o)
    );

    // A recovery pass may raise the limits, not lower them.
    write_seeded_models(dir.path(), &server.endpoint(), ", max_tokens: 128");
    let o = profile(&store, &out, &study, &["--retry-missing"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("may raise it, not lower it to 128"), "{}", text(&o));
    write_seeded_models(dir.path(), &server.endpoint(), ", max_tokens: 512");

    // The recovery pass, the model answering now and the token limit raised: the five slots
    // are asked again at their own slots, attempts 3 and on, and the pass records the change.
    answer_all.store(true, std::sync::atomic::Ordering::SeqCst);
    let o = profile(&store, &out, &study, &["--retry-missing"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(count(&c, missing), 0);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE attempt = 3 AND status = 'ok'"),
        5,
        "each missing slot answered at its third attempt"
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE attempts = 3"), 5);
    let (kind, changed): (String, String) = c
        .query_row("SELECT kind, changed_json FROM profile_passes ORDER BY pass DESC LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("pass");
    assert_eq!(kind, "retry-missing");
    assert_eq!(changed, r#"[{"field":"max_tokens","was":"256","now":"512"}]"#);
    let line = profile_measure(&out, "a:dictator");
    assert!(line.expect("line")["centre"].is_number(), "the measure is available once every slot is filled");
}

#[test]
fn an_ended_b4_episode_resumes_under_retry_missing_keeping_its_answered_rounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The model gives no usable answer in round 5 (of the versions asking "… in round 5?")
    // until it is let: those episodes end there, their later rounds recorded as ended.
    let (answer_all, behaviour) = held_back(|t| t.contains("in round 5?"), "Hard to say.");
    let (_rt, server) = fake_server(behaviour);
    let study = write_study(dir.path(), &server.endpoint(), "b4retry", r#", tasks: ["b4"], general_robustness: false"#);
    write_seeded_models(dir.path(), &server.endpoint(), "");
    let store = dir.path().join("s.sqlite");
    let out = dir.path().join("out");
    assert!(profile(&store, &out, &study, &[]).status.success());
    let c = Connection::open(&store).expect("open");
    let ended = count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'episode-ended'");
    let missing = count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing'");
    assert!(missing > 0 && ended > 0, "{missing} missing, {ended} ended");
    let early = |c: &Connection| -> Vec<String> {
        let mut st = c
            .prepare(
                "SELECT slot_key || '|' || value || '|' || attempts FROM profile_responses
                 WHERE task = 'b4' AND round < 5 AND status = 'valid' ORDER BY slot_key",
            )
            .expect("q");
        st.query_map([], |r| r.get(0)).expect("rows").map(|r| r.expect("row")).collect()
    };
    let before = early(&c);

    // The recovery pass with a larger token limit: the ended episodes are played again from
    // round 5, their answered rounds kept as adopted (not asked again under the new limit).
    answer_all.store(true, std::sync::atomic::Ordering::SeqCst);
    write_seeded_models(dir.path(), &server.endpoint(), ", max_tokens: 512");
    let o = profile(&store, &out, &study, &["--retry-missing"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status <> 'valid'"), 0);
    assert_eq!(early(&c), before, "the rounds answered before are kept");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_attempts WHERE attempt = 3 AND status = 'ok' AND slot_key LIKE '%/round-5/%'"
        ),
        missing,
        "each missing round answered at its third attempt"
    );
}

#[test]
fn general_robustness_reads_the_whole_reply() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    // Open conditions: the amount stated in a sentence, with an explanation that mentions other
    // amounts in a hypothetical (issue 40). Labels 1/2: a JSON number. Every other binary
    // condition: a JSON answer contradicted by a sentence after it.
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, body: &Value| {
            let t = body["messages"][0]["content"].as_str().unwrap_or("");
            if t.contains("whole number of dollars from 0 to 10") {
                FakeReply::Content(
                    "Keeping all 10 dollars would leave them nothing, so I would give the other participant $3. \
                     That feels about right."
                        .into(),
                )
            } else if t.contains(r#"{"choice": "1"}"#) {
                FakeReply::Content(r#"{"choice": 2}"#.into())
            } else if t.contains(r#"{"choice": "#) {
                let labels: Vec<&str> =
                    t.rsplit(r#"{"choice": ""#).take(2).map(|x| x.split('"').next().unwrap_or("")).collect();
                FakeReply::Content(format!(
                    r#"{{"choice": "{}"}} On second thought, I choose {}."#,
                    labels[0], labels[1]
                ))
            } else {
                FakeReply::Content(legal_answer(body))
            }
        })))
        .expect("server");
    let study = write_study(dir.path(), &server.endpoint(), "gr", r#", tasks: ["dictator"], general_robustness: true"#);
    let store = dir.path().join("s.sqlite");
    let out = dir.path().join("out");
    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let c = Connection::open(&store).expect("open");
    let q = |sql: &str| count(&c, sql);
    // A choice stated in a sentence is usable (and not strictly compliant).
    assert_eq!(
        q("SELECT COUNT(*) FROM profile_gr WHERE format = 'open' AND status = 'valid' AND value = '3' AND strict = 0"),
        20
    );
    // Each usable answer keeps the wording it was read from; an unusable slot keeps none.
    assert_eq!(
        q("SELECT COUNT(*) FROM profile_gr WHERE format = 'open' AND support = 'I would give the other participant $3'"),
        20
    );
    assert_eq!(q("SELECT COUNT(*) FROM profile_gr WHERE condition = 'BI-OL1' AND support = '{\"choice\": 2}'"), 2);
    assert_eq!(q("SELECT COUNT(*) FROM profile_gr WHERE status = 'missing' AND support IS NOT NULL"), 0);
    // A JSON number for the label "1"/"2".
    assert_eq!(q("SELECT COUNT(*) FROM profile_gr WHERE condition = 'BI-OL1' AND value = 'equal'"), 2);
    // A second, conflicting answer is seen: missing, with the reason on every attempt.
    let conflicting =
        q("SELECT COUNT(*) FROM profile_gr WHERE format = 'binary' AND condition <> 'BI-OL1' AND status = 'missing'");
    assert_eq!(conflicting, 24);
    assert!(q("SELECT COUNT(*) FROM profile_attempts WHERE status LIKE 'unusable: conflicting answers%'") >= 48);
    // Without its reference every binary comparison reports coverage and no Δp.
    let json = read_json(&out.join("profile.json"));
    let text_ = json.to_string();
    assert!(text_.contains("unavailable: 0 of 2 reference and 2 of 2 check answers usable"), "{text_}");
}

/// A synthetic pairs file for E6–E9 in the documented format (`agora_profile::tasks::items`):
/// E-S2's ids and keys, with made-up descriptions (Agora never ships the OEJTS adaptations).
fn synthetic_pairs() -> String {
    let mut items = String::new();
    for (task, listed, _) in agora_profile::tasks::items::E_S2.iter().filter(|(t, _, _)| t.user_items()) {
        for (id, key) in listed.iter() {
            items.push_str(&format!(
                "(id: \"{id}\", measure: \"{}\", key: {key:?}, left: \"Synthetic left description {id}\", right: \"Synthetic right description {id}\"),\n",
                task.name()
            ));
        }
    }
    format!(
        "(version: 1, name: \"synthetic-pairs\", kind: Pairs, source: \"a test's made-up pairs\", terms: \"none\", items: [\n{items}])\n"
    )
}

#[test]
fn a_labs_own_pairs_file_runs_e6_to_e9_and_is_required_for_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let seen: Seen = Arc::default();
    let server = start(&rt, seen.clone());
    let endpoint = format!("http://{}/v1", server.addr);
    let store = dir.path().join("store.sqlite");
    let out = dir.path().join("out");

    // Naming E6 without the file is refused before anything is asked.
    let study = write_study(dir.path(), &endpoint, "nopairs", r#", tasks: ["e6"], general_robustness: false"#);
    let o = profile(&store, &out, &study, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pair_items"), "{}", text(&o));
    assert!(seen.lock().expect("lock").is_empty());

    std::fs::write(dir.path().join("lab-items.ron"), synthetic_pairs()).expect("pairs");
    let study = write_study(
        dir.path(),
        &endpoint,
        "labpairs",
        r#", tasks: ["e6", "e7", "e8", "e9"], general_robustness: false, pair_items: Some("lab-items.ron")"#,
    );
    let dry = profile(&store, &out, &study, &["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    // 32 pairs × 11 versions × 1 response, and 4 × 30 anchor cells of the checks.
    assert!(text(&dry).contains(&format!("category E: {}", 32 * 11 + 4 * 30)), "{}", text(&dry));
    let o = profile(&store, &out, &study, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let bodies = seen.lock().expect("lock").clone();
    let first = bodies[0]["messages"][0]["content"].as_str().expect("content");
    assert!(
        first.contains("Synthetic left description") && first.contains("Much closer to the left description"),
        "{first}"
    );
    for m in ["e6", "e7", "e8", "e9"] {
        let line = profile_measure(&out, m).expect(m);
        assert_eq!(line["status"], "available", "{line}");
    }
    // The lab's file is recorded by its hash beside the study's inputs (never in Agora's lock).
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_versions WHERE task = 'items:synthetic-pairs'"), 1);
}
