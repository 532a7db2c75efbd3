//! Coders: what assigns one code of the codebook to each sentence of a response's reasoning.
//!
//! [`Coder`] is the interface every coder implements (the lexicon coder here; the LLM coder
//! lives in the `agora` binary, which holds the model client), and [`validate_output`] is the strict check the audit applies
//! to any coder's output: one code per sentence, each a code of the codebook. A violation is
//! an error, recorded as such, never repaired.
//!
//! [`LexiconCoder`] is a transparent pattern matcher whose rules live in the codebook. A
//! sentence and a pattern are both read as words: the text is lower-cased (Unicode), `’` and
//! `‘` read as `'`, and a word is a maximal run of letters, digits and apostrophes with
//! apostrophes trimmed from its ends (`Person A's payoff.` reads `person a's payoff`). A
//! pattern matches when its words occur consecutively in the sentence; a pattern word ending in
//! `*` matches any word it begins (`fair*` matches `fair`, `fairness`, `fairly`, not
//! `unfair`), and a lone `*` matches any one word. The rules are tried in the codebook's order
//! and, within a rule, the patterns in theirs; the first match codes the sentence, and a
//! sentence nothing matches gets the residual code. So the lexicon's order is its priority, and
//! every code can be traced to the rule and pattern that gave it.

use super::codebook::Codebook;

/// One sentence's code, with what gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coded {
    /// The code.
    pub code: String,
    /// Why: for the lexicon coder, the rule and pattern that matched (`lexicon[3] "evenly"`);
    /// none for the residual code.
    pub evidence: Option<String>,
}

/// A coder's failure on one response.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CoderError(pub String);

/// Assigns one code of a codebook to each sentence of one response's reasoning.
///
/// A coder sees the reasoning's sentences only, never the action or a post-hoc rationale: a
/// coder that reads the answer makes errors that depend on the action, and those have no
/// guaranteed direction (the SUVA audit paper §240.6.2).
///
/// Its [`id`](Coder::id) names it in every row it codes, so two versions of a coder must have
/// two ids: rows of different ids sit beside each other and the validation gate judges each
/// id on its own. [`identity`](Coder::identity) is what the id stands for, frozen in the
/// store's `audit_coders` table beside it.
pub trait Coder {
    /// The coder's identity and version as recorded with every code, e.g. `lexicon/1`.
    fn id(&self) -> String;

    /// What makes this coder this version, as a JSON object recorded in `audit_coders` with
    /// the id (an LLM coder: its model, served id, sampling parameters and prompt template).
    /// By default the id alone.
    fn identity(&self) -> serde_json::Value {
        serde_json::json!({ "coder": self.id() })
    }

    /// Facts of how the coder was reached that do not make another version (an LLM coder's
    /// endpoints), recorded beside the identity; `null` by default.
    fn serving(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Called by the audit once, before any response is coded, with the reasoning sentences
    /// of every response it will code (in audit order; identical lists may repeat). A
    /// model-backed coder sends its requests here, concurrently; an error stops the audit
    /// before anything is written (a server that cannot be reached is no coder output to
    /// record). Does nothing by default.
    fn prepare(&self, responses: &[Vec<String>]) -> Result<(), CoderError> {
        let _ = responses;
        Ok(())
    }

    /// Codes the sentences of one response, in order: one [`Coded`] per sentence.
    fn code(&self, sentences: &[String]) -> Result<Vec<Coded>, CoderError>;
}

/// Checks a coder's output for one response: exactly one code per sentence, and every code
/// one of the codebook's.
pub fn validate_output(codebook: &Codebook, sentences: usize, coded: &[Coded]) -> Result<(), CoderError> {
    if coded.len() != sentences {
        return Err(CoderError(format!("{} codes for {sentences} sentences", coded.len())));
    }
    if let Some((i, c)) = coded.iter().enumerate().find(|(_, c)| codebook.code(&c.code).is_none()) {
        return Err(CoderError(format!("sentence {i}: unknown code `{}`", c.code)));
    }
    Ok(())
}

/// The words of a text as the lexicon reads them (see the [module documentation](self)).
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace(['’', '‘'], "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[derive(Clone, Debug)]
enum Word {
    Exact(String),
    Prefix(String),
    Any,
}

impl Word {
    fn matches(&self, w: &str) -> bool {
        match self {
            Word::Exact(x) => x == w,
            Word::Prefix(p) => w.starts_with(p.as_str()),
            Word::Any => true,
        }
    }
}

#[derive(Clone, Debug)]
struct Pattern {
    rule: usize,
    code: String,
    text: String,
    words: Vec<Word>,
}

/// The lexicon coder: the codebook's rules, tried in order (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct LexiconCoder {
    patterns: Vec<Pattern>,
    residual: String,
}

impl LexiconCoder {
    /// Version of the matching rules (the words, the wildcards, the order); the rules themselves
    /// are versioned with the codebook.
    pub const VERSION: u32 = 1;

