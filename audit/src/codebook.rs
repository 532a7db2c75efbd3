//! The codebook as data: codes with their definitions and examples, the residual code, and
//! the lexicon coder's pattern rules, read from RON (`assets/codebooks/*.ron`).
//!
//! ```ron
//! Codebook(
//!     name: "default",          // recorded with every coded response
//!     version: 1,               // bump it whenever a definition or a rule changes
//!     description: "…",         // optional
//!     residual: "understanding", // the code of a sentence no value fits
//!     codes: [Code(name: "fairness", definition: "…", example: "…", statement: Some(…)), …],
//!     lexicon: [Rule(code: "fairness", patterns: ["evenly", "fair*"]), …],
//! )
//! ```
//!
//! Every struct denies unknown fields. Validation, after parsing: the name is non-empty, the
//! version at least 1, code names unique snake_case words, every code has a definition and an
//! example, the residual is one of the codes, every rule names a known code, and every pattern
//! is a lower-case phrase in the lexicon's pattern language (see
//! [`LexiconCoder`](super::coder::LexiconCoder)) written once in the whole lexicon. An error
//! names the file and the line and column (parse errors) or the field (`lexicon[3].patterns[1]`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use agora_records::families::audit::CoderKeyRef;
use agora_records::seed::hex_digest;

/// The shipped default codebook: the SUVA audit paper's eight value codes and `understanding`.
pub const DEFAULT_CODEBOOK_RON: &str = include_str!("../../assets/codebooks/default.ron");

/// Where the shipped codebook lives in the repository (named in its records).
pub const DEFAULT_CODEBOOK_PATH: &str = "assets/codebooks/default.ron";

/// A codebook: the codes a coder may assign, and the lexicon coder's rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Codebook {
    /// Name, recorded with every coded response.
    pub name: String,
    /// Version; a changed definition or rule gets a new version.
    pub version: u32,
    /// What the codebook is for and where its codes come from.
    #[serde(default)]
    pub description: String,
    /// The code of a sentence that states no value (it only restates the task).
    pub residual: String,
    /// The codes, in the order tables list them.
    pub codes: Vec<Code>,
    /// The lexicon coder's rules, in priority order: the first rule with a matching pattern
    /// codes the sentence; a sentence no rule matches gets the residual code.
    #[serde(default)]
    pub lexicon: Vec<Rule>,
}

/// One code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Code {
    /// Name (a snake_case word).
    pub name: String,
    /// Definition, as a coder (human or model) is given it.
    pub definition: String,
    /// An example sentence of the code.
    pub example: String,
    /// How the prefill intervention states the value in a reasoning
    /// ([`super::statements`]); a value without one cannot be inserted.
    #[serde(default)]
    pub statement: Option<super::statements::Statement>,
}

/// One lexicon rule: a code and the phrases that give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The code the rule assigns.
    pub code: String,
    /// Phrases, lower-case words separated by single spaces; a word ending in `*` matches any
    /// word it begins, and a lone `*` matches any one word.
    pub patterns: Vec<String>,
}

/// A codebook file that cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CodebookError {
    /// The file could not be read.
    #[error("codebook {}: cannot read: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The text is not a codebook (RON syntax, a missing or unknown field, a wrong type).
    #[error("codebook {}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser found.
        message: String,
    },
    /// The codebook parses but breaks a rule of the format.
    #[error("codebook {}: field `{field}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field at fault, e.g. `lexicon[3].patterns[1]`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A parsed and validated codebook, with the text and the digest it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedCodebook {
    /// The codebook.
    pub codebook: Codebook,
    /// Where it was read from.
    pub path: PathBuf,
    /// The file's text, byte for byte.
    pub source: String,
    /// Lower-case hex SHA-256 of `source`.
    pub sha256: String,
}

impl LoadedCodebook {
    /// The key of `coder`'s rows coded with this codebook.
    pub fn key<'a>(&'a self, coder: &'a str) -> CoderKeyRef<'a> {
        CoderKeyRef { coder, codebook: &self.codebook.name, version: self.codebook.version, sha256: &self.sha256 }
    }

