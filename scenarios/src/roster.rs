//! Rosters: who sits in a run's seats, by policy and count.

use agora_agents::PolicySpec;
use serde::{Deserialize, Serialize};

/// A population: who sits in the seats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Roster {
    /// Name of the roster, recorded with every run.
    pub name: String,
    /// Model family; classical agents default to `classical`.
    #[serde(default)]
    pub family: Option<String>,
    /// Who fills the seats not held by committed agents (the naming game's tipping arm
    /// commits some seats itself).
    #[schemars(length(min = 1))]
    pub members: Vec<Member>,
}

/// One kind of agent in a roster; `count: None` fills the seats left over. The counts must
/// add up to the environment's seats (less the committed ones), or to fewer when one member
/// leaves out its count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// The policy these seats play.
    pub policy: PolicySpec,
    /// Seats taken; `None` (the default) for the one member that fills the rest.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub count: Option<usize>,
}
