//! LLM studies end to end through the `agora` binary against a local fake OpenAI-compatible
//! server: faults of every kind, replay without a server, a server that dies mid-study, and a
//! server unreachable at start. A real model is exercised in `real_model.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agora_test_support::{legal_answer, Behaviour, FakeReply, FakeServer};
use rusqlite::Connection;

mod common;
use common::{agora, assert_every_slot_accounted, count, record_hashes, study_text, text};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// Writes a study and a models file pointing at `endpoint` into `dir`.
fn write_study(dir: &Path, endpoint: &str, timeout_s: f64) -> PathBuf {
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    let cells = dir.join("cells");
    std::fs::create_dir_all(&cells).expect("mkdir");
    for c in ["reversed-actions", "persona-self-interested", "recognition-probe"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells").join(format!("{c}.ron"));
        std::fs::copy(src, cells.join(format!("{c}.ron"))).expect("copy cell");
    }
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   quantisation: "Q8_0", notes: "fake server <b>on loopback</b>",
                   concurrency: 16, timeout_s: {timeout_s}, max_attempts: 3, max_retries: 14, backoff_ms: 5)"#
    );
    let study = study_text(
        "fake-llm",
        11,
        3,
        &[model],
        &[
            r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 4), model_rosters: true, rosters: [],
              cells: ["baseline", "reversed-actions", "persona-self-interested", "recognition-probe"], cell_runs: 1)"#,
            r#"Block(name: "pgg", environment: PublicGoods(rounds: 2, punishment: true), model_rosters: true, rosters: [], runs: 1)"#,
            r#"Block(name: "naming", environment: NamingGame(population: 4, cap: 12, window: 4), model_rosters: true, rosters: [], runs: 1)"#,
            r#"Block(name: "ultimatum", environment: Bargaining(game: Ultimatum, games: 3), model_rosters: true, rosters: [], runs: 1)"#,
            r#"Block(name: "mixed", environment: PrisonersDilemma(rounds: 3),
              rosters: [Roster(name: "fake-vs-tft", members: [Member(policy: Llm(model: "fake"), count: 1), Member(policy: TitForTat, count: 1)])],
              runs: 1)"#,
        ],
    );
    let path = studies.join("fake.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

fn faulty() -> Behaviour {
    // Seven requests in twenty fail in transport; with 15 tries a request is lost with
    // probability 0.35^15 ≈ 1.5e-7.
    Arc::new(|n, body| match n % 20 {
        0 => FakeReply::Status(500),
        1 => FakeReply::Status(429),
        2 => FakeReply::Malformed,
        3 => FakeReply::Truncated,
        4 => FakeReply::Content(format!("<think>Let me weigh this. {{\"action\": 99}}</think>{}", legal_answer(body))),
        5 => FakeReply::Content("{\"action\": \"not an option\", \"selection\": -5}".into()),
        6 => FakeReply::Delay(Duration::from_millis(1500), Box::new(FakeReply::Legal)),
        7 => FakeReply::Close,
        _ => FakeReply::Legal,
    })
}

fn dump(store: &Path) -> String {
    let c = Connection::open(store).expect("open");
    let mut out = String::new();
    for (table, sql) in [
        ("runs", "SELECT run_key, steps, record_hash, spec_json FROM runs ORDER BY run_key"),
        ("decisions", "SELECT r.run_key, d.step, d.seat, d.role, d.action, d.value, d.scale, d.context FROM decisions d JOIN runs r USING (run_id) ORDER BY 1, 2, 3"),
        ("transcripts", "SELECT r.run_key, t.seat, t.slot, t.kind, t.attempt, t.endpoint, t.messages_json, t.raw_reply, t.action, t.reason, t.parse_status, t.detail, t.latency_ms, t.prompt_tokens, t.completion_tokens FROM transcripts t JOIN runs r USING (run_id) ORDER BY 1, 2, 3, 4, 5"),
        ("payoffs", "SELECT r.run_key, p.step, p.seat, p.payoff FROM payoffs p JOIN runs r USING (run_id) ORDER BY 1, 2, 3"),
    ] {
        let mut st = c.prepare(sql).expect("query");
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                let mut line = String::new();
                for i in 0..n {
                    let cell = match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        other => format!("{other:?}"),
                    };
                    line.push_str(&cell);
                    line.push('|');
                }
                Ok(line)
            })
            .expect("rows");
        out.push_str(table);
        out.push('\n');
        for row in rows {
            out.push_str(&row.expect("row"));
            out.push('\n');
        }
    }
    out
}

