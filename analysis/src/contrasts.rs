//! The audit grid: every contrast of a model's runs with its canonical baseline, per primary
//! outcome; exact Mann–Whitney with Cliff's δ, Holm within each family of tests.
//!
//! The families, as the paper names them:
//! - `perturbation`: each representation- or design-level cell against the baseline;
//! - `priming`: the priming cell (a contamination-level cell that names the paradigm inside
//!   the behavioural prompt) against the baseline;
//! - `punishment`: the punishment arm against the arm without punishment (final-round
//!   contributions);
//! - `contamination`: the re-skinned versions C1 and C2 against C0, per environment and model,
//!   at the baseline cell.
//!
//! Seed 000's presentation checks (level `presentation`) form an opt-in family of their own,
//! `presentation`, Holm-adjusted apart and reported apart. The recognition probe's runs are not
//! behavioural runs and enter no family. Classical rosters are Holm-adjusted apart from the
//! models within each family (they are not models, and the adjustment is across models).
//! A contrast in which either arm holds fewer than three runs, or whose pooled values are
//! constant, carries no evidence and is excluded from its family; with fewer than three runs
//! its means and effect size are absent too.

use serde::Serialize;

use crate::common::{is_classical, mean, values, Index, CONTAMINATION, LEVELS, PRESENTATION, PRIMARY, PROBE_CELL};
use crate::stats;

pub use crate::common::MIN_RUNS;

/// The families of tests, each Holm-adjusted on its own (the models apart from the classical
/// rosters).
pub const FAMILIES: [&str; 5] = ["perturbation", "priming", "punishment", "contamination", "presentation"];

/// One contrast of the audit grid: a cell's runs against the baseline's, for one model and primary outcome.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContrastRow {
    /// Family the contrast is Holm-adjusted within: perturbation, priming, punishment,
    /// contamination or presentation.
    pub family_of_tests: String,
    /// The model (roster) whose runs are contrasted.
    pub model: String,
    /// Family of the model (`classical` for a classical roster, adjusted apart).
    pub model_family: String,
    /// Environment of the outcome.
    pub environment: String,
    /// Arm of the environment (the punishment arm for the arm contrast).
    pub arm: String,
    /// Metric of the outcome.
    pub metric: String,
    /// The cell contrasted with the baseline (`punishment-arm` for the arm contrast,
    /// `re-skin C1` and `re-skin C2` for the contamination contrasts).
    pub cell: String,
    /// Level of the cell (`design` for the arm contrast, `contamination` for the re-skins).
    pub level: String,
    /// Payoff version of the contrasted runs (C1 or C2 for a re-skin, C0 otherwise).
    pub variant: String,
    /// Runs of the cell with the metric.
    pub n_cell: usize,
    /// Runs of the baseline with the metric.
    pub n_base: usize,
    /// Mean of the metric over the cell's runs; absent below three runs in an arm.
    pub mean_cell: Option<f64>,
    /// Mean of the metric over the baseline's runs; absent below three runs in an arm.
    pub mean_base: Option<f64>,
    /// Difference of the means, cell minus baseline; absent below three runs in an arm.
    pub delta: Option<f64>,
    /// Cliff's δ of the cell's runs against the baseline's; absent below three runs in an arm.
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

/// The priming cell: the paradigm named inside the behavioural prompt.
pub const PRIMING_CELL: &str = "priming";

/// The family of tests of a cell contrast at `level`: `priming` for the priming cell (and any
/// other contamination-level cell, which names the paradigm inside the behavioural session);
/// `None` for the recognition probe (not a behavioural run) and for a level outside the paper's.
fn family_of(cell: &str, level: &str) -> Option<&'static str> {
    if cell == PROBE_CELL {
        return None;
    }
    if cell == PRIMING_CELL {
        return Some("priming");
    }
    match level {
        l if LEVELS.contains(&l) => Some("perturbation"),
        PRESENTATION => Some("presentation"),
        CONTAMINATION => Some("priming"),
        _ => None,
    }
}

