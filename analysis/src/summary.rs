//! Per-condition summaries of run-level outcomes, and tipping curves.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::AnalysisError;
use crate::outcomes::{run_outcomes, RunOutcome};

/// Mean, median and count of one metric over the runs of a condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    /// Mean of the metric.
    pub mean: f64,
    /// Median of the metric.
    pub median: f64,
    /// Number of runs with a finite value of the metric.
    pub n: usize,
}

impl Stat {
    /// The median of `values` (mean of the middle two for an even count).
    pub fn median_of(values: &[f64]) -> Option<f64> {
        Stat::of(values).map(|s| s.median)
    }

    /// Mean, median and count of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Stat { mean: v.iter().sum::<f64>() / n as f64, median, n })
    }
}

/// What identifies a condition: everything but the run index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Condition {
    /// Block of the study.
    pub block: String,
    /// Environment played.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Payoff variant (C0–C3).
    pub variant: String,
    /// Cell of the perturbation library, or `baseline`.
    pub cell: String,
    /// Roster that played.
    pub roster: String,
    /// Swept value in millionths (ordered), if any.
    pub sweep_micros: Option<i64>,
}

impl Condition {
    fn of(o: &RunOutcome) -> Condition {
        Condition {
            block: o.block.clone(),
            environment: o.environment.clone(),
            arm: o.arm.clone(),
            variant: o.variant.clone(),
            cell: o.cell.clone(),
            roster: o.roster.clone(),
            sweep_micros: o.sweep.map(|x| (x * 1e6).round() as i64),
        }
    }

    /// The swept value, if any.
    pub fn sweep(&self) -> Option<f64> {
        self.sweep_micros.map(|m| m as f64 / 1e6)
    }
}

/// One condition's runs summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSummary {
    /// The condition summarised.
    pub condition: Condition,
    /// Number of runs in the condition.
    pub runs: usize,
    /// Each metric summarised over the runs with a finite value of it.
    pub metrics: BTreeMap<String, Stat>,
    /// Committed agents in the condition's runs (tipping arm).
    pub committed: i64,
    /// Agents in the condition's runs.
    pub population: i64,
}

/// A tipping sweep for one roster: share of runs in which the alternative took over, per
/// committed fraction, and the critical mass the sweep brackets.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TippingCurve {
    /// Block of the study holding the sweep.
    pub block: String,
    /// Roster swept.
    pub roster: String,
    /// (fraction asked, committed agents, population, runs, share overturned, median time).
    pub points: Vec<(f64, i64, i64, usize, f64, Option<f64>)>,
    /// Smallest fraction overturning the convention in the majority of runs.
    pub critical: Option<f64>,
    /// Largest fraction below `critical` that held the convention in the majority of runs.
    pub largest_failure: Option<f64>,
    /// Whether every fraction below the critical one held and every one above it tipped.
    pub monotone: bool,
}

/// Summarises every condition of a study (or of the whole store).
pub fn summarize(path: &Path, study: Option<&str>) -> Result<(Vec<GroupSummary>, Vec<TippingCurve>), AnalysisError> {
    Ok(summarize_outcomes(&run_outcomes(path, study)?))
}

/// Summarises run outcomes already read from a store.
pub fn summarize_outcomes(outcomes: &[RunOutcome]) -> (Vec<GroupSummary>, Vec<TippingCurve>) {
    let mut groups: BTreeMap<Condition, Vec<&RunOutcome>> = BTreeMap::new();
    let mut order: Vec<Condition> = Vec::new();
    for o in outcomes {
        let c = Condition::of(o);
        if !groups.contains_key(&c) {
            order.push(c.clone());
        }
        groups.entry(c).or_default().push(o);
    }
    let mut summaries = Vec::new();
    for c in order {
        let runs = &groups[&c];
        let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for o in runs {
            for (k, v) in &o.metrics {
                if v.is_finite() {
                    values.entry(k.clone()).or_default().push(*v);
                }
            }
        }
        let metrics = values.into_iter().filter_map(|(k, v)| Stat::of(&v).map(|s| (k, s))).collect();
        summaries.push(GroupSummary {
            committed: runs[0].committed,
            population: runs[0].population,
            condition: c,
            runs: runs.len(),
            metrics,
        });
    }
    let curves = tipping_curves(&summaries);
    (summaries, curves)
}

fn tipping_curves(summaries: &[GroupSummary]) -> Vec<TippingCurve> {
    let mut by: BTreeMap<(String, String, String, String), Vec<&GroupSummary>> = BTreeMap::new();
    for s in summaries.iter().filter(|s| s.metrics.contains_key("overturned") && s.condition.sweep().is_some()) {
        let c = &s.condition;
        by.entry((c.block.clone(), c.roster.clone(), c.variant.clone(), c.cell.clone())).or_default().push(s);
    }
    by.into_iter()
        .map(|((block, roster, _, _), mut pts)| {
            pts.sort_by(|a, b| a.condition.sweep_micros.cmp(&b.condition.sweep_micros));
            let points: Vec<(f64, i64, i64, usize, f64, Option<f64>)> = pts
                .iter()
                .map(|s| {
                    (
                        s.condition.sweep().unwrap_or(0.0),
                        s.committed,
                        s.population,
                        s.runs,
                        s.metrics["overturned"].mean,
                        s.metrics.get("overturn_time").map(|t| t.median),
                    )
                })
                .collect();
            let critical = points.iter().find(|p| p.4 > 0.5).map(|p| p.0);
            let largest_failure =
                critical.and_then(|c| points.iter().filter(|p| p.0 < c && p.4 <= 0.5).map(|p| p.0).last());
            let monotone = match critical {
                Some(c) => points.iter().all(|p| (p.0 < c) == (p.4 <= 0.5)),
                None => true,
            };
            TippingCurve { block, roster, points, critical, largest_failure, monotone }
        })
        .collect()
}
