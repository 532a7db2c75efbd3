//! Equivalence by two one-sided tests (TOST) against a fixed anchor.
//!
//! # Formula
//! For run-level values y₁…yₙ with mean ȳ and standard error s/√n, the 100(1−2α) % t-interval
//! of ȳ − θ is (ȳ − θ) ± t_{1−α, n−1}·s/√n. Equivalent at margin ε when the interval lies
//! inside (−ε, +ε), which is the same as both one-sided tests rejecting at level α:
//! p_lower = P(T > (ȳ − θ + ε)/(s/√n)), p_upper = P(T < (ȳ − θ − ε)/(s/√n)), T ~ t_{n−1}.
//!
//! Zero variance: the interval is the point ȳ − θ; equivalence holds iff |ȳ − θ| < ε, and the
//! p-values are 0 or 1. Fewer than three values: no test (an error), as the instrument shows
//! such cells as absent.
//!
//! # References
//! Schuirmann (1987) J. Pharmacokinet. Biopharm. 15:657–680; Lakens (2017) Soc. Psychol.
//! Personal. Sci. 8:355–362. scipy: `scipy.stats.ttest_1samp`, `scipy.stats.t.interval`.

use serde::Serialize;

use super::dist::{t_cdf, t_ppf};
use super::{check, StatsError};

/// The result of a TOST.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tost {
    /// Number of values.
    pub n: usize,
    /// Mean ȳ of the values.
    pub mean: f64,
    /// ȳ − θ.
    pub difference: f64,
    /// The two one-sided tests of ȳ − θ: its 100(1−2α) % t-interval, the margin and the p values.
    #[serde(flatten)]
    pub test: TwoOneSided,
    /// Whether the values are constant (the interval is a point; the p values are 0 or 1).
    pub zero_variance: bool,
}

/// Two one-sided tests that a difference d lies within ±ε, at level α.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TwoOneSided {
    /// Lower end of the 100(1−2α) % interval of d.
    pub ci_low: f64,
    /// Upper end of that interval.
    pub ci_high: f64,
    /// Equivalence margin ε.
    pub margin: f64,
    /// p value of the test against d ≤ −ε.
    pub p_lower: f64,
    /// p value of the test against d ≥ +ε.
    pub p_upper: f64,
    /// max(p_lower, p_upper).
    pub p: f64,
    /// Whether the interval lies inside (−ε, +ε), i.e. both one-sided tests reject at α.
    pub equivalent: bool,
}

impl TwoOneSided {
    /// The tests of `d` with standard error and degrees of freedom `spread`: the interval
    /// d ± t_{1−α, df}·se, p_lower = P(T > (d + ε)/se), p_upper = P(T < (d − ε)/se). Without a
    /// spread (constant values) the interval is the point d, equivalent iff |d| < ε, and the p
    /// values are 0 or 1.
    fn of(d: f64, spread: Option<(f64, f64)>, margin: f64, alpha: f64) -> TwoOneSided {
        let Some((se, df)) = spread else {
            let inside = d.abs() < margin;
            return TwoOneSided {
                ci_low: d,
                ci_high: d,
                margin,
                p_lower: if d > -margin { 0.0 } else { 1.0 },
                p_upper: if d < margin { 0.0 } else { 1.0 },
                p: if inside { 0.0 } else { 1.0 },
                equivalent: inside,
            };
        };
        let t = t_ppf(1.0 - alpha, df);
        let (ci_low, ci_high) = (d - t * se, d + t * se);
        let p_lower = 1.0 - t_cdf((d + margin) / se, df);
        let p_upper = t_cdf((d - margin) / se, df);
        TwoOneSided {
            ci_low,
            ci_high,
            margin,
            p_lower,
            p_upper,
            p: p_lower.max(p_upper),
            equivalent: ci_low > -margin && ci_high < margin,
        }
    }
}

/// The mean and its standard error s/√n (sample standard deviation, n − 1); at least two
/// values.
fn mean_se(values: &[f64]) -> (f64, f64) {
    let nf = values.len() as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    (mean, (var / nf).sqrt())
}

/// The two-sided Student-t interval of the mean at `confidence` (0.95: a 95 % interval):
/// (mean, low, high) with ȳ ± t_{(1+confidence)/2, n−1}·s/√n. scipy:
/// `scipy.stats.t.interval(confidence, n - 1, loc=mean, scale=scipy.stats.sem(values))`.
pub fn t_interval(values: &[f64], confidence: f64) -> Result<(f64, f64, f64), StatsError> {
    check("values", values, 2)?;
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::OutOfRange("confidence", format!("must lie in (0, 1), got {confidence}")));
    }
    let (mean, se) = mean_se(values);
    let half = t_ppf(0.5 + confidence / 2.0, values.len() as f64 - 1.0) * se;
    Ok((mean, mean - half, mean + half))
}

