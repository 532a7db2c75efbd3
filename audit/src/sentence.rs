//! Deterministic sentence splitting of a reasoning segment.
//!
//! The rule, applied in this order:
//! 1. Line breaks always end a sentence (`\r\n` and `\r` count as `\n`); each line is split on
//!    its own. A line's list marker (`-`, `*`, `+`, `•`, `1.`, `1)`, `#` headings) is dropped.
//! 2. Within a line a sentence ends after a run of terminators (`.`, `!`, `?`, `…`), with the
//!    closing quotes and brackets that follow it (`"`, `'`, `)`, `]`, `”`, `’`, `*`), when the
//!    run is followed by whitespace or the end of the line. A `.` between digits (`0.5`,
//!    `3.14`) is therefore never an end: no whitespace follows it.
//! 3. A single `.` ending a known abbreviation ([`ABBREVIATIONS`]: `e.g.`, `i.e.`, `vs.`, …)
//!    does not end the sentence; `etc.` ends it only when the next word begins with an upper-case
//!    letter. Single letters are not abbreviations: in these games "option A." ends a sentence.
//! 4. Each sentence is trimmed; a piece without a letter or digit (a lone `...`) is dropped.
//!
//! The same text always gives the same sentences, and the sentences concatenated hold every
//! letter and digit of the text outside list markers.

/// Words ending in `.` that do not end a sentence (compared lower-cased, without leading
/// brackets or quotes).
pub const ABBREVIATIONS: [&str; 15] = [
    "e.g.", "i.e.", "vs.", "cf.", "approx.", "mr.", "mrs.", "ms.", "dr.", "incl.", "resp.", "viz.", "al.", "a.k.a.",
    "etc.",
];

const TERMINATORS: [char; 4] = ['.', '!', '?', '…'];
const CLOSERS: [char; 7] = ['"', '\'', ')', ']', '”', '’', '*'];

/// Splits `text` into sentences by the rule of the [module documentation](self).
pub fn split_sentences(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = Vec::new();
    for line in text.lines() {
        split_line(strip_list_marker(line.trim()), &mut out);
    }
    out
}

/// The line without a leading list marker or heading marks.
fn strip_list_marker(line: &str) -> &str {
    for marker in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    if hashes > 0 && line[hashes..].starts_with(' ') {
        return line[hashes..].trim_start();
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && digits <= 3 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim_start();
        }
    }
    line
}

fn split_line(line: &str, out: &mut Vec<String>) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut start = 0usize;
    let mut i = 0usize;
    while i < chars.len() {
        let (_, c) = chars[i];
        if !TERMINATORS.contains(&c) {
            i += 1;
            continue;
        }
        let run_start = i;
        while i < chars.len() && TERMINATORS.contains(&chars[i].1) {
            i += 1;
        }
        let single_dot = i - run_start == 1 && c == '.';
        while i < chars.len() && CLOSERS.contains(&chars[i].1) {
            i += 1;
        }
        let end = chars.get(i).map_or(line.len(), |(b, _)| *b);
        let at_space = i == chars.len() || chars[i].1.is_whitespace();
        if !at_space {
            continue;
        }
        if single_dot && !abbreviation_ends(line, start, chars[run_start].0, end) {
            continue;
        }
        push(&line[start..end], out);
        start = end;
    }
    push(&line[start..], out);
}

/// Whether the `.` at byte `dot` may end a sentence: false after an abbreviation (and after
/// `etc.` when the next word is not capitalised).
fn abbreviation_ends(line: &str, start: usize, dot: usize, end: usize) -> bool {
    let word_start = line[start..dot].rfind(char::is_whitespace).map_or(start, |p| start + p + 1);
    let word = line[word_start..dot + 1].trim_start_matches(['(', '[', '"', '\'', '“', '‘']).to_lowercase();
    if !ABBREVIATIONS.contains(&word.as_str()) {
        return true;
    }
    if word == "etc." {
        return line[end..].trim_start().chars().next().is_some_and(char::is_uppercase);
    }
    false
}

fn push(piece: &str, out: &mut Vec<String>) {
    let s = piece.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::split_sentences;

    #[test]
    fn splits_on_terminators_followed_by_space() {
        assert_eq!(
            split_sentences("B1 gives me the most points. Is that fair? Yes!  I pick B1."),
            ["B1 gives me the most points.", "Is that fair?", "Yes!", "I pick B1."]
        );
    }

    #[test]
    fn keeps_decimals_and_abbreviations_inside_a_sentence() {
        assert_eq!(
            split_sentences("A share of 0.5 is fair, i.e. equal. Payoffs (e.g. 3.5 vs. 2) differ."),
            ["A share of 0.5 is fair, i.e. equal.", "Payoffs (e.g. 3.5 vs. 2) differ."]
        );
        // `etc.` ends a sentence only before a capitalised word.
        assert_eq!(
            split_sentences("Points, time, etc. matter. Money etc. Then B."),
            ["Points, time, etc. matter.", "Money etc.", "Then B."]
        );
    }

    #[test]
    fn single_letters_are_not_abbreviations() {
        assert_eq!(split_sentences("I choose option A. It pays more."), ["I choose option A.", "It pays more."]);
    }

    #[test]
    fn line_breaks_end_sentences_and_list_markers_go() {
        assert_eq!(
            split_sentences(
                "Step one\r\n1. Cooperation pays 3 each\n- Defection pays 5\n\n## Decision\n2) I cooperate"
            ),
            ["Step one", "Cooperation pays 3 each", "Defection pays 5", "Decision", "I cooperate"]
        );
    }

    #[test]
    fn closing_quotes_stay_with_their_sentence_and_empty_pieces_go() {
        assert_eq!(
            split_sentences("He said \"return the favor.\" Then... ok?! ..."),
            ["He said \"return the favor.\"", "Then...", "ok?!"]
        );
        assert!(split_sentences("  ... \n\n ").is_empty());
        assert_eq!(split_sentences("no terminator at the end"), ["no terminator at the end"]);
    }

    #[test]
    fn is_deterministic_and_loses_no_words() {
        let text = "Hmm… the other chose J. So 2.5 points each, etc. Fine.\nI'll cooperate";
        let a = split_sentences(text);
        assert_eq!(a, split_sentences(text));
        let words = |s: &str| s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).count();
        assert_eq!(a.iter().map(|s| words(s)).sum::<usize>(), words(text));
    }
}
