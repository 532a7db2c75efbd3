//! The reader's words: the text cut into tokens, and the word lists its grammar knows.

use super::{Kind, Tok};

pub(super) const NUMBER_WORDS: [&str; 11] =
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
pub(super) const DOLLARS: [&str; 5] = ["dollars", "dollar", "bucks", "buck", "usd"];

/// Words, numbers (with their `$` and whole-dollar decimals) and marks, with their byte ranges.
pub(super) fn tokenize(text: &str) -> Vec<Tok> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte = |i: usize| chars.get(i).map_or(text.len(), |c| c.0);
    let digit = |i: usize| chars.get(i).is_some_and(|c| c.1.is_ascii_digit());
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c.is_ascii_digit() || (c == '$' && digit(i + 1)) {
            let first = if c == '$' { i + 1 } else { i };
            let mut j = first;
            while digit(j) {
                j += 1;
            }
            let whole: String = chars[first..j].iter().map(|x| x.1).collect();
            let mut fraction_zero = true;
            if chars.get(j).is_some_and(|x| x.1 == '.') && digit(j + 1) {
                j += 1;
                while digit(j) {
                    fraction_zero &= chars[j].1 == '0';
                    j += 1;
                }
            }
            let value = whole.parse::<i64>().ok().filter(|_| fraction_zero);
            out.push(Tok { low: whole, kind: Kind::Number(value), start: chars[i].0, end: byte(j) });
            i = j;
        } else if c.is_alphabetic() {
            let mut j = i + 1;
            while let Some(&(_, d)) = chars.get(j) {
                let apostrophe = (d == '\'' || d == '’') && chars.get(j + 1).is_some_and(|x| x.1.is_alphabetic());
                if !(d.is_alphanumeric() || apostrophe) {
                    break;
                }
                j += 1;
            }
            let low = text[chars[i].0..byte(j)].to_lowercase().replace('’', "'");
            // "one" is an amount only before "dollar" (below); alone it is a pronoun.
            let kind = match NUMBER_WORDS.iter().position(|w| *w == low) {
                Some(n) if n != 1 => Kind::Number(Some(n as i64)),
                _ => Kind::Word,
            };
            out.push(Tok { low, kind, start: chars[i].0, end: byte(j) });
            i = j;
        } else {
            if !c.is_whitespace() || c == '\n' {
                out.push(Tok { low: c.to_string(), kind: Kind::Mark(c), start: chars[i].0, end: byte(i + 1) });
            }
            i += 1;
        }
    }
    for k in 0..out.len() {
        let before_dollar = out.get(k + 1).is_some_and(|t| t.low == "dollar" || t.low == "buck");
        if out[k].low == "one" && before_dollar {
            out[k].kind = Kind::Number(Some(1));
        }
    }
    out
}

/// Marks that decorate (markdown, quotes, brackets) and separate nothing.
pub(super) const DECOR: [char; 12] = ['*', '_', '"', '`', '\'', '“', '”', '(', ')', '[', ']', '#'];

pub(super) const FIRST_PERSON: [&str; 5] = ["i", "i'll", "i'd", "i'm", "i've"];
/// Words that may stand between `I` and the verb of a decision.
#[rustfmt::skip]
pub(super) const AUX: [&str; 56] = [
    "will", "would", "shall", "should", "must", "can", "am", "be", "been", "being", "do", "did", "does", "have",
    "'ve", "has", "to", "going", "gonna", "want", "wanna", "like", "love", "plan", "intend", "also", "then",
    "therefore", "thus", "so", "just", "simply", "now", "still", "definitely", "certainly", "happily", "gladly",
    "rather", "probably", "hence", "finally", "ultimately", "personally", "actually", "really", "instead", "only",
    "willingly", "happy", "glad", "willing", "comfortable", "ready", "prepared", "pleased",
];
/// Verbs that, before `to`, lead to the verb of the decision (`I choose to give`).
pub(super) const TO_AUX: [&str; 16] = [
    "choose", "chose", "decide", "decided", "opt", "opted", "prefer", "want", "wanted", "plan", "planned", "intend",
    "intended", "need", "have", "had",
];
/// A decision stated as a possibility, or one considered and not made.
#[rustfmt::skip]
pub(super) const TENTATIVE: [&str; 13] = [
    "could", "might", "may", "considering", "consider", "considered", "thinking", "thought", "tempted", "inclined",
    "wondering", "perhaps", "maybe",
];
pub(super) const NEGATIONS: [&str; 6] = ["not", "never", "no", "cannot", "hardly", "neither"];
pub(super) const MODALS: [&str; 5] = ["would", "could", "should", "might", "must"];

