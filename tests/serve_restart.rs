//! `agora serve` killed mid-session and started again on the same store loses nothing: the
//! unfinished society replays to where it was with the answers already given (not asked
//! again), and its participants go on from their next decision with the same links.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const TOKEN: &str = "restart-admin-token-0123456789";

/// Starts `agora serve` on a free loopback port; returns the process and its base URL.
fn serve(study: &Path, store: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args([
            "serve",
            study.to_str().expect("utf8"),
            "--bind",
            "127.0.0.1:0",
            "--store",
            store.to_str().expect("utf8"),
        ])
        .env("AGORA_ADMIN_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("agora serve starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let status = child.wait();
            panic!("agora serve ended before listening: {status:?}");
        }
        if let Some(at) = line.find("on http://") {
            let base = line[at + 3..].trim().to_string();
            std::thread::spawn(move || for _ in out.lines() {});
            return (child, base);
        }
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

async fn state(base: &str, code: &str) -> Value {
    client().get(format!("{base}/p/{code}/state")).send().await.expect("state").json().await.expect("json")
}

/// Waits for the participant's decision at `slot` and answers it with `choice`.
async fn answer(base: &str, code: &str, slot: u64, choice: u32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no decision {slot} for {code}");
        let s = state(base, code).await;
        if s["decision"]["slot"].as_u64() == Some(slot) {
            let nonce = s["decision"]["nonce"].as_str().expect("nonce").to_string();
            let r = client()
                .post(format!("{base}/p/{code}/act"))
                .form(&[("nonce", nonce.as_str()), ("choice", &choice.to_string())])
                .send()
                .await
                .expect("act");
            assert_eq!(r.status(), 303);
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn enter(base: &str, code: &str) {
    let c = client();
    assert_eq!(
        c.post(format!("{base}/p/{code}/consent")).form(&[("agree", "yes")]).send().await.expect("c").status(),
        303
    );
    assert_eq!(
        c.post(format!("{base}/p/{code}/comprehension")).form(&[("q0", "1")]).send().await.expect("q").status(),
        303
    );
}

#[test]
fn a_restarted_server_resumes_the_session_where_it_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = dir.path().join("restart.ron");
    std::fs::write(
        &study,
        r#"Study(version: 1, name: "restart", master_seed: 3, runs: 1,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 3),
        rosters: [Roster(name: "people", members: [Member(policy: Human(AlwaysDefect))])])],
    participants: Participants(consent: "Consent text.", instructions: "Instructions.",
        comprehension: [Question(text: "Who decides?", options: ["No one", "You"], answer: 1)],
        wait_seconds: 300, decision_seconds: 300),
)"#,
    )
    .expect("study");
    let store = dir.path().join("s.sqlite");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    let (mut first, base) = serve(&study, &store);
    let codes: Vec<String> = rt.block_on(async {
        let r = client()
            .post(format!("{base}/admin/api/sessions"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"count": 2}))
            .send()
            .await
            .expect("codes");
        let v: Value = r.json().await.expect("json");
        let codes: Vec<String> =
            v["codes"].as_array().expect("codes").iter().map(|c| c.as_str().expect("c").into()).collect();
        enter(&base, &codes[0]).await;
        enter(&base, &codes[1]).await;
        // Round 1 for both (cooperate), round 2 for the first only.
        answer(&base, &codes[0], 0, 0).await;
        answer(&base, &codes[1], 0, 0).await;
        answer(&base, &codes[0], 1, 0).await;
        codes
    });
    first.kill().expect("kill");
    first.wait().expect("wait");
    assert_eq!(
        rusqlite::Connection::open(&store)
            .expect("store")
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .expect("runs"),
        0
    );
    let (mut second, base) = serve(&study, &store);
    rt.block_on(async {
        // The same links: the second participant is asked round 2, not round 1 again.
        let s = state(&base, &codes[1]).await;
        assert_eq!(s["stage"], "playing", "{s}");
        answer(&base, &codes[1], 1, 1).await;
        answer(&base, &codes[0], 2, 1).await;
        answer(&base, &codes[1], 2, 0).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        for code in &codes {
            while state(&base, code).await["stage"] != "done" {
                assert!(Instant::now() < deadline, "the session did not end");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    second.kill().expect("kill");
    second.wait().expect("wait");
    let c = rusqlite::Connection::open(&store).expect("store");
    let ids: Vec<(String, i64)> = c
        .prepare("SELECT participant_id, seat FROM serve_participants ORDER BY created_at, participant_id")
        .expect("q")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("ids");
    let actions = |seat: i64| -> Vec<String> {
        c.prepare("SELECT action FROM decisions WHERE seat = ?1 ORDER BY step")
            .expect("q")
            .query_map([seat], |r| r.get(0))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("actions")
    };
    // Seats follow the order the two entered; codes[0] entered first.
    let seat_of = |i: usize| -> i64 {
        let code_hash = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(codes[i].as_bytes()));
        c.query_row("SELECT seat FROM serve_participants WHERE code_hash = ?1", [code_hash], |r| r.get(0))
            .expect("seat")
    };
    assert_eq!(ids.len(), 2);
    assert_eq!(actions(seat_of(0)), ["c0", "c0", "c1"]);
    assert_eq!(actions(seat_of(1)), ["c0", "c1", "c0"]);
    let replayed: i64 = c
        .query_row("SELECT COUNT(*) FROM transcripts WHERE detail = 'answered before the server restarted'", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(replayed, 3, "round 1 for both and round 2 for the first were read back, not asked again");
    let human: i64 = c
        .query_row("SELECT COUNT(*) FROM transcripts WHERE model = 'human' AND parse_status = 'ok'", [], |r| r.get(0))
        .expect("c");
    assert_eq!(human, 6);
}
