//! Intervals for proportions: Wilson's score interval for one, Newcombe's hybrid score interval
//! for the difference of two independent ones.
//!
//! # Formula
//! Wilson: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), z = Φ⁻¹(1 − α/2).
//! Newcombe (method 10): with Wilson limits (l₁, u₁), (l₂, u₂) and d = p̂₁ − p̂₂,
//! lower = d − √((p̂₁ − l₁)² + (u₂ − p̂₂)²), upper = d + √((u₁ − p̂₁)² + (p̂₂ − l₂)²).
//!
//! # References
//! Wilson (1927) JASA 22:209–212; Newcombe (1998) Stat. Med. 17:873–890. statsmodels:
//! `proportion_confint(k, n, alpha, method="wilson")`,
//! `confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")`.

use super::dist::norm_ppf;
use super::StatsError;

fn check_counts(name: &'static str, k: u64, n: u64) -> Result<(), StatsError> {
    if n == 0 {
        return Err(StatsError::TooFew(name, 1));
    }
    if k > n {
        return Err(StatsError::OutOfRange(name, format!("{k} successes out of {n}")));
    }
    Ok(())
}

/// Wilson score interval for k successes in n at level 1 − alpha.
pub fn wilson(k: u64, n: u64, alpha: f64) -> Result<(f64, f64), StatsError> {
    check_counts("k, n", k, n)?;
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::OutOfRange("alpha", format!("must lie in (0, 1), got {alpha}")));
    }
    let (kf, nf) = (k as f64, n as f64);
    let p = kf / nf;
    let z = norm_ppf(1.0 - alpha / 2.0);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / (1.0 + z2 / nf);
    Ok(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Newcombe hybrid score interval for p₁ − p₂: (difference, low, high).
pub fn newcombe(k1: u64, n1: u64, k2: u64, n2: u64, alpha: f64) -> Result<(f64, f64, f64), StatsError> {
    check_counts("k1, n1", k1, n1)?;
    check_counts("k2, n2", k2, n2)?;
    let (l1, u1) = wilson(k1, n1, alpha)?;
    let (l2, u2) = wilson(k2, n2, alpha)?;
    let (p1, p2) = (k1 as f64 / n1 as f64, k2 as f64 / n2 as f64);
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Ok((d, low, high))
}
