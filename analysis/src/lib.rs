//! Analysis of an Agora store: run-level outcomes and per-condition summaries.
//!
//! This crate reads only the store's tables (the schema written by the engine), never the
//! engine itself, as a results reader reads a tournament's output.
//!
//! [`analyze::analyze`] runs every analysis of `agora analyze`; each has its module, with its
//! row type: [`equivalence`], [`directional`], [`contrasts`] (the audit grid), [`perturbation`],
//! [`divergent`], [`acceptance`], [`heterogeneity`], [`baselines`], [`tipping`],
//! [`wasserstein`], [`formation`] (convention formation), [`punishment`], [`label_prior`]
//! (the naming game's label-prior diagnostic), [`recognition`] (the recognition probe beside
//! behaviour); then [`ladder`] grades the claims (Tier 3 reading the transcript audit through
//! [`mechanism`]) and [`tables`] writes the tables.

pub mod acceptance;
pub mod analyze;
pub mod anchors;
pub mod baselines;
pub mod claims;
mod columns;
mod common;
pub mod contrasts;
pub mod declared;
pub mod deposit;
pub mod directional;
pub mod divergent;
mod effect;
pub mod equivalence;
pub mod error;
pub mod evidence;
pub mod formation;
pub mod heterogeneity;
pub mod human_anchors;
pub mod label_prior;
pub mod ladder;
pub mod mechanism;
pub mod outcomes;
pub mod perturbation;
pub mod punishment;
pub mod recognition;
pub mod replication;
/// The statistics (the `agora-stats` crate), with the summary statistics' names beside them.
pub mod stats {
    pub use crate::summary::Stat;
    pub use agora_stats::*;
}
pub mod summary;
pub mod table;
pub mod tables;
#[cfg(test)]
mod test_support;
pub mod tipping;
pub mod tournament;
pub mod wasserstein;

pub use analyze::{analyze_outcomes, analyze_outcomes_with, Analysis, Table};
pub use common::{Options, CLASSICAL, LEVELS, MIN_RUNS};
pub use declared::Declared;
pub use error::AnalysisError;
pub use outcomes::{run_outcomes, RunOutcome};
pub use summary::{summarize, summarize_outcomes, Condition, GroupSummary, Stat, TippingCurve};
