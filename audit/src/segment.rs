//! Splitting a reply into what was written before the action (reasoning), the action, and
//! what was written after it (a post-hoc rationale).
//!
//! Only text generated before the action is reasoning in the audit's sense (the SUVA audit paper §240.1:
//! the reasoning is generated first, then the action given it). The reply is read by the
//! project's one reply grammar ([`agora_reply`]), the one the agents' parser reads the action
//! by, so the answer located here is the one the game played. The rule, applied to the reply's
//! raw text:
//!
//! 1. Deliberation blocks are found as the agents' reply parser finds them: `<think>…</think>`,
//!    `<thinking>…</thinking>`, `<reasoning>…</reasoning>` and
//!    `<|begin_of_thought|>…<|end_of_thought|>` (ASCII case-insensitive), a marker inside a
//!    JSON string being text; an opened block that never closes runs to the end, and a closing
//!    marker without an opening one closes a block that began at the start of the reply (or
//!    after the previous block).
//! 2. In the rest, the first balanced `{…}` that parses as a JSON object holds the answer,
//!    read from the asked answer field or, as the parser does, from `action`, `answer`,
//!    `choice` or `decision`, the first present. serde_json keeps the document's key order
//!    (`preserve_order`), so "before" and "after" are the reply's own order.
//! 3. Reasoning: every deliberation block before the object, prose before the object
//!    (`preamble`, code fences removed) and every string field before the answer field
//!    (`field:<name>`, e.g. a `reasoning` written first). Post-hoc: string fields after the
//!    answer (`field:reason`), prose after the object (`trailing`) and blocks after it.
//!    Fields that are not strings (numbers, lists) are neither.
//! 4. A reply the server cut at the token limit (`cut`) whose object never closed is read pair
//!    by pair up to the cut; the pairs complete before it count as above.
//! 5. A reply without a JSON object that is a bare answer (at most 40 characters, no `{`, as
//!    the parser accepts) is an action; blocks before it are reasoning.
//! 6. Anything else is malformed: no segment is located, so the reply has no reasoning. It is
//!    counted, not coded.

pub use agora_reply::ANSWER_SYNONYMS;
use agora_reply::{bare_answer, deliberation_blocks, first_object, partial_object, Span};
use serde::Serialize;
use serde_json::Value;

/// Version of this segmentation rule, recorded with every stored segment.
pub const SEGMENTER_VERSION: u32 = 1;

/// What a segment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    /// Text generated before the action; the only text a coder sees.
    Reasoning,
    /// The answer.
    Action,
    /// Text generated after the action: a rationale, kept and labelled, never coded.
    PostHoc,
}

impl SegmentKind {
    /// The kind as stored: `reasoning`, `action` or `post_hoc`.
    pub fn as_str(self) -> &'static str {
        match self {
            SegmentKind::Reasoning => "reasoning",
            SegmentKind::Action => "action",
            SegmentKind::PostHoc => "post_hoc",
        }
    }
}

/// One piece of a reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// What it is.
    pub kind: SegmentKind,
    /// Where it came from: `think` (a deliberation block), `preamble` (prose before the JSON),
    /// `field:<name>` (a JSON field), `trailing` (prose after the JSON) or `bare` (an answer
    /// without JSON).
    pub source: String,
    /// Its text, trimmed (a JSON string's value decoded; a non-string answer as JSON).
    pub text: String,
}

/// How the reply was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyForm {
    /// A JSON object with an answer field.
    Json,
    /// A JSON object cut at the token limit after its answer field.
    JsonCut,
    /// A bare answer without JSON.
    Bare,
    /// No answer could be located: no segments.
    Malformed,
}

impl ReplyForm {
    /// The form as stored: `json`, `json_cut`, `bare` or `malformed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyForm::Json => "json",
            ReplyForm::JsonCut => "json_cut",
            ReplyForm::Bare => "bare",
            ReplyForm::Malformed => "malformed",
        }
    }
}

