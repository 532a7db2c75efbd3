//! The LLM client and policy against a local fake OpenAI-compatible server: retries, timeouts,
//! concurrency limits, several endpoints, parsing and fallback, replay.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agora_agents::llm::{
    ChatRequest, Deliberation, LlmClient, LlmContext, LlmPolicy, MemoryCache, Message, ModelSpec, PromptOptions,
    Session, StructuredMode, TranscriptSink,
};
use agora_agents::{Decision, Policy};
use agora_environments::prisoners_dilemma::PdParams;
use agora_environments::{Action, EnvSpec, Variant};
use agora_test_support::{FakeReply, FakeServer, Gate};
use rand::SeedableRng;

mod common;
use common::{context, rt, seat_zero};

fn model(endpoints: Vec<String>) -> ModelSpec {
    ModelSpec {
        name: "fake".into(),
        family: "Fake".into(),
        endpoints,
        served_id: "fake-1".into(),
        api_key_env: None,
        quantisation: "none".into(),
        notes: String::new(),
        concurrency: 4,
        structured: StructuredMode::JsonSchema,
        timeout_s: 0.5,
        max_attempts: 3,
        max_retries: 4,
        backoff_ms: 10,
        temperature: 0.7,
        max_tokens: 64,
        reasoning_max_tokens: 512,
        deliberation: Deliberation::Server,
        chat_template_kwargs: None,
        send_seed: true,
        prefill: None,
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message { role: "user".into(), content: "hi".into() }],
        temperature: 0.7,
        max_tokens: 16,
        seed: Some(1),
        schema: Some(
            serde_json::json!({"type": "object", "properties": {"action": {"type": "integer", "minimum": 1, "maximum": 3}}, "required": ["action"]}),
        ),
        chat_template_kwargs: None,
    }
}

#[test]
fn transient_failures_are_retried_until_an_answer() {
    rt().block_on(async {
        let faults = [
            FakeReply::Status(500),
            FakeReply::Status(429),
            FakeReply::Malformed,
            FakeReply::Truncated,
            FakeReply::Close,
        ];
        let server = FakeServer::start(Arc::new(move |n, _| faults.get(n).cloned().unwrap_or(FakeReply::Legal)))
            .await
            .expect("server");
        let client =
            LlmClient::new(ModelSpec { max_retries: 6, timeout_s: 60.0, ..model(vec![server.endpoint()]) }, None)
                .expect("client");
        let reply = client.chat(&request()).await.expect("answered after five failures");
        let v: serde_json::Value = serde_json::from_str(&reply.content).expect("json");
        assert!((1..=3).contains(&v["action"].as_i64().expect("integer")));
        assert_eq!(server.requests.load(Ordering::Relaxed), 6);
        assert_eq!(reply.prompt_tokens, Some(100));
    });
}

#[test]
fn timeouts_are_retried_and_exhaustion_is_reported() {
    rt().block_on(async {
        let server = FakeServer::start(Arc::new(|n, _| if n < 2 { FakeReply::Hang } else { FakeReply::Legal }))
            .await
            .expect("server");
        // The two hangs time out (0.5 s); a legal reply slower than that under load is retried
        // as well, so there are tries to spare.
        let client =
            LlmClient::new(ModelSpec { max_retries: 10, ..model(vec![server.endpoint()]) }, None).expect("client");
        client.chat(&request()).await.expect("a try after the hangs answers");
        assert!(server.requests.load(Ordering::Relaxed) >= 3, "the two hangs were retried");
        // Each 503 must come back as one, not as a timeout.
        let dead = FakeServer::start(Arc::new(|_, _| FakeReply::Status(503))).await.expect("server");
        let client = LlmClient::new(
            ModelSpec { max_retries: 2, timeout_s: 60.0, ..model(vec![dead.endpoint()]) },
            Some("sk-secret-key".into()),
        )
        .expect("client");
        let err = client.chat(&request()).await.expect_err("gives up");
        let msg = err.to_string();
        assert!(msg.contains("gave up after 3 tries") && msg.contains("503"), "{msg}");
        assert!(!msg.contains("sk-secret-key"), "the key never appears in errors");
    });
}

