//! Prompt rendering: every environment and role renders; the system message is static across
//! seats and rounds (prefix caching); each cell factor changes what it should.

use agora_agents::llm::{Framing, HistoryFormat, Layout, PersonaFormat, PromptOptions, PromptRenderer};
use agora_environments::bargaining::{BargainGame, BargainParams, FixedOffers};
use agora_environments::money_request::MrParams;
use agora_environments::naming::NgParams;
use agora_environments::prisoners_dilemma::PdParams;
use agora_environments::public_goods::PgParams;
use agora_environments::{Action, EnvSpec, Feedback, Observation, Role, Variant};
use rand::SeedableRng;

fn specs() -> Vec<EnvSpec> {
    vec![
        EnvSpec::PrisonersDilemma(PdParams::default()),
        EnvSpec::PublicGoods(PgParams { punishment: true, ..Default::default() }),
        EnvSpec::Bargaining(BargainParams::default()),
        EnvSpec::Bargaining(BargainParams { game: BargainGame::Dictator, ..Default::default() }),
        EnvSpec::Bargaining(BargainParams { game: BargainGame::Trust, ..Default::default() }),
        EnvSpec::Bargaining(BargainParams { fixed_offers: Some(FixedOffers::default()), ..Default::default() }),
        EnvSpec::MoneyRequest(MrParams::default()),
        EnvSpec::NamingGame(NgParams::default()),
        EnvSpec::NamingGame(NgParams { shuffled_pool: true, ..Default::default() }),
    ]
    .into_iter()
    // Every registered game in its canonical form too: a new game is covered here for free.
    .chain(agora_environments::EnvKind::ALL.iter().map(|k| EnvSpec::canonical(*k)))
    .collect()
}

/// The first observations of every stage kind of a game, answered by sampling.
fn observations(spec: &EnvSpec, variant: Variant) -> Vec<(usize, Observation)> {
    let mut env = spec.build(variant).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let mut out = Vec::new();
    for _ in 0..4 {
        if env.is_done() {
            break;
        }
        let req = env.pending(&mut rng);
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, r.observation.space.sample(&mut rng))).collect();
        out.extend(req.into_iter().map(|r| (r.agent, r.observation)));
        env.resolve(&acts, &mut rng).expect("legal");
    }
    out
}

fn history() -> Vec<Feedback> {
    vec![Feedback {
        round: 1,
        own: vec![(Role::Player, Action::Choice(0))],
        others: vec![Action::Choice(1)],
        partner: Some(1),
        payoff: 0.0,
    }]
}

#[test]
fn every_environment_and_role_renders_in_every_variant() {
    let r = PromptRenderer::new();
    for spec in specs() {
        for v in Variant::ALL {
            for (seat, obs) in observations(&spec, v) {
                let out = r
                    .render(&spec, &obs, &[], seat, &PromptOptions::default())
                    .unwrap_or_else(|e| panic!("{spec:?} {v:?}: {e}"));
                assert_eq!(out.messages.len(), 2);
                assert!(out.messages[0].content.contains("JSON"), "{}", out.messages[0].content);
                assert!(!out.messages[1].content.is_empty());
                if std::env::var("AGORA_SHOW_PROMPTS").is_ok() && v == Variant::C0 {
                    println!(
                        "---- {:?} seat {seat} {:?}\n[system]\n{}\n[user]\n{}\n",
                        spec.kind(),
                        obs.role,
                        out.messages[0].content,
                        out.messages[1].content
                    );
                }
            }
        }
    }
}

#[test]
fn system_message_is_static_across_seats_and_rounds() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::PrisonersDilemma(PdParams::default());
    let obs = observations(&spec, Variant::C0);
    let a = r.render(&spec, &obs[0].1, &[], 0, &PromptOptions::default()).expect("renders");
    let b = r.render(&spec, &obs[3].1, &history(), 1, &PromptOptions::default()).expect("renders");
    assert_eq!(a.messages[0], b.messages[0], "rules, payoffs and persona come first and do not change");
    assert_ne!(a.messages[1], b.messages[1]);
    assert!(b.messages[1].content.contains("Round 2 of 10"), "{}", b.messages[1].content);
    assert!(b.messages[1].content.contains("| 1 | Option J | Option F | 0 |"), "{}", b.messages[1].content);
}

