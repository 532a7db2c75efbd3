//! The reply grammar: how a model's reply is read, in one place.
//!
//! The agents' parser (which action a reply gives) and the transcript audit's segmenter (which
//! text came before the action, and which after) read replies by this grammar, so that what
//! the audit calls the answer is what the game played:
//!
//! 1. **Deliberation blocks** — `<think>…</think>`, `<thinking>…</thinking>`,
//!    `<reasoning>…</reasoning>` and `<|begin_of_thought|>…<|end_of_thought|>`, ASCII
//!    case-insensitive — are found in order ([`deliberation_blocks`]). A marker inside a JSON
//!    string (a reason that mentions `<think>`) is text. An opened block that never closes runs
//!    to the end; a closing marker without an opening one closes a block that began where the
//!    previous block ended (or at the start). [`strip_deliberation`] keeps the text outside.
//! 2. **The answer object** is the first balanced `{…}` outside the blocks that parses as a
//!    JSON object ([`first_object`]); the answer is read from the asked field or, failing that,
//!    from `action`, `answer`, `choice` or `decision`, the first present ([`answer_keys`]).
//! 3. **A bare answer**: a reply without a JSON object whose text outside the blocks is at most
//!    [`BARE_MAX_CHARS`] characters and holds no `{` is itself the answer ([`bare_answer`]).
//! 4. **A cut reply** (the server stopped at the token limit) is read pair by pair up to the
//!    cut ([`partial_object`]): a string, array or object counts once closed, a number or
//!    literal once something follows it.

use serde_json::{Map, Value};

/// The deliberation markers, (opening, closing).
pub const MARKERS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
];

/// The keys an answer is read from after the asked field, in order.
pub const ANSWER_SYNONYMS: [&str; 4] = ["action", "answer", "choice", "decision"];

/// The keys an answer is read from: the asked field, then [`ANSWER_SYNONYMS`].
pub fn answer_keys(field: &str) -> [&str; 5] {
    [field, ANSWER_SYNONYMS[0], ANSWER_SYNONYMS[1], ANSWER_SYNONYMS[2], ANSWER_SYNONYMS[3]]
}

/// The longest bare answer (in characters) read without a JSON object.
pub const BARE_MAX_CHARS: usize = 40;

/// The text outside deliberation blocks, trimmed, as a bare answer: where it is non-empty, at
/// most [`BARE_MAX_CHARS`] characters and holds no `{`.
pub fn bare_answer(outside: &str) -> Option<&str> {
    let t = outside.trim();
    (!t.is_empty() && t.chars().count() <= BARE_MAX_CHARS && !t.contains('{')).then_some(t)
}

/// The text of a reply outside its deliberation blocks (and their markers), trimmed.
pub fn strip_deliberation(raw: &str) -> String {
    let (_, outside) = deliberation_blocks(raw);
    let mut s = String::with_capacity(raw.len());
    for (a, b) in outside {
        s.push_str(&raw[a..b]);
    }
    s.trim().to_string()
}

/// A byte range (start, end).
pub type Span = (usize, usize);

