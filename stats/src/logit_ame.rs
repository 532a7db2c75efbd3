//! Logit by maximum likelihood with average marginal effects: the robustness check of a linear
//! probability model (the SUVA audit paper, §240.12).
//!
//! # Formula
//! P(y_i = 1) = Λ(x_iᵀβ), Λ(η) = 1/(1 + e^{−η}). β̂ maximises Σ_i [y_i log Λ_i + (1 − y_i)
//! log(1 − Λ_i)], found by Newton's method (iteratively reweighted least squares, each step a
//! Householder QR of √w·X with w_i = Λ_i(1 − Λ_i)) from β = 0 until no coefficient moves by more
//! than 10⁻¹⁰ of max(1, |β̂|∞). The covariance is the inverse information (XᵀWX)⁻¹, or with
//! `clusters` the CR1 sandwich G/(G−1)·(N−1)/(N−K)·H⁻¹[Σ_g S_g S_gᵀ]H⁻¹ with score sums
//! S_g = Σ_{i∈g} x_i(y_i − Λ_i). Inference is normal (z), as statsmodels does for discrete
//! models.
//!
//! The average marginal effect of regressor j (every regressor treated as continuous, the
//! intercept excluded) is AME_j = β̂_j · mean_i w_i, with the delta-method covariance J V Jᵀ,
//! J_{jl} = 1[j = l]·mean_i w_i + β̂_j · mean_i [w_i (1 − 2Λ_i) x_il].
//!
//! Outcomes other than 0 and 1, a constant outcome, collinear regressors and data whose outcome
//! is (quasi-)perfectly separated by the regressors (no finite maximum: Newton does not
//! converge in 100 steps) are refused.
//!
//! # References
//! Cramer (2003) Logit Models from Economics and Other Fields, ch. 2–3; Greene (2018)
//! Econometric Analysis, 8th ed., §17.3 (marginal effects and the delta method); Albert &
//! Anderson (1984) Biometrika 71:1–10 (separation). statsmodels:
//! `Logit(y, X).fit().get_margeff(at='overall', method='dydx')`.

use serde::Serialize;

use super::dist::{norm_cdf, norm_ppf};
use super::linalg;
use super::ols_cr1::{check_alpha, cluster_index, columns, solve};
use super::StatsError;

/// Most Newton steps before the data are declared separated.
const MAX_ITER: usize = 100;

/// A logit fit and its average marginal effects; coefficient vectors align with `names`, the
/// marginal effects with `ame_names`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogitAme {
    /// Column names (`intercept` first when one was added).
    pub names: Vec<String>,
    /// Coefficients β̂ (log odds).
    pub coef: Vec<f64>,
    /// Standard errors (inverse information, or CR1 with clusters).
    pub se: Vec<f64>,
    /// z = β̂ / se.
    pub z: Vec<f64>,
    /// Two-sided normal p values.
    pub p: Vec<f64>,
    /// Lower ends of the 100(1−α) % normal intervals of β.
    pub ci_low: Vec<f64>,
    /// Upper ends of the 100(1−α) % normal intervals of β.
    pub ci_high: Vec<f64>,
    /// Covariance matrix of β̂.
    pub cov: Vec<Vec<f64>>,
    /// Maximised log likelihood.
    pub loglik: f64,
    /// Newton steps taken.
    pub iterations: usize,
    /// Number of observations N.
    pub n: usize,
    /// Number of clusters G (null without clusters).
    pub clusters: Option<usize>,
    /// The CR1 factor G/(G−1)·(N−1)/(N−K) (null without clusters).
    pub correction: Option<f64>,
    /// Names of the regressors with a marginal effect (all but the intercept).
    pub ame_names: Vec<String>,
    /// Average marginal effects dP(y = 1)/dx_j, averaged over the observations.
    pub ame: Vec<f64>,
    /// Delta-method standard errors of the average marginal effects.
    pub ame_se: Vec<f64>,
    /// ame / ame_se.
    pub ame_z: Vec<f64>,
    /// Two-sided normal p values of the average marginal effects.
    pub ame_p: Vec<f64>,
    /// Lower ends of the 100(1−α) % intervals of the average marginal effects.
    pub ame_ci_low: Vec<f64>,
    /// Upper ends of the 100(1−α) % intervals of the average marginal effects.
    pub ame_ci_high: Vec<f64>,
    /// α of the intervals.
    pub alpha: f64,
}

/// Λ(η), computed without overflow.
fn logistic(eta: f64) -> f64 {
    if eta >= 0.0 {
        1.0 / (1.0 + (-eta).exp())
    } else {
        let e = eta.exp();
        e / (1.0 + e)
    }
}

