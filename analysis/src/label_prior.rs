//! The naming game's label-prior diagnostic (the paper's "the prior is over the label"): per
//! model, the modal `convention_name` in the baseline arm against the shuffled-pool arm (each
//! agent its own permutation of the pool), the share of shuffled runs converging on the
//! baseline's modal name, and the mean list position of the convention's name in each arm
//! (`convention_position`, 1-based). The same name under shuffling, reached from varying list
//! positions, is a prior over the label; a name that moves with the list is a prior over
//! list position.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::common::{mean, values, Index, MIN_RUNS};
use crate::outcomes::RunOutcome;

/// The naming game's arm in which every agent sees its own permutation of the pool.
pub const SHUFFLED_ARM: &str = "shuffled-pool";

/// The label-prior diagnostic of one model.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LabelPriorRow {
    /// The model (roster) whose runs are read.
    pub model: String,
    /// Family of the model.
    pub family: String,
    /// Baseline-arm runs (canonical baseline).
    pub baseline_runs: usize,
    /// Of them, runs that formed a convention.
    pub baseline_formed: usize,
    /// The modal convention name (index in the pool) in the baseline arm; absent below three runs.
    pub baseline_name: Option<u32>,
    /// Shuffled-pool runs.
    pub shuffled_runs: usize,
    /// Of them, runs that formed a convention.
    pub shuffled_formed: usize,
    /// The modal convention name in the shuffled-pool arm; absent below three runs.
    pub shuffled_name: Option<u32>,
    /// Share of the shuffled-pool runs converging on the baseline's modal name; absent below
    /// three runs in an arm.
    pub share_on_baseline_name: Option<f64>,
    /// Mean 1-based list position of the convention's name, baseline arm; absent below three runs.
    pub position_baseline: Option<f64>,
    /// Mean 1-based list position of the convention's name, shuffled-pool arm; absent below three runs.
    pub position_shuffled: Option<f64>,
    /// The reading: a prior over the label, over list position, or why there is none.
    pub reading: String,
}

/// The modal name of the runs that formed one (the smallest index on a tie) and whether the
/// mode is tied.
fn mode(runs: &[&RunOutcome]) -> Option<(u32, bool)> {
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for v in values(runs, "convention_name") {
        *counts.entry(v.round().max(0.0) as u32).or_default() += 1;
    }
    let top = *counts.values().max()?;
    let mut modal = counts.iter().filter(|(_, c)| **c == top).map(|(n, _)| *n);
    let first = modal.next()?;
    Some((first, modal.next().is_some()))
}

fn formed(runs: &[&RunOutcome]) -> usize {
    values(runs, "convention").iter().filter(|c| **c > 0.5).count()
}

/// One row per model with runs in the baseline or the shuffled-pool arm of the naming game.
pub(crate) fn label_prior(idx: &Index, models: &[(String, String)]) -> Vec<LabelPriorRow> {
    let mut rows = Vec::new();
    for (model, family) in models {
        let base = idx.select(model, "naming-game", "baseline", "baseline", "C0");
        let shuf = idx.select(model, "naming-game", SHUFFLED_ARM, "baseline", "C0");
        if base.is_empty() && shuf.is_empty() {
            continue;
        }
        let enough = |r: &[&RunOutcome]| r.len() >= MIN_RUNS;
        let position = |r: &[&RunOutcome]| if enough(r) { mean(&values(r, "convention_position")) } else { None };
        let bm = if enough(&base) { mode(&base) } else { None };
        let sm = if enough(&shuf) { mode(&shuf) } else { None };
        let share = match bm {
            Some((name, _)) if enough(&shuf) => {
                let on =
                    values(&shuf, "convention_name").iter().filter(|v| v.round() as i64 == i64::from(name)).count();
                Some(on as f64 / shuf.len() as f64)
            }
            _ => None,
        };
        let tie = |m: Option<(u32, bool)>| m.is_some_and(|m| m.1);
        let reading = if !enough(&base) || !enough(&shuf) {
            format!("absent: fewer than {MIN_RUNS} runs in an arm ({} baseline, {} shuffled)", base.len(), shuf.len())
        } else {
            match (bm, sm) {
                (None, _) => "no convention formed in the baseline arm".to_string(),
                (_, None) => "no convention formed in the shuffled-pool arm".to_string(),
                (Some((b, _)), Some((s, _))) if b == s => {
                    format!(
                        "same name under shuffling: the prior is over the label{}",
                        if tie(bm) || tie(sm) { " (tied mode)" } else { "" }
                    )
                }
                (Some(_), Some(_)) => format!(
                    "the name moves under shuffling: the prior is over list position{}",
                    if tie(bm) || tie(sm) { " (tied mode)" } else { "" }
                ),
            }
        };
        rows.push(LabelPriorRow {
            model: model.clone(),
            family: family.clone(),
            baseline_runs: base.len(),
            baseline_formed: formed(&base),
            baseline_name: bm.map(|m| m.0),
            shuffled_runs: shuf.len(),
            shuffled_formed: formed(&shuf),
            shuffled_name: sm.map(|m| m.0),
            share_on_baseline_name: share,
            position_baseline: position(&base),
            position_shuffled: position(&shuf),
            reading,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, Place};

    fn ng(out: &mut Vec<RunOutcome>, model: &str, arm: &str, name: Option<f64>, position: f64) {
        let at = Place::base(model, "f", "naming-game", arm);
        match name {
            Some(n) => run(out, at, &[("convention", 1.0), ("convention_name", n), ("convention_position", position)]),
            None => run(out, at, &[("convention", 0.0)]),
        };
    }

    #[test]
    fn the_same_label_under_shuffling_is_a_prior_over_the_label() {
        let mut out = Vec::new();
        for _ in 0..3 {
            ng(&mut out, "label", "baseline", Some(4.0), 1.0);
        }
        ng(&mut out, "label", SHUFFLED_ARM, Some(4.0), 3.0);
        ng(&mut out, "label", SHUFFLED_ARM, Some(4.0), 7.0);
        ng(&mut out, "label", SHUFFLED_ARM, None, 0.0);
        for _ in 0..3 {
            ng(&mut out, "list", "baseline", Some(0.0), 1.0);
        }
        for n in [2.0, 5.0, 5.0] {
            ng(&mut out, "list", SHUFFLED_ARM, Some(n), 1.0);
        }
        ng(&mut out, "thin", SHUFFLED_ARM, Some(1.0), 1.0);
        let idx = Index::new(&out, crate::declared::tests::shipped());
        let rows = label_prior(&idx, &idx.models());
        let r = &rows[0];
        assert_eq!((r.model.as_str(), r.baseline_name, r.shuffled_name), ("label", Some(4), Some(4)));
        assert_eq!((r.shuffled_runs, r.shuffled_formed), (3, 2));
        assert!((r.share_on_baseline_name.expect("share") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((r.position_baseline, r.position_shuffled), (Some(1.0), Some(5.0)));
        assert_eq!(r.reading, "same name under shuffling: the prior is over the label");
        let r = &rows[1];
        assert_eq!((r.baseline_name, r.shuffled_name, r.share_on_baseline_name), (Some(0), Some(5), Some(0.0)));
        assert_eq!(r.reading, "the name moves under shuffling: the prior is over list position");
        let r = &rows[2];
        assert_eq!((r.baseline_name, r.shuffled_name, r.position_shuffled), (None, None, None));
        assert_eq!(r.reading, "absent: fewer than 3 runs in an arm (0 baseline, 1 shuffled)");
    }
}
