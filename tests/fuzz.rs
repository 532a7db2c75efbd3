//! Property tests with arbitrary inputs (proptest, which shrinks a failing input to a minimal
//! one): the reply parser and the study-file parser never panic, the reply parser accepts only
//! legal actions and reads every legal action however a model wraps it, and every rejected
//! study is an error that names the file and makes `agora` exit with code 2.
//!
//! Case counts are proptest's defaults unless a test says otherwise; `PROPTEST_CASES` raises
//! them for a longer hunt.

use std::path::Path;

use agora_agents::llm::{parse_reply, strip_deliberation, ParseOutcome};
use agora_environments::{Action, ActionSpace};
use agora_scenarios::{Plan, Study};
use proptest::prelude::*;

mod common;
use common::text;

/// Characters replies and study files are made of, weighted towards their syntax, with any
/// Unicode scalar value mixed in (case mapping that changes byte length included).
fn syntax_heavy_text(max: usize) -> impl Strategy<Value = String> {
    let syntax = prop::sample::select(
        "{}[]():,\"'\\ \n\tabcdefghijklmnopqrstuvwxyzAJF0123456789-.<>/_|".chars().collect::<Vec<_>>(),
    );
    let piece = prop_oneof![
        6 => syntax.prop_map(|c| c.to_string()),
        1 => any::<char>().prop_map(|c| c.to_string()),
        1 => prop::sample::select(vec!["İ", "ẞ", "Σ", "ﬃ", "K", "Ⱥ"]).prop_map(str::to_string),
        1 => prop::sample::select(vec![
            "<think>", "</think>", "<THINK>", "<thinking>", "</thinking>", "<reasoning>", "</reasoning>",
            "<|begin_of_thought|>", "<|end_of_thought|>", "{\"action\": ", "```json", "```",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..max).prop_map(|v| v.concat())
}

fn spaces() -> Vec<ActionSpace> {
    vec![
        ActionSpace::Choice { labels: vec!["Option J".to_string(), "Option F".to_string()].into() },
        ActionSpace::Choice { labels: vec!["W".to_string(), "Q".to_string(), "name 3".to_string()].into() },
        ActionSpace::Amount { min: 11, max: 20 },
        ActionSpace::Amount { min: 0, max: 100 },
        ActionSpace::Allocation { targets: 3, max_each: 10 },
    ]
}

/// A legal action of the space, and how a model might write it as a JSON value.
fn legal_answer(space: &ActionSpace) -> BoxedStrategy<(Action, String)> {
    match space.clone() {
        ActionSpace::Choice { labels } => (0..labels.len(), any::<bool>())
            .prop_map(move |(i, upper)| {
                let l = if upper { labels[i].to_uppercase() } else { labels[i].clone() };
                (Action::Choice(i as u32), serde_json::Value::String(l).to_string())
            })
            .boxed(),
        ActionSpace::Amount { min, max } => (min..=max, any::<bool>())
            .prop_map(|(a, quoted)| (Action::Amount(a), if quoted { format!("\"{a}\"") } else { a.to_string() }))
            .boxed(),
        ActionSpace::Allocation { targets, max_each } => prop::collection::vec(0..=max_each, targets)
            .prop_map(|v| {
                let json = serde_json::to_string(&v).expect("serialises");
                (Action::Allocation(v), json)
            })
            .boxed(),
    }
}

/// Free text a model might write as its reason: anything, escaped as a JSON string.
fn reason() -> impl Strategy<Value = String> {
    syntax_heavy_text(40).prop_map(|r| serde_json::Value::String(r).to_string())
}

proptest! {
    #[test]
    fn reply_parser_is_total_and_accepts_only_legal_actions(
        raw in prop_oneof![syntax_heavy_text(160), any::<String>()],
    ) {
        let _ = strip_deliberation(&raw);
        for space in spaces() {
            if let ParseOutcome::Parsed { action, .. } = parse_reply(&raw, &space, "action") {
                prop_assert!(space.contains(&action), "accepted an illegal {:?} from {:?}", action, raw);
            }
        }
    }

    #[test]
    fn reply_parser_reads_every_legal_action_however_it_is_wrapped(
        (space, (action, value)) in prop::sample::select(spaces())
            .prop_flat_map(|s| (Just(s.clone()), legal_answer(&s))),
        key in prop::sample::select(vec!["action", "answer", "choice", "decision"]),
        reason in prop::option::of(reason()),
        reason_first in any::<bool>(),
        before in prop::sample::select(vec!["", "Sure!\n", "<think>I could say {\"action\": 0}</think>", "```json\n"]),
        after in prop::sample::select(vec!["", "\n```", " Good luck!", "\n{\"action\": \"later object\"}"]),
    ) {
        let answer = format!("\"{key}\": {value}");
        let body = match (&reason, reason_first) {
            (Some(r), true) => format!("{{\"reason\": {r}, {answer}}}"),
            (Some(r), false) => format!("{{{answer}, \"reason\": {r}}}"),
            (None, _) => format!("{{{answer}}}"),
        };
        let raw = format!("{before}{body}{after}");
        match parse_reply(&raw, &space, "action") {
            ParseOutcome::Parsed { action: got, reason: got_reason } => {
                prop_assert_eq!(got, action, "{}", raw);
                let want: Option<String> = reason.map(|r| serde_json::from_str(&r).expect("a JSON string"));
                prop_assert_eq!(got_reason, want, "{}", raw);
            }
            other => prop_assert!(false, "{:?} from {:?}", other, raw),
        }
    }

    #[test]
    fn illegal_answers_are_refused_never_repaired(
        (space, value) in prop_oneof![
            (-1_000i64..11).prop_union(21..1_000).prop_map(|a| (ActionSpace::Amount { min: 11, max: 20 }, a.to_string())),
            prop::collection::vec(-5i64..20, 0..6)
                .prop_filter("not a legal allocation", |v| v.len() != 3 || v.iter().any(|x| !(0..=10).contains(x)))
                .prop_map(|v| (ActionSpace::Allocation { targets: 3, max_each: 10 }, format!("{v:?}"))),
            "[a-zA-Z ]{0,12}"
                .prop_filter("not a label", |s| !["option j", "option f"].contains(&s.trim().to_lowercase().as_str()))
                .prop_map(|s| (spaces()[0].clone(), serde_json::Value::String(s).to_string())),
        ],
    ) {
        let raw = format!("{{\"action\": {value}}}");
        let out = parse_reply(&raw, &space, "action");
        prop_assert_eq!(out.status(), "illegal", "{:?} from {}", out, raw);
    }
}

/// The shipped classical study, read once for every case that edits it.
fn shipped_study() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(root.join("scenarios/studies/classical.ron")).expect("shipped study")
    })
}

