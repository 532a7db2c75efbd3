//! Studies under a flaky model server: a society study and a behavioural profile each finish
//! in at most three invocations of the same command while 30 % of requests fail (one transport
//! retry, so about 9 % of requests give up), with records equal to a clean run's; one request
//! that fails for good leaves one run or one question missing while everything else is
//! recorded, and the command says how to retry it; a request the server refuses (HTTP 400) or
//! answers without content counts as a failed attempt at its slot, which `--retry-missing`
//! repairs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agora_test_support::{legal_answer, Behaviour, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, record_hashes, runtime, s, study_text, text, write_seeded_models};

/// A fault for about 30 % of request numbers, spread by a hash of the number; the kinds
/// rotate among a server error, a rate limit, a dropped connection and a malformed body.
fn fault(n: usize) -> Option<FakeReply> {
    let mut x = (n as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let kind = match x % 4 {
        0 => FakeReply::Status(500),
        1 => FakeReply::Status(429),
        2 => FakeReply::Close,
        _ => FakeReply::Malformed,
    };
    (x % 100 < 30).then_some(kind)
}

/// The request as a string, for recognising the same request again.
fn same(body: &Value) -> String {
    body.to_string()
}

/// A behaviour under which the first request the server sees fails with HTTP `status` every
/// time it is sent, until the returned mend is called; `otherwise` answers every other request.
fn broken_first(status: u16, otherwise: fn(&Value) -> FakeReply) -> (Behaviour, impl Fn()) {
    let first: Arc<Mutex<Option<String>>> = Arc::default();
    let broken = first.clone();
    let behaviour: Behaviour = Arc::new(move |_, body: &Value| {
        let mut f = broken.lock().expect("lock");
        if f.get_or_insert_with(|| same(body)) == &same(body) {
            FakeReply::Status(status)
        } else {
            otherwise(body)
        }
    });
    (behaviour, move || drop(first.lock().expect("lock").replace("mended".into())))
}

/// Runs `args` up to `tries` times, until it succeeds; returns how many it took (`tries + 1`
/// when it never did) and the last output.
fn until_done(args: &[&str], tries: usize) -> (usize, String) {
    let mut last = String::new();
    for i in 1..=tries {
        let o = agora(args);
        last = text(&o);
        if o.status.success() {
            return (i, last);
        }
        assert_eq!(o.status.code(), Some(1), "{last}");
        assert!(last.contains("rerun the same command"), "{last}");
    }
    (tries + 1, last)
}

// ---------------------------------------------------------------------------------------------
// Society studies

fn write_society(dir: &Path, endpoint: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 8, timeout_s: 120.0, max_attempts: 2, max_retries: 1, backoff_ms: 2)"#
    );
    let study = study_text(
        "flaky",
        5,
        3,
        &[model],
        &[
            r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 6), model_rosters: true, rosters: [])"#,
            r#"Block(name: "pgg", environment: PublicGoods(rounds: 3, punishment: true), model_rosters: true, rosters: [])"#,
            r#"Block(name: "naming", environment: NamingGame(population: 4, cap: 12, window: 4), model_rosters: true, rosters: [])"#,
        ],
    );
    let path = dir.join("flaky.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

/// Every decision of a store, in key order: what was decided, without serving facts.
fn decisions(store: &Path) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT r.run_key || '|' || d.step || '|' || d.seat || '|' || d.role || '|' || d.action || '|' || IFNULL(d.value, '-')
             FROM decisions d JOIN runs r USING (run_id) ORDER BY r.run_key, d.step, d.seat, d.role",
        )
        .expect("query");
    st.query_map([], |r| r.get(0)).expect("rows").map(|r| r.expect("row")).collect()
}

fn clean_society(rt: &tokio::runtime::Runtime, dir: &Path) -> PathBuf {
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("server");
    let study = write_society(&dir.join("clean"), &server.endpoint());
    let store = dir.join("clean.sqlite");
    let o = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    store
}

