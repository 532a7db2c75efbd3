//! A repeated symmetric 2×2 game between two fixed players, played simultaneously: the
//! environment the stag hunt and the coordination game share. Each game module supplies its
//! payoff matrix and labels; this module plays the rounds.

use std::sync::Arc;

use rand::RngCore;

use crate::error::EnvError;
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Feedback, Observation, PayoffBounds};
use crate::{check_actions, choice_index, Action, ActionSpace, DecisionRow, Environment, Request, Step};

/// One run of a repeated symmetric 2×2 game.
pub struct TwoByTwo {
    kind: EnvKind,
    variant: Variant,
    /// `payoff[own][other]`: what a player choosing `own` earns against `other`.
    payoff: [[f64; 2]; 2],
    labels: Arc<[String]>,
    rounds: u32,
    memory: u32,
    round: u32,
}

impl TwoByTwo {
    /// A run of `rounds` rounds with the given matrix and labels.
    pub fn new(
        kind: EnvKind,
        variant: Variant,
        payoff: [[f64; 2]; 2],
        labels: Arc<[String]>,
        rounds: u32,
        memory: u32,
    ) -> Self {
        TwoByTwo { kind, variant, payoff, labels, rounds, memory, round: 0 }
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Choice { labels: self.labels.clone() }
    }
}

impl Environment for TwoByTwo {
    fn kind(&self) -> EnvKind {
        self.kind
    }

    fn population(&self) -> usize {
        2
    }

    fn pending(&mut self, _rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        let all: Vec<f64> = self.payoff.iter().flatten().copied().collect();
        let bounds = PayoffBounds {
            min: all.iter().copied().fold(f64::INFINITY, f64::min),
            mean_abs: all.iter().map(|p| p.abs()).sum::<f64>() / 4.0,
        };
        (0..2)
            .map(|agent| Request {
                agent,
                observation: Observation {
                    env: self.kind,
                    variant: self.variant,
                    role: Role::Player,
                    round: self.round + 1,
                    rounds: Some(self.rounds),
                    space: self.space(),
                    context: Context::None,
                    payoffs: bounds,
                    memory: self.memory,
                },
            })
            .collect()
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let c: Vec<u32> = check_actions(actions, &[(0, &space), (1, &space)])?.into_iter().map(choice_index).collect();
        self.round += 1;
        let mut step = Step { round: self.round, ..Step::default() };
        for i in 0..2 {
            let other = 1 - i;
            let pay = self.payoff[c[i] as usize][c[other] as usize];
            step.decisions.push(DecisionRow {
                agent: i,
                role: Role::Player,
                action: Action::Choice(c[i]),
                value: f64::from(c[i]),
                scale: 1.0,
                context: None,
            });
            step.payoffs.push((i, pay));
            step.feedback.push((
                i,
                Feedback {
                    round: self.round,
                    own: vec![(Role::Player, Action::Choice(c[i]))],
                    others: vec![Action::Choice(c[other])],
                    partner: Some(other),
                    payoff: pay,
                },
            ));
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.round >= self.rounds
    }
}

/// Per round, whether the two players chose alike (decisions of one run in stage order).
pub fn matched_rounds(decisions: &[crate::game::RecordedDecision]) -> Vec<(u32, bool)> {
    let mut rounds: std::collections::BTreeMap<u32, Vec<f64>> = std::collections::BTreeMap::new();
    for d in decisions {
        rounds.entry(d.round).or_default().push(d.value);
    }
    rounds.into_iter().map(|(r, v)| (r, v.len() == 2 && v[0] == v[1])).collect()
}
