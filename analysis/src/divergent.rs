//! Divergent payoffs (C3): the share v of decisions consistent with the altered payoffs, and
//! whether behaviour follows the payoffs or the script.

use serde::Serialize;

use crate::common::{mean, values, Index, MIN_RUNS};

/// Threshold above which behaviour follows the altered payoffs, and below which the script.
pub const FOLLOWS_PAYOFFS: f64 = 0.70;
/// Share v at or below which behaviour follows the script rather than the altered payoffs.
pub const FOLLOWS_SCRIPT: f64 = 0.30;

/// Behaviour of one model under the divergent payoffs (C3) in one environment arm.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DivergentRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Environment of the runs.
    pub environment: String,
    /// Arm of the environment.
    pub arm: String,
    /// What counts as consistent with the altered payoffs, in words.
    pub rule: String,
    /// C3 runs at the baseline cell with the metric.
    pub runs: usize,
    /// Mean share v of decisions consistent with the altered payoffs; absent below three runs.
    pub v: Option<f64>,
    /// `follows the payoffs` (v ≥ 0.70), `follows the script` (v ≤ 0.30), `mixed`, or
    /// `absent (n < 3)`.
    pub classification: String,
}

/// One row per environment arm and model with C3 runs at the baseline cell.
pub(crate) fn divergent(idx: &Index, models: &[(String, String)]) -> Vec<DivergentRow> {
    let mut divergent = Vec::new();
    // The share each game declares for its arms ([`crate::declared::Divergent`]).
    for (env, d) in idx.declared().divergent() {
        let (arm, rule) = (d.arm.as_str(), d.rule.as_str());
        for (model, _) in models {
            let runs = idx.select(model, env, arm, "baseline", "C3");
            let v: Vec<f64> = if d.complement {
                values(&runs, &d.metric).into_iter().map(|m| 1.0 - m).collect()
            } else {
                values(&runs, &d.metric)
            };
            let Some(m) = mean(&v) else { continue };
            let m = (v.len() >= MIN_RUNS).then_some(m);
            divergent.push(DivergentRow {
                model: model.clone(),
                environment: env.into(),
                arm: arm.into(),
                rule: rule.into(),
                runs: v.len(),
                v: m,
                classification: m.map_or("absent (n < 3)", classify).into(),
            });
        }
    }
    divergent
}

/// Whether a share v follows the payoffs, the script, or neither.
fn classify(v: f64) -> &'static str {
    if v >= FOLLOWS_PAYOFFS {
        "follows the payoffs"
    } else if v <= FOLLOWS_SCRIPT {
        "follows the script"
    } else {
        "mixed"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{runs, Place};

    #[test]
    fn fewer_than_three_c3_runs_are_absent() {
        let mut out = Vec::new();
        let c3 = |m| Place::new(m, "f", "prisoners-dilemma", "baseline", "baseline", "baseline", "C3");
        runs(&mut out, c3("thin"), "cooperation", &[1.0, 1.0]);
        runs(&mut out, c3("full"), "cooperation", &[1.0, 0.5, 0.75]);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = divergent(&idx, &idx.models());
        let got: Vec<(&str, Option<f64>, &str)> =
            rows.iter().map(|r| (r.model.as_str(), r.v, r.classification.as_str())).collect();
        assert_eq!(got, [("full", Some(0.75), "follows the payoffs"), ("thin", None, "absent (n < 3)")]);
    }
}
