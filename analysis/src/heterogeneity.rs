//! Between-model heterogeneity of the baseline means of each primary outcome: I² where the
//! paper reports it (the primary outcomes), beside the between-model SD. Cross-model: the
//! classical rosters are kept out unless asked for, and a model enters with at least three
//! baseline runs.

use serde::Serialize;

use crate::common::{is_classical, left_out_aside, mean, values, Index, Options, MIN_RUNS};
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
    /// Models with at least three baseline runs.
    pub models: usize,
    /// (model, mean of its baseline runs).
    pub means: Vec<(String, f64)>,
    /// Sample standard deviation of the model means; none with a single model.
    pub sd_between: Option<f64>,
    /// I² of the model means; none with a single model. Where a model's runs are constant, the
    /// limit as its within-model variance goes to 0 (see the note).
    pub i2: Option<f64>,
    /// How to read the row: one model, a limit taken for constant runs, or that I² saturates.
    pub note: String,
}

/// One row per primary outcome run at baseline by some roster: the models with at least three
/// runs (the classical rosters too when `options` asks for them).
pub(crate) fn heterogeneity(idx: &Index, models: &[(String, String)], options: &Options) -> Vec<HeterogeneityRow> {
    let mut heterogeneity = Vec::new();
    for (env, arm, metric) in idx.headline() {
        let mut means = Vec::new();
        let mut vars = Vec::new();
        let mut zero = Vec::new();
        let mut finite: Vec<(f64, f64)> = Vec::new();
        let mut constant_means: Vec<f64> = Vec::new();
        let (mut ran, mut kept_out, mut thin) = (false, 0usize, 0usize);
        for (model, family) in models {
            let v = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if v.is_empty() {
                continue;
            }
            ran = true;
            if is_classical(family) && !options.classical_in_cross_model {
                kept_out += 1;
                continue;
            }
            if v.len() < MIN_RUNS {
                thin += 1;
                continue;
            }
            let m = mean(&v).unwrap_or(0.0);
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64 / v.len() as f64;
            means.push((model.clone(), m));
            if var > 0.0 {
                vars.push(var);
                finite.push((m, var));
            } else {
                zero.push(model.clone());
                constant_means.push(m);
            }
        }
        if !ran {
            continue;
        }
        let aside = left_out_aside(kept_out, thin);
        if means.is_empty() {
            heterogeneity.push(HeterogeneityRow {
                environment: env.into(),
                arm: arm.into(),
                metric: metric.into(),
                note: format!("no model to compare{aside}"),
                ..HeterogeneityRow::default()
            });
            continue;
        }
        let ms: Vec<f64> = means.iter().map(|m| m.1).collect();
        let sd = (ms.len() >= 2).then(|| {
            let mu = ms.iter().sum::<f64>() / ms.len() as f64;
            (ms.iter().map(|m| (m - mu).powi(2)).sum::<f64>() / (ms.len() - 1) as f64).sqrt()
        });
        let i2 = if zero.is_empty() {
            stats::i_squared(&ms, &vars).ok().map(|h| h.i2)
        } else {
            (ms.len() >= 2).then(|| i_squared_limit(&constant_means, &finite, ms.len()))
        };
        let note = if ms.len() < 2 {
            "one model: no heterogeneity to measure".to_string()
        } else if !zero.is_empty() {
            format!(
                "constant runs in {}: I² is its limit as their within-model variance goes to 0 (100 % when constant models differ), where the paper reports it saturated",
                zero.join(", ")
            )
        } else {
            "I² saturates whenever model means differ and within-model variance is small; read the SD".into()
        } + &aside;
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

/// I² in the limit where the models with constant runs have a within-model variance going to
/// 0: their inverse-variance weights grow without bound, so the pooled mean tends to their
/// common mean m* (and Q to infinity if they disagree, I² to 1); the other models contribute
/// Q = Σ w_i (m_i − m*)², and I² = max(0, (Q − df) / Q) with df = k − 1.
fn i_squared_limit(constant_means: &[f64], finite: &[(f64, f64)], k: usize) -> f64 {
    let first = constant_means[0];
    if constant_means.iter().any(|m| *m != first) {
        return 1.0;
    }
    let q: f64 = finite.iter().map(|(m, var)| (m - first).powi(2) / var).sum();
    let df = (k - 1) as f64;
    if q > df {
        (q - df) / q
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{runs, Place};

    fn outcomes() -> Vec<crate::RunOutcome> {
        let mut out = Vec::new();
        let pd = |m, f| Place::base(m, f, "prisoners-dilemma", "baseline");
        runs(&mut out, pd("a", "fa"), "cooperation", &[0.1, 0.2, 0.3]);
        runs(&mut out, pd("b", "fb"), "cooperation", &[0.5, 0.6, 0.7]);
        runs(&mut out, pd("thin", "fc"), "cooperation", &[0.9, 0.9]);
        runs(&mut out, pd("tft", "classical"), "cooperation", &[0.9, 0.95, 1.0]);
        out
    }

    #[test]
    fn classical_rosters_and_thin_models_stay_out_unless_asked_for() {
        let out = outcomes();
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = heterogeneity(&idx, &idx.models(), &Options::default());
        assert_eq!(rows.len(), 1);
        let names: Vec<&str> = rows[0].means.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(rows[0].i2.is_some() && rows[0].sd_between.is_some());
        assert!(rows[0].note.ends_with(
            "(1 classical roster(s) kept out of cross-model statistics; 1 model(s) with fewer than 3 runs absent)"
        ));
        let with = Options { classical_in_cross_model: true };
        let rows = heterogeneity(&idx, &idx.models(), &with);
        let names: Vec<&str> = rows[0].means.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["a", "b", "tft"]);
    }

    #[test]
    fn constant_runs_saturate_i2_as_the_paper_reports_it_instead_of_leaving_it_undefined() {
        // Two models that always cooperate and never do: the paper's case (I² = 100 %).
        let mut out = Vec::new();
        let pd = |m, f| Place::base(m, f, "prisoners-dilemma", "baseline");
        runs(&mut out, pd("all", "fa"), "cooperation", &[1.0, 1.0, 1.0]);
        runs(&mut out, pd("none", "fb"), "cooperation", &[0.0, 0.0, 0.0]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = heterogeneity(&idx, &idx.models(), &Options::default());
        assert_eq!(rows[0].i2, Some(1.0));
        assert!(rows[0].note.contains("limit"), "{}", rows[0].note);
        // One constant model beside a varying one with the same mean: no heterogeneity.
        let mut out = Vec::new();
        runs(&mut out, pd("c", "fa"), "cooperation", &[0.5, 0.5, 0.5]);
        runs(&mut out, pd("v", "fb"), "cooperation", &[0.4, 0.5, 0.6]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        assert_eq!(heterogeneity(&idx, &idx.models(), &Options::default())[0].i2, Some(0.0));
        // ... and with a different mean, the limit Q = (m - m*)^2 / var(mean) against df = 1.
        let mut out = Vec::new();
        runs(&mut out, pd("c", "fa"), "cooperation", &[0.5, 0.5, 0.5]);
        runs(&mut out, pd("v", "fb"), "cooperation", &[0.7, 0.8, 0.9]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let q = (0.8f64 - 0.5).powi(2) / (0.01 / 3.0);
        let i2 = heterogeneity(&idx, &idx.models(), &Options::default())[0].i2.expect("defined");
        assert!((i2 - (q - 1.0) / q).abs() < 1e-12, "{i2}");
    }
}