#[test]
fn a_failure_of_the_request_itself_is_not_retried_and_says_so() {
    rt().block_on(async {
        // What the request itself gets (a refusal of it, a reply without content) comes back
        // at once, per request; what every request gets (a wrong model or key) and what the
        // transport does are not per request.
        for (reply, per_request, sent) in [
            (FakeReply::NullContent, true, 1),
            (FakeReply::Status(400), true, 1),
            (FakeReply::Status(413), true, 1),
            (FakeReply::Status(422), true, 1),
            (FakeReply::Status(401), false, 1),
            (FakeReply::Status(404), false, 1),
            (FakeReply::Status(500), false, 3),
        ] {
            let r = reply.clone();
            let server = FakeServer::start(Arc::new(move |_, _| r.clone())).await.expect("server");
            let client =
                LlmClient::new(ModelSpec { max_retries: 2, timeout_s: 60.0, ..model(vec![server.endpoint()]) }, None)
                    .expect("client");
            let err = client.chat(&request()).await.expect_err("no answer");
            assert_eq!(err.per_request(), per_request, "{reply:?}: {err}");
            assert_eq!(server.requests.load(Ordering::Relaxed), sent, "{reply:?}");
            if reply == FakeReply::NullContent {
                assert!(err.to_string().contains("reply without message content (finish_reason length)"), "{err}");
            }
        }
    });
}

#[test]
fn unreachable_server_is_a_clear_error_at_start() {
    rt().block_on(async {
        let server = FakeServer::start(Arc::new(|_, _| FakeReply::Legal)).await.expect("server");
        let endpoint = server.endpoint();
        server.shut_down().await;
        let client = LlmClient::new(model(vec![endpoint.clone()]), None).expect("client");
        let err = client.check_reachable().await.expect_err("unreachable");
        assert!(err.to_string().contains("no endpoint reachable") && err.to_string().contains(&endpoint), "{err}");
    });
}

