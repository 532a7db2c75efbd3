//! GR's full-answer review (the profile methods §GR3): which reply is a usable answer.
//!
//! "An answer is usable only when the complete visible reply identifies one unambiguous legal
//! choice or amount. … Additional explanation does not by itself invalidate a choice.
//! Conflicting, ambiguous, conditional or refused choices are not inferred from isolated words
//! or numbers." The society parser reads only the first JSON object: a second, conflicting
//! answer is not seen, a choice stated in a sentence is unusable, and a JSON number for the
//! labels `1`/`2` is refused. The review reads the whole visible reply (deliberation blocks
//! removed by the project's reply grammar, [`agora_reply`]) and gathers every answer it states:
//!
//! 1. every JSON object's answer field (the asked field, else `action`, `answer`, `choice`,
//!    `decision`): an amount as a whole number (or a string of one, `"$4"` too); a label as
//!    its string, or as a JSON number where the label is that number (`1` for label `"1"`);
//! 2. a choice stated in a sentence outside the objects: an amount given (`give`, `offer`,
//!    `send`, `transfer`, `allocate`, followed within four words by a number of dollars) or
//!    kept (`keep` … N: 10 − N given); a label chosen (`choose`, `pick`, `select`, `prefer`,
//!    `take`, `go with`, `opt for`, then up to two words, then the label);
//! 3. a bare reply that is a label or an amount.
//!
//! The answer is usable when exactly one legal value is stated, however often. Two different
//! values are a conflict; a value outside the legal ones makes the reply unusable; a reply
//! stating none is unusable, and says so more precisely where it refuses (`cannot`, `won't`,
//! `refuse`, `decline`) or answers conditionally (`if`, `depends`) without stating a choice.

use super::gr::{Condition, Format, OPEN_MAX};

/// A usable answer: the amount given, or the index of the chosen label in display order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reviewed {
    /// Dollars given to the other, 0–10.
    Amount(i64),
    /// The chosen option's index in [`Condition::shown`].
    Label(usize),
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

/// Words of `s` with their case kept (for labels such as `A`, which as `a` is an article).
fn words_as_written(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '$' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_start_matches('$').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

const NEGATIONS: [&str; 6] = ["not", "never", "no", "won't", "wouldn't", "don't"];
const GIVE: [&str; 10] =
    ["give", "gives", "giving", "offer", "offers", "send", "sends", "transfer", "allocate", "allocating"];
const KEEP: [&str; 3] = ["keep", "keeps", "keeping"];
/// Words that end the search for a verb's amount: another verb, or a phrase that names a total
/// (`a share of 10`), not an amount given.
const STOP: [&str; 5] = ["of", "out", "in", "and", "but"];

/// Choices stated in sentences of `prose`. A verb negated within the three words before it
/// states no choice, and an amount followed by `myself` or `me` is not given to the other.
fn from_prose(prose: &str, c: &Condition) -> Vec<Stated> {
    let w = words(prose);
    let negated = |i: usize| w[i.saturating_sub(3)..i].iter().any(|x| NEGATIONS.contains(&x.as_str()));
    let mut out = Vec::new();
    match c.format {
        Format::Open => {
            for (i, word) in w.iter().enumerate() {
                let give = GIVE.contains(&word.as_str());
                let keep = KEEP.contains(&word.as_str());
                if !(give || keep) || negated(i) {
                    continue;
                }
                for (k, x) in w.iter().enumerate().skip(i + 1).take(4) {
                    if GIVE.contains(&x.as_str()) || KEEP.contains(&x.as_str()) || STOP.contains(&x.as_str()) {
                        break;
                    }
                    let Ok(n) = x.parse::<i64>() else { continue };
                    // `7 to myself`, `3 dollars for me`: an amount the decider keeps.
                    let to_self = w[k + 1..(k + 4).min(w.len())].iter().any(|a| a == "myself" || a == "me");
                    if to_self {
                        break;
                    }
                    let given = if keep { OPEN_MAX - n } else { n };
                    out.push(if (0..=OPEN_MAX).contains(&n) {
                        Stated::Legal(Reviewed::Amount(given))
                    } else {
                        Stated::Illegal
                    });
                    break;
                }
            }
        }
        Format::Binary => {
            // A one-letter label is matched as written (`A`, not the article `a`); longer
            // labels without regard to case.
            let written = words_as_written(prose);
            let labels: Vec<(Vec<String>, bool)> = c
                .shown
                .iter()
                .map(|(l, _)| {
                    let exact = l.trim().chars().count() == 1;
                    (if exact { words_as_written(l) } else { words(l) }, exact)
                })
                .collect();
            const CHOOSE: [&str; 11] = [
                "choose", "chooses", "choosing", "chose", "pick", "picks", "select", "selects", "prefer", "take", "opt",
            ];
            for (i, word) in w.iter().enumerate() {
                let go_with = word == "go" && w.get(i + 1).is_some_and(|x| x == "with");
                if !(CHOOSE.contains(&word.as_str()) || go_with) || negated(i) {
                    continue;
                }
                let from = i + if go_with { 2 } else { 1 };
                'skip: for skip in 0..=2 {
                    let at = from + skip;
                    for (k, (l, exact)) in labels.iter().enumerate() {
                        let source = if *exact { &written } else { &w };
                        if !l.is_empty() && source.get(at..at + l.len()) == Some(l.as_slice()) {
                            out.push(Stated::Legal(Reviewed::Label(k)));
                            break 'skip;
                        }
                    }
                }
            }
        }
    }
    out
}

