//! The canonical human effect of an environment in one cell: its statistic and whether it keeps
//! the human sign.
//!
//! The paper defines S over "the cells of one level in which the canonical human effect keeps
//! its sign", with the effect "the change in contributions between the first and last round,
//! the modelled change in cooperation across the ten rounds, or, for a rate outcome, formation
//! of a convention in the majority of runs". A change is read as the directional rule reads it
//! at baseline, by the median over the cell's runs; a rate as the share of runs where it
//! happened, against one half. The paper leaves open whether "keeps its sign" means a sign or
//! the 0.10 margin: Agora reads the sign (strictly on the human side of zero), so an effect of
//! exactly zero neither keeps nor reverses it.

use crate::claims::{CanonicalEffect, EffectRule};
use crate::common::{median, values, Index};

/// The effect's statistic in one cell and the runs it rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CellEffect {
    /// The statistic: the median run-level change, or the share of runs minus one half.
    pub value: f64,
    /// Runs it rests on.
    pub runs: usize,
}

/// The effect's statistic for `model` in `cell` under `variant`; `None` when the cell holds no
/// run with the effect's metric.
pub(crate) fn cell_effect(
    effect: &CanonicalEffect,
    idx: &Index,
    model: &str,
    cell: &str,
    variant: &str,
) -> Option<CellEffect> {
    let v = values(&idx.select(model, &effect.environment, &effect.arm, cell, variant), &effect.metric);
    let value = match effect.rule {
        EffectRule::Change => median(&v)?,
        EffectRule::Majority if v.is_empty() => return None,
        EffectRule::Majority => v.iter().filter(|x| **x >= 0.5).count() as f64 / v.len() as f64 - 0.5,
    };
    Some(CellEffect { value, runs: v.len() })
}

/// Whether the statistic keeps the human sign: sign × value > 0.
pub(crate) fn kept(effect: &CanonicalEffect, value: f64) -> bool {
    effect.sign * value > 0.0
}

/// Whether the statistic has the opposite sign: sign × value < 0.
pub(crate) fn reversed(effect: &CanonicalEffect, value: f64) -> bool {
    effect.sign * value < 0.0
}