    /// The shipped default codebook.
    pub fn default_codebook() -> LoadedCodebook {
        Codebook::parse(DEFAULT_CODEBOOK_RON, Path::new(DEFAULT_CODEBOOK_PATH))
            .expect("invariant: the shipped codebook parses and validates (tested)")
    }

    /// Reads and validates a codebook file.
    pub fn read(path: &Path) -> Result<LoadedCodebook, CodebookError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CodebookError::Read { path: path.to_path_buf(), message: e.to_string() })?;
        Codebook::parse(&text, path)
    }
}

impl Codebook {
    /// Parses and validates codebook text; `path` names the source in errors.
    pub fn parse(text: &str, path: &Path) -> Result<LoadedCodebook, CodebookError> {
        let codebook: Codebook = ron::Options::default().from_str(text).map_err(|e| CodebookError::Parse {
            path: path.to_path_buf(),
            line: e.span.start.line,
            column: e.span.start.col,
            message: e.code.to_string(),
        })?;
        codebook.validate().map_err(|(field, message)| CodebookError::Invalid {
            path: path.to_path_buf(),
            field,
            message,
        })?;
        Ok(LoadedCodebook {
            codebook,
            path: path.to_path_buf(),
            source: text.to_string(),
            sha256: hex_digest(text.as_bytes()),
        })
    }

    /// The code with this name.
    pub fn code(&self, name: &str) -> Option<&Code> {
        self.codes.iter().find(|c| c.name == name)
    }

    /// The value codes (every code but the residual), in the codebook's order.
    pub fn values(&self) -> impl Iterator<Item = &Code> {
        self.codes.iter().filter(move |c| c.name != self.residual)
    }

    /// Checks the rules of the format; the error is (field, message).
    fn validate(&self) -> Result<(), (String, String)> {
        let err = |field: String, message: &str| Err((field, message.to_string()));
        if self.name.trim().is_empty() {
            return err("name".into(), "must not be empty");
        }
        if self.version == 0 {
            return err("version".into(), "must be at least 1");
        }
        if self.codes.is_empty() {
            return err("codes".into(), "must list at least one code");
        }
        for (i, c) in self.codes.iter().enumerate() {
            let snake = !c.name.is_empty()
                && c.name.starts_with(|ch: char| ch.is_ascii_lowercase())
                && c.name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_');
            if !snake {
                return err(format!("codes[{i}].name"), &format!("`{}` is not a snake_case word", c.name));
            }
            if self.codes[..i].iter().any(|o| o.name == c.name) {
                return err(format!("codes[{i}].name"), &format!("code `{}` is listed twice", c.name));
            }
            if c.definition.trim().is_empty() {
                return err(format!("codes[{i}].definition"), "must not be empty");
            }
            if c.example.trim().is_empty() {
                return err(format!("codes[{i}].example"), "must not be empty");
            }
            if let Some(st) = &c.statement {
                st.validate().map_err(|(f, m)| (format!("codes[{i}].statement.{f}"), m))?;
            }
        }
        if self.code(&self.residual).is_none() {
            return err("residual".into(), &format!("`{}` is not one of the codes", self.residual));
        }
        let mut seen: Vec<(&str, String)> = Vec::new();
        for (i, r) in self.lexicon.iter().enumerate() {
            if self.code(&r.code).is_none() {
                return err(format!("lexicon[{i}].code"), &format!("`{}` is not one of the codes", r.code));
            }
            if r.patterns.is_empty() {
                return err(format!("lexicon[{i}].patterns"), "must list at least one pattern");
            }
            for (j, p) in r.patterns.iter().enumerate() {
                let field = format!("lexicon[{i}].patterns[{j}]");
                if let Err(m) = check_pattern(p) {
                    return err(field, &format!("`{p}`: {m}"));
                }
                if let Some((_, first)) = seen.iter().find(|(q, _)| *q == p.as_str()) {
                    return err(field, &format!("`{p}` is already listed at {first}"));
                }
                seen.push((p.as_str(), field));
            }
        }
        Ok(())
    }
}

