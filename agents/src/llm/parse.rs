//! Reading a model's reply into a legal action.
//!
//! Deliberation blocks (`<think>…</think>` and the like) are removed first; then the first JSON
//! object in the reply is read and its answer field checked against the action space. Only
//! legal actions are accepted: anything else is reported, never repaired.

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
}

impl ParseOutcome {
    /// Status word for transcripts.
    pub fn status(&self) -> &'static str {
        match self {
            ParseOutcome::Parsed { .. } => "ok",
            ParseOutcome::Unparsable(_) => "unparsable",
            ParseOutcome::Illegal(_) => "illegal",
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

/// Reads `field` (or the usual synonyms) of the reply as an action of `space`.
pub fn parse_reply(raw: &str, space: &ActionSpace, field: &str) -> ParseOutcome {
    let text = strip_deliberation(raw);
    let object = first_object(&text);
    let (value, reason) = match &object {
        Some(m) => {
            let v = [field, "action", "answer", "choice", "decision"].iter().find_map(|k| m.get(*k)).cloned();
            let reason = ["reason", "reasoning", "explanation"]
                .iter()
                .find_map(|k| m.get(*k))
                .and_then(|r| r.as_str())
                .map(str::to_string);
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
        ActionSpace::Amount { .. } => match as_integer(&value) {
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
    fn renamed_answer_field() {
        assert_eq!(
            parse_reply(r#"{"decision_value": 12}"#, &ActionSpace::Amount { min: 0, max: 20 }, "decision_value"),
            ParseOutcome::Parsed { action: Action::Amount(12), reason: None }
        );
    }
}
