//! What the client sends and how a reply cut at the token limit is recorded: the request body
//! lists `reasoning` before the answer, step-by-step gets its own token budget, a model can
//! switch a server's deliberation mode off, and a reply with `finish_reason: "length"` is
//! recorded as `truncated` (its decision standing where the answer was complete before the cut).

use std::sync::Arc;

use agora_agents::llm::{
    CachedReply, ChatRequest, Deliberation, LlmContext, LlmPolicy, MemoryCache, ModelSpec, PromptOptions, Transcript,
    TranscriptSink,
};
use agora_agents::{Decision, Policy};
use agora_environments::prisoners_dilemma::PdParams;
use agora_environments::{Action, EnvSpec, Variant};
use agora_test_support::{FakeReply, FakeServer};
use rand::SeedableRng;

mod common;
use common::{context, rt, seat_zero};

fn model(endpoint: String) -> ModelSpec {
    serde_json::from_value(serde_json::json!({
        "name": "fake", "family": "Fake", "endpoints": [endpoint], "served_id": "fake-1",
        "timeout_s": 2.0, "backoff_ms": 10, "max_tokens": 64
    }))
    .expect("a model declared with its defaults")
}

/// Seat 0 of a prisoner's dilemma run deciding `decisions` times; its actions and transcripts.
fn play(
    ctx: &LlmContext,
    options: PromptOptions,
    decisions: usize,
    rt: &tokio::runtime::Runtime,
) -> (Vec<Action>, Vec<Transcript>) {
    let sink = TranscriptSink::default();
    let env = EnvSpec::PrisonersDilemma(PdParams::default());
    let seat = seat_zero(env.clone(), 5, options, &sink);
    let mut p = LlmPolicy::new(ctx, "fake", seat).expect("policy");
    let obs =
        env.build(Variant::C0).expect("env").pending(&mut rand::rngs::StdRng::seed_from_u64(1)).remove(0).observation;
    let actions = (0..decisions)
        .map(|_| match p.decide(&obs, &mut rand::rngs::StdRng::seed_from_u64(1)) {
            Decision::Deferred(f) => rt.block_on(f).expect("decided"),
            Decision::Ready(a) => a,
        })
        .collect();
    (actions, sink.drain())
}

#[test]
fn the_request_body_sent_lists_reasoning_before_the_answer_within_the_step_by_step_budget() {
    let rt = rt();
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("server");
    let ctx = context(&model(server.endpoint()), Arc::new(MemoryCache::default()), false);
    play(&ctx, PromptOptions { step_by_step: true, ..Default::default() }, 1, &rt);
    let body = server.last_body();
    let at = |needle: &str| body.find(needle).unwrap_or_else(|| panic!("{needle} in {body}"));
    // As received: the schema's properties in the order written, reasoning first.
    assert!(at("\"reasoning\":{") < at("\"action\":{") && at("\"action\":{") < at("\"reason\":{"), "{body}");
    assert!(body.contains("\"required\":[\"reasoning\",\"action\"]"), "{body}");
    // Step by step gets the reasoning budget (default 1024), a plain decision the model's own.
    assert!(body.contains("\"max_tokens\":1024"), "{body}");
    play(&ctx, PromptOptions::default(), 1, &rt);
    assert!(server.last_body().contains("\"max_tokens\":64"), "{}", server.last_body());
    let declared = ModelSpec { reasoning_max_tokens: 2048, ..model(server.endpoint()) };
    play(
        &context(&declared, Arc::new(MemoryCache::default()), false),
        PromptOptions { step_by_step: true, ..Default::default() },
        1,
        &rt,
    );
    assert!(server.last_body().contains("\"max_tokens\":2048"), "{}", server.last_body());
    assert_eq!(
        ModelSpec { max_tokens: 4096, ..model(server.endpoint()) }.reply_budget(true),
        4096,
        "never below max_tokens"
    );
}

#[test]
fn deliberation_off_is_sent_as_chat_template_kwargs_and_nothing_is_sent_otherwise() {
    let rt = rt();
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal))).expect("server");
    let off = ModelSpec { deliberation: Deliberation::Off, ..model(server.endpoint()) };
    let (_, t) = play(&context(&off, Arc::new(MemoryCache::default()), false), PromptOptions::default(), 1, &rt);
    let body: serde_json::Value = serde_json::from_str(&server.last_body()).expect("json");
    assert_eq!(body["chat_template_kwargs"], serde_json::json!({"enable_thinking": false}));
    let recorded: serde_json::Value = serde_json::from_str(&t[0].messages_json).expect("json");
    assert_eq!(
        recorded["chat_template_kwargs"],
        serde_json::json!({"enable_thinking": false}),
        "part of the cache key"
    );

    let kwargs = ModelSpec {
        chat_template_kwargs: serde_json::from_value(serde_json::json!({"enable_thinking": false, "foo": 1})).ok(),
        ..model(server.endpoint())
    };
    play(&context(&kwargs, Arc::new(MemoryCache::default()), false), PromptOptions::default(), 1, &rt);
    let body: serde_json::Value = serde_json::from_str(&server.last_body()).expect("json");
    assert_eq!(body["chat_template_kwargs"], serde_json::json!({"enable_thinking": false, "foo": 1}));

    // A model that sets neither sends, and records (the cache key), exactly what it did before.
    let (_, t) = play(
        &context(&model(server.endpoint()), Arc::new(MemoryCache::default()), false),
        PromptOptions::default(),
        1,
        &rt,
    );
    assert!(!server.last_body().contains("chat_template_kwargs"), "{}", server.last_body());
    let recorded: serde_json::Value = serde_json::from_str(&t[0].messages_json).expect("json");
    let keys: Vec<&String> = recorded.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["messages", "temperature", "max_tokens", "seed", "schema"]);
    let request = ChatRequest {
        messages: Vec::new(),
        temperature: 0.5,
        max_tokens: 8,
        seed: None,
        schema: None,
        chat_template_kwargs: None,
    };
    assert_eq!(
        serde_json::to_string(&request).expect("json"),
        r#"{"messages":[],"temperature":0.5,"max_tokens":8,"seed":null,"schema":null}"#
    );
}

