//! Wasserstein distance between two histograms on the same ordered support, normalised by the
//! support's width, with a seeded bootstrap interval over runs.
//!
//! # Formula
//! For shares p and q on support points x₁ < … < x_K, W₁ = Σ_{k<K} |P_k − Q_k|·(x_{k+1} − x_k)
//! with P, Q the cumulative shares; the instrument reports W₁/(x_K − x₁), which lies in [0, 1].
//! The bootstrap resamples runs with replacement (B times, xoshiro256++ seeded), pools their
//! choice counts, and reports percentiles of type 7 (linear interpolation between order
//! statistics, numpy's default) of the B distances.
//!
//! # References
//! Villani (2009) Optimal Transport; Hyndman & Fan (1996) Am. Stat. 50:361–365 (type 7).
//! scipy: `scipy.stats.wasserstein_distance(x, x, p, q) / (x[-1] - x[0])`;
//! numpy: `numpy.percentile(v, q, method="linear")`.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{check, StatsError};

/// W₁ between histograms `p` and `q` (weights, normalised here) on unit-spaced support,
/// divided by the support's width (K − 1).
pub fn wasserstein_histogram(p: &[f64], q: &[f64]) -> Result<f64, StatsError> {
    check("p", p, 2)?;
    check("q", q, 2)?;
    if p.len() != q.len() {
        return Err(StatsError::Mismatch("p", "q", p.len(), q.len()));
    }
    if p.iter().chain(q).any(|v| *v < 0.0) {
        return Err(StatsError::OutOfRange("p, q", "weights must be non-negative".into()));
    }
    let (sp, sq) = (p.iter().sum::<f64>(), q.iter().sum::<f64>());
    if sp <= 0.0 || sq <= 0.0 {
        return Err(StatsError::OutOfRange("p, q", "weights must not all be zero".into()));
    }
    let (mut cp, mut cq, mut w) = (0.0, 0.0, 0.0);
    for k in 0..p.len() - 1 {
        cp += p[k] / sp;
        cq += q[k] / sq;
        w += (cp - cq).abs();
    }
    Ok(w / (p.len() - 1) as f64)
}

/// Percentile of type 7 (`q` in [0, 100]) of `values`.
pub fn percentile_type7(values: &[f64], q: f64) -> Result<f64, StatsError> {
    check("values", values, 1)?;
    if !(0.0..=100.0).contains(&q) {
        return Err(StatsError::OutOfRange("q", format!("must lie in [0, 100], got {q}")));
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q / 100.0;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Ok(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// Point estimate and bootstrap interval: `runs` holds each run's choice counts on the support,
/// `reference` the published shares. Returns (distance, low, high) at `level` (e.g. 0.95).
pub fn wasserstein_bootstrap(
    runs: &[Vec<f64>],
    reference: &[f64],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Result<(f64, f64, f64), StatsError> {
    if runs.is_empty() {
        return Err(StatsError::TooFew("runs", 1));
    }
    if resamples < 10 {
        return Err(StatsError::OutOfRange("resamples", "at least 10".into()));
    }
    let k = reference.len();
    if let Some(r) = runs.iter().find(|r| r.len() != k) {
        return Err(StatsError::Mismatch("run counts", "reference", r.len(), k));
    }
    let pool = |idx: &mut dyn Iterator<Item = usize>| -> Vec<f64> {
        let mut total = vec![0.0; k];
        for i in idx {
            for (t, c) in total.iter_mut().zip(&runs[i]) {
                *t += c;
            }
        }
        total
    };
    let point = wasserstein_histogram(&pool(&mut (0..runs.len())), reference)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut draw = (0..runs.len()).map(|_| rng.random_range(0..runs.len()));
        let pooled = pool(&mut draw);
        if pooled.iter().sum::<f64>() > 0.0 {
            stats.push(wasserstein_histogram(&pooled, reference)?);
        }
    }
    let a = (1.0 - level) / 2.0 * 100.0;
    Ok((point, percentile_type7(&stats, a)?, percentile_type7(&stats, 100.0 - a)?))
}