#[test]
fn concurrency_limit_is_reached_and_respected() {
    rt().block_on(async {
        // The server holds the requests until four are in flight at once; a timeout long enough
        // that none is retried while held (a retry would put a fifth on the server).
        let gate = Gate::new();
        let held = gate.clone();
        let server =
            FakeServer::start(Arc::new(move |_, _| FakeReply::Gated(held.clone(), Box::new(FakeReply::Legal))))
                .await
                .expect("server");
        let client = Arc::new(
            LlmClient::new(ModelSpec { timeout_s: 600.0, ..model(vec![server.endpoint()]) }, None).expect("client"),
        );
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..40 {
            let c = client.clone();
            set.spawn(async move { c.chat(&request()).await.map(|_| ()) });
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while server.peak_in_flight.load(Ordering::Relaxed) < 4 {
            assert!(tokio::time::Instant::now() < deadline, "four requests never in flight at once");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        gate.open();
        while let Some(r) = set.join_next().await {
            r.expect("task").expect("answer");
        }
        assert_eq!(server.requests.load(Ordering::Relaxed), 40, "none retried");
        assert_eq!(server.peak_in_flight.load(Ordering::Relaxed), 4, "limit 4 per endpoint, reached");
        assert_eq!(client.peak_in_flight(), 4);
    });
}

#[test]
fn a_slow_endpoint_does_not_hold_back_a_fast_one() {
    rt().block_on(async {
        // The slow endpoint holds every request it gets until the test lets it go: the other
        // requests must all be answered by the fast one meanwhile. Two at a time are held (its
        // concurrency); a request that picked it as it filled may wait behind them, so the test
        // asks for most of the 40, not all but two.
        let gate = Gate::new();
        let held = gate.clone();
        let slow = FakeServer::start(Arc::new(move |_, _| FakeReply::Gated(held.clone(), Box::new(FakeReply::Legal))))
            .await
            .expect("server");
        let fast = FakeServer::start(Arc::new(|_, _| FakeReply::Legal)).await.expect("server");
        // No timeout while held: a timed-out request would be retried elsewhere.
        let spec = ModelSpec { concurrency: 2, timeout_s: 600.0, ..model(vec![slow.endpoint(), fast.endpoint()]) };
        let client = Arc::new(LlmClient::new(spec, None).expect("client"));
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..40 {
            let c = client.clone();
            set.spawn(async move { c.chat(&request()).await.map(|_| ()) });
        }
        let mut answered = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while answered < 30 {
            match tokio::time::timeout_at(deadline, set.join_next()).await {
                Ok(Some(r)) => r.expect("task").expect("answer"),
                Ok(None) => unreachable!("40 requests, 30 awaited"),
                Err(_) => panic!(
                    "the fast endpoint answered only {answered} of 40 while the slow one held {}",
                    slow.requests.load(Ordering::Relaxed)
                ),
            }
            answered += 1;
        }
        assert!(fast.requests.load(Ordering::Relaxed) >= answered, "every answer so far came from the fast endpoint");
        assert!(slow.requests.load(Ordering::Relaxed) <= 2, "the slow endpoint holds no more than its limit");
        gate.open();
        while let Some(r) = set.join_next().await {
            r.expect("task").expect("answer");
        }
        assert_eq!(fast.requests.load(Ordering::Relaxed) + slow.requests.load(Ordering::Relaxed), 40);
        assert!(fast.requests.load(Ordering::Relaxed) > slow.requests.load(Ordering::Relaxed));
    });
}

fn policy(ctx: &LlmContext, transcripts: &TranscriptSink) -> LlmPolicy {
    LlmPolicy::new(
        ctx,
        "fake",
        seat_zero(EnvSpec::PrisonersDilemma(PdParams::default()), 7, PromptOptions::default(), transcripts),
    )
    .expect("policy")
}

fn first_observation() -> agora_environments::Observation {
    let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(Variant::C0).expect("env");
    env.pending(&mut rand::rngs::StdRng::seed_from_u64(1)).remove(0).observation
}

fn decide(p: &mut LlmPolicy, rt: &tokio::runtime::Runtime) -> Result<Action, agora_agents::AgentError> {
    let obs = first_observation();
    match p.decide(&obs, &mut rand::rngs::StdRng::seed_from_u64(1)) {
        Decision::Deferred(f) => rt.block_on(f),
        Decision::Ready(a) => Ok(a),
    }
}

#[test]
fn think_blocks_illegal_answers_and_fallback_are_recorded() {
    let rt = rt();
    let replies = [
        FakeReply::Content(
            "<think>defect? {\"action\": \"Option F\"}</think>{\"action\": \"Option J\", \"reason\": \"trust\"}".into(),
        ),
        FakeReply::Content("{\"action\": \"Option Z\"}".into()),
        FakeReply::Content("I would rather not say which option I prefer today.".into()),
        FakeReply::Content("{\"action\": 7}".into()),
    ];
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |n, _| replies.get(n).cloned().unwrap_or(FakeReply::Legal))))
        .expect("server");
    let spec = model(vec![server.endpoint()]);
    let cache = Arc::new(MemoryCache::default());
    let ctx = context(&spec, cache.clone(), false);
    let sink = TranscriptSink::default();
    let mut p = policy(&ctx, &sink);
    assert_eq!(decide(&mut p, &rt).expect("decided"), Action::Choice(0), "think block stripped, answer read");
    let fallback = decide(&mut p, &rt).expect("decided by fallback");
    assert!(matches!(fallback, Action::Choice(_)));
    let t = sink.drain();
    let statuses: Vec<&str> = t.iter().map(|t| t.parse_status.as_str()).collect();
    assert_eq!(statuses, vec!["ok", "illegal", "unparsable", "illegal", "fallback"]);
    assert_eq!(t[0].reason.as_deref(), Some("trust"));
    assert_eq!(
        (t[1].slot, t[1].attempt, t[3].attempt, t[4].attempt),
        (1, 1, 3, 4),
        "retries are attempts of the same slot"
    );
    let messages = |j: &str| serde_json::from_str::<serde_json::Value>(j).expect("json")["messages"].clone();
    assert!(messages(&t[1].messages_json) == messages(&t[2].messages_json), "a retry re-asks the same observation");
    assert!(t[1].messages_json != t[2].messages_json, "with a fresh seed per attempt");
    assert_eq!(cache.len(), 4);

    // Replay: the same decisions from the cache, with the server gone; a new slot misses.
    server.stop();
    let replay_ctx =
        LlmContext { session: Arc::new(Session::new([&spec], cache.clone(), true).expect("session")), ..ctx };
    let replayed = TranscriptSink::default();
    let mut q = policy(&replay_ctx, &replayed);
    assert_eq!(decide(&mut q, &rt).expect("replayed"), Action::Choice(0));
    assert_eq!(decide(&mut q, &rt).expect("replayed"), fallback);
    assert!(replayed.drain() == t, "replayed transcripts are identical");
    let miss = decide(&mut q, &rt).expect_err("not cached");
    assert!(miss.to_string().contains("replay: no cached reply"), "{miss}");
}

