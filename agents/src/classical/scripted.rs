//! Scripted policies for tests and tournaments.

use agora_environments::{Action, EnvKind, Feedback, Observation};
use rand::RngCore;

use crate::classical::action_from_int;
use crate::policy::{Decision, Policy, PolicyMeta};

const PD: &[EnvKind] = &[EnvKind::PrisonersDilemma];

/// Always cooperates (choice 0) in the prisoner's dilemma.
#[derive(Clone, Debug, Default)]
pub struct AlwaysCooperate;

pub(crate) static ALWAYS_COOPERATE: PolicyMeta = PolicyMeta {
    name: "always-cooperate",
    family: "scripted",
    memory_depth: Some(0),
    stochastic: false,
    environments: PD,
    description: "cooperates in every round",
    reference: "Axelrod (1984), The Evolution of Cooperation",
};

impl Policy for AlwaysCooperate {
    fn meta(&self) -> &'static PolicyMeta {
        &ALWAYS_COOPERATE
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(Action::Choice(0))
    }
}

/// Always defects (choice 1) in the prisoner's dilemma.
#[derive(Clone, Debug, Default)]
pub struct AlwaysDefect;

pub(crate) static ALWAYS_DEFECT: PolicyMeta = PolicyMeta {
    name: "always-defect",
    family: "scripted",
    memory_depth: Some(0),
    stochastic: false,
    environments: PD,
    description: "defects in every round",
    reference: "Axelrod (1984), The Evolution of Cooperation",
};

impl Policy for AlwaysDefect {
    fn meta(&self) -> &'static PolicyMeta {
        &ALWAYS_DEFECT
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(Action::Choice(1))
    }
}

/// Cooperates first, then copies the partner's previous move.
#[derive(Clone, Debug, Default)]
pub struct TitForTat {
    last_partner: Option<Action>,
}

pub(crate) static TIT_FOR_TAT: PolicyMeta = PolicyMeta {
    name: "tit-for-tat",
    family: "scripted",
    memory_depth: Some(1),
    stochastic: false,
    environments: PD,
    description: "cooperates first, then repeats the partner's previous move",
    reference: "Rapoport, in Axelrod (1980), J. Conflict Resolution 24:3-25",
};

impl Policy for TitForTat {
    fn meta(&self) -> &'static PolicyMeta {
        &TIT_FOR_TAT
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(self.last_partner.clone().unwrap_or(Action::Choice(0)))
    }
    fn update(&mut self, feedback: &Feedback) {
        self.last_partner = feedback.others.first().cloned();
    }
    fn reset(&mut self) {
        self.last_partner = None;
    }
}

/// Plays a fixed sequence of integers, cycling; each is read in the decision's action space
/// (a choice index, an amount, or the same points for every punishment target) and clamped
/// into range.
#[derive(Clone, Debug)]
pub struct Sequence {
    moves: Vec<i64>,
    next: usize,
}

impl Sequence {
    /// A policy that plays `moves` in order from the first, cycling; `moves` must not be empty.
    pub fn new(moves: Vec<i64>) -> Self {
        Sequence { moves, next: 0 }
    }
}

pub(crate) static SEQUENCE: PolicyMeta = PolicyMeta {
    name: "sequence",
    family: "scripted",
    memory_depth: Some(0),
    stochastic: false,
    environments: EnvKind::ALL,
    description: "plays a fixed, cycling sequence of moves",
    reference: "Axelrod-Python's Cycler strategies",
};

impl Policy for Sequence {
    fn meta(&self) -> &'static PolicyMeta {
        &SEQUENCE
    }
    fn decide(&mut self, obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        let v = self.moves[self.next % self.moves.len()];
        self.next += 1;
        Decision::Ready(action_from_int(&obs.space, v))
    }
    fn reset(&mut self) {
        self.next = 0;
    }
}
