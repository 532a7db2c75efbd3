//! Bad input and security: a participant acts only for their own seat, only on the decision
//! open for it, only with a legal action; anything else is refused with a message and nothing
//! is recorded; a form submitted twice is recorded once; codes are unguessable and expire; the
//! admin API and page refuse without the token; a participant cannot read another's page;
//! bodies and request rates are bounded.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

async fn open_decision(base: &str, code: &str) -> Value {
    loop {
        let s = state(base, code).await;
        if let Some(d) = s["decision"].as_object() {
            return Value::Object(d.clone());
        }
        // Polled no faster than the rate limit allows however long the wait (200 requests a
        // participant in 10 s).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn participants_act_only_for_their_own_seat_with_a_legal_action_once() {
    let (_dir, s) = serve_people("people-guard", 2, 60, 60, None);
    let store = s.store.clone();
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        // The admin API and page refuse without the token, or with a wrong one.
        let r = c
            .post(format!("{base}/admin/api/sessions"))
            .json(&serde_json::json!({"count": 2}))
            .send()
            .await
            .expect("s");
        assert_eq!(r.status(), 401);
        let r =
            c.get(format!("{base}/admin/api/status")).bearer_auth("wrong-token-0123456789").send().await.expect("s");
        assert_eq!(r.status(), 401);
        assert_eq!(c.get(format!("{base}/admin")).send().await.expect("s").status(), 401);
        assert_eq!(c.get(format!("{base}/admin/api/export")).send().await.expect("s").status(), 401);
        // The token is checked before the body is read: without it, a malformed body is refused
        // as unauthorised, not parsed.
        let r = c.post(format!("{base}/admin/api/pause")).body("not json").send().await.expect("s");
        assert_eq!(r.status(), 401);
        let r = c.get(format!("{base}/admin?token={TOKEN}")).send().await.expect("s");
        assert_eq!(r.status(), 200);
        // Unknown or malformed codes.
        let r = c.get(format!("{base}/p/0123456789abcdef0123456789abcdef")).send().await.expect("s");
        assert_eq!(r.status(), 404);
        assert_eq!(c.get(format!("{base}/p/not-a-code")).send().await.expect("s").status(), 404);
        let codes = codes(&base, 2).await;
        assert!(codes.iter().all(|c| c.len() == 32) && codes[0] != codes[1]);
        enter(&base, &codes[0]).await;
        enter(&base, &codes[1]).await;
        let (a, b) = (&codes[0], &codes[1]);
        let da = open_decision(&base, a).await;
        let db = open_decision(&base, b).await;
        let (na, nb) = (da["nonce"].as_str().expect("n").to_string(), db["nonce"].as_str().expect("n").to_string());
        assert_ne!(na, nb);
        // B cannot act with A's decision (another seat's nonce), nor read A's page by state.
        let r = c
            .post(format!("{base}/p/{b}/act"))
            .form(&[("nonce", na.as_str()), ("choice", "0")])
            .send()
            .await
            .expect("s");
        assert_eq!(r.status(), 409);
        let sb = state(&base, b).await;
        assert_eq!(sb["decision"]["nonce"], nb.as_str(), "B sees only B's decision");
        // An illegal action, a missing one and a malformed one are refused, nothing recorded.
        for bad in [vec![("choice", "7")], vec![], vec![("choice", "x")], vec![("amount", "3")]] {
            let mut f = bad.clone();
            f.push(("nonce", na.as_str()));
            let r = c.post(format!("{base}/p/{a}/act")).form(&f).send().await.expect("s");
            assert_eq!(r.status(), 422, "{bad:?}");
            let body = r.text().await.expect("t");
            assert!(body.contains("class=\"error\""), "{body}");
        }
        assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_answers"), 0);
        // A legal answer is recorded once, whatever the number of submissions.
        let f = [("nonce", na.as_str()), ("choice", "1")];
        let r = c.post(format!("{base}/p/{a}/act")).form(&f).send().await.expect("s");
        assert_eq!(r.status(), 303);
        for _ in 0..3 {
            let r = c.post(format!("{base}/p/{a}/act")).form(&f).send().await.expect("s");
            assert_eq!(r.status(), 200);
            assert!(r.text().await.expect("t").contains("already recorded"));
        }
        assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_answers"), 1);
        // A stale nonce (not the open one) is refused.
        let r = c
            .post(format!("{base}/p/{b}/act"))
            .form(&[("nonce", "0".repeat(32).as_str()), ("choice", "0")])
            .send()
            .await
            .expect("s");
        assert_eq!(r.status(), 409);
        // Bodies are bounded.
        let big = "x".repeat(64 * 1024);
        let r = c
            .post(format!("{base}/p/{b}/act"))
            .form(&[("nonce", nb.as_str()), ("choice", big.as_str())])
            .send()
            .await
            .expect("s");
        assert_eq!(r.status(), 413);
        // Finish the game; the records hold one decision per submitted answer.
        let _ = c
            .post(format!("{base}/p/{b}/act"))
            .form(&[("nonce", nb.as_str()), ("choice", "0")])
            .send()
            .await
            .expect("s");
        let (x, y) = tokio::join!(
            play(&base, a, |_, _| vec![("choice".into(), "0".into())]),
            play(&base, b, |_, _| vec![("choice".into(), "0".into())])
        );
        assert_eq!((x.len(), y.len()), (1, 1));
        // The rate limit: a burst beyond it is answered 429.
        let mut limited = false;
        for _ in 0..(agora_serve::routes::RATE_LIMIT + 20) {
            if c.get(format!("{base}/p/{a}/state")).send().await.expect("s").status() == 429 {
                limited = true;
                break;
            }
        }
        assert!(limited, "a burst of requests is limited");
    });
    assert_eq!(count(&store, "SELECT COUNT(*) FROM decisions"), 4);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model = 'human'"), 4);
    // The store holds no session code, only hashes.
    let hashes: Vec<String> =
        rows(&store, "SELECT code_hash FROM serve_participants", rusqlite::params![], |r| r.get(0));
    assert!(hashes.iter().all(|h| h.len() == 64));
}

