//! Faults under load: thousands of concurrent requests against the fake OpenAI-compatible
//! server while it answers with 429s, 500s, garbage, hangs past the timeout and dropped
//! connections, and restarts twice part-way. The study must complete with every decision slot
//! accounted for, and without a deadlock (the run is killed and the test fails after a
//! deadline).
//!
//! Nothing here waits on a clock: the server holds its replies until it has 2,000 requests in
//! flight at once, and each restart comes on what the server has seen, so a slow machine only
//! makes the test take longer.

use std::io::Read;
use std::path::Path;
use std::process::Child;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_test_support::{Behaviour, FakeReply, FakeServer, Gate};
use rusqlite::Connection;

mod common;
use common::{assert_every_slot_accounted, count, study_text};

const RUNS: usize = 600;
const SEATS: usize = 4;
const ROUNDS: usize = 3;
/// Requests held in flight at once before a held server answers or dies. At most RUNS × SEATS
/// = 2,400 can be open at once: one per seat of every run.
const TARGET: usize = 2000;
/// The client's timeout: long enough that no request is given up while the server holds it
/// (holding takes as long as the client takes to open 2,000 requests), and what a hang costs.
const TIMEOUT_S: f64 = 30.0;

/// Six in twenty-five fail: a 429, a 500, a body that is not JSON, a dropped connection, a
/// hang (where `hang`; a hang ends only when the client times out), and an answer that does not
/// parse.
fn fault(n: usize, hang: bool) -> FakeReply {
    match n % 25 {
        0 => FakeReply::Status(429),
        1 => FakeReply::Status(500),
        2 => FakeReply::Malformed,
        3 => FakeReply::Close,
        4 if hang => FakeReply::Hang,
        5 => FakeReply::Content("Sure! I would contribute about half, I think.".into()),
        _ => FakeReply::Legal,
    }
}

fn write_study(dir: &Path, endpoint: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("studies")).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 4096, timeout_s: {TIMEOUT_S:?}, max_attempts: 3, max_retries: 20, backoff_ms: 20)"#
    );
    let block =
        format!(r#"Block(name: "pgg", environment: PublicGoods(rounds: {ROUNDS}), model_rosters: true, rosters: [])"#);
    let study = study_text("load", 5, RUNS as u64, &[model], &[&block]);
    let path = dir.join("studies/load.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

/// Starts a server on `addr`, the port of one just shut down: the port is free once the old
/// listener is closed, but another socket may hold it a moment, so binding is tried again until
/// it succeeds (or a minute has passed).
fn restart_on(rt: &tokio::runtime::Runtime, addr: &str, behaviour: Behaviour) -> FakeServer {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match rt.block_on(FakeServer::start_on(addr, behaviour.clone())) {
            Ok(server) => return server,
            Err(e) if Instant::now() < deadline => {
                eprintln!("{addr} not free yet ({e}); trying again");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("cannot start a server on {addr} again: {e}"),
        }
    }
}

/// Waits until `done` holds, failing if the run ends first or after `guard` (a hang guard: on
/// a slow machine the wait is only longer).
fn wait_for(child: &mut Child, what: &str, guard: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + guard;
    while !done() {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut text = String::new();
            if let Some(mut out) = child.stdout.take() {
                let _ = out.read_to_string(&mut text);
            }
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut text);
            }
            panic!("agora ended ({status}) before {what}: {text}");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("not {what} within {guard:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn thousands_of_requests_in_flight_through_faults_and_restarts_all_accounted() {
    // The server side of every connection lives in this process.
    agora_agents::llm::raise_open_file_limit();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    // The first server holds every request until 2,000 are in flight at once, then dies with
    // them: each is cut without a word.
    let first_gate = Gate::new();
    let held = first_gate.clone();
    let first = rt
        .block_on(FakeServer::start(Arc::new(move |_, _| FakeReply::Gated(held.clone(), Box::new(FakeReply::Close)))))
        .expect("server");
    let addr = first.addr.to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &first.endpoint());
    let store = dir.path().join("load.sqlite");
    let started = Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8"), "--live", "1000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agora runs");

    let guard = Duration::from_secs(300);
    wait_for(&mut child, "2,000 requests were in flight at once", guard, || {
        first.peak_in_flight.load(Ordering::Relaxed) >= TARGET
    });
    let first_peak = first.peak_in_flight.load(Ordering::Relaxed);
    eprintln!("{:?}: {first_peak} in flight at the first server; it dies", started.elapsed());
    // Closed before the held requests are let go, so that none is answered by the old server.
    rt.block_on(first.shut_down());
    first_gate.open();

    // Restarted on the same port, it holds the requests again (they all come back, retried)
    // until 2,000 are in flight, then answers them all at once with the faults, hangs
    // included.
    let second_gate = Gate::new();
    let held = second_gate.clone();
    let second = restart_on(&rt, &addr, Arc::new(move |n, _| FakeReply::Gated(held.clone(), Box::new(fault(n, true)))));
    wait_for(&mut child, "2,000 retried requests were in flight at once", guard, || {
        second.peak_in_flight.load(Ordering::Relaxed) >= TARGET
    });
    let second_peak = second.peak_in_flight.load(Ordering::Relaxed);
    eprintln!("{:?}: {second_peak} in flight at the restarted server; answered", started.elapsed());
    second_gate.open();

    // The study needs at least one request per decision (7,200), every one of them after the
    // first restart: once the second server has had two for each seat of every run, the study
    // is part-way, and the server dies again. The third answers with the faults but no hangs,
    // so that a hang costs the client's timeout once at most.
    let part_way = 2 * RUNS * SEATS;
    wait_for(&mut child, "the restarted server had 4,800 requests", guard, || {
        second.requests.load(Ordering::Relaxed) >= part_way
    });
    eprintln!(
        "{:?}: {} requests at the restarted server; it dies",
        started.elapsed(),
        second.requests.load(Ordering::Relaxed)
    );
    rt.block_on(second.shut_down());
    let _third = restart_on(&rt, &addr, Arc::new(|n, _| fault(n, false)));

    let deadline = Duration::from_secs(900);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            panic!("no progress within {deadline:?}: deadlock or livelock");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("output");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(status.success(), "{text}");
    eprintln!("{:?}: done", started.elapsed());
    assert!(first_peak >= TARGET && second_peak >= TARGET, "{first_peak} and {second_peak} in flight at once");

    assert_every_slot_accounted(&store);
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), RUNS as i64);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM decisions"), (RUNS * SEATS * ROUNDS) as i64);
    // Each decision slot has exactly one terminal transcript, and nothing is decided twice.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM transcripts WHERE kind = 'decision' AND parse_status IN ('ok', 'fallback')"),
        (RUNS * SEATS * ROUNDS) as i64,
        "{text}"
    );
    assert!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE parse_status = 'unparsable'") > 0, "garbage recorded");
}
