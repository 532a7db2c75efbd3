//! The LLM coder of `agora audit --coder llm:MODEL` (the SUVA audit paper §240.6.1, §240.10.2): a model
//! outside the audited set, declared in a models file, labels each reasoning sentence with one
//! code of the codebook, through the same OpenAI-compatible client and reply cache as the
//! agents. It implements `crate::Coder`; the analysis crate knows nothing of
//! models.
//!
//! # The request
//! One request per response: a system message with the task line, then every code of the
//! codebook with its definition and example (the residual code included), then the answer
//! format; a user message with the response's reasoning sentences, numbered `(1)`, `(2)`, …
//! one to a line (whitespace inside a sentence collapsed to single spaces). The answer asked
//! for is `{"codes": [...]}`, one code per sentence in order; where the model declaration's
//! `structured` mode allows it, the request carries the JSON schema of that object (each item
//! one of the codebook's codes, exactly as many items as sentences). Sampling: temperature 0
//! unless `--coder-temperature` says otherwise, `--coder-max-tokens` (default: the
//! declaration's `max_tokens`), and, where the declaration has `send_seed`, a seed derived
//! from `--coder-seed` and the attempt number.
//!
//! # Attempts, retries and what is never retried
//! - A **transport retry** is the client's: an HTTP 429 or 5xx, a malformed or cut body, a
//!   timeout or a failed connection is sent again, up to the declaration's `max_retries`
//!   times, with backoff. A request that still fails, or that the server rejects (another
//!   4xx), stops the audit before anything is written: such a failure is no coder output, and
//!   a row recording it could not be replayed.
//! - An **attempt** is one request with its own cache key. A new attempt (up to the
//!   declaration's `max_attempts` in all) is made only when the reply holds no list of codes:
//!   after stripping deliberation blocks (`<think>…</think>`) and one enclosing Markdown code
//!   fence, the text is not JSON, or is JSON but neither an array of strings nor an object
//!   whose one field `codes` is an array of strings. When every attempt fails so, the response
//!   is recorded with the coder error "no list of codes in N attempts", nothing coded.
//! - A reply that is a list of codes is final. It is checked by `validate_output`: the wrong
//!   number of codes, or a code that is not one of the codebook's (compared exactly: case and
//!   spelling as the codebook writes them), is the response's coder error, recorded with the
//!   reply's cache key, nothing coded, never repaired and never asked again.
//!
//! # Determinism
//! Every request goes through the store's reply cache, keyed on the coder model's name and
//! served id, the full request (messages, sampling parameters, seed, schema, chat-template
//! arguments) and the attempt number; identical requests (responses with identical reasoning)
//! share one reply. With `--replay` the cache alone answers and a miss stops the audit, so
//! re-running an audit reproduces its rows byte for byte without a server. A coded sentence's
//! evidence names the reply it came from (`llm_cache:KEY attempt N`; the raw reply is the
//! `llm_cache` row of that key).
//!
//! # Identity
//! The coder's id is `llm/<name>@<version>`, where the version is the first 12 hex digits of
//! the SHA-256 of its identity: the declared name, family, served id, quantisation, structured
//! mode and chat-template arguments, the temperature, max_tokens, seed, send_seed and
//! max_attempts, the request-and-parse format version and the SHA-256 of the prompt
//! templates. Any change to these is another coder: its rows sit beside the old ones and the
//! validation gate judges it on its own. The identity is stored in `audit_coders`, with the
//! endpoints and notes (how it was served, not what it is) beside it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::{hex_digest, validate_output, Codebook, Coded, Coder, CoderError};
use agora_agents::llm::{strip_deliberation, ChatRequest, Message, ModelSpec, Session, SessionError, StructuredMode};
use agora_engine::Store;
use agora_scenarios::ModelsFile;
use serde_json::{json, Value};

use crate::error::{Error, Result};

/// Version of the request's shape (messages, schema) and of the reply parsing; part of the
/// coder's identity. Bump it when either changes.
pub const FORMAT_VERSION: u32 = 1;

