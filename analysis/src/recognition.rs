//! The recognition probe's association with behaviour. The probe's runs are not behavioural
//! runs (the probe is asked outside the behavioural session) and enter no behavioural family;
//! here, per primary outcome, each model's recognised share (the probe runs' `recognised`
//! metric: the share of seats whose answer named the paradigm) stands beside its baseline
//! mean, with Spearman's ρ across models where at least three models have both. Classical
//! rosters are kept out unless asked for.

use serde::Serialize;

use crate::common::{is_classical, mean, values, Index, Options, MIN_RUNS, PROBE_CELL};
use crate::stats;

/// The run-level metric a probe run records its recognition in.
pub const RECOGNISED: &str = "recognised";

/// The recognition probe beside one primary outcome, across models.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RecognitionRow {
    /// Environment of the primary outcome.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// Metric of the primary outcome.
    pub metric: String,
    /// Models with probe runs in the arm.
    pub probed: usize,
    /// (model, recognised share over its probe sessions' seats, baseline mean of the outcome),
    /// for models with a probe session and at least three baseline runs.
    pub points: Vec<(String, f64, f64)>,
    /// Spearman's ρ across models between recognition and the outcome; absent below three models.
    pub rho: Option<f64>,
    /// Two-sided p value of ρ.
    pub p: Option<f64>,
    /// How to read the row.
    pub note: String,
}

/// One row per primary outcome with recognition-probe runs.
pub(crate) fn recognition(idx: &Index, models: &[(String, String)], options: &Options) -> Vec<RecognitionRow> {
    let mut rows = Vec::new();
    for (env, arm, metric) in idx.headline() {
        let mut probed = 0;
        let mut recorded = false;
        let mut points = Vec::new();
        for (model, family) in models {
            if is_classical(family) && !options.classical_in_cross_model {
                continue;
            }
            let probes = idx.select(model, env, arm, PROBE_CELL, "C0");
            if probes.is_empty() {
                continue;
            }
            probed += 1;
            let r = values(&probes, RECOGNISED);
            recorded |= !r.is_empty();
            let b = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            // A probe session is not a behavioural run: one session per model, game and
            // variant asks every seat once, and its share is over those seats.
            if !r.is_empty() && b.len() >= MIN_RUNS {
                if let (Some(r), Some(b)) = (mean(&r), mean(&b)) {
                    points.push((model.clone(), r, b));
                }
            }
        }
        if probed == 0 {
            continue;
        }
        let sp = (points.len() >= 3)
            .then(|| {
                let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
                let ys: Vec<f64> = points.iter().map(|p| p.2).collect();
                stats::spearman(&xs, &ys)
            })
            .transpose();
        let note = match (&sp, recorded) {
            (_, false) => {
                format!("the probe runs record no `{RECOGNISED}` metric: recognition is not in the store's metrics")
            }
            (Ok(Some(_)), true) => "Spearman's rho across models, recognised share against the baseline mean".into(),
            (Ok(None), true) => {
                format!(
                    "{} model(s) with a probe session and at least {MIN_RUNS} baseline runs: too few for a correlation",
                    points.len()
                )
            }
            (Err(e), true) => format!("not computed: {e}"),
        };
        let sp = sp.ok().flatten();
        rows.push(RecognitionRow {
            environment: env.into(),
            arm: arm.into(),
            metric: metric.into(),
            probed,
            rho: sp.as_ref().map(|s| s.rho),
            p: sp.as_ref().map(|s| s.p),
            points,
            note,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, runs, Place};

    #[test]
    fn recognition_stands_beside_behaviour_with_spearman_from_three_models() {
        let mut out = Vec::new();
        for (m, rec, coop) in [("a", 0.0, 0.1), ("b", 0.5, 0.5), ("c", 1.0, 0.9)] {
            runs(&mut out, Place::base(m, "f", "prisoners-dilemma", "baseline"), "cooperation", &[coop; 3]);
            let probe = Place::new(m, "f", "prisoners-dilemma", "baseline", PROBE_CELL, "contamination", "C0");
            // One probe session per model and game: its share is over the seats it asked.
            runs(&mut out, probe, RECOGNISED, &[rec]);
        }
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = recognition(&idx, &idx.models(), &Options::default());
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].probed, rows[0].points.len()), (3, 3));
        assert!((rows[0].rho.expect("rho") - 1.0).abs() < 1e-12);
    }

    #[test]
    fn probe_runs_without_a_recognition_metric_say_so() {
        let mut out = Vec::new();
        let probe = Place::new("a", "f", "bargaining", "ultimatum", PROBE_CELL, "contamination", "C0");
        run(&mut out, probe, &[]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = recognition(&idx, &idx.models(), &Options::default());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].rho, None);
        assert!(rows[0].note.contains("no `recognised` metric"), "{}", rows[0].note);
    }
}
