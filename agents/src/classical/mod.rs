//! Classical and scripted policies.

mod axelrod;
mod conditional_cooperator;
mod cooperation_types;
mod naming;
mod roth_erev;
mod scripted;

pub use axelrod::{
    GenerousParams, GenerousTitForTat, GrimTrigger, RandomParams, RandomPlay, SuspiciousTitForTat, TitForTwoTats,
    WinStayLoseShift,
};
pub use conditional_cooperator::{ConditionalCooperator, ConditionalCooperatorParams};
pub use cooperation_types::{ContributorType, CooperationTypes, CooperationTypesParams};
pub use naming::{Committed, MemoryCoordination, MemoryCoordinationParams, MinimalNaming};
pub use roth_erev::{RothErev, RothErevParams};
pub use scripted::{AlwaysCooperate, AlwaysDefect, Sequence, TitForTat};

/// Metadata statics of the scripted policies.
pub(crate) mod scripted_meta {
    pub(crate) use super::axelrod::{
        GENEROUS_TIT_FOR_TAT, GRIM_TRIGGER, RANDOM, SUSPICIOUS_TIT_FOR_TAT, TIT_FOR_TWO_TATS, WIN_STAY_LOSE_SHIFT,
    };
    pub(crate) use super::scripted::{ALWAYS_COOPERATE, ALWAYS_DEFECT, SEQUENCE, TIT_FOR_TAT};
}

/// Metadata statics of the classical policies.
pub(crate) mod meta {
    pub(crate) use super::conditional_cooperator::CONDITIONAL_COOPERATOR;
    pub(crate) use super::cooperation_types::COOPERATION_TYPES;
    pub(crate) use super::naming::{COMMITTED, MEMORY_COORDINATION, MINIMAL_NAMING};
    pub(crate) use super::roth_erev::ROTH_EREV;
}

use agora_environments::{Action, ActionSpace};

use crate::error::AgentError;

/// Checks a parameter of `policy` that is a share or a probability: it lies in [0, 1].
pub(crate) fn check_share(policy: &'static str, field: &'static str, v: f64) -> Result<(), AgentError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(AgentError::InvalidParameter { policy, field, reason: format!("must lie in [0, 1], got {v}") })
    }
}

/// Checks a parameter of `policy` that must be a number no less than zero.
pub(crate) fn check_non_negative(policy: &'static str, field: &'static str, v: f64) -> Result<(), AgentError> {
    if v.is_nan() || v < 0.0 {
        Err(AgentError::InvalidParameter { policy, field, reason: format!("must be non-negative, got {v}") })
    } else {
        Ok(())
    }
}

/// Turns a scripted integer into an action of the given space, clamped into range.
pub(crate) fn action_from_int(space: &ActionSpace, v: i64) -> Action {
    match space {
        ActionSpace::Choice { labels } => Action::Choice(v.clamp(0, labels.len() as i64 - 1) as u32),
        ActionSpace::Amount { min, max } => Action::Amount(v.clamp(*min, *max)),
        ActionSpace::Allocation { targets, max_each } => Action::Allocation(vec![v.clamp(0, *max_each); *targets]),
    }
}
