//! Bounds on what a study may ask for, checked before anything is allocated.

/// The most runs a plan may hold (Agora's bound): the shipped studies plan at most 2,937; a
/// plan is expanded in memory whole, so a larger one is refused before its runs are built.
pub const MAX_PLAN_RUNS: u64 = 1_000_000;