/// The naming game's fallback per arm: the baseline falls back to the first-listed name, the
/// shuffled-pool arm to a random one, and a study can set either explicitly.
#[test]
fn naming_fallback_is_the_first_listed_name_in_the_baseline_and_random_in_the_shuffled_arm() {
    use agora_environments::naming::NgParams;
    use agora_environments::{Context, Fallback};
    let rt = rt();
    let server =
        rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Content("I cannot decide.".into())))).expect("server");
    let spec = model(vec![server.endpoint()]);
    let ctx = context(&spec, Arc::new(MemoryCache::default()), false);
    // Fallback actions of eight decisions of seat 0, and the first name its list showed each time.
    let play = |params: NgParams| -> Vec<(Action, Action)> {
        // Seat 0 meets a partner about once in twelve interactions: play on past a convention.
        let spec = EnvSpec::NamingGame(NgParams { stop_at_convention: false, ..params });
        let sink = TranscriptSink::default();
        let seat = seat_zero(spec.clone(), 11, PromptOptions::default(), &sink);
        let mut p = LlmPolicy::new(&ctx, "fake", seat).expect("policy");
        let mut env = spec.build(Variant::C0).expect("env");
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut out = Vec::new();
        while out.len() < 8 {
            let requests = env.pending(&mut rng);
            let mut actions = Vec::new();
            for r in &requests {
                let action = if r.agent == 0 {
                    let a = match p.decide(&r.observation, &mut rng) {
                        Decision::Deferred(f) => rt.block_on(f).expect("falls back"),
                        Decision::Ready(a) => a,
                    };
                    let Context::Names { order } = &r.observation.context else { panic!("names") };
                    out.push((a.clone(), Action::Choice(order[0])));
                    a
                } else {
                    Action::Choice(0)
                };
                actions.push((r.agent, action));
            }
            env.resolve(&actions, &mut rng).expect("legal");
        }
        assert!(sink.drain().iter().any(|t| t.parse_status == "fallback"));
        out
    };
    let baseline = play(NgParams::default());
    assert!(baseline.iter().all(|(a, first)| a == first), "baseline: the first-listed name, {baseline:?}");
    let shuffled = play(NgParams { shuffled_pool: true, ..NgParams::default() });
    assert!(shuffled.iter().any(|(a, first)| a != first), "shuffled arm: a random name, {shuffled:?}");
    let forced = play(NgParams { shuffled_pool: true, fallback: Some(Fallback::FirstListed), ..NgParams::default() });
    assert!(forced.iter().all(|(a, first)| a == first), "a study may set the fallback, {forced:?}");
    // Seat 0's own permutation decides what "first listed" means, not the pool's order.
    assert_ne!(forced[0].1, Action::Choice(0), "this seed gives seat 0 a list that does not start with name 0");
}

