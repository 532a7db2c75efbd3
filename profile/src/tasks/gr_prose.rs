//! GR's reading of an answer stated in sentences (the profile methods §GR3: "Additional
//! explanation does not by itself invalidate a choice. Conflicting, ambiguous, conditional or
//! refused choices are not inferred from isolated words or numbers").
//!
//! A reply that explains itself mentions amounts it does not choose: the endowment ("of my 10
//! dollars"), what an alternative would do ("keeping all 10 would leave them nothing"), what it
//! rejects ("rather than $0"). A person reads such a reply for the sentence in which the decider
//! commits, and so does this reader:
//!
//! 1. The text is cut into sentences (`.`, `!`, `?`, `;`, a line break; a question states no
//!    answer), each sentence into parts at the connectives that open a new main clause (`so`,
//!    `therefore`, `thus`, `hence`, `however`, `but`, `yet`, `that's why`), and each part into
//!    clauses (`,`, a dash, `because`, `since`, `which`, `while`, `whereas`, `although`,
//!    `though`, `leaving`, `meaning`).
//! 2. A **decision** is a first-person clause with a verb of deciding — `I give $5`, `I will
//!    send 3`, `I'd split it: 5 each`, `I've decided to offer 4` — with only auxiliaries and
//!    adverbs between `I` and the verb; or a stated answer (`my answer is 4`, `Answer: 4`); or,
//!    at the start of a clause that says nothing else, a bare imperative (`Give $4.`), except in a
//!    bulleted list of options. A gerund or an impersonal subject ("keeping all 10 would…",
//!    "even $8 would be…") is not a decision.
//! 3. The amount is the verb's object: the first amount after it in the clause (digits, `$`,
//!    number words, `half`, `nothing`, `everything`, `all 10`, `50%`). An amount after `of`,
//!    `out of` or `from` names the endowment and is skipped; `than`, `instead of`,
//!    `as opposed to` and `not` end the search (what follows is rejected); `about`, `around`,
//!    `at least`, `up to`, `more`, `some` make it vague (no answer). Kept amounts (`keep`,
//!    `retain`, `take`, or `for myself` after any verb) give 10 − N; `split`, `divide` and `share`
//!    give 5 when even (`evenly`, `in half`, `50/50`, `5 each`) and otherwise need a recipient
//!    (`4 for them`). A clause may go on with `and` + another verb (`I keep $7 and give $3`) or an
//!    amount with its recipient (`6 for me and 4 for them`); `4 or 5` states both. An amount
//!    standing alone as a conclusion or a correction states an answer too (`…, so $5`,
//!    `Actually, 4`).
//! 4. A decision is **not an answer** where it is conditional or hypothetical: the clause opened
//!    by `if`, `unless`, `assuming`, `suppose`, `provided`, `depending`, `in case`,
//!    `as long as` or an inversion (`were I`, `had I`) is hypothetical, and so is the clause it
//!    governs (the next clauses of its part, up to one opened by `and`; a trailing condition
//!    governs the clause before it); a decision with `could`, `might`, `may`, `would have`,
//!    `considering` or `thinking of` is a possibility. A concession (`even if`, `even though`,
//!    `whether`) or a hedge the task itself meets (`if I had to choose`) makes only its own words
//!    hypothetical. Decisions after `than`, `instead of` or `as opposed to` are rejected
//!    alternatives. A negated decision (`I would not give 10`) states no answer, except the
//!    negation of any amount, which is zero (`I won't give them anything` gives $0). Where a later
//!    part of a sentence, opened by `but`, `yet` or `however`, commits, what the sentence
//!    committed to before is the alternative set aside (`I want to keep it all, but I'll give 4`).
//!
//! Only the decisions left are answers; the review ([`super::gr_review`]) finds a conflict where
//! they state two different values. `leave` is not a verb of deciding: "would leave them
//! nothing" describes a consequence far more often than it states a gift.
//!
//! Binary conditions read a label after a choosing verb (`choose`, `pick`, `select`, `prefer`,
//! `take`, `go with`, `opt for`) or a stated answer, within two words, under the same clauses and
//! conditions; a one-letter label is matched as written (`A`, not the article `a`).
//!
//! Each statement keeps the span of the text it was read from, from the decision's first word to
//! the amount (and its recipient) or label.

use std::ops::Range;

use super::gr::{Condition, Format, OPEN_MAX};

/// What a decision states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// Dollars given to the other; `None` where the amount is not a whole number of dollars.
    Given(Option<i64>),
    /// The chosen label's index in [`Condition::shown`].
    Label(usize),
}

/// One decision read from the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// What it states.
    pub said: Said,
    /// The bytes of the text it was read from.
    pub span: Range<usize>,
    /// Whether it is conditional, hypothetical or a mere possibility: not an answer.
    pub conditional: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Word,
    /// A number of dollars; `None` where it is not whole (`2.50`).
    Number(Option<i64>),
    Mark(char),
}

#[derive(Clone, Debug)]
struct Tok {
    low: String,
    kind: Kind,
    start: usize,
    end: usize,
}

const NUMBER_WORDS: [&str; 11] =
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const DOLLARS: [&str; 5] = ["dollars", "dollar", "bucks", "buck", "usd"];

