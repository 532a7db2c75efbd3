//! The game registry: one module per game, one line per game in the `games!` list below.
//!
//! A study file writes a game as its parameters, e.g. `PublicGoods(punishment: true)`, with
//! omitted fields at their canonical values; [`EnvSpec`] is that value, and [`EnvSpec::game`]
//! is the one place that hands out the game behind it.

pub mod bargaining;
pub mod binary_allocation;
pub mod money_request;
pub mod naming;
pub mod prisoners_dilemma;
pub mod public_goods;
pub mod two_by_two;

use serde::{Deserialize, Serialize};

use crate::error::EnvError;
use crate::game::Game;
use crate::kind::{EnvKind, Variant};
use crate::Environment;

/// Declares the registry: the study-file form [`EnvSpec`] and its dispatch to the games.
macro_rules! games {
    // The games with a module each, then the 2×2 games by name (`with_two_by_two_games!`).
    ($($kind:ident($params:ty, $description:expr),)* ; $($tkind:ident = $tname:literal,)*) => {
        games! {
            @all
            $($kind($params, $description),)*
            $($tkind(
                two_by_two::TwoByTwoParams<{ EnvKind::$tkind as usize }>,
                two_by_two::TwoByTwoParams::<{ EnvKind::$tkind as usize }>::description()
            ),)*
        }
    };
    (@all $($kind:ident($params:ty, $description:expr)),* $(,)?) => {
        /// A game with its parameters, as written in a study file.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum EnvSpec {
            $(
                #[doc = concat!("`", stringify!($kind), "(...)`: see [`", stringify!($params), "`].")]
                #[schemars(description = $description)]
                $kind(#[serde(default)] $params),
            )*
        }

        /// The most seats a recorded run may have (Agora's bound): the instrument's societies hold 2
/// to 48; a larger population is refused by [`EnvSpec::validate`] before anything is allocated.
pub const MAX_POPULATION: usize = 10_000;

/// The most decisions a recorded run may ask for (Agora's bound): the shipped runs ask for at
/// most 80,000 (a naming game capped at 20,000 interactions, before and after its onset); a
/// longer run (`rounds`, `games`, `cap`, `replicates`) is refused by [`EnvSpec::validate`]
/// before anything is allocated.
pub const MAX_DECISIONS: u64 = 1_000_000;

/// Memory a run holds per decision until it is stored: 381 bytes measured (the peak resident
/// size of a 200,000-round dilemma above a 1,000-round one, per decision), rounded up.
pub const BYTES_PER_DECISION: u64 = 400;

/// A byte count for people: `1.5 GiB`, `381.5 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

impl EnvSpec {
            /// The game behind this specification.
            pub fn game(&self) -> &dyn Game {
                match self {
                    $(EnvSpec::$kind(p) => p,)*
                }
            }

            /// The game behind this specification, to change a factor.
            pub fn game_mut(&mut self) -> &mut dyn Game {
                match self {
                    $(EnvSpec::$kind(p) => p,)*
                }
            }

            /// Which game: the registry line says.
            pub fn kind(&self) -> EnvKind {
                match self {
                    $(EnvSpec::$kind(_) => EnvKind::$kind,)*
                }
            }

            /// The canonical specification of a game (every parameter at its default).
            pub fn canonical(kind: EnvKind) -> EnvSpec {
                match kind {
                    $(EnvKind::$kind => EnvSpec::$kind(<$params>::default()),)*
                }
            }
        }

        /// One line for `agora list environments`.
        pub fn description(kind: EnvKind) -> &'static str {
            match kind {
                $(EnvKind::$kind => $description,)*
            }
        }
    };
}

with_two_by_two_games!(games {
    PrisonersDilemma(prisoners_dilemma::PdParams, prisoners_dilemma::DESCRIPTION),
    PublicGoods(public_goods::PgParams, public_goods::DESCRIPTION),
    Bargaining(bargaining::BargainParams, bargaining::DESCRIPTION),
    MoneyRequest(money_request::MrParams, money_request::DESCRIPTION),
    NamingGame(naming::NgParams, naming::DESCRIPTION),
    BinaryAllocation(binary_allocation::BaParams, binary_allocation::DESCRIPTION),
    ;
} {});

impl EnvSpec {
    /// What the game declares about its outcomes, with its metrics, as the engine records
    /// it with the runs of its environment.
    pub fn declaration(&self) -> crate::game::Declaration {
        let kind = self.kind();
        let g = self.game();
        crate::game::Declaration {
            environment: kind.as_str(),
            order: EnvKind::ALL.iter().position(|k| *k == kind).unwrap_or(usize::MAX),
            metrics: g.metrics(),
            headline: g.headline(),
            canonical: g.canonical_effect(),
            divergent: g.divergent(),
            indicators: g.indicators(),
            no_indicator: g.no_indicator(),
        }
    }

