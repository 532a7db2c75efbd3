//! Naming-game agents: the minimal naming game, memory-window coordination, committed agents.

use std::collections::VecDeque;

use agora_environments::{Action, EnvKind, Feedback, Observation};
use rand::seq::IndexedRandom;
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::policy::{Decision, Policy, PolicyMeta};

const NAMING: &[EnvKind] = &[EnvKind::NamingGame];

fn random_name(obs: &Observation, rng: &mut dyn RngCore) -> Action {
    obs.space.sample(rng)
}

/// Minimal naming game agent (Baronchelli et al. 2006), adapted to simultaneous proposals.
///
/// The agent keeps an inventory of names. It proposes a name drawn uniformly from its
/// inventory (from the pool when the inventory is empty). After a match both partners collapse
/// their inventories to the matched name; after a mismatch each adds the partner's name.
#[derive(Clone, Debug, Default)]
pub struct MinimalNaming {
    inventory: Vec<u32>,
}

pub(crate) static MINIMAL_NAMING: PolicyMeta = PolicyMeta {
    name: "minimal-naming",
    family: "classical",
    memory_depth: None,
    stochastic: true,
    environments: NAMING,
    description: "minimal naming game: inventory of names, collapse on success, learn the partner's name on failure",
    reference: "Baronchelli, Felici, Loreto, Caglioti & Steels (2006) J. Stat. Mech. P06014",
};

impl Policy for MinimalNaming {
    fn meta(&self) -> &'static PolicyMeta {
        &MINIMAL_NAMING
    }
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let action = match self.inventory.choose(rng) {
            Some(name) => Action::Choice(*name),
            None => random_name(obs, rng),
        };
        Decision::Ready(action)
    }
    fn update(&mut self, feedback: &Feedback) {
        let (Some((_, Action::Choice(own))), Some(Action::Choice(other))) =
            (feedback.own.first(), feedback.others.first())
        else {
            return;
        };
        if own == other {
            self.inventory.clear();
            self.inventory.push(*own);
        } else if !self.inventory.contains(other) {
            self.inventory.push(*other);
        }
    }
    fn reset(&mut self) {
        self.inventory.clear();
    }
}

/// Parameters of the memory-window coordination agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryCoordinationParams {
    /// Interactions remembered; `None` follows the environment's memory window (5).
    #[schemars(range(min = 1))]
    pub memory: Option<u32>,
}

/// Best response to recent partners (the model behind Centola & Baronchelli 2015 and
/// Centola et al. 2018): proposes the name its partners used most often in its last `m`
/// interactions, breaking ties at random, and a random name with an empty memory.
#[derive(Clone, Debug)]
pub struct MemoryCoordination {
    memory: Option<u32>,
    seen: VecDeque<u32>,
}

impl MemoryCoordination {
    /// An agent with an empty memory of partners' names.
    pub fn new(params: MemoryCoordinationParams) -> Self {
        MemoryCoordination { memory: params.memory, seen: VecDeque::new() }
    }
}

pub(crate) static MEMORY_COORDINATION: PolicyMeta = PolicyMeta {
    name: "memory-coordination",
    family: "classical",
    memory_depth: Some(5),
    stochastic: true,
    // It reads only the partner's choices, so it plays any repeated coordination on labels.
    environments: &[EnvKind::NamingGame, EnvKind::Coordination],
    description: "proposes the name partners used most often in the last m interactions (ties at random)",
    reference: "Centola & Baronchelli (2015) PNAS 112:1989-94; Centola, Becker, Brackbill & Baronchelli (2018) Science 360:1116-19",
};

/// Longest memory kept, whatever the window asked for.
const MAX_MEMORY: usize = 1024;

impl Policy for MemoryCoordination {
    fn meta(&self) -> &'static PolicyMeta {
        &MEMORY_COORDINATION
    }
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let m = self.memory.unwrap_or(obs.memory) as usize;
        let start = self.seen.len().saturating_sub(m);
        let mut counts: Vec<(u32, usize)> = Vec::new();
        for name in self.seen.iter().skip(start) {
            match counts.iter_mut().find(|(n, _)| n == name) {
                Some((_, c)) => *c += 1,
                None => counts.push((*name, 1)),
            }
        }
        let best = counts.iter().map(|(_, c)| *c).max();
        let action = match best {
            None => random_name(obs, rng),
            Some(best) => {
                let mut tied: Vec<u32> = counts.iter().filter(|(_, c)| *c == best).map(|(n, _)| *n).collect();
                tied.sort_unstable();
                Action::Choice(*tied.choose(rng).expect("invariant: a maximum exists"))
            }
        };
        Decision::Ready(action)
    }
    fn update(&mut self, feedback: &Feedback) {
        if let Some(Action::Choice(other)) = feedback.others.first() {
            self.seen.push_back(*other);
            if self.seen.len() > MAX_MEMORY {
                self.seen.pop_front();
            }
        }
    }
    fn reset(&mut self) {
        self.seen.clear();
    }
}

/// Always proposes the same name, whatever happens (a committed minority member).
#[derive(Clone, Debug)]
pub struct Committed {
    name: u32,
}

impl Committed {
    /// An agent committed to the name with index `name`.
    pub fn new(name: u32) -> Self {
        Committed { name }
    }
}

pub(crate) static COMMITTED: PolicyMeta = PolicyMeta {
    name: "committed",
    family: "classical",
    memory_depth: Some(0),
    stochastic: false,
    environments: NAMING,
    description: "always proposes its committed name",
    reference: "Xie et al. (2011) Phys. Rev. E 84:011130; Centola et al. (2018) Science 360:1116-19",
};

impl Policy for Committed {
    fn meta(&self) -> &'static PolicyMeta {
        &COMMITTED
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(Action::Choice(self.name))
    }
}
