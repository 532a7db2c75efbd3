//! Reading a model's reply into a legal action.
//!
//! The reply is read by the project's one reply grammar ([`agora_reply`], which the transcript
//! audit's segmenter reads by too): deliberation blocks (`<think>…</think>` and the like) are
//! removed first; then the first JSON object in the reply is read and its answer field checked
//! against the action space, or a short bare answer. Only legal actions are accepted: anything
//! else is reported, never repaired.
//!
//! A reply the server cut at the token limit is read by [`parse_cut_reply`]: the fields that
//! were complete before the cut count, and nothing after them is guessed.

use agora_environments::{Action, ActionSpace};
pub use agora_reply::strip_deliberation;
use agora_reply::{answer_keys, bare_answer, cut_string, first_object, partial_object};

/// What a reply said.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseOutcome {
    /// A legal action, with the optional free-text reason (recorded, never used for play).
    Parsed {
        /// The action read from the answer field.
        action: Action,
        /// The reply's `reason` field, if it gave one.
        reason: Option<String>,
    },
    /// No answer could be read.
    Unparsable(String),
    /// An answer was read but is not a legal action.
    Illegal(String),
    /// The reply was cut at the token limit before its answer was complete.
    Truncated(String),
}

impl ParseOutcome {
    /// Status word for transcripts.
    pub fn status(&self) -> &'static str {
        match self {
            ParseOutcome::Parsed { .. } => "ok",
            ParseOutcome::Unparsable(_) => "unparsable",
            ParseOutcome::Illegal(_) => "illegal",
            ParseOutcome::Truncated(_) => "truncated",
        }
    }
}

fn as_integer(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        }
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn normalise(s: &str) -> String {
    s.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == '*').trim().to_lowercase()
}

/// The keys a free-text reason is read from.
const REASON_KEYS: [&str; 3] = ["reason", "reasoning", "explanation"];

/// Reads `field` (or the usual synonyms) of the reply as an action of `space`.
pub fn parse_reply(raw: &str, space: &ActionSpace, field: &str) -> ParseOutcome {
    let text = strip_deliberation(raw);
    let object = first_object(&text);
    let (value, reason) = match &object {
        Some((_, _, m)) => {
            let v = answer_keys(field).iter().find_map(|k| m.get(*k)).cloned();
            let reason = REASON_KEYS.iter().find_map(|k| m.get(*k)).and_then(|r| r.as_str()).map(str::to_string);
            match v {
                Some(v) => (v, reason),
                None => return ParseOutcome::Unparsable(format!("no `{field}` field in the JSON object")),
            }
        }
        // No JSON: accept a bare answer (a label or a number) and nothing else.
        None if bare_answer(&text).is_some() => (serde_json::Value::String(text.clone()), None),
        None => return ParseOutcome::Unparsable("no JSON object in the reply".into()),
    };
    legal(&value, space, reason)
}

/// What a reason cut at the token limit is marked with, after the text that came through.
pub const CUT_MARK: &str = " [cut at the token limit]";

/// Reads a reply the server cut at the token limit (`finish_reason: "length"`). Where the
/// answer field was complete before the cut (a JSON string closed, a number followed by a
/// delimiter, an array closed), the answer stands: a legal one is `Parsed`, and a reason the cut
/// fell in is kept with [`CUT_MARK`] after it. Where the answer itself was cut, or never came
/// (a deliberation block or a `reasoning` field that ran out of tokens), the outcome is
/// `Truncated`, to be asked again like an unparsable reply. A bare answer outside JSON is not
/// accepted from a cut reply: it may be a cut label or number.
pub fn parse_cut_reply(raw: &str, space: &ActionSpace, field: &str) -> ParseOutcome {
    let text = strip_deliberation(raw);
    if first_object(&text).is_some() {
        if let out @ (ParseOutcome::Parsed { .. } | ParseOutcome::Illegal(_)) = parse_reply(&text, space, field) {
            return out;
        }
    }
    let Some(partial) = partial_object(&text) else {
        return ParseOutcome::Truncated("cut at the token limit before any JSON object".into());
    };
    let keys = answer_keys(field);
    let Some(value) = keys.iter().find_map(|k| partial.fields.iter().find(|(f, _)| f == k)).map(|(_, v)| v.clone())
    else {
        return ParseOutcome::Truncated(format!("cut at the token limit before the `{field}` field was complete"));
    };
    let complete = REASON_KEYS.iter().find_map(|k| partial.fields.iter().find(|(f, _)| f == k));
    let reason = match (complete, &partial.cut) {
        (Some((_, r)), _) => r.as_str().map(str::to_string),
        (None, Some((key, rest))) if REASON_KEYS.contains(&key.as_str()) => {
            Some(format!("{}{CUT_MARK}", cut_string(rest)))
        }
        _ => None,
    };
    legal(&value, space, reason)
}

