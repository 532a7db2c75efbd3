//! The transcript audit's tables, read for the report: the occurrence of each stated value,
//! the dependency of the action on it, the coder validation, the requirement verdicts, and
//! the coded paths of one prompt for a reasoning tree (the SUVA audit paper §240.7.3). Every table is
//! optional: a store that was never audited has none of them, and the page says so.

use std::collections::BTreeMap;
use std::path::Path;

use agora_audit::agreement::{self, GateOptions, Validation};
use agora_audit::{Codebook, LoadedCodebook};
use anyhow::Context as _;
use rusqlite::Connection;

/// Whether the store holds `table`.
pub fn has_table(conn: &Connection, table: &str) -> anyhow::Result<bool> {
    Ok(agora_records::reads::has_table(conn, table)?)
}

/// The occurrence of one stated value for one model, under one coder and codebook.
#[derive(serde::Serialize)]
pub struct Occurrence {
    pub coder: String,
    pub codebook: String,
    pub model: String,
    pub code: String,
    /// Coded responses: pre-action reasoning whose coder output passed validation.
    pub coded: usize,
    /// Coded responses stating the value, with their share and its interval; none where the
    /// gate refuses the model's codes.
    pub stating: Option<Stating>,
    /// The gate's decision (`validated: …`, `refused: …`).
    pub validation: String,
}

