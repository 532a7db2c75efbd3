//! The audit grid: every cell against its baseline, per model and primary outcome, and the
//! punishment arm against the baseline arm; exact Mann–Whitney with Cliff's δ, Holm within
//! each family of tests (perturbation, priming, contamination, punishment).

use serde::Serialize;

use crate::common::{mean, values, Index, PRIMARY};
use crate::stats;

/// Runs an arm needs for a contrast to enter its family.
pub const MIN_RUNS: usize = 3;

/// The families of tests, each Holm-adjusted on its own.
const FAMILIES: [&str; 4] = ["perturbation", "priming", "contamination", "punishment"];

/// One contrast of the audit grid: a cell's runs against the baseline's, for one model and primary outcome.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContrastRow {
    /// Family the contrast is Holm-adjusted within: perturbation, priming, contamination or punishment.
    pub family_of_tests: String,
    /// The model (roster) whose runs are contrasted.
    pub model: String,
    /// Environment of the outcome.
    pub environment: String,
    /// Arm of the environment (the punishment arm for the arm contrast).
    pub arm: String,
    /// Metric of the outcome.
    pub metric: String,
    /// The cell contrasted with the baseline (`punishment-arm` for the arm contrast).
    pub cell: String,
    /// Level of the cell (`design` for the arm contrast).
    pub level: String,
    /// Runs of the cell with the metric.
    pub n_cell: usize,
    /// Runs of the baseline with the metric.
    pub n_base: usize,
    /// Mean of the metric over the cell's runs.
    pub mean_cell: Option<f64>,
    /// Mean of the metric over the baseline's runs.
    pub mean_base: Option<f64>,
    /// Difference of the means, cell minus baseline.
    pub delta: Option<f64>,
    /// Cliff's δ of the cell's runs against the baseline's.
    pub cliffs_delta: Option<f64>,
    /// Exact two-sided Mann–Whitney p value (doubling convention); none when excluded.
    pub p: Option<f64>,
    /// Exact Mann–Whitney p value under the |U − n₁n₂/2| convention; none when excluded.
    pub p_abs: Option<f64>,
    /// Holm-adjusted p value within the contrast's family; none when excluded.
    pub p_holm: Option<f64>,
    /// Whether the Holm-adjusted p value is below 0.05.
    pub significant: bool,
    /// Why the contrast carries no evidence, if it does not.
    pub excluded: Option<String>,
}

/// Every contrast, Holm-adjusted within its family.
pub(crate) fn contrasts(idx: &Index, models: &[(String, String)]) -> Vec<ContrastRow> {
    let mut contrasts = Vec::new();
    for (env, arm, metric) in PRIMARY {
        for (model, _) in models {
            let base = idx.select(model, env, arm, "baseline", "C0");
            let bv = values(&base, metric);
            if bv.is_empty() {
                continue;
            }
            for (cell, level) in idx.cells(model, env, arm) {
                let cv = values(&idx.select(model, env, arm, &cell, "C0"), metric);
                let family = match (cell.as_str(), level.as_str()) {
                    ("priming", _) => "priming",
                    (_, "contamination") => "contamination",
                    _ => "perturbation",
                };
                contrasts.push(contrast(family, model, env, arm, metric, &cell, &level, &cv, &bv));
            }
        }
    }
    // Punishment: the punishment arm against the baseline arm, final-round contributions.
    for (model, _) in models {
        let b = values(&idx.select(model, "public-goods", "baseline", "baseline", "C0"), "contribution_last");
        let p = values(&idx.select(model, "public-goods", "punishment", "baseline", "C0"), "contribution_last");
        if !b.is_empty() && !p.is_empty() {
            contrasts.push(contrast(
                "punishment",
                model,
                "public-goods",
                "punishment",
                "contribution_last",
                "punishment-arm",
                "design",
                &p,
                &b,
            ));
        }
    }
    holm_within_families(&mut contrasts);
    contrasts
}

/// Holm-adjusts the p values of each family's contrasts that are not excluded, and marks those
/// significant at 0.05.
fn holm_within_families(contrasts: &mut [ContrastRow]) {
    for family in FAMILIES {
        let members: Vec<usize> = contrasts
            .iter()
            .enumerate()
            .filter(|(_, c)| c.family_of_tests == family && c.excluded.is_none())
            .map(|(i, _)| i)
            .collect();
        let ps: Vec<f64> = members.iter().filter_map(|i| contrasts[*i].p).collect();
        if let Ok(adj) = stats::holm(&ps) {
            for (i, a) in members.iter().zip(adj) {
                contrasts[*i].p_holm = Some(a);
                contrasts[*i].significant = a < 0.05;
            }
        }
    }
}

/// One contrast of a cell's values `cv` against the baseline's `bv`.
#[expect(clippy::too_many_arguments, reason = "one argument per column of the contrast row")]
fn contrast(
    family: &str,
    model: &str,
    env: &str,
    arm: &str,
    metric: &str,
    cell: &str,
    level: &str,
    cv: &[f64],
    bv: &[f64],
) -> ContrastRow {
    let pooled_constant = cv.iter().chain(bv).all(|x| *x == bv.first().copied().unwrap_or(0.0));
    let excluded = if cv.len() < MIN_RUNS || bv.len() < MIN_RUNS {
        Some(format!("fewer than {MIN_RUNS} runs in an arm ({} vs {})", cv.len(), bv.len()))
    } else if pooled_constant {
        Some("pooled values are constant".into())
    } else {
        None
    };
    let mw = if cv.is_empty() || bv.is_empty() { None } else { stats::mann_whitney(cv, bv).ok() };
    ContrastRow {
        family_of_tests: family.into(),
        model: model.into(),
        environment: env.into(),
        arm: arm.into(),
        metric: metric.into(),
        cell: cell.into(),
        level: level.into(),
        n_cell: cv.len(),
        n_base: bv.len(),
        mean_cell: mean(cv),
        mean_base: mean(bv),
        delta: mean(cv).zip(mean(bv)).map(|(a, b)| a - b),
        cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
        p: if excluded.is_none() { mw.as_ref().map(|m| m.p_two_sided) } else { None },
        p_abs: if excluded.is_none() { mw.as_ref().map(|m| m.p_abs) } else { None },
        p_holm: None,
        significant: false,
        excluded,
    }
}
