//! What the analyses share: the run index (with the games' declarations), sample helpers and
//! the number format of the tables and the ladder's evidence.

use std::collections::{BTreeSet, HashMap};

use crate::declared::Declared;
use crate::outcomes::RunOutcome;
use crate::stats;

/// Family of the classical rosters. Classical rosters are graded in a family of their own, never
/// counted as model families, and kept out of cross-model statistics unless asked for.
pub const CLASSICAL: &str = "classical";
/// The family of rosters with people in them.
pub const HUMAN: &str = "human";

/// Runs an entry needs to be reported as a value, and a cell needs to enter sign stability or a
/// contrast: "Every table entry that would rest on fewer than three runs is shown as absent".
pub const MIN_RUNS: usize = 3;

/// The parenthesis a cross-model statistic's note ends with, naming the models it left out:
/// `kept_out` classical rosters (see [`Options`]) and `thin` models with fewer than
/// [`MIN_RUNS`] runs; empty when it left none out.
pub fn left_out_aside(kept_out: usize, thin: usize) -> String {
    let mut aside = Vec::new();
    if kept_out > 0 {
        aside.push(format!("{kept_out} classical roster(s) kept out of cross-model statistics"));
    }
    if thin > 0 {
        aside.push(format!("{thin} model(s) with fewer than {MIN_RUNS} runs absent"));
    }
    if aside.is_empty() {
        String::new()
    } else {
        format!(" ({})", aside.join("; "))
    }
}

/// The perturbation levels of the paper: S, Δmax, the perturbation family of tests and Tier 2
/// range over these only (never over presentation or contamination cells).
pub const LEVELS: [&str; 2] = ["representation", "design"];

/// Level of the profile methods' presentation checks: an opt-in family of its own, reported apart.
pub const PRESENTATION: &str = "presentation";

/// Level of the contamination probes (priming, recognition probe).
pub const CONTAMINATION: &str = "contamination";

/// The recognition probe's cell: its runs are not behavioural runs and enter no behavioural
/// family, table or grade.
pub const PROBE_CELL: &str = "recognition-probe";

/// Options of the analysis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Options {
    /// Whether classical rosters enter the cross-model statistics (I², the between-model SD,
    /// Spearman's ρ across models); off by default.
    pub classical_in_cross_model: bool,
}

/// Whether a family is the classical rosters'.
pub(crate) fn is_classical(family: &str) -> bool {
    family == CLASSICAL
}

/// The finite values of `metric` over `runs`.
pub(crate) fn values(runs: &[&RunOutcome], metric: &str) -> Vec<f64> {
    runs.iter().filter_map(|r| r.metrics.get(metric).copied()).filter(|v| v.is_finite()).collect()
}

pub(crate) fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub(crate) fn median(v: &[f64]) -> Option<f64> {
    stats::Stat::median_of(v)
}

/// A number as the tables and the evidence write it: three decimals, scientific below 1e-3,
/// `-` when absent.
pub(crate) fn fmt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| if v != 0.0 && v.abs() < 1e-3 { format!("{v:.2e}") } else { format!("{v:.3}") })
}

/// Runs of a model in an environment arm, cell and variant, with what the games declared
/// about their outcomes.
pub(crate) struct Index<'a> {
    runs: Vec<&'a RunOutcome>,
    /// The runs outside any sweep by (roster, environment, arm, cell, variant), in run order:
    /// [`Index::select`] is asked once per condition, and a scan of every run each time would
    /// make the analysis quadratic in the runs.
    conditions: HashMap<(&'a str, &'a str, &'a str, &'a str, &'a str), Vec<&'a RunOutcome>>,
    declared: &'a Declared,
}