/// A reply split into segments, in the order they were written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segmentation {
    /// The segments in reply order.
    pub segments: Vec<Segment>,
    /// How the reply was written.
    pub form: ReplyForm,
    /// The JSON key the answer was read from (none for a bare or malformed reply).
    pub answer_key: Option<String>,
    /// The answer's JSON value (a bare answer as a string).
    pub answer: Option<Value>,
}

impl Segmentation {
    /// The reasoning segments, in order.
    pub fn reasoning(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(|s| s.kind == SegmentKind::Reasoning)
    }

    /// Whether any text was written before the action.
    pub fn has_reasoning(&self) -> bool {
        self.reasoning().next().is_some()
    }

    /// Whether any rationale was written after the action.
    pub fn has_post_hoc(&self) -> bool {
        self.segments.iter().any(|s| s.kind == SegmentKind::PostHoc)
    }

    /// The distinct sources of the reasoning segments, in order, joined with `+` (`think+field:reasoning`);
    /// empty without reasoning.
    pub fn reasoning_sources(&self) -> String {
        let mut v: Vec<&str> = Vec::new();
        for s in self.reasoning() {
            if !v.contains(&s.source.as_str()) {
                v.push(&s.source);
            }
        }
        v.join("+")
    }

    fn malformed() -> Segmentation {
        Segmentation { segments: Vec::new(), form: ReplyForm::Malformed, answer_key: None, answer: None }
    }
}

/// The answer field a decision request asked for: the first `required` property of the
/// request's JSON schema other than `reasoning` (`messages_json` is the request as stored in
/// the transcripts table), else the run's `AnswerField` factor (`spec_json` of the runs table),
/// else `action`.
pub fn asked_answer_field(messages_json: &str, spec_json: &str) -> String {
    let from_schema = serde_json::from_str::<Value>(messages_json).ok().and_then(|v| {
        v["schema"]["required"]
            .as_array()
            .and_then(|r| r.iter().filter_map(Value::as_str).find(|f| *f != "reasoning").map(str::to_string))
    });
    let from_spec = || {
        serde_json::from_str::<Value>(spec_json).ok().and_then(|v| {
            v["factors"].as_array().and_then(|fs| fs.iter().find_map(|f| f["AnswerField"].as_str().map(str::to_string)))
        })
    };
    from_schema.or_else(from_spec).unwrap_or_else(|| "action".to_string())
}

