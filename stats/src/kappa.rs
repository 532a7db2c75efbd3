//! Cohen's κ between two label vectors, with its asymptotic standard error, the confusion
//! matrix and per-code recall and precision.
//!
//! # Formula
//! With the confusion matrix n_ij (rows: labels of `y1`, the reference; columns: `y2`),
//! p_ij = n_ij/n, row shares r_i and column shares c_j:
//!
//! p_o = Σ_i p_ii, p_e = Σ_i r_i c_i, κ = (p_o − p_e)/(1 − p_e)   (the SUVA audit paper, Eq. 240.10).
//!
//! Its large-sample variance (Fleiss, Cohen & Everitt 1969) is
//! [Σ_i p_ii (1 − (r_i + c_i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (c_i + r_j)² − (κ − p_e(1 − κ))²]
//! / ((1 − p_e)² n), giving the normal interval κ ± z_{1−α/2}·se; under H₀: κ = 0 it is
//! (p_e + p_e² − Σ_i r_i c_i (r_i + c_i)) / ((1 − p_e)² n), giving z and a two-sided p. Recall
//! of code i is n_ii / Σ_j n_ij (how much of the reference's code i `y2` finds), precision
//! n_ii / Σ_j n_ji; either is null when its denominator is zero. κ is undefined, and refused,
//! when both vectors use one and the same single label (p_e = 1).
//!
//! Labels are ordered as given in `labels`, or else sorted (as scikit-learn's `np.unique`);
//! codes in `labels` that neither vector uses get zero rows and columns and do not change κ.
//!
//! # References
//! Cohen (1960) Educ. Psychol. Meas. 20:37–46; Fleiss, Cohen & Everitt (1969) Psychol. Bull.
//! 72:323–327. scikit-learn: `cohen_kappa_score`, `confusion_matrix`, `recall_score`,
//! `precision_score`; statsmodels: `stats.inter_rater.cohens_kappa` (`std_kappa`,
//! `std_kappa0`).

use std::fmt::Debug;

use serde::Serialize;

use super::dist::{norm_cdf, norm_ppf};
use super::ols_cr1::check_alpha;
use super::StatsError;

/// κ with its inference and the per-code breakdown; per-code vectors align with `labels`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kappa<L> {
    /// Number of labelled items.
    pub n: usize,
    /// The codes, in the order of the rows and columns of `confusion`.
    pub labels: Vec<L>,
    /// Observed agreement p_o.
    pub p_o: f64,
    /// Agreement expected by chance from the two marginals, p_e.
    pub p_e: f64,
    /// Cohen's κ.
    pub kappa: f64,
    /// Asymptotic standard error of κ.
    pub se: f64,
    /// Lower end of the 100(1−α) % normal interval.
    pub ci_low: f64,
    /// Upper end of the 100(1−α) % normal interval.
    pub ci_high: f64,
    /// κ / se₀, with se₀ the standard error under κ = 0 (null when se₀ = 0).
    pub z: Option<f64>,
    /// Two-sided p value of κ = 0 (null when se₀ = 0).
    pub p: Option<f64>,
    /// Counts: row i is `y1`'s code i, column j is `y2`'s code j.
    pub confusion: Vec<Vec<u64>>,
    /// How often `y1` uses each code (the row sums).
    pub support: Vec<u64>,
    /// Per-code recall of `y2` against `y1` (null where `y1` never uses the code).
    pub recall: Vec<Option<f64>>,
    /// Per-code precision of `y2` against `y1` (null where `y2` never uses the code).
    pub precision: Vec<Option<f64>>,
    /// α of the interval.
    pub alpha: f64,
}

