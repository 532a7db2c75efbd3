//! Each model against each classical baseline on the primary outcomes (exact Mann–Whitney,
//! Cliff's δ).

use serde::Serialize;

use crate::common::{mean, values, Index, PRIMARY};
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
    /// Mean of the metric over the model's runs.
    pub mean: f64,
    /// The classical roster compared against.
    pub classical: String,
    /// Mean of the metric over the classical roster's runs.
    pub classical_mean: f64,
    /// Cliff's δ of the model's runs against the classical roster's; none when the test fails.
    pub cliffs_delta: Option<f64>,
    /// Exact two-sided Mann–Whitney p value (doubling convention); none when the test fails.
    pub p: Option<f64>,
}

/// One row per primary outcome, model and other classical roster, both with baseline runs.
pub(crate) fn baselines(idx: &Index, models: &[(String, String)]) -> Vec<BaselineRow> {
    let mut baselines = Vec::new();
    let classical: Vec<&(String, String)> = models.iter().filter(|(_, f)| f == "classical").collect();
    for (env, arm, metric) in PRIMARY {
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
                let mw = stats::mann_whitney(&v, &c).ok();
                baselines.push(BaselineRow {
                    environment: env.into(),
                    arm: arm.into(),
                    metric: metric.into(),
                    model: model.clone(),
                    family: family.clone(),
                    runs: v.len(),
                    mean: mean(&v).unwrap_or(0.0),
                    classical: cmodel.clone(),
                    classical_mean: mean(&c).unwrap_or(0.0),
                    cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
                    p: mw.as_ref().map(|m| m.p_two_sided),
                });
            }
        }
    }
    baselines
}
