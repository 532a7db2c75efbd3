//! Statistics, one per module, each with its formula and references: pure functions of their
//! inputs, no store and no SQL (the analysis crate applies them to the store's records). Argument names follow
//! scipy where a counterpart exists; every function is tested against scipy/statsmodels values
//! (`stats/tests/reference.json`, made by `scripts/stats_reference.py`); the transcript
//! audit's statistics (κ, CR1 OLS, fixed effects, logit marginal effects) against statsmodels
//! and scikit-learn values from the same script.

pub mod cliffs_delta;
pub mod dist;
pub mod fe_cr1;
pub mod heterogeneity;
pub mod holm;
pub mod kappa;
mod linalg;
pub mod logit_ame;
pub mod mann_whitney;
pub mod occurrence;
pub mod ols_cr1;
pub mod power;
pub mod proportion;
pub mod spearman;
pub mod tost;
pub mod wasserstein;

pub use cliffs_delta::cliffs_delta;
pub use fe_cr1::{fe_cr1, FeDf, FixedEffects};
pub use heterogeneity::{i_squared, Heterogeneity};
pub use holm::holm;
pub use kappa::{cohen_kappa, Kappa};
pub use logit_ame::{logit_ame, LogitAme};
pub use mann_whitney::{mann_whitney, MannWhitney};
pub use occurrence::{occurrence, Occurrence};
pub use ols_cr1::{ols_cr1, ClusterFit};
pub use power::runs_per_arm;
pub use proportion::{newcombe, wilson};
pub use spearman::{spearman, Spearman};
pub use tost::{t_interval, tost, tost_welch, Tost, TostTwo, TwoOneSided};
pub use wasserstein::{percentile_type7, wasserstein_bootstrap, wasserstein_histogram};

/// Why a statistic cannot be computed from its input.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StatsError {
    /// An input array is empty or too short; the message names it.
    #[error("`{0}` needs at least {1} values")]
    TooFew(&'static str, usize),
    /// A value is NaN or infinite.
    #[error("`{0}` contains a value that is not a finite number")]
    NotFinite(&'static str),
    /// A probability or parameter is out of range.
    #[error("`{0}`: {1}")]
    OutOfRange(&'static str, String),
    /// Arrays that must match in length do not.
    #[error("`{0}` and `{1}` differ in length ({2} and {3})")]
    Mismatch(&'static str, &'static str, usize, usize),
}

pub(crate) fn check(name: &'static str, x: &[f64], min: usize) -> Result<(), StatsError> {
    if x.len() < min {
        return Err(StatsError::TooFew(name, min));
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(StatsError::NotFinite(name));
    }
    Ok(())
}

/// Tolerances used by the reference tests, in one place.
pub mod tolerance {
    /// Relative tolerance for p-values and probabilities.
    pub const P_REL: f64 = 1e-9;
    /// Absolute tolerance for statistics on the unit scale.
    pub const ABS: f64 = 1e-10;
}
