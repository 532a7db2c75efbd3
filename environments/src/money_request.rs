//! The 11–20 money request game (Arad & Rubinstein 2012).
//!
//! Each agent requests an integer between 11 and 20 and receives it, plus a bonus of 20 if the
//! request is exactly one below the other's. 50 one-shot games per run; in a population larger
//! than two, each game pairs two seats at random.

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{invalid, EnvError};
use crate::observation::{Context, Feedback, Observation, PayoffBounds, Role};
use crate::spec::{EnvKind, Variant};
use crate::variants::{BonusRule, MrVariant};
use crate::{amount, check_actions, Action, ActionSpace, DecisionRow, Environment, Request, Step};

pub const DESCRIPTION: &str =
    "11-20 money request: request 11..20, bonus 20 for exactly one below the other; 50 one-shot games";

/// Parameters of the money request game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MoneyRequestParams {
    pub games: u32,
    pub population: usize,
    pub memory: u32,
}

impl Default for MoneyRequestParams {
    fn default() -> Self {
        MoneyRequestParams { games: 50, population: 2, memory: 5 }
    }
}

impl MoneyRequestParams {
    pub fn validate(&self) -> Result<(), EnvError> {
        if self.population < 2 {
            return Err(invalid("population", format!("must be at least 2, got {}", self.population)));
        }
        if self.games == 0 {
            return Err(invalid("games", "must be at least 1"));
        }
        if self.memory == 0 {
            return Err(invalid("memory", "must be at least 1"));
        }
        Ok(())
    }
}

/// One run of the money request game.
pub struct MoneyRequest {
    params: MoneyRequestParams,
    variant: Variant,
    table: MrVariant,
    game: u32,
    pair: (usize, usize),
}

impl MoneyRequest {
    pub fn new(params: MoneyRequestParams, variant: Variant, table: MrVariant) -> Self {
        MoneyRequest { params, variant, table, game: 0, pair: (0, 1) }
    }

    /// Payoff of requesting `own` against `other`.
    pub fn payoff(table: &MrVariant, own: i64, other: i64) -> f64 {
        let bonus = match table.rule {
            BonusRule::Undercut => own + 1 == other,
            BonusRule::Exceed => own == other + 1,
        };
        (own + if bonus { table.bonus } else { 0 }) as f64
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Amount { min: self.table.min, max: self.table.max }
    }
}

impl Environment for MoneyRequest {
    fn kind(&self) -> EnvKind {
        EnvKind::MoneyRequest
    }

    fn population(&self) -> usize {
        self.params.population
    }

    fn pending(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        let (a, b) = crate::draw_pair(rng, self.params.population);
        self.pair = (a.min(b), a.max(b));
        let t = &self.table;
        let span = (t.max - t.min + 1) as f64;
        let bounds = PayoffBounds { min: t.min as f64, mean_abs: (t.min + t.max) as f64 / 2.0 + t.bonus as f64 / span };
        [self.pair.0, self.pair.1]
            .into_iter()
            .map(|agent| Request {
                agent,
                observation: Observation {
                    env: EnvKind::MoneyRequest,
                    variant: self.variant,
                    role: Role::Requester,
                    round: self.game + 1,
                    rounds: Some(self.params.games),
                    space: self.space(),
                    context: Context::None,
                    payoffs: bounds,
                    memory: self.params.memory,
                },
            })
            .collect()
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let (a, b) = self.pair;
        let r: Vec<i64> = check_actions(actions, &[(a, &space), (b, &space)])?.into_iter().map(amount).collect();
        self.game += 1;
        let mut step = Step { round: self.game, ..Step::default() };
        for (k, (seat, other)) in [(a, b), (b, a)].into_iter().enumerate() {
            let pay = Self::payoff(&self.table, r[k], r[1 - k]);
            step.decisions.push(DecisionRow {
                agent: seat,
                role: Role::Requester,
                action: Action::Amount(r[k]),
                value: r[k] as f64,
                scale: self.table.max as f64,
                // The lowest request allowed, so that readers can place the choice in the range.
                context: Some(self.table.min as f64),
            });
            step.payoffs.push((seat, pay));
            step.feedback.push((
                seat,
                Feedback {
                    round: self.game,
                    own: vec![(Role::Requester, Action::Amount(r[k]))],
                    others: vec![Action::Amount(r[1 - k])],
                    partner: Some(other),
                    payoff: pay,
                },
            ));
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.game >= self.params.games
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variants::VariantTable;

    #[test]
    fn canonical_bonus_for_exactly_one_below() {
        let t = VariantTable::shipped().mr(Variant::C0);
        assert_eq!(MoneyRequest::payoff(t, 17, 18), 37.0);
        assert_eq!(MoneyRequest::payoff(t, 18, 17), 18.0);
        assert_eq!(MoneyRequest::payoff(t, 20, 20), 20.0);
        assert_eq!(MoneyRequest::payoff(t, 16, 18), 16.0);
    }

    #[test]
    fn divergent_bonus_for_exactly_one_above() {
        let t = VariantTable::shipped().mr(Variant::C3);
        assert_eq!(MoneyRequest::payoff(t, 18, 17), 38.0);
        assert_eq!(MoneyRequest::payoff(t, 17, 18), 17.0);
    }

    #[test]
    fn shifted_range_in_c2() {
        let t = VariantTable::shipped().mr(Variant::C2);
        assert_eq!((t.min, t.max), (21, 30));
        assert_eq!(MoneyRequest::payoff(t, 27, 28), 47.0);
    }
}
