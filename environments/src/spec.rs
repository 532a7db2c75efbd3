//! Environment specifications as they appear in study files, and their validation.

use serde::{Deserialize, Serialize};

use crate::bargaining::{self, BargainingParams};
use crate::error::EnvError;
use crate::money_request::{self, MoneyRequestParams};
use crate::naming::{self, NamingParams};
use crate::prisoners_dilemma::{self, PdParams};
use crate::public_goods::{self, PublicGoodsParams};
use crate::variants::VariantTable;
use crate::Environment;

/// The four versions of every environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
    pub const ALL: [Variant; 4] = [Variant::C0, Variant::C1, Variant::C2, Variant::C3];

    pub fn as_str(self) -> &'static str {
        match self {
            Variant::C0 => "C0",
            Variant::C1 => "C1",
            Variant::C2 => "C2",
            Variant::C3 => "C3",
        }
    }
}

/// Which game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EnvKind {
    PrisonersDilemma,
    PublicGoods,
    Bargaining,
    MoneyRequest,
    NamingGame,
}

impl EnvKind {
    pub const ALL: [EnvKind; 5] = [
        EnvKind::PrisonersDilemma,
        EnvKind::PublicGoods,
        EnvKind::Bargaining,
        EnvKind::MoneyRequest,
        EnvKind::NamingGame,
    ];

    /// Name used in the store and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvKind::PrisonersDilemma => "prisoners-dilemma",
            EnvKind::PublicGoods => "public-goods",
            EnvKind::Bargaining => "bargaining",
            EnvKind::MoneyRequest => "money-request",
            EnvKind::NamingGame => "naming-game",
        }
    }

    /// One-line description for `agora list environments`.
    pub fn description(self) -> &'static str {
        match self {
            EnvKind::PrisonersDilemma => prisoners_dilemma::DESCRIPTION,
            EnvKind::PublicGoods => public_goods::DESCRIPTION,
            EnvKind::Bargaining => bargaining::DESCRIPTION,
            EnvKind::MoneyRequest => money_request::DESCRIPTION,
            EnvKind::NamingGame => naming::DESCRIPTION,
        }
    }
}

/// An environment with its parameters, as written in a study file, e.g.
/// `PublicGoods(punishment: true)`; omitted fields take their canonical values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EnvSpec {
    PrisonersDilemma(#[serde(default)] PdParams),
    PublicGoods(#[serde(default)] PublicGoodsParams),
    Bargaining(#[serde(default)] BargainingParams),
    MoneyRequest(#[serde(default)] MoneyRequestParams),
    NamingGame(#[serde(default)] NamingParams),
}

impl EnvSpec {
    pub fn kind(&self) -> EnvKind {
        match self {
            EnvSpec::PrisonersDilemma(_) => EnvKind::PrisonersDilemma,
            EnvSpec::PublicGoods(_) => EnvKind::PublicGoods,
            EnvSpec::Bargaining(_) => EnvKind::Bargaining,
            EnvSpec::MoneyRequest(_) => EnvKind::MoneyRequest,
            EnvSpec::NamingGame(_) => EnvKind::NamingGame,
        }
    }

    /// Checks every parameter; the error names the field.
    pub fn validate(&self) -> Result<(), EnvError> {
        match self {
            EnvSpec::PrisonersDilemma(p) => p.validate(),
            EnvSpec::PublicGoods(p) => p.validate(),
            EnvSpec::Bargaining(p) => p.validate(),
            EnvSpec::MoneyRequest(p) => p.validate(),
            EnvSpec::NamingGame(p) => p.validate(),
        }
    }

    /// Number of seats.
    pub fn population(&self) -> usize {
        match self {
            EnvSpec::PrisonersDilemma(_) => 2,
            EnvSpec::PublicGoods(p) => p.group_size,
            EnvSpec::Bargaining(p) => p.population,
            EnvSpec::MoneyRequest(p) => p.population,
            EnvSpec::NamingGame(p) => p.population,
        }
    }

    /// The supplementary arm this specification belongs to (`baseline` when none).
    pub fn arm(&self) -> String {
        match self {
            EnvSpec::PublicGoods(p) if p.punishment => "punishment".into(),
            EnvSpec::Bargaining(p) => p.arm(),
            EnvSpec::NamingGame(p) => p.arm(),
            _ => "baseline".into(),
        }
    }

    /// The memory window shown to agents.
    pub fn memory(&self) -> u32 {
        match self {
            EnvSpec::PrisonersDilemma(p) => p.memory,
            EnvSpec::PublicGoods(p) => p.memory,
            EnvSpec::Bargaining(p) => p.memory,
            EnvSpec::MoneyRequest(p) => p.memory,
            EnvSpec::NamingGame(p) => p.memory,
        }
    }

    /// Sets the memory window (the perturbation library's memory factor).
    pub fn set_memory(&mut self, memory: u32) {
        match self {
            EnvSpec::PrisonersDilemma(p) => p.memory = memory,
            EnvSpec::PublicGoods(p) => p.memory = memory,
            EnvSpec::Bargaining(p) => p.memory = memory,
            EnvSpec::MoneyRequest(p) => p.memory = memory,
            EnvSpec::NamingGame(p) => p.memory = memory,
        }
    }

    /// Sets the group size where the game has one (public goods group, naming population).
    /// Returns false where group size is not a factor of this game.
    pub fn set_group_size(&mut self, size: usize) -> bool {
        match self {
            EnvSpec::PublicGoods(p) => {
                p.group_size = size;
                true
            }
            EnvSpec::NamingGame(p) => {
                p.population = size;
                true
            }
            _ => false,
        }
    }

    /// Seats held by committed agents, with the name index they always propose.
    pub fn committed_seats(&self) -> Vec<(usize, u32)> {
        match self {
            EnvSpec::NamingGame(p) => p.committed_seats(),
            _ => Vec::new(),
        }
    }

    /// Builds the environment for one run in the given variant.
    pub fn build(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        self.validate()?;
        let table = VariantTable::shipped();
        Ok(match self {
            EnvSpec::PrisonersDilemma(p) => {
                Box::new(prisoners_dilemma::PrisonersDilemma::new(p.clone(), variant, table.pd(variant).clone()))
            }
            EnvSpec::PublicGoods(p) => {
                Box::new(public_goods::PublicGoods::new(p.clone(), variant, table.pg(variant).clone()))
            }
            EnvSpec::Bargaining(p) => {
                Box::new(bargaining::Bargaining::new(p.clone(), variant, table.bargain(variant).clone()))
            }
            EnvSpec::MoneyRequest(p) => {
                Box::new(money_request::MoneyRequest::new(p.clone(), variant, table.mr(variant).clone()))
            }
            EnvSpec::NamingGame(p) => Box::new(naming::NamingGame::new(p.clone(), variant, table.ng(variant).clone())?),
        })
    }
}
