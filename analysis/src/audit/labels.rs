//! Human labels: a seeded sample of coded sentences exported for labelling, and the labels
//! imported back into the store's `audit_labels` table (seed 003 §240.6.2).
//!
//! # The sample
//! The population is every response a coder coded with a codebook (pre-action reasoning, coder
//! output valid), as `agora audit` left them in `audit_responses`. A response is named by its
//! **response id** `{run_key}:{seat}:{slot}` (the run key is the run's content hash, so the id is
//! the same in every store that holds the run). For each audited model on its own, the responses
//! are ranked by the lower-case hex SHA-256 of `{seed}:{response_id}` (ties, which do not occur,
//! by the id) and the first N are taken, all of them when a model has fewer. A response's rank
//! depends only on the seed and its own id, so the sample does not depend on the store's row
//! order, and the sample of N responses is the first N of the sample of N + 1. Every reasoning
//! sentence of a sampled response is one record; post-hoc sentences are never coded and never
//! exported. Records are written model by model (sorted by name), responses in rank order,
//! sentences in reply order. In Python: `sorted(ids, key=lambda r: (sha256(f"{seed}:{r}".encode()).hexdigest(), r))[:n]`.
//!
//! # Record fields
//! `sentence_id` (`{response_id}:{sentence_index}`), `response_id`, `sentence_index`, `text`
//! (the sentence to label), `reasoning` (the response's whole pre-action reasoning, its
//! sentences joined by spaces: the context a labeller reads; never the action), `model`,
//! `environment`, `cell`, `codebook`, `codebook_version`, and, unless the export is blind,
//! `coder` and `coder_code` (the machine coder's code, kept apart so a labelling interface can
//! hide it). No field is called `label`: that is the field the labeller fills in.
//!
//! Formats: `jsonl` (one flat JSON object per line), `json` (one JSON array of the same
//! objects: Label Studio's list of tasks, each object becoming a task's `data`) and `csv`
//! (a header row, then one row per sentence, RFC 4180 quoting).
//!
//! # Importing labels
//! A label file is JSONL, a JSON array of objects, or CSV with a header, with one record per
//! labelled sentence: `response_id`, `sentence_index` and the label field (`label` unless told
//! otherwise) holding one code of the codebook (a string, or a list of exactly one string).
//! A record whose label is missing, `null` or empty is an unlabelled sentence and is skipped.
//! When a record carries `text`, `codebook` or `codebook_version` they must match the store and
//! the codebook; other fields are ignored. One file holds one human coder's labels, named on
//! import. Every record is checked before anything is written: an unknown code, a sentence
//! the store does not hold as a reasoning sentence audited with the codebook, or a second
//! label for the same sentence in the file is an error naming the file, the line and the
//! field, and nothing is written. The labels are then written in one transaction; a label for
//! a sentence the same coder labelled before replaces it, so importing a file twice changes
//! nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::{Map, Value};

use super::codebook::LoadedCodebook;
use super::csv;
use super::sha256::hex_digest;

/// The labels table (see the [module documentation](self)).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_labels (
    run_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    sentence_index INTEGER NOT NULL,
    coder TEXT NOT NULL,
    codebook TEXT NOT NULL,
    codebook_version INTEGER NOT NULL,
    code TEXT NOT NULL,
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    line INTEGER NOT NULL,
    PRIMARY KEY (run_id, seat, slot, sentence_index, coder, codebook, codebook_version)
) WITHOUT ROWID;
";

/// The file formats of an export, and of a label file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// One JSON array of objects (Label Studio's task list).
    Json,
    /// CSV with a header row.
    Csv,
}

impl Format {
    /// The format's name (`jsonl`, `json`, `csv`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Json => "json",
            Format::Csv => "csv",
        }
    }

    /// The format of a label file: by its extension (`.csv`, `.json`, `.jsonl`/`.ndjson`), or
    /// else by its first character that is not white space (`[` JSON, `{` JSONL, else CSV).
    pub fn detect(path: &Path, text: &str) -> Format {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Format::Csv,
            Some("json") => Format::Json,
            Some("jsonl" | "ndjson") => Format::Jsonl,
            _ => match text.trim_start_matches('\u{feff}').trim_start().chars().next() {
                Some('[') => Format::Json,
                Some('{') => Format::Jsonl,
                _ => Format::Csv,
            },
        }
    }
}