/// κ of `y2` against `y1` (equal lengths, at least one item), over `labels` when given (every
/// used label must be among them) or the sorted labels used.
pub fn cohen_kappa<L: Ord + Clone + Debug>(
    y1: &[L],
    y2: &[L],
    labels: Option<&[L]>,
    alpha: f64,
) -> Result<Kappa<L>, StatsError> {
    if y1.is_empty() {
        return Err(StatsError::TooFew("y1", 1));
    }
    if y2.is_empty() {
        return Err(StatsError::TooFew("y2", 1));
    }
    if y1.len() != y2.len() {
        return Err(StatsError::Mismatch("y1", "y2", y1.len(), y2.len()));
    }
    check_alpha(alpha)?;
    let labels: Vec<L> = match labels {
        Some(l) => {
            let mut seen: Vec<&L> = l.iter().collect();
            seen.sort();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(StatsError::OutOfRange("labels", format!("{:?} appears more than once", w[0])));
            }
            if l.is_empty() {
                return Err(StatsError::TooFew("labels", 1));
            }
            l.to_vec()
        }
        None => {
            let mut all: Vec<L> = y1.iter().chain(y2).cloned().collect();
            all.sort();
            all.dedup();
            all
        }
    };
    let mut order: Vec<(&L, usize)> = labels.iter().zip(0..).collect();
    order.sort();
    let position = |field: &'static str, v: &L, i: usize| {
        order
            .binary_search_by(|(l, _)| (*l).cmp(v))
            .map(|at| order[at].1)
            .map_err(|_| StatsError::OutOfRange(field, format!("label {v:?} at index {i} is not among `labels`")))
    };
    let m = labels.len();
    let mut confusion = vec![vec![0u64; m]; m];
    for (i, (a, b)) in y1.iter().zip(y2).enumerate() {
        confusion[position("y1", a, i)?][position("y2", b, i)?] += 1;
    }
    let n = y1.len();
    let nf = n as f64;
    let support: Vec<u64> = confusion.iter().map(|row| row.iter().sum()).collect();
    let col: Vec<u64> = (0..m).map(|j| confusion.iter().map(|row| row[j]).sum()).collect();
    let r: Vec<f64> = support.iter().map(|v| *v as f64 / nf).collect();
    let c: Vec<f64> = col.iter().map(|v| *v as f64 / nf).collect();
    let p_o = (0..m).map(|i| confusion[i][i] as f64).sum::<f64>() / nf;
    let p_e: f64 = r.iter().zip(&c).map(|(a, b)| a * b).sum();
    if p_e >= 1.0 {
        return Err(StatsError::OutOfRange(
            "y1, y2",
            "both use one and the same single label: chance agreement is 1 and κ is undefined".into(),
        ));
    }
    let kappa = (p_o - p_e) / (1.0 - p_e);
    let p = |i: usize, j: usize| confusion[i][j] as f64 / nf;
    let term_a: f64 = (0..m).map(|i| p(i, i) * (1.0 - (r[i] + c[i]) * (1.0 - kappa)).powi(2)).sum();
    let term_b: f64 = (0..m)
        .flat_map(|i| (0..m).filter(move |j| *j != i).map(move |j| (i, j)))
        .map(|(i, j)| p(i, j) * (c[i] + r[j]).powi(2))
        .sum::<f64>()
        * (1.0 - kappa).powi(2);
    let term_c = (kappa - p_e * (1.0 - kappa)).powi(2);
    let denom = (1.0 - p_e).powi(2) * nf;
    let se = ((term_a + term_b - term_c) / denom).max(0.0).sqrt();
    let var0 = (p_e + p_e * p_e - (0..m).map(|i| c[i] * r[i] * (c[i] + r[i])).sum::<f64>()) / denom;
    let se0 = var0.max(0.0).sqrt();
    let z = (se0 > 0.0).then(|| kappa / se0);
    let q = norm_ppf(1.0 - alpha / 2.0);
    let ratio = |num: u64, den: u64| (den > 0).then(|| num as f64 / den as f64);
    Ok(Kappa {
        n,
        p_o,
        p_e,
        kappa,
        se,
        ci_low: kappa - q * se,
        ci_high: kappa + q * se,
        z,
        p: z.map(|z| 2.0 * norm_cdf(-z.abs())),
        recall: (0..m).map(|i| ratio(confusion[i][i], support[i])).collect(),
        precision: (0..m).map(|i| ratio(confusion[i][i], col[i])).collect(),
        confusion,
        support,
        labels,
        alpha,
    })
}