/// Words, numbers (with their `$` and whole-dollar decimals) and marks, with their byte ranges.
fn tokenize(text: &str) -> Vec<Tok> {
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
const DECOR: [char; 12] = ['*', '_', '"', '`', '\'', '“', '”', '(', ')', '[', ']', '#'];

const FIRST_PERSON: [&str; 5] = ["i", "i'll", "i'd", "i'm", "i've"];
/// Words that may stand between `I` and the verb of a decision.
#[rustfmt::skip]
const AUX: [&str; 56] = [
    "will", "would", "shall", "should", "must", "can", "am", "be", "been", "being", "do", "did", "does", "have",
    "'ve", "has", "to", "going", "gonna", "want", "wanna", "like", "love", "plan", "intend", "also", "then",
    "therefore", "thus", "so", "just", "simply", "now", "still", "definitely", "certainly", "happily", "gladly",
    "rather", "probably", "hence", "finally", "ultimately", "personally", "actually", "really", "instead", "only",
    "willingly", "happy", "glad", "willing", "comfortable", "ready", "prepared", "pleased",
];
/// Verbs that, before `to`, lead to the verb of the decision (`I choose to give`).
const TO_AUX: [&str; 16] = [
    "choose", "chose", "decide", "decided", "opt", "opted", "prefer", "want", "wanted", "plan", "planned", "intend",
    "intended", "need", "have", "had",
];
/// A decision stated as a possibility, or one considered and not made.
#[rustfmt::skip]
const TENTATIVE: [&str; 13] = [
    "could", "might", "may", "considering", "consider", "considered", "thinking", "thought", "tempted", "inclined",
    "wondering", "perhaps", "maybe",
];
const NEGATIONS: [&str; 6] = ["not", "never", "no", "cannot", "hardly", "neither"];
const MODALS: [&str; 5] = ["would", "could", "should", "might", "must"];

#[rustfmt::skip]
const GIVE: [&str; 23] = [
    "give", "gives", "giving", "gave", "given", "offer", "offers", "offering", "offered", "send", "sends",
    "sending", "sent", "transfer", "transfers", "transferring", "transferred", "allocate", "allocates",
    "allocating", "allocated", "donate", "donating",
];
const KEEP: [&str; 11] =
    ["keep", "keeps", "keeping", "kept", "retain", "retains", "retaining", "retained", "take", "taking", "took"];
const SPLIT: [&str; 10] =
    ["split", "splitting", "divide", "divides", "dividing", "divided", "share", "sharing", "shared", "shares"];
#[rustfmt::skip]
const CHOOSE_OPEN: [&str; 14] = [
    "choose", "chose", "chosen", "pick", "picked", "select", "selected", "propose", "proposed", "proposing",
    "suggest", "say", "decide", "decided",
];
#[rustfmt::skip]
const CHOOSE_BINARY: [&str; 20] = [
    "choose", "chose", "chosen", "choosing", "pick", "picks", "picked", "picking", "select", "selected",
    "selecting", "prefer", "prefers", "preferred", "take", "taking", "took", "say", "decide", "decided",
];
/// Two-word choosing verbs: (verb, particle).
const CHOOSE_PAIRS: [(&str, &str); 14] = [
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
const IMPERATIVES: [&str; 15] = [
    "give", "offer", "send", "transfer", "allocate", "donate", "keep", "retain", "split", "divide", "share", "choose",
    "pick", "select", "propose",
];
/// Nouns of a stated answer (`my answer is 4`, `Answer: 4`).
#[rustfmt::skip]
const ANSWER_NOUNS: [&str; 12] = [
    "answer", "choice", "decision", "offer", "allocation", "transfer", "amount", "proposal", "pick", "selection",
    "response", "gift",
];
/// Words of revision or conclusion before an amount standing alone (`Actually, 4`).
#[rustfmt::skip]
const REVISIONS: [&str; 14] = [
    "actually", "no", "wait", "correction", "rather", "make", "it", "that", "instead", "final", "finally", "so",
    "or", "then",
];
/// Words that may open a clause before its decision.
const OPENERS: [&str; 12] =
    ["and", "but", "so", "then", "ok", "okay", "well", "alright", "therefore", "thus", "now", "finally"];
/// Words that open a subordinate clause.
const SUBORDINATORS: [&str; 10] =
    ["because", "since", "which", "while", "whereas", "although", "though", "leaving", "meaning", "whilst"];
/// Words that end the search for a verb's amount: what follows is rejected, conditional, another
/// predicate's or a new clause's.
const OBJECT_STOPS: [&str; 19] = [
    "than", "not", "instead", "except", "and", "but", "or", "because", "if", "unless", "so", "which", "while", "is",
    "are", "was", "were", "would", "will",
];
/// Words before an amount that make it vague.
const VAGUE: [&str; 11] =
    ["about", "around", "roughly", "approximately", "nearly", "almost", "some", "more", "less", "fewer", "somewhere"];
/// Nouns followed by a name (`Participant 2`, `Player B`).
const NAME_NOUNS: [&str; 5] = ["participant", "player", "person", "agent", "option"];
/// Who an amount goes to, after `to`, `for` or `with`.
#[rustfmt::skip]
const OTHERS: [&str; 15] = [
    "them", "him", "her", "other", "others", "participant", "recipient", "receiver", "responder", "partner",
    "person", "player", "counterpart", "stranger", "they",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verb {
    Give,
    Keep,
    Split,
    Choose,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Other,
    Own,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    /// `if`, `unless`…: what it opens is hypothetical, and so is what it governs.
    Condition,
    /// `even if`, `whether`, a hedge the task meets: only its own words are hypothetical.
    Concession,
    /// `than`, `instead of`, `as opposed to`: a rejected alternative follows.
    Rejection,
}

/// A clause: its tokens, the first marker in it, whether a condition elsewhere governs it, and
/// where it stands.
#[derive(Clone, Debug)]
struct Clause {
    range: Range<usize>,
    marker: Option<(usize, Marker)>,
    governed: bool,
    /// Its sentence is an item of a list.
    bullet: bool,
    sentence: usize,
    part: usize,
    /// Its part opens with `but`, `yet` or `however`.
    contrast: bool,
    /// It opens a part that opens with `so`, `therefore`, `thus` or `hence`.
    conclusion: bool,
}

/// A decision's verb and its circumstances.
#[derive(Clone, Copy, Debug)]
struct Head {
    verb: Verb,
    /// The first token after the verb.
    next: usize,
    negated: bool,
    tentative: bool,
    /// The byte where the decision's wording begins.
    start: usize,
}

/// The verb's object.
enum Object {
    Amount {
        value: Option<i64>,
        role: Option<Role>,
        next: usize,
        end: usize,
    },
    Even {
        next: usize,
        end: usize,
    },
    /// The negation of any amount (`not … anything`).
    NoneAtAll {
        end: usize,
    },
    Label {
        index: usize,
        end: usize,
    },
    Nothing,
}

struct Reader<'a> {
    toks: Vec<Tok>,
    text: &'a str,
    format: Format,
    /// Each label as written, its tokens, and whether it is matched as written (one letter).
    labels: Vec<(String, Vec<Tok>, bool)>,
    out: Vec<Statement>,
    /// For each statement: its sentence, its part, and whether that part opens with a contrast.
    origin: Vec<(usize, usize, bool)>,
}

/// Every decision stated in `text` for condition `c`, in the order of the text.
pub fn read(text: &str, c: &Condition) -> Vec<Statement> {
    let labels = c
        .shown
        .iter()
        .map(|(l, _)| (l.clone(), tokenize(l), l.trim().chars().count() == 1))
        .filter(|(_, t, _)| !t.is_empty())
        .collect();
    let mut r = Reader { toks: tokenize(text), text, format: c.format, labels, out: Vec::new(), origin: Vec::new() };
    let clauses = r.clauses();
    for (i, clause) in clauses.iter().enumerate() {
        let before = r.out.len();
        r.read_clause(clause);
        let after_revision =
            i > 0 && clauses[i - 1].sentence == clause.sentence && r.revision_only(&clauses[i - 1].range);
        if r.out.len() == before {
            r.read_fragment(clause, after_revision);
        }
        let n = r.out.len() - before;
        r.origin.extend(std::iter::repeat_n((clause.sentence, clause.part, clause.contrast), n));
    }
    // "I want to keep it all, but I'll give 4": where a later part of a sentence, opened by
    // `but`, `yet` or `however`, commits, what the sentence committed to before is the
    // alternative set aside.
    for i in 0..r.out.len() {
        let (sentence, part, _) = r.origin[i];
        let overridden = r
            .origin
            .iter()
            .zip(&r.out)
            .any(|(&(s, p, contrast), later)| s == sentence && p > part && contrast && !later.conditional);
        if overridden {
            r.out[i].conditional = true;
        }
    }
    r.out.sort_by_key(|s| (s.span.start, s.span.end));
    r.out.dedup();
    r.out
}

impl Reader<'_> {
    /// The word at `k` (not a number or a mark), lower-cased.
    fn word(&self, k: usize) -> Option<&str> {
        self.toks.get(k).filter(|t| t.kind == Kind::Word).map(|t| t.low.as_str())
    }

    fn is(&self, k: usize, w: &str) -> bool {
        self.word(k) == Some(w)
    }

    fn decor(&self, k: usize) -> bool {
        matches!(self.toks.get(k).map(|t| t.kind), Some(Kind::Mark(c)) if DECOR.contains(&c))
    }

    /// Whether the mark at `k` ends a sentence.
    fn sentence_end(&self, k: usize) -> bool {
        matches!(self.toks[k].kind, Kind::Mark('.' | '!' | '?' | ';' | '\n'))
    }

    /// Whether the mark at `k` ends a clause: a comma or a dash (a hyphen with a space before it).
    fn clause_mark(&self, k: usize) -> bool {
        match self.toks[k].kind {
            Kind::Mark(',' | '–' | '—') => true,
            Kind::Mark('-') => self.text[..self.toks[k].start].ends_with(char::is_whitespace),
            _ => false,
        }
    }

    /// The tokens of a connective that opens a new main clause at `k` (0: none).
    fn connective(&self, k: usize) -> usize {
        match self.word(k) {
            Some("so" | "therefore" | "thus" | "hence" | "however" | "consequently" | "accordingly") => 1,
            // "but only if …" attaches its condition to what came before.
            Some("but" | "yet") => {
                let next = self.word(k + 1);
                if matches!(next, Some("only" | "if" | "unless" | "provided" | "assuming")) {
                    0
                } else {
                    1
                }
            }
            Some("that's") if self.is(k + 1, "why") => 2,
            Some("which" | "that" | "this") if self.is(k + 1, "is") && self.is(k + 2, "why") => 3,
            _ => 0,
        }
    }

    /// Sentences → parts → clauses, with each clause's marker and whether a condition governs it.
    fn clauses(&self) -> Vec<Clause> {
        let n = self.toks.len();
        let mut out = Vec::new();
        let mut start = 0;
        let mut previous_sentence: Option<Range<usize>> = None;
        while start < n {
            let mut end = start;
            while end < n && !self.sentence_end(end) {
                end += 1;
            }
            let question = end < n && self.toks[end].kind == Kind::Mark('?');
            // A list item: a bullet (`- `, `* `, `• `) or a number ending the previous sentence.
            let bullet = match self.toks.get(start).map(|t| t.kind) {
                Some(Kind::Mark('-' | '*' | '•')) => {
                    self.text[self.toks[start].end..].starts_with(char::is_whitespace)
                }
                _ => previous_sentence
                    .as_ref()
                    .is_some_and(|p| p.len() == 1 && matches!(self.toks[p.start].kind, Kind::Number(_))),
            };
            if !question {
                out.extend(self.sentence(start..end, bullet, start));
            }
            previous_sentence = Some(start..end);
            start = end + 1;
        }
        out
    }

    fn sentence(&self, range: Range<usize>, bullet: bool, sentence: usize) -> Vec<Clause> {
        // Parts at connectives, clauses at commas, dashes and subordinators.
        let mut parts: Vec<Vec<Range<usize>>> = vec![Vec::new()];
        let mut contrasts = vec![false];
        let mut conclusions = vec![false];
        let mut from = range.start;
        let mut k = range.start;
        while k < range.end {
            let skip = self.connective(k);
            if skip > 0 {
                parts.last_mut().expect("invariant: one part at least").push(from..k);
                parts.push(Vec::new());
                contrasts.push(matches!(self.word(k), Some("but" | "yet" | "however")));
                conclusions.push(matches!(self.word(k), Some("so" | "therefore" | "thus" | "hence")));
                k += skip;
                from = k;
            } else if self.clause_mark(k) && !self.is(k + 1, "or") {
                parts.last_mut().expect("invariant: one part at least").push(from..k);
                k += 1;
                from = k;
            } else if k > from && self.word(k).is_some_and(|w| SUBORDINATORS.contains(&w)) {
                parts.last_mut().expect("invariant: one part at least").push(from..k);
                from = k;
                k += 1;
            } else {
                k += 1;
            }
        }
        parts.last_mut().expect("invariant: one part at least").push(from..range.end);
        let mut out = Vec::new();
        for (index, ((part, contrast), conclusion)) in parts.into_iter().zip(contrasts).zip(conclusions).enumerate() {
            let mut clauses: Vec<Clause> = part
                .into_iter()
                .filter(|r| !r.is_empty())
                .enumerate()
                .map(|(i, r)| Clause {
                    marker: self.marker(&r),
                    range: r,
                    governed: false,
                    bullet,
                    sentence,
                    part: index,
                    contrast,
                    conclusion: conclusion && i == 0,
                })
                .collect();
            // A condition governs the clauses after the one it opens (up to one opened by
            // `and`), or, trailing, the clause before it; in the middle of a clause, that
            // clause.
            for i in 0..clauses.len() {
                let Some((at, Marker::Condition)) = clauses[i].marker else { continue };
                if !self.opens(&clauses[i].range, at) {
                    clauses[i].governed = true;
                    continue;
                }
                if i + 1 < clauses.len() {
                    for (n, governed) in clauses[i + 1..].iter_mut().enumerate() {
                        if n > 0 && self.is(governed.range.start, "and") {
                            break;
                        }
                        governed.governed = true;
                    }
                } else if i > 0 {
                    clauses[i - 1].governed = true;
                }
            }
            out.extend(clauses);
        }
        out
    }

    /// Whether only openers and decoration precede token `at` in `range`.
    fn opens(&self, range: &Range<usize>, at: usize) -> bool {
        (range.start..at)
            .all(|k| self.decor(k) || self.word(k).is_some_and(|w| OPENERS.contains(&w) || w == "only" || w == "even"))
    }

    /// The first condition, concession or rejection in a clause.
    fn marker(&self, range: &Range<usize>) -> Option<(usize, Marker)> {
        for k in range.clone() {
            let Some(w) = self.word(k) else { continue };
            let m = match w {
                "if" => {
                    let concessive = k > 0 && matches!(self.word(k - 1), Some("even" | "as"));
                    // "if I had to choose": a condition the task itself meets.
                    let hedge = (k + 1..(k + 6).min(range.end)).any(|j| {
                        matches!(
                            self.word(j),
                            Some(
                                "choose"
                                    | "pick"
                                    | "decide"
                                    | "answer"
                                    | "select"
                                    | "commit"
                                    | "guess"
                                    | "forced"
                                    | "pressed"
                            )
                        )
                    });
                    Some(if concessive || hedge { Marker::Concession } else { Marker::Condition })
                }
                "unless" | "provided" | "providing" | "assuming" | "suppose" | "supposing" | "imagine" | "depends"
                | "depending" | "whenever" => Some(Marker::Condition),
                "case" if k > 0 && self.is(k - 1, "in") => Some(Marker::Condition),
                "long" if k > 0 && self.is(k - 1, "as") && self.is(k + 1, "as") => Some(Marker::Condition),
                "were" | "had" | "should" if self.opens(range, k) && self.is(k + 1, "i") => Some(Marker::Condition),
                "though" | "although" | "whether" | "regardless" => Some(Marker::Concession),
                "than" | "versus" | "vs" => Some(Marker::Rejection),
                "instead" if self.is(k + 1, "of") => Some(Marker::Rejection),
                "opposed" if k > 0 && self.is(k - 1, "as") => Some(Marker::Rejection),
                "compared" => Some(Marker::Rejection),
                _ => None,
            };
            if let Some(m) = m {
                // The marker's own clause part starts at its first word (`even if`, `as long as`).
                let back = match w {
                    "if" | "though" if k > 0 && matches!(self.word(k - 1), Some("even" | "as")) => 1,
                    "case" | "opposed" => 1,
                    "than" if k > 0 && self.is(k - 1, "rather") => 1,
                    "long" => 1,
                    _ => 0,
                };
                return Some(((k - back).max(range.start), m));
            }
        }
        None
    }

    /// Whether a clause holds only words of revision or conclusion (`Actually no`).
    fn revision_only(&self, range: &Range<usize>) -> bool {
        let mut any = false;
        for k in range.clone() {
            match self.word(k) {
                Some(w) if REVISIONS.contains(&w) => any = true,
                Some(_) => return false,
                None if self.decor(k) => {}
                None => return false,
            }
        }
        any
    }

    /// An amount standing alone as a conclusion or a correction states an answer: `…, so $5`,
    /// `Actually, 4`, `Actually no, 4`, `Make it 6`.
    fn read_fragment(&mut self, clause: &Clause, after_revision: bool) {
        if self.format != Format::Open {
            return;
        }
        let range = clause.range.clone();
        let mut found: Option<(Option<i64>, usize, usize)> = None;
        let mut revised = false;
        let mut k = range.start;
        while k < range.end {
            if let Some((value, n)) = self.amount_at(k) {
                if found.is_some() {
                    return;
                }
                found = Some((value, k, k + n));
                k += n;
                continue;
            }
            match self.word(k) {
                Some(w) if REVISIONS.contains(&w) => revised |= found.is_none(),
                Some(_) => return,
                None if self.decor(k) || matches!(self.toks[k].kind, Kind::Mark(':')) => {}
                None => return,
            }
            k += 1;
        }
        let Some((value, at, end)) = found else { return };
        if revised || clause.conclusion || after_revision {
            let start = self.toks[range.start..at]
                .iter()
                .find(|t| t.kind == Kind::Word)
                .map_or(self.toks[at].start, |t| t.start);
            let conditional = clause.governed || clause.marker.is_some();
            self.push(Said::Given(value), start, self.toks[end - 1].end, conditional);
        }
    }

    fn read_clause(&mut self, clause: &Clause) {
        let range = clause.range.clone();
        let (mut cut, kind) = clause.marker.map_or((range.end, None), |(at, m)| (at, Some(m)));
        // A clause opened by a rejection ("Rather than keep all 10 I'll give 4") rejects up to
        // its first `I`, where the main clause begins; elsewhere, up to its end.
        let mut resume = range.end;
        if kind == Some(Marker::Rejection) && self.opens(&range, cut) {
            resume = (cut..range.end)
                .find(|&k| self.word(k).is_some_and(|w| FIRST_PERSON.contains(&w)))
                .unwrap_or(range.end);
        }
        let mut rejecting = false;
        for i in range.clone() {
            if i == resume {
                (rejecting, cut) = (false, range.end);
            }
            if i >= cut && kind == Some(Marker::Rejection) {
                rejecting = true;
            }
            if rejecting {
                if resume == range.end {
                    break;
                }
                continue;
            }
            let after_marker = i >= cut;
            let limit = if after_marker { range.end } else { cut };
            let hypothetical = clause.governed || after_marker;
            let before = self.out.len();
            if let Some((head, imperative)) = self.head(i, &range, limit, clause.bullet) {
                let rest = self.decide(head, limit, hypothetical);
                // A bare imperative is a decision only where the clause says nothing else.
                let says_more = (rest..limit).any(|k| !self.decor(k) && !self.is(k, "please"));
                if imperative && says_more {
                    self.out.truncate(before);
                }
            }
        }
    }

    /// A decision's head at token `i`, and whether it is a bare imperative: a first-person
    /// subject; a stated answer; at the start of a clause, a verb whose subject, `I`, is left out
    /// after `and`, `but` or `so`; or (at the start of a clause outside a list) an imperative.
    fn head(&self, i: usize, range: &Range<usize>, limit: usize, bullet: bool) -> Option<(Head, bool)> {
        let start = self.toks[i].start;
        let w = self.word(i)?;
        if FIRST_PERSON.contains(&w) || (w == "let" && matches!(self.word(i + 1), Some("me"))) {
            let from = if w == "let" { i + 2 } else { i + 1 };
            return self.window(from, limit, start, w == "i'd").map(|h| (h, false));
        }
        // A stated answer: "my (final) answer is/:", or at the clause's start "(Final) answer:".
        let mine = w == "my";
        if mine || self.opens(range, i) {
            let mut j = if mine { i + 1 } else { i };
            if self.is(j, "final") {
                j += 1;
            }
            if self.word(j).is_some_and(|n| ANSWER_NOUNS.contains(&n)) {
                j += 1;
                while self.word(j).is_some_and(|x| matches!(x, "given" | "to" | "give" | "sent" | "offered")) {
                    j += 1;
                }
                while self.decor(j) {
                    j += 1;
                }
                let copula = match self.toks.get(j).map(|t| t.kind) {
                    Some(Kind::Mark(':' | '=')) => 1,
                    Some(Kind::Word) if mine && matches!(self.word(j), Some("is" | "'s")) => 1,
                    Some(Kind::Word)
                        if mine && matches!(self.word(j), Some("will" | "would" | "shall")) && self.is(j + 1, "be") =>
                    {
                        2
                    }
                    _ => 0,
                };
                if copula > 0 {
                    let mut k = j + copula;
                    while self.decor(k) {
                        k += 1;
                    }
                    if self.amount_at(k).is_some() || self.label_at(k).is_some() || self.even_at(k).is_some() {
                        let head = Head { verb: Verb::Choose, next: k, negated: false, tentative: false, start };
                        return Some((head, false));
                    }
                    return self.window(k, limit, start, false).map(|h| (h, false));
                }
            }
        }
        if !self.opens(range, i) || OPENERS.contains(&w) {
            return None;
        }
        // "I considered keeping 7 but decided to give 5": the subject left out after a
        // conjunction is the sentence's last, if that was `I`; a gerund is a subject itself
        // ("… and giving 5 is fair").
        let conjunction = (0..i).rev().find(|&k| !self.decor(k)).and_then(|k| self.word(k));
        if matches!(conjunction, Some("and" | "but" | "so" | "yet" | "then")) && !w.ends_with("ing") && self.i_before(i)
        {
            if let Some(head) = self.window(i, limit, start, false) {
                return Some((head, false));
            }
        }
        if !bullet && IMPERATIVES.contains(&w) {
            let (verb, n) = self.verb_at(i)?;
            return Some((Head { verb, next: i + n, negated: false, tentative: false, start }, true));
        }
        None
    }

    /// Whether the last subject before token `i` in its sentence is `I`.
    fn i_before(&self, i: usize) -> bool {
        const SUBJECTS: [&str; 16] = [
            "they",
            "they'd",
            "they'll",
            "they're",
            "he",
            "she",
            "it",
            "it's",
            "we",
            "you",
            "people",
            "someone",
            "others",
            "participant",
            "person",
            "player",
        ];
        for k in (0..i).rev() {
            if self.sentence_end(k) {
                return false;
            }
            match self.word(k) {
                Some(w) if FIRST_PERSON.contains(&w) => return true,
                Some(w) if SUBJECTS.contains(&w) => return false,
                _ => {}
            }
        }
        false
    }

    /// From just after the subject, auxiliaries and adverbs up to the verb.
    fn window(&self, from: usize, limit: usize, start: usize, modal_in_subject: bool) -> Option<Head> {
        let (mut negated, mut tentative, mut modal) = (false, false, modal_in_subject);
        let mut k = from;
        let mut words = 0;
        while k < limit && words < 7 {
            match self.toks[k].kind {
                Kind::Mark(_) if self.decor(k) => {
                    k += 1;
                    continue;
                }
                Kind::Word => {}
                _ => return None,
            }
            let w = self.toks[k].low.as_str();
            let before_to = self.is(k + 1, "to");
            if before_to && TO_AUX.contains(&w) {
                k += 2;
                words += 2;
                continue;
            }
            if let Some((verb, n)) = self.verb_at(k) {
                return Some(Head { verb, next: k + n, negated, tentative, start });
            }
            if NEGATIONS.contains(&w) || w.ends_with("n't") {
                negated = true;
            } else if TENTATIVE.contains(&w) {
                tentative = true;
            } else if matches!(w, "have" | "'ve" | "had") && modal {
                // "would have given": a counterfactual.
                tentative = true;
            } else if MODALS.contains(&w) {
                modal = true;
            } else if !AUX.contains(&w) {
                return None;
            }
            k += 1;
            words += 1;
        }
        None
    }

    /// The verb of deciding at `k`, and its tokens.
    fn verb_at(&self, k: usize) -> Option<(Verb, usize)> {
        let w = self.word(k)?;
        let next = self.word(k + 1).unwrap_or("");
        if CHOOSE_PAIRS.contains(&(w, next)) {
            return Some((Verb::Choose, 2));
        }
        let verb = match self.format {
            Format::Open if GIVE.contains(&w) => Verb::Give,
            Format::Open if KEEP.contains(&w) => Verb::Keep,
            Format::Open if SPLIT.contains(&w) => Verb::Split,
            Format::Open if CHOOSE_OPEN.contains(&w) => Verb::Choose,
            Format::Binary if CHOOSE_BINARY.contains(&w) => Verb::Choose,
            _ => return None,
        };
        Some((verb, 1))
    }

    /// An amount at `k`: its value (`None`: not whole) and its tokens.
    fn amount_at(&self, k: usize) -> Option<(Option<i64>, usize)> {
        let t = self.toks.get(k)?;
        let (value, mut n) = match t.kind {
            Kind::Number(v) => {
                if matches!(self.toks.get(k + 1).map(|t| t.kind), Some(Kind::Mark('%'))) || self.is(k + 1, "percent") {
                    // A share of the $10: 50% is $5.
                    (v.and_then(|x| (x % 10 == 0).then_some(x / 10)), 2)
                } else {
                    (v, 1)
                }
            }
            Kind::Word => match t.low.as_str() {
                "half" => (Some(5), 1),
                "nothing" | "none" => (Some(0), 1),
                "everything" => (Some(OPEN_MAX), 1),
                "no" if self.word(k + 1).is_some_and(|w| matches!(w, "money" | "dollars" | "cash" | "dollar")) => {
                    (Some(0), 2)
                }
                "a" if self.word(k + 1).is_some_and(|w| w == "dollar" || w == "buck") => (Some(1), 1),
                "all" | "whole" | "entire" | "full" => match self.amount_at(k + 1) {
                    Some((v, m)) if matches!(self.toks[k + 1].kind, Kind::Number(_)) => (v, m + 1),
                    _ if self.is(k + 1, "of") && matches!(self.word(k + 2), Some("it" | "the")) => {
                        let money = self.word(k + 3).is_some_and(|w| w == "money" || DOLLARS.contains(&w));
                        (Some(OPEN_MAX), if money { 4 } else { 3 })
                    }
                    _ => (Some(OPEN_MAX), 1),
                },
                _ => return None,
            },
            Kind::Mark(_) => return None,
        };
        if self.word(k + n).is_some_and(|w| DOLLARS.contains(&w)) {
            n += 1;
        }
        Some((value, n))
    }

    /// An even split at `k` (`evenly`, `in half`, `50/50`, `5-5`, `fifty-fifty`): its tokens.
    fn even_at(&self, k: usize) -> Option<usize> {
        let number =
            |j: usize, v: i64| matches!(self.toks.get(j).map(|t| t.kind), Some(Kind::Number(Some(x))) if x == v);
        let joiner = |j: usize| matches!(self.toks.get(j).map(|t| t.kind), Some(Kind::Mark('/' | '-' | ':')));
        match self.word(k) {
            Some("evenly" | "equally") => Some(1),
            Some("even" | "equal") if matches!(self.word(k + 1), Some("split" | "share" | "shares" | "division")) => {
                Some(2)
            }
            Some("in") if matches!(self.word(k + 1), Some("half" | "two")) => Some(2),
            Some("down") if self.is(k + 1, "the") && self.is(k + 2, "middle") => Some(3),
            Some("half") if self.is(k + 1, "and") && self.is(k + 2, "half") => Some(3),
            Some("fifty") if self.is(k + 1, "fifty") => Some(2),
            Some("fifty") if joiner(k + 1) && self.is(k + 2, "fifty") => Some(3),
            _ if (number(k, 50) || number(k, 5)) && joiner(k + 1) && number(k + 2, self.value(k)) => Some(3),
            _ => None,
        }
    }

    fn value(&self, k: usize) -> i64 {
        match self.toks[k].kind {
            Kind::Number(Some(v)) => v,
            _ => -1,
        }
    }

    /// A label at `k`: its index and the byte where it ends.
    fn label_at(&self, k: usize) -> Option<(usize, usize)> {
        if self.format != Format::Binary {
            return None;
        }
        for (index, (written, label, exact)) in self.labels.iter().enumerate() {
            let Some(here) = self.toks.get(k..k + label.len()) else { continue };
            let same = here.iter().zip(label).all(|(a, b)| {
                if *exact {
                    self.text[a.start..a.end] == written[b.start..b.end]
                } else {
                    a.low == b.low
                }
            });
            if same {
                return Some((index, here.last().map_or(self.toks[k].end, |t| t.end)));
            }
        }
        None
    }

    /// Who an amount at `k` goes to (`to them`, `for myself`, `each`), and the tokens after.
    fn role_at(&self, k: usize, verb: Verb) -> (Option<Role>, usize) {
        match self.word(k) {
            Some("each") => (Some(Role::Other), k + 1),
            Some("myself") => (Some(Role::Own), k + 1),
            Some(p @ ("to" | "for" | "with")) if !(p == "with" && verb == Verb::Keep) => {
                let mut j = k + 1;
                while matches!(self.word(j), Some("the" | "my" | "our" | "this" | "that")) {
                    j += 1;
                }
                let Some(who) = self.word(j) else { return (None, k) };
                let role = if matches!(who, "me" | "myself") {
                    Role::Own
                } else if OTHERS.contains(&who) || self.capitalised(j) {
                    Role::Other
                } else {
                    return (None, k);
                };
                j += 1;
                // "the other participant", "Participant 2", "Player B".
                if who == "other" && self.word(j).is_some_and(|w| OTHERS.contains(&w)) {
                    j += 1;
                }
                if self.name_follows(j - 1) {
                    j += 1;
                }
                (Some(role), j)
            }
            _ => (None, k),
        }
    }

    /// Whether the word at `k` is written capitalised (a name), other than `I`.
    fn capitalised(&self, k: usize) -> bool {
        let t = &self.toks[k];
        t.kind == Kind::Word && t.low != "i" && self.text[t.start..].starts_with(char::is_uppercase)
    }

    /// Whether `k` is a noun such as `Participant` or `option` followed by its name (`2`, `Y`):
    /// a letter, or a number written capitalised after it (`Participant 2`, not `the other
    /// person 2 dollars`) or after `option`, without `$` or `dollars`.
    fn name_follows(&self, k: usize) -> bool {
        let Some(noun) = self.word(k).filter(|w| NAME_NOUNS.contains(w)) else { return false };
        let named = noun == "option" || self.capitalised(k);
        self.toks.get(k + 1).is_some_and(|t| {
            let raw = &self.text[t.start..t.end];
            let number = matches!(t.kind, Kind::Number(_))
                && !raw.starts_with('$')
                && !self.word(k + 2).is_some_and(|w| DOLLARS.contains(&w) || w == "percent")
                && !matches!(self.toks.get(k + 2).map(|t| t.kind), Some(Kind::Mark('%')));
            (named && number) || (t.kind == Kind::Word && raw.chars().count() == 1 && raw != "a")
        })
    }

    /// The object of a verb: from `from` to `limit`, skipping the recipient and the endowment.
    fn object(&self, head: &Head, limit: usize) -> Object {
        let mut k = head.next;
        let mut words = 0;
        while k < limit && words < 8 {
            let t = &self.toks[k];
            if let Kind::Mark(c) = t.kind {
                if self.decor(k) || matches!(c, ':' | '=') {
                    k += 1;
                    continue;
                }
                break;
            }
            if self.format == Format::Binary {
                if words > 2 {
                    break;
                }
                if let Some((index, end)) = self.label_at(k) {
                    return if head.negated { Object::Nothing } else { Object::Label { index, end } };
                }
                if OBJECT_STOPS.contains(&t.low.as_str()) {
                    break;
                }
                k += 1;
                words += 1;
                continue;
            }
            let w = t.low.as_str();
            if head.negated {
                // "anything", "any money", "a cent", "a single dollar".
                let mut j = k;
                let any = match w {
                    "anything" => true,
                    "any" => {
                        if self.word(k + 1).is_some_and(|x| x == "money" || DOLLARS.contains(&x)) {
                            j += 1;
                        }
                        true
                    }
                    "a" if self.word(k + 1).is_some_and(|x| {
                        matches!(x, "cent" | "penny" | "dime" | "dollar" | "thing" | "single" | "buck")
                    }) =>
                    {
                        j += if self.is(k + 1, "single") && self.word(k + 2).is_some() { 2 } else { 1 };
                        true
                    }
                    _ => false,
                };
                if any {
                    return Object::NoneAtAll { end: self.toks[j].end };
                }
            }
            if OBJECT_STOPS.contains(&w) || (w == "rather" && self.is(k + 1, "than")) {
                break;
            }
            if let Some(n) = self.even_at(k) {
                if head.negated {
                    return Object::Nothing;
                }
                return Object::Even { next: k + n, end: self.toks[k + n - 1].end };
            }
            // "of my 10 dollars", "out of 10", "from the $10": the endowment.
            let endowment = (matches!(w, "of" | "from") && !(k > 0 && self.is(k - 1, "total")))
                || (w == "out" && self.is(k + 1, "of"));
            if endowment {
                k += if w == "out" { 2 } else { 1 };
                while matches!(
                    self.word(k),
                    Some("my" | "the" | "our" | "this" | "that" | "these" | "total" | "available")
                ) {
                    k += 1;
                }
                if let Some((_, n)) = self.amount_at(k) {
                    k += n;
                }
                words += 1;
                continue;
            }
            // "between 3 and 5" is vague; "split between us" is not.
            let vague = if w == "between" {
                matches!(self.toks.get(k + 1).map(|t| t.kind), Some(Kind::Number(_)))
            } else {
                VAGUE.contains(&w)
            };
            if vague
                || (w == "at" && matches!(self.word(k + 1), Some("least" | "most")))
                || (w == "up" && self.is(k + 1, "to"))
            {
                return Object::Nothing;
            }
            if self.name_follows(k) {
                k += 2;
                words += 1;
                continue;
            }
            if let Some((value, n)) = self.amount_at(k) {
                // What is split is the endowment: "split the $10 evenly".
                let pie = head.verb == Verb::Split
                    && k > 0
                    && matches!(self.word(k - 1), Some("the" | "my" | "our" | "this" | "all" | "these"));
                if pie {
                    k += n;
                    words += 1;
                    continue;
                }
                if head.negated {
                    return Object::Nothing;
                }
                let (role, next) = self.role_at(k + n, head.verb);
                let end = self.toks[next.max(k + n) - 1].end;
                return Object::Amount { value, role, next: next.max(k + n), end };
            }
            // Another verb ends the search; after an article it is a noun ("a share of").
            let noun =
                k > 0 && matches!(self.word(k - 1), Some("a" | "an" | "the" | "my" | "their" | "fair" | "equal"));
            if self.verb_at(k).is_some() && !noun {
                break;
            }
            k += 1;
            words += 1;
        }
        Object::Nothing
    }

    /// The dollars given by an amount read with a verb and a recipient.
    fn given(verb: Verb, value: Option<i64>, role: Option<Role>) -> Option<Said> {
        let role = role.or(match verb {
            Verb::Give | Verb::Choose => Some(Role::Other),
            Verb::Keep => Some(Role::Own),
            Verb::Split => None,
        });
        match (role, value) {
            (Some(Role::Other), v) => Some(Said::Given(v)),
            (Some(Role::Own), Some(v)) if (0..=OPEN_MAX).contains(&v) => Some(Said::Given(Some(OPEN_MAX - v))),
            (Some(Role::Own), _) => Some(Said::Given(None)),
            // A split without a recipient: only an equal one reads.
            (None, Some(5)) => Some(Said::Given(Some(5))),
            (None, _) => None,
        }
    }

    fn push(&mut self, said: Said, start: usize, end: usize, conditional: bool) {
        self.out.push(Statement { said, span: start..end, conditional });
    }

    /// Reads a decision from its head: its object, then what the clause adds (`and` + another
    /// verb, `or` + another amount, an amount with its recipient). Returns the first token not
    /// read.
    fn decide(&mut self, head: Head, limit: usize, hypothetical: bool) -> usize {
        let conditional = hypothetical || head.tentative;
        let mut next = match self.object(&head, limit) {
            Object::Amount { value, role, next, end } => {
                if let Some(said) = Self::given(head.verb, value, role) {
                    self.push(said, head.start, end, conditional);
                }
                next
            }
            Object::Even { next, end } => {
                self.push(Said::Given(Some(5)), head.start, end, conditional);
                next
            }
            Object::NoneAtAll { end } => {
                let said = if head.verb == Verb::Keep { Some(OPEN_MAX) } else { Some(0) };
                if head.verb != Verb::Split {
                    self.push(Said::Given(said), head.start, end, conditional);
                }
                return limit;
            }
            Object::Label { index, end } => {
                self.push(Said::Label(index), head.start, end, conditional);
                return self.toks.iter().position(|t| t.start >= end).unwrap_or(limit).min(limit);
            }
            Object::Nothing => return head.next,
        };
        while next < limit {
            if let Some((value, n)) = self.amount_at(next) {
                // "6 for me and 4 for them": an amount with its recipient.
                let (role, after) = self.role_at(next + n, head.verb);
                if role.is_some() {
                    if let Some(said) = Self::given(head.verb, value, role) {
                        let end = self.toks[after - 1].end;
                        self.push(said, self.toks[next].start, end, conditional);
                    }
                }
                next = after.max(next + n);
                continue;
            }
            let Some(w) = self.word(next) else {
                let or_follows = matches!(self.toks[next].kind, Kind::Mark(',')) && self.is(next + 1, "or");
                if self.decor(next) || matches!(self.toks[next].kind, Kind::Mark(':')) || or_follows {
                    next += 1;
                    continue;
                }
                return next;
            };
            if matches!(w, "than" | "not" | "instead" | "except" | "but" | "versus")
                || (w == "rather" && self.is(next + 1, "than"))
            {
                break;
            }
            if matches!(w, "and" | "then" | "plus") {
                let mut j = next + 1;
                while matches!(self.word(j), Some("then" | "i" | "i'll" | "i'd" | "also" | "will" | "would" | "so")) {
                    j += 1;
                }
                if let Some((verb, n)) = self.verb_at(j) {
                    let chained = Head {
                        verb,
                        next: j + n,
                        negated: false,
                        tentative: head.tentative,
                        start: self.toks[j].start,
                    };
                    return self.decide(chained, limit, hypothetical);
                }
                next += 1;
                continue;
            }
            if w == "or" {
                let mut j = next + 1;
                while matches!(self.word(j), Some("maybe" | "perhaps" | "possibly" | "even")) {
                    j += 1;
                }
                if let Some((value, n)) = self.amount_at(j) {
                    // "4 or 5": both are stated.
                    let (role, after) = self.role_at(j + n, head.verb);
                    if let Some(said) = Self::given(head.verb, value, role) {
                        let end = self.toks[after.max(j + n) - 1].end;
                        self.push(said, head.start, end, conditional);
                    }
                    next = after.max(j + n);
                    continue;
                }
                next += 1;
                continue;
            }
            if matches!(w, "dollars" | "dollar" | "please") {
                next += 1;
                continue;
            }
            return next;
        }
        next
    }
}