#[test]
fn a_society_study_finishes_under_30_percent_faults_in_at_most_three_invocations() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let reference = clean_society(&rt, dir.path());
    let flaky: Behaviour = Arc::new(|n, _| fault(n).unwrap_or(FakeReply::Legal));
    let server = rt.block_on(FakeServer::start(flaky)).expect("server");
    let study = write_society(&dir.path().join("flaky"), &server.endpoint());
    let store = dir.path().join("flaky.sqlite");
    let (invocations, out) = until_done(&["run", s(&study), "--store", s(&store)], 3);
    assert!(invocations <= 3, "still missing after 3 invocations: {out}");
    let requests = server.requests.load(std::sync::atomic::Ordering::Relaxed);
    assert!(requests > 100, "{requests} requests");
    // What was recorded is what a clean run records, hash for hash.
    assert_eq!(record_hashes(&store), record_hashes(&reference));
    assert_eq!(decisions(&store), decisions(&reference));
    assert_eq!(record_hashes(&store).len(), 9);
    let o = agora(&["verify", "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_request_that_fails_for_good_leaves_one_run_missing_and_the_rest_recorded() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let reference = clean_society(&rt, dir.path());
    // The first request the server sees fails every time it is sent (HTTP 503): the run it
    // belongs to cannot finish; every other run can.
    let (behaviour, mend) = broken_first(503, |_| FakeReply::Legal);
    let server = rt.block_on(FakeServer::start(behaviour)).expect("server");
    let study = write_society(&dir.path().join("broken"), &server.endpoint());
    let store = dir.path().join("broken.sqlite");
    let o = agora(&["run", s(&study), "--store", s(&store)]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("flaky: 1 of 9 runs missing after 8 further pass(es)"), "{t}");
    assert!(t.contains("rerun the same command to retry them") && t.contains("HTTP 503"), "{t}");
    assert_eq!(record_hashes(&store).len(), 8, "every other run is recorded");
    // The failing request was sent again in each further pass, twice a pass (one retry).
    let failed_sends = 2 * 9;
    assert!(server.requests.load(std::sync::atomic::Ordering::Relaxed) >= failed_sends);
    // Nothing of the missing run was recorded, and nothing false.
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), 8);
    drop(c);
    for (key, hash) in record_hashes(&store) {
        assert!(record_hashes(&reference).contains(&(key, hash)));
    }
    // The server mended, the same command finishes it: the records are a clean run's.
    mend();
    let o = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 runs executed, 8 already in"), "{}", text(&o));
    assert_eq!(record_hashes(&store), record_hashes(&reference));
    assert_eq!(decisions(&store), decisions(&reference));
}

// ---------------------------------------------------------------------------------------------
// Profiles

fn write_profile(dir: &Path, endpoint: &str, model_extra: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    write_seeded_models(dir, endpoint, model_extra);
    let study = dir.join("flaky-profile.ron");
    std::fs::write(
        &study,
        r#"ProfileStudy(version: 1, name: "flaky-profile", master_seed: 7, include_models: Some("models.ron"),
            responses: 1, gr_responses: 2, reduced_protocol: true, tasks: ["dictator", "ultimatum-proposer", "b4"], general_robustness: true)"#,
    )
    .expect("study");
    study
}

/// The profile study written in `root/name` against `endpoint`, with its store and output
/// directory beside it.
struct ProfileDir {
    dir: PathBuf,
    study: PathBuf,
    store: PathBuf,
    out: PathBuf,
}

impl ProfileDir {
    fn new(root: &Path, name: &str, endpoint: &str) -> ProfileDir {
        let dir = root.join(name);
        let study = write_profile(&dir, endpoint, "");
        ProfileDir { store: dir.join("s.sqlite"), out: dir.join("out"), dir, study }
    }

    /// The `agora profile` command line of the study.
    fn args(&self) -> Vec<&str> {
        vec!["profile", s(&self.study), "--store", s(&self.store), "--out", s(&self.out)]
    }
}

/// Every profile record in a fixed order: responses with their status, value and score, GR
/// slots with their value.
fn profile_records(store: &Path) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT task || '|' || version || '|' || presentation || '|' || level || '|' || point || '|' || branch || '|' ||
         direction || '|' || round || '|' || slot || '|' || status || '|' || IFNULL(value, '-') || '|' || IFNULL(score, '-')
         FROM profile_responses ORDER BY 1",
        "SELECT condition || '|' || slot || '|' || IFNULL(value, '-') || '|' || strict FROM profile_gr ORDER BY 1",
    ] {
        let mut st = c.prepare(sql).expect("query");
        out.extend(st.query_map([], |r| r.get::<_, String>(0)).expect("rows").map(|r| r.expect("row")));
    }
    out
}

fn clean_profile(rt: &tokio::runtime::Runtime, dir: &Path) -> (PathBuf, PathBuf) {
    let server = rt.block_on(FakeServer::start(Arc::new(|_, body: &Value| FakeReply::Content(legal_answer(body)))));
    let server = server.expect("server");
    let p = ProfileDir::new(dir, "clean", &server.endpoint());
    let o = agora(&p.args());
    assert!(o.status.success(), "{}", text(&o));
    (p.store, p.out.join("profile.csv"))
}

