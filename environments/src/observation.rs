//! What an agent is shown and what it learns afterwards.

use serde::{Deserialize, Serialize};

use crate::action::{Action, ActionSpace};
use crate::spec::{EnvKind, Variant};

/// The part an agent plays in one decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Role {
    /// Either player of the prisoner's dilemma.
    Player,
    /// Public goods, contribution stage.
    Contributor,
    /// Public goods, punishment stage.
    Punisher,
    /// Ultimatum proposer.
    Proposer,
    /// Ultimatum responder.
    Responder,
    /// Dictator.
    Dictator,
    /// Trust game, first mover.
    Investor,
    /// Trust game, second mover.
    Trustee,
    /// 11–20 money request.
    Requester,
    /// Naming game.
    Namer,
}

impl Role {
    /// Lower-case name used in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Contributor => "contributor",
            Role::Punisher => "punisher",
            Role::Proposer => "proposer",
            Role::Responder => "responder",
            Role::Dictator => "dictator",
            Role::Investor => "investor",
            Role::Trustee => "trustee",
            Role::Requester => "requester",
            Role::Namer => "namer",
        }
    }
}

/// Extra facts a decision depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum Context {
    #[default]
    None,
    /// Ultimatum responder: the offer on the table and the pie.
    Offer { offer: i64, pie: i64 },
    /// Trustee: the multiplied amount received.
    Received { amount: i64 },
    /// Punisher: own contribution and the other members' contributions, targets in seat order.
    Contributions { own: i64, others: Vec<i64>, endowment: i64 },
    /// Naming game: the order in which this agent sees the pool (name indices).
    Names { order: Vec<u32> },
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
    pub env: EnvKind,
    pub variant: Variant,
    pub role: Role,
    /// 1-based round, game or interaction.
    pub round: u32,
    /// Total rounds where the game has a fixed length.
    pub rounds: Option<u32>,
    pub space: ActionSpace,
    pub context: Context,
    pub payoffs: PayoffBounds,
    /// The environment's memory window (interactions or rounds shown to the agent).
    pub memory: u32,
}

/// What an agent learns once a stage it took part in is resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Feedback {
    pub round: u32,
    /// The agent's own decisions in this stage (several where a round has several stages).
    pub own: Vec<(Role, Action)>,
    /// The relevant actions of the others: the partner's move, the others' contributions.
    pub others: Vec<Action>,
    /// The partner's seat, in pairwise games.
    pub partner: Option<usize>,
    pub payoff: f64,
}