/// Checks one pattern of the lexicon's pattern language (the module documentation of
/// [`super::coder`] describes it; the lexicon coder matches by it).
pub(crate) fn check_pattern(p: &str) -> Result<(), String> {
    if p.trim().is_empty() {
        return Err("a pattern must not be empty".into());
    }
    if p.to_lowercase() != p {
        return Err("write patterns in lower case".into());
    }
    let parts: Vec<&str> = p.split(' ').collect();
    for w in &parts {
        if *w == "*" {
            continue;
        }
        let body = w.strip_suffix('*').unwrap_or(w);
        let word_ok = !body.is_empty()
            && body.chars().all(|c| c.is_alphanumeric() || c == '\'')
            && !body.starts_with('\'')
            && !body.ends_with('\'');
        if !word_ok {
            return Err(
                "a pattern is words of letters, digits and inner apostrophes, separated by single spaces (a word may end in `*`)"
                    .into(),
            );
        }
    }
    if parts.iter().all(|w| *w == "*") {
        return Err("a pattern of wildcards alone matches every sentence".into());
    }
    Ok(())
}

/// Checks that every claim of `table` names its mechanism's values by value codes of
/// `codebook` (not a residual code), naming the first claim and value that does not.
pub fn check_claims(table: &agora_analysis::claims::ClaimTable, codebook: &Codebook) -> Result<(), String> {
    for c in &table.claims {
        if let Some(agora_analysis::claims::Mechanism::Values { values, .. }) = &c.mechanism {
            for v in values {
                if !codebook.values().any(|code| code.name == *v) {
                    return Err(format!(
                        "claim {}: mechanism.values: `{v}` is not a value code of the codebook {} v{}",
                        c.id, codebook.name, codebook.version
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"Codebook(
    name: "mini",
    version: 1,
    residual: "understanding",
    codes: [
        Code(name: "fairness", definition: "Equal split.", example: "B2 is even."),
        Code(name: "understanding", definition: "Restates the task.", example: "There are two options."),
    ],
    lexicon: [Rule(code: "fairness", patterns: ["even*"])],
)"#;

    fn parse(text: &str) -> Result<LoadedCodebook, CodebookError> {
        Codebook::parse(text, Path::new("mine.ron"))
    }

    #[test]
    fn the_shipped_codebook_holds_seed_003s_codes_with_definitions_and_examples() {
        let cb = LoadedCodebook::default_codebook();
        let names: Vec<&str> = cb.codebook.codes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "positive_reciprocity",
                "negative_reciprocity",
                "ingroup_cooperation",
                "fairness",
                "social_welfare",
                "competition",
                "self_interest",
                "altruism",
                "understanding"
            ]
        );
        assert_eq!(cb.codebook.residual, "understanding");
        let fairness = cb.codebook.code("fairness").expect("fairness");
        assert_eq!(fairness.definition, "Preferring an equal split or a smaller gap between payoffs.");
        assert_eq!(fairness.example, "B2 splits the points more evenly between us.");
        assert_eq!(cb.codebook.values().count(), 8);
        assert_eq!(cb.sha256.len(), 64);
        assert_eq!(cb.sha256, hex_digest(DEFAULT_CODEBOOK_RON.as_bytes()));
    }

    #[test]
    fn a_minimal_codebook_parses() {
        let cb = parse(MINIMAL).expect("parses");
        assert_eq!(cb.codebook.name, "mini");
        assert_eq!(cb.codebook.description, "");
        assert_eq!(cb.path, Path::new("mine.ron"));
    }

    #[test]
    fn syntax_errors_and_unknown_fields_name_file_line_and_column() {
        let e = parse(&MINIMAL.replace("version: 1,", "version: 1,\n    colour: \"red\",")).expect_err("unknown field");
        let text = e.to_string();
        assert!(matches!(e, CodebookError::Parse { line: 4, .. }), "{e:?}");
        assert!(text.starts_with("codebook mine.ron:4:") && text.contains("colour"), "{text}");
        let e = parse(&MINIMAL.replace("example: \"B2 is even.\"", "exampel: \"B2 is even.\"")).expect_err("typo");
        assert!(e.to_string().contains("exampel") && matches!(e, CodebookError::Parse { line: 6, .. }), "{e}");
        let e = parse(&MINIMAL.replace("version: 1,", "version: \"one\",")).expect_err("type");
        assert!(matches!(e, CodebookError::Parse { line: 3, .. }), "{e:?}");
        let e = parse(&MINIMAL.replace("residual: \"understanding\",", "")).expect_err("missing field");
        assert!(e.to_string().contains("residual"), "{e}");
        let e = parse("Codebook(name: \"x\"").expect_err("unclosed");
        assert!(matches!(e, CodebookError::Parse { line: 1, .. }), "{e:?}");
    }

    #[test]
    fn semantic_errors_name_the_field() {
        let field = |text: String| match parse(&text) {
            Err(CodebookError::Invalid { field, path, .. }) => {
                assert_eq!(path, Path::new("mine.ron"));
                field
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(field(MINIMAL.replace("residual: \"understanding\"", "residual: \"restating\"")), "residual");
        assert_eq!(field(MINIMAL.replace("Rule(code: \"fairness\"", "Rule(code: \"fairnes\"")), "lexicon[0].code");
        assert_eq!(field(MINIMAL.replace("[\"even*\"]", "[\"even*\", \"Evenly\"]")), "lexicon[0].patterns[1]");
        assert_eq!(field(MINIMAL.replace("[\"even*\"]", "[\"even*\", \"split, evenly\"]")), "lexicon[0].patterns[1]");
        assert_eq!(field(MINIMAL.replace("[\"even*\"]", "[\"even*\", \"even*\"]")), "lexicon[0].patterns[1]");
        assert_eq!(field(MINIMAL.replace("[\"even*\"]", "[]")), "lexicon[0].patterns");
        assert_eq!(field(MINIMAL.replace("name: \"fairness\"", "name: \"Fairness\"")), "codes[0].name");
        assert_eq!(field(MINIMAL.replace("name: \"fairness\"", "name: \"understanding\"")), "codes[1].name");
        assert_eq!(field(MINIMAL.replace("definition: \"Equal split.\"", "definition: \" \"")), "codes[0].definition");
        assert_eq!(field(MINIMAL.replace("example: \"B2 is even.\"", "example: \"\"")), "codes[0].example");
        assert_eq!(field(MINIMAL.replace("version: 1", "version: 0")), "version");
        let e = parse(&MINIMAL.replace("[\"even*\"]", "[\"even*\", \"Evenly\"]")).expect_err("upper case");
        assert_eq!(
            e.to_string(),
            "codebook mine.ron: field `lexicon[0].patterns[1]`: `Evenly`: write patterns in lower case"
        );
    }

    #[test]
    fn a_missing_file_is_a_read_error_naming_it() {
        let e = LoadedCodebook::read(Path::new("/nonexistent/cb.ron")).expect_err("missing");
        assert!(e.to_string().starts_with("codebook /nonexistent/cb.ron: cannot read"), "{e}");
    }

    #[test]
    fn the_shipped_claims_name_value_codes_of_the_default_codebook() {
        let cb = LoadedCodebook::default_codebook().codebook;
        check_claims(agora_analysis::claims::ClaimTable::shipped(), &cb).expect("shipped claims");
        let table = |value: &str| {
            agora_analysis::claims::ClaimTable::parse(&format!(
                "ClaimTable(version: 4, claims: [Claim(id: \"x\", text: \"t\", environment: \"bargaining\", \
                 arm: \"ultimatum\", metric: \"offer\", kind: Equivalence(anchor: \"ultimatum-offer\"), \
                 mechanism: Values(role: \"proposer\", values: [\"{value}\"], sign: 1.0, why: \"w\"))])"
            ))
            .expect("parses")
        };
        assert!(check_claims(&table("fairness"), &cb).is_ok());
        let e = check_claims(&table("kindness"), &cb).expect_err("unknown code");
        assert!(
            e.contains("claim x: mechanism.values: `kindness` is not a value code of the codebook default v"),
            "{e}"
        );
        let e = check_claims(&table("understanding"), &cb).expect_err("a residual code");
        assert!(e.contains("`understanding` is not a value code"), "{e}");
    }
}
