//! Per-condition summaries of run-level outcomes, and tipping curves (see [`crate::tipping`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::AnalysisError;
use crate::outcomes::{run_outcomes, RunOutcome};
pub use crate::tipping::TippingCurve;

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
    /// The point of a `Grid` or `Zip` sweep (`rounds=5 memory=1`), if any.
    pub point: Option<String>,
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
            point: o.point.clone(),
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

/// The position of each block in its study file, studies in the order the store recorded them:
/// the tables print in study order, whatever order the runs were committed in.
pub fn block_order(store: &Path) -> Result<Vec<(String, String)>, AnalysisError> {
    let conn = crate::outcomes::open(store)?;
    let sql = |source| AnalysisError::Store { path: store.to_path_buf(), source };
    let studies = agora_records::reads::summary::study_sources(&conn).map_err(sql)?;
    let blocks = agora_records::reads::summary::run_blocks(&conn).map_err(sql)?;
    let mut order = Vec::new();
    let mut by_study: std::collections::HashMap<&str, Vec<&(String, String)>> = std::collections::HashMap::new();
    for b in &blocks {
        by_study.entry(b.0.as_str()).or_default().push(b);
    }
    for (study, source) in &studies {
        // A block is placed where its `Block(` declaration names it in the study's source: the
        // first `name:` after each `Block(`, read once (a search of the source per block would
        // make a study of many blocks quadratic).
        let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, _) in source.match_indices("Block(") {
            let Some(n) = source[i..].find("name:") else { break };
            let rest = source[i + n..].trim_start_matches("name:").trim_start();
            let Some(rest) = rest.strip_prefix('"') else { continue };
            let Some(end) = rest.find('"') else { continue };
            at.entry(&rest[..end]).or_insert(i);
        }
        let mut mine: Vec<&(String, String)> = by_study.get(study.as_str()).cloned().unwrap_or_default();
        mine.sort_by_key(|(_, b)| (at.get(b.as_str()).copied().unwrap_or(usize::MAX), b.clone()));
        order.extend(mine.into_iter().cloned());
    }
    Ok(order)
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
    (summaries, crate::tipping::tipping(outcomes))
}