/// Reviews a whole reply for condition `c`: the usable answer, or why there is none.
pub fn review(reply: &str, c: &Condition) -> Result<Reviewed, String> {
    let visible = agora_reply::strip_deliberation(reply);
    let mut stated = Vec::new();
    let mut prose = String::new();
    let mut rest = visible.as_str();
    while let Some((s, e, m)) = agora_reply::first_object(rest) {
        prose.push_str(&rest[..s]);
        prose.push(' ');
        if let Some(v) = agora_reply::answer_keys(&c.field).iter().find_map(|k| m.get(*k)) {
            stated.push(from_json(v, c));
        }
        rest = &rest[e..];
    }
    prose.push_str(rest);
    let from_text = from_prose(&prose, c);
    let conditional = words(&prose).iter().any(|x| ["if", "unless", "depends"].contains(&x.as_str()));
    if !from_text.is_empty() && conditional && stated.is_empty() {
        return Err("unusable: conditional".into());
    }
    stated.extend(from_text);
    if stated.is_empty() {
        if let Some(bare) = agora_reply::bare_answer(&visible) {
            // A bare reply counts only as a legal label or amount: a short sentence is not one.
            let v = serde_json::Value::String(bare.to_string());
            if let s @ Stated::Legal(_) = from_json(&v, c) {
                stated.push(s);
            }
        }
    }
    if stated.contains(&Stated::Illegal) {
        return Err("unusable: an answer outside the legal choices".into());
    }
    let mut legal: Vec<Reviewed> = stated
        .into_iter()
        .filter_map(|s| match s {
            Stated::Legal(r) => Some(r),
            Stated::Illegal => None,
        })
        .collect();
    legal.dedup();
    let distinct: Vec<Reviewed> = legal.iter().fold(Vec::new(), |mut v, r| {
        if !v.contains(r) {
            v.push(*r);
        }
        v
    });
    match distinct.as_slice() {
        [one] => Ok(*one),
        [] => {
            let w = words(&visible);
            let has = |xs: &[&str]| w.iter().any(|x| xs.contains(&x.as_str()));
            if has(&["cannot", "can't", "won't", "refuse", "decline", "unable"]) {
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
                .map(|r| match r {
                    Reviewed::Amount(a) => format!("${a}"),
                    Reviewed::Label(i) => c.shown.get(*i).map_or_else(|| i.to_string(), |(l, _)| format!("\"{l}\"")),
                })
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

    #[test]
    fn the_whole_reply_is_read() {
        let o = open();
        assert_eq!(review(r#"{"give": 4}"#, &o), Ok(Reviewed::Amount(4)));
        // Additional explanation does not invalidate a choice.
        assert_eq!(review(r#"{"give": 4} I give $4 because sharing is good."#, &o), Ok(Reviewed::Amount(4)));
        // A second, conflicting answer is seen.
        assert_eq!(
            review(r#"{"give": 4} Actually, {"give": 6}"#, &o),
            Err("unusable: conflicting answers ($4 and $6)".into())
        );
        assert_eq!(
            review(r#"{"give": 4} On reflection I would give 6 dollars."#, &o),
            Err("unusable: conflicting answers ($4 and $6)".into())
        );
        // A choice stated in a sentence is usable; keeping N gives 10 − N.
        assert_eq!(review("I would give the other participant $3.", &o), Ok(Reviewed::Amount(3)));
        assert_eq!(review("I keep $7 and give $3 to them.", &o), Ok(Reviewed::Amount(3)));
        assert_eq!(review("7", &o), Ok(Reviewed::Amount(7)));
        assert_eq!(review(r#"<think>maybe 9</think>{"give": "$5"}"#, &o), Ok(Reviewed::Amount(5)));
        assert_eq!(review(r#"{"give": 12}"#, &o), Err("unusable: an answer outside the legal choices".into()));
        assert_eq!(review("I cannot take part in this.", &o), Err("unusable: refused".into()));
        assert_eq!(
            review("It depends on who the other person is.", &o),
            Err("unusable: conditional, no choice stated".into())
        );
        // Conditional, negated or self-directed amounts are not a choice given.
        assert_eq!(review("If they need it, I'd give 8.", &o), Err("unusable: conditional".into()));
        assert_eq!(review("I would not give 10; I give 4.", &o), Ok(Reviewed::Amount(4)));
        assert_eq!(review("I allocate 7 to myself and give 3 to them.", &o), Ok(Reviewed::Amount(3)));
        // A verb's amount is searched up to the next verb or a total.
        assert_eq!(review("Keeping in mind the 10 dollars, I give 5.", &o), Ok(Reviewed::Amount(5)));
        assert_eq!(review("I give a share of 10 dollars: 4.", &o), Err("unusable: no answer identified".into()));
        // Isolated numbers are not a choice.
        assert_eq!(review("There are 10 dollars and 2 people.", &o), Err("unusable: no answer identified".into()));
    }

    #[test]
    fn labels_read_as_strings_numbers_or_stated_choices() {
        let b = binary(["1", "2"]);
        assert_eq!(review(r#"{"choice": "2"}"#, &b), Ok(Reviewed::Label(1)));
        // A JSON number for the label "1".
        assert_eq!(review(r#"{"choice": 1}"#, &b), Ok(Reviewed::Label(0)));
        assert_eq!(review("I choose option 2.", &b), Ok(Reviewed::Label(1)));
        assert_eq!(
            review(r#"{"choice": "1"} but I would rather go with 2"#, &b),
            Err("unusable: conflicting answers (\"1\" and \"2\")".into())
        );
        // The label "A" is not the article "a".
        let ab = binary(["A", "B"]);
        assert_eq!(review("I choose a fair split: B.", &ab), Err("unusable: no answer identified".into()));
        assert_eq!(review(r#"{"choice": "B"} I prefer a more equal outcome."#, &ab), Ok(Reviewed::Label(1)));
        assert_eq!(review("I choose A.", &ab), Ok(Reviewed::Label(0)));
        assert_eq!(review("I would not choose A; I choose B.", &ab), Ok(Reviewed::Label(1)));
        let xy = binary(["X", "Y"]);
        assert_eq!(review("I pick Y, the equal split.", &xy), Ok(Reviewed::Label(1)));
        assert_eq!(review(r#"{"choice": 2}"#, &xy), Err("unusable: an answer outside the legal choices".into()));
    }
}