/// An edit of a text: delete, duplicate or replace one character (positions as fractions of
/// the length, so that they shrink towards the start).
#[derive(Clone, Debug)]
enum Edit {
    Delete(f64),
    Duplicate(f64),
    Replace(f64, char),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let at = 0.0..1.0f64;
    let c = prop_oneof![
        4 => prop::sample::select("{}[]():,\"'\\ \n-.0123456789abcxyz_".chars().collect::<Vec<_>>()),
        1 => any::<char>(),
    ];
    prop::collection::vec(
        prop_oneof![
            at.clone().prop_map(Edit::Delete),
            at.clone().prop_map(Edit::Duplicate),
            (at, c).prop_map(|(a, c)| Edit::Replace(a, c)),
        ],
        1..6,
    )
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        if chars.is_empty() {
            break;
        }
        let i = |f: f64| ((f * chars.len() as f64) as usize).min(chars.len() - 1);
        match *e {
            Edit::Delete(f) => {
                let k = i(f);
                chars.remove(k);
            }
            Edit::Duplicate(f) => {
                let k = i(f);
                chars.insert(k, chars[k]);
            }
            Edit::Replace(f, c) => {
                let k = i(f);
                chars[k] = c;
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn study_parser_is_total_and_every_rejection_names_the_file(
        text in prop_oneof![
            3 => edits().prop_map(|e| apply(shipped_study(), &e)),
            1 => syntax_heavy_text(300),
        ],
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let studies = dir.path().join("studies");
        std::fs::create_dir_all(&studies).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("cells")).expect("mkdir");
        let path = studies.join("fuzzed.ron");
        let _ = Study::parse(&path, &text);
        std::fs::write(&path, &text).expect("write");
        match Plan::load(&path, None) {
            Ok(plan) => prop_assert!(plan.runs.iter().all(|r| !r.seats.is_empty())),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("fuzzed.ron") || msg.contains("cells"), "{}", msg);
            }
        }
    }
}