    /// Checks every parameter; the error names the field. A recorded run's population is
    /// bounded by [`MAX_POPULATION`], and its length by [`MAX_DECISIONS`], before anything is
    /// allocated.
    pub fn validate(&self) -> Result<(), EnvError> {
        self.game().validate()?;
        let n = self.population();
        if n > MAX_POPULATION {
            return Err(EnvError::InvalidParameter {
                field: "population",
                reason: format!(
                    "{n} seats; a recorded run holds at most {MAX_POPULATION} (every seat is an entity with a \
                     policy, and every decision a record); `agora network` plays millions of unrecorded agents"
                ),
            });
        }
        let (decisions, _) = self.expected_decisions();
        if decisions > MAX_DECISIONS {
            return Err(EnvError::InvalidParameter {
                field: self.game().length_field(),
                reason: format!(
                    "a run would ask for {decisions} decisions, about {} of memory until it is stored \
                     ({BYTES_PER_DECISION} bytes each); a recorded run asks for at most {MAX_DECISIONS} (about {})",
                    human_bytes(decisions.saturating_mul(BYTES_PER_DECISION)),
                    human_bytes(MAX_DECISIONS * BYTES_PER_DECISION)
                ),
            });
        }
        Ok(())
    }

    /// Number of seats.
    pub fn population(&self) -> usize {
        self.game().population()
    }

    /// The supplementary arm this specification belongs to (`baseline` when none).
    pub fn arm(&self) -> String {
        self.game().arm()
    }

    /// The memory window shown to agents.
    pub fn memory(&self) -> u32 {
        self.game().memory()
    }

    /// Sets the memory window (the perturbation library's memory factor).
    pub fn set_memory(&mut self, memory: u32) {
        self.game_mut().set_memory(memory)
    }

    /// Sets the group size where the game has one; false where it is not a factor of the game.
    pub fn set_group_size(&mut self, size: usize) -> bool {
        self.game_mut().set_group_size(size)
    }

    /// Seats held by committed agents, with the choice they always make.
    pub fn committed_seats(&self) -> Vec<(usize, u32)> {
        self.game().committed_seats()
    }

    /// Decisions a run asks for, and whether the count is an upper bound.
    pub fn expected_decisions(&self) -> (u64, bool) {
        self.game().expected_decisions()
    }

    /// Builds the environment for one run in the given variant.
    pub fn build(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        self.validate()?;
        self.game().build_env(variant)
    }
}

/// What a game declares about its outcomes ([`crate::game::Declaration`]), from its canonical
/// specification: the engine records it with every run of the game, and the analysis reads it
/// from the store.
pub fn declaration(kind: EnvKind) -> crate::game::Declaration {
    EnvSpec::canonical(kind).declaration()
}

/// Every game's declaration, in registry order.
pub fn declarations() -> Vec<crate::game::Declaration> {
    EnvKind::ALL.iter().map(|k| declaration(*k)).collect()
}

#[cfg(test)]
mod tests {
    //! Registry tests: every game that is registered gets these checks for free, so a game
    //! without a primary metric, a variant or labels for its choices fails here.

    use rand::SeedableRng;

    use super::*;
    use crate::game::{RecordedDecision, RunView};
    use crate::{Action, ActionSpace, Request};

    /// Plays a canonical run of every game in every variant, always taking the last option
    /// of a choice and the top of an amount, and hands each stage's requests to `check`.
    fn play_all(mut check: impl FnMut(&EnvSpec, Variant, &Request)) {
        for kind in EnvKind::ALL {
            let spec = EnvSpec::canonical(*kind);
            for variant in Variant::ALL {
                let mut env = spec.build(variant).unwrap_or_else(|e| panic!("{kind:?} {variant:?}: {e}"));
                let mut rng = rand::rngs::StdRng::seed_from_u64(3);
                let mut stages = 0;
                while !env.is_done() && stages < 60 {
                    let requests = env.pending(&mut rng);
                    let actions: Vec<(usize, Action)> = requests
                        .iter()
                        .map(|r| {
                            check(&spec, variant, r);
                            let a = match &r.observation.space {
                                ActionSpace::Choice { labels } => Action::Choice(labels.len() as u32 - 1),
                                ActionSpace::Amount { max, .. } => Action::Amount(*max),
                                ActionSpace::Allocation { targets, .. } => Action::Allocation(vec![0; *targets]),
                            };
                            (r.agent, a)
                        })
                        .collect();
                    env.resolve(&actions, &mut rng).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
                    stages += 1;
                }
            }
        }
    }