/// Checks an answer value against the action space: a legal action with the reason, or why not.
fn legal(value: &serde_json::Value, space: &ActionSpace, reason: Option<String>) -> ParseOutcome {
    let action = match space {
        ActionSpace::Choice { labels } => {
            let Some(s) = value.as_str() else {
                return ParseOutcome::Illegal(format!("expected one of the labels, got {value}"));
            };
            let wanted = normalise(s);
            match labels.iter().position(|l| normalise(l) == wanted) {
                Some(i) => Action::Choice(i as u32),
                None => return ParseOutcome::Illegal(format!("`{s}` is not one of: {}", labels.join(", "))),
            }
        }
        ActionSpace::Amount { .. } => match as_integer(value) {
            Some(a) => Action::Amount(a),
            None => return ParseOutcome::Illegal(format!("expected a whole number, got {value}")),
        },
        ActionSpace::Allocation { .. } => {
            match value.as_array().map(|a| a.iter().map(as_integer).collect::<Option<Vec<i64>>>()) {
                Some(Some(v)) => Action::Allocation(v),
                _ => return ParseOutcome::Illegal(format!("expected a list of whole numbers, got {value}")),
            }
        }
    };
    if space.contains(&action) {
        ParseOutcome::Parsed { action, reason }
    } else {
        ParseOutcome::Illegal(format!("{} is outside the legal range", action.encode()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice() -> ActionSpace {
        ActionSpace::Choice { labels: vec!["Option J".to_string(), "Option F".to_string()].into() }
    }

    #[test]
    fn reads_json_with_reason() {
        let out = parse_reply(r#"{"action": "Option F", "reason": "it pays"}"#, &choice(), "action");
        assert_eq!(out, ParseOutcome::Parsed { action: Action::Choice(1), reason: Some("it pays".into()) });
    }

    #[test]
    fn strips_think_blocks_before_parsing() {
        let raw = "<think>I should pick {\"action\": \"Option F\"} maybe</think>\n{\"action\": \"option j\"}";
        assert_eq!(
            parse_reply(raw, &choice(), "action"),
            ParseOutcome::Parsed { action: Action::Choice(0), reason: None }
        );
        assert_eq!(strip_deliberation("<think>unfinished"), "");
        assert_eq!(strip_deliberation("reasoning here</think>{\"a\":1}"), "{\"a\":1}");
    }

    #[test]
    fn markers_inside_json_strings_are_text_and_case_folding_keeps_offsets() {
        let raw = r#"{"action": "Option J", "reason": "no <think> here, nor </think>"}"#;
        assert_eq!(
            parse_reply(raw, &choice(), "action"),
            ParseOutcome::Parsed { action: Action::Choice(0), reason: Some("no <think> here, nor </think>".into()) }
        );
        // `İ` lowercases to three bytes; offsets must still index the reply itself.
        assert_eq!(strip_deliberation("{{İ</think>"), "");
        assert_eq!(strip_deliberation("İ<THINK>x</Think>{\"a\": 1}"), "İ{\"a\": 1}");
    }

    #[test]
    fn code_fences_and_prose_around_json() {
        let raw = "Sure! ```json\n{\"choice\": 17}\n``` Good luck.";
        assert_eq!(
            parse_reply(raw, &ActionSpace::Amount { min: 11, max: 20 }, "action"),
            ParseOutcome::Parsed { action: Action::Amount(17), reason: None }
        );
    }

    #[test]
    fn illegal_and_unparsable_are_told_apart() {
        assert_eq!(
            parse_reply(r#"{"action": 25}"#, &ActionSpace::Amount { min: 11, max: 20 }, "action").status(),
            "illegal"
        );
        assert_eq!(parse_reply(r#"{"action": "Option Q"}"#, &choice(), "action").status(), "illegal");
        assert_eq!(
            parse_reply("I refuse to play this game, it is unethical and also long.", &choice(), "action").status(),
            "unparsable"
        );
        assert_eq!(parse_reply(r#"{"action": "Option"#, &choice(), "action").status(), "unparsable");
        assert_eq!(parse_reply(r#"{"other": 1}"#, &choice(), "action").status(), "unparsable");
    }

    #[test]
    fn allocations_need_the_right_length() {
        let s = ActionSpace::Allocation { targets: 3, max_each: 10 };
        assert_eq!(
            parse_reply(r#"{"action": [0, 2, 10]}"#, &s, "action"),
            ParseOutcome::Parsed { action: Action::Allocation(vec![0, 2, 10]), reason: None }
        );
        assert_eq!(parse_reply(r#"{"action": [0, 2]}"#, &s, "action").status(), "illegal");
    }

    #[test]
    fn a_cut_reply_keeps_only_what_was_complete_before_the_cut() {
        let amount = ActionSpace::Amount { min: 0, max: 200 };
        // The answer complete, the reason cut: the decision stands, the reason is marked.
        assert_eq!(
            parse_cut_reply(r#"{"action": "Option F", "reason": "the other \"might"#, &choice(), "action"),
            ParseOutcome::Parsed { action: Action::Choice(1), reason: Some(format!("the other \"might{CUT_MARK}")) }
        );
        assert_eq!(
            parse_cut_reply(r#"{"action": 150, "reason": "x\u00"#, &amount, "action"),
            ParseOutcome::Parsed { action: Action::Amount(150), reason: Some(format!("x{CUT_MARK}")) }
        );
        // A number is complete only once something follows it: `15` may have been `150`.
        assert_eq!(parse_cut_reply(r#"{"action": 15"#, &amount, "action").status(), "truncated");
        assert_eq!(
            parse_cut_reply(r#"{"action": 15,"#, &amount, "action"),
            ParseOutcome::Parsed { action: Action::Amount(15), reason: None }
        );
        // A label is complete once its string closes; a cut one is not read, nor a bare one.
        assert_eq!(
            parse_cut_reply(r#"{"action": "Option J""#, &choice(), "action"),
            ParseOutcome::Parsed { action: Action::Choice(0), reason: None }
        );
        assert_eq!(parse_cut_reply(r#"{"action": "Option"#, &choice(), "action").status(), "truncated");
        assert_eq!(parse_cut_reply("Option J", &choice(), "action").status(), "truncated");
        // Reasoning first (step by step) that ran out of tokens, or a deliberation block.
        assert_eq!(parse_cut_reply(r#"{"reasoning": "If I cooperate"#, &choice(), "action").status(), "truncated");
        assert_eq!(
            parse_cut_reply("<think>Let me see {\"action\": \"Option F\"", &choice(), "action").status(),
            "truncated"
        );
        // Reasoning complete, then the answer: it stands, and the reasoning is not marked cut.
        assert_eq!(
            parse_cut_reply(
                r#"{"reasoning": "safe", "action": "Option F", "reason": "ok", "extra"#,
                &choice(),
                "action"
            ),
            ParseOutcome::Parsed { action: Action::Choice(1), reason: Some("ok".into()) }
        );
        // A complete object read normally; a complete but illegal answer stays illegal.
        assert_eq!(
            parse_cut_reply(r#"{"action": "Option J", "reason": "fine"} and then some"#, &choice(), "action"),
            ParseOutcome::Parsed { action: Action::Choice(0), reason: Some("fine".into()) }
        );
        assert_eq!(parse_cut_reply(r#"{"action": 250, "reason": "to"#, &amount, "action").status(), "illegal");
        assert_eq!(parse_cut_reply("", &choice(), "action").status(), "truncated");
    }

    #[test]
    fn a_reply_cut_anywhere_reads_its_own_answer_or_none() {
        // Cut at every character: the answer read is the full reply's, or there is none.
        let amount = ActionSpace::Amount { min: 0, max: 200 };
        let alloc = ActionSpace::Allocation { targets: 3, max_each: 10 };
        let cases = [
            (r#"<think>ça dépend…</think>{"action": 150, "reason": "weil \"ß\" — ok"}"#, &amount, Action::Amount(150)),
            (r#"{"reasoning": "İ think", "action": "Option F", "reason": "x"}"#, &choice(), Action::Choice(1)),
            (r#"Sure: {"action": [10, 2, 0], "reason": "fair"}"#, &alloc, Action::Allocation(vec![10, 2, 0])),
        ];
        for (full, space, want) in cases {
            for (end, _) in full.char_indices().chain([(full.len(), ' ')]) {
                match parse_cut_reply(&full[..end], space, "action") {
                    ParseOutcome::Parsed { action, .. } => assert_eq!(action, want, "cut at {end}: {}", &full[..end]),
                    ParseOutcome::Truncated(_) => {}
                    other => panic!("cut at {end}: {other:?} from {}", &full[..end]),
                }
            }
        }
    }

    #[test]
    fn renamed_answer_field() {
        assert_eq!(
            parse_reply(r#"{"decision_value": 12}"#, &ActionSpace::Amount { min: 0, max: 20 }, "decision_value"),
            ParseOutcome::Parsed { action: Action::Amount(12), reason: None }
        );
    }
}
