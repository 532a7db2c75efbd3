//! The audit's summary: responses with and without pre-action reasoning, post-hoc rationales
//! counted apart, and the occurrence share of each stated value (the SUVA audit paper §240.7.1), per model,
//! per model and environment, and per model, environment and cell; written as Markdown, JSON
//! and CSV by `agora audit`.
//!
//! The occurrence share of a value is the number of coded responses (responses with pre-action
//! reasoning whose coder output passed validation) that state it at least once, over the coded
//! responses. Every number computed from the codes (the shares with their counts and intervals,
//! the sentences per code, the residual sentences) passes the coder-validation gate per model
//! ([`agreement`](super::agreement)): where the coder's κ against human labels on the model's
//! own text is below the threshold, or there are no human labels, the number is refused (left
//! empty, with the reason in the `validation` field) unless unvalidated codes are allowed, in
//! which case it is shown and labelled `unvalidated`. Responses without pre-action reasoning are counted in the reasoning table, never
//! in a share's denominator. The 95 % Wilson interval beside each share treats responses as
//! independent; the decisions of one run (its seats and rounds) are not, so the interval is
//! narrower than a cluster-aware one would be.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::agreement::Validation;
use crate::codebook::LoadedCodebook;
use crate::response::{Response, Skipped};
use crate::segment::{ReplyForm, SegmentKind, SEGMENTER_VERSION};
use crate::table::{count, of_rows};
use agora_analysis::stats::wilson;
use agora_analysis::table::Table;

/// Written for a dimension a row aggregates over.
pub const ALL: &str = "all";

/// The codebook an audit used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CodebookRecord {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// SHA-256 of its file.
    pub sha256: String,
    /// Where it was read from.
    pub path: String,
    /// The residual code.
    pub residual: String,
    /// The value codes, in order.
    pub values: Vec<String>,
}

/// Responses and their reasoning in one group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReasoningRow {
    /// `model`, `environment` or `cell`: the finest dimension the row is grouped by.
    pub level: String,
    /// The model.
    pub model: String,
    /// The environment, or `all`.
    pub environment: String,
    /// The cell, or `all`.
    pub cell: String,
    /// Terminal decisions audited (status ok, or truncated with an action).
    pub responses: usize,
    /// Fallback decisions, skipped (no reply to audit).
    pub fallbacks_skipped: usize,
    /// Responses with reasoning written before the action.
    pub with_reasoning: usize,
    /// Responses without it: counted, not coded.
    pub without_reasoning: usize,
    /// with_reasoning / responses.
    pub reasoning_share: Option<f64>,
    /// Responses whose answer could not be located (no segments).
    pub malformed: usize,
    /// Responses with a post-hoc rationale (text after the answer).
    pub with_post_hoc: usize,
    /// Responses whose only rationale is post hoc.
    pub post_hoc_only: usize,
    /// Responses whose reasoning was coded (with reasoning, coder output valid).
    pub coded: usize,
    /// Responses whose coder output failed validation.
    pub coder_errors: usize,
    /// Reasoning sentences coded.
    pub reasoning_sentences: usize,
    /// Of them, coded with the residual code (none where the gate refuses the codes).
    pub residual_sentences: Option<usize>,
    /// Post-hoc sentences kept and never coded.
    pub post_hoc_sentences: usize,
    /// Responses per reasoning source, `source=count` separated by `; ` (`think=3; field:reasoning=4`).
    pub sources: String,
}

/// The occurrence of one stated value in one group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OccurrenceRow {
    /// `model`, `environment` or `cell`.
    pub level: String,
    /// The model.
    pub model: String,
    /// The environment, or `all`.
    pub environment: String,
    /// The cell, or `all`.
    pub cell: String,
    /// The value code.
    pub code: String,
    /// Coded responses (the denominator).
    pub coded: usize,
    /// Coded responses stating the value at least once (none where the gate refuses the codes).
    pub stating: Option<usize>,
    /// stating / coded; none without coded responses or where the gate refuses the codes.
    pub share: Option<f64>,
    /// Lower end of the 95 % Wilson interval (responses treated as independent).
    pub low: Option<f64>,
    /// Upper end of the 95 % Wilson interval.
    pub high: Option<f64>,
    /// The gate's decision for the row's model: `validated: …`, `unvalidated: …` or
    /// `refused: κ = 0.650 < 0.8 (40 sentences)`.
    pub validation: String,
}

