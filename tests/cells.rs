//! One check per perturbation cell: every cell file of `scenarios/cells/` is read, and for
//! every game it runs in (stag hunt and coordination included) the baseline and the cell are
//! rendered at the same decisions and compared. The difference must be exactly the cell's one
//! factor: persona-bullets changes only the persona block, reversed-actions only the order of
//! the labels, framing only the two labels, named-agents only the agent labels,
//! history-summary only adds the summary line, step-by-step only adds the reasoning
//! instruction and the schema's `reasoning` property, and so on. A cell file whose factor has
//! no check here fails the test. It reads the cells and their factors through the scenarios and
//! engine crates, so the rules of where a cell runs are the ones a study uses.

use std::collections::BTreeMap;
use std::path::Path;

use agora_agents::llm::prompt::{agent_label, paradigm, Rendered};
use agora_agents::llm::{Framing, HistoryFormat, PersonaFormat, PromptOptions, PromptRenderer};
use agora_engine::spec::prompt_options;
use agora_engine::Factor;
use agora_environments::bargaining::{BargainGame, BargainParams};
use agora_environments::naming::NgParams;
use agora_environments::public_goods::PgParams;
use agora_environments::{Action, EnvKind, EnvSpec, Feedback, Frame, Observation, Variant};
use agora_scenarios::cell::{self, Cell};
use agora_test_support::word_bag;
use rand::SeedableRng;

/// Every shipped cell file, parsed and validated as a study resolves it.
fn cell_files() -> Vec<Cell> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells");
    cell::load_dir(&dir).expect("the shipped cells parse").into_iter().map(|(_, c)| c).collect()
}

/// Every game in its canonical form, and the supplementary arms the instrument runs cells in.
fn specs() -> Vec<EnvSpec> {
    EnvKind::ALL
        .iter()
        .map(|k| EnvSpec::canonical(*k))
        .chain([
            EnvSpec::PublicGoods(PgParams { punishment: true, ..Default::default() }),
            EnvSpec::Bargaining(BargainParams { game: BargainGame::Dictator, ..Default::default() }),
            EnvSpec::Bargaining(BargainParams { game: BargainGame::Trust, ..Default::default() }),
            EnvSpec::NamingGame(NgParams { shuffled_pool: true, ..Default::default() }),
        ])
        .collect()
}

/// The decisions compared: per role, the first decision without history and the first with
/// at least six stages of history, played with sampled actions.
fn scenes(spec: &EnvSpec) -> Vec<(usize, Observation, Vec<Feedback>)> {
    scenes_in(spec, Variant::C0)
}

/// [`scenes`] under one payoff version.
fn scenes_in(spec: &EnvSpec, variant: Variant) -> Vec<(usize, Observation, Vec<Feedback>)> {
    let mut env = spec.build(variant).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut seen: BTreeMap<usize, Vec<Feedback>> = BTreeMap::new();
    let mut out: Vec<(usize, Observation, Vec<Feedback>)> = Vec::new();
    let mut taken = std::collections::BTreeSet::new();
    for _ in 0..2_000 {
        if env.is_done() {
            break;
        }
        let requests = env.pending(&mut rng);
        for r in &requests {
            let history = seen.get(&r.agent).cloned().unwrap_or_default();
            let key = (r.observation.role, history.len() >= 6);
            if (history.is_empty() || history.len() >= 6) && taken.insert(key) {
                out.push((r.agent, r.observation.clone(), history));
            }
        }
        let actions: Vec<(usize, Action)> =
            requests.iter().map(|r| (r.agent, r.observation.space.sample(&mut rng))).collect();
        for (seat, fb) in env.resolve(&actions, &mut rng).expect("legal").feedback {
            seen.entry(seat).or_default().push(fb);
        }
    }
    assert!(!out.is_empty(), "{spec:?}: no decision");
    out
}

/// A rendered decision as compared: both messages and the schema's text.
struct Shown {
    system: String,
    user: String,
    schema: String,
    rendered: Rendered,
}

