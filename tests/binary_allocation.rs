//! The binary-allocation game of the SUVA audit paper across the crates: the game's state enumeration and
//! the analysis crate's copy of it agree on every id; the prompt shows a state as the seed's
//! example prompt does; and a study played end to end against the fake server, whose replies
//! follow a known rule, is recovered by the motive regression from the stored rows alone.

use std::sync::Arc;

use agora_agents::llm::{PromptOptions, PromptRenderer};
use agora_audit::motives::{self, MotiveState};
use agora_environments::games::binary_allocation::{
    self as ba, observed_state, variants, BaParams, Cue, History, Treatment, CHOOSER, ID_STRIDE,
};
use agora_environments::{Action, EnvSpec, Variant};
use agora_test_support::{FakeReply, FakeServer};
use rand::SeedableRng;
use rusqlite::Connection;

mod common;
use common::{agora, assert_every_slot_accounted, text};

#[test]
fn the_game_and_the_analysis_enumerate_the_same_states() {
    let mut states = 0;
    for id in 0..5 * ID_STRIDE {
        let (g, a) = (ba::state(id), motives::state(id));
        assert_eq!(g.is_some(), a.is_some(), "id {id}");
        let (Some(g), Some(a)) = (g, a) else { continue };
        states += 1;
        assert_eq!(g.treatment.as_str(), a.treatment.as_str(), "id {id}");
        assert_eq!((g.index, g.config, g.levels), (a.index, a.config, a.levels), "id {id}");
        assert_eq!(g.cue, a.cue, "id {id}");
        assert_eq!(g.history.map(|h| h == History::Helped), a.helped(), "id {id}");
        assert_eq!(g.better_for_a(), a.prosocial_option(), "id {id}");
    }
    assert_eq!(states, 240 + 1920 + 240 + 240);
    assert_eq!(ba::payoff_grid(), motives::payoff_grid());
    assert_eq!(ba::reciprocity_grid(), motives::reciprocity_grid());
}

#[test]
fn the_motive_signs_are_the_same_at_every_variants_payoffs() {
    for v in Variant::ALL {
        let levels = &variants().get(v).levels;
        for id in 0..Treatment::Distributional.states() {
            let [a1, b1, a2, b2] = ba::state(id).expect("state").payoffs(levels).map(|x| x as f64);
            assert_eq!(motives::motive_signs(a1, b1, a2, b2), motives::state(id).expect("state").signs(), "{v:?} {id}");
        }
    }
}

/// The first observation of `spec` whose state passes `want`, played with B1 until it comes.
fn first_state(spec: &EnvSpec, want: impl Fn(&ba::State) -> bool) -> agora_environments::Observation {
    let mut env = spec.build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    loop {
        let r = env.pending(&mut rng).remove(0);
        if want(&observed_state(&r.observation).expect("state")) {
            return r.observation;
        }
        env.resolve(&[(CHOOSER, Action::Choice(0))], &mut rng).expect("legal");
    }
}

#[test]
fn the_prompt_shows_the_cue_and_both_options_and_nothing_about_the_goal() {
    let spec = EnvSpec::BinaryAllocation(BaParams { treatment: Treatment::Group, replicates: 2 });
    // The seed's example: (200, 400, 600, 200) with a shared hometown.
    let obs = first_state(&spec, |s| s.levels == [1, 2, 3, 1] && s.cue == Some((Cue::Hometown, true)));
    let r = PromptRenderer::new();
    let out = r.render(&spec, &obs, &[], CHOOSER, &PromptOptions::default()).expect("renders");
    let (system, user) = (&out.messages[0].content, &out.messages[1].content);
    assert!(
        system.contains(
            "You will make 3840 separate decisions. In each, you are person B and choose one of two options, \
             B1 or B2; each option gives some points to person A and some to you. Person A makes no choice."
        ),
        "{system}"
    );
    assert!(!system.contains("earn as many"), "the seed's prompt sets no goal: {system}");
    assert!(user.starts_with("You are participant B; the other participant is A."), "{user}");
    assert!(
        user.ends_with(
            "You and person A grew up in the same town. Under B1, person A receives 200 points and you receive 400 \
             points. Under B2, person A receives 600 points and you receive 200 points. Which option do you choose?"
        ),
        "{user}"
    );
    assert_eq!(out.schema["properties"]["action"]["enum"], serde_json::json!(["B1", "B2"]));
    // The action-order cell lists the options the other way round in the rules and the answer
    // format; the payoffs keep their order.
    let reversed = r
        .render(&spec, &obs, &[], CHOOSER, &PromptOptions { reversed_actions: true, ..Default::default() })
        .expect("renders");
    assert!(reversed.messages[0].content.contains("B2 or B1"), "{}", reversed.messages[0].content);
    assert_eq!(&reversed.messages[1].content, user);
    // A reciprocity history in place of the cue.
    let spec = EnvSpec::BinaryAllocation(BaParams { treatment: Treatment::IndirectReciprocity, replicates: 1 });
    let obs = first_state(&spec, |s| s.history == Some(History::Harmed));
    let user =
        r.render(&spec, &obs, &[], CHOOSER, &PromptOptions::default()).expect("renders").messages[1].content.clone();
    assert!(
        user.contains("person A chose the option that gave another person fewer points and person A more."),
        "{user}"
    );
}