#[test]
fn faults_are_survived_recorded_and_replayed_byte_for_byte() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start(faulty())).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint(), 1.0);
    let store = dir.path().join("live.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("== LLM calls ==") && t.contains("fallback"), "{t}");
    assert!(t.contains("recognition probe"), "{t}");
    assert_every_slot_accounted(&store);
    let c = Connection::open(&store).expect("open");
    assert!(
        count(&c, "SELECT COUNT(*) FROM transcripts WHERE parse_status = 'illegal'") > 0,
        "illegal replies recorded"
    );
    assert!(
        count(&c, "SELECT COUNT(*) FROM transcripts WHERE raw_reply LIKE '<think>%' AND parse_status = 'ok'") > 0,
        "think blocks stripped"
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), 10);
    // The mixed roster holds one LLM seat and one classical seat.
    assert_eq!(
        count(&c, "SELECT COUNT(DISTINCT policy) FROM agents a JOIN runs r USING (run_id) WHERE r.block = 'mixed'"),
        2
    );
    drop(c);
    // The report names the model with its serving facts, escaped.
    let report = dir.path().join("report");
    let out = agora(&["report", "--store", store.to_str().expect("utf8"), "--out", report.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(report.join("report.html")).expect("report");
    let models = &html[html.find("id=\"models\"").expect("models table")..];
    let models = &models[..models.find("</table>").expect("end of table")];
    for fact in ["fake-1", "Fake", "Q8_0", "fake server &lt;b&gt;on loopback&lt;/b&gt;", "JsonSchema"] {
        assert!(models.contains(fact), "{fact} in {models}");
    }

    // Replay into a fresh store from the first store's cache, with the server gone.
    server.stop();
    drop(server);
    let replayed = dir.path().join("replayed.sqlite");
    let out = agora(&[
        "run",
        study.to_str().expect("utf8"),
        "--store",
        replayed.to_str().expect("utf8"),
        "--replay",
        "--cache",
        store.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let (a, b) = (dump(&store), dump(&replayed));
    if a != b {
        std::fs::write(std::env::temp_dir().join("agora-live.dump"), &a).expect("write");
        std::fs::write(std::env::temp_dir().join("agora-replayed.dump"), &b).expect("write");
    }
    assert!(a == b, "replay reproduces every record byte for byte (dumps in the temp dir)");
    // Each record hash, transcripts included, is the hash of the values the store holds.
    for s in [&store, &replayed] {
        let out = agora(&["verify", "--store", s.to_str().expect("utf8")]);
        assert!(out.status.success() && text(&out).contains("10 runs, each record hash"), "{}", text(&out));
    }
    let c = Connection::open(&replayed).expect("open");
    c.execute(
        "UPDATE transcript_calls SET reason = coalesce(reason, '') || '.'
         WHERE (run_id, seat, slot, kind, attempt) = (SELECT run_id, seat, slot, kind, attempt FROM transcript_calls LIMIT 1)",
        [],
    )
    .expect("altered");
    drop(c);
    let out = agora(&["verify", "--store", replayed.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("1 of 10 runs do not hash"), "{}", text(&out));
    // Replay with nothing cached fails clearly instead of calling a server.
    let empty = dir.path().join("empty.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", empty.to_str().expect("utf8"), "--replay"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("replay: no cached reply"), "{}", text(&out));
}

/// Starts a server on `addr`, the port of one just shut down: the port is free once the old
/// listener is closed, but another socket may hold it a moment, so binding is tried again until
/// it succeeds (or a minute has passed).
fn restart_on(rt: &tokio::runtime::Runtime, addr: &str, behaviour: Behaviour) -> FakeServer {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match rt.block_on(FakeServer::start_on(addr, behaviour.clone())) {
            Ok(server) => return server,
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("{addr} not free yet ({e}); trying again");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("cannot start a server on {addr} again: {e}"),
        }
    }
}

#[test]
fn a_server_that_dies_mid_study_leaves_it_resumable() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    // The reference: a healthy server, a fresh store.
    let healthy = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("server");
    let study = write_study(dir.path(), &healthy.endpoint(), 120.0);
    let reference = dir.path().join("reference.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", reference.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let addr = healthy.addr.to_string();
    rt.block_on(healthy.shut_down());

    // The same port, a server that stops answering after 60 requests.
    let dying = restart_on(&rt, &addr, Arc::new(|n, _| if n < 60 { FakeReply::Legal } else { FakeReply::Close }));
    let store = dir.path().join("interrupted.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("gave up"), "{}", text(&out));
    let done = count(&Connection::open(&store).expect("open"), "SELECT COUNT(*) FROM runs");
    assert!(done < 10, "the study stopped part-way ({done} runs)");
    rt.block_on(dying.shut_down());

    // Back up: resume and end with the reference's records.
    let back = restart_on(&rt, &addr, Arc::new(|_, _| FakeReply::Legal));
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!("{done} already in")), "{}", text(&out));
    assert_every_slot_accounted(&store);
    // Latency differs between live calls, so compare what was decided, not the transcripts.
    let decisions = |p: &Path| {
        let d = dump(p);
        let start = d.find("decisions\n").expect("decisions section");
        let end = d.find("transcripts\n").expect("transcripts section");
        d[start..end].to_string()
    };
    assert!(decisions(&store) == decisions(&reference), "resumed study decided exactly what the uninterrupted one did");
    assert_eq!(record_hashes(&store).len(), 10);
    drop(back);
}

#[test]
fn unreachable_server_at_start_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), "http://127.0.0.1:9/v1", 1.0);
    let store = dir.path().join("s.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no endpoint reachable") && text(&out).contains("127.0.0.1:9"), "{}", text(&out));
}

