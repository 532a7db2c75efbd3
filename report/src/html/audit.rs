//! The transcript audit's section: occurrence, dependency, coder validation, requirement verdicts
//! and the reasoning tree.

use super::*;
use crate::audit::{Dependency, Occurrence, Requirement};

/// The transcript audit: occurrence, dependency, coder validation, requirement verdicts and
/// the reasoning tree, each absent where the store lacks its table.
#[derive(Serialize)]
pub(super) struct AuditView<'a> {
    /// None: no `audit_responses` table.
    pub(super) occurrence: Option<&'a [Occurrence]>,
    /// None: no `audit_dependency` table.
    pub(super) dependency: Option<&'a [Dependency]>,
    /// None: no `audit_agreement` table.
    pub(super) agreement: Option<Vec<AgreementView<'a>>>,
    pub(super) requirements: &'a [Requirement],
    pub(super) tree: Option<TreeView<'a>>,
}

/// One agreement row, with its per-code recall and confusion matrix.
#[derive(Serialize)]
pub(super) struct AgreementView<'a> {
    pub(super) codebook: String,
    pub(super) model: &'a str,
    pub(super) kind: &'a str,
    pub(super) reference: &'a str,
    pub(super) coder: &'a str,
    pub(super) n: i64,
    pub(super) kappa: String,
    pub(super) interval: String,
    pub(super) threshold: String,
    pub(super) verdict: &'a str,
    pub(super) note: &'a str,
    pub(super) labels: &'a [String],
    pub(super) recall: Vec<RecallRow<'a>>,
    /// Rows: the reference's code, columns: the coder's.
    pub(super) confusion: Vec<ConfusionRow<'a>>,
}

#[derive(Serialize)]
pub(super) struct RecallRow<'a> {
    pub(super) code: &'a str,
    pub(super) support: u64,
    pub(super) recall: String,
}

#[derive(Serialize)]
pub(super) struct ConfusionRow<'a> {
    pub(super) code: &'a str,
    pub(super) counts: &'a [u64],
}

/// The reasoning tree's paths: each path of codes, its action, its responses and its share.
#[derive(Serialize)]
pub(super) struct TreeView<'a> {
    pub(super) subject: &'a str,
    /// The tree figure's number on the page, if drawn.
    pub(super) figure: Option<usize>,
    pub(super) validation: &'a str,
    pub(super) paths: Vec<PathRow>,
}

#[derive(Serialize)]
pub(super) struct PathRow {
    pub(super) path: String,
    pub(super) action: String,
    pub(super) responses: usize,
    pub(super) share: String,
}

pub(super) fn audit<'a>(p: &Page<'a>) -> Option<AuditView<'a>> {
    let a = p.audit;
    if !a.any() {
        return None;
    }
    let occurrence = a.occurrence.as_deref();
    let dependency = a.dependency.as_deref();
    let agreement = a.agreement.as_ref().map(|rows| {
        rows.iter()
            .map(|r| AgreementView {
                codebook: r.codebook(),
                model: &r.stored.model,
                kind: &r.stored.kind,
                reference: &r.stored.reference,
                coder: &r.stored.coder,
                n: r.stored.n,
                kappa: num(r.stored.kappa),
                interval: interval(r.stored.ci_low, r.stored.ci_high),
                threshold: num(r.stored.min_kappa),
                verdict: r.stored.verdict.as_deref().unwrap_or("-"),
                note: r.stored.note.as_deref().unwrap_or(""),
                labels: &r.labels,
                recall: r
                    .labels
                    .iter()
                    .enumerate()
                    .map(|(i, code)| RecallRow {
                        code,
                        support: r.support.get(i).copied().unwrap_or(0),
                        recall: num(r.recall.get(i).copied().flatten()),
                    })
                    .collect(),
                confusion: r
                    .labels
                    .iter()
                    .zip(&r.confusion)
                    .map(|(code, row)| ConfusionRow { code, counts: row })
                    .collect(),
            })
            .collect()
    });
    let requirements = a.requirements.as_deref().unwrap_or_default();
    let tree = a.tree.as_ref().zip(p.tree).map(|(t, root)| {
        let n = root.n.max(1) as f64;
        TreeView {
            subject: &t.subject,
            figure: p.figures.iter().position(|(c, _)| *c == "Reasoning tree"),
            validation: &t.validation,
            paths: root
                .paths()
                .into_iter()
                .map(|(codes, action, k)| PathRow {
                    path: if codes.is_empty() { "(no coded reasoning)".to_string() } else { codes.join(" → ") },
                    action,
                    responses: k,
                    share: format!("{:.3}", k as f64 / n),
                })
                .collect(),
        }
    });
    Some(AuditView { occurrence, dependency, agreement, requirements, tree })
}