/// The payoffs a prompt shows: (a1, b1, a2, b2).
fn shown_payoffs(prompt: &str) -> Option<[i64; 4]> {
    let mut numbers = Vec::new();
    for label in ["Under B1, ", "Under B2, "] {
        let rest = &prompt[prompt.find(label)? + label.len()..];
        let sentence = &rest[..rest.find('.')?];
        numbers.extend(sentence.split_whitespace().filter_map(|w| w.parse::<i64>().ok()));
    }
    numbers.try_into().ok()
}

/// Replies with the option paying person B more; where both pay B the same, with no legal
/// answer, so that the decision falls back and is read as no choice (a = 0, as Leng & Yuan code
/// a missing choice): the purely self-interested chooser of the SUVA audit paper §240.4.1, indifferent on
/// ties, for which E[a] = si exactly.
fn selfish() -> agora_test_support::Behaviour {
    Arc::new(|_, body| {
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        match shown_payoffs(user) {
            Some(p) if p[1] > p[3] => FakeReply::Content("{\"action\": \"B1\", \"reason\": \"more for me\"}".into()),
            Some(p) if p[3] > p[1] => FakeReply::Content("{\"action\": \"B2\", \"reason\": \"more for me\"}".into()),
            _ => FakeReply::Content("Both give me the same.".into()),
        }
    })
}

/// Writes a one-block binary-allocation study at `study` (a path in `dir`) whose one model is
/// `model` (its declaration's identity fields, `{endpoint}` standing for the fake server's), runs
/// it into `dir/ba.sqlite` and returns the store.
fn run_ba(dir: &std::path::Path, study: &str, model: &str, server: &FakeServer) -> std::path::PathBuf {
    let model = model.replace("{endpoint}", &server.endpoint());
    let study = dir.join(study);
    std::fs::create_dir_all(study.parent().expect("a directory")).expect("directory");
    std::fs::write(
        &study,
        format!(
            r#"Study(version: 1, name: "ba", master_seed: 3, runs: 1,
                models: [Model({model}, concurrency: 16, timeout_s: 120.0, max_attempts: 1, max_retries: 4,
                               backoff_ms: 5)],
                blocks: [Block(name: "distributional", environment: BinaryAllocation(replicates: 1),
                               model_rosters: true, rosters: [])])"#
        ),
    )
    .expect("write");
    let store = dir.join("ba.sqlite");
    let out = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    store
}

