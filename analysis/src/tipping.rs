//! Tipping sweeps: the share of runs in which a committed minority's alternative took over,
//! per committed fraction, and the critical mass each sweep brackets. The curves are those of
//! [`crate::summary`]; this module names them as one of the analyses.

use crate::outcomes::RunOutcome;
pub use crate::summary::TippingCurve;

/// The tipping curves of every sweep in the outcomes.
pub(crate) fn tipping(outcomes: &[RunOutcome]) -> Vec<TippingCurve> {
    crate::summary::summarize_outcomes(outcomes).1
}
