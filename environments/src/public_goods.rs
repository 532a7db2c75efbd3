//! Public goods game with an optional punishment stage.
//!
//! Four agents receive an endowment of 20 points per round for ten rounds and choose a
//! contribution to a group account that returns MPCR 0.4 per point to every member. In the
//! punishment arm each agent may then spend up to 10 points on each other member; each point
//! costs the punisher 1 and removes 3 from the target (Fehr & Gächter 2000).

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{invalid, EnvError};
use crate::observation::{Context, Feedback, Observation, PayoffBounds, Role};
use crate::spec::{EnvKind, Variant};
use crate::variants::PgVariant;
use crate::{amount, check_actions, Action, ActionSpace, DecisionRow, Environment, Request, Step};

pub const DESCRIPTION: &str =
    "public goods: 4 agents, endowment 20, MPCR 0.4, 10 rounds; punishment arm 1:3 up to 10 per target";

/// Parameters of the public goods game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PublicGoodsParams {
    pub group_size: usize,
    pub rounds: u32,
    /// Whether each round has a punishment stage after contributions.
    pub punishment: bool,
    /// Rounds of history shown to an agent.
    pub memory: u32,
}

impl Default for PublicGoodsParams {
    fn default() -> Self {
        PublicGoodsParams { group_size: 4, rounds: 10, punishment: false, memory: 5 }
    }
}

