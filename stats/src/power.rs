//! Runs per arm for a two-arm comparison, with a design effect for repeated decisions.
//!
//! # Formula
//! Normal approximation for a two-sided test of a standardised difference d = Δ/σ at level α:
//! the n per arm at which Φ(d√(n/2) − z_{1−α/2}) + Φ(−d√(n/2) − z_{1−α/2}) = 1 − β (close to
//! 2·((z_{1−α/2} + z_{1−β})/d)²). When the outcome is averaged
//! over m decisions per run that correlate with intra-run correlation ρ, the variance of a run
//! mean is inflated by the design effect DE = 1 + (m − 1)ρ relative to m independent decisions;
//! planning on decision-level σ, the runs needed are n·DE/m (at least 2).
//!
//! # References
//! Cohen (1988) Statistical Power Analysis, 2nd ed.; Kish (1965) Survey Sampling (design
//! effect). statsmodels: `NormalIndPower().solve_power(effect_size=d, alpha, power, ratio=1)`.

use super::dist::{norm_cdf, norm_ppf};
use super::StatsError;

/// Runs per arm (fractional; round up to plan) for effect `effect_size` = Δ/σ (σ of one
/// decision), with `decisions` decisions per run correlated at `icc`.
pub fn runs_per_arm(effect_size: f64, alpha: f64, power: f64, decisions: u32, icc: f64) -> Result<f64, StatsError> {
    if !(effect_size.is_finite() && effect_size != 0.0) {
        return Err(StatsError::OutOfRange("effect_size", "must be a non-zero number".into()));
    }
    let open_unit = |x: f64| x > 0.0 && x < 1.0;
    if !(open_unit(alpha) && open_unit(power)) {
        return Err(StatsError::OutOfRange("alpha, power", "must lie in (0, 1)".into()));
    }
    if decisions == 0 || !(0.0..=1.0).contains(&icc) {
        return Err(StatsError::OutOfRange("decisions, icc", "decisions ≥ 1 and icc in [0, 1]".into()));
    }
    // Power of the two-sided z-test with n per arm, both tails counted:
    // Φ(d·√(n/2) − z_{α/2}) + Φ(−d·√(n/2) − z_{α/2}); solved for n by bisection, starting from
    // the one-tail closed form 2((z_{α/2} + z_β)/d)², which it refines downwards.
    let za = norm_ppf(1.0 - alpha / 2.0);
    let d = effect_size.abs();
    let power_at = |n: f64| norm_cdf(d * (n / 2.0).sqrt() - za) + norm_cdf(-d * (n / 2.0).sqrt() - za);
    let (mut lo, mut hi) = (1e-9, 2.0 * ((za + norm_ppf(power)) / d).powi(2) + 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if power_at(mid) < power {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let n = 0.5 * (lo + hi);
    let m = f64::from(decisions);
    let de = 1.0 + (m - 1.0) * icc;
    Ok((n * de / m).max(2.0))
}