#[test]
fn the_motive_regression_recovers_a_selfish_model_from_the_stored_rows() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = rt.block_on(FakeServer::start(selfish())).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    for sub in ["studies", "cells"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
    }
    let store = run_ba(
        dir.path(),
        "studies/ba.ron",
        r#"name: "selfish", family: "Fake", endpoints: ["{endpoint}"], served_id: "selfish-1",
           quantisation: "none", notes: "fake server""#,
        &server,
    );
    assert_every_slot_accounted(&store);

    // The regression reads the stored rows only.
    let c = Connection::open(&store).expect("open");
    let samples = motives::read_store(&c).expect("reads");
    assert_eq!(samples.len(), 1);
    let s = &samples[0];
    assert_eq!((s.roster.as_str(), s.variant.as_str(), s.cell.as_str()), ("selfish", "C0", "baseline"));
    assert_eq!((s.arm.as_str(), s.decisions.len()), ("distributional", 240));
    let report = motives::motive_report(&s.decisions, 0.05).expect("fits");
    // 4 own payoffs × 12 ordered pairs of different payoffs for A: 48 ties, each a fallback.
    assert_eq!(report.no_choice, 48);
    assert_eq!(report.motives.clusters, 240, "clustered by payoff configuration");
    for (name, (coef, want)) in
        report.motives.names.iter().zip(report.motives.coef.iter().zip([0.0, 1.0, 0.0, 0.0, 0.0]))
    {
        assert!((coef - want).abs() < 1e-9, "{name}: {coef}, want {want}");
    }
    // `agora audit` writes the same fit for every binary-allocation condition of the store.
    let audit_dir = dir.path().join("audit");
    let out = agora(&["audit", "--store", store.to_str().expect("utf8"), "--out", audit_dir.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    // This fake writes no reasoning: the audit says so instead of leaving empty tables unexplained.
    assert!(text(&out).contains("no codeable reasoning in this store"), "{}", text(&out));
    let fits: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(audit_dir.join("motives.json")).expect("motives.json"))
            .expect("json");
    let fit = &fits[0]["report"]["motives"];
    assert_eq!(fits[0]["roster"], "selfish");
    assert_eq!(fit["coef"].as_array().expect("coef").len(), 5);
    assert!((fit["coef"][1].as_f64().expect("beta_I") - 1.0).abs() < 1e-9, "{fit}");
    assert_eq!(fit["clusters"], 240);

    // Each decision's state, read back from its context, is the state its prompt showed and
    // the payoffs the store records for person A (seat 0) and person B (seat 1).
    let mut st = c
        .prepare(
            "SELECT d.value, d.context, pa.payoff, pb.payoff, t.messages_json
             FROM decisions d JOIN runs r USING (run_id)
             JOIN payoffs pa ON pa.run_id = d.run_id AND pa.step = d.step AND pa.seat = 0
             JOIN payoffs pb ON pb.run_id = d.run_id AND pb.step = d.step AND pb.seat = 1
             JOIN transcripts t ON t.run_id = d.run_id AND t.seat = d.seat AND t.slot = d.round - 1
                  AND t.kind = 'decision' AND t.attempt = 1
             WHERE r.roster = 'selfish' AND d.seat = 1",
        )
        .expect("query");
    let rows: Vec<(f64, f64, f64, f64, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(rows.len(), 240);
    let levels = &variants().get(Variant::C0).levels;
    for (value, context, pay_a, pay_b, messages) in rows {
        let s = ba::state(context as u32).expect("the context names a state");
        let p = s.payoffs(levels);
        let request: serde_json::Value = serde_json::from_str(&messages).expect("request json");
        let shown = shown_payoffs(request["messages"][1]["content"].as_str().expect("user message"));
        assert_eq!(shown, Some(p), "the prompt showed the recorded state");
        let (a, b) = if value == 0.0 { (p[0], p[1]) } else { (p[2], p[3]) };
        assert_eq!((pay_a, pay_b), (a as f64, b as f64));
    }
    let metrics: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM metrics m JOIN runs r USING (run_id)
             WHERE r.environment = 'binary-allocation' AND m.name IN ('prosocial', 'b1_share')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(metrics, 2, "one run, two metrics");
}

#[test]
fn the_study_asks_for_reasoning_before_the_answer_and_the_audit_codes_it() {
    // Every request must ask for a `reasoning` field before the answer, as the SUVA audit
    // paper's prompt does; the fake reasons, then chooses the option better for itself.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let behaviour: agora_test_support::Behaviour = Arc::new(|_, body| {
        let schema = &body["response_format"]["json_schema"]["schema"];
        let required: Vec<&str> =
            schema["required"].as_array().map(|r| r.iter().filter_map(|v| v.as_str()).collect()).unwrap_or_default();
        if required.first() != Some(&"reasoning") {
            return FakeReply::Content(format!("no reasoning asked for: {required:?}"));
        }
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let mine = shown_payoffs(user).map_or("B1", |p| if p[3] > p[1] { "B2" } else { "B1" });
        FakeReply::Content(
            serde_json::json!({"reasoning": "I want the most points for myself. That matters most to me.", "action": mine})
                .to_string(),
        )
    });
    let server = rt.block_on(FakeServer::start(behaviour)).expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    // The shipped study's blocks, one replicate of the distributional treatment.
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies/binary-allocation.ron"),
    )
    .expect("the shipped study");
    assert!(!shipped.contains("step-by-step"), "the baseline itself asks for reasoning, not a cell");
    let store = run_ba(
        dir.path(),
        "ba.ron",
        r#"name: "reasoner", family: "Fake", endpoints: ["{endpoint}"], served_id: "reasoner-1""#,
        &server,
    );
    let audit_dir = dir.path().join("audit");
    let out = agora(&["audit", "--store", store.to_str().expect("utf8"), "--out", audit_dir.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("240 responses audited"), "{}", text(&out));
    assert!(text(&out).contains("240 with pre-action reasoning (coded)"), "{}", text(&out));
    assert!(!text(&out).contains("no codeable reasoning"), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    let sentences: i64 = c.query_row("SELECT COUNT(*) FROM audit_sentences", [], |r| r.get(0)).expect("count");
    assert_eq!(sentences, 480, "two sentences coded per decision");
}