fn show(
    r: &PromptRenderer,
    spec: &EnvSpec,
    seat: usize,
    obs: &Observation,
    h: &[Feedback],
    o: &PromptOptions,
) -> Shown {
    let rendered = r.render(spec, obs, h, seat, o).unwrap_or_else(|e| panic!("{spec:?} {o:?}: {e}"));
    Shown {
        system: rendered.messages[0].content.clone(),
        user: rendered.messages[1].content.clone(),
        schema: rendered.schema.to_string(),
        rendered,
    }
}

/// The differing middle of two texts, line by line, after their common first and last lines.
fn middle<'a>(a: &'a str, b: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    (a[prefix..a.len() - suffix].to_vec(), b[prefix..b.len() - suffix].to_vec())
}

fn tokens(text: &str) -> Vec<String> {
    let mut t: Vec<String> = text.split(|c: char| !c.is_alphanumeric()).map(str::to_string).collect();
    t.sort();
    t
}

/// Replaces whole occurrences of each `from[i]` by `to[i]` at once (longest first, so that one
/// label inside another is not hit).
fn replace_all(text: &str, from: &[String], to: &[String]) -> String {
    let mut order: Vec<usize> = (0..from.len()).collect();
    order.sort_by_key(|i| std::cmp::Reverse(from[*i].len()));
    let mut out = text.to_string();
    for i in &order {
        out = out.replace(&from[*i], &format!("\u{1}{i}\u{1}"));
    }
    for i in &order {
        out = out.replace(&format!("\u{1}{i}\u{1}"), &to[*i]);
    }
    out
}

/// The data rows of a history table and the line before the table.
fn table(user: &str) -> Option<(usize, Vec<usize>)> {
    let lines: Vec<&str> = user.lines().collect();
    let sep = lines.iter().position(|l| l.starts_with("|---"))?;
    let rows = (sep + 1..lines.len()).take_while(|i| lines[*i].starts_with('|')).collect();
    Some((sep - 2, rows))
}

