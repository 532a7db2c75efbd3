//! Small numerics the games share to compute run-level outcomes from recorded decisions.

use crate::game::RecordedDecision;

/// Compensated sum (Kahan–Babuška–Neumaier), the summation SQLite's `SUM`/`AVG` use, so an
/// outcome computed here equals the same aggregate computed over the store.
pub fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    sum_and_count(values).0
}

/// Compensated mean; NaN for no values.
pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    match sum_and_count(values) {
        (_, 0) => f64::NAN,
        (s, n) => s / n as f64,
    }
}

/// The compensated sum of `values` and how many there were, in one pass.
fn sum_and_count(values: impl IntoIterator<Item = f64>) -> (f64, usize) {
    let (mut s, mut err, mut n) = (0.0f64, 0.0f64, 0usize);
    for r in values {
        let t = s + r;
        if s.abs() > r.abs() {
            err += (s - t) + r;
        } else {
            err += (r - t) + s;
        }
        s = t;
        n += 1;
    }
    (s + err, n)
}

/// One round's aggregate of one role's decisions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundMean {
    /// The round, 1-based.
    pub round: u32,
    /// Mean of `value / scale` (the share).
    pub share: f64,
    /// Mean of `value`.
    pub value: f64,
}

/// Per round (ascending), the mean share and mean value of the decisions taken in `role`.
pub fn per_round(decisions: &[RecordedDecision], role: &str) -> Vec<RoundMean> {
    let mut rounds: std::collections::BTreeMap<u32, Vec<&RecordedDecision>> = std::collections::BTreeMap::new();
    for d in decisions.iter().filter(|d| d.role == role) {
        rounds.entry(d.round).or_default().push(d);
    }
    rounds
        .into_iter()
        .map(|(round, ds)| RoundMean {
            round,
            share: mean(ds.iter().map(|d| d.value / d.scale)),
            value: mean(ds.iter().map(|d| d.value)),
        })
        .collect()
}

/// Mean over rounds of per-round means (each round weighs the same), plain sum as the
/// analysis has always taken it.
pub fn mean_over_rounds(rounds: &[RoundMean], pick: impl Fn(&RoundMean) -> f64) -> f64 {
    rounds.iter().map(pick).sum::<f64>() / rounds.len() as f64
}

/// Ordinary least-squares slope of `y` on `x`; `None` with fewer than two points or no spread.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Pearson correlation of `y` with `x`; `None` with fewer than two points or no spread in
/// either.
pub fn correlation(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// The share of rounds a two-action choice took action 0, with its first, last and modelled
/// change across rounds (slope times the span), named `<stem>`, `<stem>_r1`, `<stem>_last`,
/// `<stem>_change`.
pub fn choice_zero_share(decisions: &[RecordedDecision], role: &str, stem: &str) -> Vec<(String, f64)> {
    let rounds = per_round(decisions, role);
    if rounds.is_empty() {
        return Vec::new();
    }
    let mean_value = mean_over_rounds(&rounds, |r| r.value);
    let mut out = vec![
        (stem.to_string(), 1.0 - mean_value),
        (format!("{stem}_r1"), 1.0 - rounds[0].value),
        (format!("{stem}_last"), 1.0 - rounds[rounds.len() - 1].value),
    ];
    let pts: Vec<(f64, f64)> = rounds.iter().map(|r| (f64::from(r.round), 1.0 - r.value)).collect();
    if let Some(b) = slope(&pts) {
        out.push((format!("{stem}_change"), b * (pts.len() as f64 - 1.0)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sum_keeps_what_a_plain_sum_loses() {
        let v = [1e16, 1.0, -1e16];
        assert_eq!(v.iter().sum::<f64>(), 0.0);
        assert_eq!(sum(v), 1.0);
        assert_eq!(mean([0.25, 0.5, 0.75, 1.0]), 0.625);
        assert!(mean([]).is_nan());
    }

    #[test]
    fn slope_of_a_line_and_of_no_spread() {
        assert_eq!(slope(&[(1.0, 1.0), (2.0, 3.0), (3.0, 5.0)]), Some(2.0));
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 3.0)]), None);
        assert_eq!(slope(&[(1.0, 1.0)]), None);
    }
}
