//! Repeated prisoner's dilemma: two agents, simultaneous choices, ten rounds.
//!
//! Canonical payoffs `(R, S, T, P) = (3, 0, 5, 1)`; choice 0 cooperates, choice 1 defects.

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{invalid, EnvError};
use crate::observation::{Context, Feedback, Observation, PayoffBounds, Role};
use crate::spec::{EnvKind, Variant};
use crate::variants::PdVariant;
use crate::{check_actions, choice_index, Action, ActionSpace, DecisionRow, Environment, Request, Step};

pub const DESCRIPTION: &str = "repeated prisoner's dilemma: 2 agents, 10 rounds, (R,S,T,P) = (3,0,5,1) in C0";

/// Parameters of the repeated dilemma.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PdParams {
    pub rounds: u32,
    /// Rounds of history shown to an agent.
    pub memory: u32,
}

impl Default for PdParams {
    fn default() -> Self {
        PdParams { rounds: 10, memory: 5 }
    }
}

impl PdParams {
    pub fn validate(&self) -> Result<(), EnvError> {
        if self.rounds == 0 {
            return Err(invalid("rounds", "must be at least 1"));
        }
        if self.memory == 0 {
            return Err(invalid("memory", "must be at least 1"));
        }
        Ok(())
    }
}

/// One run of the repeated dilemma.
pub struct PrisonersDilemma {
    params: PdParams,
    variant: Variant,
    table: PdVariant,
    round: u32,
}

impl PrisonersDilemma {
    pub fn new(params: PdParams, variant: Variant, table: PdVariant) -> Self {
        PrisonersDilemma { params, variant, table, round: 0 }
    }

    /// Payoff of playing `own` against `other` (0 cooperates, 1 defects).
    pub fn payoff(table: &PdVariant, own: u32, other: u32) -> f64 {
        match (own, other) {
            (0, 0) => table.r,
            (0, _) => table.s,
            (_, 0) => table.t,
            _ => table.p,
        }
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Choice { labels: self.table.labels.clone() }
    }
}

impl Environment for PrisonersDilemma {
    fn kind(&self) -> EnvKind {
        EnvKind::PrisonersDilemma
    }

    fn population(&self) -> usize {
        2
    }

    fn pending(&mut self, _rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        let t = &self.table;
        let bounds =
            PayoffBounds { min: t.s.min(t.p), mean_abs: (t.r.abs() + t.s.abs() + t.t.abs() + t.p.abs()) / 4.0 };
        (0..2)
            .map(|agent| Request {
                agent,
                observation: Observation {
                    env: EnvKind::PrisonersDilemma,
                    variant: self.variant,
                    role: Role::Player,
                    round: self.round + 1,
                    rounds: Some(self.params.rounds),
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
        let c: Vec<u32> = check_actions(actions, &[(0, &space), (1, &space)])?.into_iter().map(choice_index).collect();
        self.round += 1;
        let pay = [Self::payoff(&self.table, c[0], c[1]), Self::payoff(&self.table, c[1], c[0])];
        let mut step = Step { round: self.round, ..Step::default() };
        for i in 0..2 {
            let other = 1 - i;
            step.decisions.push(DecisionRow {
                agent: i,
                role: Role::Player,
                action: Action::Choice(c[i]),
                value: f64::from(c[i]),
                scale: 1.0,
                context: None,
            });
            step.payoffs.push((i, pay[i]));
            step.feedback.push((
                i,
                Feedback {
                    round: self.round,
                    own: vec![(Role::Player, Action::Choice(c[i]))],
                    others: vec![Action::Choice(c[other])],
                    partner: Some(other),
                    payoff: pay[i],
                },
            ));
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.round >= self.params.rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variants::VariantTable;
    use crate::EnvSpec;
    use rand::SeedableRng;

    fn play(variant: Variant, a: u32, b: u32) -> (f64, f64) {
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(variant).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&[(0, Action::Choice(a)), (1, Action::Choice(b))], &mut rng).expect("legal");
        (s.payoffs[0].1, s.payoffs[1].1)
    }

    #[test]
    fn canonical_payoff_table() {
        assert_eq!(play(Variant::C0, 0, 0), (3.0, 3.0));
        assert_eq!(play(Variant::C0, 0, 1), (0.0, 5.0));
        assert_eq!(play(Variant::C0, 1, 0), (5.0, 0.0));
        assert_eq!(play(Variant::C0, 1, 1), (1.0, 1.0));
    }

    #[test]
    fn variant_payoff_tables() {
        assert_eq!(play(Variant::C1, 0, 1), (0.0, 5.0));
        assert_eq!(play(Variant::C2, 0, 0), (5.0, 5.0));
        assert_eq!(play(Variant::C2, 1, 1), (3.0, 3.0));
        // C3: cooperating beats defecting against either move.
        let t = VariantTable::shipped().pd(Variant::C3);
        for other in 0..2 {
            assert!(PrisonersDilemma::payoff(t, 0, other) > PrisonersDilemma::payoff(t, 1, other));
        }
    }

    #[test]
    fn ends_after_ten_rounds_and_rejects_illegal_actions() {
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut rounds = 0;
        while !env.is_done() {
            let req = env.pending(&mut rng);
            assert_eq!(req.len(), 2);
            env.resolve(&[(0, Action::Choice(0)), (1, Action::Choice(1))], &mut rng).expect("legal");
            rounds += 1;
        }
        assert_eq!(rounds, 10);
        assert!(env.pending(&mut rng).is_empty());
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(Variant::C0).expect("builds");
        env.pending(&mut rng);
        let err = env.resolve(&[(0, Action::Choice(2)), (1, Action::Choice(1))], &mut rng);
        assert!(matches!(err, Err(EnvError::IllegalAction { agent: 0, .. })));
    }

    #[test]
    fn zero_rounds_is_rejected() {
        let err = EnvSpec::PrisonersDilemma(PdParams { rounds: 0, memory: 5 }).validate();
        assert!(matches!(err, Err(EnvError::InvalidParameter { field: "rounds", .. })));
    }
}