#[test]
fn model_declarations_without_the_new_fields_read_and_write_as_before() {
    let spec = model("http://127.0.0.1:1/v1".into());
    assert_eq!(
        (spec.reasoning_max_tokens, spec.deliberation, &spec.chat_template_kwargs),
        (1024, Deliberation::Server, &None)
    );
    let written = serde_json::to_value(&spec).expect("json");
    for key in ["reasoning_max_tokens", "deliberation", "chat_template_kwargs"] {
        assert!(written.get(key).is_none(), "{key} left out at its default: {written}");
    }
    assert_eq!(spec.template_kwargs(), None);
    let off = ModelSpec { deliberation: Deliberation::Off, ..spec.clone() };
    assert_eq!(serde_json::to_value(&off).expect("json")["deliberation"], "Off");
    assert_eq!(off.template_kwargs(), Some(serde_json::json!({"enable_thinking": false})));
    let contradiction = ModelSpec {
        chat_template_kwargs: serde_json::from_value(serde_json::json!({"enable_thinking": true})).ok(),
        ..off
    };
    let err = contradiction.validate().expect_err("contradicts");
    assert!(err.contains("chat_template_kwargs") && err.contains("deliberation"), "{err}");
}

#[test]
fn a_reply_cut_after_the_answer_stands_and_a_cut_answer_is_asked_again_as_truncated() {
    // Regression (Gemma 3 270M, max_tokens 48): 30 % of calls ran out of tokens in the optional
    // reason after a complete answer, and every one was retried as unparsable.
    let rt = rt();
    let replies = [
        FakeReply::Cut("{\"action\": \"Option F\", \"reason\": \"Because the other might".into()),
        FakeReply::Cut("{\"action\": \"Option".into()),
        FakeReply::Cut("<think>Let me weigh the payoffs carefully. If the other".into()),
        FakeReply::Content("{\"action\": \"Option J\"}".into()),
    ];
    let server = rt
        .block_on(FakeServer::start(Arc::new(move |n, _| replies.get(n).cloned().unwrap_or(FakeReply::Legal))))
        .expect("server");
    let cache = Arc::new(MemoryCache::default());
    let ctx = context(&model(server.endpoint()), cache.clone(), false);
    let (actions, t) = play(&ctx, PromptOptions::default(), 2, &rt);
    assert_eq!(actions, vec![Action::Choice(1), Action::Choice(0)]);
    let rows: Vec<(u64, u32, &str, Option<&str>)> =
        t.iter().map(|t| (t.slot, t.attempt, t.parse_status.as_str(), t.action.as_deref())).collect();
    assert_eq!(
        rows,
        vec![
            (0, 1, "truncated", Some("c1")),
            (1, 1, "truncated", None),
            (1, 2, "truncated", None),
            (1, 3, "ok", Some("c0")),
        ],
        "{t:#?}"
    );
    assert_eq!(t[0].reason.as_deref(), Some("Because the other might [cut at the token limit]"));
    assert!(t[0].detail.contains("the decision stands"), "{}", t[0].detail);
    assert!(t[1].detail.contains("before the `action` field was complete"), "{}", t[1].detail);

    // Replay: the finish reason travels with the cached reply, so the records are identical.
    server.stop();
    let replay = context(&model(server.endpoint()), cache, true);
    let (again, replayed) = play(&replay, PromptOptions::default(), 2, &rt);
    assert_eq!(again, actions);
    assert!(replayed == t, "replayed transcripts are identical");
}

#[test]
fn the_finish_reason_is_kept_in_the_cache_and_older_cached_replies_read_as_before() {
    let cut = CachedReply {
        content: "{".into(),
        prompt_tokens: Some(1),
        completion_tokens: Some(2),
        endpoint: "http://x/v1".into(),
        latency_ms: 1.0,
        finish_reason: Some("length".into()),
    };
    let json = serde_json::to_string(&cut).expect("json");
    assert!(serde_json::from_str::<CachedReply>(&json).expect("reads").truncated());
    let old = r#"{"content":"{}","prompt_tokens":null,"completion_tokens":null,"endpoint":"e","latency_ms":0.0}"#;
    let read: CachedReply = serde_json::from_str(old).expect("an older cached reply reads");
    assert!(!read.truncated());
    assert_eq!(serde_json::to_string(&read).expect("json"), old, "and writes back unchanged");
}

#[test]
fn the_probe_cell_asks_the_probe_only_and_spends_no_behavioural_call() {
    let rt = rt();
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Content("The prisoner's dilemma.".into()))))
        .expect("server");
    let ctx = context(&model(server.endpoint()), Arc::new(MemoryCache::default()), false);
    let (actions, t) = play(&ctx, PromptOptions { recognition_probe: true, ..Default::default() }, 1, &rt);
    assert_eq!(actions.len(), 1, "a legal placeholder the probe session ignores");
    let kinds: Vec<(&str, &str)> = t.iter().map(|t| (t.kind.as_str(), t.parse_status.as_str())).collect();
    assert_eq!(kinds, vec![("probe", "recognised")]);
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::Relaxed), 1, "one call: the probe");
}