    /// The coder of a (validated) codebook's lexicon.
    pub fn new(codebook: &Codebook) -> LexiconCoder {
        let mut patterns = Vec::new();
        for (i, rule) in codebook.lexicon.iter().enumerate() {
            for p in &rule.patterns {
                let words = p
                    .split(' ')
                    .map(|w| match w.strip_suffix('*') {
                        _ if w == "*" => Word::Any,
                        Some(prefix) => Word::Prefix(prefix.to_string()),
                        None => Word::Exact(w.to_string()),
                    })
                    .collect();
                patterns.push(Pattern { rule: i, code: rule.code.clone(), text: p.clone(), words });
            }
        }
        LexiconCoder { patterns, residual: codebook.residual.clone() }
    }

    /// The code of one sentence, with the rule and pattern that gave it.
    pub fn code_sentence(&self, sentence: &str) -> Coded {
        let words = words(sentence);
        for p in &self.patterns {
            let n = p.words.len();
            let hit = words.len() >= n
                && (0..=words.len() - n).any(|s| p.words.iter().zip(&words[s..]).all(|(pw, w)| pw.matches(w)));
            if hit {
                return Coded { code: p.code.clone(), evidence: Some(format!("lexicon[{}] \"{}\"", p.rule, p.text)) };
            }
        }
        Coded { code: self.residual.clone(), evidence: None }
    }
}

impl Coder for LexiconCoder {
    fn id(&self) -> String {
        format!("lexicon/{}", Self::VERSION)
    }

    fn identity(&self) -> serde_json::Value {
        serde_json::json!({ "kind": "lexicon", "version": Self::VERSION })
    }

