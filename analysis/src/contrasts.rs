//! The audit grid: every contrast of a model's runs with its canonical baseline, per primary
//! outcome; exact Mann–Whitney with Cliff's δ, Holm within each family of tests.
//!
//! The paper: "Within each family of tests — perturbation, priming, punishment, contamination —
//! p-values are adjusted by the Holm step-down procedure, and a contrast is called significant
//! when the adjusted value is below 0.05." A family is one kind of test within one block, one
//! model × one environment: "at least one perturbation moves behaviour significantly in 23 of 27
//! model-by-environment blocks". That is the only partition that gives the paper's printed
//! adjusted values their family sizes — Llama-3.1's naming-game persona contrast, 2.4×10⁻⁹, is
//! its raw p (a family of one); Qwen3-14B's swapped action order in the dilemma, 2.8×10⁻⁸, is 12
//! times its raw p; Phi-3's persona table in the naming game, 4.7×10⁻⁶, is 7 times its raw p.
//!
//! The families, per model and environment:
//! - `perturbation`: each representation- or design-level cell against the baseline;
//! - `priming`: the priming cell (a contamination-level cell that names the paradigm inside
//!   the behavioural prompt) against the baseline;
//! - `punishment`: the punishment arm against the arm without punishment (final-round
//!   contributions);
//! - `contamination`: the re-skinned versions C1 and C2 against C0, at the baseline cell.
//!
//! The paper does not fix how priming, punishment and contamination are partitioned, nor
//! whether public goods' rounds 1 and 10 share a family: Agora reads them as it reads the
//! perturbation family, one model × one environment, so rounds 1 and 10 share their block's
//! family. That is a choice, not a reproduction.
//!
//! The presentation checks of the behavioural profile's methods (level `presentation`) form an
//! opt-in family of their own, `presentation`, Holm-adjusted apart (per block too) and reported
//! apart. The recognition probe's runs are not behavioural runs and enter no family. Classical
//! rosters are rosters of their own, so their blocks never mix with a model's. A contrast in
//! which either arm holds fewer than three runs, or whose pooled values are constant, carries no
//! evidence and is excluded from its family; with fewer than three runs its means and effect
//! size are absent too.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::common::{is_classical, mean, values, Index, CONTAMINATION, LEVELS, PRESENTATION, PROBE_CELL};
use crate::stats;

pub use crate::common::MIN_RUNS;

/// The families of tests, each Holm-adjusted on its own within each block (model × environment).
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
    for (env, arm, metric) in idx.headline() {
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

/// Holm-adjusts the p values of the contrasts that are not excluded within each family of tests
/// of each block (one model × one environment), and marks those significant at 0.05.
fn holm_within_families(contrasts: &mut [ContrastRow]) {
    let mut families: BTreeMap<(&str, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, c) in contrasts.iter().enumerate() {
        if c.excluded.is_none() && c.p.is_some() {
            families.entry((c.family_of_tests.as_str(), c.model.as_str(), c.environment.as_str())).or_default().push(i);
        }
    }
    let families: Vec<Vec<usize>> = families.into_values().collect();
    for members in families {
        let ps: Vec<f64> = members.iter().filter_map(|i| contrasts[*i].p).collect();
        if let Ok(adj) = stats::holm(&ps) {
            for (i, a) in members.iter().zip(adj) {
                contrasts[*i].p_holm = Some(a);
                contrasts[*i].significant = a < 0.05;
            }
        }
    }
}

/// The audit grid's counts, as the paper reports them: the blocks (model × environment) in which
/// at least one perturbation moves behaviour significantly, and per level the computable
/// contrasts that are significant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ContrastCount {
    /// `blocks` (model-by-environment blocks with a significant perturbation), or a level
    /// (`design`, `representation`) whose computable contrasts are counted.
    pub what: String,
    /// Whether the rosters counted are the models or the classical rosters.
    pub rosters: String,
    /// Blocks with a significant perturbation, or significant contrasts.
    pub significant: usize,
    /// Blocks with at least one computable perturbation contrast, or computable contrasts.
    pub of: usize,
}