/// The system message: the task line, the codes, the answer format. `{residual}` is the
/// residual code, `{codes}` the codes, each rendered with [`CODE_TEMPLATE`].
pub const SYSTEM_TEMPLATE: &str = "# Task
Below is the reasoning someone wrote before making a decision, split into numbered sentences. Label each sentence with exactly one code from the list of codes. Use `{residual}` for sentences that only restate the situation (the rules, the options, the payoffs, the round) without stating a value.

# Codes
{codes}
# Answer
Answer with one JSON object and nothing else: {\"codes\": [...]}, a list with exactly one code per numbered sentence, in the sentences' order, each code written exactly as named above.";

/// One code of the codebook in the system message.
pub const CODE_TEMPLATE: &str = "## {name}
Definition: {definition}
Example: {example}
";

/// The user message: `{n}` sentences, each rendered with [`SENTENCE_TEMPLATE`], one a line.
pub const USER_TEMPLATE: &str = "# Sentences ({n})
{sentences}";

/// One numbered sentence in the user message.
pub const SENTENCE_TEMPLATE: &str = "({number}) {text}";

/// SHA-256 of the prompt templates, in the order system, code, user, sentence, joined by a
/// line `---`.
pub fn prompt_template_sha256() -> String {
    let joined = [SYSTEM_TEMPLATE, CODE_TEMPLATE, USER_TEMPLATE, SENTENCE_TEMPLATE].join("\n---\n");
    hex_digest(joined.as_bytes())
}

/// Fills the `{key}` placeholders of `template` (and only the template's: a value's braces
/// are left as they are); other braces stay.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after
            .find('}')
            .and_then(|close| values.iter().find(|(k, _)| *k == &after[..close]).map(|(_, v)| (close, *v)));
        match hit {
            Some((close, v)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The system message for a codebook.
pub fn system_message(codebook: &Codebook) -> String {
    let codes: String = codebook
        .codes
        .iter()
        .map(|c| fill(CODE_TEMPLATE, &[("name", &c.name), ("definition", &c.definition), ("example", &c.example)]))
        .collect::<Vec<_>>()
        .join("\n");
    fill(SYSTEM_TEMPLATE, &[("residual", &codebook.residual), ("codes", &codes)])
}

/// The user message for one response's reasoning sentences.
pub fn user_message(sentences: &[String]) -> String {
    let lines: Vec<String> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let text = s.split_whitespace().collect::<Vec<_>>().join(" ");
            fill(SENTENCE_TEMPLATE, &[("number", &(i + 1).to_string()), ("text", &text)])
        })
        .collect();
    fill(USER_TEMPLATE, &[("n", &sentences.len().to_string()), ("sentences", &lines.join("\n"))])
}

/// The JSON schema of the answer for `n` sentences.
pub fn answer_schema(codebook: &Codebook, n: usize) -> Value {
    let codes: Vec<&str> = codebook.codes.iter().map(|c| c.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "codes": {"type": "array", "items": {"type": "string", "enum": codes}, "minItems": n, "maxItems": n}
        },
        "required": ["codes"],
        "additionalProperties": false
    })
}

/// The codes of a reply, read strictly (see the [module documentation](self)): an array of
/// strings, or an object whose one field `codes` is one, after deliberation blocks and one
/// enclosing code fence are stripped. The codes are returned as written, unchecked.
pub fn parse_codes(content: &str) -> Result<Vec<String>, String> {
    let stripped = strip_deliberation(content);
    let mut text = stripped.trim();
    if let Some(fenced) = text.strip_prefix("```") {
        let body = fenced.split_once('\n').map(|(_, b)| b).ok_or("a code fence with nothing in it")?;
        text = body.trim_end().strip_suffix("```").ok_or("a code fence that is not closed")?.trim();
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let list = match &value {
        Value::Array(items) => items,
        Value::Object(m) if m.len() == 1 => match m.get("codes") {
            Some(Value::Array(items)) => items,
            _ => return Err("an object whose one field is not a `codes` list".into()),
        },
        Value::Object(_) => return Err("an object with fields other than `codes`".into()),
        _ => return Err("JSON, but not a list of codes".into()),
    };
    list.iter()
        .enumerate()
        .map(|(i, c)| c.as_str().map(str::to_string).ok_or_else(|| format!("item {i} of the list is not a string")))
        .collect()
}

/// How the coder is configured beside its model declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmCoderOptions {
    /// Sampling temperature (0 by default for coding).
    pub temperature: f64,
    /// Most tokens a reply may have; `None`: the declaration's `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Seed the attempts' sampling seeds are derived from.
    pub seed: u64,
    /// Answer from the store's reply cache only.
    pub replay: bool,
}

