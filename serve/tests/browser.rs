//! The pages in a real browser: headless Chromium (Debian's package, as the report test uses),
//! driven over the DevTools protocol, clicks through consent, the questions, the waiting room
//! and every decision. Two participants play a dilemma against each other; one plays the
//! ultimatum game against an LLM seat (the fake model server); one joins a naming game beside
//! classical agents. Each run's records are checked against what the pages showed: the buttons
//! clicked are the recorded decisions, the page versions shown are the recorded ones, the
//! points on the last page are the recorded payoffs.
//!
//! Where no Chromium is installed the test says so and passes, except under
//! AGORA_REQUIRE_BROWSER (set by CI, which installs it).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agora_test_support::browser::chromium;
use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// One headless browser with one tab, driven over the DevTools protocol.
struct Browser {
    child: Child,
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    async fn launch(chromium: &str) -> Browser {
        let profile = tempfile::tempdir().expect("profile");
        let mut child = Command::new(chromium)
            .args(agora_test_support::browser::HEADLESS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        let port = loop {
            line.clear();
            assert!(err.read_line(&mut line).expect("read") > 0, "chromium exited before listening");
            if let Some(at) = line.find("ws://127.0.0.1:") {
                let rest = &line[at + "ws://127.0.0.1:".len()..];
                break rest[..rest.find('/').expect("path")].to_string();
            }
        };
        std::thread::spawn(move || for _ in err.lines() {});
        let list: Value =
            reqwest::get(format!("http://127.0.0.1:{port}/json/list")).await.expect("list").json().await.expect("json");
        let page = list.as_array().expect("targets").iter().find(|t| t["type"] == "page").expect("a page").clone();
        let url = page["webSocketDebuggerUrl"].as_str().expect("ws url").to_string();
        let (ws, _) = tokio_tungstenite::connect_async(url).await.expect("devtools");
        Browser { child, ws, next: 0, _profile: profile }
    }

    async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        self.ws
            .send(Message::Text(json!({ "id": id, "method": method, "params": params }).to_string().into()))
            .await
            .map_err(|e| e.to_string())?;
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(120), self.ws.next())
                .await
                .map_err(|_| "no answer".to_string())?;
            let Some(Ok(Message::Text(t))) = msg else { continue };
            let v: Value = serde_json::from_str(&t).map_err(|e| e.to_string())?;
            if v["id"] == id {
                return match v.get("error") {
                    Some(e) => Err(e.to_string()),
                    None => Ok(v["result"].clone()),
                };
            }
        }
    }

    async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url })).await.expect("navigate");
    }

    /// Evaluates `expr` in the page; `None` while a navigation replaces the document.
    async fn eval(&mut self, expr: &str) -> Option<Value> {
        let r = self.call("Runtime.evaluate", json!({ "expression": expr, "returnByValue": true })).await.ok()?;
        if r.get("exceptionDetails").is_some() {
            return None;
        }
        Some(r["result"]["value"].clone())
    }

    /// Runs `action` (a click) and waits until the page it leads to has loaded.
    async fn click(&mut self, action: &str) {
        let _ = self.eval(&format!("window.__left = true; {action}")).await;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(30)).await;
            if self.eval("window.__left !== true && document.readyState === 'complete'").await
                == Some(Value::Bool(true))
            {
                return;
            }
        }
        panic!("the page did not move on after {action}");
    }
}

/// What one participant's browser showed and did.
#[derive(Debug, Default)]
struct Seen {
    /// Per decision page: (page version shown, option labels or "amount", what was entered).
    pages: Vec<(String, String, String)>,
    /// The points on the last page.
    payoff: Option<f64>,
    /// The completion code on the last page.
    completion: String,
}

/// Goes through the participant's pages in `browser` with `decide(form, decision) -> JS` until
/// the last page.
async fn participate(browser: &mut Browser, url: &str, decide: impl Fn(&str, usize) -> (String, String)) -> Seen {
    browser.goto(url).await;
    let mut seen = Seen::default();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "the session did not end in the browser");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let Some(page) = browser.eval("document.readyState === 'complete' && document.querySelector('main') ? document.querySelector('main').id : ''").await else { continue };
        match page.as_str().unwrap_or("") {
            "consent" => browser.click("document.getElementById('agree').click()").await,
            "instructions" => {
                browser
                    .click("document.getElementById('q0-1').click(); document.getElementById('continue').click()")
                    .await
            }
            "play" => {
                let version =
                    browser.eval("document.body.innerText.match(/Page ([0-9a-f]{16})/)[1]").await.expect("version");
                let form = browser
                    .eval("document.getElementById('amount') ? 'amount' : Array.from(document.querySelectorAll('button[name=choice]')).map(b => b.value + '=' + b.innerText).join('|')")
                    .await
                    .expect("form");
                let form = form.as_str().expect("text").to_string();
                let (js, entered) = decide(&form, seen.pages.len());
                seen.pages.push((version.as_str().expect("v").to_string(), form, entered));
                browser.click(&js).await;
            }
            "done" => {
                seen.payoff = browser.eval("document.getElementById('payoff') ? Number(document.getElementById('payoff').innerText) : null").await.and_then(|v| v.as_f64());
                seen.completion = browser
                    .eval("document.getElementById('completion').innerText")
                    .await
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                return seen;
            }
            // The waiting room reloads itself.
            _ => {}
        }
    }
}

