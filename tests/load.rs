//! Faults under load: thousands of concurrent requests against the fake OpenAI-compatible
//! server while it answers with 429s, 500s, garbage, hangs past the timeout and dropped
//! connections, and restarts twice part-way. The study must complete with every decision slot
//! accounted for, and without a deadlock (the run is killed and the test fails after a
//! deadline).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_test_support::{Behaviour, FakeReply, FakeServer};
use rusqlite::Connection;

mod common;
use common::{assert_every_slot_accounted, count};

const RUNS: usize = 600;
const SEATS: usize = 4;
const ROUNDS: usize = 3;

fn behaviour() -> Behaviour {
    // Every request waits two and a half seconds, so that requests pile up even when the client
    // opens them slowly (a debug build on a busy machine): by Little's law the number in flight
    // is the rate they are opened at times this wait. Six in twenty-five then fail.
    Arc::new(|n, _| {
        let reply = match n % 25 {
            0 => FakeReply::Status(429),
            1 => FakeReply::Status(500),
            2 => FakeReply::Malformed,
            3 => FakeReply::Close,
            4 => FakeReply::Hang,
            5 => FakeReply::Content("Sure! I would contribute about half, I think.".into()),
            _ => FakeReply::Legal,
        };
        FakeReply::Delay(Duration::from_millis(2500), Box::new(reply))
    })
}

fn write_study(dir: &Path, endpoint: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("studies")).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    let study = format!(
        r#"Study(
    version: 1, name: "load", master_seed: 5, runs: {RUNS},
    models: [Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 4096, timeout_s: 4.0, max_attempts: 3, max_retries: 20, backoff_ms: 20)],
    blocks: [Block(name: "pgg", environment: PublicGoods(rounds: {ROUNDS}), model_rosters: true, rosters: [])],
)"#
    );
    let path = dir.join("studies/load.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

#[test]
fn thousands_of_requests_in_flight_through_faults_and_restarts_all_accounted() {
    // The server side of every connection lives in this process.
    agora_agents::llm::raise_open_file_limit();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = rt.block_on(FakeServer::start(behaviour())).expect("server");
    let addr = server.addr.to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("load.sqlite");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8"), "--live", "1000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agora runs");

    // Let requests pile up, then restart the server twice on the same port.
    let started = Instant::now();
    let mut peak = 0;
    let mut server = Some(server);
    for restart in 0..2 {
        let wait_until = Duration::from_millis(5000 + 5000 * restart);
        while started.elapsed() < wait_until {
            if let Some(s) = &server {
                peak = peak.max(s.peak_in_flight.load(Ordering::Relaxed));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(s) = server.take() {
            peak = peak.max(s.peak_in_flight.load(Ordering::Relaxed));
            s.stop();
        }
        std::thread::sleep(Duration::from_millis(500));
        server = Some(rt.block_on(FakeServer::start_on(&addr, behaviour())).expect("restarted server"));
    }

    let deadline = Duration::from_secs(600);
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
    // At most RUNS × SEATS = 2,400 requests can be open at once: one per seat of every run.
    eprintln!("peak in flight: {peak} of {}", RUNS * SEATS);
    assert!(peak >= 2000, "only {peak} requests were in flight at once");

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