/// One problem with a label file record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The 1-based line the record starts on.
    pub line: usize,
    /// The field at fault, if one is.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// What stopped an export or an import.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabelsError {
    /// The store could not be opened, read or written.
    #[error("store {}: {source}", path.display())]
    Store {
        /// Path of the store.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The store holds no audit, or none by the coder and codebook asked for.
    #[error("store {}: {message}", path.display())]
    NotAudited {
        /// Path of the store.
        path: PathBuf,
        /// What is missing.
        message: String,
    },
    /// An option is out of range.
    #[error("{0}")]
    Option(String),
    /// The label file could not be read.
    #[error("labels {}: cannot read: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// Records of the label file are not valid labels (every problem found, up to 20).
    #[error("{}", problems.iter().map(|p| format!("labels {}:{}: {}{}", path.display(), p.line, p.field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default(), p.message)).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The problems, in file order.
        problems: Vec<Problem>,
    },
}

impl LabelsError {
    /// Whether the error is the user's input (a file, an option, a store without the audit)
    /// rather than a failure of the store.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, LabelsError::Store { .. })
    }
}

/// What to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Responses per model.
    pub sample: usize,
    /// The sampling seed.
    pub seed: u64,
    /// The machine coder whose coded responses are the population (e.g. `lexicon/1`).
    pub coder: String,
    /// Only these models (all when empty).
    pub models: Vec<String>,
    /// Leave out the coder and its codes.
    pub blind: bool,
}

/// One exported sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportRecord {
    /// `{response_id}:{sentence_index}`.
    pub sentence_id: String,
    /// `{run_key}:{seat}:{slot}`.
    pub response_id: String,
    /// The sentence's index in the response (reasoning and post-hoc sentences counted together).
    pub sentence_index: i64,
    /// The sentence.
    pub text: String,
    /// The response's whole pre-action reasoning.
    pub reasoning: String,
    /// The audited model.
    pub model: String,
    /// The run's environment.
    pub environment: String,
    /// The run's cell.
    pub cell: String,
    /// The codebook's name.
    pub codebook: String,
    /// The codebook's version.
    pub codebook_version: u32,
    /// The machine coder (none in a blind export).
    pub coder: Option<String>,
    /// The machine coder's code (none in a blind export).
    pub coder_code: Option<String>,
}

impl ExportRecord {
    /// The record as a flat JSON object, fields in the documented order.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("sentence_id".into(), self.sentence_id.clone().into());
        m.insert("response_id".into(), self.response_id.clone().into());
        m.insert("sentence_index".into(), self.sentence_index.into());
        m.insert("text".into(), self.text.clone().into());
        m.insert("reasoning".into(), self.reasoning.clone().into());
        m.insert("model".into(), self.model.clone().into());
        m.insert("environment".into(), self.environment.clone().into());
        m.insert("cell".into(), self.cell.clone().into());
        m.insert("codebook".into(), self.codebook.clone().into());
        m.insert("codebook_version".into(), self.codebook_version.into());
        if let (Some(c), Some(code)) = (&self.coder, &self.coder_code) {
            m.insert("coder".into(), c.clone().into());
            m.insert("coder_code".into(), code.clone().into());
        }
        Value::Object(m)
    }
}

/// A sample of coded responses, sentence by sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The records, in the documented order.
    pub records: Vec<ExportRecord>,
    /// Per model: responses sampled, and responses in the population.
    pub per_model: BTreeMap<String, (usize, usize)>,
}

