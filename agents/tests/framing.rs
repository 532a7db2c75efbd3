//! The framing cells relabel the two actions in place, and the history summary never averages
//! quantities of different kinds.
//!
//! Framing: the framed labels stand wherever the variant's labels would (rules, answer schema,
//! history table and narrative), for the same role and the same two actions in both frames,
//! and a reply is read against them; no sentence is appended. Games without a defensible
//! mapping in both frames declare none.

use std::sync::Arc;

use agora_agents::llm::{
    parse_reply, Framing, HistoryFormat, LlmPolicy, MemoryCache, ModelSpec, ParseOutcome, PromptOptions,
    PromptRenderer, TranscriptSink,
};
use agora_agents::{Decision, Policy};
use agora_environments::bargaining::BargainParams;
use agora_environments::prisoners_dilemma::PdParams;
use agora_environments::public_goods::PgParams;
use agora_environments::{Action, EnvKind, EnvSpec, Feedback, Frame, Observation, Role, Variant};
use agora_test_support::{FakeReply, FakeServer};
use rand::SeedableRng;

mod common;

fn first(spec: &EnvSpec, variant: Variant) -> Observation {
    let mut env = spec.build(variant).expect("builds");
    env.pending(&mut rand::rngs::StdRng::seed_from_u64(1)).remove(0).observation
}

fn pd_history() -> Vec<Feedback> {
    [(0, 1), (1, 0), (1, 1)]
        .iter()
        .enumerate()
        .map(|(i, (own, other))| Feedback {
            round: i as u32 + 1,
            own: vec![(Role::Player, Action::Choice(*own))],
            others: vec![Action::Choice(*other)],
            partner: Some(1),
            payoff: 1.0,
        })
        .collect()
}

#[test]
fn the_framing_mapping_is_the_documented_table() {
    // The table README carries: only the prisoner's dilemma frames, the player's two actions,
    // by semantic index (0 cooperates in every variant).
    let pd = EnvSpec::canonical(EnvKind::PrisonersDilemma);
    for v in Variant::ALL {
        let moral = pd.game().framing(v, Frame::Moral).expect("moral");
        let risk = pd.game().framing(v, Frame::Risk).expect("risk");
        assert_eq!((moral.role, moral.labels), (Role::Player, ["act fairly", "exploit"]));
        assert_eq!((risk.role, risk.labels), (Role::Player, ["the riskier option", "the safer option"]));
    }
    for kind in EnvKind::ALL.iter().filter(|k| **k != EnvKind::PrisonersDilemma) {
        let spec = EnvSpec::canonical(*kind);
        for frame in [Frame::Moral, Frame::Risk] {
            assert!(spec.game().framing(Variant::C0, frame).is_none(), "{kind:?} declares no framing");
        }
    }
}

#[test]
fn framing_relabels_the_actions_in_place_in_every_variant() {
    // Regression (instrument fidelity): both framings appended a sentence to the rules and
    // left the labels, the schema and the parse as they were; the ultimatum's moral framing
    // addressed the responder and its risk framing the proposer.
    let r = PromptRenderer::new();
    let spec = EnvSpec::PrisonersDilemma(PdParams::default());
    for v in Variant::ALL {
        let obs = first(&spec, v);
        let variant_labels = spec.game().wording(v).labels.to_vec();
        let base = r.render(&spec, &obs, &pd_history(), 0, &PromptOptions::default()).expect("renders");
        for (framing, labels) in
            [(Framing::Moral, ["act fairly", "exploit"]), (Framing::Risk, ["the riskier option", "the safer option"])]
        {
            for history_format in [HistoryFormat::Table, HistoryFormat::Narrative] {
                let opts = PromptOptions { framing, history_format, ..Default::default() };
                let out = r.render(&spec, &obs, &pd_history(), 0, &opts).expect("renders");
                let (system, user) = (&out.messages[0].content, &out.messages[1].content);
                let ctx = format!("{v:?} {framing:?} {history_format:?}");
                for old in &variant_labels {
                    assert!(
                        !system.contains(old.as_str()) && !user.contains(old.as_str()),
                        "{ctx}: `{old}` left:\n{system}\n{user}"
                    );
                }
                assert!(
                    system.contains(&format!("one of two options: {} or {}.", labels[0], labels[1])),
                    "{ctx}: {system}"
                );
                assert!(system.contains(&format!("- If both choose {}: each gets", labels[0])), "{ctx}: {system}");
                assert!(system.contains(&format!("\"<one of: {}, {}>\"", labels[0], labels[1])), "{ctx}: {system}");
                assert_eq!(out.schema["properties"]["action"]["enum"], serde_json::json!(labels), "{ctx}");
                match history_format {
                    HistoryFormat::Narrative => {
                        assert!(
                            user.contains(&format!("you chose {}; the other chose {};", labels[0], labels[1])),
                            "{ctx}: {user}"
                        )
                    }
                    _ => assert!(user.contains(&format!("| 1 | {} | {} |", labels[0], labels[1])), "{ctx}: {user}"),
                }
                // Relabelled in place: no sentence added, the same lines as the baseline.
                assert_eq!(system.lines().count(), base.messages[0].content.lines().count(), "{ctx}: {system}");
                assert!(!system.contains("means") && !system.contains(" is the safer"), "{ctx}: {system}");
                // The reply is read against the framed labels; the index keeps its meaning.
                for (i, label) in labels.iter().enumerate() {
                    let reply = format!("{{\"action\": \"{label}\"}}");
                    assert_eq!(
                        parse_reply(&reply, &out.space, "action"),
                        ParseOutcome::Parsed { action: Action::Choice(i as u32), reason: None },
                        "{ctx}"
                    );
                }
                let old = format!("{{\"action\": \"{}\"}}", variant_labels[0]);
                assert_eq!(
                    parse_reply(&old, &out.space, "action").status(),
                    "illegal",
                    "{ctx}: the old label is not an answer"
                );
            }
        }
    }
}

