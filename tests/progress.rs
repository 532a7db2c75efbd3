//! Progress in a log: where standard error is not a terminal (a Slurm or nohup log), long
//! commands print a line every `AGORA_PROGRESS_SECONDS` — an LLM study in model calls, with the
//! runs stored, the calls in flight and the reply-cache share; a classical study in runs; an
//! export in tables — and Ctrl-C says how to resume.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use agora_test_support::{FakeReply, FakeServer};

fn agora_logged(args: &[&str], seconds: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGORA_PROGRESS_SECONDS", seconds)
        .output()
        .expect("agora runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn write_study(dir: &Path, endpoint: &str) -> std::path::PathBuf {
    let study = format!(
        r#"Study(
    version: 1, name: "slow", master_seed: 3, runs: 4,
    models: [Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 2, timeout_s: 5.0, max_attempts: 2, max_retries: 1, backoff_ms: 2)],
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 5), model_rosters: true, rosters: [])],
)"#
    );
    let path = dir.join("slow.ron");
    std::fs::write(&path, study).expect("write study");
    path
}

#[test]
fn an_llm_study_logs_its_model_calls_runs_in_flight_and_cache_share() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, _| {
            FakeReply::Delay(Duration::from_millis(60), Box::new(FakeReply::Legal))
        })))
        .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    let o = agora_logged(&["run", s(&study), "--store", s(&store)], "0.2");
    let log = stderr(&o);
    assert!(o.status.success(), "{log}");
    // 4 runs × 5 rounds × 2 seats = 40 calls, two at a time, 60 ms each: over a second, so
    // several lines.
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("run slow: ")).collect();
    assert!(lines.len() >= 3, "{log}");
    assert!(lines.iter().all(|l| l.contains("/40 model calls")), "{log}");
    assert!(lines.iter().any(|l| l.contains(" in flight") && l.contains("% from the reply cache")), "{log}");
    assert!(lines.last().is_some_and(|l| l.contains("40/40 model calls") && l.contains("runs 4/4")), "{log}");
    // Played again from the cache into a fresh store: every call from the reply cache.
    let again = dir.path().join("again.sqlite");
    let o = agora_logged(&["run", s(&study), "--store", s(&again), "--cache", s(&store), "--replay"], "0.2");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("40/40 model calls (100 %), runs 4/4, 0 in flight, 100 % from the reply cache"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_classical_study_and_an_export_log_their_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("c.sqlite");
    let o = agora_logged(&["run", "scenarios/studies/classical.ron", "--store", s(&store), "--runs", "2"], "0.1");
    let log = stderr(&o);
    assert!(o.status.success(), "{log}");
    let total = log.lines().find(|l| l.starts_with("run classical: ") && l.ends_with("(done)")).expect("a last line");
    assert!(total.contains(" runs (100 %)"), "{total}");
    let out = dir.path().join("export");
    let o = agora_logged(&["export", "--store", s(&store), "--format", "csv", "--out", s(&out)], "0.1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).lines().any(|l| l.starts_with("export: ") && l.contains(" tables (100 %)")), "{}", stderr(&o));
}

#[test]
fn an_interrupted_run_says_how_to_resume() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    // A server slow enough that the run is still going when it is interrupted.
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, _| {
            FakeReply::Delay(Duration::from_millis(400), Box::new(FakeReply::Legal))
        })))
        .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["run", s(&study), "--store", s(&store)])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGORA_PROGRESS_SECONDS", "0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agora starts");
    // The run is under way once it logs its progress (however slowly the machine starts it):
    // only then is the signal sent.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr_pipe = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !log.contains("run slow: ") {
        let line = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())).expect("progress");
        log.push_str(&line);
        log.push('\n');
    }
    // SAFETY: kill(2) on the child's pid, which is alive until waited for.
    #[expect(unsafe_code, reason = "sending SIGINT has no safe wrapper in the standard library")]
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0);
    let status = child.wait().expect("agora ends");
    reader.join().expect("reader");
    log.extend(rx.try_iter().map(|l| l + "\n"));
    let o = Output { status, stdout: Vec::new(), stderr: log.clone().into_bytes() };
    let log = stderr(&o);
    assert!(!o.status.success(), "{log}");
    assert!(log.contains("interrupted: the runs completed so far are kept in"), "{log}");
    assert!(log.contains("run the same command again to resume: ") && log.contains("slow.ron --store"), "{log}");
}