/// A response's reply, read: its codes, or why no attempt gave any.
#[derive(Clone, Debug)]
enum Outcome {
    Codes { codes: Vec<String>, key: String, attempt: u32 },
    Unparsed { attempts: u32, key: String, detail: String },
}

/// What the requests need, shared by the concurrent calls.
struct Shared {
    spec: ModelSpec,
    session: Session,
    system: String,
    codebook: Codebook,
    temperature: f64,
    max_tokens: u32,
    seed: u64,
}

impl Shared {
    fn request(&self, sentences: &[String], attempt: u32) -> ChatRequest {
        let schema = (self.spec.structured != StructuredMode::Instructions)
            .then(|| answer_schema(&self.codebook, sentences.len()));
        ChatRequest {
            messages: vec![
                Message { role: "system".into(), content: self.system.clone() },
                Message { role: "user".into(), content: user_message(sentences) },
            ],
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            seed: self
                .spec
                .send_seed
                .then(|| agora_engine::seed::derive(self.seed, &["audit-coder", &attempt.to_string()]) % (1 << 31)),
            schema,
            chat_template_kwargs: self.spec.template_kwargs(),
        }
    }

    /// Asks for the codes of one response: attempts until a reply holds a list of codes.
    async fn fetch(&self, sentences: &[String]) -> Result<Outcome, String> {
        let mut last = (String::new(), String::new());
        for attempt in 1..=self.spec.max_attempts {
            let req = self.request(sentences, attempt);
            let request_json = serde_json::to_string(&req).map_err(|e| e.to_string())?;
            let (reply, key) =
                match self.session.call(&self.spec.name, &req, &request_json, &format!("audit-coder/{attempt}")).await {
                    Ok(r) => (r.reply, r.key),
                    Err(SessionError::NotCached) => {
                        return Err(format!(
                            "replay: no cached reply for request {} (attempt {attempt}); run without --replay to call the server",
                            Session::key(&self.spec, &request_json, &format!("audit-coder/{attempt}"))
                        ))
                    }
                    Err(e) => return Err(e.to_string()),
                };
            match parse_codes(&reply.content) {
                Ok(codes) => return Ok(Outcome::Codes { codes, key, attempt }),
                Err(why) => {
                    let why = if reply.truncated() { format!("cut at the token limit: {why}") } else { why };
                    last = (key, why);
                }
            }
        }
        let (key, detail) = last;
        Ok(Outcome::Unparsed { attempts: self.spec.max_attempts, key, detail })
    }
}

/// The LLM coder (see the [module documentation](self)).
pub struct LlmCoder {
    shared: Arc<Shared>,
    runtime: tokio::runtime::Runtime,
    outcomes: Mutex<HashMap<Vec<String>, Outcome>>,
    identity: Value,
    id: String,
}

impl LlmCoder {
    /// A coder for the declared model `spec` (checked), with `codebook`, asking through a
    /// model session over the store's reply cache (its API key from the variable the
    /// declaration names; [`agora_engine::llm_seats::model_session`]), every server checked
    /// unless replaying.
    pub fn new(spec: ModelSpec, codebook: &Codebook, store: &Path, options: &LlmCoderOptions) -> Result<LlmCoder> {
        if !(0.0..=2.0).contains(&options.temperature) {
            return Err(Error::BadInput(format!("--coder-temperature {}: must lie in [0, 2]", options.temperature)));
        }
        if options.max_tokens == Some(0) {
            return Err(Error::BadInput("--coder-max-tokens: must be at least 1".into()));
        }
        let max_tokens = options.max_tokens.unwrap_or(spec.max_tokens);
        let identity = json!({
            "kind": "llm",
            "name": spec.name,
            "family": spec.family,
            "served_id": spec.served_id,
            "quantisation": spec.quantisation,
            "structured": spec.structured,
            "chat_template_kwargs": spec.template_kwargs(),
            "temperature": options.temperature,
            "max_tokens": max_tokens,
            "seed": options.seed,
            "send_seed": spec.send_seed,
            "max_attempts": spec.max_attempts,
            "format_version": FORMAT_VERSION,
            "prompt_template_sha256": prompt_template_sha256(),
        });
        let id = format!("llm/{}@{}", spec.name, &hex_digest(identity.to_string().as_bytes())[..12]);
        let runtime = agora_agents::llm::session::runtime().map_err(Error::runtime)?;
        let session = agora_engine::llm_seats::model_session(store, [&spec], options.replay, &runtime)?;
        let shared = Arc::new(Shared {
            system: system_message(codebook),
            codebook: codebook.clone(),
            temperature: options.temperature,
            max_tokens,
            seed: options.seed,
            spec,
            session,
        });
        Ok(LlmCoder { shared, runtime, outcomes: Mutex::new(HashMap::new()), identity, id })
    }