/// Sentences per code and model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CodeCountRow {
    /// The model.
    pub model: String,
    /// The code (the residual included).
    pub code: String,
    /// Reasoning sentences given the code (none where the gate refuses the codes).
    pub sentences: Option<usize>,
    /// The gate's decision for the model.
    pub validation: String,
}

/// The summary of one audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    /// The store audited.
    pub store: String,
    /// The study audited, if one was chosen.
    pub study: Option<String>,
    /// The coder's identity and version.
    pub coder: String,
    /// The codebook.
    pub codebook: CodebookRecord,
    /// Version of the segmentation rule.
    pub segmenter_version: u32,
    /// The gate's threshold: codes count on a model's text when the coder's κ there is at least this.
    pub min_kappa: f64,
    /// Whether codes refused by the gate are shown anyway, labelled unvalidated.
    pub allow_unvalidated: bool,
    /// The gate's decision per model.
    pub validation: Vec<Validation>,
    /// Every response together.
    pub total: ReasoningRow,
    /// Per model, per model and environment, per model, environment and cell.
    pub reasoning: Vec<ReasoningRow>,
    /// Occurrence of each value code, at the same levels.
    pub occurrence: Vec<OccurrenceRow>,
    /// Reasoning sentences per code and model.
    pub code_counts: Vec<CodeCountRow>,
    /// How to read the numbers, and what they are not.
    pub notes: Vec<String>,
    /// The audited responses (in the store's tables; not repeated in the JSON).
    #[serde(skip)]
    pub responses: Vec<Response>,
}

/// The coder of an audit and the validation gate its codes pass.
#[derive(Clone, Debug, PartialEq)]
pub struct CoderGate {
    /// The coder's identity and version.
    pub coder: String,
    /// The gate's threshold.
    pub min_kappa: f64,
    /// The gate's rule in words.
    pub rule: String,
    /// Whether refused codes are shown anyway, labelled unvalidated.
    pub allow_unvalidated: bool,
    /// The gate's decision per model.
    pub validation: Vec<Validation>,
}

