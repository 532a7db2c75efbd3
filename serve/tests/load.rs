//! Load: 200 simulated participants over HTTP on loopback play 100 dilemmas of three rounds at
//! once. No decision is lost or doubled (every answer a participant submitted is the decision
//! recorded for their seat, once), all within a bound; the page latency is reported.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

const PARTICIPANTS: usize = 200;

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn two_hundred_participants_play_at_once_with_no_decision_lost_or_doubled() {
    // Waits long enough that no seat is given to the stand-in however slow the machine: the
    // test counts every decision as a person's.
    let (_dir, s) = serve_study("people-load", "", &people_dilemma_runs(3, 100), 900, 900, None);
    let store = s.store.clone();
    let base = s.base.clone();
    let started = Instant::now();
    let latencies: Arc<Mutex<Vec<f64>>> = Arc::default();
    let played: Vec<(String, Vec<String>)> = s.rt.block_on(async {
        let codes = codes(&base, PARTICIPANTS).await;
        let mut tasks = Vec::new();
        for (i, code) in codes.into_iter().enumerate() {
            let base = base.clone();
            let latencies = latencies.clone();
            tasks.push(tokio::spawn(async move {
                enter(&base, &code).await;
                let id = state(&base, &code).await["participant"].as_str().expect("id").to_string();
                let c = client();
                let mut sent = Vec::new();
                let deadline = Instant::now() + Duration::from_secs(600);
                loop {
                    assert!(Instant::now() < deadline, "participant {i} did not finish");
                    let t = Instant::now();
                    let page = c.get(format!("{base}/p/{code}")).send().await.expect("page");
                    assert_eq!(page.status(), 200);
                    let _ = page.text().await.expect("text");
                    latencies.lock().expect("lock").push(t.elapsed().as_secs_f64() * 1000.0);
                    let st = state(&base, &code).await;
                    if st["stage"] == "done" {
                        return (id, sent);
                    }
                    let Some(d) = st["decision"].as_object() else {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    let choice = (i + d["slot"].as_u64().expect("slot") as usize) % 2;
                    let r = c
                        .post(format!("{base}/p/{code}/act"))
                        .form(&[("nonce", d["nonce"].as_str().expect("nonce")), ("choice", &choice.to_string())])
                        .send()
                        .await
                        .expect("act");
                    assert_eq!(r.status(), 303);
                    sent.push(format!("c{choice}"));
                }
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.expect("participant"));
        }
        out
    });
    let elapsed = started.elapsed();
    // A hang guard, not a speed test: on a loaded machine the session takes several times as long.
    assert!(elapsed < Duration::from_secs(600), "the session took {elapsed:?}");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), 100);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM decisions"), 600);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model = 'human' AND parse_status = 'ok'"), 600);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_answers"), 600);
    for (id, sent) in &played {
        assert_eq!(sent.len(), 3, "{id}");
        let recorded: Vec<String> = rows(
            &store,
            "SELECT d.action FROM decisions d JOIN runs r ON r.run_id = d.run_id
                 JOIN serve_participants p ON p.run_key = r.run_key AND p.seat = d.seat
                 WHERE p.participant_id = ?1 ORDER BY d.step",
            [id],
            |r| r.get(0),
        );
        assert_eq!(&recorded, sent, "{id}: recorded once each, as submitted");
    }
    let mut l = latencies.lock().expect("lock").clone();
    eprintln!(
        "load: {PARTICIPANTS} participants, 100 societies, 600 decisions in {:.1} s; page latency over {} requests: median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        elapsed.as_secs_f64(),
        l.len(),
        percentile(&mut l, 0.5),
        percentile(&mut l, 0.95),
        percentile(&mut l, 1.0)
    );
}
