//! Issue 40: one way to open a store, through SQLite only, and one writing command at a time.
//!
//! `agora serve` lost people's answers when any other process opened and closed the store while
//! a society played: the server read the store's header with a descriptor of its own and closed
//! it, which dropped every POSIX lock the process held on the file, so the other process's close
//! took the server's write-ahead log with it. These tests have other processes open and close a
//! store while `agora run` and `agora serve` write it, and check that nothing is lost; that an
//! empty file is reported as one and left empty; that a store in a read-only directory opens
//! for reading; and that a second `agora run` on a store being written is refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_engine::{Store, StoreError};
use agora_test_support::{FakeReply, FakeServer, Gate};
use rusqlite::{Connection, OpenFlags};

mod common;
use common::{agora, record_hashes, serve, study_text, text};

fn study(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies").join(name).display().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Starts `agora ARGS` in the repository root, its output kept.
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agora starts")
}

/// The runs of the whole classical study, as `agora run --dry-run` counts them.
fn classical_runs() -> i64 {
    let o = agora(&["run", &study("classical.ron"), "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let total = t.lines().find_map(|l| l.strip_prefix("total: ")).expect("a total line");
    total.split(' ').next().and_then(|n| n.parse().ok()).expect("a run count")
}

/// SQLite's full integrity check of the store, from a connection of this process.
fn integrity(store: &Path) -> String {
    Connection::open(store).expect("open").query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("check")
}

fn count(store: &Path, sql: &str) -> i64 {
    Connection::open(store).expect("open").query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// Other processes opening and closing a store over and over until stopped: this test process
/// (a connection opened, the stored runs counted, closed, in a loop) and, every tenth time,
/// `agora summary`. After each close the store's write-ahead log is looked at: once it exists,
/// a writer that holds the store open keeps it, the same file, until the writer closes.
struct Readers {
    stop: Arc<AtomicBool>,
    /// Opens and closes so far.
    opens: Arc<AtomicUsize>,
    /// The most runs a reader has seen in the store.
    seen: Arc<AtomicI64>,
    /// What became of the log after a reader's close, where it was not the writer's log.
    lost_log: Arc<std::sync::Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Readers {
    fn start(store: &Path) -> Readers {
        let stop = Arc::new(AtomicBool::new(false));
        let opens = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicI64::new(0));
        let lost_log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (stop2, opens2, seen2, lost2, store) =
            (stop.clone(), opens.clone(), seen.clone(), lost_log.clone(), store.to_path_buf());
        let log = PathBuf::from(format!("{}-wal", store.display()));
        let thread = std::thread::spawn(move || {
            use std::os::unix::fs::MetadataExt as _;
            let (mut i, mut next_summary) = (0u64, 10u64);
            let mut writer_log: Option<u64> = None;
            while !stop2.load(Ordering::SeqCst) {
                i += 1;
                if let Ok(c) = Connection::open_with_flags(&store, OpenFlags::SQLITE_OPEN_READ_WRITE) {
                    // The store may not have its tables yet; the open and the close are the point.
                    if let Ok(n) = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)) {
                        seen2.fetch_max(n, Ordering::SeqCst);
                    }
                    drop(c);
                    opens2.fetch_add(1, Ordering::SeqCst);
                }
                if i == next_summary {
                    next_summary += 10;
                    let _ = agora(&["summary", "--store", s(&store)]);
                    opens2.fetch_add(1, Ordering::SeqCst);
                }
                let now = std::fs::metadata(&log).ok().map(|m| m.ino());
                match (writer_log, now) {
                    (None, _) => writer_log = now,
                    (Some(a), Some(b)) if a == b => {}
                    (Some(_), other) => {
                        let what = if other.is_some() { "replaced" } else { "deleted" };
                        lost2.lock().expect("lock").push(format!("after close {i}: the log was {what}"));
                        writer_log = other;
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Readers { stop, opens, seen, lost_log, thread: Some(thread) }
    }

    /// What became of the writer's log, where a reader's close took it away.
    fn lost_log(&self) -> Vec<String> {
        self.lost_log.lock().expect("lock").clone()
    }

    fn opens(&self) -> usize {
        self.opens.load(Ordering::SeqCst)
    }

    fn seen(&self) -> i64 {
        self.seen.load(Ordering::SeqCst)
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("readers");
        }
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn issue_40_readers_opening_and_closing_the_store_lose_no_run_of_agora_run() {
    readers_lose_no_run_of(&[]);
}

/// `agora run` opening its store twice (`--cache` naming the store itself, opened before as
/// the store): the second opening must not drop the first connection's locks.
#[test]
fn issue_40_readers_lose_no_run_of_agora_run_that_opens_its_store_twice() {
    readers_lose_no_run_of(&["--cache"]);
}

/// Runs of the study the readers test writes: a repeated dilemma between two model seats,
/// five rounds, so that each run asks the model [`MODEL_RUN_CALLS`] times.
const MODEL_RUNS: i64 = 300;
const MODEL_RUN_CALLS: usize = 10;

/// A study of [`MODEL_RUNS`] runs whose seats ask the fake server at `endpoint` (one request a
/// decision: a legal answer is never asked again, and no reply is cached across slots).
fn model_study(dir: &Path, endpoint: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("studies")).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    let path = dir.join("studies/readers.ron");
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 64, timeout_s: 600.0, max_attempts: 2, max_retries: 2, backoff_ms: 2)"#
    );
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 5), model_rosters: true, rosters: [])"#;
    std::fs::write(&path, study_text("readers", 11, MODEL_RUNS as u64, &[model], &[block])).expect("write study");
    path
}

/// Runs a study into a store while other processes open and close it, each counting the runs
/// stored; `extra` flags are each followed by the store's path. The run's write-ahead log must
/// stay its own while it writes (before issue 40 was fixed, a run that opened its store twice
/// let a reader's close delete the log it was writing: what it committed after that reached the
/// store only if it lived to checkpoint it). Once the readers have seen half the study the run
/// is killed, as an interrupted study is: every run seen must still be in the store, the store
/// intact, and resuming must finish the study.
///
/// The study's seats ask a fake model server, which answers every request but the study's last
/// one and holds that until the kill: the run cannot end before the readers have seen half of
/// it, however slowly they read.
fn readers_lose_no_run_of(extra: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let calls = MODEL_RUNS as usize * MODEL_RUN_CALLS;
    let gate = Gate::new();
    let held = gate.clone();
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |n, _| {
            if n + 1 < calls {
                FakeReply::Legal
            } else {
                FakeReply::Gated(held.clone(), Box::new(FakeReply::Legal))
            }
        })))
        .expect("server");
    let want = MODEL_RUNS;
    let study = model_study(dir.path(), &server.endpoint());
    let mut readers = Readers::start(&store);
    let mut args = vec!["run", s(&study), "--store", s(&store)].into_iter().map(String::from).collect::<Vec<_>>();
    for flag in extra {
        args.extend([flag.to_string(), s(&store).to_string()]);
    }
    let mut run = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // A hang guard: every run but one ends in a few seconds.
    let deadline = Instant::now() + Duration::from_secs(300);
    let ended = loop {
        if readers.seen() >= want / 2 && readers.opens() > 20 {
            break None;
        }
        if let Some(status) = run.try_wait().expect("agora run") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = run.kill();
            panic!("the readers saw {} of {want} runs in {} opens", readers.seen(), readers.opens());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    readers.stop();
    let _ = run.kill();
    let out = run.wait_with_output().expect("agora run ends");
    let seen = readers.seen();
    let lost = readers.lost_log();
    assert!(
        lost.is_empty(),
        "the run's log was taken away {} times while it wrote: {:?}",
        lost.len(),
        &lost[..3.min(lost.len())]
    );
    assert!(
        ended.is_none(),
        "agora run ended ({}) while the readers had seen only {seen} of its {want} runs: {}",
        out.status,
        text(&out)
    );
    assert!(readers.opens() > 20, "the store was opened and closed while it was written");
    assert_eq!(integrity(&store), "ok");
    let stored = count(&store, "SELECT COUNT(*) FROM runs");
    assert!(stored >= seen, "{stored} runs stored after the kill, {seen} seen before it");
    eprintln!("{seen} of {want} runs seen in {} opens; {stored} stored after the kill", readers.opens());
    assert!(stored < want, "the held request kept the run from ending");
    // The server answers everything from now on.
    gate.open();
    let resumed = agora(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), want, "every run of the study is stored");
    let v = agora(&["verify", "--store", s(&store)]);
    assert!(v.status.success(), "{}", text(&v));
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