/// Checks that `cell` differs from `base` by exactly `factor`; true where it differs at all.
fn check(factor: &Factor, spec: &EnvSpec, obs: &Observation, base: &Shown, cell: &Shown) -> bool {
    let ctx = format!("{factor:?} in {spec:?}, {:?} round {}", obs.role, obs.round);
    let same_user = || assert_eq!(base.user, cell.user, "{ctx}: the user message changed");
    let same_system = || assert_eq!(base.system, cell.system, "{ctx}: the system message changed");
    let same_schema = || assert_eq!(base.schema, cell.schema, "{ctx}: the schema changed");
    let shows_history = base.user.contains("Your last ");
    match factor {
        Factor::PersonaFormat(format) => {
            same_user();
            same_schema();
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!(b.len(), 1, "{ctx}: the persona sentence is one line: {b:?}");
            match format {
                PersonaFormat::Bullets => {
                    assert_eq!(c, vec!["About you:".to_string(), format!("- {}", b[0])], "{ctx}")
                }
                PersonaFormat::Table => {
                    assert_eq!(c[..2], ["| attribute | value |", "|---|---|"], "{ctx}");
                    assert_eq!(
                        word_bag(&c[2..].join(" ")),
                        word_bag(b[0]),
                        "{ctx}: the table says what the sentence says"
                    );
                }
                PersonaFormat::Sentence => panic!("{ctx}: the baseline is not a cell"),
            }
        }
        Factor::PersonaContent(_) => {
            same_user();
            same_schema();
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!((b.len(), c.len()), (1, 1), "{ctx}: only the persona sentence changes: {b:?} {c:?}");
            assert!(b[0].starts_with("You are an adult") && c[0].starts_with("You care"), "{ctx}: {b:?} {c:?}");
        }
        Factor::HistoryFormat(format) => {
            same_system();
            same_schema();
            if !shows_history {
                same_user();
                return false;
            }
            let (b, c) = middle(&base.user, &cell.user);
            match format {
                HistoryFormat::Narrative => {
                    let (_, rows) = table(&base.user).expect("a table");
                    assert!(b.iter().all(|l| l.starts_with('|') || l.starts_with("Your last ")), "{ctx}: {b:?}");
                    assert!(c[0].starts_with("What has happened so far"), "{ctx}: {c:?}");
                    assert_eq!(c.len() - 1, rows.len(), "{ctx}: one sentence per row: {c:?}");
                    assert!(
                        c[1..].iter().all(|l| l.starts_with(&format!("In {} ", base_unit(obs, spec)))),
                        "{ctx}: {c:?}"
                    );
                }
                HistoryFormat::Summary => {
                    assert!(b.is_empty(), "{ctx}: the summary only adds a line: {b:?}");
                    assert_eq!(c.len(), 1, "{ctx}: {c:?}");
                    assert!(c[0].starts_with("Summary: average points per "), "{ctx}: {c:?}");
                }
                HistoryFormat::Table => panic!("{ctx}: the baseline is not a cell"),
            }
        }
        Factor::ReversedActionOrder => {
            same_user();
            let labels = spec.game().wording(obs.variant).labels.to_vec();
            let shows_labels = obs.labels_shown(false).len() > 1
                || labels.iter().filter(|l| base.system.contains(l.as_str())).count() == labels.len();
            if !shows_labels {
                same_system();
                same_schema();
                return false;
            }
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!(b.len(), c.len(), "{ctx}: {b:?} {c:?}");
            for (x, y) in b.iter().zip(&c) {
                assert_eq!(tokens(x), tokens(y), "{ctx}: only the order changes: {x:?} / {y:?}");
                let blank = vec![String::new(); labels.len()];
                assert_eq!(replace_all(x, &labels, &blank), replace_all(y, &labels, &blank), "{ctx}: {x:?} / {y:?}");
            }
            let enum_of = |s: &Shown| {
                let mut v: Vec<String> =
                    serde_json::from_value(s.rendered.schema["properties"]["action"]["enum"].clone())
                        .unwrap_or_default();
                v.sort();
                v
            };
            assert_eq!(enum_of(base), enum_of(cell), "{ctx}: the schema lists the same labels");
        }
        Factor::NamedAgents => {
            same_system();
            same_schema();
            let seats = spec.game().population().max(2);
            let names: Vec<String> = (0..seats).map(|s| agent_label(s, true)).collect();
            let letters: Vec<String> = (0..seats).map(|s| agent_label(s, false)).collect();
            assert_eq!(replace_all(&cell.user, &names, &letters), base.user, "{ctx}: only the agent labels change");
        }
        Factor::AnswerField(field) => {
            same_user();
            let back = |t: &str| t.replace(&format!("\"{field}\""), "\"action\"");
            assert_eq!(back(&cell.system), base.system, "{ctx}");
            assert_eq!(back(&cell.schema), base.schema, "{ctx}");
            assert_eq!(&cell.rendered.field, field, "{ctx}");
        }
        Factor::Layout(_) => {
            same_schema();
            for (b, c) in [(&base.system, &cell.system), (&base.user, &cell.user)] {
                let split = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
                assert_eq!(split(b), split(c), "{ctx}: only the line breaks change");
            }
        }
        Factor::TaskId(id) => {
            same_user();
            same_schema();
            assert_eq!(cell.system, format!("Task ID: {id}\n{}", base.system), "{ctx}");
        }
        Factor::Opening(opening) => {
            same_user();
            same_schema();
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!(b, ["You are taking part in a study of decision making."], "{ctx}");
            assert_eq!(c, [opening.as_str()], "{ctx}");
        }
        Factor::Framing(framing) => {
            let frame = if *framing == Framing::Risk { Frame::Risk } else { Frame::Moral };
            let framed = spec.game().framing(obs.variant, frame).expect("the game frames");
            let variant: Vec<String> = spec.game().wording(obs.variant).labels.to_vec();
            let to: Vec<String> = framed.labels.iter().map(|l| l.to_string()).collect();
            for (b, c) in [(&base.system, &cell.system), (&base.user, &cell.user), (&base.schema, &cell.schema)] {
                assert_eq!(&replace_all(c, &to, &variant), b, "{ctx}: only the two labels change");
                assert!(variant.iter().all(|l| !c.contains(l.as_str())), "{ctx}: no variant label is left: {c}");
            }
            assert!(to.iter().all(|l| cell.system.contains(l.as_str())), "{ctx}: the rules use the framed labels");
        }
        Factor::StepByStep => {
            same_user();
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!((b.len(), c.len()), (1, 2), "{ctx}: {b:?} {c:?}");
            assert!(c[0].starts_with("Think through the situation step by step"), "{ctx}: {c:?}");
            assert_eq!(c[1].replace("\"reasoning\": \"<your reasoning>\", ", ""), b[0], "{ctx}");
            let mut schema = cell.rendered.schema.clone();
            assert_eq!(
                schema["properties"].as_object().and_then(|p| p.keys().next()).map(String::as_str),
                Some("reasoning")
            );
            assert_eq!(schema["required"][0], "reasoning", "{ctx}");
            schema["properties"].as_object_mut().expect("properties").shift_remove("reasoning");
            schema["required"].as_array_mut().expect("required").remove(0);
            assert_eq!(schema.to_string(), base.schema, "{ctx}: the schema only gains `reasoning`");
        }
        Factor::Temperature(_) | Factor::RecognitionProbe => {
            // Both act beside the decision prompt (the request's temperature; a probe asked
            // once outside the session), never in it.
            same_system();
            same_user();
            same_schema();
            return false;
        }
        Factor::Memory(m) => {
            same_system();
            same_schema();
            if !shows_history {
                same_user();
                return false;
            }
            let (header, rows) = table(&base.user).expect("a table");
            let keep = (*m as usize).min(rows.len());
            let mut expected: Vec<String> = Vec::new();
            for (i, line) in base.user.lines().enumerate() {
                if rows.contains(&i) && rows.iter().position(|r| *r == i).expect("row") < rows.len() - keep {
                    continue;
                }
                expected.push(if i == header {
                    line.replacen(&format!("last {}", rows.len()), &format!("last {keep}"), 1)
                } else {
                    line.to_string()
                });
            }
            assert_eq!(cell.user, expected.join("\n"), "{ctx}: only the window shortens");
        }
        Factor::GroupSize(n) => {
            same_user();
            same_schema();
            let (b, c) = middle(&base.system, &cell.system);
            assert_eq!(b.len(), c.len(), "{ctx}");
            for (x, y) in b.iter().zip(&c) {
                let (tx, ty): (Vec<&str>, Vec<&str>) = (
                    x.split(|c: char| !c.is_alphanumeric()).collect(),
                    y.split(|c: char| !c.is_alphanumeric()).collect(),
                );
                assert_eq!(tx.len(), ty.len(), "{ctx}: {x} / {y}");
                for (p, q) in tx.iter().zip(&ty).filter(|(p, q)| p != q) {
                    assert!(p.parse::<usize>().is_ok() && *q == n.to_string(), "{ctx}: only the size: {p} / {q}");
                }
            }
        }
        Factor::Noise(_) => {
            // Noise acts on the action after it is chosen, never in the prompt.
            same_system();
            same_user();
            same_schema();
        }
        Factor::Priming => {
            same_user();
            same_schema();
            let (b, c) = middle(&base.system, &cell.system);
            assert!(b.is_empty(), "{ctx}: {b:?}");
            assert_eq!(c, [format!("This task is the {}.", paradigm(spec).0)], "{ctx}");
        }
    }
    base.system != cell.system || base.user != cell.user || base.schema != cell.schema
}