#[test]
fn cell_factors_change_the_prompt() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::PrisonersDilemma(PdParams::default());
    let obs = &observations(&spec, Variant::C0)[0].1;
    let base = r.render(&spec, obs, &history(), 0, &PromptOptions::default()).expect("renders");
    let text = |o: PromptOptions| {
        let m = r.render(&spec, obs, &history(), 0, &o).expect("renders").messages;
        format!("{}\n{}", m[0].content, m[1].content)
    };
    let base_text = format!("{}\n{}", base.messages[0].content, base.messages[1].content);
    assert!(base_text.contains("Option J or Option F"));
    assert!(text(PromptOptions { reversed_actions: true, ..Default::default() }).contains("Option F or Option J"));
    assert!(text(PromptOptions { named_agents: true, ..Default::default() }).contains("participant Alice"));
    assert!(text(PromptOptions { persona_format: PersonaFormat::Bullets, ..Default::default() })
        .contains("\n- You are an adult"));
    assert!(text(PromptOptions { persona_format: PersonaFormat::Table, ..Default::default() })
        .contains("| attribute | value |"));
    assert!(text(PromptOptions { history_format: HistoryFormat::Narrative, ..Default::default() })
        .contains("In round 1, you chose Option J"));
    assert!(text(PromptOptions { history_format: HistoryFormat::Summary, ..Default::default() })
        .contains("Summary: average points"));
    assert!(text(PromptOptions { framing: Framing::Moral, ..Default::default() }).contains("act fairly or exploit"));
    assert!(text(PromptOptions { framing: Framing::Risk, ..Default::default() })
        .contains("the riskier option or the safer option"));
    assert!(text(PromptOptions { priming: true, ..Default::default() }).contains("prisoner's dilemma"));
    assert!(!base_text.to_lowercase().contains("prisoner"), "the baseline never names the paradigm");
    assert!(text(PromptOptions { task_id: Some("T-0042".into()), ..Default::default() }).starts_with("Task ID: T-0042"));
    assert!(text(PromptOptions { step_by_step: true, ..Default::default() }).contains("step by step"));
    assert!(text(PromptOptions { layout: Layout::Inline, ..Default::default() }).lines().count() <= 2);
    let renamed = r
        .render(&spec, obs, &[], 0, &PromptOptions { answer_field: "selection".into(), ..Default::default() })
        .expect("renders");
    assert!(renamed.messages[0].content.contains("\"selection\""));
    assert_eq!(renamed.schema["required"][0], "selection");
    assert!(text(PromptOptions { opening: Some("Welcome to this session.".into()), ..Default::default() })
        .contains("Welcome to this session."));
}

#[test]
fn schema_matches_the_action_space() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::MoneyRequest(MrParams::default());
    let obs = &observations(&spec, Variant::C0)[0].1;
    let out = r.render(&spec, obs, &[], 0, &PromptOptions::default()).expect("renders");
    assert_eq!(out.schema["properties"]["action"]["minimum"], 11);
    assert_eq!(out.schema["properties"]["action"]["maximum"], 20);
}

#[test]
fn every_game_shows_its_options_by_label_in_rules_history_and_schema() {
    // Regression (game registry): a game whose choices had no labels showed "0"/"1" in the
    // history table. Every choice a game offers must appear by its label everywhere.
    let r = PromptRenderer::new();
    for kind in agora_environments::EnvKind::ALL {
        let spec = EnvSpec::canonical(*kind);
        for v in Variant::ALL {
            for (seat, obs) in observations(&spec, v) {
                let agora_environments::ActionSpace::Choice { labels } = &obs.space else { continue };
                let past = vec![Feedback {
                    round: 1,
                    own: vec![(obs.role, Action::Choice(0))],
                    others: vec![Action::Choice(1)],
                    partner: Some(1),
                    payoff: 1.0,
                }];
                let out = r.render(&spec, &obs, &past, seat, &PromptOptions::default()).expect("renders");
                let user = &out.messages[1].content;
                // A one-shot game (memory 0) shows no earlier game, so no history to label.
                assert!(
                    obs.memory == 0 || (user.contains(&labels[0]) && user.contains(&labels[1])),
                    "{kind:?} {v:?}: history lacks labels:\n{user}"
                );
                assert!(out.messages[0].content.contains(&labels[1]), "{kind:?} {v:?}: rules lack the labels");
                let shown: Vec<String> = serde_json::from_value(out.schema["properties"]["action"]["enum"].clone())
                    .expect("a choice has an enum");
                assert_eq!(shown.len(), labels.len());
            }
        }
    }
}