impl Export {
    /// The records written in `format` (see the [module documentation](self)).
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Jsonl => self.records.iter().map(|r| format!("{}\n", r.to_json())).collect(),
            Format::Json => {
                let all: Vec<Value> = self.records.iter().map(ExportRecord::to_json).collect();
                let mut s = serde_json::to_string_pretty(&Value::Array(all)).expect("invariant: JSON values serialise");
                s.push('\n');
                s
            }
            Format::Csv => {
                let blind = self.records.first().is_some_and(|r| r.coder.is_none());
                let mut header = vec![
                    "sentence_id",
                    "response_id",
                    "sentence_index",
                    "text",
                    "reasoning",
                    "model",
                    "environment",
                    "cell",
                    "codebook",
                    "codebook_version",
                ];
                if !blind {
                    header.extend(["coder", "coder_code"]);
                }
                let mut s = csv::line(&header);
                s.push('\n');
                for r in &self.records {
                    let mut row = vec![
                        r.sentence_id.clone(),
                        r.response_id.clone(),
                        r.sentence_index.to_string(),
                        r.text.clone(),
                        r.reasoning.clone(),
                        r.model.clone(),
                        r.environment.clone(),
                        r.cell.clone(),
                        r.codebook.clone(),
                        r.codebook_version.to_string(),
                    ];
                    if !blind {
                        row.push(r.coder.clone().unwrap_or_default());
                        row.push(r.coder_code.clone().unwrap_or_default());
                    }
                    s.push_str(&csv::line(&row));
                    s.push('\n');
                }
                s
            }
        }
    }
}

/// The rank key of a response in the sample of `seed`: hex SHA-256 of `{seed}:{response_id}`.
pub fn rank_key(seed: u64, response_id: &str) -> String {
    hex_digest(format!("{seed}:{response_id}").as_bytes())
}

/// The response ids of the sample: the `n` ids with the smallest rank keys (ties by id), in
/// rank order.
pub fn sample_ids<'a>(ids: impl IntoIterator<Item = &'a str>, seed: u64, n: usize) -> Vec<&'a str> {
    let mut ranked: Vec<(String, &str)> = ids.into_iter().map(|id| (rank_key(seed, id), id)).collect();
    ranked.sort();
    ranked.dedup();
    ranked.into_iter().take(n).map(|(_, id)| id).collect()
}

/// The response id of a decision.
pub fn response_id(run_key: &str, seat: i64, slot: i64) -> String {
    format!("{run_key}:{seat}:{slot}")
}

fn open(path: &Path, write: bool) -> Result<Connection, LabelsError> {
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let flags = if write { OpenFlags::SQLITE_OPEN_READ_WRITE } else { OpenFlags::SQLITE_OPEN_READ_ONLY };
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    Ok(conn)
}

/// Whether the store has a table.
pub(crate) fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n > 0)
}