/// The deliberation blocks' inner byte ranges, and the byte ranges outside every block (and
/// outside the markers), both in order.
pub fn deliberation_blocks(raw: &str) -> (Vec<Span>, Vec<Span>) {
    // ASCII lower-casing keeps byte offsets.
    let lower = raw.to_ascii_lowercase();
    let quoted = inside_json_strings(raw);
    let find =
        |marker: &str, from: usize| lower[from..].match_indices(marker).map(|(i, _)| from + i).find(|i| !quoted[*i]);
    let (mut blocks, mut outside) = (Vec::new(), Vec::new());
    let mut pos = 0;
    while pos < raw.len() {
        let open = MARKERS.iter().filter_map(|(o, c)| find(o, pos).map(|i| (i, *o, *c))).min_by_key(|x| x.0);
        let close = MARKERS.iter().filter_map(|(_, c)| find(c, pos).map(|i| (i, *c))).min_by_key(|x| x.0);
        match (open, close) {
            (o, Some((c, cm))) if o.is_none_or(|(o, _, _)| c < o) => {
                // A closing marker with no opening one: the block began at `pos`.
                blocks.push((pos, c));
                pos = c + cm.len();
            }
            (Some((o, om, cm)), _) => {
                outside.push((pos, o));
                let inner = o + om.len();
                match find(cm, inner) {
                    Some(c) => {
                        blocks.push((inner, c));
                        pos = c + cm.len();
                    }
                    None => {
                        blocks.push((inner, raw.len()));
                        pos = raw.len();
                    }
                }
            }
            _ => break,
        }
    }
    if pos < raw.len() {
        outside.push((pos, raw.len()));
    }
    (blocks, outside)
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
pub fn inside_json_strings(s: &str) -> Vec<bool> {
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

/// The first balanced `{…}` that parses as a JSON object: (start byte, end byte, object).
pub fn first_object(text: &str) -> Option<(usize, usize, Map<String, Value>)> {
    for (start, _) in text.char_indices().filter(|(_, c)| *c == '{') {
        let (mut depth, mut literal) = (0i32, StringLiteral::default());
        for (off, c) in text[start..].char_indices() {
            if literal.consume(c) {
                continue;
            }
            match c {
                '"' => literal.open = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        let end = start + off + 1;
                        if let Ok(Value::Object(m)) = serde_json::from_str(&text[start..end]) {
                            return Some((start, end, m));
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

/// A JSON object cut short: the key–value pairs complete before the cut, in order, and the key
/// and raw remaining text of the value the cut fell in, if it fell in one.
pub struct PartialObject {
    /// The complete pairs, in order.
    pub fields: Vec<(String, serde_json::Value)>,
    /// The key and raw remaining text of the value the cut fell in.
    pub cut: Option<(String, String)>,
}

/// Reads the first `{` of `text` field by field until the text ends or stops being JSON.
pub fn partial_object(text: &str) -> Option<PartialObject> {
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
pub fn cut_string(raw: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_stray_markers_and_markers_inside_strings() {
        assert_eq!(strip_deliberation("<think>a</think> {\"x\": 1}"), "{\"x\": 1}");
        // An opened block that never closes runs to the end.
        assert_eq!(strip_deliberation("B <thinking>and then"), "B");
        // A closing marker without an opening one closes a block begun where the last ended.
        assert_eq!(strip_deliberation("A <think>x</think> B </think> C"), "A  C");
        // A marker inside a JSON string is text.
        let s = r#"{"reason": "no <think> here", "action": "C"}"#;
        assert_eq!(strip_deliberation(s), s);
        let (blocks, outside) = deliberation_blocks("<THINK>up</THINK>rest");
        assert_eq!((blocks, outside), (vec![(7, 9)], vec![(0, 0), (17, 21)]));
    }

    #[test]
    fn the_answer_object_is_the_first_balanced_one_that_parses() {
        let t = r#"note {not json} then {"a": "}{", "action": 2} and {"action": 3}"#;
        let (s, e, m) = first_object(t).expect("an object");
        assert_eq!(&t[s..e], r#"{"a": "}{", "action": 2}"#);
        assert_eq!(m["action"], 2);
        assert_eq!(answer_keys("offer"), ["offer", "action", "answer", "choice", "decision"]);
    }

    #[test]
    fn a_bare_answer_is_short_and_braceless_counted_in_characters() {
        assert_eq!(bare_answer("  C  "), Some("C"));
        assert_eq!(bare_answer(&"é".repeat(40)), Some("é".repeat(40).as_str()), "40 characters, 80 bytes");
        assert_eq!(bare_answer(&"x".repeat(41)), None);
        assert_eq!(bare_answer("{"), None);
        assert_eq!(bare_answer(" "), None);
    }

    #[test]
    fn a_cut_object_keeps_the_pairs_complete_before_the_cut() {
        let p = partial_object(r#"{"reasoning": "fine", "offer": 40, "reason": "Because the"#).expect("partial");
        assert_eq!(
            p.fields,
            vec![("reasoning".to_string(), Value::from("fine")), ("offer".to_string(), Value::from(40))]
        );
        assert_eq!(p.cut.as_ref().map(|c| c.0.as_str()), Some("reason"));
        assert_eq!(cut_string("\"Because the"), "Because the");
        // A number the cut may have fallen inside is not complete.
        let p = partial_object(r#"{"offer": 15"#).expect("partial");
        assert!(p.fields.is_empty() && p.cut.is_some());
    }
}