    fn code(&self, sentences: &[String]) -> Result<Vec<Coded>, CoderError> {
        Ok(sentences.iter().map(|s| self.code_sentence(s)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codebook::LoadedCodebook;

    fn coder() -> (LexiconCoder, Codebook) {
        let cb = LoadedCodebook::default_codebook().codebook;
        (LexiconCoder::new(&cb), cb)
    }

    #[test]
    fn every_example_of_the_default_codebook_gets_its_own_code() {
        let (coder, cb) = coder();
        for c in &cb.codes {
            assert_eq!(coder.code_sentence(&c.example).code, c.name, "example of {}: {:?}", c.name, c.example);
        }
    }

    #[test]
    fn seed_003s_examples_are_coded_as_their_codes() {
        // The example sentences of the SUVA audit paper §240.6.1, verbatim.
        let (coder, _) = coder();
        for (sentence, code) in [
            ("A helped me earlier, so I should return the favor.", "positive_reciprocity"),
            ("A took points from me, so I see no reason to be generous.", "negative_reciprocity"),
            ("We share a hometown, so helping a fellow member makes sense.", "ingroup_cooperation"),
            ("B2 splits the points more evenly between us.", "fairness"),
            ("B2 gives the largest total for the two of us.", "social_welfare"),
            ("I prefer to stay ahead of person A.", "competition"),
            ("B1 gives me the most points.", "self_interest"),
            ("Person A would be better off with B2.", "altruism"),
        ] {
            assert_eq!(coder.code_sentence(sentence).code, code, "{sentence}");
        }
    }

    #[test]
    fn sentences_that_restate_the_task_are_understanding() {
        let (coder, _) = coder();
        for s in [
            "I am person B and choose between B1 and B2.",
            "If both choose Option J, each gets 3 points.",
            "This is round 2 of 4.",
        ] {
            let c = coder.code_sentence(s);
            assert_eq!((c.code.as_str(), c.evidence), ("understanding", None), "{s}");
        }
    }

    #[test]
    fn seed_003s_failure_modes_show_as_the_seed_describes() {
        let (coder, _) = coder();
        // An altruistic paraphrase without a pattern falls through to understanding.
        assert_eq!(coder.code_sentence("I care about how much person A ends up with.").code, "understanding");
        // A self-interested sentence that happens to contain "fair" is coded fairness: the
        // fairness rule comes before the self-interest rule.
        let c = coder.code_sentence("To be fair, B1 simply gives me the most points.");
        assert_eq!(c.code, "fairness");
        assert!(c.evidence.as_deref().is_some_and(|e| e.contains("fair")), "{c:?}");
    }

    #[test]
    fn evidence_names_the_rule_and_pattern() {
        let (coder, cb) = coder();
        let c = coder.code_sentence("B2 splits the points more evenly between us.");
        let rule = cb.lexicon.iter().position(|r| r.code == "fairness" && r.patterns.iter().any(|p| p == "evenly"));
        assert_eq!(c.evidence, Some(format!("lexicon[{}] \"evenly\"", rule.expect("a fairness rule has `evenly`"))));
    }

    #[test]
    fn words_wildcards_and_priority() {
        let text = r#"Codebook(name: "t", version: 1, residual: "u",
            codes: [Code(name: "a", definition: "d", example: "e"), Code(name: "b", definition: "d", example: "e"),
                    Code(name: "u", definition: "d", example: "e")],
            lexicon: [Rule(code: "b", patterns: ["took * from me"]), Rule(code: "a", patterns: ["fair*", "a's payoff"]),
                      Rule(code: "b", patterns: ["points"])])"#;
        let cb = crate::codebook::Codebook::parse(text, std::path::Path::new("t.ron")).expect("parses").codebook;
        let coder = LexiconCoder::new(&cb);
        let code = |s: &str| coder.code_sentence(s).code;
        assert_eq!(code("Fairness!"), "a");
        assert_eq!(code("That is unfair"), "u");
        assert_eq!(code("Person A’s payoff matters"), "a");
        assert_eq!(code("'A's payoff'"), "a");
        assert_eq!(code("They took 3 from me"), "b");
        assert_eq!(code("They took from me"), "u");
        // The first rule wins: `points` (rule 2) loses to `fair*` (rule 1).
        assert_eq!(code("Fair points"), "a");
        assert_eq!(words("Don't-stop: 0.5 (B2)!"), ["don't", "stop", "0", "5", "b2"]);
        assert_eq!(coder.id(), "lexicon/1");
    }

    #[test]
    fn output_validation_refuses_a_wrong_count_or_an_unknown_code() {
        let (_, cb) = coder();
        let ok = |c: &str| Coded { code: c.into(), evidence: None };
        assert!(validate_output(&cb, 2, &[ok("fairness"), ok("understanding")]).is_ok());
        assert_eq!(
            validate_output(&cb, 3, &[ok("fairness"), ok("understanding")]),
            Err(CoderError("2 codes for 3 sentences".into()))
        );
        assert_eq!(validate_output(&cb, 1, &[ok("greed")]), Err(CoderError("sentence 0: unknown code `greed`".into())));
    }
}