fn base_unit(obs: &Observation, spec: &EnvSpec) -> &'static str {
    spec.game().wording(obs.variant).unit
}

#[test]
fn every_cell_changes_exactly_its_one_factor_in_every_game_it_runs_in() {
    let r = PromptRenderer::new();
    let cells = cell_files();
    assert!(cells.len() >= 20, "the perturbation library: {} cells", cells.len());
    let mut ran: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for cell in &cells {
        assert_eq!(cell.factors.len(), 1, "{}: a compound cell needs its own check here", cell.name);
        let factor = &cell.factors[0];
        for spec in specs() {
            let runs = cell.runs_in(&spec);
            if !runs {
                continue;
            }
            let opts = prompt_options(std::slice::from_ref(factor));
            let mut changed = false;
            match factor {
                Factor::GroupSize(n) => {
                    // A different group is a different game from the first decision on: compare
                    // the first decision, rendered under each size.
                    let mut resized = spec.clone();
                    assert!(resized.set_group_size(*n));
                    let mut env = spec.build(Variant::C0).expect("builds");
                    let first = env.pending(&mut rand::rngs::StdRng::seed_from_u64(9)).remove(0);
                    let (seat, obs) = (first.agent, first.observation);
                    let base = show(&r, &spec, seat, &obs, &[], &opts);
                    let cell_shown = show(&r, &resized, seat, &obs, &[], &opts);
                    changed |= check(factor, &spec, &obs, &base, &cell_shown);
                }
                _ => {
                    for (seat, obs, history) in scenes(&spec) {
                        let base = show(&r, &spec, seat, &obs, &history, &PromptOptions::default());
                        let cell_obs = match factor {
                            Factor::Memory(m) => Observation { memory: *m, ..obs.clone() },
                            _ => obs.clone(),
                        };
                        let cell_shown = show(&r, &spec, seat, &cell_obs, &history, &opts);
                        changed |= check(factor, &spec, &obs, &base, &cell_shown);
                    }
                }
            }
            // A cell that acts in the prompt changes it somewhere in every game it runs in.
            let silent = matches!(factor, Factor::Temperature(_) | Factor::RecognitionProbe | Factor::Noise(_));
            assert!(changed || silent, "{}: runs in {spec:?} and renders nothing differently", cell.name);
            ran.entry(cell.name.clone()).or_default().push(spec.kind().as_str().to_string());
        }
    }
    if std::env::var("AGORA_SHOW_CELLS").is_ok() {
        for (cell, games) in &ran {
            println!("{cell}: {}", games.join(", "));
        }
    }
    for cell in &cells {
        assert!(ran.contains_key(&cell.name), "{}: runs in no game", cell.name);
    }
    for kind in [EnvKind::StagHunt, EnvKind::Coordination] {
        assert!(ran["reversed-actions"].contains(&kind.as_str().to_string()), "{kind:?} is covered");
    }
}