/// Tests `values` against `theta` with margin `margin` at level `alpha` (0.05: a 90 % CI).
pub fn tost(values: &[f64], theta: f64, margin: f64, alpha: f64) -> Result<Tost, StatsError> {
    check("values", values, 3)?;
    if !(margin.is_finite() && margin > 0.0) {
        return Err(StatsError::OutOfRange("margin", format!("must be positive, got {margin}")));
    }
    if !(alpha > 0.0 && alpha < 0.5) {
        return Err(StatsError::OutOfRange("alpha", format!("must lie in (0, 0.5), got {alpha}")));
    }
    if !theta.is_finite() {
        return Err(StatsError::NotFinite("theta"));
    }
    let n = values.len();
    let nf = n as f64;
    let (mean, scale) = mean_se(values);
    let d = mean - theta;
    let zero_variance = scale == 0.0 || scale < 1e-15 * mean.abs().max(1.0);
    let spread = (!zero_variance).then_some((scale, nf - 1.0));
    Ok(Tost { n, mean, difference: d, test: TwoOneSided::of(d, spread, margin, alpha), zero_variance })
}

/// The result of a two-sample (Welch) TOST: the difference of two means against zero.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TostTwo {
    /// Values in the first sample (the model's runs).
    pub n_x: usize,
    /// Values in the second sample (the human runs).
    pub n_y: usize,
    /// Mean of the first sample.
    pub mean_x: f64,
    /// Mean of the second sample.
    pub mean_y: f64,
    /// x̄ − ȳ.
    pub difference: f64,
    /// Welch–Satterthwaite degrees of freedom (NaN when both samples are constant).
    pub df: f64,
    /// The two one-sided tests of x̄ − ȳ: its 100(1−2α) % Welch interval, the margin and the p
    /// values.
    #[serde(flatten)]
    pub test: TwoOneSided,
}

/// Two one-sided Welch tests that the means of `x` and `y` differ by less than `margin`, at
/// level `alpha` (0.05: a 90 % interval); each sample needs at least three values.
///
/// # Formula
/// d = x̄ − ȳ, se = √(s_x²/n_x + s_y²/n_y), df = se⁴ / ((s_x²/n_x)²/(n_x−1) + (s_y²/n_y)²/(n_y−1));
/// interval d ± t_{1−α, df}·se; p_lower = P(T > (d + ε)/se), p_upper = P(T < (d − ε)/se).
/// Both samples constant: the interval is the point d, equivalent iff |d| < ε.
///
/// # References
/// Schuirmann (1987); Welch (1947) Biometrika 34:28–35. statsmodels:
/// `statsmodels.stats.weightstats.ttost_ind(x, y, -margin, margin, usevar='unequal')`.
pub fn tost_welch(x: &[f64], y: &[f64], margin: f64, alpha: f64) -> Result<TostTwo, StatsError> {
    check("x", x, 3)?;
    check("y", y, 3)?;
    if !(margin.is_finite() && margin > 0.0) {
        return Err(StatsError::OutOfRange("margin", format!("must be positive, got {margin}")));
    }
    if !(alpha > 0.0 && alpha < 0.5) {
        return Err(StatsError::OutOfRange("alpha", format!("must lie in (0, 0.5), got {alpha}")));
    }
    let (mean_x, se_x) = mean_se(x);
    let (mean_y, se_y) = mean_se(y);
    let (vx, vy) = (se_x * se_x, se_y * se_y);
    let se = (vx + vy).sqrt();
    let d = mean_x - mean_y;
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let constant = se == 0.0 || se < 1e-15 * mean_x.abs().max(mean_y.abs()).max(1.0);
    let df = if constant { f64::NAN } else { (vx + vy).powi(2) / (vx * vx / (nx - 1.0) + vy * vy / (ny - 1.0)) };
    let spread = (!constant).then_some((se, df));
    Ok(TostTwo {
        n_x: x.len(),
        n_y: y.len(),
        mean_x,
        mean_y,
        difference: d,
        df,
        test: TwoOneSided::of(d, spread, margin, alpha),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of a result as JSON, in the order written.
    fn keys(json: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = json;
        while let Some(at) = rest.find("\":") {
            let key = &rest[..at];
            out.push(key[key.rfind('"').map_or(0, |q| q + 1)..].to_string());
            rest = &rest[at + 2..];
        }
        out
    }

    /// `agora stats tost` writes these results as JSON: the shared tests keep their keys where
    /// they stood, in both designs, constant values included.
    #[test]
    fn both_designs_write_the_tests_keys_in_their_places() {
        let tests = ["ci_low", "ci_high", "margin", "p_lower", "p_upper", "p", "equivalent"];
        let one: Vec<&str> = ["n", "mean", "difference"].into_iter().chain(tests).chain(["zero_variance"]).collect();
        let two: Vec<&str> = ["n_x", "n_y", "mean_x", "mean_y", "difference", "df"].into_iter().chain(tests).collect();
        for values in [vec![0.38, 0.41, 0.40, 0.42], vec![0.4; 4]] {
            let t = tost(&values, 0.4, 0.05, 0.05).expect("tost");
            assert_eq!(keys(&serde_json::to_string(&t).expect("json")), one);
            let w = tost_welch(&values, &[0.39, 0.40, 0.41], 0.05, 0.05).expect("welch");
            assert_eq!(keys(&serde_json::to_string(&w).expect("json")), two);
        }
    }
}