#[test]
fn expired_codes_declined_consent_and_failed_questions_end_without_play() {
    let (_dir, s) = serve_people("people-exits", 2, 60, 60, None);
    let store = s.store.clone();
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        let codes = codes(&base, 3).await;
        // Declines consent: nothing recorded, and no completion code (issue 40): someone who
        // did not agree took no part and is not paid as a participant.
        let r = c.post(format!("{base}/p/{}/consent", codes[0])).form(&[("agree", "no")]).send().await.expect("s");
        assert_eq!(r.status(), 303);
        let page = c.get(format!("{base}/p/{}", codes[0])).send().await.expect("s").text().await.expect("t");
        assert!(page.contains("did not agree"), "{page}");
        assert!(!page.contains("completion code") && !page.contains("id=\"completion\""), "{page}");
        assert_eq!(state(&base, &codes[0]).await["completion"], Value::Null);
        // Wrong answers: one retry, then released.
        let _ = c.post(format!("{base}/p/{}/consent", codes[1])).form(&[("agree", "yes")]).send().await.expect("s");
        let r = c.post(format!("{base}/p/{}/comprehension", codes[1])).form(&[("q0", "0")]).send().await.expect("s");
        assert_eq!(r.status(), 422);
        assert!(r.text().await.expect("t").contains("1 answer is not right"));
        let _ = c.post(format!("{base}/p/{}/comprehension", codes[1])).form(&[("q0", "0")]).send().await.expect("s");
        let page = c.get(format!("{base}/p/{}", codes[1])).send().await.expect("s").text().await.expect("t");
        assert!(page.contains("do not take part") && page.contains("completion code"), "{page}");
        // An expired code.
        rusqlite::Connection::open(&store)
            .expect("store")
            .execute("UPDATE serve_participants SET expires_at = 0", [])
            .expect("expire");
        s.app.desk.lock().participants.values_mut().for_each(|p| p.expires = 0);
        let r = c.get(format!("{base}/p/{}", codes[2])).send().await.expect("s");
        assert_eq!(r.status(), 410);
    });
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), 0);
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM serve_participants WHERE stage = 'released' AND consent_at IS NULL AND completion_code IS NULL"
        ),
        1
    );
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_participants WHERE stage = 'released' AND consent_at IS NOT NULL AND comprehension_tries = 2"), 1);
}

