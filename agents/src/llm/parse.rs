//! Reading a model's reply into a legal action.
//!
//! Deliberation blocks (`<think>…</think>` and the like) are removed first; then the first JSON
//! object in the reply is read and its answer field checked against the action space. Only
//! legal actions are accepted: anything else is reported, never repaired.
//!
//! A reply the server cut at the token limit is read by [`parse_cut_reply`]: the fields that
//! were complete before the cut count, and nothing after them is guessed.

use agora_environments::{Action, ActionSpace};

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

const MARKERS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
];

/// Removes deliberation blocks; an opened block that never closes swallows the rest, and a
/// closing marker without an opening one drops everything before it. A marker inside a string
/// of a JSON object (a reason that mentions `<think>`) is text, not a block.
pub fn strip_deliberation(raw: &str) -> String {
    let mut s = raw.to_string();
    for (open, close) in MARKERS {
        loop {
            // ASCII case folding keeps byte offsets: full Unicode lowercasing can change a
            // character's length (`İ` becomes three bytes), and the offsets index `s`.
            let lower = s.to_ascii_lowercase();
            if !lower.contains(open) && !lower.contains(close) {
                break;
            }
            let quoted = inside_json_strings(&s);
            let find = |marker: &str| lower.match_indices(marker).map(|(i, _)| i).find(|i| !quoted[*i]);
            match (find(open), find(close)) {
                (Some(o), Some(c)) if c > o => s.replace_range(o..c + close.len(), ""),
                (Some(o), None) => s.truncate(o),
                (None, Some(c)) | (Some(_), Some(c)) => s.replace_range(..c + close.len(), ""),
                (None, None) => break,
            }
        }
    }
    s.trim().to_string()
}

/// Tracks whether a scan is inside a JSON string literal.
#[derive(Default)]
struct StringLiteral {
    open: bool,
    escaped: bool,
}

impl StringLiteral {
    /// Feeds one character of an open literal (it closes on an unescaped quote); false, and
    /// nothing changed, when no literal is open.
    fn consume(&mut self, c: char) -> bool {
        if !self.open {
            return false;
        }
        match (self.escaped, c) {
            (true, _) => self.escaped = false,
            (false, '\\') => self.escaped = true,
            (false, '"') => self.open = false,
            _ => {}
        }
        true
    }
}

/// For each byte of `s`: whether it lies inside a string literal within braces (prose quotes
/// outside any `{…}` do not count).
fn inside_json_strings(s: &str) -> Vec<bool> {
    let mut mask = vec![false; s.len()];
    let (mut depth, mut literal) = (0u32, StringLiteral::default());
    for (i, c) in s.char_indices() {
        if literal.consume(c) {
            mask[i..i + c.len_utf8()].fill(true);
            continue;
        }
        match c {
            '"' if depth > 0 => literal.open = true,
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    mask
}

/// The first balanced `{…}` that parses as a JSON object.
fn first_object(text: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let bytes: Vec<char> = text.chars().collect();
    for start in (0..bytes.len()).filter(|i| bytes[*i] == '{') {
        let (mut depth, mut literal) = (0i32, StringLiteral::default());
        for end in start..bytes.len() {
            let c = bytes[end];
            if literal.consume(c) {
                continue;
            }
            match c {
                '"' => literal.open = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        let candidate: String = bytes[start..=end].iter().collect();
                        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&candidate) {
                            return Some(m);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    None
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

/// The keys an answer is read from, the requested field first.
fn answer_keys(field: &str) -> [&str; 5] {
    [field, "action", "answer", "choice", "decision"]
}

/// The keys a free-text reason is read from.
const REASON_KEYS: [&str; 3] = ["reason", "reasoning", "explanation"];

/// Reads `field` (or the usual synonyms) of the reply as an action of `space`.
pub fn parse_reply(raw: &str, space: &ActionSpace, field: &str) -> ParseOutcome {
    let text = strip_deliberation(raw);
    let object = first_object(&text);
    let (value, reason) = match &object {
        Some(m) => {
            let v = answer_keys(field).iter().find_map(|k| m.get(*k)).cloned();
            let reason = REASON_KEYS.iter().find_map(|k| m.get(*k)).and_then(|r| r.as_str()).map(str::to_string);
            match v {
                Some(v) => (v, reason),
                None => return ParseOutcome::Unparsable(format!("no `{field}` field in the JSON object")),
            }
        }
        // No JSON: accept a bare answer (a label or a number) and nothing else.
        None if !text.is_empty() && text.len() <= 40 && !text.contains('{') => {
            (serde_json::Value::String(text.clone()), None)
        }
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

/// A JSON object cut short: the key–value pairs complete before the cut, in order, and the key
/// and raw remaining text of the value the cut fell in, if it fell in one.
struct PartialObject {
    fields: Vec<(String, serde_json::Value)>,
    cut: Option<(String, String)>,
}

/// Reads the first `{` of `text` field by field until the text ends or stops being JSON.
fn partial_object(text: &str) -> Option<PartialObject> {
    /// One JSON value at the start of `s`, and the bytes it took.
    fn next_value(s: &str) -> Option<(serde_json::Value, usize)> {
        let mut values = serde_json::Deserializer::from_str(s).into_iter::<serde_json::Value>();
        match values.next() {
            Some(Ok(v)) => Some((v, values.byte_offset())),
            _ => None,
        }
    }
    let mut rest = &text[text.find('{')? + 1..];
    let mut out = PartialObject { fields: Vec::new(), cut: None };
    loop {
        rest = rest.trim_start();
        let Some((serde_json::Value::String(key), used)) = rest.starts_with('"').then(|| next_value(rest)).flatten()
        else {
            return Some(out);
        };
        rest = rest[used..].trim_start();
        let Some(after_colon) = rest.strip_prefix(':') else { return Some(out) };
        rest = after_colon.trim_start();
        match next_value(rest) {
            // A string, array or object is complete once closed; a number, `true`, `false` or
            // `null` only once something follows it (the cut may have fallen inside `150`).
            Some((v, used)) if v.is_string() || v.is_array() || v.is_object() || used < rest.len() => {
                out.fields.push((key, v));
                rest = &rest[used..];
            }
            _ => {
                out.cut = Some((key, rest.to_string()));
                return Some(out);
            }
        }
        rest = rest.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None => return Some(out),
        }
    }
}

/// The text of a JSON string literal cut short (`"Because the other`), unescaped where possible.
fn cut_string(raw: &str) -> String {
    let body = raw.strip_prefix('"').unwrap_or(raw);
    // Drop up to a few trailing characters of an escape sequence the cut fell in.
    for drop in 0..=6.min(body.len()) {
        let Some(head) = body.get(..body.len() - drop) else { continue };
        if let Ok(s) = serde_json::from_str::<String>(&format!("\"{head}\"")) {
            return s;
        }
    }
    body.to_string()
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
