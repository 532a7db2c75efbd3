//! People in the same societies, over HTTP on loopback: two participants play a prisoner's
//! dilemma against each other; a participant plays the public-goods game beside an LLM seat
//! (the fake model server) and classical seats; the records say who played every decision,
//! and each participant's actions are what their pages submitted.

mod common;

use common::*;
use serde_json::Value;

fn pick(form: &Value, label: &str) -> Vec<(String, String)> {
    let options = form["options"].as_array().expect("a choice");
    let (i, _) = options
        .iter()
        .map(|o| (o[0].as_u64().expect("index"), o[1].as_str().expect("label")))
        .find(|(_, l)| l.eq_ignore_ascii_case(label))
        .unwrap_or_else(|| panic!("no option {label} in {form}"));
    vec![("choice".into(), i.to_string())]
}

#[test]
fn two_participants_play_a_dilemma_against_each_other() {
    let (_dir, s) = serve_people("people-pd", 3, 60, 60, None);
    let store = s.store.clone();
    let base = s.base.clone();
    let labels: Vec<String> = s.rt.block_on(async {
        let codes = codes(&base, 2).await;
        enter(&base, &codes[0]).await;
        // The first participant waits for the second.
        let page = client().get(format!("{base}/p/{}", codes[0])).send().await.expect("get").text().await.expect("t");
        assert!(page.contains("Waiting for the other participants"), "{page}");
        enter(&base, &codes[1]).await;
        // Alice cooperates in every round; Bob defects in the last.
        let form0 = loop {
            let st = state(&base, &codes[0]).await;
            if let Some(d) = st["decision"].as_object() {
                break d["form"].clone();
            }
            // No faster than the rate limit allows, however long the wait.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        let labels: Vec<String> = form0["options"]
            .as_array()
            .expect("options")
            .iter()
            .map(|o| o[1].as_str().expect("l").to_string())
            .collect();
        let (cooperate, defect) = (labels[0].clone(), labels[1].clone());
        let (a, b) = tokio::join!(
            play(&base, &codes[0], |f, _| pick(f, &cooperate)),
            play(&base, &codes[1], |f, slot| pick(f, if slot == 2 { &defect } else { &cooperate }))
        );
        assert_eq!((a.len(), b.len()), (3, 3));
        let done = client().get(format!("{base}/p/{}", codes[1])).send().await.expect("get").text().await.expect("t");
        assert!(done.contains("Your completion code is") && done.contains("id=\"payoff\""), "{done}");
        labels
    });
    // The records: one run, both seats human, every decision by its participant.
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM agents WHERE policy = 'human' AND family = 'human'"), 2);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model = 'human' AND parse_status = 'ok'"), 6);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model <> 'human'"), 0);
    let ids: Vec<String> = rows(
        &store,
        "SELECT participant_id FROM serve_participants ORDER BY run_key IS NULL, seat",
        rusqlite::params![],
        |r| r.get(0),
    );
    // Each seat's transcripts name its participant, and its decisions are what they chose.
    for seat in 0..2 {
        let served: Vec<String> =
            rows(&store, "SELECT DISTINCT served_id FROM transcripts WHERE seat = ?1", [seat], |r| r.get(0));
        assert_eq!(served.len(), 1);
        assert!(ids.contains(&served[0]), "{served:?} {ids:?}");
    }
    let actions = |seat: i64| -> Vec<String> {
        rows(&store, "SELECT action FROM decisions WHERE seat = ?1 ORDER BY step", [seat], |r| r.get(0))
    };
    let (a, b) = (actions(0), actions(1));
    let all_c = |v: &[String]| v.iter().all(|x| x == "c0");
    assert!(
        (all_c(&a) && b == ["c0", "c0", "c1"]) || (all_c(&b) && a == ["c0", "c0", "c1"]),
        "decisions {a:?} {b:?} (labels {labels:?})"
    );
    // Each recorded page is the version shown, with a response time.
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM transcripts WHERE messages_json LIKE '%page_version%' AND latency_ms > 0"),
        6
    );
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_answers"), 6);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM serve_participants WHERE consent_at IS NOT NULL AND completion_code IS NOT NULL AND payoff IS NOT NULL"), 2);
}