#[test]
fn empty_seats_and_silent_participants_are_played_by_the_stand_in_and_recorded_as_such() {
    let (_dir, s) = serve_people("people-standin", 4, 1, 1, None);
    let store = s.store.clone();
    let base = s.base.clone();
    s.rt.block_on(async {
        let code = codes(&base, 1).await.remove(0);
        enter(&base, &code).await;
        // Nobody else joins within the second: the other seat is the stand-in's. This
        // participant never answers: the first two decisions time out, then the stand-in plays on.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while state(&base, &code).await["stage"] != "done" {
            assert!(std::time::Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let c = rusqlite::Connection::open(&store).expect("store");
    let rows: Vec<(i64, i64, String, String, String)> = rows(
        &store,
        "SELECT seat, slot, model, parse_status, detail FROM transcripts ORDER BY seat, slot",
        rusqlite::params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    );
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert!(rows.iter().all(|r| r.2 == "stand-in:tit-for-tat" && r.3 == "fallback"), "{rows:?}");
    let seated: i64 =
        c.query_row("SELECT seat FROM serve_participants WHERE run_key IS NOT NULL", [], |r| r.get(0)).expect("seat");
    for r in &rows {
        if r.0 == seated {
            let why = if r.1 < 2 { "gave no answer within 1 s" } else { "missed 2 decisions in a row" };
            assert!(r.4.contains(why), "{r:?}");
        } else {
            assert!(r.4.contains("seat not taken"), "{r:?}");
        }
    }
    // Tit-for-tat against tit-for-tat: cooperation throughout.
    assert_eq!(count(&store, "SELECT COUNT(*) FROM decisions WHERE action = 'c0'"), 8);
}

#[test]
fn a_pause_holds_new_participants_and_a_full_session_releases_the_extra_ones() {
    let (_dir, s) = serve_people("people-pause", 1, 60, 60, None);
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        let codes = codes(&base, 3).await;
        let pause = |paused: bool| {
            c.post(format!("{base}/admin/api/pause"))
                .bearer_auth(TOKEN)
                .json(&serde_json::json!({ "paused": paused }))
                .send()
        };
        assert_eq!(pause(true).await.expect("pause").status(), 200);
        enter(&base, &codes[0]).await;
        assert_eq!(state(&base, &codes[0]).await["stage"], "waiting");
        let page = c.get(format!("{base}/p/{}", codes[0])).send().await.expect("s").text().await.expect("t");
        assert!(page.contains("paused"), "{page}");
        let status: Value = pause(false).await.expect("resume").json().await.expect("json");
        assert_eq!(status["paused"], false);
        let _ = c.get(format!("{base}/p/{}", codes[0])).send().await.expect("s");
        assert_eq!(state(&base, &codes[0]).await["stage"], "playing");
        enter(&base, &codes[1]).await;
        enter(&base, &codes[2]).await;
        let extra = state(&base, &codes[2]).await;
        assert_eq!(extra["stage"], "released", "{extra}");
        assert!(extra["completion"].as_str().is_some_and(|c| c.len() == 8), "{extra}");
        let status: Value = c
            .get(format!("{base}/admin/api/status"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("s")
            .json()
            .await
            .expect("j");
        assert_eq!(status["societies"][0]["seated"], 2, "{status}");
    });
}

/// An oversized body gets its 413 as an answer the client reads, every time: the server reads
/// the body before it answers, so a client still sending never sees a reset connection
/// (before, one try in eight under load got `IncompleteMessage`).
#[test]
fn an_oversized_body_is_answered_413_not_reset() {
    let (_dir, s) = serve_people("people-body", 2, 60, 60, None);
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        let codes = codes(&base, 1).await;
        // Up to the drain bound (1 MiB with the form's other field and encoding).
        for size in [20 * 1024, 64 * 1024, 512 * 1024, 1000 * 1024] {
            for _ in 0..10 {
                let big = "x".repeat(size);
                let r = c
                    .post(format!("{base}/p/{}/act", codes[0]))
                    .form(&[("nonce", "0".repeat(32).as_str()), ("choice", big.as_str())])
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("a {size}-byte body: {e}"));
                assert_eq!(r.status(), 413, "a {size}-byte body");
                let text = r.text().await.expect("the refusal's text");
                assert!(text.contains("at most 16384"), "{text}");
            }
        }
        // A body within the bound is read as usual (refused for its stale nonce, not its size).
        let r = c
            .post(format!("{base}/p/{}/act", codes[0]))
            .form(&[("nonce", "0".repeat(32).as_str()), ("choice", "0")])
            .send()
            .await
            .expect("s");
        assert_ne!(r.status(), 413);
    });
}

/// A pool participant's `/join`: the code the redirect names, or the refusal's status.
async fn join(c: &reqwest::Client, base: &str, pool_id: &str) -> Result<String, u16> {
    let r = c.get(format!("{base}/join?pool_id={pool_id}")).send().await.expect("join");
    if r.status() != 303 {
        return Err(r.status().as_u16());
    }
    let to = r.headers()["location"].to_str().expect("location").to_string();
    Ok(to.strip_prefix("/p/").expect("a participant link").to_string())
}

