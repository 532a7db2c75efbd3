//! The behavioural profile's computations (the profile methods), each a pure function in
//! its own module with its formula and the seed section it follows.
//!
//! - [`range`]: centre M, inner range I and outer range O of one measure from its eleven
//!   reference results and its checked results (the profile methods §M04).
//! - [`replace`]: a question version's complete result and its locally replaced (checked)
//!   results, with the measure's fixed weights (§A0, §B0, §B4, §C0, §D2).
//! - [`consistency`]: D1's compatibility and D3's regularity scores, recomputed from replaced
//!   choice distributions (§D0, §D1, §D3).
//! - [`measure`]: the whole per-measure pipeline: components of eleven versions → reference and
//!   checked results → M, I, O.
//! - [`combine`]: Category A's fixed task weights, applied separately to the averages and to
//!   each range endpoint (§M04, §A0).
//! - [`questionnaire`]: Category E's item scores, item means, version results and checked
//!   results (§E0–§E9).
//! - [`gr_open`], [`gr_binary`]: General Robustness's open-allocation comparison (mean shift and
//!   W₁ with an independent two-sample bootstrap) and binary comparison (Δp with Newcombe's
//!   interval) (§GR1, §GR2).
//!
//! Every worked example of those sections is a unit test beside its formula. The ranges are
//! not confidence intervals (§M04: "they are not confidence intervals"); only GR reports
//! intervals.

pub mod combine;
pub mod consistency;
pub mod gr_binary;
pub mod gr_open;
pub mod measure;
pub mod questionnaire;
pub mod range;
pub mod replace;
pub mod rows;

use serde::{Deserialize, Serialize};

/// The number of question versions per measure: BASE and C01–C10 (§M04 step 1, "u₀,…,u₁₀").
pub const VERSIONS: usize = 11;

/// Why a profile computation refuses its input: the field (as a path into the input, e.g.
/// `versions[3].points[2]`) and the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{field}`: {reason}")]
pub struct ProfileError {
    /// The offending field, as a path into the input.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ProfileError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ProfileError { field: field.into(), reason: reason.into() }
    }
}

/// One of a task's three economic conditions (§A0, §B0, §C0, §D0: "low", "middle" and "high"
/// refer to condition values, not to scores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    /// The low condition value (e.g. a total of 100, T = 35, stake ×1).
    Low,
    /// The middle condition value (e.g. a total of 1,000, T = 45, stake ×10).
    Middle,
    /// The high condition value (e.g. a total of 10,000, T = 55, stake ×100).
    High,
}

impl Condition {
    /// 0, 1 or 2: the condition's position in the low–middle–high order.
    pub fn index(self) -> usize {
        match self {
            Condition::Low => 0,
            Condition::Middle => 1,
            Condition::High => 2,
        }
    }
}

/// Refuses an empty list or one holding a non-finite number.
pub(crate) fn finite(field: &str, values: &[f64]) -> Result<(), ProfileError> {
    if values.is_empty() {
        return Err(ProfileError::new(field, "is empty"));
    }
    finite_items(field, values)
}

/// Refuses a non-finite number in `values` (which may be empty).
pub(crate) fn finite_items(field: &str, values: &[f64]) -> Result<(), ProfileError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(ProfileError::new(format!("{field}[{i}]"), "is not a finite number")),
        None => Ok(()),
    }
}

/// Refuses a value outside [lo, hi] (or a non-finite one).
pub(crate) fn within(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), ProfileError> {
    if !value.is_finite() {
        return Err(ProfileError::new(field, "is not a finite number"));
    }
    if value < lo || value > hi {
        return Err(ProfileError::new(field, format!("{value} lies outside [{lo}, {hi}]")));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing {
    /// Asserts |got − want| ≤ tol, naming what is compared.
    pub(crate) fn close(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (±{tol})");
    }
}
