//! Naming game: convention formation per model, block and variant, with the Wilson 95 %
//! interval of the share of runs forming one, and the quartiles of the time to convention.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::common::values;
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
    /// Wilson 95 % interval of the share of runs forming a convention.
    pub share_low: f64,
    /// Upper end of the Wilson 95 % interval of the share of runs forming a convention.
    pub share_high: f64,
    /// Quartiles of the time to convention (interactions) over runs that formed one.
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
        let (lo, hi) = stats::wilson(formed as u64, runs.len() as u64, 0.05).unwrap_or((f64::NAN, f64::NAN));
        let times = values(&runs, "convention_time");
        let q = |x: f64| stats::percentile_type7(&times, x).ok();
        convergence.push(ConvergenceRow {
            model,
            block,
            variant,
            runs: runs.len(),
            formed,
            share_low: lo,
            share_high: hi,
            time_q1: q(25.0),
            time_median: q(50.0),
            time_q3: q(75.0),
        });
    }
    convergence
}