#[test]
fn the_answer_schema_asks_for_reasoning_before_the_answer() {
    // Regression (instrument fidelity): the schema's properties were a sorted map, so a server
    // that generates properties in schema order (vLLM's guided decoding) wrote `action` before
    // `reasoning`, and the step-by-step cell measured nothing. The order sent is the order
    // written: reasoning, the answer, the optional after-the-fact reason.
    let r = PromptRenderer::new();
    let spec = EnvSpec::PrisonersDilemma(PdParams::default());
    let (seat, obs) = observations(&spec, Variant::C0).remove(0);
    let opts = PromptOptions { step_by_step: true, ..Default::default() };
    let out = r.render(&spec, &obs, &[], seat, &opts).expect("renders");
    let request = agora_agents::llm::ChatRequest {
        messages: out.messages.clone(),
        temperature: 0.7,
        max_tokens: 256,
        seed: None,
        schema: Some(out.schema.clone()),
        chat_template_kwargs: None,
    };
    let sent = serde_json::to_string(&request).expect("serialises");
    let at = |key: &str| sent.find(&format!("\"{key}\":{{")).unwrap_or_else(|| panic!("{key} in {sent}"));
    assert!(at("reasoning") < at("action") && at("action") < at("reason"), "{sent}");
    let required = &out.schema["required"];
    assert_eq!(required, &serde_json::json!(["reasoning", "action"]));
    // The instructions show the same order.
    let system = &out.messages[0].content;
    assert!(system.find("\"reasoning\"").expect("shown") < system.find("\"action\"").expect("shown"), "{system}");
}

#[test]
fn the_persona_table_carries_the_words_of_the_persona_sentence() {
    // Regression (instrument fidelity): the table cell added "priority: none stated" and
    // dropped "adult", changing content as well as layout. The table must say what the
    // sentence says, in every persona content.
    use agora_agents::llm::PersonaContent;
    let r = PromptRenderer::new();
    let spec = EnvSpec::PrisonersDilemma(PdParams::default());
    let obs = &observations(&spec, Variant::C0)[0].1;
    let words = agora_test_support::word_bag;
    for content in PersonaContent::ALL {
        let system = |format| {
            let o = PromptOptions { persona_format: format, persona_content: *content, ..Default::default() };
            r.render(&spec, obs, &[], 0, &o).expect("renders").messages[0].content.clone()
        };
        let sentence_prompt = system(PersonaFormat::Sentence);
        let table_prompt = system(PersonaFormat::Table);
        let opening = "You are taking part in a study of decision making.";
        let sentence = sentence_prompt.lines().find(|l| !l.is_empty() && *l != opening).expect("persona line");
        let rows: Vec<&str> = table_prompt
            .lines()
            .filter(|l| l.starts_with('|') && !l.contains("attribute") && !l.starts_with("|---"))
            .collect();
        assert_eq!(words(&rows.join(" ")), words(sentence), "{content:?}: table {rows:?} against {sentence:?}");
    }
}

#[test]
fn one_shot_and_fixed_offer_prompts_say_only_what_is_true() {
    let r = PromptRenderer::new();
    let text = |spec: &EnvSpec| -> Vec<String> {
        observations(spec, Variant::C0)
            .iter()
            .map(|(seat, obs)| {
                let p = r.render(spec, obs, &history(), *seat, &PromptOptions::default()).expect("renders");
                p.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n")
            })
            .collect()
    };
    // The battery: one-shot, no earlier game shown even when the agent has played one.
    for t in text(&EnvSpec::Bargaining(BargainParams::default())) {
        assert!(t.contains("your role is drawn at random") && t.contains("played on its own"), "{t}");
        assert!(!t.contains("randomly matched") && !t.contains("Your last"), "{t}");
    }
    // The fixed-offer arm: only responders are asked, and the offers come from the study.
    for t in
        text(&EnvSpec::Bargaining(BargainParams { fixed_offers: Some(FixedOffers::default()), ..Default::default() }))
    {
        assert!(t.contains("set in advance by the study") && t.contains("You are offered"), "{t}");
        assert!(!t.contains("your role is drawn at random") && !t.contains("The proposer offers you"), "{t}");
    }
    // A larger population is rematched at random, and the rules say so.
    for t in text(&EnvSpec::MoneyRequest(MrParams { population: 6, ..Default::default() })) {
        assert!(t.contains("6 participants play 50 separate games; each game draws two of them at random"), "{t}");
    }
}