#[test]
fn a_person_an_llm_and_classical_agents_play_in_one_society() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
    let (server, models) = fake_model_server(&rt);
    let (_dir, s) = serve_study(
        "people-pgg",
        &models,
        r#"Block(name: "pgg", environment: PublicGoods(rounds: 3),
            rosters: [Roster(name: "mixed", members: [
                Member(policy: Human(ConditionalCooperator()), count: Some(1)),
                Member(policy: Llm(model: "fake"), count: Some(1)),
                Member(policy: ConditionalCooperator()),
            ])])"#,
        60,
        60,
        None,
    );
    let store = s.store.clone();
    let base = s.base.clone();
    let sent = s.rt.block_on(async {
        let code = codes(&base, 1).await.remove(0);
        enter(&base, &code).await;
        play(&base, &code, |form, slot| {
            assert_eq!(form["kind"], "amount", "{form}");
            vec![("amount".into(), (5 + slot).to_string())]
        })
        .await
    });
    assert_eq!(sent.len(), 3);
    let policies: Vec<(i64, String)> =
        rows(&store, "SELECT seat, policy FROM agents ORDER BY seat", rusqlite::params![], |r| {
            Ok((r.get(0)?, r.get(1)?))
        });
    assert_eq!(policies[0], (0, "human".to_string()));
    assert_eq!(policies[1], (1, "llm".to_string()));
    assert!(policies[2..].iter().all(|(_, p)| p == "conditional-cooperator"), "{policies:?}");
    // Who played what: the person's seat in the transcripts as `human`, the model's as `fake`.
    let who: Vec<(i64, String)> =
        rows(&store, "SELECT DISTINCT seat, model FROM transcripts ORDER BY seat", rusqlite::params![], |r| {
            Ok((r.get(0)?, r.get(1)?))
        });
    assert_eq!(who, [(0, "human".to_string()), (1, "fake".to_string())]);
    let human: Vec<String> =
        rows(&store, "SELECT action FROM decisions WHERE seat = 0 ORDER BY step", rusqlite::params![], |r| r.get(0));
    assert_eq!(human, ["a5", "a6", "a7"]);
    // The transcript audit reads models' text: the person's decisions are not audited.
    let cb = agora_audit::LoadedCodebook::default_codebook();
    let coder = agora_audit::LexiconCoder::new(&cb.codebook);
    agora_audit::audit(&store, &cb, &coder, None, agora_audit::GateOptions::default()).expect("audit");
    let audited: Vec<String> =
        rows(&store, "SELECT DISTINCT model FROM audit_responses", rusqlite::params![], |r| r.get(0));
    assert_eq!(audited, ["fake"]);
    server.stop();
}

#[test]
fn a_participant_joins_a_naming_game_beside_classical_agents_and_a_committed_minority() {
    let (_dir, s) = serve_study(
        "people-naming",
        "",
        r#"Block(name: "naming", environment: NamingGame(population: 6, cap: 30, window: 6,
                tipping: Tipping(fraction: 0.34, established: 0, alternative: 1)),
            rosters: [Roster(name: "one-person", members: [
                Member(policy: Human(MemoryCoordination()), count: Some(1)),
                Member(policy: MemoryCoordination()),
            ])])"#,
        60,
        60,
        None,
    );
    let store = s.store.clone();
    let base = s.base.clone();
    let (sent, shown) = s.rt.block_on(async {
        let code = codes(&base, 1).await.remove(0);
        enter(&base, &code).await;
        let shown = std::sync::Mutex::new(Vec::new());
        // The participant always names the option shown first on their page.
        let sent = play(&base, &code, |form, _| {
            let first = form["options"][0][0].as_u64().expect("index");
            shown.lock().expect("lock").push(form["options"].clone());
            vec![("choice".into(), first.to_string())]
        })
        .await;
        (sent, shown.into_inner().expect("shown"))
    });
    assert!(!sent.is_empty());
    let agents: Vec<(i64, String, i64)> =
        rows(&store, "SELECT seat, policy, committed FROM agents ORDER BY seat", rusqlite::params![], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        });
    assert_eq!(agents.len(), 6);
    assert_eq!(agents.iter().filter(|a| a.2 == 1).count(), 2, "{agents:?}");
    let human: Vec<&(i64, String, i64)> = agents.iter().filter(|a| a.1 == "human").collect();
    assert_eq!(human.len(), 1, "{agents:?}");
    assert_eq!(human[0].2, 0, "the person is not one of the committed");
    assert!(agents.iter().filter(|a| a.1 != "human").all(|a| a.1 == "memory-coordination" || a.2 == 1), "{agents:?}");
    let seat = human[0].0;
    let recorded: Vec<String> =
        rows(&store, "SELECT action FROM decisions WHERE seat = ?1 ORDER BY step", [seat], |r| r.get(0));
    let expected: Vec<String> = sent.iter().map(|f| format!("c{}", f[0].1)).collect();
    assert_eq!(recorded, expected, "the person's decisions are what their pages submitted");
    assert_eq!(shown.len(), sent.len());
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model = 'human'"), sent.len() as i64);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM transcripts WHERE model <> 'human'"), 0);
}
