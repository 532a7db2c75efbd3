//! The leaf types every layer names: which game, which variant, which role.
//!
//! They sit outside the game modules so that a game, the engine, the agents and the analysis
//! can all name them without importing one another.

use serde::{Deserialize, Serialize};

/// The four versions of every environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Variant {
    /// Canonical form.
    C0,
    /// Different cover story and action labels, same payoffs.
    C1,
    /// Different surface and shifted numbers.
    C2,
    /// Divergent payoffs: the human result is no longer the profitable one.
    C3,
}

impl Variant {
    /// Every variant, canonical first.
    pub const ALL: [Variant; 4] = [Variant::C0, Variant::C1, Variant::C2, Variant::C3];

    /// Name used in the store and in study files.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::C0 => "C0",
            Variant::C1 => "C1",
            Variant::C2 => "C2",
            Variant::C3 => "C3",
        }
    }
}

/// Declares the games' names: one line per game, its identifier and its name in the store,
/// which also names its variants file and its rules template.
macro_rules! kinds {
    ($($kind:ident = $name:literal),* $(,)?) => {
        /// Which game.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum EnvKind {
            $(
                #[doc = $name]
                $kind,
            )*
        }

        impl EnvKind {
            /// Every game, in registry order.
            pub const ALL: &'static [EnvKind] = &[$(EnvKind::$kind),*];

            /// Name used in the store and on the command line.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(EnvKind::$kind => $name,)*
                }
            }

            /// The game's variants file (`assets/environments/<name>.ron`), compiled in: its
            /// name and text.
            pub fn variants_file(self) -> (&'static str, &'static str) {
                match self {
                    $(EnvKind::$kind => (
                        concat!($name, ".ron"),
                        include_str!(concat!("../../assets/environments/", $name, ".ron")),
                    ),)*
                }
            }

            /// The game's rules template (`assets/prompts/<name>.j2`), compiled in: its name
            /// and text.
            pub fn template(self) -> (&'static str, &'static str) {
                match self {
                    $(EnvKind::$kind => (
                        concat!($name, ".j2"),
                        include_str!(concat!("../../assets/prompts/", $name, ".j2")),
                    ),)*
                }
            }
        }
    };
}

with_two_by_two_games!(kinds {
    PrisonersDilemma = "prisoners-dilemma",
    PublicGoods = "public-goods",
    Bargaining = "bargaining",
    MoneyRequest = "money-request",
    NamingGame = "naming-game",
} {
    BinaryAllocation = "binary-allocation",
});

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