#[test]
fn issue_40_readers_opening_and_closing_the_store_lose_no_answer_of_agora_serve() {
    const TOKEN: &str = "sharing-admin-token-0123456789";
    const ROUNDS: u64 = 6;
    let dir = tempfile::tempdir().expect("tempdir");
    let study = dir.path().join("sharing.ron");
    std::fs::write(
        &study,
        format!(
            r#"Study(version: 1, name: "sharing", master_seed: 5, runs: 1,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: {ROUNDS}),
        rosters: [Roster(name: "person-and-cooperator", members: [
            Member(policy: Human(TitForTat), count: Some(1)), Member(policy: AlwaysCooperate)])])],
    participants: Participants(consent: "Consent text.", instructions: "Instructions.",
        comprehension: [Question(text: "Who decides?", options: ["No one", "You"], answer: 1)],
        wait_seconds: 300, decision_seconds: 300),
)"#
        ),
    )
    .expect("study");
    let store = dir.path().join("s.sqlite");
    let (mut server, base) = serve(&study, &store, TOKEN);
    let mut readers = Readers::start(&store);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    let answered = rt.block_on(async {
        let c = client();
        let v: serde_json::Value = c
            .post(format!("{base}/admin/api/sessions"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"count": 1}))
            .send()
            .await
            .expect("codes")
            .json()
            .await
            .expect("json");
        let code = v["codes"][0].as_str().expect("a code").to_string();
        let r = c.post(format!("{base}/p/{code}/consent")).form(&[("agree", "yes")]).send().await.expect("consent");
        assert_eq!(r.status(), 303);
        let r = c.post(format!("{base}/p/{code}/comprehension")).form(&[("q0", "1")]).send().await.expect("q");
        assert_eq!(r.status(), 303);
        let mut answered = 0u64;
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            assert!(Instant::now() < deadline, "the session did not end");
            let s: serde_json::Value =
                c.get(format!("{base}/p/{code}/state")).send().await.expect("state").json().await.expect("json");
            if s["stage"] == "done" {
                return answered;
            }
            // Polled every 100 ms, well inside the rate limit of a participant's code however
            // long the wait.
            let Some(nonce) = s["decision"]["nonce"].as_str() else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            // Each answer waits for the readers to open and close the store a few times more.
            let seen = readers.opens();
            while readers.opens() < seen + 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let choice = (answered % 2).to_string();
            let r = c
                .post(format!("{base}/p/{code}/act"))
                .form(&[("nonce", nonce), ("choice", choice.as_str())])
                .send()
                .await
                .expect("act");
            assert_eq!(r.status(), 303);
            answered += 1;
        }
    });
    readers.stop();
    // Stopped as a server is: killed, with no chance to close the store.
    server.kill().expect("kill");
    server.wait().expect("wait");
    assert_eq!(answered, ROUNDS);
    assert_eq!(integrity(&store), "ok");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_answers"), ROUNDS as i64, "every answer is stored");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), 1, "the society's run is stored");
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM transcripts WHERE model = 'human' AND parse_status = 'ok'"),
        ROUNDS as i64,
        "every decision of the person is in the run's transcripts"
    );
}