#[test]
fn instrument_dry_run_prints_the_full_matrix_with_calls_per_model() {
    let out = agora(&["run", "scenarios/studies/instrument.ron", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    for needle in [
        "qwen3-8b",
        "gemma-2-9b",
        "reversed-actions",
        "recognition-probe",
        "ultimatum-fixed-offer",
        "shuffled-pool",
        "punishment",
        "~prompt tokens",
        "~store",
    ] {
        assert!(t.contains(needle), "missing {needle}");
    }
    // Each model's expected store: between 300 B and 2 kB a call, in GB for the full matrix.
    let line = t.lines().find(|l| l.starts_with("qwen3-8b ") && l.contains("GB")).expect("the qwen3-8b line");
    let cols: Vec<&str> = line.split_whitespace().collect();
    let calls: f64 = cols[2].trim_start_matches("<=").parse().expect("calls");
    let gb: f64 = cols[4].trim_start_matches("<=").parse().expect("store");
    let per_call = gb * 1e9 / calls;
    assert!((300.0..2000.0).contains(&per_call), "{per_call} B a call: {line}");
    for v in ["C0", "C1", "C2", "C3"] {
        assert!(t.contains(&format!(" {v} ")), "missing variant {v}");
    }
}

/// The instrument's design details as a server sees them: the answer schema lists the
/// reasoning before the answer in the step-by-step cell; one-shot games show no earlier game;
/// the baseline naming arm falls back to the first-listed name; the recognition probe is asked
/// outside the behavioural session and records no decision.
#[test]
fn a_study_against_the_fake_server_shows_the_papers_design_details() {
    let rt = runtime();
    let bodies: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = bodies.clone();
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |_, body| {
            seen.lock().expect("lock").push(body.to_string());
            // Naming replies are unusable: the baseline arm must fall back to the first name.
            if body.to_string().contains("Which name do you pick?") {
                FakeReply::Content("I would rather not say.".into())
            } else {
                FakeReply::Legal
            }
        })))
        .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let cells = dir.path().join("cells");
    std::fs::create_dir_all(&cells).expect("mkdir");
    for c in ["step-by-step", "recognition-probe"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells").join(format!("{c}.ron"));
        std::fs::copy(src, cells.join(format!("{c}.ron"))).expect("copy cell");
    }
    let studies = dir.path().join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    let study = studies.join("design.ron");
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{}"], served_id: "fake-1", max_attempts: 2, backoff_ms: 5)"#,
        server.endpoint()
    );
    let blocks = [
        r#"Block(name: "ultimatum", environment: Bargaining(game: Ultimatum, games: 4), model_rosters: true, rosters: [],
              cells: ["baseline", "step-by-step", "recognition-probe"], cell_runs: 1)"#,
        r#"Block(name: "money-request", environment: MoneyRequest(games: 3), model_rosters: true, rosters: [])"#,
        r#"Block(name: "naming", environment: NamingGame(population: 4, cap: 6, window: 4), model_rosters: true, rosters: [])"#,
    ];
    std::fs::write(&study, study_text("design", 5, 1, &[model], &blocks)).expect("write study");
    let store = dir.path().join("design.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let c = Connection::open(&store).expect("open");

    // Reasoning first, in the request body as sent.
    let bodies = bodies.lock().expect("lock").clone();
    let stepwise: Vec<&String> = bodies.iter().filter(|b| b.contains("\"reasoning\"")).collect();
    assert!(!stepwise.is_empty(), "the step-by-step cell asks for reasoning");
    for b in &stepwise {
        let props = &b[b.find("\"properties\"").expect("a schema with properties")..];
        let (reasoning, action) =
            (props.find("\"reasoning\"").expect("reasoning"), props.find("\"action\"").expect("action"));
        assert!(reasoning < action, "reasoning before the answer: {props}");
    }

    // One-shot games: no earlier game in any prompt, and the rules say so.
    let one_shot: Vec<String> = {
        let mut st = c
            .prepare(
                "SELECT t.messages_json FROM transcripts t JOIN runs r USING (run_id)
                 WHERE r.block IN ('ultimatum', 'money-request') AND t.kind = 'decision' AND r.cell <> 'recognition-probe'",
            )
            .expect("query");
        st.query_map([], |r| r.get(0)).expect("rows").map(|r| r.expect("row")).collect()
    };
    assert!(one_shot.len() >= 4 * 2 + 3 * 2);
    for m in &one_shot {
        assert!(!m.contains("Your last") && !m.contains("What has happened"), "no history: {m}");
        assert!(!m.contains("randomly matched"), "nothing untrue: {m}");
        assert!(m.contains("played on its own"), "{m}");
    }

    // The baseline naming arm: every decision fell back to the first-listed name.
    let naming: Vec<(f64, i64)> = {
        let mut st = c
            .prepare("SELECT d.value, COUNT(*) FROM decisions d JOIN runs r USING (run_id) WHERE r.block = 'naming' GROUP BY 1")
            .expect("query");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
    };
    // Everyone falls back to the same first-listed name, so every interaction matches and the
    // convention (window 4) is recorded at the fourth: 4 interactions x 2 decisions.
    assert_eq!(naming, vec![(0.0, 8)], "all on the first-listed name");
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM transcripts t JOIN runs r USING (run_id) WHERE r.block = 'naming' AND parse_status = 'fallback'"),
        8
    );

    // The probe: one session, every seat asked once, no decision recorded.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM decisions d JOIN runs r USING (run_id) WHERE r.cell = 'recognition-probe'"),
        0
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM transcripts t JOIN runs r USING (run_id) WHERE r.cell = 'recognition-probe' AND t.kind = 'probe'"),
        2
    );
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM transcripts t JOIN runs r USING (run_id) WHERE r.cell = 'recognition-probe' AND t.kind = 'decision'"),
        0,
        "no behavioural call is spent on the probe"
    );
}