/// Draws the sample of the [module documentation](self) from the store at `path`.
pub fn export(path: &Path, codebook: &LoadedCodebook, options: &ExportOptions) -> Result<Export, LabelsError> {
    if options.sample == 0 {
        return Err(LabelsError::Option("--sample must be at least 1".into()));
    }
    let conn = open(path, false)?;
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let cb = &codebook.codebook;
    for t in ["runs", "audit_responses", "audit_sentences"] {
        if !has_table(&conn, t).map_err(sql)? {
            return Err(LabelsError::NotAudited {
                path: path.to_path_buf(),
                message: format!("no `{t}` table: run `agora audit` on it first"),
            });
        }
    }
    let mut st = conn
        .prepare(
            "SELECT r.run_key, a.run_id, a.seat, a.slot, a.model, a.environment, a.cell
             FROM audit_responses a JOIN runs r ON r.run_id = a.run_id
             WHERE a.coder = ?1 AND a.codebook = ?2 AND a.codebook_version = ?3 AND a.codebook_sha256 = ?4
               AND a.reasoning_present = 1 AND a.coder_error IS NULL
             ORDER BY a.run_id, a.seat, a.slot",
        )
        .map_err(sql)?;
    type Resp = (String, i64, i64, i64, String, String, String);
    let rows: Vec<Resp> = st
        .query_map(params![options.coder, cb.name, cb.version, codebook.sha256], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
        })
        .and_then(Iterator::collect)
        .map_err(sql)?;
    let mut by_model: BTreeMap<String, Vec<(String, Resp)>> = BTreeMap::new();
    for r in rows {
        if options.models.is_empty() || options.models.contains(&r.4) {
            by_model.entry(r.4.clone()).or_default().push((response_id(&r.0, r.2, r.3), r));
        }
    }
    for m in &options.models {
        if !by_model.contains_key(m) {
            return Err(LabelsError::NotAudited {
                path: path.to_path_buf(),
                message: format!(
                    "no response of model `{m}` coded by `{}` with codebook {} v{} (SHA-256 {})",
                    options.coder, cb.name, cb.version, codebook.sha256
                ),
            });
        }
    }
    if by_model.is_empty() {
        return Err(LabelsError::NotAudited {
            path: path.to_path_buf(),
            message: format!(
                "no response with pre-action reasoning coded by `{}` with codebook {} v{} (SHA-256 {}): run `agora audit` with that coder and codebook first",
                options.coder, cb.name, cb.version, codebook.sha256
            ),
        });
    }
    let mut sentences = conn
        .prepare(
            "SELECT sentence_index, text, code FROM audit_sentences
             WHERE run_id = ?1 AND seat = ?2 AND slot = ?3 AND coder = ?4 AND codebook = ?5 AND codebook_version = ?6
               AND codebook_sha256 = ?7 AND segment = 'reasoning'
             ORDER BY sentence_index",
        )
        .map_err(sql)?;
    let mut records = Vec::new();
    let mut per_model = BTreeMap::new();
    for (model, responses) in &by_model {
        let index: HashMap<&str, &Resp> = responses.iter().map(|(id, r)| (id.as_str(), r)).collect();
        let chosen = sample_ids(responses.iter().map(|(id, _)| id.as_str()), options.seed, options.sample);
        per_model.insert(model.clone(), (chosen.len(), responses.len()));
        for id in chosen {
            let r = index[id];
            let coded: Vec<(i64, String, Option<String>)> = sentences
                .query_map(params![r.1, r.2, r.3, options.coder, cb.name, cb.version, codebook.sha256], |x| {
                    Ok((x.get(0)?, x.get(1)?, x.get(2)?))
                })
                .and_then(Iterator::collect)
                .map_err(sql)?;
            let reasoning = coded.iter().map(|(_, t, _)| t.as_str()).collect::<Vec<_>>().join(" ");
            for (i, text, code) in coded {
                records.push(ExportRecord {
                    sentence_id: format!("{id}:{i}"),
                    response_id: id.to_string(),
                    sentence_index: i,
                    text,
                    reasoning: reasoning.clone(),
                    model: model.clone(),
                    environment: r.5.clone(),
                    cell: r.6.clone(),
                    codebook: cb.name.clone(),
                    codebook_version: cb.version,
                    coder: (!options.blind).then(|| options.coder.clone()),
                    coder_code: if options.blind { None } else { code },
                });
            }
        }
    }
    Ok(Export { records, per_model })
}

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The human coder.
    pub coder: String,
    /// Labels read from the file and written.
    pub labels: usize,
    /// Records without a label (skipped).
    pub unlabelled: usize,
    /// Of the labels, those that replaced a different earlier label of the same coder.
    pub changed: usize,
    /// Of the labels, those already stored with the same code.
    pub unchanged: usize,
    /// Labels of this coder and codebook now in the store.
    pub total: usize,
    /// The format the file was read as.
    pub format: Format,
}

/// Checks a human coder's name: letters, digits and `.`, `_`, `-`, `@`, `+` (an e-mail address
/// is a name); no `/`, which machine coder identities (`lexicon/1`) carry.
pub fn check_coder_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("--coder-name must not be empty".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_alphanumeric() || ".-_@+".contains(*c))) {
        return Err(format!(
            "--coder-name `{name}`: `{c}` is not allowed (letters, digits and . _ - @ +; a `/` marks a machine coder)"
        ));
    }
    Ok(())
}

/// Records of a label file: each a JSON object with the line it starts on.
type Records = Vec<(usize, Map<String, Value>)>;