#[test]
fn issue_40_an_empty_file_is_reported_as_one_and_left_empty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").expect("an empty file");
    let out = dir.path().join("out");
    let reads: [Vec<&str>; 6] = [
        vec!["summary", "--store", s(&empty)],
        vec!["verify", "--store", s(&empty)],
        vec!["analyze", "--store", s(&empty), "--out", s(&out)],
        vec!["report", "--store", s(&empty), "--out", s(&out)],
        vec!["export", "--store", s(&empty), "--out", s(&out)],
        vec!["anchors", "--from-store", s(&empty), "--out", s(&out)],
    ];
    for args in &reads {
        let o = agora(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains("empty.sqlite") && t.contains("an empty file"), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
        assert_eq!(std::fs::metadata(&empty).expect("still there").len(), 0, "{args:?} left the file empty");
    }
    for side in ["empty.sqlite-wal", "empty.sqlite-shm", "empty.sqlite-journal"] {
        assert!(!dir.path().join(side).exists(), "no {side} beside the empty file");
    }
    // A missing file is reported as missing, and not made.
    let missing = dir.path().join("missing.sqlite");
    let o = agora(&["summary", "--store", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("missing.sqlite does not exist"), "{}", text(&o));
    assert!(!missing.exists());
    // The other way: a command that writes makes the empty file a store.
    let o = agora(&["run", &study("tipping.ron"), "--runs", "1", "--store", s(&empty)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = agora(&["summary", "--store", s(&empty)]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Whether this process can create a file in `dir` (root can, whatever its mode says).
fn can_write_in(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let made = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    made
}

/// `agora ARGS` as the user `nobody`, where this process is root and `setpriv` is installed.
fn as_nobody(args: &[&str]) -> Option<Output> {
    let id = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&id.stdout).trim() != "0" {
        return None;
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_agora")])
        .args(args)
        .current_dir("/");
    let probe = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_agora"), "--version"])
        .current_dir("/")
        .output()
        .ok()?;
    probe.status.success().then(|| c.output().expect("setpriv runs"))
}

#[test]
fn issue_40_a_store_in_a_read_only_directory_opens_for_reading() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ro = dir.path().join("ro");
    let store = ro.join("s.sqlite");
    let o = agora(&["run", &study("tipping.ron"), "--runs", "1", "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let want = record_hashes(&store);
    // The last connection to close folds the log into the file and removes it and its index,
    // as a store is left when nothing has it open.
    drop(Connection::open(&store).expect("open"));
    assert!(!ro.join("s.sqlite-wal").exists() && !ro.join("s.sqlite-shm").exists(), "a closed store");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod 555");
    let enforced = !can_write_in(&ro);
    if !enforced {
        eprintln!("running as root: the directory's mode does not stop this process writing");
    }
    let check = |o: &Output, what: &str| {
        let t = text(o);
        assert!(o.status.success(), "{what}: {t}");
        assert!(!t.contains("integrity check failed"), "{what}: {t}");
    };
    check(&agora(&["summary", "--store", s(&store)]), "summary");
    check(&agora(&["verify", "--store", s(&store)]), "verify");
    let reader = Store::open_read(&store).expect("opens to read");
    assert_eq!(reader.run_count().expect("runs"), want.len() as u64);
    drop(reader);
    // Where this process is root, the same as a user the mode does stop.
    match as_nobody(&["verify", "--store", s(&store)]) {
        Some(o) => {
            check(&o, "verify as nobody");
            check(&as_nobody(&["summary", "--store", s(&store)]).expect("as nobody"), "summary as nobody");
        }
        None if !enforced => eprintln!("not checked as another user: no setpriv, or nobody cannot run the binary"),
        None => {}
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert_eq!(record_hashes(&store), want, "reading changed nothing");
}

/// A store of schema 7, as a schema-7 build left it (each run under schema 7's hash of its
/// values), is brought to this schema by a reading command: every run's hash checks against
/// schema 7's definition, so each becomes this schema's, quietly, and the store verifies.
#[test]
fn issue_40_a_read_command_brings_a_store_of_an_earlier_schema_to_this_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let o = agora(&["run", &study("tipping.ron"), "--runs", "1", "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let version = || -> i64 { count(&store, "PRAGMA user_version") };
    assert_eq!(version(), i64::from(agora_engine::store::SCHEMA_VERSION));
    let fresh = record_hashes(&store);
    let old = Store::open_read(&store).expect("opens").schema_7_hashes().expect("schema 7's hashes");
    let c = Connection::open(&store).expect("open");
    for (key, hash) in &old {
        c.execute("UPDATE runs SET record_hash = ?1 WHERE run_key = ?2", [hash, key]).expect("schema 7's hash");
    }
    c.pragma_update(None, "user_version", 7).expect("schema 7");
    drop(c);
    assert_ne!(record_hashes(&store), fresh);
    let o = agora(&["verify", "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("warning"), "no run kept a stale hash: {}", text(&o));
    assert_eq!(version(), i64::from(agora_engine::store::SCHEMA_VERSION), "upgraded once, as a writing command would");
    assert_eq!(record_hashes(&store), fresh, "each run's hash is this schema's");
}

/// Waits until `store` holds a claim; returns its pid.
fn claimed_by(store: &Path) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no claim on {}", store.display());
        let pid = Connection::open_with_flags(store, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT pid FROM store_claim", [], |r| r.get::<_, i64>(0)));
        if let Ok(pid) = pid {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn issue_40_a_second_agora_run_on_a_store_being_written_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let want = classical_runs();
    let args = ["run", &study("classical.ron"), "--threads", "1", "--store", s(&store)].map(String::from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = spawn(&args);
    assert_eq!(claimed_by(&store), i64::from(first.id()));
    // Hold the store's write lock, so that the first run cannot finish before the second asks.
    let lock = Connection::open(&store).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE").expect("lock");
    // The lock is held until the second has ended (it needs no write to be refused), however
    // long it takes to start.
    let mut second = spawn(&args);
    let deadline = Instant::now() + Duration::from_secs(120);
    while second.try_wait().expect("second").is_none() {
        if Instant::now() > deadline {
            let _ = second.kill();
            panic!(
                "the second run did not end while the store was locked: {}",
                text(&second.wait_with_output().expect("output"))
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    lock.execute_batch("COMMIT").expect("unlock");
    let second = second.wait_with_output().expect("second ends");
    let t = text(&second);
    assert_eq!(second.status.code(), Some(2), "{t}");
    assert!(t.contains("s.sqlite is being written by `agora run`"), "{t}");
    assert!(t.contains(&format!("(pid {} on ", first.id())), "{t}");
    let first = first.wait_with_output().expect("first ends");
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(integrity(&store), "ok");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), want);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM store_claim"), 0, "the claim is released at the end");
    // The other way: once the first has ended, the store is free.
    let third = agora(&args);
    assert!(text(&third).contains(&format!("0 runs executed, {want} already in")), "{}", text(&third));
    // A run killed where it stood frees its claim with its process (its row stays behind, for
    // the next holder to overwrite): the run that resumes it is not refused.
    let killed = dir.path().join("killed.sqlite");
    let mut run = spawn(&["run", &study("classical.ron"), "--threads", "1", "--store", s(&killed)]);
    assert_eq!(claimed_by(&killed), i64::from(run.id()));
    run.kill().expect("kill");
    run.wait().expect("wait");
    assert_eq!(count(&killed, "SELECT COUNT(*) FROM store_claim"), 1, "the killed run's row is left");
    let resumed = agora(&["run", &study("classical.ron"), "--store", s(&killed)]);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(count(&killed, "SELECT COUNT(*) FROM runs"), want);
}

fn put_claim_row(store: &Path, pid: u32) {
    Connection::open(store)
        .expect("open")
        .execute(
            "INSERT OR REPLACE INTO store_claim (only, command, pid, host, token, since)
             VALUES (1, 'agora run', ?1, 'elsewhere', 'planted', 0)",
            [pid],
        )
        .expect("a planted row");
}

#[test]
fn issue_40_a_claim_is_refused_while_its_lock_is_held_and_free_once_let_go_of() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path: PathBuf = dir.path().join("s.sqlite");
    let store = Store::open(&path).expect("a store");
    // A process claims again what it holds (an in-process server started twice, a test).
    let first = store.claim("agora run").expect("claimed");
    let again = store.claim("agora serve").expect("claimed again by the same process");
    drop(first);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM store_claim"), 1, "held while a claim of the process is");
    drop(again);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM store_claim"), 0, "released with the last claim");
    // Another holder of the lock (here a connection of this process, as another command's
    // would be): refused, with the holder its row names.
    put_claim_row(&path, 4242);
    let lock = Connection::open(dir.path().join("s.sqlite-claim")).expect("the lock file");
    lock.execute_batch("BEGIN EXCLUSIVE").expect("the lock");
    match store.claim("agora run") {
        Err(StoreError::Claimed { holder, .. }) => {
            assert!(holder.contains("`agora run` (pid 4242 on elsewhere, started"), "{holder}")
        }
        other => panic!("a held claim is refused, not {other:?}"),
    }
    // The other way: the lock let go of (its process ended), the row left behind is no claim.
    drop(lock);
    let taken = store.claim("agora run").expect("a claim whose lock is free is taken");
    let pid: u32 = Connection::open(&path)
        .expect("open")
        .query_row("SELECT pid FROM store_claim", [], |r| r.get(0))
        .expect("the row");
    assert_eq!(pid, std::process::id(), "the row names the new holder");
    drop(taken);
}

#[test]
fn issue_40_the_store_is_opened_through_sqlite_alone() {
    // No code of the workspace opens a store file with std::fs while a connection may hold it:
    // the checks are SQLite's. (`File::open` and friends remain for study, cell and output files.)
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let opener = std::fs::read_to_string(root.join("records/src/store/open.rs")).expect("the opener");
    let store = std::fs::read_to_string(root.join("records/src/store/mod.rs")).expect("the store");
    for (name, src) in [("open.rs", &opener), ("mod.rs", &store)] {
        let code: String = src.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        for banned in ["File::open", "fs::read(", "OpenOptions", "fs::read_to_string"] {
            assert!(!code.contains(banned), "{name} opens a file with {banned}");
        }
    }
}
