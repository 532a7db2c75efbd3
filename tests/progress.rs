//! Progress in a log: where standard error is not a terminal (a Slurm or nohup log), long
//! commands print a line every `AGORA_PROGRESS_SECONDS` — an LLM study in model calls, with the
//! runs stored, the calls in flight and the reply-cache share; a classical study in runs; an
//! export in tables — and Ctrl-C says how to resume.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_test_support::{FakeReply, FakeServer, Gate};

mod common;
use common::{fake_server, s, study_text};

fn agora_logged(args: &[&str], seconds: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGORA_PROGRESS_SECONDS", seconds)
        .output()
        .expect("agora runs")
}

/// Starts `agora ARGS` with a line every `seconds`; its standard error comes line by line
/// through the receiver (a thread reads it until the process ends).
fn spawn_logged(args: &[&str], seconds: &str) -> (Child, Receiver<String>, std::thread::JoinHandle<()>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGORA_PROGRESS_SECONDS", seconds)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agora starts");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr_pipe = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx, reader)
}

/// Reads the log into `log` until it has `n` lines that start with `prefix` (a hang guard fails
/// the test after two minutes).
fn read_until(rx: &Receiver<String>, log: &mut String, prefix: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while log.lines().filter(|l| l.starts_with(prefix)).count() < n {
        let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_else(|e| {
            panic!("{n} lines of progress: {e}; the log so far:\n{log}");
        });
        log.push_str(&line);
        log.push('\n');
    }
}

/// Waits for the process and returns its status with the whole log.
fn finish(mut child: Child, rx: Receiver<String>, reader: std::thread::JoinHandle<()>, mut log: String) -> Output {
    let status = child.wait().expect("agora ends");
    reader.join().expect("reader");
    log.extend(rx.try_iter().map(|l| l + "\n"));
    Output { status, stdout: Vec::new(), stderr: log.into_bytes() }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The slow study (four runs of a five-round dilemma against one fake model, two calls at a
/// time) in a temporary directory, against a fake server that holds every request until `gate`
/// opens, then answers legally; and the store to run it into.
struct Held {
    rt: tokio::runtime::Runtime,
    server: FakeServer,
    gate: Gate,
    dir: tempfile::TempDir,
    study: PathBuf,
    store: PathBuf,
}

fn held_study() -> Held {
    let gate = Gate::new();
    let held = gate.clone();
    let (rt, server) = fake_server(Arc::new(move |_, _| FakeReply::Gated(held.clone(), Box::new(FakeReply::Legal))));
    let dir = tempfile::tempdir().expect("tempdir");
    let study = dir.path().join("slow.ron");
    let endpoint = server.endpoint();
    let model = format!(
        r#"Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                   concurrency: 2, timeout_s: 600.0, max_attempts: 2, max_retries: 1, backoff_ms: 2)"#
    );
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 5), model_rosters: true, rosters: [])"#;
    std::fs::write(&study, study_text("slow", 3, 4, &[model], &[block])).expect("write study");
    let store = dir.path().join("s.sqlite");
    Held { rt, server, gate, dir, study, store }
}

#[test]
fn an_llm_study_logs_its_model_calls_runs_in_flight_and_cache_share() {
    // The server answers nothing until the log has three lines of progress, so that the run
    // is still going while they are written, however fast the machine.
    let Held { rt: _rt, server: _server, gate, dir, study, store } = held_study();
    let (child, rx, reader) = spawn_logged(&["run", s(&study), "--store", s(&store)], "0.2");
    let mut log = String::new();
    read_until(&rx, &mut log, "run slow: ", 3);
    gate.open();
    let o = finish(child, rx, reader, log);
    let log = stderr(&o);
    assert!(o.status.success(), "{log}");
    // 4 runs × 5 rounds × 2 seats = 40 calls: three lines while the first are held, and one at
    // the end.
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
    // A server that answers nothing (the gate is never opened), so that the run is still
    // going when it is interrupted.
    let Held { rt: _rt, server: _server, gate: _gate, dir: _dir, study, store } = held_study();
    let (child, rx, reader) = spawn_logged(&["run", s(&study), "--store", s(&store)], "0.1");
    // The run is under way once it logs its progress (however slowly the machine starts it):
    // only then is the signal sent.
    let mut log = String::new();
    read_until(&rx, &mut log, "run slow: ", 1);
    // SAFETY: kill(2) on the child's pid, which is alive until waited for.
    #[expect(unsafe_code, reason = "sending SIGINT has no safe wrapper in the standard library")]
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0);
    let o = finish(child, rx, reader, log);
    let log = stderr(&o);
    assert!(!o.status.success(), "{log}");
    assert!(log.contains("interrupted: the runs completed so far are kept in"), "{log}");
    assert!(log.contains("run the same command again to resume: ") && log.contains("slow.ron --store"), "{log}");
}