#[rustfmt::skip]
pub(super) const GIVE: [&str; 23] = [
    "give", "gives", "giving", "gave", "given", "offer", "offers", "offering", "offered", "send", "sends",
    "sending", "sent", "transfer", "transfers", "transferring", "transferred", "allocate", "allocates",
    "allocating", "allocated", "donate", "donating",
];
pub(super) const KEEP: [&str; 11] =
    ["keep", "keeps", "keeping", "kept", "retain", "retains", "retaining", "retained", "take", "taking", "took"];
pub(super) const SPLIT: [&str; 10] =
    ["split", "splitting", "divide", "divides", "dividing", "divided", "share", "sharing", "shared", "shares"];
#[rustfmt::skip]
pub(super) const CHOOSE_OPEN: [&str; 14] = [
    "choose", "chose", "chosen", "pick", "picked", "select", "selected", "propose", "proposed", "proposing",
    "suggest", "say", "decide", "decided",
];
#[rustfmt::skip]
pub(super) const CHOOSE_BINARY: [&str; 20] = [
    "choose", "chose", "chosen", "choosing", "pick", "picks", "picked", "picking", "select", "selected",
    "selecting", "prefer", "prefers", "preferred", "take", "taking", "took", "say", "decide", "decided",
];
/// Two-word choosing verbs: (verb, particle).
pub(super) const CHOOSE_PAIRS: [(&str, &str); 14] = [
    ("go", "with"),
    ("going", "with"),
    ("went", "with"),
    ("go", "for"),
    ("going", "for"),
    ("opt", "for"),
    ("opting", "for"),
    ("opted", "for"),
    ("settle", "on"),
    ("settled", "on"),
    ("settling", "on"),
    ("stick", "with"),
    ("land", "on"),
    ("landed", "on"),
];
/// Base forms: a clause may open with one (`Give $4.`).
pub(super) const IMPERATIVES: [&str; 15] = [
    "give", "offer", "send", "transfer", "allocate", "donate", "keep", "retain", "split", "divide", "share", "choose",
    "pick", "select", "propose",
];
/// Nouns of a stated answer (`my answer is 4`, `Answer: 4`).
#[rustfmt::skip]
pub(super) const ANSWER_NOUNS: [&str; 12] = [
    "answer", "choice", "decision", "offer", "allocation", "transfer", "amount", "proposal", "pick", "selection",
    "response", "gift",
];
/// Words of revision or conclusion before an amount standing alone (`Actually, 4`).
#[rustfmt::skip]
pub(super) const REVISIONS: [&str; 14] = [
    "actually", "no", "wait", "correction", "rather", "make", "it", "that", "instead", "final", "finally", "so",
    "or", "then",
];
/// Words that may open a clause before its decision.
pub(super) const OPENERS: [&str; 12] =
    ["and", "but", "so", "then", "ok", "okay", "well", "alright", "therefore", "thus", "now", "finally"];
/// Words that open a subordinate clause.
pub(super) const SUBORDINATORS: [&str; 10] =
    ["because", "since", "which", "while", "whereas", "although", "though", "leaving", "meaning", "whilst"];
/// Words that end the search for a verb's amount: what follows is rejected, conditional, another
/// predicate's or a new clause's.
pub(super) const OBJECT_STOPS: [&str; 19] = [
    "than", "not", "instead", "except", "and", "but", "or", "because", "if", "unless", "so", "which", "while", "is",
    "are", "was", "were", "would", "will",
];
/// Words before an amount that make it vague.
pub(super) const VAGUE: [&str; 11] =
    ["about", "around", "roughly", "approximately", "nearly", "almost", "some", "more", "less", "fewer", "somewhere"];
/// Nouns followed by a name (`Participant 2`, `Player B`).
pub(super) const NAME_NOUNS: [&str; 5] = ["participant", "player", "person", "agent", "option"];
/// Who an amount goes to, after `to`, `for` or `with`.
#[rustfmt::skip]
pub(super) const OTHERS: [&str; 15] = [
    "them", "him", "her", "other", "others", "participant", "recipient", "receiver", "responder", "partner",
    "person", "player", "counterpart", "stranger", "they",
];
