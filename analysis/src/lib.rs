//! Analysis of an Agora store: run-level outcomes and per-condition summaries.
//!
//! This crate reads only the store's tables (the schema written by the engine), never the
//! engine itself, as a results reader reads a tournament's output.

pub mod analyze;
pub mod anchors;
pub mod claims;
pub mod convention;
pub mod error;
pub mod outcomes;
pub mod stats;
pub mod summary;

pub use error::AnalysisError;
pub use outcomes::{run_outcomes, RunOutcome};
pub use summary::{summarize, summarize_outcomes, Condition, GroupSummary, Stat, TippingCurve};