/// Runs the fake study of `write_study` against `server` into `dir/name`, and checks that the
/// store verifies.
fn run_fake_study(server: &FakeServer, dir: &Path, name: &str) -> PathBuf {
    let sub = dir.join(format!("{name}-study"));
    let study = write_study(&sub, &server.endpoint(), 120.0);
    let store = dir.join(name);
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agora(&["verify", "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    store
}

/// Each call's (endpoint, latency), in key order.
fn serving_facts(store: &Path) -> Vec<(String, f64)> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT t.endpoint, t.latency_ms FROM transcript_calls t JOIN runs r USING (run_id)
             ORDER BY r.run_key, t.seat, t.slot, t.kind, t.attempt",
        )
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
}

/// A server whose replies are `FakeReply::Legal` (deterministic in the request), each after a
/// delay of `delay(n)` for the n-th request.
fn legal_after(delay: fn(usize) -> u64) -> Behaviour {
    Arc::new(move |n, _| match delay(n) {
        0 => FakeReply::Legal,
        ms => FakeReply::Delay(Duration::from_millis(ms), Box::new(FakeReply::Legal)),
    })
}

/// Issue 40: the same study with the same seeds and the same replies records the same, so its
/// record hashes are the same, however long each reply took and whichever server answered.
#[test]
fn issue_40_the_same_replies_slower_or_from_another_server_hash_the_same() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let fast = rt.block_on(FakeServer::start(legal_after(|_| 0))).expect("server");
    let slow = rt.block_on(FakeServer::start(legal_after(|n| 5 + 10 * (n % 4) as u64))).expect("server");
    let a = run_fake_study(&fast, dir.path(), "fast.sqlite");
    let b = run_fake_study(&fast, dir.path(), "again.sqlite");
    let c = run_fake_study(&slow, dir.path(), "slow.sqlite");
    // The serving facts differ, and are kept.
    let (fa, fb, fc) = (serving_facts(&a), serving_facts(&b), serving_facts(&c));
    assert!(fa.len() > 50 && fa.len() == fb.len() && fa.len() == fc.len(), "{} {} {}", fa.len(), fb.len(), fc.len());
    assert_ne!(fa, fb, "two live runs' latencies differ");
    assert!(fc.iter().any(|(_, ms)| *ms >= 5.0), "the slow server's latencies are stored");
    assert!(fc.iter().all(|(e, _)| e.is_empty() || *e == slow.endpoint()), "the other server's endpoint is stored");
    assert!(fa.iter().any(|(e, _)| *e == fast.endpoint()));
    // The records are the same, and so are their hashes.
    assert_eq!(record_hashes(&a), record_hashes(&b));
    assert_eq!(record_hashes(&a), record_hashes(&c));
    assert_eq!(record_hashes(&a).len(), 10);
}