/// A seat's memo reuses its system message only where a fresh rendering would give the same
/// text: over every game, variant and prompt cell, each seat's decisions rendered in order with
/// one memo equal the same decisions rendered from nothing, and a rendering with a stale memo
/// (another seat's, another game's) is still right.
#[test]
fn a_seats_memo_renders_what_a_fresh_rendering_renders() {
    use agora_agents::llm::prompt::SystemMemo;
    let r = PromptRenderer::new();
    let options = [
        PromptOptions::default(),
        PromptOptions { reversed_actions: true, ..Default::default() },
        PromptOptions { framing: Framing::Moral, ..Default::default() },
        PromptOptions { layout: Layout::Inline, step_by_step: true, ..Default::default() },
        PromptOptions { history_format: HistoryFormat::Summary, priming: true, ..Default::default() },
    ];
    let mut shared = SystemMemo::default();
    let mut reused = 0;
    for spec in specs() {
        for v in Variant::ALL {
            let obs = observations(&spec, v);
            for opts in &options {
                let mut memos: std::collections::BTreeMap<usize, SystemMemo> = Default::default();
                for (seat, o) in &obs {
                    let fresh = r.render(&spec, o, &history(), *seat, opts);
                    let memo = memos.entry(*seat).or_default();
                    let before = format!("{memo:?}");
                    let kept = r.render_with(&spec, o, &history(), *seat, opts, memo);
                    assert_eq!(kept, fresh, "{spec:?} {v:?} seat {seat} {opts:?}");
                    reused += usize::from(format!("{memo:?}") == before);
                    // A memo left by anything else never leaks into this rendering.
                    let other = r.render_with(&spec, o, &history(), *seat, opts, &mut shared);
                    assert_eq!(other, fresh, "{spec:?} {v:?} seat {seat} {opts:?} with a stale memo");
                }
            }
        }
    }
    assert!(reused > 100, "the memo was reused only {reused} times");
}

/// The seat's memo keeps its system message while the game, the options and the observation
/// (its round aside) stay the same: that holds only if no game's system message reads the
/// round. Checked over the first twelve stages of every game, variant and option set.
#[test]
fn no_system_message_reads_the_round() {
    let r = PromptRenderer::new();
    let options = [
        PromptOptions::default(),
        PromptOptions { reversed_actions: true, ..Default::default() },
        PromptOptions { framing: Framing::Moral, ..Default::default() },
    ];
    let mut compared = 0;
    for spec in specs() {
        for v in Variant::ALL {
            let Ok(mut env) = spec.build(v) else { continue };
            let mut rng = rand::rngs::StdRng::seed_from_u64(9);
            let mut seen: Vec<(usize, Observation)> = Vec::new();
            for _ in 0..12 {
                if env.is_done() {
                    break;
                }
                let req = env.pending(&mut rng);
                let acts: Vec<(usize, Action)> =
                    req.iter().map(|q| (q.agent, q.observation.space.sample(&mut rng))).collect();
                seen.extend(req.into_iter().map(|q| (q.agent, q.observation)));
                env.resolve(&acts, &mut rng).expect("legal");
            }
            for opts in &options {
                for (i, (seat, a)) in seen.iter().enumerate() {
                    for (other, b) in &seen[i + 1..] {
                        if other != seat || a.round == b.round || *a != (Observation { round: a.round, ..b.clone() }) {
                            continue;
                        }
                        let (Ok(ra), Ok(rb)) =
                            (r.render(&spec, a, &[], *seat, opts), r.render(&spec, b, &[], *seat, opts))
                        else {
                            continue;
                        };
                        assert_eq!(
                            ra.messages[0], rb.messages[0],
                            "{spec:?} {v:?} {opts:?}: rounds {} and {}",
                            a.round, b.round
                        );
                        assert_eq!(ra.schema, rb.schema);
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared > 100, "only {compared} pairs compared");
}
