//! The analysis's sections of the page: the verdicts, the deposit, the human runs, the tables,
//! the tournaments and the contamination probes.

use super::*;

/// (graded apart), each with its first unmet condition and its evidence (one item a line).
#[derive(Serialize)]
pub(super) struct VerdictRow<'a> {
    pub(super) claim: &'a str,
    pub(super) text: &'a str,
    pub(super) tier: &'a str,
    pub(super) first_unmet: &'a str,
    pub(super) evidence: String,
    pub(super) classical_tier: &'a str,
    pub(super) classical_first_unmet: &'a str,
    pub(super) classical_evidence: String,
    /// The deviations from the deposit the verdict rests on, one a line; none where it rests
    /// on none.
    pub(super) deviations: Option<String>,
}

/// The verdict table: one row per claim; a verdict that rests on a deviation from the deposit
/// is marked, the deviations on hover.
pub(super) fn verdicts(analysis: &Analysis) -> Vec<VerdictRow<'_>> {
    analysis
        .verdicts
        .iter()
        .map(|v| {
            let (classical_tier, classical_first_unmet, classical_evidence) = match &v.classical {
                Some(c) => (c.tier_name.as_str(), c.first_unmet.as_deref().unwrap_or("-"), c.evidence.join("\n")),
                None => ("-", "-", String::new()),
            };
            let deviations = analysis.deposit.deviations_of(&v.claim);
            VerdictRow {
                claim: &v.claim,
                text: &v.text,
                tier: &v.tier_name,
                first_unmet: v.first_unmet.as_deref().unwrap_or("-"),
                evidence: v.evidence.join("\n"),
                classical_tier,
                classical_first_unmet,
                classical_evidence,
                deviations: (!deviations.is_empty()).then(|| {
                    deviations.iter().map(|d| format!("{}: {}", d.kind.as_str(), d.what)).collect::<Vec<_>>().join("\n")
                }),
            }
        })
        .collect()
}

/// The deposit section: every deposit of the store, or the sentence saying there is none.
#[derive(Serialize)]
pub(super) struct DepositView<'a> {
    pub(super) deposits: Vec<DepositRow<'a>>,
    /// What the page says when the store has no deposit.
    pub(super) none: &'static str,
    /// What the deposit's time is worth.
    pub(super) self_attested: &'static str,
}

/// One deposit: its hash and self-attested time, the first run's time and every deviation.
#[derive(Serialize)]
pub(super) struct DepositRow<'a> {
    pub(super) hash: &'a str,
    pub(super) study: &'a str,
    pub(super) created: &'a str,
    pub(super) doi: &'a str,
    pub(super) first_run: &'a str,
    pub(super) runs_under: usize,
    pub(super) build: &'a str,
    pub(super) deviations: Vec<DeviationRow<'a>>,
    pub(super) fixes: &'a [String],
    pub(super) leaves_open: &'a [String],
}

#[derive(Serialize)]
pub(super) struct DeviationRow<'a> {
    pub(super) kind: &'a str,
    pub(super) what: &'a str,
    /// The claims whose verdicts rest on it, or `-`.
    pub(super) claims: String,
}

pub(super) fn deposit(section: &agora_analysis::deposit::DepositSection) -> DepositView<'_> {
    DepositView {
        none: agora_analysis::deposit::NO_DEPOSIT,
        self_attested: agora_analysis::deposit::SELF_ATTESTED,
        deposits: section
            .deposits
            .iter()
            .map(|d| DepositRow {
                hash: &d.hash,
                study: &d.study,
                created: &d.created,
                doi: d.doi.as_deref().unwrap_or("none recorded"),
                first_run: d.first_run.as_deref().unwrap_or("not recorded"),
                runs_under: d.runs_under,
                build: &d.build,
                deviations: d
                    .deviations
                    .iter()
                    .map(|x| DeviationRow {
                        kind: x.kind.as_str(),
                        what: &x.what,
                        claims: if x.claims.is_empty() { "-".to_string() } else { x.claims.join(", ") },
                    })
                    .collect(),
                fixes: &d.fixes,
                leaves_open: &d.leaves_open,
            })
            .collect(),
    }
}

/// One claim's outcome in the lab's human runs, beside each model's baseline mean.
#[derive(Serialize)]
pub(super) struct HumanRow<'a> {
    pub(super) claim: &'a str,
    pub(super) metric: &'a str,
    pub(super) n: usize,
    pub(super) mean: String,
    pub(super) interval: String,
    pub(super) excluded: usize,
    /// Each model's baseline mean and runs, or `-`.
    pub(super) models: String,
    pub(super) study: &'a str,
    /// The study's hash, shortened.
    pub(super) study_hash: &'a str,
    pub(super) date: &'a str,
}

/// The lab's participants beside the models: per claim, the outcome of the human runs (n, mean
/// and 95 % interval, runs left out for a stand-in, provenance) and each model's baseline mean.
pub(super) fn humans<'a>(
    analysis: &Analysis,
    humans: &'a [agora_analysis::human_anchors::HumanAnchor],
) -> Vec<HumanRow<'a>> {
    humans
        .iter()
        .map(|a| {
            let models: Vec<String> = analysis
                .equivalence
                .iter()
                .filter(|r| r.claim == a.claim && r.metric == a.metric)
                .map(|r| format!("{}: {} ({})", r.model, num(r.mean), r.runs))
                .collect();
            HumanRow {
                claim: &a.claim,
                metric: &a.metric,
                n: a.n,
                mean: format!("{:.3}", a.mean),
                interval: interval(Some(a.ci_low).filter(|x| x.is_finite()), Some(a.ci_high).filter(|x| x.is_finite())),
                excluded: a.excluded,
                models: if models.is_empty() { "-".to_string() } else { models.join("; ") },
                study: &a.study,
                study_hash: &a.study_hash[..a.study_hash.len().min(12)],
                date: &a.date,
            }
        })
        .collect()
}

/// A figure inline: its caption, its files' stem and its SVG.
#[derive(Serialize)]
pub(super) struct FigureView<'a> {
    pub(super) caption: &'a str,
    pub(super) stem: String,
    /// The SVG, marked safe: the report's own drawing code writes it.
    pub(super) svg: Value,
}

pub(super) fn figures<'a>(figures: &'a [(&'a str, Figure)]) -> Vec<FigureView<'a>> {
    figures
        .iter()
        .enumerate()
        .map(|(i, (caption, fig))| FigureView {
            caption,
            stem: figure_stem(i, caption),
            svg: Value::from_safe_string(fig.svg.clone()),
        })
        .collect()
}

/// An analysis table, as the analysis formats its cells.
#[derive(Serialize)]
pub(super) struct AnalysisTable<'a> {
    pub(super) title: &'a str,
    pub(super) id: &'a str,
    pub(super) columns: &'a [&'a str],
    pub(super) rows: &'a [Vec<String>],
}

/// Contamination: priming and probe contrasts, and how often the paradigm was recognised.
#[derive(Serialize)]
pub(super) struct ContaminationView<'a> {
    pub(super) contrasts: Vec<&'a ContrastRow>,
    pub(super) probes: &'a [Probes],
}

pub(super) fn contamination<'a>(contrasts: &'a [ContrastRow], probes: &'a [Probes]) -> ContaminationView<'a> {
    ContaminationView {
        contrasts: contrasts
            .iter()
            .filter(|c| c.family_of_tests == "priming" || c.family_of_tests == "contamination")
            .collect(),
        probes,
    }
}
