//! Each model against each classical baseline on the primary outcomes (exact Mann–Whitney,
//! Cliff's δ).

use serde::Serialize;

use crate::common::{is_classical, mean, values, Index, MIN_RUNS};
use crate::stats;

/// One model against one classical roster on one primary outcome at the canonical baseline (C0).
#[derive(Clone, Debug, Default, Serialize)]
pub struct BaselineRow {
    /// Environment of the primary outcome.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Metric of the primary outcome.
    pub metric: String,
    /// The model (roster) compared.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Baseline runs of the model with the metric.
    pub runs: usize,
    /// Mean of the metric over the model's runs; absent below three runs.
    pub mean: Option<f64>,
    /// The classical roster compared against.
    pub classical: String,
    /// Classical roster's runs with the metric.
    pub classical_runs: usize,
    /// Mean of the metric over the classical roster's runs; absent below three runs.
    pub classical_mean: Option<f64>,
    /// Cliff's δ of the model's runs against the classical roster's; absent below three runs
    /// in either, or when the test fails.
    pub cliffs_delta: Option<f64>,
    /// Exact two-sided Mann–Whitney p value (doubling convention); absent as Cliff's δ is.
    pub p: Option<f64>,
}

/// One row per primary outcome, model and other classical roster, both with baseline runs.
pub(crate) fn baselines(idx: &Index, models: &[(String, String)]) -> Vec<BaselineRow> {
    let mut baselines = Vec::new();
    let classical: Vec<&(String, String)> = models.iter().filter(|(_, f)| is_classical(f)).collect();
    for (env, arm, metric) in idx.headline() {
        for (model, family) in models {
            let v = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if v.is_empty() {
                continue;
            }
            for (cmodel, _) in &classical {
                if cmodel == model {
                    continue;
                }
                let c = values(&idx.select(cmodel, env, arm, "baseline", "C0"), metric);
                if c.is_empty() {
                    continue;
                }
                let enough = |x: &[f64]| (x.len() >= MIN_RUNS).then(|| mean(x)).flatten();
                let mw =
                    if v.len() >= MIN_RUNS && c.len() >= MIN_RUNS { stats::mann_whitney(&v, &c).ok() } else { None };
                baselines.push(BaselineRow {
                    environment: env.into(),
                    arm: arm.into(),
                    metric: metric.into(),
                    model: model.clone(),
                    family: family.clone(),
                    runs: v.len(),
                    mean: enough(&v),
                    classical: cmodel.clone(),
                    classical_runs: c.len(),
                    classical_mean: enough(&c),
                    cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
                    p: mw.as_ref().map(|m| m.p_two_sided),
                });
            }
        }
    }
    baselines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{runs, Place};

    #[test]
    fn a_side_with_fewer_than_three_runs_is_absent() {
        let mut out = Vec::new();
        let pd = |m, f| Place::base(m, f, "prisoners-dilemma", "baseline");
        runs(&mut out, pd("m", "f"), "cooperation", &[0.9, 0.8, 0.7]);
        runs(&mut out, pd("thin", "f"), "cooperation", &[0.9, 0.8]);
        runs(&mut out, pd("tft", "classical"), "cooperation", &[0.1, 0.2, 0.3]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = baselines(&idx, &idx.models());
        let m = rows.iter().find(|r| r.model == "m").expect("m");
        assert!(m.mean.is_some() && m.classical_mean.is_some() && m.p.is_some());
        let t = rows.iter().find(|r| r.model == "thin").expect("thin");
        assert_eq!((t.runs, t.mean, t.cliffs_delta, t.p), (2, None, None, None));
        assert!(t.classical_mean.is_some(), "the classical side rests on three runs");
    }
}
