//! Tipping sweeps: the share of runs in which a committed minority's alternative took over,
//! per committed fraction, the critical mass each sweep brackets, and its grade against the
//! human bracket per model and per family.
//!
//! The fraction on a curve is the realised one: the mean of the runs' `committed_share` metric
//! (k/N) where they record it, else the sweep value. In the LLM tipping arm the convention is
//! first formed by the same agents: a run whose formation phase formed none (`convention` = 0)
//! has no convention to overturn; it is left out of the curve and counted per fraction, and a
//! sweep all of whose runs formed none is reported as "no convention to overturn". Runs that
//! record no `convention` metric (a convention written into the agents' memories, as in the
//! classical sweep) contest an established convention.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::common::{mean, median};
use crate::outcomes::RunOutcome;

/// Status of a sweep with no convention formed in any run.
pub const NO_CONVENTION: &str = "no convention to overturn";

/// A tipping sweep for one roster: share of runs in which the alternative took over, per
/// committed fraction, and the critical mass the sweep brackets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TippingCurve {
    /// Block of the study holding the sweep.
    pub block: String,
    /// Roster swept.
    pub roster: String,
    /// Family of the roster.
    pub family: String,
    /// Arm of the naming game (`tipping`, or `tipping-shuffled-pool`).
    pub arm: String,
    /// Payoff variant of the runs.
    pub variant: String,
    /// Cell of the runs.
    pub cell: String,
    /// (realised fraction, committed agents, population, runs with a convention to overturn,
    /// share of them overturned, median time to overturn), one per sweep value with such runs,
    /// in order of the realised fraction.
    pub points: Vec<(f64, i64, i64, usize, f64, Option<f64>)>,
    /// The sweep value asked for at each point, in the order of `points`.
    pub asked: Vec<f64>,
    /// (sweep value asked, realised fraction, runs) of the runs that formed no convention to
    /// overturn, per sweep value that had any.
    pub no_convention: Vec<(f64, f64, usize)>,
    /// Smallest realised fraction overturning the convention in the majority of runs (sweep
    /// values realised as the same committed count pooled).
    pub critical: Option<f64>,
    /// Largest realised fraction below `critical` that held the convention in the majority of runs.
    pub largest_failure: Option<f64>,
    /// Whether every realised fraction below the critical one held and every one above it tipped.
    pub monotone: bool,
    /// `estimated`, `overturned at the smallest fraction tested`, `never overturned at any
    /// fraction tested`, or `no convention to overturn`.
    pub status: String,
}

/// Whether a run belongs to a tipping curve: it records whether the convention was overturned,
/// or it is a tipping-arm run that formed no convention to overturn.
fn tipping_run(r: &RunOutcome) -> bool {
    r.sweep.is_some() && (r.metrics.contains_key("overturned") || no_convention(r))
}

/// A tipping-arm run whose formation phase formed no convention.
fn no_convention(r: &RunOutcome) -> bool {
    r.arm.starts_with("tipping") && r.metrics.get("convention").is_some_and(|c| *c < 0.5)
}

/// What identifies a curve: (block, roster, family, arm, variant, cell).
type CurveKey = (String, String, String, String, String, String);

