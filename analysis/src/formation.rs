//! Naming game: convention formation per model, block and variant, with the Wilson 95 %
//! interval of the share of runs forming one, and the quartiles of the time to convention.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::common::{values, MIN_RUNS};
use crate::outcomes::RunOutcome;
use crate::stats;

/// Convention formation of one model in one naming-game block under one variant.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ConvergenceRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// The study block the runs belong to.
    pub block: String,
    /// Payoff variant (C0–C3) of the runs.
    pub variant: String,
    /// Baseline naming-game runs of the model in the block and variant.
    pub runs: usize,
    /// Runs in which a convention formed.
    pub formed: usize,
    /// Lower end of the Wilson 95 % interval of the share of runs forming a convention;
    /// absent below three runs.
    pub share_low: Option<f64>,
    /// Upper end of the Wilson 95 % interval of the share of runs forming a convention;
    /// absent below three runs.
    pub share_high: Option<f64>,
    /// First quartile of the time to convention (interactions) over runs that formed one;
    /// absent below three runs.
    pub time_q1: Option<f64>,
    /// Median time to convention (interactions) over runs that formed one.
    pub time_median: Option<f64>,
    /// Third quartile of the time to convention (interactions) over runs that formed one.
    pub time_q3: Option<f64>,
}

/// One row per (roster, block, variant) with baseline naming-game runs that record a
/// convention outcome.
pub(crate) fn convergence(outcomes: &[RunOutcome]) -> Vec<ConvergenceRow> {
    let mut convergence = Vec::new();
    let mut blocks: BTreeSet<(String, String, String)> = BTreeSet::new();
    for r in outcomes
        .iter()
        .filter(|r| r.environment == "naming-game" && r.cell == "baseline" && r.metrics.contains_key("convention"))
    {
        blocks.insert((r.roster.clone(), r.block.clone(), r.variant.clone()));
    }
    for (model, block, variant) in blocks {
        let runs: Vec<&RunOutcome> = outcomes
            .iter()
            .filter(|r| r.roster == model && r.block == block && r.variant == variant && r.cell == "baseline")
            .collect();
        let formed = values(&runs, "convention").iter().filter(|v| **v > 0.5).count();
        let enough = runs.len() >= MIN_RUNS;
        let interval = if enough { stats::wilson(formed as u64, runs.len() as u64, 0.05).ok() } else { None };
        let times = values(&runs, "convention_time");
        let q = |x: f64| if enough { stats::percentile_type7(&times, x).ok() } else { None };
        convergence.push(ConvergenceRow {
            model,
            block,
            variant,
            runs: runs.len(),
            formed,
            share_low: interval.map(|i| i.0),
            share_high: interval.map(|i| i.1),
            time_q1: q(25.0),
            time_median: q(50.0),
            time_q3: q(75.0),
        });
    }
    convergence
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, Place};

    #[test]
    fn fewer_than_three_runs_give_no_interval_and_no_times() {
        let mut out = Vec::new();
        let at = |m| Place::base(m, "f", "naming-game", "baseline");
        for _ in 0..2 {
            run(&mut out, at("thin"), &[("convention", 1.0), ("convention_time", 50.0)]);
        }
        for _ in 0..3 {
            run(&mut out, at("full"), &[("convention", 1.0), ("convention_time", 50.0)]);
        }
        let rows = convergence(&out);
        let got: Vec<(&str, usize, bool, Option<f64>)> =
            rows.iter().map(|r| (r.model.as_str(), r.formed, r.share_low.is_some(), r.time_median)).collect();
        assert_eq!(got, [("full", 3, true, Some(50.0)), ("thin", 2, false, None)]);
    }
}
