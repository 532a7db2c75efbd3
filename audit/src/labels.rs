//! Human labels: a seeded sample of coded sentences exported for labelling, and the labels
//! imported back into the store's `audit_labels` table (the SUVA audit paper §240.6.2).
//!
//! # The sample
//! The population is every response with pre-action reasoning a coder coded with a codebook,
//! as `agora audit` left them in `audit_responses`, including the responses the coder failed on
//! (its output did not validate): those are the hard cases, and a labelled sentence of one
//! counts against the coder's κ ([`super::agreement::CODER_ERROR`]). A response is named by its
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
//! `environment`, `cell`, `codebook`, `codebook_version`, `export_id`. Exports are blind by
//! default: only when asked to show the codes (`--show-codes`) do they carry `coder` and
//! `coder_code` (the machine coder's code, empty where the coder failed on the response), for
//! checking a coder, not for labelling. No field is called `label`: that is the field the
//! labeller fills in.
//!
//! # The export id
//! Every export is recorded in the store's `audit_exports` table ([`EXPORTS_SCHEMA`]: the id,
//! seed, sample size, coder, codebook, models, whether blind, its sentences and responses, and
//! the time SQLite gave the row), and its id is in every record. The id is the first 16 hex
//! digits of the SHA-256 of the export's parameters (seed, sample size, coder, codebook name,
//! version and SHA-256, the models exported, whether blind) and of its sentences (id and
//! text) ([`export_id`]): the same export drawn again, from this store or another holding the
//! same runs, has the same id and the same bytes, and a blind export and one with the codes
//! shown never share one. An import accepts labels only from a recorded blind export.
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
//! import.
//!
//! Labels must be blind: a labeller who saw the machine's code anchors on it, and κ then
//! measures the coder's agreement with itself. So every labelled record must carry the
//! `export_id` of a blind export recorded in this store (with the codebook labelled against);
//! a record with a `coder_code` field (labelled or not: the file came from an export that
//! showed the codes), a labelled record without an export id, or with the id of an export that
//! showed the codes or that this store never recorded, is refused. A file made by hand must
//! carry the export id of the blind export its sentences were read from.
//!
//! Every record is checked before anything is written: an unknown code, a sentence
//! the store does not hold as a reasoning sentence audited with the codebook, a record that is
//! not from a blind export, or a second label for the same sentence in the file is an error
//! naming the file, the line and the field, and nothing is written. The labels are then written in one transaction; a label for
//! a sentence the same coder labelled before replaces it, so importing a file twice changes
//! nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use agora_records::families::audit::labels as store;
use agora_records::families::audit::CoderKeyRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use super::codebook::LoadedCodebook;
use super::csv;
use agora_records::seed::hex_digest;

/// The table's layout, kept with every table of the store in `agora_records`.
pub use agora_records::families::audit::LABELS as SCHEMA;

/// The table's layout, kept with every table of the store in `agora_records`.
pub use agora_records::families::audit::EXPORTS as EXPORTS_SCHEMA;

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
    /// The export's id ([`export_id`]).
    pub export_id: String,
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
        m.insert("export_id".into(), self.export_id.clone().into());
        if let (Some(c), Some(code)) = (&self.coder, &self.coder_code) {
            m.insert("coder".into(), c.clone().into());
            m.insert("coder_code".into(), code.clone().into());
        }
        Value::Object(m)
    }
}

/// An exported record's fields, in the order every format writes them; a blind export writes the
/// first [`BLIND_FIELDS`], without the machine coder and its code.
pub const EXPORT_FIELDS: [&str; 13] = [
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
    "export_id",
    "coder",
    "coder_code",
];

/// How many of [`EXPORT_FIELDS`] a blind export writes.
pub const BLIND_FIELDS: usize = 11;