/// The curve of the runs of one sweep (any grouping: a roster's, or a family's pooled).
fn curve(key: CurveKey, runs: &[&RunOutcome]) -> TippingCurve {
    let (block, roster, family, arm, variant, cell) = key;
    let mut by_value: BTreeMap<i64, Vec<&RunOutcome>> = BTreeMap::new();
    for r in runs {
        by_value.entry((r.sweep.unwrap_or(0.0) * 1e6).round() as i64).or_default().push(r);
    }
    let mut pts = Vec::new();
    let mut none = Vec::new();
    for (micros, rs) in &by_value {
        let asked = *micros as f64 / 1e6;
        let shares: Vec<f64> = rs.iter().filter_map(|r| r.metrics.get("committed_share").copied()).collect();
        let x = mean(&shares).unwrap_or(asked);
        let (formed, empty): (Vec<&&RunOutcome>, Vec<&&RunOutcome>) = rs.iter().partition(|r| !no_convention(r));
        if !empty.is_empty() {
            none.push((asked, x, empty.len()));
        }
        let over: Vec<f64> = formed.iter().filter_map(|r| r.metrics.get("overturned").copied()).collect();
        let Some(share) = mean(&over) else { continue };
        let times: Vec<f64> = formed.iter().filter_map(|r| r.metrics.get("overturn_time").copied()).collect();
        pts.push((asked, (x, rs[0].committed, rs[0].population, formed.len(), share, median(&times))));
    }
    pts.sort_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.0.total_cmp(&b.0)));
    let (asked, points): (Vec<f64>, Vec<_>) = pts.into_iter().unzip();
    // Sweep values realised as the same committed count are one condition: the bracket reads
    // them pooled.
    let mut pooled: Vec<(f64, f64, f64)> = Vec::new();
    for p in &points {
        match pooled.last_mut() {
            Some(last) if (last.0 - p.0).abs() < 1e-9 => {
                last.1 += p.3 as f64;
                last.2 += p.4 * p.3 as f64;
            }
            _ => pooled.push((p.0, p.3 as f64, p.4 * p.3 as f64)),
        }
    }
    // A fraction at which fewer than three runs had a convention to overturn carries no
    // evidence: it is left out of the bracket, like every entry resting on fewer than three runs.
    let thin = pooled.iter().filter(|(_, n, _)| *n < crate::common::MIN_RUNS as f64).count();
    let pooled: Vec<(f64, f64)> = pooled
        .into_iter()
        .filter(|(_, n, _)| *n >= crate::common::MIN_RUNS as f64)
        .map(|(x, n, k)| (x, k / n))
        .collect();
    let critical = pooled.iter().find(|p| p.1 > 0.5).map(|p| p.0);
    let largest_failure = critical.and_then(|c| pooled.iter().rev().find(|p| p.0 < c && p.1 <= 0.5).map(|p| p.0));
    let monotone = match critical {
        Some(c) => pooled.iter().all(|p| (p.0 < c) == (p.1 <= 0.5)),
        None => true,
    };
    let status = match (points.is_empty(), critical, largest_failure) {
        (true, _, _) => NO_CONVENTION,
        (false, _, _) if pooled.is_empty() && thin > 0 => {
            "absent: fewer than 3 runs with a convention at every fraction"
        }
        (false, None, _) if thin > 0 => {
            "not overturned at any fraction with 3 or more runs (fractions with fewer absent)"
        }
        (false, Some(_), Some(_)) => "estimated",
        (false, Some(_), None) => "overturned at the smallest fraction tested",
        (false, None, _) => "never overturned at any fraction tested",
    };
    TippingCurve {
        block,
        roster,
        family,
        arm,
        variant,
        cell,
        points,
        asked,
        no_convention: none,
        critical,
        largest_failure,
        monotone,
        status: status.into(),
    }
}

/// The tipping curves of every sweep in the outcomes, per (block, roster, arm, variant, cell).
pub(crate) fn tipping(outcomes: &[RunOutcome]) -> Vec<TippingCurve> {
    let mut by: BTreeMap<CurveKey, Vec<&RunOutcome>> = BTreeMap::new();
    for r in outcomes.iter().filter(|r| tipping_run(r)) {
        let key =
            (r.block.clone(), r.roster.clone(), r.family.clone(), r.arm.clone(), r.variant.clone(), r.cell.clone());
        by.entry(key).or_default().push(r);
    }
    by.into_iter().map(|(k, runs)| curve(k, &runs)).collect()
}

/// The critical mass of one model's (or one family's pooled) tipping sweep, graded against
/// the human bracket.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CriticalMassRow {
    /// `model` for one roster's sweep, `family` for the sweeps of a family's rosters pooled.
    pub scope: String,
    /// The roster (or the family, for a pooled row).
    pub name: String,
    /// Family of the roster.
    pub family: String,
    /// Block of the study holding the sweep.
    pub block: String,
    /// Arm of the naming game.
    pub arm: String,
    /// Runs with a convention to overturn.
    pub runs: usize,
    /// Runs that formed no convention to overturn, left out of the curve.
    pub no_convention: usize,
    /// Largest realised fraction that held the convention in the majority of runs below the critical one.
    pub largest_failure: Option<f64>,
    /// The critical mass: smallest realised fraction overturning it in the majority of runs.
    pub critical: Option<f64>,
    /// Lower end of the human bracket.
    pub human_low: f64,
    /// Upper end of the human bracket.
    pub human_high: f64,
    /// Whether the critical mass falls inside the human bracket; absent when none was estimated.
    pub inside: Option<bool>,
    /// The curve's status (see [`TippingCurve::status`]).
    pub status: String,
}