#[test]
fn a_profile_finishes_under_30_percent_faults_in_at_most_three_invocations() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let (reference, csv) = clean_profile(&rt, dir.path());
    let server = rt
        .block_on(FakeServer::start(Arc::new(|n, body: &Value| {
            fault(n).unwrap_or_else(|| FakeReply::Content(legal_answer(body)))
        })))
        .expect("server");
    let p = ProfileDir::new(dir.path(), "flaky", &server.endpoint());
    let (d, store) = (&p.dir, &p.store);
    let (invocations, out) = until_done(&p.args(), 3);
    assert!(invocations <= 3, "still missing after 3 invocations: {out}");
    let records = profile_records(&store);
    assert!(records.len() > 100, "{} records", records.len());
    assert_eq!(records, profile_records(&reference));
    assert_eq!(
        std::fs::read_to_string(d.join("out/profile.csv")).expect("csv"),
        std::fs::read_to_string(csv).expect("csv")
    );
    // A failure at the server is never an attempt: every attempt recorded is an answer read.
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE status = 'error'"), 0);
}

#[test]
fn a_question_that_fails_in_transport_for_good_is_left_unasked_and_the_rest_recorded() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let (reference, _) = clean_profile(&rt, dir.path());
    let (behaviour, mend) = broken_first(500, |body| FakeReply::Content(legal_answer(body)));
    let server = rt.block_on(FakeServer::start(behaviour)).expect("server");
    let p = ProfileDir::new(dir.path(), "broken", &server.endpoint());
    let (d, store, args) = (&p.dir, &p.store, p.args());
    let o = agora(&args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("model `fake`: 1 of ") && t.contains("questions missing after 2 further pass(es)"), "{t}");
    assert!(t.contains("rerun the same command to retry them") && t.contains("HTTP 500"), "{t}");
    assert!(!d.join("out/profile.csv").exists(), "no profile is written while questions are missing");
    // Everything else is recorded, as the clean run recorded it; nothing is recorded as missing.
    let records = profile_records(&store);
    let clean = profile_records(&reference);
    assert!(records.iter().all(|r| clean.contains(r)), "every record is the clean run's");
    assert!(records.len() < clean.len() && records.len() + 40 > clean.len(), "{} of {}", records.len(), clean.len());
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing'"), 0);
    drop(c);
    // The server mended, the same command fills the slot.
    mend();
    let o = agora(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(profile_records(&store), clean);
}

#[test]
fn a_refused_or_empty_reply_is_a_failed_attempt_that_retry_missing_repairs() {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let (reference, _) = clean_profile(&rt, dir.path());
    // The first question asked is refused (HTTP 400) until mended; the second comes back
    // without content while the token budget is under 400 (a reply cut off inside its
    // reasoning). Every slot that asks either question fails at each attempt.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let mended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (log, is_mended) = (seen.clone(), mended.clone());
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |_, body: &Value| {
            let question = body["messages"][0]["content"].as_str().unwrap_or_default().to_string();
            let mut seen = log.lock().expect("lock");
            if !seen.contains(&question) && seen.len() < 2 {
                seen.push(question.clone());
            }
            let budget = body["max_tokens"].as_u64().unwrap_or(0);
            if seen[0] == question && !is_mended.load(std::sync::atomic::Ordering::SeqCst) {
                FakeReply::Status(400)
            } else if seen.get(1) == Some(&question) && budget < 400 {
                FakeReply::NullContent
            } else {
                FakeReply::Content(legal_answer(body))
            }
        })))
        .expect("server");
    let p = ProfileDir::new(dir.path(), "refused", &server.endpoint());
    let (d, store, args) = (&p.dir, &p.store, p.args());
    let o = agora(&args);
    assert!(o.status.success(), "the profile completes with two slots missing: {}", text(&o));
    let missing = |store: &Path| {
        count(
            &Connection::open(store).expect("open"),
            "SELECT COUNT(*) FROM profile_responses WHERE status = 'missing'",
        )
    };
    let c = Connection::open(&store).expect("open");
    let n = missing(&store);
    assert!(n >= 2, "{n} slots missing");
    // Each missing slot holds its two failed attempts, with the failure as the reply.
    assert_eq!(count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE status = 'error'"), 2 * n);
    assert!(count(&c, "SELECT COUNT(*) FROM profile_attempts WHERE status = 'error' AND reply LIKE '%HTTP 400%'") >= 2);
    assert!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_attempts WHERE status = 'error' AND reply LIKE '%without message content%'"
        ) >= 2
    );
    drop(c);
    // A plain resume has nothing to ask.
    let o = agora(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(missing(&store), n);
    // A recovery pass with a larger token budget, the refusal mended: both slots answered.
    mended.store(true, std::sync::atomic::Ordering::SeqCst);
    write_profile(&d, &server.endpoint(), ", max_tokens: 512");
    let mut retry = args.clone();
    retry.push("--retry-missing");
    let o = agora(&retry);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(missing(&store), 0);
    let c = Connection::open(&store).expect("open");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM profile_passes WHERE kind = 'retry-missing' AND changed_json LIKE '%max_tokens%'"
        ),
        1,
        "the pass records the budget it raised"
    );
    drop(c);
    assert_eq!(profile_records(&store), profile_records(&reference));
}
