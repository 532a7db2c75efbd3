//! Analysis of an Agora store: run-level outcomes and per-condition summaries.
//!
//! This crate reads only the store's tables (the schema written by the engine), never the
//! engine itself, as a results reader reads a tournament's output.
//!
//! [`analyze::analyze`] runs every analysis of `agora analyze`; each has its module, with its
//! row type: [`equivalence`], [`directional`], [`contrasts`] (the audit grid), [`perturbation`],
//! [`divergent`], [`acceptance`], [`heterogeneity`], [`baselines`], [`tipping`],
//! [`wasserstein`], [`formation`] (convention formation), [`punishment`]; then [`ladder`]
//! grades the claims and [`tables`] writes the tables.

pub mod acceptance;
pub mod analyze;
pub mod anchors;
pub mod baselines;
pub mod claims;
mod columns;
mod common;
pub mod contrasts;
pub mod directional;
pub mod divergent;
pub mod equivalence;
pub mod error;
pub mod formation;
pub mod heterogeneity;
pub mod ladder;
pub mod outcomes;
pub mod perturbation;
pub mod punishment;
pub mod stats;
pub mod summary;
pub mod tables;
pub mod tipping;
pub mod wasserstein;

pub use analyze::{analyze_outcomes, Analysis, Table};
pub use error::AnalysisError;
pub use outcomes::{run_outcomes, RunOutcome};
pub use summary::{summarize, summarize_outcomes, Condition, GroupSummary, Stat, TippingCurve};