/// Tolerance on the bracket's ends (6/24 is 0.25 up to rounding).
const EPS: f64 = 1e-9;

fn grade(scope: &str, name: &str, c: &TippingCurve, low: f64, high: f64) -> CriticalMassRow {
    CriticalMassRow {
        scope: scope.into(),
        name: name.into(),
        family: c.family.clone(),
        block: c.block.clone(),
        arm: c.arm.clone(),
        runs: c.points.iter().map(|p| p.3).sum(),
        no_convention: c.no_convention.iter().map(|p| p.2).sum(),
        largest_failure: c.largest_failure,
        critical: c.critical,
        human_low: low,
        human_high: high,
        inside: c.critical.map(|x| x >= low - EPS && x <= high + EPS),
        status: c.status.clone(),
    }
}

/// The critical mass per model and per family (the rosters of a family pooled per block and
/// arm, the classical rosters in their own family), for the canonical tipping arms (C0,
/// baseline cell), against the anchor range `anchor`. No rows without such an anchor.
pub(crate) fn critical_mass(
    outcomes: &[RunOutcome],
    curves: &[TippingCurve],
    anchors: &AnchorTable,
    anchor: &str,
) -> Vec<CriticalMassRow> {
    let Some(AnchorValue::Range { low, high }) = anchors.get(anchor).map(|a| a.value.clone()) else {
        return Vec::new();
    };
    let canonical = |variant: &str, cell: &str| variant == "C0" && cell == "baseline";
    let mut rows: Vec<CriticalMassRow> = curves
        .iter()
        .filter(|c| canonical(&c.variant, &c.cell))
        .map(|c| grade("model", &c.roster, c, low, high))
        .collect();
    let mut by: BTreeMap<(String, String, String), Vec<&RunOutcome>> = BTreeMap::new();
    for r in outcomes.iter().filter(|r| tipping_run(r) && canonical(&r.variant, &r.cell)) {
        by.entry((r.family.clone(), r.block.clone(), r.arm.clone())).or_default().push(r);
    }
    for ((family, block, arm), runs) in by {
        let key = (block, family.clone(), family.clone(), arm, "C0".into(), "baseline".into());
        rows.push(grade("family", &family, &curve(key, &runs), low, high));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{run, Place};

    /// Tipping runs of a roster at one sweep value: (convention formed, overturned) per run.
    fn sweep(out: &mut Vec<RunOutcome>, roster: &str, family: &str, fraction: f64, k: i64, runs: &[(bool, bool)]) {
        for (formed, over) in runs {
            let at = Place::new(roster, family, "naming-game", "tipping", "baseline", "baseline", "C0");
            let mut m = vec![("convention", if *formed { 1.0 } else { 0.0 }), ("committed_share", k as f64 / 24.0)];
            if *formed {
                m.push(("overturned", if *over { 1.0 } else { 0.0 }));
            }
            let i = run(out, at, &m);
            out[i].sweep = Some(fraction);
            out[i].committed = k;
            out[i].population = 24;
        }
    }

    const Y: (bool, bool) = (true, true);
    const N: (bool, bool) = (true, false);
    const NONE: (bool, bool) = (false, false);

    #[test]
    fn runs_without_a_convention_leave_the_curve_and_are_counted_per_fraction() {
        let mut out = Vec::new();
        // 0.225 asks for 5.4 of 24: five committed, a realised 0.208.
        sweep(&mut out, "m", "f", 0.225, 5, &[N, N, NONE, Y]);
        sweep(&mut out, "m", "f", 0.25, 6, &[Y, Y, NONE, NONE]);
        let c = &tipping(&out)[0];
        let x: Vec<(f64, usize, f64)> = c.points.iter().map(|p| (p.0, p.3, p.4)).collect();
        assert_eq!(x, [(5.0 / 24.0, 3, 1.0 / 3.0), (0.25, 2, 1.0)]);
        assert_eq!(c.no_convention, [(0.225, 5.0 / 24.0, 1), (0.25, 0.25, 2)]);
        assert_eq!(c.asked, [0.225, 0.25]);
        // Only two runs at 0.25 had a convention to overturn: that fraction carries no evidence
        // and cannot set the critical mass.
        assert_eq!((c.largest_failure, c.critical), (None, None));
        assert!(c.status.starts_with("not overturned at any fraction with 3 or more runs"), "{}", c.status);
        // With a third run that formed one, it does.
        sweep(&mut out, "m", "f", 0.25, 6, &[Y]);
        let c = &tipping(&out)[0];
        assert_eq!((c.largest_failure, c.critical, c.status.as_str()), (Some(5.0 / 24.0), Some(0.25), "estimated"));
    }

    #[test]
    fn a_sweep_without_any_convention_has_no_convention_to_overturn() {
        let mut out = Vec::new();
        sweep(&mut out, "m", "f", 0.25, 6, &[NONE, NONE, NONE]);
        let curves = tipping(&out);
        assert_eq!(curves[0].status, NO_CONVENTION);
        assert!(curves[0].points.is_empty());
        let rows = critical_mass(&out, &curves, AnchorTable::shipped(), "naming-critical-mass");
        assert_eq!(rows.len(), 2, "one model row, one family row");
        assert!(rows.iter().all(|r| r.status == NO_CONVENTION && r.inside.is_none() && r.no_convention == 3));
    }

    #[test]
    fn the_critical_mass_is_graded_on_the_realised_fraction_per_model_and_per_family() {
        let mut out = Vec::new();
        // Tips at 5/24 = 0.208: below the human 0.21, although 0.225 was asked.
        sweep(&mut out, "a", "fam", 0.175, 4, &[N, N, N]);
        sweep(&mut out, "a", "fam", 0.225, 5, &[Y, Y, N]);
        // Tips at 6/24 = 0.25: inside.
        sweep(&mut out, "b", "fam", 0.225, 5, &[N, N, N]);
        sweep(&mut out, "b", "fam", 0.25, 6, &[Y, Y, Y]);
        let curves = tipping(&out);
        let rows = critical_mass(&out, &curves, AnchorTable::shipped(), "naming-critical-mass");
        let got: Vec<(&str, &str, Option<f64>, Option<bool>)> =
            rows.iter().map(|r| (r.scope.as_str(), r.name.as_str(), r.critical, r.inside)).collect();
        // The family pools both rosters per sweep value: 0.175 holds (0/3), 0.225 (realised
        // 5/24) overturns in 2 of 6 runs, 0.25 in 3 of 3.
        assert_eq!(
            got,
            [
                ("model", "a", Some(5.0 / 24.0), Some(false)),
                ("model", "b", Some(0.25), Some(true)),
                ("family", "fam", Some(0.25), Some(true)),
            ]
        );
    }

    #[test]
    fn sweep_values_realised_as_the_same_count_are_pooled_for_the_bracket() {
        let mut out = Vec::new();
        // 0.20 and 0.225 both realise 5 of 24: 1 of 3 and 2 of 3 overturned, 3 of 6 pooled, so
        // 5/24 holds; 6/24 tips.
        sweep(&mut out, "m", "f", 0.20, 5, &[Y, N, N]);
        sweep(&mut out, "m", "f", 0.225, 5, &[Y, Y, N]);
        sweep(&mut out, "m", "f", 0.25, 6, &[Y, Y, Y]);
        let c = &tipping(&out)[0];
        assert_eq!(c.points.len(), 3, "one row per sweep value");
        assert_eq!((c.largest_failure, c.critical, c.monotone), (Some(5.0 / 24.0), Some(0.25), true));
    }

    #[test]
    fn without_committed_share_the_sweep_value_is_the_fraction() {
        let mut out = Vec::new();
        for (f, over) in [(0.1, 0.0), (0.3, 1.0)] {
            let at = Place::new("c", "classical", "naming-game", "tipping", "baseline", "baseline", "C0");
            for _ in 0..3 {
                let i = run(&mut out, at, &[("overturned", over)]);
                out[i].sweep = Some(f);
            }
        }
        let c = &tipping(&out)[0];
        assert_eq!(c.points.iter().map(|p| p.0).collect::<Vec<_>>(), [0.1, 0.3]);
        assert_eq!((c.critical, c.largest_failure), (Some(0.3), Some(0.1)));
    }
}