/// The coded responses stating a value, their share of the coded, and its 95 % Wilson interval.
#[derive(serde::Serialize)]
pub struct Stating {
    pub responses: usize,
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

pub use agora_records::reads::report_audit::{AgreementRow, Dependency, Requirement};

/// One row of `audit_agreement`, its JSON columns decoded.
pub struct Agreement {
    /// The row as stored (its JSON columns read into the fields below).
    pub stored: AgreementRow,
    /// The codes compared.
    pub labels: Vec<String>,
    /// The confusion matrix (rows: the reference's code, columns: the coder's).
    pub confusion: Vec<Vec<u64>>,
    /// The reference's uses of each code.
    pub support: Vec<u64>,
    /// The coder's recall per code.
    pub recall: Vec<Option<f64>>,
}

impl Agreement {
    /// The codebook, named with its version.
    pub fn codebook(&self) -> String {
        format!("{} v{}", self.stored.codebook, self.stored.codebook_version)
    }
}

/// The coded paths of the responses to one prompt (or one condition), for a reasoning tree.
pub struct TreeInput {
    /// What the paths are the responses to, in words.
    pub subject: String,
    /// Whether the responses are replicates of one prompt (else: all responses of a condition).
    pub replicates: bool,
    /// The gate's decision on the model's codes.
    pub validation: String,
    /// Per response: its reasoning sentences' codes in order, and its action.
    pub paths: Vec<(Vec<String>, String)>,
}

/// Everything the report shows of the audit; `None` where the store lacks the table.
pub struct AuditTables {
    /// Occurrence, when `audit_responses` is present.
    pub occurrence: Option<Vec<Occurrence>>,
    pub dependency: Option<Vec<Dependency>>,
    pub agreement: Option<Vec<Agreement>>,
    pub requirements: Option<Vec<Requirement>>,
    pub tree: Option<TreeInput>,
}

impl AuditTables {
    /// Whether the store holds any audit table the report reads.
    pub fn any(&self) -> bool {
        self.occurrence.is_some()
            || self.dependency.is_some()
            || self.agreement.is_some()
            || self.requirements.is_some()
    }
}

use agora_records::reads::evidence::CoderKey;

/// The codebook of a key as the store recorded it, and the gate's decision per model.
fn gate(
    conn: &Connection,
    k: &CoderKey,
    models: &[String],
) -> anyhow::Result<Option<(LoadedCodebook, Vec<Validation>)>> {
    if !has_table(conn, "audit_codebooks")? {
        return Ok(None);
    }
    let source: Option<String> = agora_records::reads::report_audit::codebook_source(conn, k)?;
    let Some(source) = source else { return Ok(None) };
    let cb = Codebook::parse(&source, Path::new("audit_codebooks"))
        .with_context(|| format!("codebook {} v{} as stored", k.codebook, k.version))?;
    let v = agreement::gate(conn, &cb, &k.coder, models, &GateOptions::default())?;
    Ok(Some((cb, v)))
}

fn keys(conn: &Connection, table: &str) -> anyhow::Result<Vec<CoderKey>> {
    Ok(agora_records::reads::report_audit::keys(conn, table)?)
}

/// The occurrence share of each value per model and coder, under the coder-validation gate at
/// its default threshold: the share of coded responses (`values_json` present) stating the
/// value at least once, with its 95 % Wilson interval, as `agora audit` computes it.
pub fn occurrence(conn: &Connection) -> anyhow::Result<Option<Vec<Occurrence>>> {
    if !has_table(conn, "audit_responses")? {
        return Ok(None);
    }
    let mut out = Vec::new();
    for k in keys(conn, "audit_responses")? {
        let rows: Vec<(String, Option<String>)> = agora_records::reads::report_audit::coded_values(conn, &k)?;
        let mut by_model: BTreeMap<String, Vec<serde_json::Map<String, serde_json::Value>>> = BTreeMap::new();
        for (model, values) in rows {
            let coded = by_model.entry(model).or_default();
            if let Some(v) = values {
                let v: serde_json::Value = serde_json::from_str(&v).context("audit_responses.values_json")?;
                coded.push(v.as_object().cloned().unwrap_or_default());
            }
        }
        let models: Vec<String> = by_model.keys().cloned().collect();
        let (codes, validation): (Vec<String>, Vec<Validation>) = match gate(conn, &k, &models)? {
            Some((cb, v)) => (cb.codebook.values().map(|c| c.name.clone()).collect(), v),
            None => {
                // No stored codebook: the codes are those of the value vectors, and the gate
                // cannot be checked, so every share is refused.
                let mut codes: Vec<String> = by_model.values().flatten().flat_map(|m| m.keys().cloned()).collect();
                codes.sort();
                codes.dedup();
                (codes, Vec::new())
            }
        };
        for (model, coded) in &by_model {
            let v = validation.iter().find(|v| &v.model == model);
            let label = v.map_or_else(|| "refused: the codebook is not stored".to_string(), Validation::label);
            let shown = v.is_some_and(Validation::shown);
            for code in &codes {
                let stating =
                    coded.iter().filter(|m| m.get(code).and_then(serde_json::Value::as_u64) == Some(1)).count();
                let interval = agora_analysis::stats::wilson(stating as u64, coded.len() as u64, 0.05).ok();
                out.push(Occurrence {
                    coder: k.coder.clone(),
                    codebook: format!("{} v{}", k.codebook, k.version),
                    model: model.clone(),
                    code: code.clone(),
                    coded: coded.len(),
                    stating: match interval {
                        Some((low, high)) if shown => {
                            Some(Stating { responses: stating, share: stating as f64 / coded.len() as f64, low, high })
                        }
                        _ => None,
                    },
                    validation: label.clone(),
                });
            }
        }
    }
    Ok(Some(out))
}

/// The rows of `audit_dependency`.
pub fn dependency(conn: &Connection) -> anyhow::Result<Option<Vec<Dependency>>> {
    if !has_table(conn, "audit_dependency")? {
        return Ok(None);
    }
    Ok(Some(agora_records::reads::report_audit::dependency(conn)?))
}

fn json<T: serde::de::DeserializeOwned>(s: &str, column: &str) -> anyhow::Result<T> {
    serde_json::from_str(s).with_context(|| format!("audit_agreement.{column}"))
}

/// The rows of `audit_agreement`: human pairs first, then machine coders.
pub fn agreement(conn: &Connection) -> anyhow::Result<Option<Vec<Agreement>>> {
    if !has_table(conn, "audit_agreement")? {
        return Ok(None);
    }
    let mut out = Vec::new();
    for r in agora_records::reads::report_audit::agreement(conn)? {
        out.push(Agreement {
            labels: json(&r.labels_json, "labels_json")?,
            confusion: json(&r.confusion_json, "confusion_json")?,
            support: json(&r.support_json, "support_json")?,
            recall: json(&r.recall_json, "recall_json")?,
            stored: r,
        });
    }
    Ok(Some(out))
}

/// The rows of `audit_requirements`.
pub fn requirements(conn: &Connection) -> anyhow::Result<Option<Vec<Requirement>>> {
    if !has_table(conn, "audit_requirements")? {
        return Ok(None);
    }
    Ok(Some(agora_records::reads::report_audit::requirements(conn)?))
}

/// A `--tree-prompt` that names no prompt the tree can draw: bad input, the message says why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TreePromptError(pub String);

/// A prompt as `--tree-prompt` names it: `run_id:seat:slot`.
pub fn parse_prompt(s: &str) -> anyhow::Result<(i64, i64, i64)> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad = || TreePromptError(format!("--tree-prompt `{s}`: expected run_id:seat:slot (three integers)"));
    let [a, b, c] = parts.as_slice() else { return Err(bad().into()) };
    Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?, c.parse().map_err(|_| bad())?))
}