    /// Replies read from the cache and requests sent to a server so far.
    pub fn calls(&self) -> (usize, usize) {
        self.shared.session.calls()
    }

    fn outcomes(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<String>, Outcome>> {
        self.outcomes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Coder for LlmCoder {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn identity(&self) -> Value {
        self.identity.clone()
    }

    fn serving(&self) -> Value {
        json!({"endpoints": self.shared.spec.endpoints, "notes": self.shared.spec.notes})
    }

    fn prepare(&self, responses: &[Vec<String>]) -> Result<(), CoderError> {
        let mut todo: Vec<Vec<String>> = Vec::new();
        {
            let known = self.outcomes();
            let mut seen = std::collections::HashSet::new();
            for r in responses {
                if !known.contains_key(r) && seen.insert(r) {
                    todo.push(r.clone());
                }
            }
        }
        let jobs: Vec<_> = todo
            .into_iter()
            .map(|sentences| {
                let shared = self.shared.clone();
                async move { shared.fetch(&sentences).await.map(|o| (sentences, o)) }
            })
            .collect();
        let results = self.runtime.block_on(agora_agents::llm::fan_out(jobs)).map_err(CoderError)?;
        self.outcomes().extend(results);
        Ok(())
    }

    fn code(&self, sentences: &[String]) -> Result<Vec<Coded>, CoderError> {
        let known = self.outcomes().get(sentences).cloned();
        let outcome = match known {
            Some(o) => o,
            None => {
                let o = self.runtime.block_on(self.shared.fetch(sentences)).map_err(CoderError)?;
                self.outcomes().insert(sentences.to_vec(), o.clone());
                o
            }
        };
        match outcome {
            Outcome::Codes { codes, key, attempt } => {
                let evidence = format!("llm_cache:{key} attempt {attempt}");
                let coded: Vec<Coded> =
                    codes.into_iter().map(|code| Coded { code, evidence: Some(evidence.clone()) }).collect();
                validate_output(&self.shared.codebook, sentences.len(), &coded)
                    .map_err(|e| CoderError(format!("{} (reply llm_cache:{key} attempt {attempt})", e.0)))?;
                Ok(coded)
            }
            Outcome::Unparsed { attempts, key, detail } => Err(CoderError(format!(
                "no list of codes in {attempts} attempt{} (last reply llm_cache:{key}: {detail})",
                if attempts == 1 { "" } else { "s" }
            ))),
        }
    }
}

/// Which coder `--coder` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoderChoice {
    /// The lexicon coder of the codebook.
    Lexicon,
    /// An LLM coder: the declared model of this name.
    Llm(String),
}

impl std::str::FromStr for CoderChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<CoderChoice, String> {
        match s.split_once(':') {
            None if s == "lexicon" => Ok(CoderChoice::Lexicon),
            Some(("llm", model)) if !model.trim().is_empty() => Ok(CoderChoice::Llm(model.to_string())),
            _ => Err(format!("`{s}`: name `lexicon` or `llm:MODEL` (a model declared in the --models file)")),
        }
    }
}

/// The declaration of `name` in the models file `path`.
pub fn declared_model(path: &Path, name: &str) -> Result<ModelSpec> {
    let file = ModelsFile::load(path)?;
    let names: Vec<&str> = file.models.iter().map(|m| m.name.as_str()).collect();
    let spec = file.models.iter().find(|m| m.name == name).cloned().ok_or_else(|| {
        Error::BadInput(format!(
            "--coder llm:{name}: models file {} declares no model `{name}` (it declares: {})",
            path.display(),
            names.join(", ")
        ))
    })?;
    spec.validate().map_err(|e| Error::BadInput(format!("models file {}: {e}", path.display())))?;
    Ok(spec)
}

/// Refuses a coder model that is one of the audited models: its declared name or served id
/// equals the model name or served id of a decision transcript in scope (of `study`, when
/// given). The message names both.
pub fn refuse_audited_model(store: &Store, study: Option<&str>, spec: &ModelSpec) -> Result<()> {
    let audited =
        agora_records::families::audit::reads::decision_models(store.connection(), study, agora_agents::HUMAN_ENDPOINT)
            .map_err(Error::sql(store.path()))?;
    let store = store.path();
    let ours = [spec.name.as_str(), spec.served_id.as_str()];
    if let Some((model, served)) =
        audited.iter().find(|(m, s)| ours.contains(&m.as_str()) || ours.contains(&s.as_str()))
    {
        return Err(Error::BadInput(format!(
            "coder model `{}` (served id `{}`) is an audited model: the transcripts in {}{} were written by `{model}` (served id `{served}`); code with a model outside the audited set",
            spec.name,
            spec.served_id,
            store.display(),
            study.map(|s| format!(" (study `{s}`)")).unwrap_or_default(),
        )));
    }
    Ok(())
}

/// Builds the LLM coder for `agora audit`: the declaration, the refusal of an audited model,
/// the model session over the store's reply cache and (unless replaying) a reachable endpoint.
pub fn build(
    store: &Store,
    study: Option<&str>,
    models: Option<&Path>,
    name: &str,
    codebook: &Codebook,
    options: &LlmCoderOptions,
) -> Result<LlmCoder> {
    let models = models.ok_or_else(|| {
        Error::BadInput(format!("--coder llm:{name}: name the models file that declares it with --models FILE"))
    })?;
    let spec = declared_model(models, name)?;
    refuse_audited_model(store, study, &spec)?;
    LlmCoder::new(spec, codebook, store.path(), options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LoadedCodebook;

    #[test]
    fn the_prompt_has_the_task_every_code_and_the_numbered_sentences() {
        let cb = LoadedCodebook::default_codebook().codebook;
        let system = system_message(&cb);
        assert!(
            system.starts_with("# Task\n") && system.contains("Use `understanding` for sentences that only restate")
        );
        for c in &cb.codes {
            assert!(system.contains(&format!("## {}\nDefinition: {}\nExample: {}\n", c.name, c.definition, c.example)));
        }
        assert!(system.contains("{\"codes\": [...]}"), "{system}");
        let user = user_message(&["One  {n} two.".into(), "Three\nfour.".into()]);
        assert_eq!(user, "# Sentences (2)\n(1) One {n} two.\n(2) Three four.");
        assert_eq!(prompt_template_sha256().len(), 64);
    }

    #[test]
    fn replies_are_read_strictly() {
        assert_eq!(parse_codes(r#"{"codes": ["a", "b"]}"#), Ok(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(parse_codes(r#"["a"]"#), Ok(vec!["a".to_string()]));
        assert_eq!(parse_codes("<think>hm</think>\n```json\n[\"a\"]\n```"), Ok(vec!["a".to_string()]));
        assert_eq!(parse_codes(r#"{"codes": ["Fairness "]}"#), Ok(vec!["Fairness ".to_string()]), "never normalised");
        for bad in [
            r#"The codes: ["a"]"#,
            r#"{"codes": ["a"], "note": 1}"#,
            r#"{"labels": ["a"]}"#,
            "[1]",
            "\"a\"",
            "```\n[\"a\"]",
        ] {
            assert!(parse_codes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn coder_choices() {
        assert_eq!("lexicon".parse(), Ok(CoderChoice::Lexicon));
        assert_eq!("llm:gemma".parse(), Ok(CoderChoice::Llm("gemma".into())));
        assert!("llm:".parse::<CoderChoice>().is_err() && "gpt".parse::<CoderChoice>().is_err());
    }
}