/// Every contrast, Holm-adjusted within its family (the presentation family included; the
/// caller reports it apart).
pub(crate) fn contrasts(idx: &Index, models: &[(String, String)]) -> Vec<ContrastRow> {
    let mut contrasts = Vec::new();
    for (env, arm, metric) in PRIMARY {
        for (model, family) in models {
            let bv = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if bv.is_empty() {
                continue;
            }
            let at = Arm { family_of_tests: "", model, model_family: family, env, arm, metric };
            for (cell, level) in idx.cells(model, env, arm) {
                let Some(family_of_tests) = family_of(&cell, &level) else { continue };
                let cv = values(&idx.select(model, env, arm, &cell, "C0"), metric);
                contrasts.push(contrast(&Arm { family_of_tests, ..at }, &cell, &level, "C0", &cv, &bv));
            }
            // Contamination: the re-skinned versions against the canonical one, baseline cell.
            for variant in ["C1", "C2"] {
                let cv = values(&idx.select(model, env, arm, "baseline", variant), metric);
                if !cv.is_empty() {
                    let cell = format!("re-skin {variant}");
                    let a = Arm { family_of_tests: "contamination", ..at };
                    contrasts.push(contrast(&a, &cell, CONTAMINATION, variant, &cv, &bv));
                }
            }
        }
    }
    // Punishment: the punishment arm against the baseline arm, final-round contributions.
    for (model, family) in models {
        let b = values(&idx.select(model, "public-goods", "baseline", "baseline", "C0"), "contribution_last");
        let p = values(&idx.select(model, "public-goods", "punishment", "baseline", "C0"), "contribution_last");
        if !b.is_empty() && !p.is_empty() {
            let at = Arm {
                family_of_tests: "punishment",
                model,
                model_family: family,
                env: "public-goods",
                arm: "punishment",
                metric: "contribution_last",
            };
            contrasts.push(contrast(&at, "punishment-arm", "design", "C0", &p, &b));
        }
    }
    holm_within_families(&mut contrasts);
    contrasts
}

/// Holm-adjusts the p values of each family's contrasts that are not excluded, the models
/// apart from the classical rosters, and marks those significant at 0.05.
fn holm_within_families(contrasts: &mut [ContrastRow]) {
    for family in FAMILIES {
        for classical in [false, true] {
            let members: Vec<usize> = contrasts
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.family_of_tests == family && c.excluded.is_none() && is_classical(&c.model_family) == classical
                })
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
}

/// What identifies the outcome contrasted.
#[derive(Clone, Copy)]
struct Arm<'a> {
    family_of_tests: &'a str,
    model: &'a str,
    model_family: &'a str,
    env: &'a str,
    arm: &'a str,
    metric: &'a str,
}

