//! GR's full-answer review (the profile methods §GR3): which reply is a usable answer, and the
//! wording it was read from.
//!
//! "An answer is usable only when the complete visible reply identifies one unambiguous legal
//! choice or amount. … Additional explanation does not by itself invalidate a choice.
//! Conflicting, ambiguous, conditional or refused choices are not inferred from isolated words
//! or numbers." The society parser reads only the first JSON object: a second, conflicting
//! answer is not seen, a choice stated in a sentence is unusable, and a JSON number for the
//! labels `1`/`2` is refused. The review reads the whole visible reply (deliberation blocks
//! removed by the project's reply grammar, [`agora_reply`]) and gathers every answer it commits
//! to:
//!
//! 1. every JSON object's answer field (the asked field, else `action`, `answer`, `choice`,
//!    `decision`): an amount as a whole number (or a string of one, `"$4"` too); a label as
//!    its string, or as a JSON number where the label is that number (`1` for label `"1"`);
//! 2. every decision stated in the sentences outside the objects, read as a person reads them
//!    ([`super::gr_prose`]): the committed first-person decision (`I give $5`, `I will send 3`,
//!    `my answer is 4`, `I'd split it: 5 each`), not amounts inside hypotheticals,
//!    counterfactuals, conditions, negations or rejected alternatives ("keeping all 10 would
//!    leave them nothing", "if I gave nothing", "rather than $0"), nor amounts that describe the
//!    endowment ("of my 10 dollars");
//! 3. where neither states anything, a bare reply that is a label or an amount.
//!
//! The answer is usable when exactly one legal value is committed to, however often; its
//! support is the wording of its first statement (the JSON object, the decision's words, or the
//! bare reply). Two different values are a conflict (naming each value's wording); a value
//! outside the legal ones makes the reply unusable; a reply committing to none is unusable, and
//! says so more precisely where it states a choice only under a condition, refuses (`cannot`,
//! `won't`, `refuse`, `decline`) or answers conditionally (`if`, `depends`) without a choice.

use std::ops::Range;

use super::gr::{Condition, Format, OPEN_MAX};
use super::gr_prose::{self, Said};

/// A usable answer: the amount given, or the index of the chosen label in display order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reviewed {
    /// Dollars given to the other, 0–10.
    Amount(i64),
    /// The chosen option's index in [`Condition::shown`].
    Label(usize),
}

/// The review of a usable reply: its answer and the wording that supports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    /// The answer.
    pub answer: Reviewed,
    /// The span of the visible reply the answer was read from, as written: a JSON object, a
    /// decision's words (`I give $5`) or the bare reply.
    pub support: String,
}

/// What a stated answer reads as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stated {
    Legal(Reviewed),
    Illegal,
}

fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '$' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_start_matches('$').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

fn normalise(s: &str) -> String {
    s.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == '*').trim().to_lowercase()
}

fn amount_of(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        }
        serde_json::Value::String(s) => s.trim().trim_start_matches('$').trim().parse().ok(),
        _ => None,
    }
}

/// An answer value from a JSON answer field.
fn from_json(v: &serde_json::Value, c: &Condition) -> Stated {
    match c.format {
        Format::Open => match amount_of(v) {
            Some(a) if (0..=OPEN_MAX).contains(&a) => Stated::Legal(Reviewed::Amount(a)),
            _ => Stated::Illegal,
        },
        Format::Binary => {
            let text = match v {
                serde_json::Value::String(s) => normalise(s),
                serde_json::Value::Number(n) => n.to_string(),
                _ => return Stated::Illegal,
            };
            match c.shown.iter().position(|(l, _)| normalise(l) == text) {
                Some(i) => Stated::Legal(Reviewed::Label(i)),
                None => Stated::Illegal,
            }
        }
    }
}

/// An answer value from a decision stated in a sentence.
fn from_said(said: Said) -> Stated {
    match said {
        Said::Given(Some(a)) if (0..=OPEN_MAX).contains(&a) => Stated::Legal(Reviewed::Amount(a)),
        Said::Given(_) => Stated::Illegal,
        Said::Label(i) => Stated::Legal(Reviewed::Label(i)),
    }
}