#[test]
fn framing_runs_only_where_both_frames_relabel_the_same_role_and_actions() {
    let games: Vec<EnvKind> = EnvKind::ALL
        .iter()
        .copied()
        .filter(|k| Factor::Framing(Framing::Moral).applies_to(&EnvSpec::canonical(*k)))
        .collect();
    assert_eq!(games, vec![EnvKind::PrisonersDilemma], "the framing cells run in the prisoner's dilemma only");
    for spec in specs() {
        for v in Variant::ALL {
            let (moral, risk) = (spec.game().framing(v, Frame::Moral), spec.game().framing(v, Frame::Risk));
            assert_eq!(moral.is_some(), risk.is_some(), "{spec:?} {v:?}: a game frames in both frames or neither");
            if let (Some(m), Some(r)) = (moral, risk) {
                assert_eq!(m.role, r.role, "{spec:?} {v:?}: both frames address the same role");
                assert_eq!(spec.game().wording(v).labels.len(), 2, "{spec:?} {v:?}: two actions relabelled");
            }
        }
    }
}

/// The first place in `text` where a sentence runs into the next without a space or a line
/// break ("any other game.In each game"), with the characters around it.
fn run_together(text: &str) -> Option<String> {
    let c: Vec<char> = text.chars().collect();
    c.windows(3)
        .position(|w| (w[0].is_alphanumeric() || w[0] == ')') && matches!(w[1], '.' | '!' | '?') && w[2].is_uppercase())
        .map(|i| c[i.saturating_sub(30)..(i + 30).min(c.len())].iter().collect())
}