type Key = (String, String, String);
/// A level of the summary: its name, and the group key of a (model, environment, cell) key.
type Level = (&'static str, fn(&Key) -> Key);

impl Audit {
    /// Summarises audited responses; `gate` names the coder and holds the gate's decision per
    /// model (a model without one is refused).
    pub fn new(
        store: &Path,
        study: Option<&str>,
        codebook: &LoadedCodebook,
        responses: Vec<Response>,
        skipped: &Skipped,
        earlier: &[String],
        gate: CoderGate,
    ) -> Audit {
        let CoderGate { coder, min_kappa, rule, allow_unvalidated, validation } = gate;
        let coder = coder.as_str();
        let cb = &codebook.codebook;
        let gate = |model: &str| validation.iter().find(|v| v.model == model);
        let shown = |model: &str| gate(model).is_some_and(Validation::shown);
        let label = |model: &str| gate(model).map_or_else(|| "refused: no human labels".to_string(), Validation::label);
        let values: Vec<String> = cb.values().map(|c| c.name.clone()).collect();
        let levels: [Level; 3] = [
            ("model", |k| (k.0.clone(), ALL.into(), ALL.into())),
            ("environment", |k| (k.0.clone(), k.1.clone(), ALL.into())),
            ("cell", |k| k.clone()),
        ];
        let mut reasoning = Vec::new();
        let mut occurrence = Vec::new();
        for (level, key_of) in levels {
            let mut groups: BTreeMap<Key, (Vec<&Response>, usize)> = BTreeMap::new();
            for r in &responses {
                let k = key_of(&(r.model.clone(), r.environment.clone(), r.cell.clone()));
                groups.entry(k).or_default().0.push(r);
            }
            for (k, n) in skipped {
                groups.entry(key_of(k)).or_default().1 += n;
            }
            for ((model, environment, cell), (rs, skipped)) in groups {
                let show = shown(&model);
                let mut row = reasoning_row(level, &model, &environment, &cell, &rs, skipped, &cb.residual);
                if !show {
                    row.residual_sentences = None;
                }
                for (i, code) in values.iter().enumerate() {
                    let coded: Vec<&&Response> = rs.iter().filter(|r| r.coded()).collect();
                    let stating = coded.iter().filter(|r| r.values[i]).count();
                    let (share, low, high) = match wilson(stating as u64, coded.len() as u64, 0.05) {
                        Ok((l, h)) if show => (Some(stating as f64 / coded.len() as f64), Some(l), Some(h)),
                        _ => (None, None, None),
                    };
                    occurrence.push(OccurrenceRow {
                        level: level.into(),
                        model: model.clone(),
                        environment: environment.clone(),
                        cell: cell.clone(),
                        code: code.clone(),
                        coded: coded.len(),
                        stating: show.then_some(stating),
                        share,
                        low,
                        high,
                        validation: label(&model),
                    });
                }
                reasoning.push(row);
            }
        }
        let all: Vec<&Response> = responses.iter().collect();
        let mut total = reasoning_row("all", ALL, ALL, ALL, &all, skipped.values().sum(), &cb.residual);
        if !responses.iter().all(|r| shown(&r.model)) {
            total.residual_sentences = None;
        }
        let mut counts: BTreeMap<(String, usize), usize> = BTreeMap::new();
        for r in &responses {
            for s in r.sentences.iter().filter(|s| s.kind == SegmentKind::Reasoning) {
                if let Some(c) = &s.code {
                    let pos = cb.codes.iter().position(|x| &x.name == c).unwrap_or(usize::MAX);
                    *counts.entry((r.model.clone(), pos)).or_default() += 1;
                }
            }
        }
        let code_counts = counts
            .into_iter()
            .map(|((model, pos), sentences)| CodeCountRow {
                code: cb.codes.get(pos).map_or_else(String::new, |c| c.name.clone()),
                sentences: shown(&model).then_some(sentences),
                validation: label(&model),
                model,
            })
            .collect();
        let mut notes = vec![
            format!(
                "Reasoning is text written before the action: deliberation blocks, prose before the JSON answer, and JSON string fields before the answer field (segmentation rule v{SEGMENTER_VERSION}). A field after the answer (such as `reason`) is a post-hoc rationale: kept in audit_sentences with segment `post_hoc`, never coded."
            ),
            "A share is the coded responses stating the value at least once over the coded responses (those with pre-action reasoning); responses without pre-action reasoning are counted, not coded, and enter no share.".into(),
            format!(
                "The coder-validation gate: coder `{coder}`'s codes count for a model's statistics only where, on that model's own text, {rule} (`agora audit export`, `import`, `agreement`). Elsewhere every number computed from the codes (shares, their counts and intervals, sentences per code, residual sentences) is refused{}.",
                if allow_unvalidated { "; here unvalidated codes were allowed and are shown, labelled unvalidated" } else { "" }
            ),
            "The 95 % Wilson intervals treat responses as independent; the decisions of one run are not, so the intervals are too narrow.".into(),
            "Asking for reasoning is itself a design-level change (the step-by-step cell): stated values are conditional on the cell that asked for them.".into(),
        ];
        if !earlier.is_empty() {
            notes.push(format!(
                "This store holds audits with codebook {} v{} of other content (SHA-256 {}): the codebook changed without a new version.",
                cb.name,
                cb.version,
                earlier.join(", ")
            ));
        }
        let disagree = responses.iter().filter(|r| r.answer_agrees == Some(false)).count();
        if disagree > 0 {
            notes.push(format!(
                "{disagree} responses: the answer located by the segmentation differs from the parsed action; their segments may be misplaced."
            ));
        }
        Audit {
            store: store.display().to_string(),
            study: study.map(str::to_string),
            coder: coder.to_string(),
            codebook: CodebookRecord {
                name: cb.name.clone(),
                version: cb.version,
                sha256: codebook.sha256.clone(),
                path: codebook.path.display().to_string(),
                residual: cb.residual.clone(),
                values,
            },
            segmenter_version: SEGMENTER_VERSION,
            min_kappa,
            allow_unvalidated,
            validation,
            total,
            reasoning,
            occurrence,
            code_counts,
            notes,
            responses,
        }
    }

    /// The tables written as CSV: `audit_reasoning`, `audit_occurrence`, `audit_sentence_codes`.
    pub fn tables(&self) -> Vec<Table> {
        /// A share's cell: four decimals, empty where there is none.
        fn share(x: Option<f64>) -> String {
            x.map_or_else(String::new, |v| format!("{v:.4}"))
        }
        let reasoning = of_rows(
            "audit_reasoning",
            "Responses with and without pre-action reasoning",
            std::iter::once(&self.total).chain(&self.reasoning),
            &[
                ("level", |r| r.level.clone()),
                ("model", |r| r.model.clone()),
                ("environment", |r| r.environment.clone()),
                ("cell", |r| r.cell.clone()),
                ("responses", |r| r.responses.to_string()),
                ("fallbacks_skipped", |r| r.fallbacks_skipped.to_string()),
                ("with_reasoning", |r| r.with_reasoning.to_string()),
                ("without_reasoning", |r| r.without_reasoning.to_string()),
                ("reasoning_share", |r| share(r.reasoning_share)),
                ("malformed", |r| r.malformed.to_string()),
                ("with_post_hoc", |r| r.with_post_hoc.to_string()),
                ("post_hoc_only", |r| r.post_hoc_only.to_string()),
                ("coded", |r| r.coded.to_string()),
                ("coder_errors", |r| r.coder_errors.to_string()),
                ("reasoning_sentences", |r| r.reasoning_sentences.to_string()),
                ("residual_sentences", |r| count(r.residual_sentences)),
                ("post_hoc_sentences", |r| r.post_hoc_sentences.to_string()),
                ("sources", |r| r.sources.clone()),
            ],
        );
        let occurrence = of_rows(
            "audit_occurrence",
            "Occurrence of each stated value",
            &self.occurrence,
            &[
                ("level", |o| o.level.clone()),
                ("model", |o| o.model.clone()),
                ("environment", |o| o.environment.clone()),
                ("cell", |o| o.cell.clone()),
                ("code", |o| o.code.clone()),
                ("coded", |o| o.coded.to_string()),
                ("stating", |o| count(o.stating)),
                ("share", |o| share(o.share)),
                ("low", |o| share(o.low)),
                ("high", |o| share(o.high)),
                ("validation", |o| o.validation.clone()),
            ],
        );
        let codes = of_rows(
            "audit_sentence_codes",
            "Reasoning sentences per code",
            &self.code_counts,
            &[
                ("model", |c| c.model.clone()),
                ("code", |c| c.code.clone()),
                ("sentences", |c| count(c.sentences)),
                ("validation", |c| c.validation.clone()),
            ],
        );
        vec![reasoning, occurrence, codes]
    }

    /// The audit as Markdown: provenance, notes, the reasoning table and the stated values
    /// per model and per cell (share, with the count over the coded responses).
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Agora transcript audit{}\n\nStore `{}`; coder `{}`; codebook `{}` v{} (`{}`, SHA-256 `{}`); segmentation v{}.\n\n",
            self.study.as_ref().map(|s| format!(": {s}")).unwrap_or_default(),
            self.store,
            self.coder,
            self.codebook.name,
            self.codebook.version,
            self.codebook.path,
            self.codebook.sha256,
            self.segmenter_version
        );
        let t = &self.total;
        s.push_str(&format!(
            "{} responses audited ({} fallbacks skipped): {} with pre-action reasoning, {} without (counted, not coded), {} with a post-hoc rationale ({} with nothing else), {} malformed, {} coder errors.\n\n",
            t.responses, t.fallbacks_skipped, t.with_reasoning, t.without_reasoning, t.with_post_hoc, t.post_hoc_only, t.malformed, t.coder_errors
        ));
        for n in &self.notes {
            s.push_str(&format!("- {n}\n"));
        }
        s.push_str(&format!(
            "\n## Coder validation\n\nThe gate on coder `{}`'s codes, per model (kappa against human labels on the model's own text, threshold {}):\n\n",
            self.coder, self.min_kappa
        ));
        if self.validation.is_empty() {
            s.push_str("No model.\n");
        }
        for v in &self.validation {
            let recall = v.recall_text();
            if recall.is_empty() {
                s.push_str(&format!("- `{}`: {}\n", v.model, v.label()));
            } else {
                s.push_str(&format!(
                    "- `{}`: {}; recall per code (human-referenced sentences): {recall}\n",
                    v.model,
                    v.label()
                ));
            }
        }
        let tables = self.tables();
        s.push_str(&format!("\n## {}\n\n", tables[0].title));
        markdown_table(&mut s, &tables[0].columns, &tables[0].rows);
        for (level, title) in
            [("model", "Stated values per model"), ("cell", "Stated values per model, environment and cell")]
        {
            s.push_str(&format!(
                "\n## {title}\n\nShare of coded responses stating each value at least once (stating/coded); `refused` where the coder-validation gate refuses the model's codes.\n\n"
            ));
            let mut columns = vec!["model", "environment", "cell", "coded"];
            columns.extend(self.codebook.values.iter().map(String::as_str));
            columns.push("validation");
            let mut rows = Vec::new();
            for r in self.reasoning.iter().filter(|r| r.level == level) {
                let mut row = vec![r.model.clone(), r.environment.clone(), r.cell.clone(), r.coded.to_string()];
                let mut validation = String::new();
                for code in &self.codebook.values {
                    let o = self.occurrence.iter().find(|o| {
                        o.level == level
                            && o.model == r.model
                            && o.environment == r.environment
                            && o.cell == r.cell
                            && &o.code == code
                    });
                    if let Some(o) = o {
                        validation.clone_from(&o.validation);
                    }
                    row.push(match o {
                        Some(o) if o.stating.is_none() => "refused".into(),
                        Some(o) => match (o.share, o.stating) {
                            (Some(sh), Some(n)) => format!("{sh:.3} ({n}/{})", o.coded),
                            _ => "-".into(),
                        },
                        None => "-".into(),
                    });
                }
                row.push(validation);
                rows.push(row);
            }
            markdown_table(&mut s, &columns, &rows);
        }
        s.push_str(&format!("\n## {}\n\n", tables[2].title));
        markdown_table(&mut s, &tables[2].columns, &tables[2].rows);
        s
    }
}