/// The counts of the perturbation family: "at least one perturbation moves behaviour
/// significantly in k of N model-by-environment blocks", and "design-level cells move behaviour
/// in k of N computable contrasts", the representation level likewise.
pub(crate) fn counts(contrasts: &[ContrastRow]) -> Vec<ContrastCount> {
    let mut out = Vec::new();
    for classical in [false, true] {
        let rosters = if classical { "classical rosters" } else { "models" };
        let mine: Vec<&ContrastRow> = contrasts
            .iter()
            .filter(|c| c.family_of_tests == "perturbation" && c.p_holm.is_some())
            .filter(|c| is_classical(&c.model_family) == classical)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut blocks: BTreeMap<(&str, &str), bool> = BTreeMap::new();
        for c in &mine {
            *blocks.entry((c.model.as_str(), c.environment.as_str())).or_default() |= c.significant;
        }
        out.push(ContrastCount {
            what: "blocks".into(),
            rosters: rosters.into(),
            significant: blocks.values().filter(|s| **s).count(),
            of: blocks.len(),
        });
        for level in ["design", "representation"] {
            let at: Vec<&&ContrastRow> = mine.iter().filter(|c| c.level == level).collect();
            out.push(ContrastCount {
                what: level.into(),
                rosters: rosters.into(),
                significant: at.iter().filter(|c| c.significant).count(),
                of: at.len(),
            });
        }
    }
    out
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
        let idx = Index::new(out, crate::declared::tests::shipped());
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
        assert!(g.iter().all(|c| c.p_holm == c.p), "one test per block: {g:?}");
    }

    /// Ten runs of `x` against thirty of `y`: the paper's cell against its baseline.
    fn cell_vs_base(out: &mut Vec<crate::RunOutcome>, at: Place, cell: &str, metric: &str, x: f64, base: &[f64]) {
        runs(out, Place { cell, level: "design", ..at }, metric, &[x; 10]);
        if !out.iter().any(|o| o.roster == at.roster && o.environment == at.environment && o.cell == "baseline") {
            runs(out, at, metric, base);
        }
    }

    #[test]
    fn a_family_is_one_model_by_one_environment_as_the_papers_printed_values_need() {
        let mut out = Vec::new();
        // Llama-3.1's naming block: one contrast, 10 conventions against 30 failures: its Holm
        // value is its raw p, 2.4e-9 (a family of one).
        let llama = Place::new("llama", "llama", "naming-game", "baseline", "baseline", "baseline", "C0");
        cell_vs_base(&mut out, llama, "persona-self-interested", "convention", 1.0, &[0.0; 30]);
        // The same model's dilemma block: twelve contrasts, one of them complete separation.
        let base: Vec<f64> = (0..30).map(|i| 0.6 + f64::from(i % 5) * 0.1).collect();
        let pd_llama = Place::new("llama", "llama", "prisoners-dilemma", "baseline", "baseline", "baseline", "C0");
        cell_vs_base(&mut out, pd_llama, "action-order", "cooperation", 0.0, &base);
        for k in 0..11 {
            let cell: &'static str = Box::leak(format!("cell-{k}").into_boxed_str());
            let v: Vec<f64> = (0..10).map(|i| 0.6 + f64::from((i + k) % 5) * 0.1).collect();
            runs(&mut out, Place { cell, level: "design", ..pd_llama }, "cooperation", &v);
        }
        let g = grid(&out);
        let row = |env: &str, cell: &str| g.iter().find(|c| c.environment == env && c.cell == cell).expect("row");
        let naming = row("naming-game", "persona-self-interested");
        assert_eq!(naming.p_holm, naming.p, "a family of one");
        assert!((naming.p.expect("p") - 2.0 / 847_660_528.0).abs() < 1e-20, "{:?}", naming.p);
        assert_eq!(format!("{:.1e}", naming.p_holm.expect("holm")), "2.4e-9");
        let swap = row("prisoners-dilemma", "action-order");
        assert_eq!(g.iter().filter(|c| c.environment == "prisoners-dilemma" && c.p.is_some()).count(), 12);
        let (p, holm) = (swap.p.expect("p"), swap.p_holm.expect("holm"));
        assert!((holm - 12.0 * p).abs() < 1e-20, "smallest of twelve: twelve times its raw p ({p} -> {holm})");
        assert_eq!(format!("{:.1e}", swap.p_holm.expect("holm")), "2.8e-8");
        let counts = counts(&g);
        let blocks = counts.iter().find(|c| c.what == "blocks").expect("blocks");
        assert_eq!((blocks.significant, blocks.of), (2, 2));
        let design = counts.iter().find(|c| c.what == "design").expect("design");
        assert_eq!((design.significant, design.of), (2, 13));
    }
}