impl<'a> Index<'a> {
    pub(crate) fn new(outcomes: &'a [RunOutcome], declared: &'a Declared) -> Index<'a> {
        let mut conditions: HashMap<_, Vec<&'a RunOutcome>> = HashMap::new();
        for r in outcomes.iter().filter(|r| r.sweep.is_none() && r.point.is_none()) {
            let key = (r.roster.as_str(), r.environment.as_str(), r.arm.as_str(), r.cell.as_str(), r.variant.as_str());
            conditions.entry(key).or_default().push(r);
        }
        Index { runs: outcomes.iter().collect(), conditions, declared }
    }

    /// What the games declared.
    pub(crate) fn declared(&self) -> &'a Declared {
        self.declared
    }

    /// The headline (environment, arm, metric) outcomes the games declare, in registry order:
    /// the outcomes of the audit grid, heterogeneity, the baselines and the recognition table
    /// (public goods: rounds 1 and 10, as the instrument paper has it).
    pub(crate) fn headline(&self) -> Vec<(&'a str, &'a str, &'a str)> {
        self.declared.headline()
    }

    /// Runs of the model in the arm, cell and variant, outside any sweep (a sweep's points are
    /// conditions of their own, never the canonical baseline or a perturbation of it).
    pub(crate) fn select(&self, model: &str, env: &str, arm: &str, cell: &str, variant: &str) -> Vec<&'a RunOutcome> {
        self.conditions.get(&(model, env, arm, cell, variant)).cloned().unwrap_or_default()
    }

    /// Every (roster, family), in order; rosters with people in them (family `human`, played
    /// with `agora serve`) are the lab's human sample, graded against, never graded.
    pub(crate) fn models(&self) -> Vec<(String, String)> {
        let mut m: BTreeSet<(String, String)> = BTreeSet::new();
        for r in self.runs.iter().filter(|r| r.family != HUMAN) {
            m.insert((r.roster.clone(), r.family.clone()));
        }
        m.into_iter().collect()
    }

    /// The (cell, level) pairs of one level run by the model in the arm under C0.
    pub(crate) fn cells_at(&self, model: &str, env: &str, arm: &str, level: &str) -> Vec<String> {
        self.cells(model, env, arm).into_iter().filter(|(_, l)| l == level).map(|(c, _)| c).collect()
    }

    /// Every run of the store (in run-key order).
    pub(crate) fn all(&self) -> &[&'a RunOutcome] {
        &self.runs
    }

    /// The (cell, level) pairs other than the baseline run by the model in the arm under C0.
    pub(crate) fn cells(&self, model: &str, env: &str, arm: &str) -> Vec<(String, String)> {
        let mut c: BTreeSet<(String, String)> = BTreeSet::new();
        for r in &self.runs {
            if r.roster == model && r.environment == env && r.arm == arm && r.cell != "baseline" && r.variant == "C0" {
                c.insert((r.cell.clone(), r.level.clone()));
            }
        }
        c.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_point_is_never_selected_as_its_cell() {
        use crate::test_support::{run, Place};
        let mut out = Vec::new();
        let at = Place::base("m", "f", "prisoners-dilemma", "baseline");
        run(&mut out, at, &[("cooperation", 1.0)]);
        let i = run(&mut out, at, &[("cooperation", 0.0)]);
        out[i].point = Some("rounds=5".into());
        let declared = crate::declared::tests::shipped();
        let idx = Index::new(&out, declared);
        let runs = idx.select("m", "prisoners-dilemma", "baseline", "baseline", "C0");
        assert_eq!(runs.len(), 1);
        assert!(runs[0].point.is_none());
    }

    #[test]
    fn fmt_writes_three_decimals_scientific_below_a_thousandth_and_a_dash_when_absent() {
        assert_eq!(fmt(Some(0.5)), "0.500");
        assert_eq!(fmt(Some(0.0)), "0.000");
        assert_eq!(fmt(Some(-0.00042)), "-4.20e-4");
        assert_eq!(fmt(Some(f64::NAN)), "NaN");
        assert_eq!(fmt(None), "-");
    }
}
