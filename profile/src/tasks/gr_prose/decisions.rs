//! How the reader finds a decision in a clause: its verb, its amount or label, its recipient,
//! and whether it commits.

use std::ops::Range;

use super::words::*;
use super::*;

impl Reader<'_> {
    /// An amount standing alone as a conclusion or a correction states an answer: `…, so $5`,
    /// `Actually, 4`, `Actually no, 4`, `Make it 6`.
    pub(super) fn read_fragment(&mut self, clause: &Clause, after_revision: bool) {
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

    pub(super) fn read_clause(&mut self, clause: &Clause) {
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
    pub(super) fn head(&self, i: usize, range: &Range<usize>, limit: usize, bullet: bool) -> Option<(Head, bool)> {
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
    pub(super) fn i_before(&self, i: usize) -> bool {
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
    pub(super) fn window(&self, from: usize, limit: usize, start: usize, modal_in_subject: bool) -> Option<Head> {
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
    pub(super) fn verb_at(&self, k: usize) -> Option<(Verb, usize)> {
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
    pub(super) fn amount_at(&self, k: usize) -> Option<(Option<i64>, usize)> {
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
    pub(super) fn even_at(&self, k: usize) -> Option<usize> {
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

    pub(super) fn value(&self, k: usize) -> i64 {
        match self.toks[k].kind {
            Kind::Number(Some(v)) => v,
            _ => -1,
        }
    }

    /// A label at `k`: its index and the byte where it ends.
    pub(super) fn label_at(&self, k: usize) -> Option<(usize, usize)> {
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
    pub(super) fn role_at(&self, k: usize, verb: Verb) -> (Option<Role>, usize) {
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
    pub(super) fn capitalised(&self, k: usize) -> bool {
        let t = &self.toks[k];
        t.kind == Kind::Word && t.low != "i" && self.text[t.start..].starts_with(char::is_uppercase)
    }

    /// Whether `k` is a noun such as `Participant` or `option` followed by its name (`2`, `Y`):
    /// a letter, or a number written capitalised after it (`Participant 2`, not `the other
    /// person 2 dollars`) or after `option`, without `$` or `dollars`.
    pub(super) fn name_follows(&self, k: usize) -> bool {
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
    pub(super) fn object(&self, head: &Head, limit: usize) -> Object {
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
    pub(super) fn given(verb: Verb, value: Option<i64>, role: Option<Role>) -> Option<Said> {
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

    pub(super) fn push(&mut self, said: Said, start: usize, end: usize, conditional: bool) {
        self.out.push(Statement { said, span: start..end, conditional });
    }

    /// Reads a decision from its head: its object, then what the clause adds (`and` + another
    /// verb, `or` + another amount, an amount with its recipient). Returns the first token not
    /// read.
    pub(super) fn decide(&mut self, head: Head, limit: usize, hypothetical: bool) -> usize {
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
