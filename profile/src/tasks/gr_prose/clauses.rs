//! How the reader cuts a text into sentences, parts and clauses, and marks each clause.

use std::ops::Range;

use super::words::*;
use super::{Clause, Kind, Marker, Reader};

impl Reader<'_> {
    /// The word at `k` (not a number or a mark), lower-cased.
    pub(super) fn word(&self, k: usize) -> Option<&str> {
        self.toks.get(k).filter(|t| t.kind == Kind::Word).map(|t| t.low.as_str())
    }

    pub(super) fn is(&self, k: usize, w: &str) -> bool {
        self.word(k) == Some(w)
    }

    pub(super) fn decor(&self, k: usize) -> bool {
        matches!(self.toks.get(k).map(|t| t.kind), Some(Kind::Mark(c)) if DECOR.contains(&c))
    }

    /// Whether the mark at `k` ends a sentence.
    pub(super) fn sentence_end(&self, k: usize) -> bool {
        matches!(self.toks[k].kind, Kind::Mark('.' | '!' | '?' | ';' | '\n'))
    }

    /// Whether the mark at `k` ends a clause: a comma or a dash (a hyphen with a space before it).
    pub(super) fn clause_mark(&self, k: usize) -> bool {
        match self.toks[k].kind {
            Kind::Mark(',' | '–' | '—') => true,
            Kind::Mark('-') => self.text[..self.toks[k].start].ends_with(char::is_whitespace),
            _ => false,
        }
    }

    /// The tokens of a connective that opens a new main clause at `k` (0: none).
    pub(super) fn connective(&self, k: usize) -> usize {
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
    pub(super) fn clauses(&self) -> Vec<Clause> {
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

    pub(super) fn sentence(&self, range: Range<usize>, bullet: bool, sentence: usize) -> Vec<Clause> {
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
    pub(super) fn opens(&self, range: &Range<usize>, at: usize) -> bool {
        (range.start..at)
            .all(|k| self.decor(k) || self.word(k).is_some_and(|w| OPENERS.contains(&w) || w == "only" || w == "even"))
    }

    /// The first condition, concession or rejection in a clause.
    pub(super) fn marker(&self, range: &Range<usize>) -> Option<(usize, Marker)> {
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
    pub(super) fn revision_only(&self, range: &Range<usize>) -> bool {
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
}
