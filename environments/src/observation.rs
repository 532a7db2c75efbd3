//! What an agent is shown and what it learns afterwards.

use serde::{Deserialize, Serialize};

use crate::action::{Action, ActionSpace};
use crate::kind::{EnvKind, Role, Variant};

/// Extra facts a decision depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum Context {
    /// Nothing beyond the action space.
    #[default]
    None,
    /// Ultimatum responder: the offer on the table and the pie.
    Offer {
        /// The amount the proposer offers the responder.
        offer: i64,
        /// The amount being divided.
        pie: i64,
    },
    /// Trustee: the multiplied amount received.
    Received {
        /// The investment after multiplication, which the trustee may return part of.
        amount: i64,
    },
    /// Punisher: own contribution and the other members' contributions, targets in seat order.
    Contributions {
        /// The punisher's own contribution this round.
        own: i64,
        /// The other members' contributions, in seat order.
        others: Vec<i64>,
        /// Each member's endowment for the round.
        endowment: i64,
    },
    /// Naming game: the order in which this agent sees the pool (name indices).
    Names {
        /// Indices into the pool, in the order shown.
        order: Vec<u32>,
    },
    /// Binary allocation: the state of this decision (its id in the treatment's enumeration).
    State {
        /// The state id, as the decision records it.
        id: u32,
    },
}

impl Observation {
    /// The choice labels in the order this agent sees them: its own order of the pool where
    /// the game gives one, reversed when `reversed`; empty for amounts.
    pub fn labels_shown(&self, reversed: bool) -> Vec<String> {
        let mut shown: Vec<String> = match (&self.space, &self.context) {
            (ActionSpace::Choice { labels }, Context::Names { order }) => {
                order.iter().map(|i| labels[*i as usize].clone()).collect()
            }
            (ActionSpace::Choice { labels }, _) => labels.to_vec(),
            _ => Vec::new(),
        };
        if reversed {
            shown.reverse();
        }
        shown
    }
}

/// Payoff facts a learning policy needs to normalise reinforcement.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PayoffBounds {
    /// The smallest payoff attainable in one stage.
    pub min: f64,
    /// Mean absolute payoff under uniformly random play (Erev & Roth's A(1)).
    pub mean_abs: f64,
}

/// What one agent is shown before one decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The game being played.
    pub env: EnvKind,
    /// The version of the game.
    pub variant: Variant,
    /// The part the agent plays in this decision.
    pub role: Role,
    /// 1-based round, game or interaction.
    pub round: u32,
    /// Total rounds where the game has a fixed length.
    pub rounds: Option<u32>,
    /// The legal actions.
    pub space: ActionSpace,
    /// Extra facts the decision depends on.
    pub context: Context,
    /// Payoff facts for normalising reinforcement.
    pub payoffs: PayoffBounds,
    /// The environment's memory window (interactions or rounds shown to the agent).
    pub memory: u32,
}

/// What an agent learns once a stage it took part in is resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Feedback {
    /// 1-based round, game or interaction of the stage.
    pub round: u32,
    /// The agent's own decisions in this stage (several where a round has several stages).
    pub own: Vec<(Role, Action)>,
    /// The relevant actions of the others: the partner's move, the others' contributions.
    pub others: Vec<Action>,
    /// The partner's seat, in pairwise games.
    pub partner: Option<usize>,
    /// The agent's payoff from this stage.
    pub payoff: f64,
}
