//! `agora serve` killed mid-session and started again on the same store loses nothing: the
//! unfinished society replays to where it was with the answers already given and the decisions
//! that timed out (neither asked again), and its participants go on from their next decision
//! with the same links, against exactly the history they saw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use agora_test_support::people::{client, codes, state};
use serde_json::Value;

mod common;

const TOKEN: &str = "restart-admin-token-0123456789";

/// Waits for the participant's decision at `slot` and answers it with `choice`. Polled every
/// 100 ms, well inside the rate limit of a participant's code however long the wait.
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
        tokio::time::sleep(Duration::from_millis(100)).await;
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
    let (mut first, base) = common::serve(&study, &store, TOKEN);
    let codes: Vec<String> = rt.block_on(async {
        let codes = codes(&base, TOKEN, 2).await;
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
    let (mut second, base) = common::serve(&study, &store, TOKEN);
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
                tokio::time::sleep(Duration::from_millis(100)).await;
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

/// A session's participants as the test drives them, and what they were shown and gave.
struct Session {
    dir: tempfile::TempDir,
    study: PathBuf,
    store: PathBuf,
    rt: tokio::runtime::Runtime,
    server: Option<(Child, String)>,
    /// Every page version each participant was shown, by (code, slot).
    shown: BTreeMap<(String, u64), String>,
    /// Every answer the server accepted: (code, slot) → (choice, page version).
    given: BTreeMap<(String, u64), (u32, String)>,
}

/// The study of the kill tests: a repeated dilemma between two people, the stand-in always
/// defecting (the participants here always cooperate, so that any decision the stand-in plays
/// where a person answered, or the other way round, changes the next page).
fn kill_study(dir: &Path, rounds: u32, wait_seconds: u64, decision_seconds: u64) -> PathBuf {
    let study = dir.join("kill.ron");
    std::fs::write(
        &study,
        format!(
            r#"Study(version: 1, name: "kill", master_seed: 5, runs: 1,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: {rounds}),
        rosters: [Roster(name: "people", members: [Member(policy: Human(AlwaysDefect))])])],
    participants: Participants(consent: "Consent text.", instructions: "Instructions.",
        comprehension: [Question(text: "Who decides?", options: ["No one", "You"], answer: 1)],
        wait_seconds: {wait_seconds}, decision_seconds: {decision_seconds}),
)"#
        ),
    )
    .expect("study");
    study
}

fn sha256(code: &str) -> String {
    format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(code.as_bytes()))
}

impl Session {
    fn new(rounds: u32, wait_seconds: u64, decision_seconds: u64) -> Session {
        let dir = tempfile::tempdir().expect("tempdir");
        let study = kill_study(dir.path(), rounds, wait_seconds, decision_seconds);
        let store = dir.path().join("s.sqlite");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        let mut s = Session { dir, study, store, rt, server: None, shown: BTreeMap::new(), given: BTreeMap::new() };
        s.restart();
        s
    }

    fn base(&self) -> String {
        self.server.as_ref().expect("a server runs").1.clone()
    }

    /// Kills the server (SIGKILL: no shutdown of any kind) if one runs, and starts a new one
    /// on the same store.
    fn restart(&mut self) {
        if let Some((mut child, _)) = self.server.take() {
            child.kill().expect("kill");
            child.wait().expect("wait");
        }
        self.server = Some(common::serve(&self.study, &self.store, TOKEN));
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(&self.store).expect("store")
    }

    fn codes(&self, n: usize) -> Vec<String> {
        let base = self.base();
        self.rt.block_on(codes(&base, TOKEN, n))
    }

    fn post(&self, code: &str, path: &str, form: &[(&str, &str)]) -> u16 {
        let base = self.base();
        self.rt.block_on(async {
            client().post(format!("{base}/p/{code}/{path}")).form(form).send().await.expect("post").status().as_u16()
        })
    }

    /// Where the participant is. Pollers here wait 100 ms between reads, well inside the
    /// rate limit of a participant's code.
    fn state(&self, code: &str) -> Value {
        let base = self.base();
        self.rt.block_on(async {
            let r = client().get(format!("{base}/p/{code}/state")).send().await.expect("state");
            assert_eq!(r.status(), 200, "state: {}", r.text().await.unwrap_or_default());
            r.json().await.expect("json")
        })
    }

    /// The participant's seat, once seated.
    fn seat(&self, code: &str) -> i64 {
        self.db()
            .query_row("SELECT seat FROM serve_participants WHERE code_hash = ?1", [sha256(code)], |r| r.get(0))
            .expect("seated")
    }