/// Checks one seat's records against what its browser showed: the decisions are what was
/// entered, the page versions are those shown, the points those recorded.
fn check(store: &Path, seen: &Seen) {
    let c = rusqlite::Connection::open(store).expect("store");
    let id: String = c
        .query_row(
            "SELECT participant_id FROM serve_participants WHERE completion_code = ?1",
            [&seen.completion],
            |r| r.get(0),
        )
        .expect("the completion code shown names a participant");
    let decisions: Vec<(String, String, i64, String)> = rows(
        store,
        "SELECT t.action, t.messages_json, t.seat, r.run_key FROM transcripts t JOIN runs r ON r.run_id = t.run_id
         WHERE t.served_id = ?1 ORDER BY t.slot",
        [&id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    );
    assert_eq!(decisions.len(), seen.pages.len(), "one recorded decision per page answered");
    for ((action, request, _, _), (version, _, entered)) in decisions.iter().zip(&seen.pages) {
        assert_eq!(action, entered, "the decision recorded is the one entered");
        let shown: Value = serde_json::from_str(request).expect("page json");
        assert_eq!(shown["page_version"], version.as_str(), "the page recorded is the page shown");
    }
    let (seat, key) = (decisions[0].2, decisions[0].3.clone());
    let points: f64 = c
        .query_row(
            "SELECT SUM(p.payoff) FROM payoffs p JOIN runs r ON r.run_id = p.run_id WHERE r.run_key = ?1 AND p.seat = ?2",
            rusqlite::params![key, seat],
            |r| r.get(0),
        )
        .expect("payoff");
    assert_eq!(seen.payoff, Some(points), "the points shown are the points recorded");
}

fn button(form: &str, which: usize) -> (String, String) {
    let value = form.split('|').nth(which).expect("an option").split('=').next().expect("value").to_string();
    (format!("document.getElementById('choice-{value}').click()"), format!("c{value}"))
}

#[test]
fn people_play_in_a_real_browser_and_the_records_are_what_the_pages_showed() {
    let Some(chromium) = chromium() else { return };
    let rt_fake = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
    let (server, models) = fake_model_server(&rt_fake);
    let (_dir, s) = serve_study(
        "browser",
        &models,
        r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 3),
                rosters: [Roster(name: "two-people", members: [Member(policy: Human(TitForTat))])]),
            Block(name: "ultimatum", environment: Bargaining(game: Ultimatum, games: 2),
                rosters: [Roster(name: "person-and-model", members: [
                    Member(policy: Human(Sequence([0])), count: Some(1)), Member(policy: Llm(model: "fake"))])]),
            Block(name: "naming", environment: NamingGame(population: 4, cap: 16, window: 4),
                rosters: [Roster(name: "person-and-agents", members: [
                    Member(policy: Human(MemoryCoordination()), count: Some(1)), Member(policy: MemoryCoordination())])])"#,
        60,
        60,
        None,
    );
    let store = s.store.clone();
    let base = s.base.clone();
    let seen = s.rt.block_on(async {
        let codes = codes(&base, 4).await;
        let mut a = Browser::launch(chromium).await;
        let mut b = Browser::launch(chromium).await;
        // The dilemma: the first always takes the first option; the second the second in the last round.
        let (url_a, url_b) = (format!("{base}/p/{}", codes[0]), format!("{base}/p/{}", codes[1]));
        let (sa, sb) = tokio::join!(
            participate(&mut a, &url_a, |f, _| button(f, 0)),
            participate(&mut b, &url_b, |f, k| button(f, usize::from(k == 2)))
        );
        // The ultimatum game against the model: offer 4, accept what is offered.
        let sc = participate(&mut a, &format!("{base}/p/{}", codes[2]), |f, _| {
            if f == "amount" {
                (
                    "document.getElementById('amount').value = '4'; document.getElementById('submit').click()".into(),
                    "a4".into(),
                )
            } else {
                button(f, 0)
            }
        })
        .await;
        // The naming game beside classical agents: always the name shown first.
        let sd = participate(&mut b, &format!("{base}/p/{}", codes[3]), |f, _| button(f, 0)).await;
        vec![sa, sb, sc, sd]
    });
    assert_eq!(seen[0].pages.len(), 3);
    assert_eq!(seen[1].pages.len(), 3);
    assert!(!seen[2].pages.is_empty() && !seen[3].pages.is_empty());
    assert!(seen[2].pages.iter().any(|p| p.1 == "amount"), "the person proposed in the ultimatum game: {:?}", seen[2]);
    for s in &seen {
        check(&store, s);
    }
    // Who played: people, the model and the classical agents, in their societies.
    let who: Vec<(String, String)> = rows(&store, "SELECT DISTINCT r.block, t.model FROM transcripts t JOIN runs r ON r.run_id = t.run_id ORDER BY r.block, t.model", rusqlite::params![], |r| Ok((r.get(0)?, r.get(1)?)));
    assert_eq!(
        who,
        [
            ("naming".into(), "human".into()),
            ("pd".into(), "human".into()),
            ("ultimatum".into(), "fake".into()),
            ("ultimatum".into(), "human".into())
        ]
    );
    rt_fake.block_on(async { server.stop() });
}