proptest! {
    // Each case starts the binary; a few dozen are enough to hold the exit-code contract.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn agora_check_exits_0_or_2_on_any_edit_of_a_study(e in edits()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let studies = dir.path().join("studies");
        std::fs::create_dir_all(&studies).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("cells")).expect("mkdir");
        let path = studies.join("edited.ron");
        std::fs::write(&path, apply(shipped_study(), &e)).expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
            .args(["check", path.to_str().expect("utf8")])
            .output()
            .expect("agora runs");
        let t = text(&out);
        match out.status.code() {
            Some(0) => prop_assert!(t.contains("valid"), "{}", t),
            Some(2) => prop_assert!(t.contains("edited.ron") || t.contains("cells"), "{}", t),
            other => prop_assert!(false, "exit {:?}: {}", other, t),
        }
    }
}

/// The answer the audit's segmenter locates, read as an action of `space` the way the parser
/// reads its answer value.
fn segmented_action(raw: &str, space: &ActionSpace, field: &str) -> Option<Action> {
    let s = agora_audit::segment_reply(raw, field, false);
    let value = s.answer?;
    // The value as the parser would find it: a JSON object with the field alone.
    let json = serde_json::json!({ field: value }).to_string();
    match parse_reply(&json, space, field) {
        ParseOutcome::Parsed { action, .. } => Some(action),
        _ => None,
    }
}

proptest! {
    /// One reply grammar: for any reply, the answer the transcript audit's segmenter locates
    /// is the one the agents' parser plays, and a reply the segmenter finds malformed gives
    /// the parser no answer at all.
    #[test]
    fn the_segmenter_locates_the_answer_the_parser_plays(raw in syntax_heavy_text(120), which in 0usize..3) {
        let space = &spaces()[which % spaces().len()];
        let field = "action";
        let parsed = match parse_reply(&raw, space, field) {
            ParseOutcome::Parsed { action, .. } => Some(action),
            _ => None,
        };
        let seg = agora_audit::segment_reply(&raw, field, false);
        if let Some(a) = &parsed {
            prop_assert_eq!(Some(a.clone()), segmented_action(&raw, space, field), "{:?}", raw);
        }
        if seg.form == agora_audit::ReplyForm::Malformed {
            prop_assert!(parsed.is_none(), "{:?}", raw);
        }
    }

    /// The same on replies built the way models write them: deliberation, prose, a JSON
    /// object with the answer under the field or a synonym, and a trailing rationale.
    #[test]
    fn the_grammar_is_shared_on_model_shaped_replies(
        think in prop::option::of("[a-z {}\"<>/]{0,20}"),
        pre in "[A-Za-z .{}\"]{0,20}",
        key in prop::sample::select(vec!["action", "answer", "choice", "decision", "other"]),
        amount in 0i64..30,
        post in "[a-z .]{0,15}",
        fence in any::<bool>(),
    ) {
        let space = ActionSpace::Amount { min: 0, max: 20 };
        let body = format!("{{\"reasoning\": \"{pre}\", \"{key}\": {amount}, \"reason\": \"{post}\"}}");
        let body = if fence { format!("```json\n{body}\n```") } else { body };
        let raw = format!("{}{pre} {body} {post}", think.map(|t| format!("<think>{t}</think>")).unwrap_or_default());
        let parsed = match parse_reply(&raw, &space, "action") {
            ParseOutcome::Parsed { action, .. } => Some(action),
            _ => None,
        };
        prop_assert_eq!(parsed.clone(), segmented_action(&raw, &space, "action"), "{:?}", raw);
    }
}