    /// What the store holds of a seat's decisions, by slot: `a` (answered) or `t` (timed out).
    fn decided(&self, seat: i64) -> BTreeMap<u64, &'static str> {
        let c = self.db();
        let mut out = BTreeMap::new();
        for (table, kind) in [("serve_answers", "a"), ("serve_timeouts", "t")] {
            let slots: Vec<i64> = c
                .prepare(&format!("SELECT slot FROM {table} WHERE seat = ?1"))
                .expect("q")
                .query_map([seat], |r| r.get(0))
                .expect("rows")
                .collect::<Result<_, _>>()
                .expect("slots");
            for slot in slots {
                assert!(out.insert(slot as u64, kind).is_none(), "seat {seat} slot {slot}: answered and timed out");
            }
        }
        out
    }

    /// Waits for the participant's decision at `slot` and notes its page: a decision already
    /// answered or timed out is never asked again, and a page asked again is the page shown.
    /// Returns the decision's nonce.
    fn see(&mut self, code: &str, slot: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        let seat = self.seat(code);
        loop {
            assert!(Instant::now() < deadline, "no decision {slot} for seat {seat}");
            // Read before the page: a decision stored before it was read and still open is
            // one asked again.
            let decided = self.decided(seat);
            let s = self.state(code);
            if let Some(at) = s["decision"]["slot"].as_u64() {
                let version = s["decision"]["page_version"].as_str().expect("version").to_string();
                assert_eq!(decided.get(&at), None, "seat {seat} is asked decision {at} again: {s}");
                let first = self.shown.entry((code.to_string(), at)).or_insert_with(|| version.clone());
                assert_eq!(*first, version, "seat {seat}, decision {at}: the page changed across a restart");
                if at == slot {
                    return s["decision"]["nonce"].as_str().expect("nonce").to_string();
                }
                assert!(at < slot, "seat {seat} is past decision {slot}: {s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Answers the participant's decision at `slot` with `choice`.
    fn answer(&mut self, code: &str, slot: u64, choice: u32) {
        let nonce = self.see(code, slot);
        let status = self.post(code, "act", &[("nonce", &nonce), ("choice", &choice.to_string())]);
        assert_eq!(
            status,
            303,
            "seat {}'s answer to {slot} was refused (it timed out first: a slow machine)",
            self.seat(code)
        );
        let version = self.shown[&(code.to_string(), slot)].clone();
        assert!(self.given.insert((code.to_string(), slot), (choice, version)).is_none());
    }

    /// Waits until the participant's decision at `slot` has timed out and been stored.
    fn time_out(&mut self, code: &str, slot: u64) {
        self.see(code, slot);
        let seat = self.seat(code);
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.decided(seat).get(&slot) != Some(&"t") {
            assert!(Instant::now() < deadline, "seat {seat}'s decision {slot} did not time out");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What every restart must find: each answer given stored exactly once, as given and
    /// against the page shown; each timeout stored against the page shown; nothing else.
    fn check_stored(&self, point: &str) {
        let c = self.db();
        let answers: Vec<(String, i64, i64, String, String)> = c
            .prepare(
                "SELECT p.code_hash, a.seat, a.slot, a.action, a.page_version FROM serve_answers a
                 JOIN serve_participants p USING (participant_id)",
            )
            .expect("q")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("answers");
        assert_eq!(answers.len(), self.given.len(), "{point}: one stored answer per answer given: {answers:?}");
        for ((code, slot), (choice, version)) in &self.given {
            let row = answers
                .iter()
                .find(|a| a.0 == sha256(code) && a.2 == *slot as i64)
                .unwrap_or_else(|| panic!("{point}: the answer to {slot} is lost"));
            assert_eq!((row.3.as_str(), row.4.as_str()), (format!("c{choice}").as_str(), version.as_str()), "{point}");
        }
        let timeouts: Vec<(String, i64, String)> = c
            .prepare("SELECT p.code_hash, t.slot, t.page_version FROM serve_timeouts t JOIN serve_participants p USING (participant_id)")
            .expect("q")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("timeouts");
        for (hash, slot, version) in &timeouts {
            let shown = self.shown.iter().find(|((code, s), _)| sha256(code) == *hash && *s == *slot as u64);
            assert_eq!(shown.map(|(_, v)| v), Some(version), "{point}: a timeout against a page not shown");
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some((mut child, _)) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = &self.dir;
    }
}

/// A decision's transcript beside what the session stored of it.
#[derive(Debug)]
struct Decided {
    seat: i64,
    slot: i64,
    model: String,
    action: Option<String>,
    detail: String,
    /// The page version the transcript records.
    page: Option<String>,
    /// The page version stored with the answer, where the participant answered.
    answered: Option<String>,
    /// The page version stored with the timeout, where the decision timed out.
    timed_out: Option<String>,
}

/// Issue 40: a kill at any point of a session loses no answer and changes no recorded page.
/// One session of eight rounds is killed after every step (consent, the questions, the start,
/// each answer, right after each timeout, between a timeout and the next answer, the last
/// answer) and started again on the same store each time. After every restart, each answer
/// given is stored once, no decision answered or timed out is asked again, and every page asked
/// again is the page shown. At the end, each transcript's page is the page stored as shown, and
/// the decisions are the answers given and the stand-in's plays where time ran out.
///
/// The participants answer within a second of a page appearing (a few on a loaded machine); a
/// decision times out after twenty, so that an answer is not beaten by its timeout, and the test
/// waits out its four timeouts.
#[test]
fn a_kill_at_any_point_loses_no_answer_and_changes_no_page() {
    let mut s = Session::new(8, 300, 20);
    let codes = s.codes(2);
    let (a, b) = (codes[0].clone(), codes[1].clone());
    // Each step, then a kill and a restart; A and B are the two participants' codes.
    type Step = fn(&mut Session, &str, &str);
    let steps: Vec<(&str, Step)> = vec![
        ("after A's consent", |s, a, _| assert_eq!(s.post(a, "consent", &[("agree", "yes")]), 303)),
        ("after A is seated", |s, a, _| assert_eq!(s.post(a, "comprehension", &[("q0", "1")]), 303)),
        ("after the society starts", |s, _, b| {
            assert_eq!(s.post(b, "consent", &[("agree", "yes")]), 303);
            assert_eq!(s.post(b, "comprehension", &[("q0", "1")]), 303);
            s.see(b, 0);
        }),
        ("after A's first answer", |s, a, _| s.answer(a, 0, 0)),
        ("after B's first answer", |s, _, b| s.answer(b, 0, 0)),
        ("right after B's round 2 timed out", |s, a, b| {
            s.answer(a, 1, 0);
            s.time_out(b, 1);
        }),
        ("between B's timeout and B's next answer", |s, _, b| {
            s.see(b, 2);
        }),
        // The reported case: B's round 2 timed out, B answered round 3, then the kill.
        ("after B answered round 3 past a timeout", |s, a, b| {
            s.answer(a, 2, 0);
            s.answer(b, 2, 0);
        }),
        ("right after A's round 4 timed out", |s, a, b| {
            s.answer(b, 3, 0);
            s.time_out(a, 3);
        }),
        ("after A's answer past a timeout", |s, a, _| s.answer(a, 4, 0)),
        ("after B's round 5 answer", |s, _, b| s.answer(b, 4, 0)),
        ("right after B's first of two timeouts in a row", |s, a, b| {
            s.answer(a, 5, 0);
            s.time_out(b, 5);
        }),
        ("right after B's second timeout in a row (B dropped)", |s, a, b| {
            s.answer(a, 6, 0);
            s.time_out(b, 6);
        }),
        ("after the last answer", |s, a, _| s.answer(a, 7, 0)),
    ];
    for (point, step) in &steps {
        step(&mut s, &a, &b);
        s.check_stored(point);
        s.restart();
        s.check_stored(point);
    }
    // The session ends without another answer: B was dropped after two misses in a row.
    let deadline = Instant::now() + Duration::from_secs(60);
    for code in [&a, &b] {
        while s.state(code)["stage"] != "done" {
            assert!(Instant::now() < deadline, "the session did not end");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(s.state(code)["completion"].as_str().is_some_and(|c| c.len() == 8));
    }
    let (seat_a, seat_b) = (s.seat(&a), s.seat(&b));
    s.check_stored("at the end");
    let c = s.db();
    assert_eq!(c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)).expect("runs"), 1);
    let transcripts: Vec<Decided> = c
        .prepare(
            "SELECT t.seat, t.slot, t.model, t.action, t.detail,
                    json_extract(nullif(t.messages_json, ''), '$.page_version'), a.page_version, o.page_version
             FROM transcripts t
             LEFT JOIN serve_answers a ON a.seat = t.seat AND a.slot = t.slot
             LEFT JOIN serve_timeouts o ON o.seat = t.seat AND o.slot = t.slot
             WHERE t.kind = 'decision' ORDER BY t.seat, t.slot",
        )
        .expect("q")
        .query_map([], |r| {
            Ok(Decided {
                seat: r.get(0)?,
                slot: r.get(1)?,
                model: r.get(2)?,
                action: r.get(3)?,
                detail: r.get(4)?,
                page: r.get(5)?,
                answered: r.get(6)?,
                timed_out: r.get(7)?,
            })
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("transcripts");
    assert_eq!(transcripts.len(), 16, "{transcripts:#?}");
    let code_of = |seat: i64| if seat == seat_a { &a } else { &b };
    let mut kinds = BTreeMap::<(i64, &str), Vec<i64>>::new();
    for t in &transcripts {
        let (seat, slot) = (t.seat, t.slot);
        let key = (code_of(seat).clone(), slot as u64);
        let kind = if let Some((choice, version)) = s.given.get(&key) {
            assert_eq!((t.model.as_str(), t.action.as_deref()), ("human", Some(format!("c{choice}").as_str())));
            assert_eq!(
                (t.page.as_ref(), t.answered.as_ref()),
                (Some(version), Some(version)),
                "seat {seat} slot {slot}"
            );
            "answered"
        } else if let Some(version) = &t.timed_out {
            assert!(t.model.starts_with("stand-in:") && t.detail.contains("gave no answer"), "{}", t.detail);
            assert_eq!((t.page.as_ref(), s.shown.get(&key)), (Some(version), Some(version)), "seat {seat} slot {slot}");
            assert_eq!(t.action.as_deref(), Some("c1"), "the stand-in defects");
            "timed out"
        } else {
            assert!(
                t.model.starts_with("stand-in:") && t.detail.contains("missed 2 decisions in a row"),
                "{}",
                t.detail
            );
            "dropped"
        };
        kinds.entry((seat, kind)).or_default().push(slot);
    }
    assert_eq!(kinds[&(seat_a, "answered")], [0, 1, 2, 4, 5, 6, 7]);
    assert_eq!(kinds[&(seat_a, "timed out")], [3]);
    assert_eq!(kinds[&(seat_b, "answered")], [0, 2, 3, 4]);
    assert_eq!(kinds[&(seat_b, "timed out")], [1, 5, 6]);
    assert_eq!(kinds[&(seat_b, "dropped")], [7]);
    // The decisions are the transcripts' actions, in order.
    for seat in [seat_a, seat_b] {
        let decided: Vec<String> = c
            .prepare("SELECT action FROM decisions WHERE seat = ?1 ORDER BY step")
            .expect("q")
            .query_map([seat], |r| r.get(0))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("decisions");
        let recorded: Vec<String> =
            transcripts.iter().filter(|t| t.seat == seat).map(|t| t.action.clone().expect("an action")).collect();
        assert_eq!(decided, recorded, "seat {seat}");
    }
}

/// Issue 40: a society whose waiting room closed with a seat empty started with the stand-in
/// in that seat; after a kill it plays on with the same seats (nobody new takes the stand-in's
/// seat and rewrites the history its participant saw). And a kill between a run being stored
/// and its participants being told still ends their session, with points and a code.
#[test]
fn a_restart_keeps_the_seats_a_society_started_with_and_ends_a_stored_run() {
    let mut s = Session::new(3, 1, 300);
    let codes = s.codes(2);
    let (a, late) = (codes[0].clone(), codes[1].clone());
    assert_eq!(s.post(&a, "consent", &[("agree", "yes")]), 303);
    assert_eq!(s.post(&a, "comprehension", &[("q0", "1")]), 303);
    // The waiting room closes after a second: the run starts, the stand-in in the other seat.
    s.answer(&a, 0, 0);
    s.restart();
    s.check_stored("after the first answer");
    assert_eq!(s.post(&late, "consent", &[("agree", "yes")]), 303);
    assert_eq!(s.post(&late, "comprehension", &[("q0", "1")]), 303);
    let late_state = s.state(&late);
    assert_eq!(late_state["stage"], "released", "the started society has no seat to give: {late_state}");
    s.answer(&a, 1, 0);
    s.answer(&a, 2, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.state(&a)["stage"] != "done" {
        assert!(Instant::now() < deadline, "the session did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    s.check_stored("at the end");
    let c = s.db();
    let other_seat = 1 - s.seat(&a);
    let details: Vec<String> = c
        .prepare("SELECT detail FROM transcripts WHERE seat = ?1 ORDER BY slot")
        .expect("q")
        .query_map([other_seat], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("details");
    assert_eq!(details.len(), 3);
    assert!(details.iter().all(|d| d.contains("seat not taken")), "{details:?}");
    let payoff: f64 = c
        .query_row("SELECT payoff FROM serve_participants WHERE code_hash = ?1", [sha256(&a)], |r| r.get(0))
        .expect("payoff");
    // A kill between the run being stored and its participants being told: the store is put
    // back to that moment, and the restart tells them.
    let (mut child, _) = s.server.take().expect("server");
    child.kill().expect("kill");
    child.wait().expect("wait");
    c.execute(
        "UPDATE serve_participants SET stage = 'playing', payoff = NULL, completion_code = NULL WHERE code_hash = ?1",
        [sha256(&a)],
    )
    .expect("back to the moment");
    s.server = Some(common::serve(&s.study, &s.store, TOKEN));
    let st = s.state(&a);
    assert_eq!(st["stage"], "done", "{st}");
    assert_eq!(st["payoff"].as_f64(), Some(payoff));
    assert!(st["completion"].as_str().is_some_and(|c| c.len() == 8), "{st}");
}
