//! Fixed effects per group by within-group demeaning, with CR1 cluster-robust standard errors.
//!
//! # Formula
//! With a fixed effect η_s for every group s (a prompt), y_i = x_iᵀφ + η_{s(i)} + ε_i. By the
//! Frisch–Waugh–Lovell theorem the slope φ̂ of the regression on x and a full set of group
//! dummies equals the slope of ỹ_i = y_i − ȳ_{s(i)} on x̃_i = x_i − x̄_{s(i)} (the SUVA audit paper,
//! Eq. 240.12); the residuals are the same, and so is the slope block of the cluster sandwich,
//!
//! V̂ = G/(G−1) · (N−1)/(N−K) · (X̃ᵀX̃)⁻¹ [Σ_g X̃_gᵀ û_g û_gᵀ X̃_g] (X̃ᵀX̃)⁻¹,
//!
//! so the two differ only in K, the count of estimated parameters in the finite-sample factor.
//! Two conventions, each matched exactly to statsmodels:
//!
//! - `dummies`: K = k + S (the k slopes and the S absorbed group effects) —
//!   `OLS(y, [X, one dummy per group]).fit(cov_type='cluster', cov_kwds={'groups': g},
//!   use_t=True)`, as Stata's `areg`. Right when the groups cut across clusters.
//! - `within`: K = k — the same call on the demeaned ỹ and X̃ without dummies, as Stata's
//!   `xtreg, fe` up to its constant. When every group lies inside one cluster, each group's
//!   effect is estimated from that cluster alone and the cluster sums of X̃ᵀû are unchanged by
//!   it; counting the effects in K then inflates the variance by about N/(N − S), which with a
//!   few replicates per prompt is large (Cameron & Miller 2015 on `areg` against `xtreg`).
//!
//! `auto` (the default) picks `within` when the groups are nested in the clusters and
//! `dummies` otherwise; the answer says which was used. Inference is on t with G − 1 degrees of
//! freedom, as in [`super::ols_cr1()`]. Clusters default to the groups. A regressor that does not
//! vary within any group is absorbed by the fixed effects and refused, as are collinear
//! regressors and fewer than two clusters. Singleton groups are kept (they count in N and, under
//! `dummies`, in K, as in the dummy regression) but carry no information about φ.
//!
//! # References
//! Frisch & Waugh (1933) Econometrica 1:387–401; Lovell (1963) JASA 58:993–1010; Cameron &
//! Miller (2015) J. Hum. Resour. 50:317–372; Leng & Yuan (2024) (prompt fixed effects,
//! clustered by prompt).

use serde::{Deserialize, Serialize};

use super::linalg::{self, norm, RANK_TOL};
use super::ols_cr1::{check_alpha, cluster_index, columns, fit, ClusterFit};
use super::StatsError;

/// How the absorbed group effects count in K of the (N−1)/(N−K) factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeDf {
    /// `within` when every group lies inside one cluster, `dummies` otherwise.
    Auto,
    /// K = k + number of groups (statsmodels OLS with one dummy per group).
    Dummies,
    /// K = k (statsmodels OLS on the group-demeaned data).
    Within,
}

/// A fixed-effects fit: the slopes with CR1 inference and how the effects were counted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FixedEffects {
    /// The slopes, their CR1 inference, N, K, G and the correction factor.
    #[serde(flatten)]
    pub fit: ClusterFit,
    /// Number of groups (fixed effects) S.
    pub groups: usize,
    /// The convention used for K: `dummies` or `within`.
    pub convention: FeDf,
    /// Whether every group lies inside a single cluster.
    pub nested: bool,
}

/// Regresses `y` on the rows of `x` with a fixed effect per `groups` label, by within-group
/// demeaning, with CR1 errors clustered by `clusters` (default: the groups). `x` has no
/// intercept column (it would be absorbed).
pub fn fe_cr1<S: Ord, C: Ord>(
    x: &[Vec<f64>],
    y: &[f64],
    groups: &[S],
    clusters: Option<&[C]>,
    df: FeDf,
    names: Option<&[String]>,
    alpha: f64,
) -> Result<FixedEffects, StatsError> {
    let (cols, labels) = columns(x, y, names)?;
    if cols.is_empty() {
        return Err(StatsError::OutOfRange("x", "needs at least one regressor".into()));
    }
    if groups.len() != y.len() {
        return Err(StatsError::Mismatch("groups", "y", groups.len(), y.len()));
    }
    check_alpha(alpha)?;
    let (gidx, s) = linalg::index(groups);
    let (cidx, g) = match clusters {
        Some(c) => cluster_index(c, y.len())?,
        None => cluster_index(groups, y.len()).map_err(|e| match e {
            StatsError::OutOfRange(_, m) => StatsError::OutOfRange("groups", format!("(the default clusters) {m}")),
            other => other,
        })?,
    };
    // Nested: each group's observations share one cluster.
    let mut owner: Vec<Option<usize>> = vec![None; s];
    let nested = gidx.iter().zip(&cidx).all(|(gi, ci)| *owner[*gi].get_or_insert(*ci) == *ci);
    let convention = match df {
        FeDf::Auto if nested => FeDf::Within,
        FeDf::Auto => FeDf::Dummies,
        other => other,
    };
    let demean = |v: &[f64]| -> Vec<f64> {
        let mut sum = vec![0.0; s];
        let mut count = vec![0usize; s];
        for (x, gi) in v.iter().zip(&gidx) {
            sum[*gi] += x;
            count[*gi] += 1;
        }
        v.iter().zip(&gidx).map(|(x, gi)| x - sum[*gi] / count[*gi] as f64).collect()
    };
    let mut within = Vec::with_capacity(cols.len());
    for (c, name) in cols.iter().zip(&labels) {
        let d = demean(c);
        if norm(&d) <= RANK_TOL * norm(c) {
            return Err(StatsError::OutOfRange(
                "x",
                format!("column `{name}` does not vary within any group: the fixed effects absorb it"),
            ));
        }
        within.push(d);
    }
    let k = cols.len() + if convention == FeDf::Dummies { s } else { 0 };
    let fit = fit(&within, &demean(y), &labels, &cidx, g, k, alpha)?;
    Ok(FixedEffects { fit, groups: s, convention, nested })
}