fn shown(r: &Reviewed, c: &Condition) -> String {
    match r {
        Reviewed::Amount(a) => format!("${a}"),
        Reviewed::Label(i) => c.shown.get(*i).map_or_else(|| i.to_string(), |(l, _)| format!("\"{l}\"")),
    }
}

/// Reviews a whole reply for condition `c`: the usable answer and its support, or why there is
/// none.
pub fn review(reply: &str, c: &Condition) -> Result<Review, String> {
    let visible = agora_reply::strip_deliberation(reply);
    // Each JSON object's answer; the objects are then blanked out of the prose with line breaks,
    // so that no sentence runs across one and every byte keeps its place for the support.
    let mut stated: Vec<(Stated, Range<usize>)> = Vec::new();
    let mut prose = visible.clone().into_bytes();
    let mut at = 0;
    while let Some((s, e, m)) = agora_reply::first_object(&visible[at..]) {
        let (s, e) = (at + s, at + e);
        if let Some(v) = agora_reply::answer_keys(&c.field).iter().find_map(|k| m.get(*k)) {
            stated.push((from_json(v, c), s..e));
        }
        prose[s..e].fill(b'\n');
        at = e;
    }
    // The objects begin with `{` and end with `}`: what is left is whole characters.
    let prose = String::from_utf8(prose).expect("invariant: whole JSON objects were blanked");
    let statements = gr_prose::read(&prose, c);
    let conditional = statements.iter().any(|s| s.conditional);
    stated.extend(statements.into_iter().filter(|s| !s.conditional).map(|s| (from_said(s.said), s.span)));
    if stated.is_empty() {
        if let Some(bare) = agora_reply::bare_answer(&visible) {
            // A bare reply counts only as a legal label or amount: a short sentence is not one.
            let v = serde_json::Value::String(bare.to_string());
            if let s @ Stated::Legal(_) = from_json(&v, c) {
                stated.push((s, 0..visible.len()));
            }
        }
    }
    stated.sort_by_key(|(_, r)| (r.start, r.end));
    let wording = |r: &Range<usize>| visible[r.clone()].trim().to_string();
    if let Some((_, r)) = stated.iter().find(|(s, _)| *s == Stated::Illegal) {
        return Err(format!("unusable: an answer outside the legal choices (\"{}\")", wording(r)));
    }
    let mut distinct: Vec<(Reviewed, Range<usize>)> = Vec::new();
    for (s, r) in stated {
        if let Stated::Legal(v) = s {
            if !distinct.iter().any(|(d, _)| *d == v) {
                distinct.push((v, r));
            }
        }
    }
    match distinct.as_slice() {
        [(one, r)] => Ok(Review { answer: *one, support: wording(r) }),
        [] => {
            let w = words(&visible);
            let has = |xs: &[&str]| w.iter().any(|x| xs.contains(&x.as_str()));
            if conditional {
                Err("unusable: conditional".into())
            } else if has(&["cannot", "can't", "won't", "refuse", "decline", "unable"]) {
                Err("unusable: refused".into())
            } else if has(&["if", "depends", "unless"]) {
                Err("unusable: conditional, no choice stated".into())
            } else {
                Err("unusable: no answer identified".into())
            }
        }
        many => Err(format!(
            "unusable: conflicting answers ({})",
            many.iter()
                .map(|(v, r)| format!("{} in \"{}\"", shown(v, c), wording(r)))
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> Condition {
        Condition {
            id: "OE-REF",
            format: Format::Open,
            class: "reference",
            text: String::new(),
            field: "give".into(),
            shown: Vec::new(),
        }
    }

    fn binary(labels: [&str; 2]) -> Condition {
        Condition {
            id: "BI-REF",
            format: Format::Binary,
            class: "reference",
            text: String::new(),
            field: "choice".into(),
            shown: vec![(labels[0].to_string(), "self-only"), (labels[1].to_string(), "equal")],
        }
    }

    /// The answer alone.
    fn answer(reply: &str, c: &Condition) -> Result<Reviewed, String> {
        review(reply, c).map(|r| r.answer)
    }

    #[test]
    fn the_whole_reply_is_read() {
        let o = open();
        assert_eq!(answer(r#"{"give": 4}"#, &o), Ok(Reviewed::Amount(4)));
        // Additional explanation does not invalidate a choice.
        assert_eq!(answer(r#"{"give": 4} I give $4 because sharing is good."#, &o), Ok(Reviewed::Amount(4)));
        // A second, conflicting answer is seen.
        assert_eq!(
            answer(r#"{"give": 4} Actually, {"give": 6}"#, &o),
            Err(r#"unusable: conflicting answers ($4 in "{"give": 4}" and $6 in "{"give": 6}")"#.into())
        );
        assert_eq!(
            answer(r#"{"give": 4} On reflection I would give 6 dollars."#, &o),
            Err(r#"unusable: conflicting answers ($4 in "{"give": 4}" and $6 in "I would give 6 dollars")"#.into())
        );
        // A choice stated in a sentence is usable; keeping N gives 10 − N.
        assert_eq!(answer("I would give the other participant $3.", &o), Ok(Reviewed::Amount(3)));
        assert_eq!(answer("I keep $7 and give $3 to them.", &o), Ok(Reviewed::Amount(3)));
        assert_eq!(answer("7", &o), Ok(Reviewed::Amount(7)));
        assert_eq!(answer(r#"<think>maybe 9</think>{"give": "$5"}"#, &o), Ok(Reviewed::Amount(5)));
        assert_eq!(
            answer(r#"{"give": 12}"#, &o),
            Err(r#"unusable: an answer outside the legal choices ("{"give": 12}")"#.into())
        );
        assert_eq!(answer("I cannot take part in this.", &o), Err("unusable: refused".into()));
        assert_eq!(
            answer("It depends on who the other person is.", &o),
            Err("unusable: conditional, no choice stated".into())
        );
        // Conditional, negated or self-directed amounts are not a choice given.
        assert_eq!(answer("If they need it, I'd give 8.", &o), Err("unusable: conditional".into()));
        assert_eq!(answer("I would not give 10; I give 4.", &o), Ok(Reviewed::Amount(4)));
        assert_eq!(answer("I allocate 7 to myself and give 3 to them.", &o), Ok(Reviewed::Amount(3)));
        // A verb's amount is searched past the recipient, not past the endowment.
        assert_eq!(answer("Keeping in mind the 10 dollars, I give 5.", &o), Ok(Reviewed::Amount(5)));
        assert_eq!(answer("I give a share of 10 dollars: 4.", &o), Ok(Reviewed::Amount(4)));
        // Isolated numbers are not a choice.
        assert_eq!(answer("There are 10 dollars and 2 people.", &o), Err("unusable: no answer identified".into()));
    }

    #[test]
    fn labels_read_as_strings_numbers_or_stated_choices() {
        let b = binary(["1", "2"]);
        assert_eq!(answer(r#"{"choice": "2"}"#, &b), Ok(Reviewed::Label(1)));
        // A JSON number for the label "1".
        assert_eq!(answer(r#"{"choice": 1}"#, &b), Ok(Reviewed::Label(0)));
        assert_eq!(answer("I choose option 2.", &b), Ok(Reviewed::Label(1)));
        assert_eq!(
            answer(r#"{"choice": "1"} but I would rather go with 2"#, &b),
            Err(r#"unusable: conflicting answers ("1" in "{"choice": "1"}" and "2" in "I would rather go with 2")"#
                .into())
        );
        // The label "A" is not the article "a".
        let ab = binary(["A", "B"]);
        assert_eq!(answer("I choose a fair split: B.", &ab), Err("unusable: no answer identified".into()));
        assert_eq!(answer(r#"{"choice": "B"} I prefer a more equal outcome."#, &ab), Ok(Reviewed::Label(1)));
        assert_eq!(answer("I choose A.", &ab), Ok(Reviewed::Label(0)));
        assert_eq!(answer("I would not choose A; I choose B.", &ab), Ok(Reviewed::Label(1)));
        let xy = binary(["X", "Y"]);
        assert_eq!(answer("I pick Y, the equal split.", &xy), Ok(Reviewed::Label(1)));
        assert_eq!(
            answer(r#"{"choice": 2}"#, &xy),
            Err(r#"unusable: an answer outside the legal choices ("{"choice": 2}")"#.into())
        );
    }

    /// What a reply of the table reads as.
    #[derive(Debug)]
    enum Reads {
        /// Usable: the dollars given and the wording they were read from.
        Gives(i64, &'static str),
        /// Usable: the label chosen (its index) and the wording.
        Picks(usize, &'static str),
        /// Unusable, for this reason.
        Unusable(&'static str),
    }
    use Reads::{Gives, Picks, Unusable};

    /// Issue 40 (item 5): explanatory replies were read as conflicting answers ("Keeping all 10
    /// dollars would leave them nothing, so I give $5." was unusable, $5 against $0). Realistic
    /// replies, written for this test, with what a person reads in each.
    const TABLE: &[(&str, Reads)] = &[
        // Dictator: hypotheticals and counterfactuals around the committed amount.
        ("Keeping all 10 dollars would leave them nothing, so I give $5.", Gives(5, "I give $5")),
        ("If I gave nothing, the other participant would get nothing. I'll give 4.", Gives(4, "I'll give 4")),
        ("If I kept everything, they'd get $0, so I give $5.", Gives(5, "I give $5")),
        ("Even $8 would be generous, but I think $5 is fair: I give $5.", Gives(5, "I give $5")),
        ("I could give 10, but I'll give 5.", Gives(5, "I'll give 5")),
        ("I would have given 8 if I had more, but I give 3.", Gives(3, "I give 3")),
        ("I give $5 even though keeping all 10 would benefit me.", Gives(5, "I give $5")),
        ("If I had to choose, I would give 2.", Gives(2, "I would give 2")),
        ("I want to keep it all, but I'll give 4.", Gives(4, "I'll give 4")),
        ("I considered keeping 7 but decided to give 5.", Gives(5, "decided to give 5")),
        (
            "Some people would keep all 10, and others split it evenly. I give 2.",
            Gives(2, "I give 2"),
        ),
        (
            "I give 5 dollars because giving 0 would be unfair and giving 10 would leave me with nothing.",
            Gives(5, "I give 5 dollars"),
        ),
        // "Rather than" and "instead of": the rejected alternative.
        ("Rather than keep all 10, I'll give 4.", Gives(4, "I'll give 4")),
        ("Rather than keep all 10 I'll give 4.", Gives(4, "I'll give 4")),
        (
            "I'll offer $4 rather than $0, since an offer of nothing would likely be rejected.",
            Gives(4, "I'll offer $4"),
        ),
        // Trust-like: an amount sent, the endowment mentioned.
        (
            "Instead of keeping all 10, I will send 3 dollars to the other player and hope they return some.",
            Gives(3, "I will send 3 dollars to the other player"),
        ),
        ("Out of my 10 dollars, I give 3 to the other participant.", Gives(3, "I give 3 to the other participant")),
        ("I give 6 of my 10 dollars.", Gives(6, "I give 6")),
        // Ultimatum: the proposer's offer, with the pie and the other's share.
        (
            "As the proposer, I offer the responder $4 out of the $10, since low offers are often rejected.",
            Gives(4, "I offer the responder $4"),
        ),
        ("I propose 6 for me and 4 for them.", Gives(4, "I propose 6 for me")),
        // Splits, keeps and negations.
        ("I'd split it: 5 each.", Gives(5, "I'd split it: 5 each")),
        ("I'll split the $10 evenly with Participant 2.", Gives(5, "I'll split the $10 evenly")),
        ("I keep $7 and give $3 to them.", Gives(3, "I keep $7")),
        ("I'm keeping everything.", Gives(0, "I'm keeping everything")),
        ("I won't keep it all. I give 4.", Gives(4, "I give 4")),
        ("I will not give them anything.", Gives(0, "I will not give them anything")),
        ("I'll give them 50%.", Gives(5, "I'll give them 50%")),
        // Polite preambles and stated answers.
        (
            "Thank you for the thoughtful question! As an AI I don't have personal money, but in this scenario I've decided to give $5 to the other participant.",
            Gives(5, "I've decided to give $5 to the other participant"),
        ),
        ("Sure! Here is my decision: I give $2 and keep $8.", Gives(2, "I give $2")),
        ("My answer is 4.", Gives(4, "My answer is 4")),
        ("**Final answer:** $6", Gives(6, "Final answer:** $6")),
        // Terse replies stay usable.
        ("7", Gives(7, "7")),
        ("$5", Gives(5, "$5")),
        (r#"{"give": 5}"#, Gives(5, r#"{"give": 5}"#)),
        ("Give $4.", Gives(4, "Give $4")),
        (r#"{"give": 3} Keeping everything would be unfair, so I give 3."#, Gives(3, r#"{"give": 3}"#)),
        // Genuinely conditional, ambiguous, conflicting or illegal replies stay unusable.
        ("If they need it, I'd give 8.", Unusable("unusable: conditional")),
        ("I'd give $5, but only if they would do the same.", Unusable("unusable: conditional")),
        (
            "I give $3. Actually, I give $7.",
            Unusable(r#"unusable: conflicting answers ($3 in "I give $3" and $7 in "I give $7")"#),
        ),
        ("I'd give 4 or 5.", Unusable(r#"unusable: conflicting answers ($4 in "I'd give 4" and $5 in "I'd give 4 or 5")"#)),
        (
            "I keep 6 and give 5.",
            Unusable(r#"unusable: conflicting answers ($4 in "I keep 6" and $5 in "give 5")"#),
        ),
        ("I'd give around $5.", Unusable("unusable: no answer identified")),
        ("I would give $12.", Unusable(r#"unusable: an answer outside the legal choices ("I would give $12")"#)),
        ("I give $2.50.", Unusable(r#"unusable: an answer outside the legal choices ("I give $2.50")"#)),
        ("Keeping all 10 would leave them nothing.", Unusable("unusable: no answer identified")),
    ];

    #[test]
    fn explanatory_replies_read_as_a_person_reads_them_issue_40() {
        let o = open();
        let mut wrong = Vec::new();
        for (reply, expected) in TABLE {
            let got = review(reply, &o);
            let ok = match (expected, &got) {
                (Gives(a, w), Ok(r)) => r.answer == Reviewed::Amount(*a) && r.support == *w,
                (Unusable(why), Err(e)) => e == why,
                _ => false,
            };
            if !ok {
                wrong.push(format!("{reply:?}: expected {expected:?}, got {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{} of {} misread:\n{}", wrong.len(), TABLE.len(), wrong.join("\n"));
    }

    #[test]
    fn explanatory_binary_replies_read_the_committed_label_issue_40() {
        let ab = binary(["A", "B"]);
        let table: &[(&str, Reads)] = &[
            ("Keeping all $10 would leave them with nothing, so I choose B.", Picks(1, "I choose B")),
            ("If I were selfish I'd pick A, but I choose B.", Picks(1, "I choose B")),
            ("Option A gives me $10, but I'll go with B: $5 each.", Picks(1, "I'll go with B")),
            ("My choice is A.", Picks(0, "My choice is A")),
            (
                "I choose A. On reflection, I pick B.",
                Unusable(r#"unusable: conflicting answers ("A" in "I choose A" and "B" in "I pick B")"#),
            ),
            ("If they were poor, I would choose B.", Unusable("unusable: conditional")),
        ];
        for (reply, expected) in table {
            let got = review(reply, &ab);
            let ok = match (expected, &got) {
                (Picks(i, w), Ok(r)) => r.answer == Reviewed::Label(*i) && r.support == *w,
                (Unusable(why), Err(e)) => e == why,
                _ => false,
            };
            assert!(ok, "{reply:?}: expected {expected:?}, got {got:?}");
        }
    }

    #[test]
    fn the_review_is_deterministic() {
        let o = open();
        for (reply, _) in TABLE {
            assert_eq!(review(reply, &o), review(reply, &o), "{reply:?}");
        }
    }
}