/// log(1 + e^x) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Fits a logit of `y` (0 or 1) on the rows of `x` (plus a leading intercept when
/// `intercept`), with CR1 standard errors when `clusters` is given, and its average marginal
/// effects. `names` names the columns of `x` (default `x1`, `x2`, …).
pub fn logit_ame<C: Ord>(
    x: &[Vec<f64>],
    y: &[f64],
    clusters: Option<&[C]>,
    intercept: bool,
    names: Option<&[String]>,
    alpha: f64,
) -> Result<LogitAme, StatsError> {
    let (mut cols, mut labels) = columns(x, y, names)?;
    if intercept {
        cols.insert(0, vec![1.0; y.len()]);
        labels.insert(0, "intercept".to_string());
    }
    check_alpha(alpha)?;
    if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| **v != 0.0 && **v != 1.0) {
        return Err(StatsError::OutOfRange("y", format!("must be 0 or 1, got {v} at index {i}")));
    }
    if y.iter().all(|v| *v == y[0]) {
        return Err(StatsError::OutOfRange("y", format!("is {} throughout: a logit needs both outcomes", y[0])));
    }
    let clusters = clusters.map(|c| cluster_index(c, y.len())).transpose()?;
    let (n, k) = (y.len(), cols.len());
    if n <= k {
        return Err(StatsError::TooFew("y", k + 1));
    }
    let eta_of =
        |beta: &[f64]| -> Vec<f64> { (0..n).map(|i| cols.iter().zip(beta).map(|(c, b)| c[i] * b).sum()).collect() };
    let separated = || {
        StatsError::OutOfRange(
            "y",
            "is (quasi-)perfectly separated by `x`: the likelihood has no finite maximum".to_string(),
        )
    };
    let mut beta = vec![0.0; k];
    let mut iterations = 0;
    let mut converged = false;
    while iterations < MAX_ITER {
        iterations += 1;
        let eta = eta_of(&beta);
        let p: Vec<f64> = eta.iter().map(|e| logistic(*e)).collect();
        let sw: Vec<f64> = p.iter().map(|p| (p * (1.0 - p)).sqrt()).collect();
        if sw.iter().any(|w| *w == 0.0 || !w.is_finite()) {
            return Err(separated());
        }
        let wcols: Vec<Vec<f64>> = cols.iter().map(|c| c.iter().zip(&sw).map(|(x, w)| x * w).collect()).collect();
        let z: Vec<f64> = (0..n).map(|i| sw[i] * eta[i] + (y[i] - p[i]) / sw[i]).collect();
        let next = solve(&wcols, &z, &labels)?.coef;
        let step = next.iter().zip(&beta).fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        let scale = next.iter().fold(1.0_f64, |m, b| m.max(b.abs()));
        beta = next;
        if !step.is_finite() {
            return Err(separated());
        }
        if step <= 1e-10 * scale {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(separated());
    }
    let eta = eta_of(&beta);
    let p: Vec<f64> = eta.iter().map(|e| logistic(*e)).collect();
    let w: Vec<f64> = p.iter().map(|p| p * (1.0 - p)).collect();
    let wcols: Vec<Vec<f64>> = cols.iter().map(|c| c.iter().zip(&w).map(|(x, w)| x * w.sqrt()).collect()).collect();
    let hinv = solve(&wcols, &vec![0.0; n], &labels)?.bread();
    let (cov, g, correction) = match &clusters {
        None => (hinv, None, None),
        Some((idx, g)) => {
            let scores: Vec<Vec<f64>> = (0..n).map(|i| cols.iter().map(|c| c[i] * (y[i] - p[i])).collect()).collect();
            let (nf, kf, gf) = (n as f64, k as f64, *g as f64);
            let c = gf / (gf - 1.0) * (nf - 1.0) / (nf - kf);
            (linalg::sandwich(&hinv, &scores, idx, *g, c), Some(*g), Some(c))
        }
    };
    let loglik = -(0..n).map(|i| if y[i] == 1.0 { softplus(-eta[i]) } else { softplus(eta[i]) }).sum::<f64>();
    let q = norm_ppf(1.0 - alpha / 2.0);
    let se: Vec<f64> = (0..k).map(|j| cov[j][j].max(0.0).sqrt()).collect();
    let z: Vec<f64> = beta.iter().zip(&se).map(|(b, s)| b / s).collect();

    // Average marginal effects and their delta-method covariance.
    let nf = n as f64;
    let mean_w = w.iter().sum::<f64>() / nf;
    let curv: Vec<f64> =
        cols.iter().map(|c| (0..n).map(|i| w[i] * (1.0 - 2.0 * p[i]) * c[i]).sum::<f64>() / nf).collect();
    let first = usize::from(intercept);
    let jac: Vec<Vec<f64>> =
        (first..k).map(|j| (0..k).map(|l| (if j == l { mean_w } else { 0.0 }) + beta[j] * curv[l]).collect()).collect();
    let jv: Vec<Vec<f64>> =
        jac.iter().map(|row| (0..k).map(|l| row.iter().zip(&cov).map(|(a, c)| a * c[l]).sum()).collect()).collect();
    let ame: Vec<f64> = (first..k).map(|j| beta[j] * mean_w).collect();
    let ame_se: Vec<f64> =
        jv.iter().zip(&jac).map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>().max(0.0).sqrt()).collect();
    let ame_z: Vec<f64> = ame.iter().zip(&ame_se).map(|(m, s)| m / s).collect();
    let two_sided = |z: &f64| 2.0 * norm_cdf(-z.abs());
    Ok(LogitAme {
        names: labels.clone(),
        p: z.iter().map(two_sided).collect(),
        ci_low: beta.iter().zip(&se).map(|(b, s)| b - q * s).collect(),
        ci_high: beta.iter().zip(&se).map(|(b, s)| b + q * s).collect(),
        coef: beta,
        se,
        z,
        cov,
        loglik,
        iterations,
        n,
        clusters: g,
        correction,
        ame_names: labels[first..].to_vec(),
        ame_p: ame_z.iter().map(two_sided).collect(),
        ame_ci_low: ame.iter().zip(&ame_se).map(|(m, s)| m - q * s).collect(),
        ame_ci_high: ame.iter().zip(&ame_se).map(|(m, s)| m + q * s).collect(),
        ame,
        ame_se,
        ame_z,
        alpha,
    })
}