fn validation_of(conn: &Connection, k: &CoderKey, model: &str) -> anyhow::Result<String> {
    Ok(match gate(conn, k, &[model.to_string()])? {
        Some((_, v)) => v.first().map_or_else(|| "refused: no decision".into(), Validation::label),
        None => "refused: the codebook is not stored".into(),
    })
}

/// The coded paths for the reasoning tree: the replicates of one prompt (`chosen`, as
/// run_id:seat:slot, or else the prompt with most replicates, ties to the smallest run, seat
/// and slot), or, in a store without replicates, every audited response of the condition
/// (model, environment, cell) with most coded responses (ties by name). The first coder and
/// codebook in key order is used.
pub fn tree(conn: &Connection, chosen: Option<&str>) -> anyhow::Result<Option<TreeInput>> {
    let chosen = chosen.map(parse_prompt).transpose()?;
    if has_table(conn, "audit_replicate_responses")? && has_table(conn, "audit_replicate_sentences")? {
        if let Some(k) = keys(conn, "audit_replicate_responses")?.into_iter().next() {
            let pick: Option<(i64, i64, i64, String, String, i64)> =
                agora_records::reads::report_audit::replicated_prompt(conn, &k, chosen)?;
            if let (None, Some(c)) = (&pick, chosen) {
                return Err(TreePromptError(format!(
                    "--tree-prompt {}:{}:{}: the store holds no replicates of that prompt",
                    c.0, c.1, c.2
                ))
                .into());
            }
            if let Some((run, seat, slot, model, condition, n)) = pick {
                let rows: Vec<((String, i64), String, Option<String>)> =
                    agora_records::reads::report_audit::replicate_paths(conn, (run, seat, slot), &k)?;
                return Ok(Some(TreeInput {
                    subject: format!(
                        "prompt {run}:{seat}:{slot} (run:seat:slot; model {model}, {condition}), {n} replicates, coder {}",
                        k.coder
                    ),
                    replicates: true,
                    validation: validation_of(conn, &k, &model)?,
                    paths: group_paths(rows),
                }));
            }
        }
    }
    if let Some(c) = chosen {
        return Err(TreePromptError(format!(
            "--tree-prompt {}:{}:{}: the store holds no audited replicates",
            c.0, c.1, c.2
        ))
        .into());
    }
    if !has_table(conn, "audit_responses")? || !has_table(conn, "audit_sentences")? {
        return Ok(None);
    }
    let Some(k) = keys(conn, "audit_responses")?.into_iter().next() else { return Ok(None) };
    let pick: Option<(String, String, String, i64)> = agora_records::reads::report_audit::largest_condition(conn, &k)?;
    let Some((model, environment, cell, n)) = pick else { return Ok(None) };
    let rows: Vec<((String, i64), String, Option<String>)> =
        agora_records::reads::report_audit::condition_paths(conn, (&model, &environment, &cell), &k)?;
    Ok(Some(TreeInput {
        subject: format!(
            "every coded response of model {model}, environment {environment}, cell {cell} ({n} responses, different prompts; the store holds no replicates), coder {}",
            k.coder
        ),
        replicates: false,
        validation: validation_of(conn, &k, &model)?,
        paths: group_paths(rows),
    }))
}

/// Groups (response, action, code) rows, in response and sentence order, into paths.
fn group_paths(rows: Vec<((String, i64), String, Option<String>)>) -> Vec<(Vec<String>, String)> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    let mut last: Option<(String, i64)> = None;
    for (key, action, code) in rows {
        if last.as_ref() != Some(&key) {
            out.push((Vec::new(), action));
            last = Some(key);
        }
        if let (Some(c), Some(path)) = (code, out.last_mut()) {
            path.0.push(c);
        }
    }
    out
}