#[test]
fn a_game_without_framing_refuses_a_framing_cell_rather_than_render_it_neutral() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::Bargaining(BargainParams::default());
    let obs = first(&spec, Variant::C0);
    let err = r
        .render(&spec, &obs, &[], 0, &PromptOptions { framing: Framing::Moral, ..Default::default() })
        .expect_err("no framing in the bargaining battery");
    assert!(err.contains("declares no moral framing"), "{err}");
}

#[test]
fn a_framed_reply_decides_by_the_framed_label() {
    // Today the framed label was read against the variant's labels: illegal, then a fallback.
    let rt = common::rt();
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Content("{\"action\": \"exploit\"}".into()))))
        .expect("server");
    let spec: ModelSpec = serde_json::from_value(serde_json::json!({
        "name": "fake", "family": "Fake", "endpoints": [server.endpoint()], "served_id": "fake-1", "timeout_s": 2.0
    }))
    .expect("a model declared with its defaults");
    let ctx = common::context(&spec, Arc::new(MemoryCache::default()), false);
    let sink = TranscriptSink::default();
    let env = EnvSpec::PrisonersDilemma(PdParams::default());
    let options = PromptOptions { framing: Framing::Moral, ..Default::default() };
    let seat = common::seat_zero(env.clone(), 3, options, &sink);
    let mut p = LlmPolicy::new(&ctx, "fake", seat).expect("policy");
    let obs = first(&env, Variant::C0);
    let action = match p.decide(&obs, &mut rand::rngs::StdRng::seed_from_u64(1)) {
        Decision::Deferred(f) => rt.block_on(f).expect("decided"),
        Decision::Ready(a) => a,
    };
    assert_eq!(action, Action::Choice(1), "`exploit` is the framed label of choice 1 (defection)");
    let t = sink.drain();
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].parse_status.as_str(), t[0].action.as_deref()), ("ok", Some(action.encode().as_str())));
}

fn summary_line(spec: &EnvSpec, history: &[Feedback]) -> String {
    let r = PromptRenderer::new();
    let obs = first(spec, Variant::C0);
    let opts = PromptOptions { history_format: HistoryFormat::Summary, ..Default::default() };
    let out = r.render(spec, &Observation { memory: 5, ..obs }, history, 0, &opts).expect("renders");
    out.messages[1].content.lines().find(|l| l.starts_with("Summary: ")).expect("a summary line").to_string()
}

#[test]
fn the_history_summary_never_averages_amounts_with_choices_or_roles_with_roles() {
    // Regression (instrument fidelity): the bargaining summary averaged proposers' offers (0 to
    // 100 points) with responders' accept/reject (choice 0 or 1) into one "average decision".
    let spec = EnvSpec::Bargaining(BargainParams { memory: 5, ..Default::default() });
    let stage = |round, role, own, other, payoff| Feedback {
        round,
        own: vec![(role, own)],
        others: vec![other],
        partner: Some(1),
        payoff,
    };
    let history = vec![
        stage(1, Role::Proposer, Action::Amount(40), Action::Choice(0), 60.0),
        stage(2, Role::Responder, Action::Choice(1), Action::Amount(10), 0.0),
        stage(3, Role::Proposer, Action::Amount(30), Action::Choice(1), 0.0),
        stage(4, Role::Responder, Action::Choice(0), Action::Amount(50), 50.0),
    ];
    let line = summary_line(&spec, &history);
    assert!(!line.contains("your average decision"), "{line}");
    assert!(line.contains("average points per game: 27.50"), "{line}");
    assert!(line.contains("as proposer, your average amount: 35.00 over 2 games"), "{line}");
    assert!(line.contains("as responder, you chose accept in 1 of 2 games, reject in 1 of 2 games"), "{line}");

    // Public goods with punishment: contributions and deductions are summarised apart.
    let spec = EnvSpec::PublicGoods(PgParams { punishment: true, ..Default::default() });
    let history: Vec<Feedback> = (1..=2)
        .map(|round| Feedback {
            round,
            own: vec![
                (Role::Contributor, Action::Amount(10 * i64::from(round))),
                (Role::Punisher, Action::Allocation(vec![0, 2, 1])),
            ],
            others: vec![Action::Amount(5), Action::Amount(5), Action::Amount(5)],
            partner: None,
            payoff: 20.0,
        })
        .collect();
    let line = summary_line(&spec, &history);
    assert!(line.contains("as contributor, your average amount: 15.00 over 2 rounds"), "{line}");
    assert!(line.contains("as punisher, your average total assigned: 3.00 over 2 rounds"), "{line}");
}