/// One contrast of a cell's values `cv` against the baseline's `bv`.
fn contrast(at: &Arm, cell: &str, level: &str, variant: &str, cv: &[f64], bv: &[f64]) -> ContrastRow {
    let thin = cv.len() < MIN_RUNS || bv.len() < MIN_RUNS;
    let pooled_constant = cv.iter().chain(bv).all(|x| *x == bv.first().copied().unwrap_or(0.0));
    let excluded = if thin {
        Some(format!("fewer than {MIN_RUNS} runs in an arm ({} vs {})", cv.len(), bv.len()))
    } else if pooled_constant {
        Some("pooled values are constant".into())
    } else {
        None
    };
    let mw = if thin { None } else { stats::mann_whitney(cv, bv).ok() };
    let (mc, mb) = if thin { (None, None) } else { (mean(cv), mean(bv)) };
    ContrastRow {
        family_of_tests: at.family_of_tests.into(),
        model: at.model.into(),
        model_family: at.model_family.into(),
        environment: at.env.into(),
        arm: at.arm.into(),
        metric: at.metric.into(),
        cell: cell.into(),
        level: level.into(),
        variant: variant.into(),
        n_cell: cv.len(),
        n_base: bv.len(),
        mean_cell: mc,
        mean_base: mb,
        delta: mc.zip(mb).map(|(a, b)| a - b),
        cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
        p: if excluded.is_none() { mw.as_ref().map(|m| m.p_two_sided) } else { None },
        p_abs: if excluded.is_none() { mw.as_ref().map(|m| m.p_abs) } else { None },
        p_holm: None,
        significant: false,
        excluded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{runs, Place};

    fn pd<'a>(model: &'a str, family: &'a str, cell: &'a str, level: &'a str, variant: &'a str) -> Place<'a> {
        Place::new(model, family, "prisoners-dilemma", "baseline", cell, level, variant)
    }

    fn grid(out: &[crate::RunOutcome]) -> Vec<ContrastRow> {
        let idx = Index::new(out);
        contrasts(&idx, &idx.models())
    }

    #[test]
    fn each_cell_goes_to_its_family_and_the_probe_to_none() {
        let mut out = Vec::new();
        let base = [0.1, 0.2, 0.3, 0.4];
        let high = [0.8, 0.85, 0.9, 0.95];
        runs(&mut out, pd("m", "f", "baseline", "baseline", "C0"), "cooperation", &base);
        for (cell, level) in [
            ("persona-table", "representation"),
            ("step-by-step", "design"),
            ("priming", "contamination"),
            ("recognition-probe", "contamination"),
            ("layout-inline", "presentation"),
        ] {
            runs(&mut out, pd("m", "f", cell, level, "C0"), "cooperation", &high);
        }
        runs(&mut out, pd("m", "f", "baseline", "baseline", "C1"), "cooperation", &high);
        runs(&mut out, pd("m", "f", "baseline", "baseline", "C2"), "cooperation", &base);
        let g = grid(&out);
        let got: Vec<(&str, &str, &str)> =
            g.iter().map(|c| (c.family_of_tests.as_str(), c.cell.as_str(), c.variant.as_str())).collect();
        assert_eq!(
            got,
            [
                ("presentation", "layout-inline", "C0"),
                ("perturbation", "persona-table", "C0"),
                ("priming", "priming", "C0"),
                ("perturbation", "step-by-step", "C0"),
                ("contamination", "re-skin C1", "C1"),
                ("contamination", "re-skin C2", "C2"),
            ]
        );
        // Holm within each family: the perturbation family holds two tests, the others one.
        let p = |cell: &str| g.iter().find(|c| c.cell == cell).and_then(|c| c.p).expect("p");
        let holm = |cell: &str| g.iter().find(|c| c.cell == cell).and_then(|c| c.p_holm).expect("p_holm");
        assert_eq!(holm("priming"), p("priming"));
        assert_eq!(holm("layout-inline"), p("layout-inline"), "presentation is its own family");
        assert_eq!(holm("persona-table"), (2.0 * p("persona-table")).min(1.0));
    }

    #[test]
    fn a_contrast_on_fewer_than_three_runs_is_absent_in_every_column() {
        let mut out = Vec::new();
        runs(&mut out, pd("m", "f", "baseline", "baseline", "C0"), "cooperation", &[0.1, 0.2, 0.3]);
        runs(&mut out, pd("m", "f", "rep-1", "representation", "C0"), "cooperation", &[0.9, 0.8]);
        let g = grid(&out);
        assert_eq!(g.len(), 1);
        let c = &g[0];
        assert_eq!((c.n_cell, c.n_base), (2, 3));
        assert_eq!(
            (c.mean_cell, c.mean_base, c.delta, c.cliffs_delta, c.p, c.p_holm),
            (None, None, None, None, None, None)
        );
        assert_eq!(c.excluded.as_deref(), Some("fewer than 3 runs in an arm (2 vs 3)"));
    }

    #[test]
    fn classical_rosters_are_adjusted_apart_from_the_models() {
        let mut out = Vec::new();
        for (m, f) in [("m", "f"), ("c", "classical")] {
            runs(&mut out, pd(m, f, "baseline", "baseline", "C0"), "cooperation", &[0.1, 0.2, 0.3, 0.4]);
            runs(&mut out, pd(m, f, "rep-1", "representation", "C0"), "cooperation", &[0.6, 0.7, 0.8, 0.9]);
        }
        let g = grid(&out);
        assert_eq!(g.len(), 2);
        assert!(g.iter().all(|c| c.p_holm == c.p), "one test per (family, classical) group: {g:?}");
    }
}