#[test]
fn no_sentence_runs_into_the_next_in_any_game_variant_or_cell() {
    assert_eq!(run_together("any other game.In each game").as_deref(), Some("any other game.In each game"));
    assert_eq!(run_together("an additional 20.Your goal").as_deref(), Some("an additional 20.Your goal"));
    assert_eq!(run_together("a share of 0.5 of it. Then 3.2 more."), None);
    let r = PromptRenderer::new();
    let cells = cell_files();
    let mut rendered = 0;
    for spec in specs() {
        for variant in [Variant::C0, Variant::C1, Variant::C2, Variant::C3] {
            for (seat, obs, history) in scenes_in(&spec, variant) {
                let mut options = vec![("baseline".to_string(), PromptOptions::default())];
                for cell in cells.iter().filter(|c| c.runs_in(&spec)) {
                    options.push((cell.name.clone(), prompt_options(&cell.factors)));
                }
                for (name, o) in &options {
                    let shown = show(&r, &spec, seat, &obs, &history, o);
                    for text in [&shown.system, &shown.user] {
                        if let Some(at) = run_together(text) {
                            panic!("{spec:?} {variant:?} {name}: a sentence runs into the next: …{at}…");
                        }
                    }
                    rendered += 1;
                }
            }
        }
    }
    assert!(rendered > 500, "{rendered} prompts rendered");
}

#[test]
fn the_public_goods_re_skins_reach_the_rules_text() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::PublicGoods(PgParams { punishment: true, ..Default::default() });
    let rules = |variant: Variant| {
        let (seat, obs, history) = scenes_in(&spec, variant).remove(0);
        show(&r, &spec, seat, &obs, &history, &PromptOptions::default()).system
    };
    let c0 = rules(Variant::C0);
    assert!(c0.contains("20 points") && c0.contains("group account"), "{c0}");
    for (variant, unit, account) in [(Variant::C1, "credits", "garden fund"), (Variant::C2, "tokens", "harbour fund")] {
        let text = rules(variant);
        assert!(text.contains(unit) && text.contains(account), "{variant:?}: {text}");
        assert!(!text.contains("group account"), "{variant:?}: the canonical pool's name is gone: {text}");
        let points = text.replace("deduction point", "");
        assert!(!points.contains(" point"), "{variant:?}: the canonical unit is gone: {text}");
    }
}

/// Every decision's system and user text and schema in `variant`, for one game.
fn every_text(r: &PromptRenderer, spec: &EnvSpec, variant: Variant) -> Vec<String> {
    scenes_in(spec, variant)
        .into_iter()
        .map(|(seat, obs, history)| {
            let s = show(r, spec, seat, &obs, &history, &PromptOptions::default());
            format!("{}\n{}\n{}", s.system, s.user, s.schema)
        })
        .collect()
}

#[test]
fn the_bargaining_re_skins_reach_the_rules_questions_and_labels() {
    let r = PromptRenderer::new();
    for game in [BargainGame::Ultimatum, BargainGame::Dictator, BargainGame::Trust] {
        let spec = EnvSpec::Bargaining(BargainParams { game, ..Default::default() });
        for text in every_text(&r, &spec, Variant::C0) {
            assert!(text.contains(" points"), "{game:?} C0 keeps points: {text}");
        }
        for (variant, unit, labels) in
            [(Variant::C1, " dollars", ["agree", "refuse"]), (Variant::C2, " coins", ["take it", "leave it"])]
        {
            for text in every_text(&r, &spec, variant) {
                assert!(text.contains(unit), "{game:?} {variant:?}: {text}");
                assert!(!text.contains(" point"), "{game:?} {variant:?}: the canonical unit is gone: {text}");
                if game == BargainGame::Ultimatum {
                    assert!(labels.iter().all(|l| text.contains(l)), "{variant:?}: its own labels: {text}");
                    assert!(!text.contains("accept") && !text.contains("reject"), "{variant:?}: {text}");
                }
            }
        }
    }
}

#[test]
fn the_money_request_re_skins_reach_the_rules_and_the_question() {
    let r = PromptRenderer::new();
    let spec = EnvSpec::canonical(EnvKind::MoneyRequest);
    for text in every_text(&r, &spec, Variant::C0) {
        assert!(text.contains("request an amount of money") && text.contains("How much do you request?"), "{text}");
    }
    for (variant, words) in [(Variant::C1, ["price", "dollars"]), (Variant::C2, ["tokens", "claim"])] {
        for text in every_text(&r, &spec, variant) {
            assert!(words.iter().all(|w| text.contains(w)), "{variant:?}: {text}");
            assert!(!text.contains("request") && !text.contains("money"), "{variant:?}: C0's words are gone: {text}");
        }
    }
}