/// The records of a label file as JSON objects, each with the line it starts on.
fn read_records(text: &str, format: Format) -> Result<Records, Vec<Problem>> {
    let problem = |line: usize, message: String| Problem { line, field: None, message };
    let object = |line: usize, v: Value| match v {
        Value::Object(m) => Ok((line, m)),
        other => Err(problem(line, format!("a record must be a JSON object, not {}", json_kind(&other)))),
    };
    match format {
        Format::Jsonl => {
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for (i, l) in text.lines().enumerate() {
                let l = if i == 0 { l.trim_start_matches('\u{feff}') } else { l };
                if l.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(l) {
                    Ok(v) => match object(i + 1, v) {
                        Ok(r) => out.push(r),
                        Err(p) => problems.push(p),
                    },
                    Err(e) => problems.push(problem(i + 1, format!("not JSON: {e}"))),
                }
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
        Format::Json => {
            let text = text.trim_start_matches('\u{feff}');
            let v: Value = serde_json::from_str(text).map_err(|e| vec![problem(e.line(), format!("not JSON: {e}"))])?;
            let Value::Array(items) = v else {
                return Err(vec![problem(1, format!("expected a JSON array of records, found {}", json_kind(&v)))]);
            };
            let lines = array_element_lines(text);
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for (i, item) in items.into_iter().enumerate() {
                match object(lines.get(i).copied().unwrap_or(1), item) {
                    Ok(r) => out.push(r),
                    Err(p) => problems.push(p),
                }
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
        Format::Csv => {
            let records = csv::parse(text).map_err(|(line, m)| vec![problem(line, m)])?;
            let Some((head, rows)) = records.split_first() else { return Ok(Vec::new()) };
            let header: Vec<String> = head.fields.iter().map(|h| h.trim().to_string()).collect();
            let mut seen = BTreeSet::new();
            if let Some(d) = header.iter().find(|h| !seen.insert(h.as_str())) {
                return Err(vec![Problem {
                    line: head.line,
                    field: Some(d.clone()),
                    message: "the header names this column twice".into(),
                }]);
            }
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for r in rows {
                if r.fields.len() != header.len() {
                    problems.push(problem(
                        r.line,
                        format!("{} fields where the header has {}", r.fields.len(), header.len()),
                    ));
                    continue;
                }
                let m = header.iter().cloned().zip(r.fields.iter().cloned().map(Value::String)).collect();
                out.push((r.line, m));
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The 1-based line on which each element of a (valid) top-level JSON array begins.
fn array_element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expecting = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if depth == 1 && expecting && !c.is_whitespace() && c != ']' {
            lines.push(line);
            expecting = false;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth == 1 {
                    expecting = true;
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expecting = true,
            _ => {}
        }
    }
    lines
}

/// A stored reasoning or post-hoc sentence, as an import checks a label against it.
struct Stored {
    run_id: i64,
    segment: String,
    text: String,
}

/// A label that passed every check.
struct Checked {
    run_id: i64,
    seat: i64,
    slot: i64,
    sentence_index: i64,
    code: String,
    text: String,
    line: usize,
}

/// Imports one human coder's labels from `file` into the store at `path` (see the [module
/// documentation](self)). `label_field` names the field holding the code; `format` is
/// detected when not given.
pub fn import(
    path: &Path,
    codebook: &LoadedCodebook,
    file: &Path,
    coder: &str,
    label_field: &str,
    format: Option<Format>,
) -> Result<Imported, LabelsError> {
    check_coder_name(coder).map_err(LabelsError::Option)?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| LabelsError::Read { path: file.to_path_buf(), message: e.to_string() })?;
    let format = format.unwrap_or_else(|| Format::detect(file, &text));
    let invalid = |problems: Vec<Problem>| LabelsError::Invalid { path: file.to_path_buf(), problems };
    let records = read_records(&text, format).map_err(invalid)?;
    if records.is_empty() {
        return Err(invalid(vec![Problem { line: 1, field: None, message: "the file holds no records".into() }]));
    }
    if !records.iter().any(|(_, m)| m.contains_key(label_field)) {
        return Err(invalid(vec![Problem {
            line: records[0].0,
            field: Some(label_field.into()),
            message: format!("no record has a `{label_field}` field (name the label field with --label-field)"),
        }]));
    }
    let mut conn = open(path, true)?;
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let cb = &codebook.codebook;
    for t in ["runs", "audit_sentences"] {
        if !has_table(&conn, t).map_err(sql)? {
            return Err(LabelsError::NotAudited {
                path: path.to_path_buf(),
                message: format!("no `{t}` table: run `agora audit` on it first"),
            });
        }
    }
    let stored: HashMap<(String, i64, i64, i64), Stored> = {
        let mut st = conn
            .prepare(
                "SELECT DISTINCT r.run_key, s.run_id, s.seat, s.slot, s.sentence_index, s.segment, s.text
                 FROM audit_sentences s JOIN runs r ON r.run_id = s.run_id
                 WHERE s.codebook = ?1 AND s.codebook_version = ?2",
            )
            .map_err(sql)?;
        let rows = st
            .query_map(params![cb.name, cb.version], |r| {
                Ok((
                    (r.get(0)?, r.get(2)?, r.get(3)?, r.get(4)?),
                    Stored { run_id: r.get(1)?, segment: r.get(5)?, text: r.get(6)? },
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(sql)?;
        rows.into_iter().collect()
    };
    let responses: BTreeSet<(String, i64, i64)> = stored.keys().map(|k| (k.0.clone(), k.1, k.2)).collect();
    let mut problems = Vec::new();
    let mut checked: Vec<Checked> = Vec::new();
    let mut first_line: HashMap<(i64, i64, i64, i64), usize> = HashMap::new();
    let mut unlabelled = 0usize;
    for (line, m) in &records {
        let line = *line;
        let mut bad = |field: &str, message: String| {
            problems.push(Problem { line, field: Some(field.to_string()), message });
        };
        let label = match m.get(label_field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().to_string()),
            Some(Value::Array(a)) if a.is_empty() => None,
            Some(Value::Array(a)) => match a.as_slice() {
                [Value::String(s)] => Some(s.trim().to_string()),
                _ => {
                    bad(label_field, "expected one code, found a list of several values".into());
                    continue;
                }
            },
            Some(other) => {
                bad(label_field, format!("expected a code (a string), found {}", json_kind(other)));
                continue;
            }
        };
        let Some(label) = label else {
            unlabelled += 1;
            continue;
        };
        if cb.code(&label).is_none() {
            let codes: Vec<&str> = cb.codes.iter().map(|c| c.name.as_str()).collect();
            bad(
                label_field,
                format!("`{label}` is not a code of codebook {} v{} ({})", cb.name, cb.version, codes.join(", ")),
            );
            continue;
        }
        if let Some(v) = m.get("codebook").filter(|v| !is_blank(v)) {
            if v.as_str() != Some(cb.name.as_str()) {
                bad("codebook", format!("{v} is not the codebook labels are checked against (`{}`)", cb.name));
                continue;
            }
        }
        if let Some(v) = m.get("codebook_version").filter(|v| !is_blank(v)) {
            if integer(v) != Some(i64::from(cb.version)) {
                bad("codebook_version", format!("{v} is not the version of codebook `{}` ({})", cb.name, cb.version));
                continue;
            }
        }
        let rid = match m.get("response_id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(other) => {
                bad("response_id", format!("expected a response id `run_key:seat:slot`, found {other}"));
                continue;
            }
            None => {
                bad("response_id", "missing".into());
                continue;
            }
        };
        let Some(index) = m.get("sentence_index").and_then(integer) else {
            bad(
                "sentence_index",
                match m.get("sentence_index") {
                    None => "missing".into(),
                    Some(v) => format!("expected a non-negative integer, found {v}"),
                },
            );
            continue;
        };
        let parts: Vec<&str> = rid.rsplitn(3, ':').collect();
        let key = match parts.as_slice() {
            [slot, seat, run_key] => match (seat.parse::<i64>(), slot.parse::<i64>()) {
                (Ok(seat), Ok(slot)) => Some((run_key.to_string(), seat, slot)),
                _ => None,
            },
            _ => None,
        };
        let Some((run_key, seat, slot)) = key else {
            bad("response_id", format!("`{rid}` is not a response id `run_key:seat:slot`"));
            continue;
        };
        if !responses.contains(&(run_key.clone(), seat, slot)) {
            bad(
                "response_id",
                format!("the store holds no response `{rid}` audited with codebook {} v{}", cb.name, cb.version),
            );
            continue;
        }
        let Some(s) = stored.get(&(run_key, seat, slot, index)) else {
            bad("sentence_index", format!("response `{rid}` has no sentence {index}"));
            continue;
        };
        if s.segment != "reasoning" {
            bad(
                "sentence_index",
                format!(
                    "sentence {index} of response `{rid}` is {}, not pre-action reasoning: it is never coded",
                    s.segment
                ),
            );
            continue;
        }
        if let Some(t) = m.get("text").filter(|v| !is_blank(v)) {
            if t.as_str().map(str::trim) != Some(s.text.trim()) {
                bad("text", format!("differs from the store's sentence {index} of response `{rid}`: {:?}", s.text));
                continue;
            }
        }
        let k = (s.run_id, seat, slot, index);
        if let Some(first) = first_line.get(&k) {
            bad(
                "sentence_index",
                format!("a second label by this coder for sentence {index} of response `{rid}` (the first is on line {first})"),
            );
            continue;
        }
        first_line.insert(k, line);
        checked.push(Checked {
            run_id: s.run_id,
            seat,
            slot,
            sentence_index: index,
            code: label,
            text: s.text.clone(),
            line,
        });
    }
    if !problems.is_empty() {
        problems.truncate(20);
        return Err(invalid(problems));
    }
    if checked.is_empty() {
        return Err(invalid(vec![Problem {
            line: records[0].0,
            field: Some(label_field.into()),
            message: format!("no record carries a label ({unlabelled} unlabelled records)"),
        }]));
    }
    let source = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
    tx.execute_batch(SCHEMA).map_err(sql)?;
    let (mut changed, mut unchanged) = (0usize, 0usize);
    {
        let mut before = tx
            .prepare(
                "SELECT code FROM audit_labels WHERE run_id = ?1 AND seat = ?2 AND slot = ?3 AND sentence_index = ?4
                 AND coder = ?5 AND codebook = ?6 AND codebook_version = ?7",
            )
            .map_err(sql)?;
        let mut put = tx
            .prepare(
                "INSERT OR REPLACE INTO audit_labels (run_id, seat, slot, sentence_index, coder, codebook, codebook_version,
                    code, text, source, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .map_err(sql)?;
        for c in &checked {
            let earlier: Option<String> = before
                .query_row(params![c.run_id, c.seat, c.slot, c.sentence_index, coder, cb.name, cb.version], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(sql)?;
            match earlier {
                Some(e) if e == c.code => unchanged += 1,
                Some(_) => changed += 1,
                None => {}
            }
            put.execute(params![
                c.run_id,
                c.seat,
                c.slot,
                c.sentence_index,
                coder,
                cb.name,
                cb.version,
                c.code,
                c.text,
                source,
                c.line
            ])
            .map_err(sql)?;
        }
    }
    let total: i64 = tx
        .query_row(
            "SELECT COUNT(*) FROM audit_labels WHERE coder = ?1 AND codebook = ?2 AND codebook_version = ?3",
            params![coder, cb.name, cb.version],
            |r| r.get(0),
        )
        .map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(Imported {
        coder: coder.to_string(),
        labels: checked.len(),
        unlabelled,
        changed,
        unchanged,
        total: usize::try_from(total).unwrap_or(0),
        format,
    })
}

fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A non-negative integer from a JSON number or a string of digits.
fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().filter(|i| *i >= 0),
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())).then(|| s.parse().ok()).flatten()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