/// A sample of coded responses, sentence by sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The export's id ([`export_id`]), in every record.
    pub id: String,
    /// What was asked for.
    pub options: ExportOptions,
    /// The codebook's name, version and SHA-256.
    pub codebook: (String, u32, String),
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
                let header = if blind { &EXPORT_FIELDS[..BLIND_FIELDS] } else { &EXPORT_FIELDS[..] };
                let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
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
                        r.export_id.clone(),
                    ];
                    if !blind {
                        row.push(r.coder.clone().unwrap_or_default());
                        row.push(r.coder_code.clone().unwrap_or_default());
                    }
                    rows.push(row);
                }
                csv::text(&rows)
            }
        }
    }
}

/// The id of an export: the first 16 hex digits of the SHA-256 of its parameters and its
/// sentences, one line each:
/// `agora-export/1`, `seed {seed}`, `sample {n}`, `coder {coder}`, `codebook {name} {version}
/// {sha256}`, `models {m1,m2,…}` (the models exported, sorted), `blind {true|false}`, then
/// `{sentence_id}\t{text}` per record in order.
pub fn export_id(export: &Export) -> String {
    let (name, version, sha) = &export.codebook;
    let models: Vec<&str> = export.per_model.keys().map(String::as_str).collect();
    let mut text = format!(
        "agora-export/1\nseed {}\nsample {}\ncoder {}\ncodebook {name} {version} {sha}\nmodels {}\nblind {}\n",
        export.options.seed,
        export.options.sample,
        export.options.coder,
        models.join(","),
        export.options.blind
    );
    for r in &export.records {
        text.push_str(&format!("{}\t{}\n", r.sentence_id, r.text));
    }
    hex_digest(text.as_bytes())[..16].to_string()
}

/// Records an export in the store's `audit_exports` (see [The export id](self#the-export-id)),
/// keeping the first record of an export drawn again. Returns the time the store gave it.
pub fn record_export(path: &Path, export: &Export) -> Result<String, LabelsError> {
    let mut conn = open(path, true)?;
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let (name, version, sha) = &export.codebook;
    let models: Vec<&String> = export.per_model.keys().collect();
    let created = store::record_export(
        &mut conn,
        &store::ExportRecord {
            export_id: &export.id,
            seed: export.options.seed.to_string(),
            sample: export.options.sample as i64,
            key: CoderKeyRef { coder: &export.options.coder, codebook: name, version: *version, sha256: sha },
            models_json: serde_json::to_string(&models).expect("invariant: names serialise"),
            blind: export.options.blind,
            sentences: export.records.len() as i64,
            responses: export.per_model.values().map(|(n, _)| *n as i64).sum::<i64>(),
        },
    )
    .map_err(sql)?;
    Ok(created)
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

pub use agora_analysis::evidence::has_table;

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
    type Resp = store::SampledResponse;
    let rows: Vec<Resp> = store::reasoning_responses(&conn, codebook.key(&options.coder)).map_err(sql)?;
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
    let mut records = Vec::new();
    let mut per_model = BTreeMap::new();
    for (model, responses) in &by_model {
        let index: HashMap<&str, &Resp> = responses.iter().map(|(id, r)| (id.as_str(), r)).collect();
        let chosen = sample_ids(responses.iter().map(|(id, _)| id.as_str()), options.seed, options.sample);
        per_model.insert(model.clone(), (chosen.len(), responses.len()));
        for id in chosen {
            let r = index[id];
            let coded =
                store::reasoning_sentences(&conn, (r.1, r.2, r.3), codebook.key(&options.coder)).map_err(sql)?;
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
                    export_id: String::new(),
                });
            }
        }
    }
    let mut export = Export {
        id: String::new(),
        options: options.clone(),
        codebook: (cb.name.clone(), cb.version, codebook.sha256.clone()),
        records,
        per_model,
    };
    export.id = export_id(&export);
    for r in &mut export.records {
        r.export_id.clone_from(&export.id);
    }
    Ok(export)
}

mod import;
pub use import::*;

#[cfg(test)]
mod tests;