/// The record hash of schema 7 (`agora-record-7`), written out from a store's values as that
/// schema defined it: each model call's endpoint and latency were hashed too.
fn schema_7_hashes(store: &Path) -> Vec<(i64, String)> {
    use sha2::{Digest, Sha256};
    fn text(h: &mut Sha256, s: &str) {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    }
    fn some_text(h: &mut Sha256, s: Option<String>) {
        match s {
            Some(s) => {
                h.update([1]);
                text(h, &s);
            }
            None => h.update([0]),
        }
    }
    fn some_int(h: &mut Sha256, v: Option<i64>) {
        match v {
            Some(v) => {
                h.update([1]);
                h.update((v as u64).to_le_bytes());
            }
            None => h.update([0]),
        }
    }
    fn real(h: &mut Sha256, v: f64) {
        h.update(if v == 0.0 { 0u64 } else { v.to_bits() }.to_le_bytes());
    }
    let c = Connection::open(store).expect("open");
    let runs: Vec<(i64, String)> = c
        .prepare("SELECT run_id, run_key FROM runs ORDER BY run_id")
        .expect("query")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let mut out = Vec::new();
    for (run_id, key) in runs {
        let mut h = Sha256::new();
        text(&mut h, "agora-record-7");
        text(&mut h, &key);
        let mut st =
            c.prepare("SELECT seat, policy, family, committed FROM agents WHERE run_id = ?1 ORDER BY seat").expect("q");
        let agents: Vec<(i64, String, String, i64)> = st
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        h.update((agents.len() as u64).to_le_bytes());
        for (seat, policy, family, committed) in agents {
            h.update((seat as u64).to_le_bytes());
            text(&mut h, &policy);
            text(&mut h, &family);
            h.update((committed as u64).to_le_bytes());
        }
        let (d, p, i): (String, String, String) = c
            .query_row("SELECT decisions, payoffs, interactions FROM run_rows WHERE run_id = ?1", [run_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .expect("rows of the run");
        for s in [&d, &p, &i] {
            text(&mut h, s);
        }
        let n = count(&c, &format!("SELECT COUNT(*) FROM transcripts WHERE run_id = {run_id}"));
        h.update((n as u64).to_le_bytes());
        let mut st = c
            .prepare(
                "SELECT seat, slot, kind, attempt, round, role, model, served_id, endpoint, messages_json, raw_reply,
                        action, reason, parse_status, detail, latency_ms, prompt_tokens, completion_tokens
                 FROM transcripts WHERE run_id = ?1 ORDER BY seat, slot, kind, attempt",
            )
            .expect("q");
        let mut rows = st.query([run_id]).expect("rows");
        while let Some(r) = rows.next().expect("row") {
            for i in [0, 1] {
                h.update((r.get::<_, i64>(i).expect("int") as u64).to_le_bytes());
            }
            text(&mut h, &r.get::<_, String>(2).expect("kind"));
            for i in [3, 4] {
                h.update((r.get::<_, i64>(i).expect("int") as u64).to_le_bytes());
            }
            for i in 5..=10 {
                text(&mut h, &r.get::<_, String>(i).expect("text"));
            }
            some_text(&mut h, r.get(11).expect("action"));
            some_text(&mut h, r.get(12).expect("reason"));
            text(&mut h, &r.get::<_, String>(13).expect("status"));
            text(&mut h, &r.get::<_, String>(14).expect("detail"));
            real(&mut h, r.get(15).expect("latency"));
            some_int(&mut h, r.get(16).expect("tokens"));
            some_int(&mut h, r.get(17).expect("tokens"));
        }
        let mut st =
            c.prepare("SELECT name, value FROM metrics WHERE run_id = ?1 ORDER BY CAST(name AS BLOB)").expect("q");
        let metrics: Vec<(String, f64)> =
            st.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect();
        h.update((metrics.len() as u64).to_le_bytes());
        for (name, value) in metrics {
            text(&mut h, &name);
            real(&mut h, value);
        }
        out.push((run_id, format!("{:x}", h.finalize())));
    }
    out
}

/// Makes `store` what schema 7 left: the same values, hashed by schema 7's definition. The
/// definition written out above is kept as an independent check of the engine's own
/// (`agora_engine::record_hash::v7`, which the 7 -> 8 upgrade checks each run against): the
/// two agree on every run, calls with their latencies and endpoints included.
fn as_schema_7(store: &Path) {
    let old = schema_7_hashes(store);
    let engine = agora_engine::Store::open_read(store).expect("opens").schema_7_hashes().expect("schema 7's hashes");
    let keys: std::collections::HashMap<i64, String> = Connection::open(store)
        .expect("open")
        .prepare("SELECT run_id, run_key FROM runs")
        .expect("query")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let written_out: Vec<(String, String)> = old.iter().map(|(id, h)| (keys[id].clone(), h.clone())).collect();
    assert_eq!(engine, written_out, "the engine's schema-7 hash is the definition written out here");
    let c = Connection::open(store).expect("open");
    for (run_id, hash) in old {
        c.execute("UPDATE runs SET record_hash = ?1 WHERE run_id = ?2", rusqlite::params![hash, run_id])
            .expect("old hash");
    }
    c.pragma_update(None, "user_version", 7).expect("schema 7");
}

/// Issue 40: a store of schema 7 hashed each call's latency, so two clean runs of the same
/// study hashed differently; opened by this build, each run's hash is recomputed from the
/// store without it, and the two agree and verify. Each run is checked against its schema-7
/// hash first: a latency edited by hand before the upgrade, which schema 7 covered, keeps its
/// run's stale hash and `agora verify` names that run after the upgrade (schema 8 covers no
/// latency, so it could not tell otherwise).
#[test]
fn issue_40_a_schema_7_store_is_rehashed_without_latency_and_verifies() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = rt.block_on(FakeServer::start(legal_after(|n| (n % 3) as u64))).expect("server");
    let a = run_fake_study(&server, dir.path(), "a.sqlite");
    let b = run_fake_study(&server, dir.path(), "b.sqlite");
    let fresh = record_hashes(&a);
    for s in [&a, &b] {
        as_schema_7(s);
    }
    // A copy of `a` with one call's latency edited, its schema-7 hash left as it was.
    let edited = dir.path().join("edited.sqlite");
    let c = Connection::open(&a).expect("open");
    c.execute("VACUUM INTO ?1", [edited.to_str().expect("utf8")]).expect("a copy, through SQLite");
    drop(c);
    let c = Connection::open(&edited).expect("open");
    let key: String = c
        .query_row("SELECT run_key FROM runs WHERE run_id = (SELECT min(run_id) FROM transcript_calls)", [], |r| {
            r.get(0)
        })
        .expect("a run with calls");
    let changed = c
        .execute(
            "UPDATE transcript_calls SET latency_ms = latency_ms + 250
             WHERE (run_id, seat, slot, kind, attempt) = (SELECT run_id, seat, slot, kind, attempt
                    FROM transcript_calls WHERE run_id = (SELECT run_id FROM runs WHERE run_key = ?1) LIMIT 1)",
            [&key],
        )
        .expect("edited");
    assert_eq!(changed, 1);
    drop(c);
    let out = agora(&["verify", "--store", edited.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(&format!("run {key}: stored hash")), "{}", text(&out));
    assert!(text(&out).contains("1 of 10 runs do not hash"), "{}", text(&out));
    assert_ne!(record_hashes(&a), record_hashes(&b), "schema 7 hashed the latencies, which differ");
    assert_ne!(record_hashes(&a), fresh);
    for s in [&a, &b] {
        let out = agora(&["verify", "--store", s.to_str().expect("utf8")]);
        assert!(out.status.success() && text(&out).contains("10 runs, each record hash"), "{}", text(&out));
        assert_eq!(
            count(&Connection::open(s).expect("open"), "PRAGMA user_version"),
            i64::from(agora_engine::store::SCHEMA_VERSION)
        );
        assert_eq!(record_hashes(s), fresh, "the upgraded hashes are a fresh store's");
    }
}