impl PublicGoodsParams {
    pub fn validate(&self) -> Result<(), EnvError> {
        if self.group_size < 2 {
            return Err(invalid("group_size", format!("must be at least 2, got {}", self.group_size)));
        }
        if self.rounds == 0 {
            return Err(invalid("rounds", "must be at least 1"));
        }
        if self.memory == 0 {
            return Err(invalid("memory", "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Contribute,
    Punish,
}

/// One run of the public goods game.
pub struct PublicGoods {
    params: PublicGoodsParams,
    variant: Variant,
    table: PgVariant,
    round: u32,
    stage: Stage,
    contributions: Vec<i64>,
}

impl PublicGoods {
    pub fn new(params: PublicGoodsParams, variant: Variant, table: PgVariant) -> Self {
        PublicGoods { params, variant, table, round: 0, stage: Stage::Contribute, contributions: Vec::new() }
    }

    /// Round payoff before punishment: `E − c_i + MPCR · Σ c`.
    pub fn base_payoff(table: &PgVariant, contributions: &[i64], i: usize) -> f64 {
        let total: i64 = contributions.iter().sum();
        (table.endowment - contributions[i]) as f64 + table.mpcr * total as f64
    }

    fn bounds(&self) -> PayoffBounds {
        let e = self.table.endowment as f64;
        let n = self.params.group_size as f64;
        let mut min = e * self.table.mpcr.min(1.0);
        if self.params.punishment {
            let most = (n - 1.0) * self.table.punishment_max as f64;
            min -= most * (self.table.punishment_cost + self.table.punishment_impact);
        }
        PayoffBounds { min, mean_abs: e / 2.0 + self.table.mpcr * n * e / 2.0 }
    }

    fn others(&self, i: usize) -> Vec<i64> {
        self.contributions.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| *c).collect()
    }

    fn space(&self) -> ActionSpace {
        match self.stage {
            Stage::Contribute => ActionSpace::Amount { min: 0, max: self.table.endowment },
            Stage::Punish => {
                ActionSpace::Allocation { targets: self.params.group_size - 1, max_each: self.table.punishment_max }
            }
        }
    }

    fn finish_round(&mut self, punishment: Option<&[Vec<i64>]>, step: &mut Step) {
        let n = self.params.group_size;
        let mut pay: Vec<f64> = (0..n).map(|i| Self::base_payoff(&self.table, &self.contributions, i)).collect();
        if let Some(alloc) = punishment {
            for (i, row) in alloc.iter().enumerate() {
                let targets = (0..n).filter(|j| *j != i);
                for (points, j) in row.iter().zip(targets) {
                    pay[i] -= self.table.punishment_cost * *points as f64;
                    pay[j] -= self.table.punishment_impact * *points as f64;
                }
            }
        }
        for (i, p) in pay.iter().enumerate() {
            step.payoffs.push((i, *p));
            let mut own = vec![(Role::Contributor, Action::Amount(self.contributions[i]))];
            if let Some(alloc) = punishment {
                own.push((Role::Punisher, Action::Allocation(alloc[i].clone())));
            }
            step.feedback.push((
                i,
                Feedback {
                    round: self.round,
                    own,
                    others: self.others(i).into_iter().map(Action::Amount).collect(),
                    partner: None,
                    payoff: *p,
                },
            ));
        }
    }
}

impl Environment for PublicGoods {
    fn kind(&self) -> EnvKind {
        EnvKind::PublicGoods
    }

    fn population(&self) -> usize {
        self.params.group_size
    }

    fn pending(&mut self, _rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        let space = self.space();
        let bounds = self.bounds();
        (0..self.params.group_size)
            .map(|agent| {
                let (role, context) = match self.stage {
                    Stage::Contribute => (Role::Contributor, Context::None),
                    Stage::Punish => (
                        Role::Punisher,
                        Context::Contributions {
                            own: self.contributions[agent],
                            others: self.others(agent),
                            endowment: self.table.endowment,
                        },
                    ),
                };
                Request {
                    agent,
                    observation: Observation {
                        env: EnvKind::PublicGoods,
                        variant: self.variant,
                        role,
                        round: self.round + 1,
                        rounds: Some(self.params.rounds),
                        space: space.clone(),
                        context,
                        payoffs: bounds,
                        memory: self.params.memory,
                    },
                }
            })
            .collect()
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let open: Vec<(usize, &ActionSpace)> = (0..self.params.group_size).map(|i| (i, &space)).collect();
        let checked = check_actions(actions, &open)?;
        let mut step = Step { round: self.round + 1, ..Step::default() };
        match self.stage {
            Stage::Contribute => {
                self.contributions = checked.iter().map(|a| amount(a)).collect();
                for (i, c) in self.contributions.iter().enumerate() {
                    step.decisions.push(DecisionRow {
                        agent: i,
                        role: Role::Contributor,
                        action: Action::Amount(*c),
                        value: *c as f64,
                        scale: self.table.endowment as f64,
                        context: None,
                    });
                }
                if self.params.punishment {
                    self.stage = Stage::Punish;
                } else {
                    self.round += 1;
                    self.finish_round(None, &mut step);
                }
            }
            Stage::Punish => {
                let alloc: Vec<Vec<i64>> = checked
                    .iter()
                    .map(|a| match a {
                        Action::Allocation(v) => v.clone(),
                        _ => Vec::new(),
                    })
                    .collect();
                for (i, row) in alloc.iter().enumerate() {
                    step.decisions.push(DecisionRow {
                        agent: i,
                        role: Role::Punisher,
                        action: Action::Allocation(row.clone()),
                        value: row.iter().sum::<i64>() as f64,
                        scale: space.scale(),
                        context: Some(self.contributions[i] as f64),
                    });
                }
                self.round += 1;
                self.stage = Stage::Contribute;
                self.finish_round(Some(&alloc), &mut step);
            }
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
    use crate::EnvSpec;
    use rand::SeedableRng;

    fn amounts(v: &[i64]) -> Vec<(usize, Action)> {
        v.iter().enumerate().map(|(i, a)| (i, Action::Amount(*a))).collect()
    }

    #[test]
    fn canonical_round_payoffs() {
        let mut env = EnvSpec::PublicGoods(PublicGoodsParams::default()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let req = env.pending(&mut rng);
        assert_eq!(req.len(), 4);
        assert_eq!(req[0].observation.space, ActionSpace::Amount { min: 0, max: 20 });
        let s = env.resolve(&amounts(&[20, 10, 0, 10]), &mut rng).expect("legal");
        // Pool 40, return 0.4 * 40 = 16 to each.
        let pay: Vec<f64> = s.payoffs.iter().map(|p| p.1).collect();
        assert_eq!(pay, vec![16.0, 26.0, 36.0, 26.0]);
        assert_eq!(s.decisions[0].scale, 20.0);
    }

    #[test]
    fn punishment_costs_one_and_removes_three() {
        let params = PublicGoodsParams { punishment: true, ..PublicGoodsParams::default() };
        let mut env = EnvSpec::PublicGoods(params).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&amounts(&[20, 20, 20, 0]), &mut rng).expect("legal");
        assert!(s.payoffs.is_empty(), "payoffs wait for the punishment stage");
        let req = env.pending(&mut rng);
        assert_eq!(req[0].observation.role, Role::Punisher);
        assert_eq!(
            req[0].observation.context,
            Context::Contributions { own: 20, others: vec![20, 20, 0], endowment: 20 }
        );
        // Agent 0 spends 10 on agent 3; nobody else punishes.
        let alloc = vec![
            (0, Action::Allocation(vec![0, 0, 10])),
            (1, Action::Allocation(vec![0, 0, 0])),
            (2, Action::Allocation(vec![0, 0, 0])),
            (3, Action::Allocation(vec![0, 0, 0])),
        ];
        let s = env.resolve(&alloc, &mut rng).expect("legal");
        let pay: Vec<f64> = s.payoffs.iter().map(|p| p.1).collect();
        // Pool 60 → 24 each; agent 3 keeps 20 more and loses 30; agent 0 pays 10.
        assert_eq!(pay, vec![14.0, 24.0, 24.0, 14.0]);
        let too_much = vec![
            (0, Action::Allocation(vec![0, 0, 11])),
            (1, Action::Allocation(vec![0, 0, 0])),
            (2, Action::Allocation(vec![0, 0, 0])),
            (3, Action::Allocation(vec![0, 0, 0])),
        ];
        env.pending(&mut rng);
        env.resolve(&amounts(&[0, 0, 0, 0]), &mut rng).expect("legal");
        env.pending(&mut rng);
        assert!(matches!(env.resolve(&too_much, &mut rng), Err(EnvError::IllegalAction { agent: 0, .. })));
    }

    #[test]
    fn c3_makes_full_contribution_pay() {
        let mut env = EnvSpec::PublicGoods(PublicGoodsParams::default()).build(Variant::C3).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&amounts(&[20, 0, 0, 0]), &mut rng).expect("legal");
        // Contributing everything returns 1.2 · 20 = 24 > 20 kept.
        assert_eq!(s.payoffs[0].1, 24.0);
        assert_eq!(s.payoffs[1].1, 44.0);
    }

    #[test]
    fn group_size_one_is_rejected() {
        let p = PublicGoodsParams { group_size: 1, ..PublicGoodsParams::default() };
        assert!(matches!(p.validate(), Err(EnvError::InvalidParameter { field: "group_size", .. })));
    }
}
