//! The agreement's outputs: its CSV tables, Markdown and JSON.

use super::*;
use crate::table::{num, of_rows, Column};
use agora_analysis::table::Table;

impl Agreement {
    /// The tables written as CSV: `agreement` (one row per κ), `agreement_codes` (support,
    /// recall and precision per row and code) and `agreement_confusion` (the non-zero cells of
    /// each confusion matrix).
    pub fn tables(&self) -> Vec<Table> {
        // The columns that name a row of κ, each table's first.
        let head: [Column<AgreementRow>; 4] = [
            ("model", |r| r.model.clone()),
            ("kind", |r| r.kind.clone()),
            ("reference", |r| r.reference.clone()),
            ("coder", |r| r.coder.clone()),
        ];
        let kappa: [Column<AgreementRow>; 13] = [
            ("coder_codebook_sha256", |r| r.coder_codebook_sha256.clone()),
            ("n", |r| r.n.to_string()),
            ("p_o", |r| num(r.p_o)),
            ("p_e", |r| num(r.p_e)),
            ("kappa", |r| num(r.kappa)),
            ("se", |r| num(r.se)),
            ("ci_low", |r| num(r.ci_low)),
            ("ci_high", |r| num(r.ci_high)),
            ("min_kappa", |r| r.min_kappa.map_or_else(String::new, |m| m.to_string())),
            ("verdict", |r| r.verdict.clone().unwrap_or_default()),
            ("excluded_disagreements", |r| r.excluded_disagreements.to_string()),
            ("excluded_text_changed", |r| r.excluded_text_changed.to_string()),
            ("note", |r| r.note.clone().unwrap_or_default()),
        ];
        let summary = of_rows(
            "agreement",
            "Agreement with human labels (Cohen's kappa)",
            &self.rows,
            &[&head[..], &kappa[..]].concat(),
        );
        let columns =
            |rest: &[&'static str]| head.iter().map(|(header, _)| *header).chain(rest.iter().copied()).collect();
        let cells = |r: &AgreementRow| head.iter().map(|(_, cell)| cell(r)).collect::<Vec<String>>();
        let mut codes = Vec::new();
        let mut confusion = Vec::new();
        for r in &self.rows {
            for (i, code) in r.labels.iter().enumerate() {
                let mut row = cells(r);
                row.extend([code.clone(), r.support[i].to_string(), num(r.recall[i]), num(r.precision[i])]);
                codes.push(row);
                for (j, other) in r.labels.iter().enumerate() {
                    if r.confusion[i][j] > 0 {
                        let mut row = cells(r);
                        row.extend([code.clone(), other.clone(), r.confusion[i][j].to_string()]);
                        confusion.push(row);
                    }
                }
            }
        }
        vec![
            summary,
            Table {
                name: "agreement_codes",
                title: "Per-code support, recall and precision",
                columns: columns(&["code", "support", "recall", "precision"]),
                rows: codes,
            },
            Table {
                name: "agreement_confusion",
                title: "Confusion matrices (non-zero cells)",
                columns: columns(&["reference_code", "coder_code", "count"]),
                rows: confusion,
            },
        ]
    }

    /// The report as Markdown: per model, the human pairs and each machine coder's κ with its
    /// verdict, then each machine coder's confusion matrix and per-code recall.
    pub fn to_markdown(&self) -> String {
        let f3 = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
        let mut s = format!(
            "# Coder validation: agreement with human labels\n\nStore `{}`; codebook `{}` v{}; a machine coder's codes count on a model's text when, there, {}.\n\n{}\n\nHuman coders: {}.\n",
            self.store,
            self.codebook,
            self.codebook_version,
            self.gate_rule,
            self.consensus_rule,
            self.humans.iter().map(|h| format!("`{}` ({} labels)", h.coder, h.labels)).collect::<Vec<_>>().join(", ")
        );
        let mut models: Vec<&str> = self.rows.iter().map(|r| r.model.as_str()).collect();
        models.dedup();
        for model in models {
            if model == "all" {
                s.push_str("\n## All models (human coders)\n\n");
            } else {
                s.push_str(&format!("\n## Model `{model}`\n\n"));
            }
            if let Some(c) = self.consensus.iter().find(|c| c.model == model) {
                s.push_str(&format!(
                    "{} sentences labelled, {} by two or more human coders; {} with a human reference, {} where the humans disagree (left out).\n\nThe humans with each other: {}{}.\n\n",
                    c.labelled,
                    c.multiply_labelled,
                    c.with_reference,
                    c.disagreements,
                    c.humans_text(),
                    c.human_note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default()
                ));
            }
            s.push_str("| kind | reference | coder | n | p_o | kappa | 95 % interval | verdict | note |\n|---|---|---|---|---|---|---|---|---|\n");
            let rows: Vec<&AgreementRow> = self.rows.iter().filter(|r| r.model == model).collect();
            for r in &rows {
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    r.kind,
                    r.reference,
                    r.coder,
                    r.n,
                    f3(r.p_o),
                    f3(r.kappa),
                    match (r.ci_low, r.ci_high) {
                        (Some(a), Some(b)) => format!("{a:.3} to {b:.3}"),
                        _ => "-".into(),
                    },
                    r.verdict.as_deref().unwrap_or("-"),
                    r.note.as_deref().unwrap_or("").replace('|', "\\|")
                ));
            }
            for v in self.validation.iter().filter(|v| v.model == model) {
                s.push_str(&format!("\nThe gate on `{}`: {}.\n", v.coder, v.label()));
            }
            let weak: Vec<String> = rows
                .iter()
                .filter(|r| r.kind == "humans" && r.kappa.is_some_and(|k| k < self.min_human_kappa))
                .map(|r| format!("`{}` and `{}`", r.reference, r.coder))
                .collect();
            if !weak.is_empty() {
                s.push_str(&format!(
                    "\nThe human coders agree with each other below {} here ({}): the codebook's definitions, or the labelling, need attention before the reference can be trusted.\n",
                    self.min_human_kappa,
                    weak.join(", ")
                ));
            }
            for r in rows.iter().filter(|r| r.kind == "coder" && r.n > 0) {
                let used: Vec<usize> = (0..r.labels.len())
                    .filter(|i| r.support[*i] > 0 || r.confusion.iter().any(|row| row[*i] > 0))
                    .collect();
                s.push_str(&format!(
                    "\n### `{}` against the human reference\n\nRows: the human reference; columns: the coder (codes neither uses left out).\n\n| reference \\ coder | {} | recall |\n|---|{}---|\n",
                    r.coder,
                    used.iter().map(|i| r.labels[*i].as_str()).collect::<Vec<_>>().join(" | "),
                    "---|".repeat(used.len())
                ));
                for i in &used {
                    s.push_str(&format!(
                        "| {} | {} | {} |\n",
                        r.labels[*i],
                        used.iter().map(|j| r.confusion[*i][*j].to_string()).collect::<Vec<_>>().join(" | "),
                        f3(r.recall[*i])
                    ));
                }
            }
        }
        s.push_str("\n## Gate\n\n");
        for v in &self.validation {
            s.push_str(&format!("- `{}` on `{}`: {}\n", v.coder, v.model, v.label()));
        }
        s
    }
}