    #[test]
    fn every_game_has_a_primary_metric_and_a_description() {
        for kind in EnvKind::ALL {
            let spec = EnvSpec::canonical(*kind);
            assert_eq!(spec.kind(), *kind);
            assert!(spec.game().metrics().iter().any(|m| m.primary), "{kind:?} has no primary metric");
            assert!(!description(*kind).is_empty());
            let mut names: Vec<&str> = spec.game().metrics().iter().map(|m| m.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), spec.game().metrics().len(), "{kind:?}: metric names repeat");
        }
    }

    #[test]
    fn every_declaration_names_the_games_own_metrics_and_arms() {
        for d in declarations() {
            let kind = EnvKind::ALL[d.order];
            assert_eq!(kind.as_str(), d.environment);
            // A family of metrics is written with a placeholder (`choice_{request}`).
            let known = |m: &str| {
                d.metrics.iter().any(|x| match x.name.split_once('{') {
                    Some((stem, _)) => m.len() > stem.len() && m.starts_with(stem),
                    None => x.name == m,
                })
            };
            let mut names: Vec<&str> = d.headline.iter().map(|h| h.metric).collect();
            names.extend(d.divergent.iter().map(|v| v.metric));
            // The columns printed after a run, for every arm a game has.
            let game = EnvSpec::canonical(kind);
            for arm in ["baseline", "punishment", "ultimatum", "dictator", "trust", "ultimatum-fixed-offer", "tipping"]
            {
                names.extend(game.game().summary(arm).iter().map(|c| c.metric));
            }
            names.extend(d.canonical.iter().map(|c| c.metric));
            for m in names {
                assert!(known(m), "{}: {m} is not one of its metrics", d.environment);
            }
            if let Some(c) = &d.canonical {
                assert!(c.sign == 1.0 || c.sign == -1.0, "{}", d.environment);
            }
            for i in d.indicators {
                assert!(!d.no_indicator.iter().any(|n| n.role == i.role || n.role == "*"), "{}", d.environment);
            }
        }
        // The three canonical effects the instrument paper names, and no other.
        let with: Vec<&str> = declarations().iter().filter(|d| d.canonical.is_some()).map(|d| d.environment).collect();
        assert_eq!(with, ["prisoners-dilemma", "public-goods", "naming-game"]);
    }

    #[test]
    fn every_game_builds_in_every_variant() {
        for kind in EnvKind::ALL {
            for variant in Variant::ALL {
                let spec = EnvSpec::canonical(*kind);
                let env = spec.build(variant).unwrap_or_else(|e| panic!("{kind:?} lacks {variant:?}: {e}"));
                assert_eq!(env.kind(), *kind);
                assert_eq!(env.population(), spec.population());
                let w = spec.game().wording(variant);
                assert!(!w.paradigm.is_empty() && !w.keywords.is_empty() && !w.history_columns.is_empty());
            }
        }
    }

    #[test]
    fn every_choice_is_shown_by_its_label_never_by_a_number() {
        play_all(|spec, variant, request| {
            let w = spec.game().wording(variant);
            if let ActionSpace::Choice { labels } = &request.observation.space {
                for (i, label) in labels.iter().enumerate() {
                    let shown = w.format_action(&Action::Choice(i as u32));
                    assert_eq!(&shown, label, "{:?} {variant:?}: choice {i} shown as {shown:?}", spec.kind());
                    assert!(shown.parse::<f64>().is_err(), "{:?}: choice {i} has a numeric label", spec.kind());
                }
            }
            let q = spec.game().question(&request.observation);
            assert!(
                !q.starts_with("Your decision as"),
                "{:?}: no question for {:?}",
                spec.kind(),
                request.observation.role
            );
            spec.game().rules(&request.observation, false).expect("rules");
        });
    }

    #[test]
    fn outcomes_name_only_declared_metrics() {
        for kind in EnvKind::ALL {
            let spec = EnvSpec::canonical(*kind);
            let mut env = spec.build(Variant::C0).expect("builds");
            let mut rng = rand::rngs::StdRng::seed_from_u64(9);
            let (mut decisions, mut interactions) = (Vec::new(), Vec::new());
            while !env.is_done() {
                let requests = env.pending(&mut rng);
                let actions: Vec<(usize, Action)> =
                    requests.iter().map(|r| (r.agent, r.observation.space.sample(&mut rng))).collect();
                let step = env.resolve(&actions, &mut rng).expect("legal");
                for d in &step.decisions {
                    decisions.push(RecordedDecision {
                        round: step.round,
                        seat: d.agent as u32,
                        role: d.role.as_str(),
                        value: d.value,
                        scale: d.scale,
                        context: d.context,
                    });
                }
                if let Some(i) = &step.interaction {
                    interactions.push(crate::game::RecordedInteraction {
                        t: step.round,
                        matched: i.matched.then_some(i.name_a),
                    });
                }
            }
            let out = spec.game().outcomes(&RunView::c0(&decisions, &interactions));
            assert!(!out.is_empty(), "{kind:?} reports no outcome");
            for (name, value) in &out {
                let declared = spec.game().metrics().iter().any(|m| match m.name.split_once('{') {
                    Some((stem, _)) => name.starts_with(stem),
                    None => m.name == name,
                });
                assert!(declared, "{kind:?} reports undeclared metric {name}");
                assert!(value.is_finite(), "{kind:?}: {name} = {value}");
            }
        }
    }
}