#[test]
fn every_command_asks_through_one_session_with_keys_from_the_environment() {
    let rt = rt();
    let var = "AGORA_TEST_KEY_THAT_IS_NEVER_SET";
    std::env::remove_var(var);
    let mut keyed = model(vec!["http://127.0.0.1:9/v1".into()]);
    keyed.name = "hosted".into();
    keyed.api_key_env = Some(var.into());
    let open = model(vec!["http://127.0.0.1:9/v1".into()]);
    let cache = Arc::new(MemoryCache::default());
    // An unset key is refused, naming the model and the variable; none is needed in replay.
    let err = Session::new([&open, &keyed], cache.clone(), false).err().expect("refused");
    assert_eq!(err, format!("model `hosted`: environment variable {var} (its API key) is not set"));
    let replaying = Session::new([&open, &keyed], cache.clone(), true).expect("replay needs no key");
    assert_eq!(replaying.clients().keys().collect::<Vec<_>>(), ["fake", "hosted"]);
    // Reachability is not checked in replay; outside it, a dead server stops the command.
    rt.block_on(replaying.check_reachable()).expect("replay asks nothing");
    let live = Session::new([&open], cache.clone(), false).expect("session");
    assert!(rt.block_on(live.check_reachable()).is_err());

    // A call: the server's reply is cached under the session's key and read back from the
    // cache the second time; a replay miss is an error, never a call; a server failure is an
    // error and caches nothing.
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Content("{\"action\": \"Option J\"}".into()))))
        .expect("server");
    let spec = model(vec![server.endpoint()]);
    let session = Session::new([&spec], cache.clone(), false).expect("session");
    let req = ChatRequest {
        messages: vec![Message { role: "user".into(), content: "Choose.".into() }],
        temperature: 0.0,
        max_tokens: 16,
        seed: None,
        schema: None,
        chat_template_kwargs: None,
    };
    let json = serde_json::to_string(&req).expect("json");
    let first = rt.block_on(session.call("fake", &req, &json, "slot/1")).expect("asked");
    assert!(!first.cached);
    assert_eq!(first.key, Session::key(&spec, &json, "slot/1"));
    assert_eq!(first.key, agora_agents::llm::cache_key("fake|fake-1", &json, "slot/1"), "name and served id");
    let again = rt.block_on(session.call("fake", &req, &json, "slot/1")).expect("asked");
    assert!(again.cached && again.reply.content == first.reply.content);
    assert_eq!(session.calls(), (1, 1), "one reply from the cache, one from the server");
    let replay = Session::new([&spec], cache.clone(), true).expect("session");
    assert!(matches!(
        rt.block_on(replay.call("fake", &req, &json, "slot/2")),
        Err(agora_agents::llm::SessionError::NotCached)
    ));
    assert!(matches!(
        rt.block_on(session.call("nobody", &req, &json, "slot/1")),
        Err(agora_agents::llm::SessionError::UnknownModel(_))
    ));
    let before = cache.len();
    server.stop();
    drop(server);
    let failing = Session::new([&ModelSpec { max_retries: 0, timeout_s: 0.5, ..spec.clone() }], cache.clone(), false)
        .expect("session");
    assert!(rt.block_on(failing.call("fake", &req, &json, "slot/3")).is_err());
    assert_eq!(cache.len(), before, "a failure is not a reply");

    // Fan-out: results in the jobs' order; the first error is returned.
    let out: Result<Vec<u32>, String> = rt.block_on(agora_agents::llm::fan_out((0..20u32).map(|i| async move {
        tokio::time::sleep(Duration::from_millis(u64::from(20 - i))).await;
        Ok(i)
    })));
    assert_eq!(out.expect("all answered"), (0..20).collect::<Vec<_>>());
    let failed: Result<Vec<u32>, String> = rt.block_on(agora_agents::llm::fan_out((0..5u32).map(|i| async move {
        if i == 3 {
            Err(format!("job {i}"))
        } else {
            Ok(i)
        }
    })));
    assert_eq!(failed, Err("job 3".into()));
}