/// Issue 40: only a seat taken closes a place. Three who declined and one who failed the
/// questions hold none, so the next two real participants of a two-seat session are seated;
/// after them the session is full.
#[test]
fn decliners_and_failed_participants_hold_no_place() {
    let (_dir, s) = serve_people("people-capacity", 2, 60, 60, None);
    let store = s.store.clone();
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        for i in 0..3 {
            let code = join(&c, &base, &format!("decliner-{i}")).await.unwrap_or_else(|s| panic!("decliner {i}: {s}"));
            let r = c.post(format!("{base}/p/{code}/consent")).form(&[("agree", "no")]).send().await.expect("s");
            assert_eq!(r.status(), 303);
        }
        let code = join(&c, &base, "fails-questions").await.expect("a place for the fourth");
        let _ = c.post(format!("{base}/p/{code}/consent")).form(&[("agree", "yes")]).send().await.expect("s");
        for _ in 0..2 {
            let _ = c.post(format!("{base}/p/{code}/comprehension")).form(&[("q0", "0")]).send().await.expect("s");
        }
        assert_eq!(state(&base, &code).await["stage"], "released");
        let mut seated = Vec::new();
        for i in 0..2 {
            let code = join(&c, &base, &format!("player-{i}")).await.unwrap_or_else(|s| panic!("player {i}: {s}"));
            enter(&base, &code).await;
            assert_eq!(state(&base, &code).await["stage"], "playing", "player {i} is seated");
            seated.push(code);
        }
        assert_eq!(join(&c, &base, "one-too-many").await, Err(410), "both seats are taken");
        // A returning participant still gets their own record back.
        let again = join(&c, &base, "player-0").await.expect("a returning participant");
        assert_eq!(state(&base, &again).await["stage"], "playing");
    });
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_participants WHERE seat IS NOT NULL"), 2);
}

/// Issue 40: `/join` is limited per client address, read from the connection, so a burst with
/// a fresh `X-Forwarded-For` on every request is limited all the same, and another address
/// (here 127.0.0.2) is not locked out by it.
#[test]
fn joins_are_limited_per_peer_whatever_the_forwarded_header_says() {
    let (_dir, s) = serve_people("people-join-limit", 2, 60, 60, None);
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        // Without a pool id each join is refused (400) after the rate limit is counted.
        let mut statuses = Vec::new();
        for i in 0..agora_serve::routes::RATE_LIMIT + 20 {
            let r = c
                .get(format!("{base}/join"))
                .header("X-Forwarded-For", format!("10.0.{}.{}", i / 250, i % 250))
                .send()
                .await
                .expect("join");
            statuses.push(r.status().as_u16());
        }
        let limited = statuses.iter().filter(|s| **s == 429).count();
        assert_eq!(limited, 20, "one peer's burst is limited however it names itself: {statuses:?}");
        assert!(statuses[..agora_serve::routes::RATE_LIMIT as usize].iter().all(|s| *s == 400));
        let other = reqwest::Client::builder()
            .local_address("127.0.0.2".parse::<std::net::IpAddr>().expect("ip"))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        assert!(join(&other, &base, "someone-else").await.is_ok(), "another address is not locked out");
    });
}

/// With a trusted proxy's header configured, each client address it forwards has its own
/// limit, and an address a client writes before the proxy's own entry changes nothing.
#[test]
fn behind_a_trusted_proxy_joins_are_limited_per_forwarded_address() {
    let (_dir, s) = serve_people("people-join-proxy", 2, 60, 60, Some("X-Forwarded-For"));
    let base = s.base.clone();
    s.rt.block_on(async {
        let c = client();
        let send = |xff: String| c.get(format!("{base}/join")).header("X-Forwarded-For", xff).send();
        for _ in 0..agora_serve::routes::RATE_LIMIT {
            assert_eq!(send("10.1.1.1".into()).await.expect("join").status(), 400);
        }
        assert_eq!(send("10.1.1.1".into()).await.expect("join").status(), 429);
        assert_eq!(send("192.0.2.7, 10.1.1.1".into()).await.expect("join").status(), 429, "a spoofed first entry");
        assert_eq!(send("10.1.1.2".into()).await.expect("join").status(), 400, "another client is not locked out");
    });
}