/// Whether the answer value agrees with the transcript's parsed action where that can be
/// checked without the option labels: an amount (`a17` and `17`) or an allocation (`[1,2]`
/// and `[1, 2]`). `None` for a choice (its label's index is not in the reply).
pub fn answer_agrees(answer: &Value, action: &str) -> Option<bool> {
    if let Some(n) = action.strip_prefix('a').and_then(|n| n.parse::<i64>().ok()) {
        let v = match answer {
            Value::Number(x) => x.as_i64().or_else(|| x.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        return Some(v == Some(n));
    }
    if action.starts_with('[') {
        let want: Option<Vec<i64>> = serde_json::from_str(action).ok();
        let got: Option<Vec<i64>> = answer.as_array().and_then(|a| a.iter().map(Value::as_i64).collect());
        return Some(want.is_some() && want == got);
    }
    None
}

/// Splits a reply by the rule of the [module documentation](self). `answer_field` is the field
/// the request asked for; `cut` says the server cut the reply at its token limit.
pub fn segment_reply(raw: &str, answer_field: &str, cut: bool) -> Segmentation {
    let (blocks, outside) = deliberation_blocks(raw);
    // The text outside the blocks, and each piece's range in it and start in `raw`.
    let mut rest = String::new();
    let mut pieces: Vec<(usize, usize, usize)> = Vec::new();
    for (start, end) in &outside {
        pieces.push((rest.len(), rest.len() + end - start, *start));
        rest.push_str(&raw[*start..*end]);
    }
    let to_raw = |pos: usize| pieces.iter().rev().find(|(r, _, _)| *r <= pos).map_or(pos, |(r, _, s)| s + (pos - r));
    // Prose of `rest[from..to]`, one segment per piece outside the blocks, at its raw position.
    let prose = |from: usize, to: usize, kind: SegmentKind, source: &str| -> Vec<(usize, usize, Segment)> {
        pieces
            .iter()
            .filter_map(|(r0, r1, s)| {
                let (a, b) = (from.max(*r0), to.min(*r1));
                let text = if a < b { clean_prose(&rest[a..b]) } else { String::new() };
                (!text.is_empty()).then(|| (s + (a - r0), 0, segment(kind, source, &text)))
            })
            .collect()
    };
    let keys: Vec<&str> = std::iter::once(answer_field).chain(ANSWER_SYNONYMS).collect();

    let (pairs, start, end, form) = match first_object(&rest) {
        Some((s, e, m)) => (m.into_iter().collect::<Vec<_>>(), s, e, ReplyForm::Json),
        None if cut => match rest.find('{') {
            Some(s) => {
                (partial_object(&rest[s..]).map(|p| p.fields).unwrap_or_default(), s, rest.len(), ReplyForm::JsonCut)
            }
            None => return Segmentation::malformed(),
        },
        None => {
            let Some(text) = bare_answer(&rest) else {
                return Segmentation::malformed();
            };
            let at = to_raw(rest.find(text).unwrap_or(0));
            let mut items: Vec<(usize, usize, Segment)> = blocks_as_items(raw, &blocks, at);
            items.push((at, 0, segment(SegmentKind::Action, "bare", text)));
            return finish(items, ReplyForm::Bare, None, Some(Value::String(text.to_string())));
        }
    };
    let Some(answer_key) = keys.iter().find(|k| pairs.iter().any(|(key, _)| key == *k)).map(|k| k.to_string()) else {
        return Segmentation::malformed();
    };
    let at = to_raw(start);
    let mut items = blocks_as_items(raw, &blocks, at);
    items.extend(prose(0, start, SegmentKind::Reasoning, "preamble"));
    items.extend(prose(end, rest.len(), SegmentKind::PostHoc, "trailing"));
    let mut answer = None;
    let mut kind = SegmentKind::Reasoning;
    for (i, (key, value)) in pairs.iter().enumerate() {
        let source = format!("field:{key}");
        if *key == answer_key && answer.is_none() {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
            items.push((at, i + 1, segment(SegmentKind::Action, &source, &text)));
            answer = Some(value.clone());
            kind = SegmentKind::PostHoc;
        } else if let Some(text) = value.as_str() {
            items.push((at, i + 1, segment(kind, &source, text)));
        }
    }
    finish(items, form, Some(answer_key), answer)
}

fn segment(kind: SegmentKind, source: &str, text: &str) -> Segment {
    Segment { kind, source: source.to_string(), text: text.trim().to_string() }
}

/// Blocks as positioned segments: reasoning before `at`, post-hoc from it on.
fn blocks_as_items(raw: &str, blocks: &[Span], at: usize) -> Vec<(usize, usize, Segment)> {
    blocks
        .iter()
        .map(|(s, e)| {
            let kind = if *s < at { SegmentKind::Reasoning } else { SegmentKind::PostHoc };
            (*s, 0, segment(kind, "think", &raw[*s..*e]))
        })
        .collect()
}

fn finish(
    mut items: Vec<(usize, usize, Segment)>,
    form: ReplyForm,
    answer_key: Option<String>,
    answer: Option<Value>,
) -> Segmentation {
    items.sort_by_key(|(pos, sub, _)| (*pos, *sub));
    let segments =
        items.into_iter().map(|(_, _, s)| s).filter(|s| s.kind == SegmentKind::Action || has_words(&s.text)).collect();
    Segmentation { segments, form, answer_key, answer }
}

fn has_words(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// Prose outside the object, without code fences.
fn clean_prose(s: &str) -> String {
    let s = s.replace("```json", "").replace("```JSON", "").replace("```", "");
    let s = s.trim();
    if has_words(s) {
        s.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &Segmentation) -> Vec<(SegmentKind, &str, &str)> {
        s.segments.iter().map(|x| (x.kind, x.source.as_str(), x.text.as_str())).collect()
    }
    use SegmentKind::{Action, PostHoc, Reasoning};

    #[test]
    fn a_think_block_before_the_answer_is_reasoning() {
        let s = segment_reply(
            "<think>The other cooperated. I should return the favor.</think>\n{\"action\": \"Option J\", \"reason\": \"fair\"}",
            "action",
            false,
        );
        assert_eq!(s.form, ReplyForm::Json);
        assert_eq!(
            kinds(&s),
            [
                (Reasoning, "think", "The other cooperated. I should return the favor."),
                (Action, "field:action", "Option J"),
                (PostHoc, "field:reason", "fair"),
            ]
        );
        assert_eq!(s.reasoning_sources(), "think");
        // Upper-case markers, and a block whose opening the server left out.
        let s = segment_reply("I weigh it.</THINK>{\"action\": 3}", "action", false);
        assert_eq!(kinds(&s), [(Reasoning, "think", "I weigh it."), (Action, "field:action", "3")]);
        assert_eq!(s.answer, Some(serde_json::json!(3)));
    }

    #[test]
    fn a_reasoning_field_written_first_is_reasoning() {
        let s = segment_reply(
            r#"{"reasoning": "Mutual cooperation gives the largest total.", "action": "Option J", "reason": "It is fair."}"#,
            "action",
            false,
        );
        assert_eq!(
            kinds(&s),
            [
                (Reasoning, "field:reasoning", "Mutual cooperation gives the largest total."),
                (Action, "field:action", "Option J"),
                (PostHoc, "field:reason", "It is fair."),
            ]
        );
        assert!(s.has_reasoning() && s.has_post_hoc());
        assert_eq!(s.answer_key.as_deref(), Some("action"));
    }

    #[test]
    fn a_reason_after_the_answer_is_post_hoc_and_so_is_a_reasoning_field_written_after_it() {
        let s = segment_reply(r#"{"action": "Option F", "reason": "B1 gives me the most points."}"#, "action", false);
        assert_eq!(
            kinds(&s),
            [(Action, "field:action", "Option F"), (PostHoc, "field:reason", "B1 gives me the most points.")]
        );
        assert!(!s.has_reasoning());
        // Order, not the name, decides: a `reasoning` field after the answer is post hoc.
        let s = segment_reply(r#"{"action": "Option F", "reasoning": "Because.", "confidence": 0.9}"#, "action", false);
        assert_eq!(kinds(&s), [(Action, "field:action", "Option F"), (PostHoc, "field:reasoning", "Because.")]);
    }

    #[test]
    fn a_renamed_answer_field_is_found() {
        let raw = r#"{"thoughts": "They defected last round.", "action_taken": "no", "selection": "Option F", "reason": "Payback."}"#;
        let s = segment_reply(raw, "selection", false);
        assert_eq!(
            kinds(&s),
            [
                (Reasoning, "field:thoughts", "They defected last round."),
                (Reasoning, "field:action_taken", "no"),
                (Action, "field:selection", "Option F"),
                (PostHoc, "field:reason", "Payback."),
            ]
        );
        assert_eq!(s.answer_key.as_deref(), Some("selection"));
        // Asked for `selection`, a reply that wrote `action` is read as the parser reads it.
        let s = segment_reply(r#"{"reasoning": "x y", "action": "Option F"}"#, "selection", false);
        assert_eq!(s.answer_key.as_deref(), Some("action"));
        assert!(s.has_reasoning());
        // With `action` asked, a `selection` field is just another field: no answer here.
        let s = segment_reply(r#"{"reasoning": "x y", "selection": "Option F"}"#, "action", false);
        assert_eq!(s.form, ReplyForm::Malformed);
    }

    #[test]
    fn malformed_json_has_no_reasoning() {
        for raw in [
            r#"{"reasoning": "I want fairness.", "action": "Option J""#,
            r#"{"reasoning": "I want fairness.", "action": Option J}"#,
            "I think fairness matters a great deal here, so I will choose the first option.",
            "",
        ] {
            let s = segment_reply(raw, "action", false);
            assert_eq!(s.form, ReplyForm::Malformed, "{raw}");
            assert!(s.segments.is_empty() && !s.has_reasoning(), "{raw}");
        }
    }

    #[test]
    fn a_reply_cut_after_its_answer_keeps_what_came_before() {
        let raw = r#"{"reasoning": "It is fair.", "action": "Option F", "reason": "ok", "extra"#;
        let s = segment_reply(raw, "action", true);
        assert_eq!(s.form, ReplyForm::JsonCut);
        assert_eq!(
            kinds(&s),
            [
                (Reasoning, "field:reasoning", "It is fair."),
                (Action, "field:action", "Option F"),
                (PostHoc, "field:reason", "ok")
            ]
        );
        // Cut inside the answer: no answer, nothing located.
        assert_eq!(
            segment_reply(r#"{"reasoning": "It is fair.", "action": "Opt"#, "action", true).form,
            ReplyForm::Malformed
        );
        assert_eq!(segment_reply(r#"{"reasoning": "x", "action": 15"#, "action", true).form, ReplyForm::Malformed);
        assert_eq!(
            segment_reply(r#"{"action": 15, "reason": "cu"#, "action", true).answer,
            Some(serde_json::json!(15))
        );
    }

    #[test]
    fn prose_around_the_object_and_markers_in_strings() {
        let raw = "Let me think: the total is 6.\n```json\n{\"action\": \"Option J\", \"reason\": \"no <think> here\"}\n```\nThat is my answer.";
        let s = segment_reply(raw, "action", false);
        assert_eq!(
            kinds(&s),
            [
                (Reasoning, "preamble", "Let me think: the total is 6."),
                (Action, "field:action", "Option J"),
                (PostHoc, "field:reason", "no <think> here"),
                (PostHoc, "trailing", "That is my answer."),
            ]
        );
        // A block after the answer is post hoc; an empty block is no reasoning.
        let s = segment_reply(
            "<think>\n</think>{\"action\": \"Option J\"}<think>on reflection, fair</think>",
            "action",
            false,
        );
        assert_eq!(kinds(&s), [(Action, "field:action", "Option J"), (PostHoc, "think", "on reflection, fair")]);
        // A JSON-looking answer inside a block is not the answer.
        let s =
            segment_reply("<think>maybe {\"action\": \"Option F\"}</think>{\"action\": \"Option J\"}", "action", false);
        assert_eq!(s.answer, Some(serde_json::json!("Option J")));
        assert_eq!(s.segments[0].text, "maybe {\"action\": \"Option F\"}");
    }

    #[test]
    fn a_bare_answer_after_a_block() {
        let s = segment_reply("<thinking>B1 gives me the most points.</thinking>\nB1", "action", false);
        assert_eq!(s.form, ReplyForm::Bare);
        assert_eq!(kinds(&s), [(Reasoning, "think", "B1 gives me the most points."), (Action, "bare", "B1")]);
    }

    #[test]
    fn the_asked_field_comes_from_the_request_then_the_run() {
        let req = r#"{"messages": [], "schema": {"type": "object", "properties": {"reasoning": {}, "selection": {}, "reason": {}}, "required": ["reasoning", "selection"]}}"#;
        assert_eq!(asked_answer_field(req, "{}"), "selection");
        let spec = r#"{"factors": ["StepByStep", {"AnswerField": "pick"}]}"#;
        assert_eq!(asked_answer_field(r#"{"messages": [], "schema": null}"#, spec), "pick");
        assert_eq!(asked_answer_field("not json", r#"{"factors": []}"#), "action");
    }

    #[test]
    fn answers_are_checked_against_the_parsed_action_where_they_can_be() {
        assert_eq!(answer_agrees(&serde_json::json!(15), "a15"), Some(true));
        assert_eq!(answer_agrees(&serde_json::json!("15"), "a15"), Some(true));
        assert_eq!(answer_agrees(&serde_json::json!(14), "a15"), Some(false));
        assert_eq!(answer_agrees(&serde_json::json!([1, 2]), "[1,2]"), Some(true));
        assert_eq!(answer_agrees(&serde_json::json!("Option J"), "c0"), None);
    }
}
