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

mod clauses;
mod decisions;
mod words;

use std::ops::Range;

use super::gr::{Condition, Format, OPEN_MAX};
use words::tokenize;

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
