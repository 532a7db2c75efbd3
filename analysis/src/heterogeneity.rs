//! Between-model heterogeneity of the baseline means of each primary outcome.

use serde::Serialize;

use crate::common::{mean, values, Index, PRIMARY};
use crate::stats;

/// Between-model heterogeneity of one primary outcome's baseline means.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HeterogeneityRow {
    /// Environment of the primary outcome.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Metric of the primary outcome.
    pub metric: String,
    /// Models with at least two baseline runs.
    pub models: usize,
    /// (model, mean of its baseline runs).
    pub means: Vec<(String, f64)>,
    /// Sample standard deviation of the model means; none with a single model.
    pub sd_between: Option<f64>,
    /// I² of the model means; none with a single model or when a model's runs are constant.
    pub i2: Option<f64>,
    /// How to read the row: one model, why I² is undefined, or that I² saturates.
    pub note: String,
}

/// One row per primary outcome run at baseline by a model with at least two runs.
pub(crate) fn heterogeneity(idx: &Index, models: &[(String, String)]) -> Vec<HeterogeneityRow> {
    let mut heterogeneity = Vec::new();
    for (env, arm, metric) in PRIMARY {
        let mut means = Vec::new();
        let mut vars = Vec::new();
        let mut zero = Vec::new();
        for (model, _) in models {
            let v = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if v.len() < 2 {
                continue;
            }
            let m = mean(&v).unwrap_or(0.0);
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64 / v.len() as f64;
            means.push((model.clone(), m));
            if var > 0.0 {
                vars.push(var);
            } else {
                zero.push(model.clone());
            }
        }
        if means.is_empty() {
            continue;
        }
        let ms: Vec<f64> = means.iter().map(|m| m.1).collect();
        let sd = (ms.len() >= 2).then(|| {
            let mu = ms.iter().sum::<f64>() / ms.len() as f64;
            (ms.iter().map(|m| (m - mu).powi(2)).sum::<f64>() / (ms.len() - 1) as f64).sqrt()
        });
        let i2 = if zero.is_empty() { stats::i_squared(&ms, &vars).ok().map(|h| h.i2) } else { None };
        let note = if ms.len() < 2 {
            "one model: no heterogeneity to measure".to_string()
        } else if !zero.is_empty() {
            format!("I² undefined: constant runs in {}", zero.join(", "))
        } else {
            "I² saturates whenever model means differ and within-model variance is small; read the SD".into()
        };
        heterogeneity.push(HeterogeneityRow {
            environment: env.into(),
            arm: arm.into(),
            metric: metric.into(),
            models: ms.len(),
            means,
            sd_between: sd,
            i2,
            note,
        });
    }
    heterogeneity
}