fn markdown_table(s: &mut String, columns: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        s.push_str("No responses.\n");
        return;
    }
    s.push_str(&format!("| {} |\n|{}\n", columns.join(" | "), "---|".repeat(columns.len())));
    for r in rows {
        let cells: Vec<String> =
            r.iter().map(|c| if c.is_empty() { "-".to_string() } else { c.replace('|', "\\|") }).collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
}

fn reasoning_row(
    level: &str,
    model: &str,
    environment: &str,
    cell: &str,
    rs: &[&Response],
    skipped: usize,
    residual: &str,
) -> ReasoningRow {
    let with = rs.iter().filter(|r| r.segmentation.has_reasoning()).count();
    let mut sources: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rs {
        let mut seen: Vec<&str> = Vec::new();
        for g in r.segmentation.reasoning() {
            if !seen.contains(&g.source.as_str()) {
                seen.push(&g.source);
                *sources.entry(&g.source).or_default() += 1;
            }
        }
    }
    ReasoningRow {
        level: level.into(),
        model: model.into(),
        environment: environment.into(),
        cell: cell.into(),
        responses: rs.len(),
        fallbacks_skipped: skipped,
        with_reasoning: with,
        without_reasoning: rs.len() - with,
        reasoning_share: (!rs.is_empty()).then(|| with as f64 / rs.len() as f64),
        malformed: rs.iter().filter(|r| r.segmentation.form == ReplyForm::Malformed).count(),
        with_post_hoc: rs.iter().filter(|r| r.segmentation.has_post_hoc()).count(),
        post_hoc_only: rs.iter().filter(|r| r.segmentation.has_post_hoc() && !r.segmentation.has_reasoning()).count(),
        coded: rs.iter().filter(|r| r.coded()).count(),
        coder_errors: rs.iter().filter(|r| r.coder_error.is_some()).count(),
        reasoning_sentences: rs.iter().map(|r| r.reasoning_sentences()).sum(),
        residual_sentences: Some(
            rs.iter()
                .flat_map(|r| &r.sentences)
                .filter(|s| s.kind == SegmentKind::Reasoning && s.code.as_deref() == Some(residual))
                .count(),
        ),
        post_hoc_sentences: rs.iter().flat_map(|r| &r.sentences).filter(|s| s.kind == SegmentKind::PostHoc).count(),
        sources: sources.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "),
    }
}
